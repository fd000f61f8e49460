"""The fairdice HTTP API: a Flask adapter over the pure core, with a SQLite store.

`create_app(config=None)` builds the app; `fairdice serve` runs it under gunicorn.
"""

from .app import create_app

__all__ = ["create_app"]
