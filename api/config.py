"""Server configuration: built-in defaults, then `FAIRDICE_*` environment variables,
then explicit values (a `create_app(config)` dict or `fairdice serve` options).

| setting | environment | default |
|---|---|---|
| data directory | `FAIRDICE_DATA_DIR` | `./var` |
| database: a SQLite file or a `postgresql://` URL | `FAIRDICE_DB` | `<data dir>/fairdice.sqlite3` |
| key directory | `FAIRDICE_KEY_DIR` | `<data dir>/keys` |
| what a write waits for before it is answered | `FAIRDICE_SYNCHRONOUS` | `FULL`: on disk, surviving a power cut or a disk gone read-only (SQLite `synchronous=FULL`, PostgreSQL `synchronous_commit=on`); `NORMAL` survives a killed process only |
| listen address | `FAIRDICE_HOST` | `127.0.0.1` |
| port | `FAIRDICE_PORT` | `8000` (0: any free port) |
| worker processes | `FAIRDICE_WORKERS` | `2` |
| threads per worker | `FAIRDICE_THREADS` | `8` |
| seed encryption key file (may live outside the data directory) | `FAIRDICE_SEED_KEY_FILE` | `<key dir>/seed-encryption.key` |
| game creations per client | `FAIRDICE_RATE_CREATE` | `30/min` |
| moves per client (all its games) | `FAIRDICE_RATE_MOVES_CLIENT` | `1200/min` |
| moves per seat token | `FAIRDICE_RATE_MOVES_TOKEN` | `300/min` |
| unfinished games per client | `FAIRDICE_MAX_UNFINISHED` | `20` (0: no quota) |
| dice sessions a client may open in any 24 hours | `FAIRDICE_MAX_SESSIONS` | `100` (0: no quota) |
| rolls a client's dice sessions may make in a UTC day | `FAIRDICE_MAX_SESSION_ROLLS` | `100000` (0: no quota) |
| proxies whose `X-Forwarded-For` names the client | `FAIRDICE_TRUSTED_PROXIES` | none (comma-separated addresses or CIDR blocks) |
| seconds without a move before the server abandons a game | `FAIRDICE_ABANDON_TIMEOUT` | `86400` |
| seconds an Idempotency-Key answer is kept | `FAIRDICE_IDEMPOTENCY_TTL` | `86400` |
| seconds between maintenance runs (timeouts, pruning, WAL) | `FAIRDICE_MAINTENANCE_INTERVAL` | `60` (0: none) |
| seconds a client may take to send a request | `FAIRDICE_READ_TIMEOUT` | `10` |

A rate is `N/s`, `N/min` or `N/h`: at most N in any such window (a burst of N, then one every 1/N of it);
`off` disables it.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from .stores.base import SYNCHRONOUS_LEVELS, is_postgres_url

ENV = {
    "data_dir": "FAIRDICE_DATA_DIR",
    "db": "FAIRDICE_DB",
    "key_dir": "FAIRDICE_KEY_DIR",
    "synchronous": "FAIRDICE_SYNCHRONOUS",
    "host": "FAIRDICE_HOST",
    "port": "FAIRDICE_PORT",
    "workers": "FAIRDICE_WORKERS",
    "threads": "FAIRDICE_THREADS",
    "seed_key_file": "FAIRDICE_SEED_KEY_FILE",
    "rate_create": "FAIRDICE_RATE_CREATE",
    "rate_moves_client": "FAIRDICE_RATE_MOVES_CLIENT",
    "rate_moves_token": "FAIRDICE_RATE_MOVES_TOKEN",
    "max_unfinished": "FAIRDICE_MAX_UNFINISHED",
    "max_sessions": "FAIRDICE_MAX_SESSIONS",
    "max_session_rolls": "FAIRDICE_MAX_SESSION_ROLLS",
    "trusted_proxies": "FAIRDICE_TRUSTED_PROXIES",
    "abandon_timeout": "FAIRDICE_ABANDON_TIMEOUT",
    "idempotency_ttl": "FAIRDICE_IDEMPOTENCY_TTL",
    "maintenance_interval": "FAIRDICE_MAINTENANCE_INTERVAL",
    "read_timeout": "FAIRDICE_READ_TIMEOUT",
}
DEFAULTS = {
    "data_dir": "var",
    "db": None,
    "key_dir": None,
    "synchronous": "FULL",
    "host": "127.0.0.1",
    "port": 8000,
    "workers": 2,
    "threads": 8,  # (4 served 0.90 of the turns a second, bench/bench_api.py, issue 21)
    "seed_key_file": None,
    "rate_create": "30/min",
    "rate_moves_client": "1200/min",
    "rate_moves_token": "300/min",
    "max_unfinished": 20,
    "max_sessions": 100,  # sessions never finish: a quota a day, not at once (api/sessions.py says why)
    "max_session_rolls": 100000,  # about 40 MB stored a client a day (0.4 KB a roll)
    "trusted_proxies": "",
    "abandon_timeout": 86400,
    "idempotency_ttl": 86400,
    "maintenance_interval": 60,
    "read_timeout": 10,
}
INTS = ("port", "workers", "threads", "max_unfinished", "max_sessions", "max_session_rolls", "abandon_timeout",
        "idempotency_ttl", "maintenance_interval", "read_timeout")
RATES = ("rate_create", "rate_moves_client", "rate_moves_token")
PERIODS = {"s": 1, "min": 60, "h": 3600}


@dataclass(frozen=True)
class Rate:
    """At most `count` events in any window of `period` seconds (`count` 0: no limit)."""
    count: int
    period: int

    @property
    def interval(self) -> float:
        """Seconds between events at the sustained rate."""
        return self.period / self.count

    def __str__(self) -> str:
        if not self.count:
            return "off"
        return f"{self.count}/{next(k for k, v in PERIODS.items() if v == self.period)}"


def parse_rate(text: str, name: str = "rate") -> Rate:
    """`N/s`, `N/min`, `N/h` or `off`."""
    text = str(text).strip()
    if text.lower() in ("off", "0"):
        return Rate(0, 1)
    count, _, unit = text.partition("/")
    if not count.isdigit() or int(count) < 1 or unit not in PERIODS:
        raise ValueError(f"{name} must be N/s, N/min, N/h or off, not {text!r}")
    return Rate(int(count), PERIODS[unit])


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
    seed_key_file: Path
    rate_create: Rate
    rate_moves_client: Rate
    rate_moves_token: Rate
    max_unfinished: int
    max_sessions: int
    max_session_rolls: int
    trusted_proxies: tuple[str, ...]
    abandon_timeout: int
    idempotency_ttl: int
    maintenance_interval: int
    read_timeout: int

    def as_config(self) -> dict:
        """The settings as a `create_app` config dict (upper-case `FAIRDICE_*` keys)."""
        values = {name: getattr(self, name) for name in ENV}
        values["trusted_proxies"] = ",".join(self.trusted_proxies)
        return {ENV[name]: str(value) for name, value in values.items()}


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
    rates = {name: parse_rate(values[name], ENV[name]) for name in RATES}
    for name in INTS[3:]:
        if values[name] < 0:
            raise ValueError(f"{ENV[name]} must not be negative, not {values[name]}")
    for name in ("abandon_timeout", "read_timeout"):
        if values[name] < 1:
            raise ValueError(f"{ENV[name]} must be at least 1 second, not {values[name]}")
    synchronous = str(values["synchronous"]).upper()
    if synchronous not in SYNCHRONOUS_LEVELS:
        raise ValueError(f"FAIRDICE_SYNCHRONOUS must be FULL, NORMAL, EXTRA or OFF, not {values['synchronous']!r}")
    trusted = tuple(p.strip() for p in str(values["trusted_proxies"]).split(",") if p.strip())
    for entry in trusted:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise ValueError(f"FAIRDICE_TRUSTED_PROXIES: {entry!r} is not an IP address or CIDR block") from None
    data_dir = Path(values["data_dir"]).expanduser()
    key_dir = Path(values["key_dir"]).expanduser() if values["key_dir"] else data_dir / "keys"
    return Settings(
        data_dir=data_dir,
        db=_database(values["db"], data_dir),
        key_dir=key_dir,
        synchronous=synchronous,
        host=str(values["host"]),
        port=values["port"],
        workers=max(1, values["workers"]),
        threads=max(1, values["threads"]),
        seed_key_file=(Path(values["seed_key_file"]).expanduser() if values["seed_key_file"]
                       else key_dir / "seed-encryption.key"),
        max_unfinished=values["max_unfinished"],
        max_sessions=values["max_sessions"],
        max_session_rolls=values["max_session_rolls"],
        trusted_proxies=trusted,
        abandon_timeout=values["abandon_timeout"],
        idempotency_ttl=values["idempotency_ttl"],
        maintenance_interval=values["maintenance_interval"],
        read_timeout=values["read_timeout"],
        **rates,
    )


def _database(value, data_dir: Path) -> Path | str:
    if not value:
        return data_dir / "fairdice.sqlite3"
    if is_postgres_url(str(value)):
        return str(value)
    return Path(value).expanduser()
