"""Sessions over a store (SPEC §10): fair dice for any app.

The plumbing only, as `api.games` does it for games: fresh session ids, seeds and tokens from `secrets`, seeds
sealed at rest (the session id and pair as associated data), the token checked in constant time, idempotent
replays, compare-and-append with a retry when another request got there first, and each answer signed with its
receipt.  Every rule is the core's (`fairdice.sessions`, `fairdice.notation`); refusals are domain errors that
the HTTP layer maps to statuses.  A command resumes the session from its last stored event (the tail), so a
roll costs the same in a session of ten rolls or of ten thousand.

**Two quotas** keep what a client makes the operator store in bounds, each with the client's own set by `fairdice
admin quota` (--sessions, --session-rolls) in place of the server's:

- FAIRDICE_MAX_SESSIONS: the sessions a client may open in any 24 hours, not sessions open at once as the games'
  quota counts: a session never finishes (no end, no timeout), so a quota "at once" would be a quota for ever,
  shutting a client out with no time at which to try again.  A day's window frees by itself (Retry-After: when
  the client's oldest session of the window turns a day old) and counts the stored sessions themselves.
- FAIRDICE_MAX_SESSION_ROLLS: the rolls a client's sessions (those it opened: it owns what they store) may make
  in a UTC day, all together.  A session has no size of its own, unlike a game (13 rounds): without this a
  client could grow one session by the moves' rate (1200 a minute by default, about 0.4 KB stored each) for
  ever.  Counted in the roll's own transaction, so it is exact on every server and a refused roll stores nothing
  and takes no nonce; Retry-After: the next UTC midnight.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
from collections import OrderedDict

from fairdice import derive
from fairdice.chain import canonical
from fairdice.errors import FairdiceError
from fairdice.sessions import SESSION_LOG_FORMAT, SESSION_LOG_VERSION, Session, Tail, receipt, session_header

from .errors import RefusalError
from .games import KEPT_STATUS, Answer, ForbiddenError, _epoch, token_hash
from .keys import KeyRing
from .lifecycle import stamp
from .store import BusyError, ConflictError, Remember, Remembered
from .stores.sessions_base import (RollQuota, RollsExhaustedError, SessionNotFoundError, SessionRecord,
                                   SessionState, utc_day)

SESSION_ID_BYTES = 12  # "s-" and 24 hex digits
TOKEN_BYTES = 32
MAX_ATTEMPTS = 50  # recomputations of one command overtaken by others on the same session
LOG_CACHE = 64  # signed logs kept by (session, revealed events): a log changes only at a rotation
QUOTA_WINDOW = 86400  # seconds: FAIRDICE_MAX_SESSIONS counts the sessions a client opened in the last day
_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


class TooManySessionsError(RefusalError):
    """The client opened as many sessions in the last day as a client may (HTTP 429)."""
    kind = "quota"


class TooManySessionRollsError(RefusalError):
    """The client's sessions made as many rolls this UTC day as a client's may (HTTP 429)."""
    kind = "quota"


def _seal_label(session_id: str, pair: int) -> str:
    """The associated data of a pair's sealed seed: it opens on no other session or pair."""
    return f"{session_id}#{pair}"


class Sessions:
    """The dice-session service the routes call (SPEC §10), `Games`' twin for sessions: fresh ids, seeds and tokens,
    sealed seeds, idempotent replays, compare-and-append with a retry, the two quotas, and a signed receipt in
    every answer.  Every rule is the core's (`fairdice.sessions`); a command resumes from the stored tail, not a
    replay, so a roll costs the same whatever the session's length."""
    def __init__(self, store, keys: KeyRing, max_sessions: int = 0, max_session_rolls: int = 0):
        """`max_sessions`: how many sessions one client may open in any 24 hours; `max_session_rolls`: how many
        rolls the sessions of one client may make in a UTC day (0: no quota)."""
        for name, most in (("max_sessions", max_sessions), ("max_session_rolls", max_session_rolls)):
            if isinstance(most, bool) or not isinstance(most, int) or most < 0:
                raise ValueError(f"{name} must be a whole number, 0 for no quota, not {most!r}")
        self.store = store
        self.keys = keys
        self.max_sessions = max_sessions
        self.max_session_rolls = max_session_rolls
        self._logs: OrderedDict[tuple[str, int], str] = OrderedDict()
        self._logs_lock = threading.Lock()

    # --- creating -----------------------------------------------------------------

    def create(self, client: str = "") -> dict:
        """A new session: the first pair's commitment and the next one's, signed in the header; TooManySessionsError
        if `client` (who asks, as the rate limits name it) opened its quota of sessions in the last day.  The
        quota is checked before the session is stored, not in the same transaction: a client racing its own
        openings may end one or two over it."""
        self._check_quota(client)
        session_id = "s-" + secrets.token_hex(SESSION_ID_BYTES)
        seeds = {0: secrets.token_bytes(derive.SEED_BYTES), 1: secrets.token_bytes(derive.SEED_BYTES)}
        signer = self.keys.signer
        head = session_header(session_id, seeds[0], seeds[1], signer.key_id, signer.public_key.hex())
        opened = {"header": head, "commitment_signature": signer.sign(canonical(head))}
        token = secrets.token_urlsafe(TOKEN_BYTES)
        record = SessionRecord(session_id, opened, signer.key_id, token_hash(token), client)
        self.store.create_session(record, {p: self.keys.seed_box.seal(_seal_label(session_id, p), s)
                                           for p, s in seeds.items()})
        return {"session_id": session_id, "token": token, "pair": 0, "commitment": head["commitment"],
                "next_commitment": head["next_commitment"], "key_id": head["key_id"],
                "public_key": head["public_key"], "header": head,
                "commitment_signature": opened["commitment_signature"], "event_count": 0}

    def _check_quota(self, client: str) -> None:
        """TooManySessionsError if `client` opened as many sessions in the last day as it may: `max_sessions`, or the
        quota an operator set for it (0: none); with no quota at all (0) the store is not asked.  The refusal's
        retry_after (Retry-After) is when the oldest of those sessions leaves the day's window."""
        if not self.max_sessions:
            return
        current = int(time.time())
        standing = self.store.client_sessions(client, stamp(current - QUOTA_WINDOW))
        limit = self.max_sessions if standing.max_sessions is None else standing.max_sessions
        if not limit or standing.opened < limit:
            return
        retry_after = max(1, _epoch(standing.oldest) + QUOTA_WINDOW - current)
        raise TooManySessionsError(
            "too_many_sessions",
            f"this client opened {standing.opened} dice sessions in the last {QUOTA_WINDOW} s, the most it may; "
            f"roll in one of them (a session takes any number of rolls and rotations), or open another in "
            f"{retry_after} s", max_sessions=limit, window=QUOTA_WINDOW, retry_after=retry_after)

    def _roll_quota(self, client: str) -> RollQuota | None:
        """What this client's rolls count against today (None: no quota, and nothing is counted)."""
        if not self.max_session_rolls:
            return None
        return RollQuota(client, utc_day(), self.max_session_rolls)

    # --- commands -----------------------------------------------------------------

    def client_seed(self, session_id, token, client_seed, app_key=None, idempotency_key=None) -> Answer:
        payload = {"client_seed": client_seed, "app_key": app_key}
        return self._command(session_id, token, "client_seed", payload, idempotency_key,
                             lambda s: (s.supply_client_seed(client_seed, app_key), None))

    def roll(self, session_id, token, dice, signed=None, idempotency_key=None) -> Answer:
        signed = signed or {}
        try:
            return self._command(session_id, token, "roll", {"dice": dice, **signed}, idempotency_key,
                                 lambda s: (s.roll(dice, **signed), None))
        except RollsExhaustedError as exc:
            retry_after = QUOTA_WINDOW - int(time.time()) % QUOTA_WINDOW  # to the next UTC midnight
            raise TooManySessionRollsError(
                "too_many_session_rolls",
                f"the sessions this client opened made {exc.rolled} rolls today (UTC), the most they may; roll "
                f"again after midnight UTC, in {retry_after} s", max_session_rolls=exc.most,
                retry_after=retry_after) from None

    def rotate(self, session_id, token, client_seed=None, app_key=None, signed=None, idempotency_key=None) -> Answer:
        signed = signed or {}
        payload = {"client_seed": client_seed, "app_key": app_key, **signed}

        def apply(session: Session):
            new_seed = secrets.token_bytes(derive.SEED_BYTES)
            events = session.rotate(new_seed, client_seed, app_key, **signed)
            pair = session.pair + 1  # the pair just committed to
            return events, (pair, self.keys.seed_box.seal(_seal_label(session_id, pair), new_seed))

        return self._command(session_id, token, "rotate", payload, idempotency_key, apply)

    def _command(self, session_id, token, action, payload, idempotency_key, apply) -> Answer:
        """Compute the command on the session as stored, then append its events only if no other event was
        stored meanwhile (else compute again on the new history)."""
        presented = token_hash(token)
        fingerprint = "" if idempotency_key is None else _fingerprint(action, payload)
        for _ in range(MAX_ATTEMPTS):
            state = self._state(session_id)
            if not hmac.compare_digest(state.record.token_sha256, presented):
                raise ForbiddenError("invalid_token", "this token is not the session's")
            if idempotency_key is not None:
                seen = self.store.session_recall(session_id, idempotency_key)
                if seen is not None:
                    return _replayed(seen, fingerprint)
            session = self._restore(state)
            events, new_seed = apply(session)  # a refusal raises here: nothing was stored
            body = self._answer(state, session, action)
            rows = [(event, {**tail.as_dict(), "revealed": self._revealed(state, session, i)})
                    for i, (event, tail) in enumerate(zip(events, session.tails))]
            kept = (Remember(None, idempotency_key, fingerprint, KEPT_STATUS, body) if idempotency_key is not None
                    else None)
            try:
                seen = self.store.session_append(session_id, state.event_count, rows, new_seed, kept,
                                                 self._roll_quota(state.record.client))
            except ConflictError:
                continue
            return Answer(body) if seen is None else _replayed(seen, fingerprint)
        raise BusyError(f"session {session_id} changed {MAX_ATTEMPTS} times while this command was computed")

    # --- reading ------------------------------------------------------------------

    def log(self, session_id: str) -> str:
        """The signed log of SPEC §10.8: every event through the last rotation."""
        state = self._state(session_id)
        cache_key = (session_id, state.revealed)
        with self._logs_lock:
            if cache_key in self._logs:
                self._logs.move_to_end(cache_key)
                return self._logs[cache_key]
        events = json.loads("[" + ",".join(self.store.session_events(session_id, state.revealed)) + "]")
        opened = state.record.opened
        doc = {"format": SESSION_LOG_FORMAT, "version": SESSION_LOG_VERSION, "header": opened["header"],
               "commitment_signature": opened["commitment_signature"], "events": events}
        doc["signature"] = self.keys.signer_for(state.record.key_id).sign(canonical(doc))
        text = _json(doc)
        with self._logs_lock:
            self._logs[cache_key] = text
            while len(self._logs) > LOG_CACHE:
                self._logs.popitem(last=False)
        return text

    # --- internals ------------------------------------------------------------------

    def _state(self, session_id) -> SessionState:
        if not isinstance(session_id, str):
            raise SessionNotFoundError(str(session_id))
        state = self.store.session_state(session_id)
        if state is None:
            raise SessionNotFoundError(session_id)
        return state

    def _restore(self, state: SessionState) -> Session:
        """The session after its stored events, from the tail of the last one (not a replay)."""
        sid = state.record.session_id
        seeds = {pair: self.keys.seed_box.open(_seal_label(sid, pair), sealed) for pair, sealed in state.seeds.items()}
        tail = Tail.from_dict(state.tail) if state.tail is not None else None
        return Session(state.record.opened["header"], seeds, tail)

    @staticmethod
    def _revealed(state: SessionState, session: Session, i: int) -> int:
        """How many events are revealed after new event i: through it, if it is a rotation."""
        revealed = state.revealed
        for event, tail in zip(session.events[:i + 1], session.tails):
            if event["type"] == "rotate":
                revealed = tail.chain.count
        return revealed

    def _answer(self, state: SessionState, session: Session, action: str) -> str:
        """The answer to a command: its new events, what they mean, and the receipt of the history after them."""
        sid = state.record.session_id
        signer = self.keys.signer_for(state.record.key_id)
        tail = session.tail
        doc = {"session_id": sid, "pair": tail.pair, "event_count": tail.chain.count, "events": session.events}
        if action == "roll":
            (event,) = session.events
            doc.update({k: event[k] for k in ("nonce", "serial", "dice", "rolls", "dropped", "total")})
        elif action == "rotate":
            rotated = session.events[0]
            doc["revealed"] = {"pair": rotated["pair"], "server_seed": rotated["server_seed"]}
            doc["commitment"] = derive.commitment(session.seed(tail.pair))
            doc["next_commitment"] = rotated["next_commitment"]
        doc["client_seed"] = tail.client_seed
        doc["app_key"] = tail.app_key
        doc["receipt"] = receipt(signer, sid, tail.chain)
        return _json(doc)


def _fingerprint(action: str, payload: dict) -> str:
    """What an Idempotency-Key is bound to: the command and its arguments."""
    return hashlib.sha256(action.encode() + b"\n" + canonical(payload)).hexdigest()


def _replayed(seen: Remembered, fingerprint: str) -> Answer:
    if not hmac.compare_digest(seen.fingerprint, fingerprint):
        raise FairdiceError("idempotency_key_reused", "this Idempotency-Key was used for a different request on "
                                                      "this session")
    return Answer(seen.body, replayed=True)


__all__ = ["SessionNotFoundError", "Sessions", "TooManySessionRollsError", "TooManySessionsError"]
