"""Edges: the `fairdice` command, the terminal game, the HTTP client and the coach's words.

They may use the world and the adapters the server uses too (`fairdice.adapters`: the optimal tables'
cache, argparse types); the core imports nothing from here.  The server's modules are named by the
command (`fairdice serve`, `keys`, `admin`) as strings and imported only when chosen; `api` imports
nothing from here (tests/test_layers.py)."""
