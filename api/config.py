"""Server configuration: built-in defaults, then `FAIRDICE_*` environment variables,
then explicit values (a `create_app(config)` dict or `fairdice serve` options).

| setting | environment | default |
|---|---|---|
| data directory | `FAIRDICE_DATA_DIR` | `./var` |
| database: a SQLite file or a `postgresql://` URL | `FAIRDICE_DB` | `<data dir>/fairdice.sqlite3` |
| key directory | `FAIRDICE_KEY_DIR` | `<data dir>/keys` |
| SQLite `synchronous` | `FAIRDICE_SYNCHRONOUS` | `NORMAL` (WAL: survives a killed process; `FULL` also survives power loss) |
| listen address | `FAIRDICE_HOST` | `127.0.0.1` |
| port | `FAIRDICE_PORT` | `8000` (0: any free port) |
| worker processes | `FAIRDICE_WORKERS` | `2` |
| threads per worker | `FAIRDICE_THREADS` | `4` |
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .stores.base import is_postgres_url

ENV = {
    "data_dir": "FAIRDICE_DATA_DIR",
    "db": "FAIRDICE_DB",
    "key_dir": "FAIRDICE_KEY_DIR",
    "synchronous": "FAIRDICE_SYNCHRONOUS",
    "host": "FAIRDICE_HOST",
    "port": "FAIRDICE_PORT",
    "workers": "FAIRDICE_WORKERS",
    "threads": "FAIRDICE_THREADS",
}
DEFAULTS = {
    "data_dir": "var",
    "db": None,
    "key_dir": None,
    "synchronous": "NORMAL",
    "host": "127.0.0.1",
    "port": 8000,
    "workers": 2,
    "threads": 4,
}
INTS = ("port", "workers", "threads")


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    db: Path | str  # a SQLite file, or a PostgreSQL URL (a str: as a Path its // would collapse)
    key_dir: Path
    synchronous: str
    host: str
    port: int
    workers: int
    threads: int

    def as_config(self) -> dict:
        """The settings as a `create_app` config dict (upper-case `FAIRDICE_*` keys)."""
        return {ENV[name]: str(getattr(self, name)) for name in ENV}


def settings(overrides: dict | None = None, environ=None) -> Settings:
    """Resolve settings; `overrides` keys may be `data_dir` or `FAIRDICE_DATA_DIR` style; None is ignored."""
    environ = os.environ if environ is None else environ
    values = dict(DEFAULTS)
    for name, var in ENV.items():
        if environ.get(var):
            values[name] = environ[var]
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        name = next((n for n, v in ENV.items() if v == key), key.lower())
        if name in ENV:
            values[name] = value
    for name in INTS:
        try:
            values[name] = int(values[name])
        except (TypeError, ValueError):
            raise ValueError(f"{ENV[name]} must be a whole number, not {values[name]!r}") from None
    data_dir = Path(values["data_dir"]).expanduser()
    return Settings(
        data_dir=data_dir,
        db=_database(values["db"], data_dir),
        key_dir=Path(values["key_dir"]).expanduser() if values["key_dir"] else data_dir / "keys",
        synchronous=str(values["synchronous"]).upper(),
        host=str(values["host"]),
        port=values["port"],
        workers=max(1, values["workers"]),
        threads=max(1, values["threads"]),
    )


def _database(value, data_dir: Path) -> Path | str:
    if not value:
        return data_dir / "fairdice.sqlite3"
    if is_postgres_url(str(value)):
        return str(value)
    return Path(value).expanduser()
