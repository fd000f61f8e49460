"""A Python client for the fairdice HTTP API (an edge: network through `requests`).

    from fairdice.client import Client
    api = Client("http://127.0.0.1:8000")
    game = api.new_game("classic13", bot="ev", name="ann")   # the server commits to its seed
    game.join()                      # a client seed generated here with `secrets`, after the commitment
    state = game.roll()              # then game.roll([0, 2]), game.score("full_house")
    advice = game.hint()             # the best move now and every alternative, with expected final scores
    ...
    report = game.verify()           # fetch the log once over: signatures, commitment, every die

Moves are sent with an Idempotency-Key and retried on connection errors and
503 answers, so a network blip never costs a roll twice.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import requests

from .errors import FairdiceError
from .log import canonical, key_id as key_id_of, setup_from_header, verify_signature

DEFAULT_TIMEOUT = 15.0
# The first hint on a rule set whose optimal table the server has not built yet waits for the build.
HINT_TIMEOUT = 120.0
# The answer was lost (refused connection, reset, cut-off body, timeout): a move is retried with the same
# Idempotency-Key, so the server applies it at most once and the retry gets its answer.
RETRYABLE = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)


class ApiError(Exception):
    """The server refused a request: `status`, the problem document, its `code` and `allowed`."""

    def __init__(self, status: int, problem: dict):
        self.status = status
        self.problem = problem
        self.code = problem.get("code", "")
        self.allowed = problem.get("allowed")
        super().__init__(f"{status} {self.code}: {problem.get('detail', problem.get('title', ''))}")


def new_client_seed() -> str:
    """A fresh client seed (128 bits from `secrets`), made on this machine."""
    return secrets.token_hex(16)


class Client:
    def __init__(self, base_url: str = "http://127.0.0.1:8000", session: requests.Session | None = None,
                 timeout: float = DEFAULT_TIMEOUT, retries: int = 3, backoff: float = 0.2):
        self.base_url = base_url.rstrip("/")
        self.session = session or requests.Session()
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff

    # --- plumbing -------------------------------------------------------------------

    def request(self, method: str, path: str, body=None, token: str | None = None,
                idempotency_key: str | None = None, params=None, retry: bool = False,
                timeout: float | None = None):
        headers = {"Accept": "application/json, application/problem+json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        data = None if body is None else json.dumps(body)
        if data is not None:
            headers["Content-Type"] = "application/json"
        attempts = 1 + (self.retries if retry else 0)
        for attempt in range(attempts):
            try:
                resp = self.session.request(method, self.base_url + path, data=data, headers=headers,
                                            params=params, timeout=timeout or self.timeout)
            except RETRYABLE:
                if attempt + 1 >= attempts:
                    raise
                time.sleep(self.backoff * 2 ** attempt)
                continue
            if resp.status_code == 503 and attempt + 1 < attempts:
                time.sleep(self.backoff * 2 ** attempt)
                continue
            break
        if resp.status_code >= 400:
            try:
                problem = resp.json()
            except ValueError:
                problem = {"code": "http_error", "detail": resp.text[:200]}
            raise ApiError(resp.status_code, problem if isinstance(problem, dict) else {"detail": str(problem)})
        return resp.json()

    def _move(self, game_id: str, action: str, token: str, body: dict, idempotency_key: str | None):
        key = idempotency_key or uuid.uuid4().hex
        return self.request("POST", f"/v1/games/{game_id}/{action}", body, token=token, idempotency_key=key,
                            retry=True)

    # --- reference ------------------------------------------------------------------

    def health(self) -> dict:
        return self.request("GET", "/healthz")

    def rules(self) -> list[dict]:
        return self.request("GET", "/v1/rules")["rules"]

    def bots(self) -> list[dict]:
        return self.request("GET", "/v1/bots")["bots"]

    def keys(self) -> list[dict]:
        return self.request("GET", "/v1/keys")["keys"]

    # --- games ------------------------------------------------------------------------

    def create_game(self, rules: str, seats: Sequence[dict], first=0, upper_first: bool = False) -> dict:
        return self.request("POST", "/v1/games", {"rules": rules, "seats": list(seats), "first": first,
                                                  "upper_first": upper_first})

    def state(self, game_id: str, since: int = 0) -> dict:
        return self.request("GET", f"/v1/games/{game_id}", params={"since": since} if since else None)

    def log(self, game_id: str) -> dict:
        return self.request("GET", f"/v1/games/{game_id}/log")

    def hint(self, game_id: str) -> dict:
        """Advice for the human seat to move (no token needed): `best`, `alternatives` (each with `value`, the
        expected final score, and `loss`), `engine`, `value_kind`; see GET /v1/games/{id}/hint."""
        return self.request("GET", f"/v1/games/{game_id}/hint", retry=True,
                            timeout=max(self.timeout, HINT_TIMEOUT))

    def send_client_seed(self, game_id: str, token: str, client_seed: str, idempotency_key=None) -> dict:
        return self._move(game_id, "client-seed", token, {"client_seed": client_seed}, idempotency_key)

    def roll(self, game_id: str, token: str, hold: Iterable[int] = (), idempotency_key=None) -> dict:
        return self._move(game_id, "roll", token, {"hold": list(hold)}, idempotency_key)

    def score(self, game_id: str, token: str, category: str, idempotency_key=None) -> dict:
        return self._move(game_id, "score", token, {"category": category}, idempotency_key)

    def abandon(self, game_id: str, token: str, idempotency_key=None) -> dict:
        return self._move(game_id, "abandon", token, {}, idempotency_key)

    def new_game(self, rules: str, bot: str | None = "ev", name: str = "you", first=0,
                 upper_first: bool = False, bots: Sequence[str] = ()) -> "PlayerGame":
        """A game with one human seat (yours, seat 0) against `bot` (and any further `bots`)."""
        seats = [{"type": "human", "name": name}]
        seats += [{"type": "bot", "bot": b} for b in ([bot] if bot else []) + list(bots)]
        created = self.create_game(rules, seats, first, upper_first)
        return PlayerGame(self, created, created["tokens"][0]["token"], created["tokens"][0]["seat"])

    def verify_log(self, log: dict, trusted_public_key: str | None = None) -> "Verification":
        """Check a log; the trusted key defaults to the server's (GET /v1/keys) for the log's key id."""
        if trusted_public_key is None:
            head = log.get("header", {}) if isinstance(log, dict) else {}
            trusted_public_key = next((k["public_key"] for k in self.keys() if k["key_id"] == head.get("key_id")),
                                      None)
            if trusted_public_key is None:
                return Verification(False, ["log.key: the server does not list the log's key id"])
        return verify_log(log, trusted_public_key)


@dataclass
class PlayerGame:
    """One seat's view of a game: the creation answer, the seat's token, the latest state."""
    client: Client
    created: dict
    token: str
    seat: int | None
    state: dict | None = None
    client_seed: str | None = None

    @property
    def game_id(self) -> str:
        return self.created["game_id"]

    @property
    def commitment(self) -> str:
        return self.created["commitment"]

    def check_commitment(self) -> None:
        """Before sending a client seed: the header is signed by a key the server lists."""
        head = self.created["header"]
        keys = {k["key_id"]: k["public_key"] for k in self.client.keys()}
        if keys.get(head["key_id"]) != head["public_key"]:
            raise ValueError("the game's key is not one the server publishes")
        if not verify_signature(head["public_key"], self.created["commitment_signature"], canonical(head)):
            raise ValueError("the commitment signature does not verify")

    def join(self, client_seed: str | None = None) -> dict:
        """Send this seat's client seed (fresh from `secrets` unless given), after checking the commitment."""
        self.check_commitment()
        self.client_seed = client_seed if client_seed is not None else new_client_seed()
        self.state = self.client.send_client_seed(self.game_id, self.token, self.client_seed)
        return self.state

    def refresh(self) -> dict:
        self.state = self.client.state(self.game_id)
        return self.state

    def roll(self, hold: Iterable[int] = ()) -> dict:
        self.state = self.client.roll(self.game_id, self.token, hold)
        return self.state

    def score(self, category: str) -> dict:
        self.state = self.client.score(self.game_id, self.token, category)
        return self.state

    def abandon(self) -> dict:
        self.state = self.client.abandon(self.game_id, self.token)
        return self.state

    def hint(self) -> dict:
        """Advice for the seat to move now (409 `not_playing` / `bot_to_move` when there is none)."""
        return self.client.hint(self.game_id)

    def log(self) -> dict:
        return self.client.log(self.game_id)

    def verify(self) -> "Verification":
        """Fetch the log and check it against the server's published key and this game's commitment."""
        log = self.log()
        result = self.client.verify_log(log)
        if log.get("header") != self.created["header"]:
            result.ok = False
            result.problems.append("header: the log's header is not the one committed at creation")
        if self.client_seed is not None and not any(
                e.get("type") == "client_seed" and e.get("seat") == self.seat and e.get("client_seed") == self.client_seed
                for e in log.get("events", [])):
            result.ok = False
            result.problems.append("client_seed: this seat's client seed is not in the log")
        return result


@dataclass
class Verification:
    ok: bool
    problems: list[str] = field(default_factory=list)
    checked_by: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.ok


def verify_log(log: dict, trusted_public_key: str | None = None) -> Verification:
    """Check a transcript.

    Uses the independent verifier (`verifier` package) when it is installed;
    always also checks here: the key id, both signatures (against the trusted
    key when given), the revealed seed against the commitment, and a replay of
    every command through the core, comparing each event and the final block.
    """
    problems: list[str] = []
    checked_by = ["fairdice.client"]
    _local_checks(log, trusted_public_key, problems)
    independent = _independent_verifier(log, trusted_public_key)
    if independent is not None:
        checked_by.append("verifier")
        problems += independent
    return Verification(not problems, problems, checked_by)


def _independent_verifier(log, trusted_public_key) -> list[str] | None:
    try:
        from verifier import verify_document  # the standalone implementation of SPEC.md, when installed
    except ImportError:
        return None
    trusted = [bytes.fromhex(trusted_public_key)] if trusted_public_key else None
    over = isinstance(log, dict) and log.get("final") is not None
    try:
        result = verify_document(log, "<api>", trusted_keys=trusted, require_signature=over)
    except TypeError:  # a verifier with another interface: leave it to its CLI
        return None
    if result.ok:
        return []
    if result.error:
        return [f"verifier: {result.error}"]
    return [f"verifier {f.check}: event {f.event} {f.field}: expected {f.expected!r}, found {f.found!r}"
            for f in result.failures] + [f"verifier {c}: {n} more" for c, n in result.unlisted.items()]


def _local_checks(log, trusted_public_key, problems: list[str]) -> None:
    from .game import Game

    if not isinstance(log, dict) or log.get("format") != "fairdice-log" or log.get("version") != 1:
        problems.append("log.format: not a fairdice log, version 1")
        return
    head = log.get("header")
    if not isinstance(head, dict):
        problems.append("log.format: no header")
        return
    try:
        public = bytes.fromhex(head["public_key"])
    except (KeyError, TypeError, ValueError):
        problems.append("log.key: no valid public key in the header")
        return
    if key_id_of(public) != head.get("key_id"):
        problems.append("log.key: key_id is not derived from public_key")
    if trusted_public_key is not None and trusted_public_key.lower() != head["public_key"]:
        problems.append("log.key: the log is signed by another key than the trusted one")
    if not verify_signature(head["public_key"], log.get("commitment_signature", ""), canonical(head)):
        problems.append("sig.commitment: the commitment signature does not verify")
    final = log.get("final")
    if final is None:
        if "signature" in log:
            problems.append("log.format: a signature on a log without a final block")
        return
    unsigned = {k: v for k, v in log.items() if k != "signature"}
    if not verify_signature(head["public_key"], log.get("signature", ""), canonical(unsigned)):
        problems.append("sig.final: the final signature does not verify")
    try:
        seed = bytes.fromhex(final["server_seed"])
    except (KeyError, TypeError, ValueError):
        problems.append("seed.revealed: no revealed server seed")
        return
    if hashlib.sha256(seed).hexdigest() != head.get("commitment"):
        problems.append("seed.commitment: SHA-256 of the revealed seed is not the commitment")
        return
    try:
        game = Game(setup_from_header(head), seed)
        for index, event in enumerate(log.get("events", [])):
            kind = event.get("type")
            if kind == "start":
                if game.events and game.events[-1].get("type") == "start" and len(game.events) == index + 1:
                    continue
                problems.append(f"turn.order: event {index}: a start event that no client seed produced")
                return
            produced = _replay(game, event)
            if produced is None:
                problems.append(f"log.format: event {index}: unknown type {kind!r}")
                return
            if produced[0] != event:
                problems.append(f"replay: event {index}: expected {produced[0]}, found {event}")
                return
            if len(produced) > 1:  # the start event follows the last client seed
                nxt = log["events"][index + 1] if index + 1 < len(log["events"]) else None
                if nxt != produced[1]:
                    problems.append(f"start.first: event {index + 1}: expected {produced[1]}, found {nxt}")
                    return
        if not game.over:
            problems.append("game.complete: the events do not end the game")
            return
        from .log import final_block

        if final_block(game) != final:
            problems.append("final.totals: the final block does not recompute")
    except (FairdiceError, KeyError, TypeError, ValueError) as exc:
        problems.append(f"replay: {exc}")


def _replay(game, event):
    kind = event.get("type")
    if kind == "client_seed":
        return game.supply_client_seed(event["seat"], event["client_seed"])
    if kind == "roll":
        return game.roll(event["seat"], event["hold"])
    if kind == "score":
        return game.score(event["seat"], event["category"])
    if kind == "abandon":
        return game.abandon(event["seat"])
    return None
