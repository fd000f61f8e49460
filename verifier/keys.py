"""Ed25519 keys: reading a trusted key file (--pubkey) and checking signatures (SPEC §6)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from functools import lru_cache

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from . import strictjson
from .errors import VerifierError
from .reading import UnusableFileError, read_bytes

HEX64 = re.compile(r"[0-9a-f]{64}")
HEX128 = re.compile(r"[0-9a-f]{128}")


class PublicKeyFileError(VerifierError, ValueError):
    """A --pubkey file that holds no usable Ed25519 public key.  (Not the server's `api.keys.KeyFileError`, about
    its own signing key files: the verifier imports nothing of ours.)"""


def key_id(public_key: bytes) -> str:
    return hashlib.sha256(public_key).hexdigest()[:16]


def load_trusted_keys(path: str) -> list[bytes]:
    """The raw 32-byte keys in `path`: 64 hex digits, a PEM public key, or the JSON of GET /v1/keys."""
    try:
        data = read_bytes(path, limit=1024 * 1024)
    except UnusableFileError as e:
        raise PublicKeyFileError(str(e)) from None
    text = data.decode("utf-8", "replace").strip()
    if HEX64.fullmatch(text.lower()):
        return [bytes.fromhex(text)]
    if text.startswith("-----BEGIN"):
        try:
            key = serialization.load_pem_public_key(data)
        except ValueError as e:
            raise PublicKeyFileError(f"not a PEM public key: {e}") from None
        if not isinstance(key, Ed25519PublicKey):
            raise PublicKeyFileError("the PEM key is not an Ed25519 public key")
        return [key.public_bytes_raw()]
    try:
        doc = strictjson.loads(data)
    except ValueError:
        raise PublicKeyFileError("neither 64 hex digits, a PEM public key nor the JSON of GET /v1/keys") from None
    entries = doc.get("keys") if isinstance(doc, dict) else None
    if not isinstance(entries, list) or not entries:
        raise PublicKeyFileError('JSON without a non-empty "keys" array (expected the answer of GET /v1/keys)')
    keys = []
    for i, entry in enumerate(entries):
        pk = entry.get("public_key") if isinstance(entry, dict) else None
        if not isinstance(pk, str) or not HEX64.fullmatch(pk):
            raise PublicKeyFileError(f"keys[{i}].public_key: expected 64 lowercase hex digits, found {pk!r}")
        raw = bytes.fromhex(pk)
        if "key_id" in entry and entry["key_id"] != key_id(raw):
            raise PublicKeyFileError(f"keys[{i}].key_id: expected {key_id(raw)}, found {entry['key_id']!r}")
        keys.append(raw)
    return keys


@lru_cache(maxsize=64)
def _public_key(raw: bytes) -> Ed25519PublicKey:
    return Ed25519PublicKey.from_public_bytes(raw)


def signature_valid(public_key: bytes, signature_hex, data: bytes) -> bool:
    if not isinstance(signature_hex, str) or not HEX128.fullmatch(signature_hex):
        return False
    try:
        _public_key(public_key).verify(bytes.fromhex(signature_hex), data)
        return True
    except (InvalidSignature, ValueError):
        return False


class TrustedKeys:
    """The keys a log's signatures may be from, by key id (SPEC §7, "one key per signature"): a signature is tried
    against the one key its id names, never against each key in turn, so no input makes the work grow as
    (trusted keys x signatures). Build it once per run: the map costs one SHA-256 per key."""

    def __init__(self, keys: Iterable[bytes]):
        self.by_id: dict[str, bytes] = {}
        for key in keys:
            self.by_id.setdefault(key_id(key), key)

    @classmethod
    def of(cls, keys: TrustedKeys | Iterable[bytes]) -> TrustedKeys:
        return keys if isinstance(keys, TrustedKeys) else cls(keys)

    def __len__(self) -> int:
        return len(self.by_id)

    def named(self, kid) -> bytes | None:
        """The trusted key whose id is `kid`, or None."""
        return self.by_id.get(kid) if type(kid) is str else None

    def trusts(self, key: bytes) -> bool:
        return self.by_id.get(key_id(key)) == key

    def described(self, most: int = 3) -> str:
        """The trusted keys in words, the first `most` of them written out (a failure names what was expected)."""
        shown = ", ".join(k.hex() for k in list(self.by_id.values())[:most])
        return f"a trusted key: {shown}" + (f" (or one of {len(self) - most} more)" if len(self) > most else "")
