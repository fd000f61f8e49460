"""The server's two secrets, kept in a key directory created on first run.

- `signing-ed25519.pem`: the Ed25519 key that signs every commitment and every
  finished transcript (PKCS#8 PEM, the format `fairdice simulate --key` reads).
- `seed-encryption.key`: 32 random bytes, the AES-256-GCM key that encrypts
  server seeds at rest until they are revealed.

Both files are created with mode 0600 inside a 0700 directory, published
atomically (written to a temporary name, then hard-linked into place), so two
processes starting at once end up with the same keys.
"""

from __future__ import annotations

import os
import secrets
import stat
import sys
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.exceptions import InvalidTag

from fairdice.log import Signer

SIGNING_FILE = "signing-ed25519.pem"
STORAGE_FILE = "seed-encryption.key"
SEAL_VERSION = b"\x01"
NONCE_BYTES = 12


class KeyFileError(RuntimeError):
    """A key file is missing, unreadable or malformed."""


def _write_once(path: Path, data: bytes) -> bytes:
    """Create `path` with `data` (mode 0600) unless it exists; return what the file holds."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)
    return path.read_bytes()


def _read_or_create(path: Path, make) -> bytes:
    if path.exists():
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            print(f"fairdice: warning: {path} is readable by others (mode {mode:o}); chmod 600 it",
                  file=sys.stderr)
        return path.read_bytes()
    return _write_once(path, make())


def _new_signing_pem() -> bytes:
    return Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


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


class KeyRing:
    """The signing key (by key id) and the seed box, loaded from (or created in) `key_dir`."""

    def __init__(self, key_dir: str | os.PathLike, create: bool = True):
        self.key_dir = Path(key_dir)
        if create:
            self.key_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        elif not self.key_dir.is_dir():
            raise KeyFileError(f"key directory {self.key_dir} does not exist")
        pem = (_read_or_create(self.key_dir / SIGNING_FILE, _new_signing_pem) if create
               else (self.key_dir / SIGNING_FILE).read_bytes())
        try:
            private = serialization.load_pem_private_key(pem, password=None)
        except ValueError as exc:
            raise KeyFileError(f"{self.key_dir / SIGNING_FILE}: not a PEM private key ({exc})") from None
        if not isinstance(private, Ed25519PrivateKey):
            raise KeyFileError(f"{self.key_dir / SIGNING_FILE}: not an Ed25519 key")
        self.signer = Signer(private)
        raw = (_read_or_create(self.key_dir / STORAGE_FILE, lambda: secrets.token_bytes(32)) if create
               else (self.key_dir / STORAGE_FILE).read_bytes())
        self.seed_box = SeedBox(raw)
        self._signers = {self.signer.key_id: self.signer}

    @property
    def key_id(self) -> str:
        return self.signer.key_id

    def signer_for(self, key_id: str) -> Signer:
        try:
            return self._signers[key_id]
        except KeyError:
            raise KeyFileError(f"no signing key with id {key_id} in {self.key_dir}") from None

    def public_keys(self) -> list[dict]:
        return [{"key_id": s.key_id, "algorithm": "Ed25519", "public_key": s.public_key.hex()}
                for s in self._signers.values()]
