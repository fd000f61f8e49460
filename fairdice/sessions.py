"""Sessions: provably fair dice for any app (SPEC §10), as a state machine in the game's style.

An app opens a session and gets the server's signed commitment to the first seed pair's server seed (and, one
pair ahead, to the next one), sends its client seed, then rolls dice notation (`fairdice.notation`); each roll
is derived from the pair's server seed, the client seed, the nonce (0, 1, 2, ... within the pair) and the die's
index.  Rotating reveals the server seed of the pair and starts the next one, whose commitment was published a
pair earlier, so the app may send its new client seed in the same request without the server choosing its seed
after seeing it.  Every event extends a hash chain that the server signs in each answer (SPEC §10.6), and an app
that registered a key signs each roll request over the chain head it saw (SPEC §10.7).

Commands in, events out, one `_apply`: every refusal happens before anything changes, and `Session.restore`
replays stored events through the same `_apply`.  The server seeds are given by the caller (`secrets` in the
API): the core draws nothing itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from . import derive, notation
from .chain import Chain, canonical, field, receipt_message
from .errors import FairdiceError, NotNowError
from .players import PlayerKey

SESSION_LOG_FORMAT = "fairdice-session-log"
SESSION_LOG_VERSION = 1
PURPOSE = "session-roll"
CHAIN_LABEL = "fairdice-session-chain/v1"
RECEIPT_LABEL = "fairdice-session-receipt/v1"
APP_LABEL = "fairdice-session-app/v1"
SESSION_ID_MAX = 64
COUNTER_LIMIT = 2 ** 32  # nonces, serials and event counts are u32 in the signed messages


# --- the derivation (SPEC §10.4) -------------------------------------------------------------------

def die_message(session_id: str, client_seed: str, nonce: int, index: int) -> bytes:
    """SPEC §2.3's msg with the purpose "session-roll", the session id in place of the game id, the one client
    seed of the pair, and the numbers (nonce, index)."""
    return derive.message(PURPOSE, session_id, [client_seed], nonce, index)


def candidate_width(sides: int) -> int:
    """Bytes per candidate: 1 for up to 256 faces, 2 beyond (SPEC §10.4)."""
    return 1 if sides <= 256 else 2


def acceptance_bound(sides: int) -> int:
    """Candidates below this are accepted: the largest multiple of `sides` that fits the candidate's bytes."""
    space = 256 ** candidate_width(sides)
    return space - space % sides


def die_face(server_seed: bytes, msg: bytes, sides: int) -> int:
    """A die of `sides` faces from the message's byte stream (SPEC §10.4)."""
    return face_from_blocks(derive.hmac_blocks(server_seed, msg), sides)


def face_from_blocks(blocks: Iterable[bytes], sides: int) -> int:
    """The first accepted candidate of the stream, read `candidate_width` bytes at a time (big endian), as a face
    1..sides: rejection sampling, exactly uniform for every number of faces.  A block whose candidates are all
    rejected is followed by the next one, however rarely that happens."""
    width, limit = candidate_width(sides), acceptance_bound(sides)
    for block in blocks:  # 32 bytes: 32 or 16 whole candidates, none split
        for start in range(0, len(block), width):
            candidate = int.from_bytes(block[start:start + width], "big")
            if candidate < limit:
                return candidate % sides + 1
    raise ValueError("the stream ended before a candidate was accepted")


def roll_faces(server_seed: bytes, session_id: str, client_seed: str, nonce: int, spec: notation.RollSpec) -> list[int]:
    """Every die of a roll, die i from its own message (SPEC §10.4)."""
    return [die_face(server_seed, die_message(session_id, client_seed, nonce, i), spec.sides)
            for i in range(spec.count)]


# --- the header, the chain, the receipts -----------------------------------------------------------

def check_session_id(session_id) -> str:
    if not isinstance(session_id, str) or not 1 <= len(session_id) <= SESSION_ID_MAX or not session_id.isascii() \
            or not session_id.isprintable():
        raise FairdiceError("invalid_session_id", "a session id is 1..64 printable ASCII characters")
    return session_id


def session_header(session_id: str, seed: bytes, next_seed: bytes, key_id: str, public_key_hex: str) -> dict:
    """SPEC §10.2: signed at creation, it commits to the first pair's server seed and to the next pair's."""
    return {"scheme": derive.SCHEME, "session_id": check_session_id(session_id),
            "commitment": derive.commitment(seed), "next_commitment": derive.commitment(next_seed),
            "key_id": key_id, "public_key": public_key_hex}


def start_chain(header: dict) -> Chain:
    """h_0 of a session (SPEC §10.6): the chain of §5.6 under the session's own label."""
    return Chain.begin(CHAIN_LABEL, header["session_id"], header)


def receipt(signer, session_id: str, chain: Chain) -> dict:
    """The server's signed word that the session's history had `chain.count` events hashing to `chain.digest`."""
    return {"session_id": session_id, "events": chain.count, "chain": chain.digest.hex(), "key_id": signer.key_id,
            "signature": signer.sign(receipt_message(session_id, chain.count, chain.digest, RECEIPT_LABEL))}


def app_message(session_id: str, n: int, chain_digest: bytes, command: dict) -> bytes:
    """What an app signs (SPEC §10.7): field("fairdice-session-app/v1") || field(session_id) || u32(n) || h_n ||
    canonical(command)."""
    return field(APP_LABEL) + field(session_id) + n.to_bytes(4, "big") + chain_digest + canonical(command)


def roll_command(pair: int, nonce: int, dice: str) -> dict:
    return {"type": "roll", "pair": pair, "nonce": nonce, "dice": dice}


def rotate_command(pair: int) -> dict:
    return {"type": "rotate", "pair": pair}


class AppKey(PlayerKey):
    """An app's Ed25519 key pair (SPEC §10.7), made and kept by the app: a player's key (`generate`,
    `from_private_hex`, `public_hex`) that signs session requests instead of game moves."""

    def sign(self, session_id: str, chain: Chain, command: dict) -> str:
        """The app_signature of `command`, made after the history whose chain is `chain` (n and h_n)."""
        return self._key.sign(app_message(session_id, chain.count, chain.digest, command)).hex()


def check_app_key(app_key) -> str | None:
    """64 lowercase hex digits that make an Ed25519 public key, or None (the app signs nothing)."""
    if app_key is None:
        return None
    derive.check_hex(app_key, "app_key", 32, "invalid_app_key")
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(app_key))
    except ValueError:
        raise FairdiceError("invalid_app_key", "app_key is not an Ed25519 public key") from None
    return app_key


# --- the state machine ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Tail:
    """All a session's next command needs of its history: the chain, the current pair, its client seed and app
    key, the next nonce and the rolls so far.  The store keeps the tail after each event, so a session of 10,000
    rolls is resumed from one row, not replayed."""
    chain: Chain
    pair: int = 0
    nonce: int = 0  # the next roll's nonce in the current pair
    serial: int = 0  # rolls in the whole session so far (the next roll's serial is serial + 1)
    client_seed: str | None = None  # the current pair's
    app_key: str | None = None  # the current pair's app key (None: the app signs nothing)

    def as_dict(self) -> dict:
        return {"events": self.chain.count, "chain": self.chain.digest.hex(), "pair": self.pair,
                "nonce": self.nonce, "serial": self.serial, "client_seed": self.client_seed, "app_key": self.app_key}

    @classmethod
    def from_dict(cls, doc: dict) -> Tail:
        return cls(Chain(bytes.fromhex(doc["chain"]), doc["events"]), doc["pair"], doc["nonce"], doc["serial"],
                   doc["client_seed"], doc["app_key"])


class Session:
    """One dice session of SPEC §10 as a state machine in the game's style: commands in (`supply_client_seed`,
    `roll`, `rotate`), events out, one `_apply`.  The server seeds are given by the caller and the state after
    each event fits in a `Tail`, so the API can resume a session from its last stored event instead of replaying
    it, and `restore` replays the same events through the same `_apply`."""
    def __init__(self, header: dict, seeds: dict[int, bytes], tail: Tail | None = None):
        """`seeds`: the unrevealed server seeds by pair, at least the current pair's and the next one's."""
        self.header = header
        self.session_id = header["session_id"]
        self._seeds = dict(seeds)
        self.tail = tail if tail is not None else Tail(start_chain(header))
        self.events: list[dict] = []  # the events applied to this object (restored or new)
        self.tails: list[Tail] = []  # the tail after each of them (what a store keeps with each event)

    @classmethod
    def restore(cls, header: dict, seeds: dict[int, bytes], events: Sequence[dict]) -> Session:
        session = cls(header, seeds)
        for event in events:
            session._apply(dict(event))
        return session

    @property
    def pair(self) -> int:
        return self.tail.pair

    def seed(self, pair: int) -> bytes:
        """An unrevealed server seed (for the store and the rotation; never shown before its reveal)."""
        return self._seeds[pair]

    # --- commands ------------------------------------------------------------------------------

    def supply_client_seed(self, client_seed, app_key=None) -> list[dict]:
        """The current pair's client seed (once per pair, before its first roll), with the app's key if it signs."""
        if self.tail.client_seed is not None:
            raise NotNowError("client_seed_already_set", f"pair {self.pair} already has its client seed; rotate to "
                                                         "start a pair with a new one")
        return self._emit([self._client_seed_event(self.pair, client_seed, app_key)])

    def roll(self, dice, app_signature=None, event_count=None) -> list[dict]:
        """One roll of the notation `dice` with the pair's next nonce."""
        spec = notation.parse(dice)
        t = self.tail
        if t.client_seed is None:
            raise NotNowError("client_seed_required", f"pair {t.pair} has no client seed yet: send one first "
                                                      "(POST /v1/sessions/{id}/client-seed)")
        if t.nonce >= COUNTER_LIMIT or t.serial + 1 >= COUNTER_LIMIT:
            raise NotNowError("rotate_required", f"pair {t.pair} has used every nonce: rotate")
        signature = self._app_signed(roll_command(t.pair, t.nonce, dice), app_signature, event_count)
        faces = roll_faces(self._seeds[t.pair], self.session_id, t.client_seed, t.nonce, spec)
        event = {"type": "roll", "pair": t.pair, "nonce": t.nonce, "serial": t.serial + 1, "dice": dice,
                 "rolls": faces, "dropped": spec.dropped(faces), "total": spec.total(faces),
                 "app_signature": signature}
        return self._emit([event])

    def rotate(self, new_seed: bytes, client_seed=None, app_key=None, app_signature=None,
               event_count=None) -> list[dict]:
        """Reveal the current pair's server seed, start the next pair (committed a pair ago) and commit to the
        one after it with `new_seed`; optionally with the new pair's client seed (and app key)."""
        if not isinstance(new_seed, bytes) or len(new_seed) != derive.SEED_BYTES:
            raise ValueError("a server seed is 32 bytes")
        pair = self.pair
        if pair + 2 >= COUNTER_LIMIT:
            raise NotNowError("session_exhausted", "this session has used every seed pair: open a new session")
        signature = self._app_signed(rotate_command(pair), app_signature, event_count)
        events = [{"type": "rotate", "pair": pair, "server_seed": self._seeds[pair].hex(),
                   "next_commitment": derive.commitment(new_seed), "app_signature": signature}]
        if client_seed is not None or app_key is not None:
            events.append(self._client_seed_event(pair + 1, client_seed, app_key))
        self._seeds[pair + 2] = new_seed
        return self._emit(events)

    # --- internals ---------------------------------------------------------------------------

    @staticmethod
    def _client_seed_event(pair: int, client_seed, app_key) -> dict:
        derive.check_client_seed(client_seed)
        return {"type": "client_seed", "pair": pair, "client_seed": client_seed, "app_key": check_app_key(app_key)}

    def _app_signed(self, command: dict, app_signature, event_count) -> str | None:
        """The app's signature of `command` over the history so far, checked (a pair without an app key takes
        none: its rolls carry null)."""
        t = self.tail
        if t.app_key is None:
            if app_signature is not None:
                raise FairdiceError("invalid_app_signature", f"pair {t.pair} has no app key, so its requests are "
                                                             "not signed")
            return None
        if app_signature is None:
            raise FairdiceError("app_signature_required", f"pair {t.pair} is signed by the app key {t.app_key}: "
                                                          "send app_signature and event_count")
        if event_count is not None and event_count != t.chain.count:
            raise NotNowError("stale_history", f"the request was signed over {event_count} events; the session has "
                                               f"{t.chain.count}", event_count=t.chain.count)
        derive.check_hex(app_signature, "app_signature", 64, "invalid_app_signature")
        try:
            Ed25519PublicKey.from_public_bytes(bytes.fromhex(t.app_key)).verify(
                bytes.fromhex(app_signature), app_message(self.session_id, t.chain.count, t.chain.digest, command))
        except InvalidSignature:
            raise FairdiceError("invalid_app_signature", "app_signature is not the app key's signature of this "
                                                         "request over the session's history as stored") from None
        return app_signature

    def _emit(self, events: list[dict]) -> list[dict]:
        for event in events:
            self._apply(event)
        return events

    def _apply(self, event: dict) -> None:
        t = self.tail
        kind = event["type"]
        if kind == "client_seed":
            t = replace(t, client_seed=event["client_seed"], app_key=event["app_key"])
        elif kind == "roll":
            t = replace(t, nonce=event["nonce"] + 1, serial=event["serial"])
        elif kind == "rotate":
            self._seeds.pop(event["pair"], None)
            t = replace(t, pair=event["pair"] + 1, nonce=0, client_seed=None, app_key=None)
        else:
            raise ValueError(f"unknown session event type {kind!r}")
        self.tail = replace(t, chain=t.chain.extend((event,)))
        self.events.append(event)
        self.tails.append(self.tail)


def revealed_events(events: Sequence[dict]) -> list[dict]:
    """The events through the last rotation: every roll of every revealed pair (SPEC §10.8)."""
    last = max((i for i, e in enumerate(events) if e["type"] == "rotate"), default=-1)
    return list(events[:last + 1])


def session_log(header: dict, commitment_signature: str, events: Sequence[dict], signer) -> dict:
    """The session log of SPEC §10.8, signed: the header, its signature, the events of the revealed pairs."""
    doc = {"format": SESSION_LOG_FORMAT, "version": SESSION_LOG_VERSION, "header": header,
           "commitment_signature": commitment_signature, "events": revealed_events(events)}
    doc["signature"] = signer.sign(canonical(doc))
    return doc
