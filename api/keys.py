"""The server's secrets: a ring of Ed25519 signing keys, and the key that seals server seeds at rest.

The key directory (`FAIRDICE_KEY_DIR`, default `<data dir>/keys`, mode 0700) holds:

- `signing-ed25519.pem`: the first signing key, made on first run (PKCS#8 PEM, the format
  `fairdice simulate --key` reads).  Installations from before key rotation have only this key and start
  unchanged; its creation date is the file's modification time.
- `signing/<YYYYMMDDTHHMMSSZ>-<key id>.pem`: the keys made by `fairdice keys rotate`, named by their
  creation time (UTC) and key id (SPEC §5.1).

The newest key (the last of `signing/` in name order, else `signing-ed25519.pem`) is the current one: it
signs the games created from now on.  Every other key stays on the ring: it is published by
`GET /v1/keys` (with its date), so old logs keep verifying, and it still signs the receipts and the final
log of the games that were started under it, so a game's final signature is by the key in its header.
A running server keeps the current key it started with (restart it after a rotation), but publishes a
key that appears in the directory at once and serves the games that name it.

The seed encryption key (AES-256-GCM, 32 bytes) comes from `FAIRDICE_SEED_KEY` (64 hex digits) when that
variable is set, and nothing is then written; else from the file `seed_key_file` (default
`<key dir>/seed-encryption.key`, `FAIRDICE_SEED_KEY_FILE` moves it, e.g. out of the data directory),
which holds 32 raw bytes or 64 hex digits.

Files are created 0600 and directories 0700.  A file is published atomically (written under a temporary
name, then hard-linked into place, never overwritten), so two processes starting at once end up with the
same keys, two rotations at once make two keys one after the other (a lock file serializes them), and no
reader ever sees half a key.  Keys are made only when nothing needs an old one: `open_keyring` refuses to
start over a store whose games name a signing key that is not on the ring, or whose unfinished games were
sealed with a seed key that is missing or is not the one given.
"""

from __future__ import annotations

import calendar
import fcntl
import os
import re
import secrets
import stat
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from fairdice.log import Signer

from .errors import ServiceError
from .files import make_private_dirs

SIGNING_FILE = "signing-ed25519.pem"
ROTATED_DIR = "signing"
STORAGE_FILE = "seed-encryption.key"
SEED_KEY_ENV = "FAIRDICE_SEED_KEY"
LOCK_FILE = ".rotate.lock"
NAME_STAMP = "%Y%m%dT%H%M%SZ"  # in file names (no colons: the names survive any file system and tar)
STAMP = "%Y-%m-%dT%H:%M:%SZ"  # as published, like the store's timestamps
ROTATED_NAME = re.compile(r"(\d{8}T\d{6}Z)-([0-9a-f]{16})\.pem")
SEED_CHECKS = 100  # unfinished games whose sealed seed is opened at start-up (the longest idle first)
ALL_UNFINISHED = "9999-12-31T23:59:59Z"  # an idle_since for stale_games that every unfinished game is before
SEAL_VERSION = b"\x01"
NONCE_BYTES = 12


class KeyFileError(ServiceError, RuntimeError):
    """A key file of the server's (its signing keys, its seed box) is missing, unreadable or malformed, or not
    the one the stored games need.  (The verifier's `PublicKeyFileError` is about a public key given to it.)"""


# --- files ----------------------------------------------------------------------------------------

def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_once(path: Path, data: bytes) -> bool:
    """Publish `data` as `path` (mode 0600) unless the file exists: True if this call made it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o600)  # whatever the umask
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        _fsync_dir(path.parent)
        return True
    finally:
        tmp.unlink(missing_ok=True)


def _read_key_file(path: Path) -> bytes:
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        data = path.read_bytes()
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read the key file ({exc.strerror})") from None
    if mode & 0o077:
        print(f"fairdice: warning: {path} is readable by others (mode {mode:o}); chmod 600 it", file=sys.stderr)
    return data


def _new_signing_pem(private: Ed25519PrivateKey) -> bytes:
    return private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())


def _load_signer(path: Path) -> Signer:
    try:
        private = serialization.load_pem_private_key(_read_key_file(path), password=None)
    except (ValueError, TypeError) as exc:
        raise KeyFileError(f"{path}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise KeyFileError(f"{path}: not an Ed25519 key")
    return Signer(private)


# --- signing keys ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class SigningKey:
    """One key of the ring: its signer, its file and when it was made (a UTC stamp)."""
    signer: Signer
    path: Path
    created: str

    @property
    def key_id(self) -> str:
        return self.signer.key_id

    def published(self, current: bool) -> dict:
        """The key as GET /v1/keys lists it."""
        return {"key_id": self.key_id, "algorithm": "Ed25519", "public_key": self.signer.public_key.hex(),
                "created": self.created, "current": current}


def _rotated_key(path: Path) -> SigningKey:
    match = ROTATED_NAME.fullmatch(path.name)
    if not match:
        raise KeyFileError(f"{path}: not a key file name (expected <YYYYMMDDTHHMMSSZ>-<16 hex key id>.pem)")
    signer = _load_signer(path)
    if signer.key_id != match[2]:
        raise KeyFileError(f"{path}: holds the key with id {signer.key_id}, not the {match[2]} its name says")
    created = time.strftime(STAMP, time.strptime(match[1], NAME_STAMP))
    return SigningKey(signer, path, created)


def load_signing_keys(key_dir: str | os.PathLike) -> list[SigningKey]:
    """Every signing key in `key_dir`, oldest first: the last one is the current key."""
    key_dir = Path(key_dir)
    keys = []
    first = key_dir / SIGNING_FILE
    if first.exists():
        keys.append(SigningKey(_load_signer(first), first, time.strftime(STAMP, time.gmtime(first.stat().st_mtime))))
    rotated = key_dir / ROTATED_DIR
    if rotated.is_dir():
        names = sorted(p.name for p in rotated.iterdir() if p.name.endswith(".pem") and not p.name.startswith("."))
        keys += [_rotated_key(rotated / name) for name in names]
    return keys


@contextmanager
def _rotation_lock(folder: Path):
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _next_name_stamp(keys: list[SigningKey], now: float) -> str:
    """Now, or one second after the newest rotated key if that is not earlier (a clock set back, two rotations
    in one second): names sort in the order the keys were made."""
    newest = max((calendar.timegm(time.strptime(k.created, STAMP)) for k in keys if k.path.parent.name == ROTATED_DIR),
                 default=None)
    when = int(now) if newest is None else max(int(now), newest + 1)
    return time.strftime(NAME_STAMP, time.gmtime(when))


def rotate(key_dir: str | os.PathLike, now: float | None = None) -> SigningKey:
    """Make a new current signing key in `key_dir`; the old ones stay on the ring.  Refused (KeyFileError) in
    a directory without a signing key: that is most likely not the server's key directory."""
    key_dir = Path(key_dir)
    if not key_dir.is_dir() or not load_signing_keys(key_dir):
        raise KeyFileError(f"no signing key in {key_dir} (neither {SIGNING_FILE} nor {ROTATED_DIR}/*.pem): not the "
                           f"server's key directory? `fairdice serve` makes the first key")
    folder = key_dir / ROTATED_DIR
    make_private_dirs(folder)
    with _rotation_lock(folder):
        stamp = _next_name_stamp(load_signing_keys(key_dir), time.time() if now is None else now)
        private = Ed25519PrivateKey.generate()
        signer = Signer(private)
        path = folder / f"{stamp}-{signer.key_id}.pem"
        if not _write_once(path, _new_signing_pem(private)):
            raise KeyFileError(f"{path} exists already")
    return _rotated_key(path)


# --- the seed key -----------------------------------------------------------------------------------

class SeedBox:
    """AES-256-GCM for server seeds at rest; the game id is the associated data,
    so a sealed seed copied onto another game's row does not open."""

    def __init__(self, key: bytes):
        if len(key) != 32:
            raise KeyFileError("the seed encryption key must be 32 bytes")
        self._aead = AESGCM(key)

    def seal(self, game_id: str, seed: bytes) -> bytes:
        nonce = secrets.token_bytes(NONCE_BYTES)
        return SEAL_VERSION + nonce + self._aead.encrypt(nonce, seed, game_id.encode())

    def open(self, game_id: str, sealed: bytes) -> bytes:
        if not sealed or sealed[:1] != SEAL_VERSION:
            raise KeyFileError(f"game {game_id}: sealed seed has an unknown format")
        nonce, body = sealed[1:1 + NONCE_BYTES], sealed[1 + NONCE_BYTES:]
        try:
            return self._aead.decrypt(nonce, body, game_id.encode())
        except InvalidTag:
            raise KeyFileError(f"game {game_id}: sealed seed does not open with this key") from None


def _seed_key_from_env(value: str) -> bytes:
    text = value.strip()
    if not re.fullmatch(r"[0-9a-fA-F]{64}", text):
        raise KeyFileError(f"{SEED_KEY_ENV} must be 64 hex digits (a 32-byte key), not {len(text)} characters "
                           f"of that form")
    return bytes.fromhex(text)


def _seed_key_from_file(path: Path) -> bytes:
    data = _read_key_file(path)
    if len(data) == 32:
        return data
    text = data.strip()
    if re.fullmatch(rb"[0-9a-fA-F]{64}", text):
        return bytes.fromhex(text.decode("ascii"))
    raise KeyFileError(f"{path}: not a seed encryption key (expected 32 bytes or 64 hex digits, found {len(data)} "
                       f"bytes)")


# --- the ring ----------------------------------------------------------------------------------------

class KeyRing:
    """The signing keys of `key_dir` (the newest is `signer`) and the seed box.

    `create`: make the key directory, a first signing key if there is none, and the seed key file if it is
    missing (and `FAIRDICE_SEED_KEY` is not set).  Without it nothing is written and what is missing is only
    recorded: `signer` and `seed_box` then raise KeyFileError, and `check_keys_for_store` says what needs it."""

    def __init__(self, key_dir: str | os.PathLike, seed_key_file: str | os.PathLike | None = None,
                 environ=None, create: bool = True):
        environ = os.environ if environ is None else environ
        self.key_dir = Path(key_dir)
        self.new_files: list[Path] = []  # the key files this ring made
        if create:
            make_private_dirs(self.key_dir)
        elif not self.key_dir.is_dir():
            raise KeyFileError(f"key directory {self.key_dir} does not exist")
        keys = load_signing_keys(self.key_dir) or ([self._make_first_key()] if create else [])
        self._current = keys[-1] if keys else None
        self._by_id = {k.key_id: k for k in keys}
        self._reload_lock = threading.Lock()
        self._seen = self._folders_changed_at()
        env_key = environ.get(SEED_KEY_ENV)
        self.seed_key_file = None if env_key else Path(seed_key_file or self.key_dir / STORAGE_FILE)
        self._seed_box = None
        if env_key:
            self._seed_box = SeedBox(_seed_key_from_env(env_key))
        elif self.seed_key_file.exists():
            self._seed_box = SeedBox(_seed_key_from_file(self.seed_key_file))
        elif create:
            self.create_seed_key()

    def _make_first_key(self) -> SigningKey:
        path = self.key_dir / SIGNING_FILE
        if _write_once(path, _new_signing_pem(Ed25519PrivateKey.generate())):
            self.new_files.append(path)
        return load_signing_keys(self.key_dir)[-1]  # another process may have made it first: its key

    def create_seed_key(self) -> None:
        """Make the seed key file unless it exists (an existing key is never replaced)."""
        if self.seed_key_file is None:  # FAIRDICE_SEED_KEY gives it
            return
        make_private_dirs(self.seed_key_file.parent)
        if _write_once(self.seed_key_file, secrets.token_bytes(32)):
            self.new_files.append(self.seed_key_file)
        self._seed_box = SeedBox(_seed_key_from_file(self.seed_key_file))

    # --- signing ---------------------------------------------------------------------------------

    @property
    def signer(self) -> Signer:
        """The current key: it signs the games created from now on."""
        if self._current is None:
            raise KeyFileError(f"no signing key in {self.key_dir} (neither {SIGNING_FILE} nor {ROTATED_DIR}/*.pem)")
        return self._current.signer

    @property
    def key_id(self) -> str:
        return self.signer.key_id

    @property
    def key_ids(self) -> set[str]:
        return set(self._by_id)

    def signer_for(self, key_id: str) -> Signer:
        """The key a game names, current or older; an unknown id makes the ring read the directory again (a
        key made or restored since the start), keeping its current key."""
        key = self._by_id.get(key_id)
        if key is None:
            self._add_new_keys()
            key = self._by_id.get(key_id)
        if key is None:
            raise KeyFileError(f"no signing key with id {key_id} in {self.key_dir}")
        return key.signer

    def _folders_changed_at(self) -> tuple:
        """When the key directory and signing/ last changed: a key file added or removed changes it."""
        def changed(folder: Path):
            try:
                return folder.stat().st_mtime_ns
            except OSError:
                return None
        return changed(self.key_dir), changed(self.key_dir / ROTATED_DIR)

    def _add_new_keys(self) -> None:
        """Put keys that appeared in the directory since it was read on the ring (the current key stays)."""
        with self._reload_lock:
            self._seen = self._folders_changed_at()
            found = dict(self._by_id)
            for k in load_signing_keys(self.key_dir):
                found.setdefault(k.key_id, k)
            self._by_id = found

    def public_keys(self) -> list[dict]:
        """Every key on the ring, as GET /v1/keys lists them: the current one first, then the others, newest
        first."""
        if self._folders_changed_at() != self._seen:  # a key rotated in since: published before any restart
            try:
                self._add_new_keys()
            except KeyFileError:  # a broken file: the keys known stay published (signer_for names the file)
                pass
        others = [k for k in reversed(self._by_id.values()) if k is not self._current]
        return [k.published(k is self._current) for k in [self._current, *others] if k is not None]

    # --- the seed key ------------------------------------------------------------------------------

    @property
    def has_seed_key(self) -> bool:
        return self._seed_box is not None

    @property
    def seed_key_is_new(self) -> bool:
        """Whether this ring made the seed key file (so nothing sealed before could open with it)."""
        return self.seed_key_file is not None and self.seed_key_file in self.new_files

    @property
    def seed_key_source(self) -> str:
        """Where the seed key comes from, for messages: the file, or the environment variable."""
        if self.seed_key_file is None:
            return f"the {SEED_KEY_ENV} environment variable"
        return f"file {self.seed_key_file}"

    @property
    def seed_box(self) -> SeedBox:
        if self._seed_box is None:
            raise KeyFileError(f"seed encryption key file {self.seed_key_file} is missing")
        return self._seed_box


# --- start-up ---------------------------------------------------------------------------------------

def _missing_signing_key(key_dir: Path, missing: list[str]) -> str:
    """One line naming the file a stored game's key should be in, and what needs it."""
    first = key_dir / SIGNING_FILE
    if first.exists():
        holds = load_signing_keys(key_dir)[0].key_id
        where = f"{key_dir / ROTATED_DIR}/<YYYYMMDDTHHMMSSZ>-{missing[0]}.pem is missing ({SIGNING_FILE} holds key " \
                f"{holds}, not this one)"
    else:
        where = f"{first} is missing"
    more = f" (and {len(missing) - 1} more: {', '.join(missing[1:])})" if len(missing) > 1 else ""
    return (f"{where}: games in the store were signed with its key {missing[0]}{more}, and need it to finish and "
            f"to verify against /v1/keys; restore it from a backup")


def _unfinished(store) -> str:
    count = store.stats()["unfinished"]
    return f"{count} unfinished game{' was' if count == 1 else 's were'}"


def _opens(keys: KeyRing, store, game_id: str) -> bool:
    snap = store.snapshot(game_id)
    if snap is None or snap.record.seed_sealed is None:  # finished meanwhile
        return True
    try:
        keys.seed_box.open(game_id, snap.record.seed_sealed)
    except KeyFileError:
        return False
    return True


def check_keys_for_store(keys: KeyRing, store) -> None:
    """Raise KeyFileError (one line: the missing file and what needs it, never a secret) unless `keys` has
    every signing key a game in `store` names and, when unfinished games exist, the seed key they were sealed
    with (the sealed seeds of up to SEED_CHECKS of them, the longest idle first, are opened)."""
    missing = sorted(store.key_ids() - keys.key_ids)
    if missing:
        raise KeyFileError(_missing_signing_key(keys.key_dir, missing))
    unfinished = store.stale_games(ALL_UNFINISHED, limit=SEED_CHECKS)
    if not unfinished:
        return
    if not keys.has_seed_key or keys.seed_key_is_new:
        made = " (a new one was just made in its place)" if keys.seed_key_is_new else ""
        raise KeyFileError(f"seed encryption key file {keys.seed_key_file} is missing{made}: "
                           f"{_unfinished(store)} sealed with it; restore it from a backup, or point "
                           f"FAIRDICE_SEED_KEY_FILE at it")
    failed = [game_id for game_id in unfinished if not _opens(keys, store, game_id)]
    if failed:
        raise KeyFileError(f"the seed encryption key from {keys.seed_key_source} does not open the sealed seeds of "
                           f"unfinished games ({len(failed)} of the {len(unfinished)} checked, e.g. game "
                           f"{failed[0]}): {_unfinished(store)} sealed with another key; restore that one")

def open_keyring(conf, store, environ=None) -> KeyRing:
    """The key ring a server runs with (`conf`: api.config.Settings), before any worker starts.  On a store
    without games the keys are made if missing; otherwise nothing is made that a game may need:
    `check_keys_for_store` must pass (KeyFileError), and only then, if no unfinished game was sealed with a
    lost seed key, is a new one made."""
    if not store.key_ids():
        return KeyRing(conf.key_dir, conf.seed_key_file, environ, create=True)
    key_dir = Path(conf.key_dir)
    if not key_dir.is_dir():
        raise KeyFileError(_missing_signing_key(key_dir, sorted(store.key_ids())))
    keys = KeyRing(key_dir, conf.seed_key_file, environ, create=False)
    check_keys_for_store(keys, store)
    if not keys.has_seed_key:
        keys.create_seed_key()
    return keys
