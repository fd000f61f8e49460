"""The stores behind `api.store`: the interface (base.py), SQLite (sqlite.py), PostgreSQL (postgres.py)."""
