"""A Python client for the fairdice HTTP API (an edge: network through `requests`).

    from fairdice.edges.client import Client
    api = Client("http://127.0.0.1:8000")
    game = api.new_game("classic13", bot="ev", name="ann")   # the server commits to its seed
    game.join()                      # a client seed generated here with `secrets`, after the commitment
    state = game.roll()              # then game.roll([0, 2]), game.score("full_house")
    advice = game.hint()             # the best move now and every alternative, with expected final scores
    ...
    report = game.verify()           # once over: the verifier's every check, against the seat's receipt;
                                     # a false log raises VerificationError (its `check`: the failed check's id)
    game.save_receipt("receipt.json")  # the player's evidence: fairdice-verify --receipt receipt.json game.json
    game.save_receipts("moves.json")   # the server's signed receipt of every move (SPEC §5.6)

In a game of several humans (`api.seat(created, seat)` for each), `join()`
commits to a client seed with a fresh salt, waits until every human seat has
committed, then reveals it (SPEC §4.3).

Moves are sent with an Idempotency-Key and retried on connection errors and
503 answers, so a network blip never costs a roll twice.  A client seed, its
commitment and its salt are chosen once per game and only ever resent
unchanged: a server that could make a client pick a new seed by refusing one
would choose the dice.
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

from verifier.receipt import make_receipt

from ..chain import Chain
from ..log import canonical, check_move_receipt, verify_signature
from ..errors import FairdiceError, SignatureError
from ..players import PlayerKey, check_signature, command_of, move_message

DEFAULT_TIMEOUT = 15.0
SALT_BYTES = 32
COMMIT_WAIT = 600.0  # seconds join() waits for the other human seats to commit
COMMIT_POLL = 0.5  # seconds between two looks at whether they have
# The first hint on a rule set whose optimal table the server has not built yet waits for the build.
HINT_TIMEOUT = 120.0
# The answer was lost (refused connection, reset, cut-off body, timeout): a move is retried with the same
# Idempotency-Key, so the server applies it at most once and the retry gets its answer.
RETRYABLE = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)


class ClientError(Exception):
    """The base of every error this client raises on purpose (catch it to handle them all)."""


class ApiResponseError(ClientError):
    """The server refused a request: `status`, the problem document, its `code` and `allowed`."""

    def __init__(self, status: int, problem: dict):
        self.status = status
        self.problem = problem
        self.code = problem.get("code", "")
        self.allowed = problem.get("allowed")
        super().__init__(f"{status} {self.code}: {problem.get('detail', problem.get('title', ''))}")


class ProtocolError(ClientError, ValueError):
    """The server broke the protocol: a signature or receipt that does not verify, a commitment or seed
    recorded for this seat that is not the one this client sent."""


class SeedNotAcceptedError(ClientError):
    """The server kept refusing (503) or not answering this seat's client seed, commitment or salt."""


class VerificationError(ProtocolError):
    """The independent verifier (`verifier`, SPEC §7) found the log false: raised, never answered with a falsy
    result (sigstore-python's move), so that no caller can ignore it.  `check` is the id of the first failed
    check, `checks` every failed one in order; `problems` one line per failure (check id, event, field,
    expected, found); `warnings` what holds even of a log that verifies (unsigned human moves)."""

    def __init__(self, problems: Sequence[str], warnings: Sequence[str] = ()):
        self.problems = list(problems)
        self.checks = list(dict.fromkeys(problem.split(":", 1)[0] for problem in self.problems))
        self.check = self.checks[0] if self.checks else ""
        self.warnings = list(warnings)
        super().__init__("the log does not verify: " + "; ".join(self.problems))


# The names before issue 26, kept importable for apps written against them (deprecated: use the …Error names).
ApiError = ApiResponseError
SeedNotAccepted = SeedNotAcceptedError


def parse_invite(link: str) -> tuple[str, str, int, str]:
    """(server address, game id, seat, token) of an invite link, as the page makes them:
    `<page address>#game=<id>&seat=<n>&token=<token>` (the token only in the fragment, which no browser sends)."""
    from urllib.parse import parse_qs, urlsplit, urlunsplit

    parts = urlsplit(link.strip())
    fields = {k: v[0] for k, v in parse_qs(parts.fragment, keep_blank_values=True).items()}
    seat = fields.get("seat", "")
    if parts.scheme not in ("http", "https") or not parts.netloc or not fields.get("game") \
            or not fields.get("token") or not seat.isdigit():
        raise ValueError("an invite link looks like http://host:port/#game=ID&seat=N&token=TOKEN")
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")), fields["game"], int(seat), fields["token"]


def new_client_seed() -> str:
    """A fresh client seed (128 bits from `secrets`), made on this machine."""
    return secrets.token_hex(16)


class Client:
    """The HTTP API from Python, one method per endpoint, holding only the connection: a game's state and its
    evidence live in the seat's `PlayerGame` (`new_game`, `seat`), so one client serves many games and seats.
    `request` retries connection errors and 503s only when asked (moves, which carry an Idempotency-Key), so a
    retry never costs a roll twice, and turns every refusal into `ApiResponseError` with the problem document."""
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
            raise ApiResponseError(resp.status_code,
                                   problem if isinstance(problem, dict) else {"detail": str(problem)})
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

    def log_bytes(self, game_id: str) -> bytes:
        """The log exactly as served, for verification (a parse that keeps the last of two equal keys, as
        `requests` does, must not decide what is checked)."""
        resp = self.session.get(f"{self.base_url}/v1/games/{game_id}/log", timeout=self.timeout,
                                headers={"Accept": "application/json, application/problem+json"})
        if resp.status_code >= 400:
            raise ApiResponseError(resp.status_code, resp.json() if resp.content else {})
        return resp.content

    def hint(self, game_id: str) -> dict:
        """Advice for the human seat to move (no token needed): `best`, `alternatives` (each with `value`, the
        expected final score, and `loss`), `engine`, `value_kind`; see GET /v1/games/{id}/hint."""
        return self.request("GET", f"/v1/games/{game_id}/hint", retry=True,
                            timeout=max(self.timeout, HINT_TIMEOUT))

    def analysis(self, game_id: str) -> dict:
        """The coach's analysis of a game that is over (SPEC §4.7; GET /v1/games/{id}/analysis): every decision
        of every seat valued against optimal play."""
        return self.request("GET", f"/v1/games/{game_id}/analysis", retry=True,
                            timeout=max(self.timeout, HINT_TIMEOUT))

    # The moves, unsigned; a `PlayerGame` signs them (SPEC §5.7) by adding player_signature and event_count
    # (and player_key with the seat's first command) through `signed`.

    def send_client_seed(self, game_id: str, token: str, client_seed: str, idempotency_key=None,
                         salt: str | None = None, signed: dict | None = None) -> dict:
        """The seat's client seed; with `salt` (hex), the reveal of its commitment."""
        body = {"client_seed": client_seed, **({"salt": salt} if salt is not None else {}), **(signed or {})}
        return self._move(game_id, "client-seed", token, body, idempotency_key)

    def commit_client_seed(self, game_id: str, token: str, commitment: str, idempotency_key=None,
                           signed: dict | None = None) -> dict:
        return self._move(game_id, "client-seed", token, {"commitment": commitment, **(signed or {})},
                          idempotency_key)

    def roll(self, game_id: str, token: str, hold: Iterable[int] = (), idempotency_key=None,
             signed: dict | None = None) -> dict:
        return self._move(game_id, "roll", token, {"hold": list(hold), **(signed or {})}, idempotency_key)

    def score(self, game_id: str, token: str, category: str, idempotency_key=None, signed: dict | None = None) -> dict:
        return self._move(game_id, "score", token, {"category": category, **(signed or {})}, idempotency_key)

    def abandon(self, game_id: str, token: str, idempotency_key=None, signed: dict | None = None) -> dict:
        return self._move(game_id, "abandon", token, dict(signed or {}), idempotency_key)

    def new_game(self, rules: str, bot: str | None = "ev", name: str = "you", first=0,
                 upper_first: bool = False, bots: Sequence[str] = ()) -> PlayerGame:
        """A game with one human seat (yours, seat 0) against `bot` (and any further `bots`)."""
        seats = [{"type": "human", "name": name}]
        seats += [{"type": "bot", "bot": b} for b in ([bot] if bot else []) + list(bots)]
        created = self.create_game(rules, seats, first, upper_first)
        return self.seat(created, 0)

    def join_link(self, game_id: str, seat: int, token: str) -> PlayerGame:
        """The seat of an invite link (`parse_invite`): the game as this client reads it from the server (its
        signed header, from the log so far), for the player to check before joining."""
        opened, state = self.log(game_id), self.state(game_id)
        head = opened["header"]
        created = {"game_id": game_id, "version": opened["version"], "commitment": head["commitment"],
                   "commitment_signature": opened["commitment_signature"], "key_id": head["key_id"],
                   "public_key": head["public_key"], "header": head, "commit_reveal": state["commit_reveal"]}
        return PlayerGame(self, created, token, seat)

    def seat(self, created: dict, seat: int | None) -> PlayerGame:
        """The view of one seat (None: the operator) of a game created with `create_game`."""
        token = next(t["token"] for t in created["tokens"] if t["seat"] == seat)
        return PlayerGame(self, created, token, seat)

    def verify_log(self, log, trusted_public_key: str | None = None, receipt: dict | None = None,
                   move_receipts: Sequence[dict] = ()) -> Verification:
        """Check a log (its bytes, or parsed); the trusted key defaults to the one of the receipt, else the
        server's published key (GET /v1/keys) of the log's key id."""
        if trusted_public_key is None and receipt is None:
            head = log.get("header", {}) if isinstance(log, dict) else {}
            if not isinstance(log, dict):
                from verifier.strictjson import StrictJSONError, loads
                try:
                    head = loads(log if isinstance(log, bytes) else log.encode()).get("header") or {}
                except (StrictJSONError, AttributeError):
                    head = {}
            trusted_public_key = next((k["public_key"] for k in self.keys() if k["key_id"] == head.get("key_id")),
                                      None)
            if trusted_public_key is None:
                raise VerificationError(["log.key: the server does not list the log's key id"])
        return verify_log(log, trusted_public_key, receipt, move_receipts)


@dataclass
class PlayerGame:
    """One seat's view of a game: the creation answer, the seat's token, the history it was shown, and what the
    seat keeps as evidence: its receipt (SPEC §5.5) and the server's receipt of every move (§5.6).

    In a version 3 game the seat signs every command with its own key, made here (`key`; SPEC §5.7), over the
    hash chain of the history this client holds (`events`), which it extends only with events it has checked:
    its own seat's each carry this key's signature, and every move receipt signs exactly that history."""
    client: Client
    created: dict
    token: str
    seat: int | None
    state: dict | None = None
    client_seed: str | None = None  # chosen once per game, then only ever resent unchanged
    salt: str | None = None  # hex, for the commitment in a game of several humans
    receipt: dict | None = None  # kept on sending the client seed (SPEC §5.5)
    receipts: list[dict] = field(default_factory=list)  # the move receipt of every answer to a move
    key: PlayerKey | None = None  # this seat's signing key (version 3), made with its client seed
    sign: bool = True  # version 3: False plays without a key (every verdict then warns about this seat)
    events: list[dict] = field(default_factory=list)  # the history shown so far, checked
    _chain: Chain | None = field(default=None, repr=False)  # h_n over `events`, computed here
    _keys: dict[str, str] = field(default_factory=dict, repr=False)  # Idempotency-Key per seed step
    _bodies: dict[str, dict] = field(default_factory=dict, repr=False)  # the signed body of each seed step

    @property
    def game_id(self) -> str:
        return self.created["game_id"]

    @property
    def commitment(self) -> str:
        return self.created["commitment"]

    @property
    def version(self) -> int:
        """The game's log version (SPEC §5); a server that does not say is one of version 2."""
        return self.created.get("version", 2)

    @property
    def signs(self) -> bool:
        """Whether this seat signs its commands: a human seat of a version 3 game that chose to."""
        return self.sign and self.seat is not None and self.version >= 3

    @property
    def player_key(self) -> str | None:
        return self.key.public_hex if self.key is not None else None

    @property
    def chain(self) -> Chain:
        if self._chain is None:
            self._chain = Chain.start(self.created["header"])
        return self._chain

    @property
    def seed_commitment(self) -> str:
        """This seat's commitment to its client seed: hex(SHA-256(salt || [player key ||] UTF-8(client_seed)))."""
        key = bytes.fromhex(self.player_key) if self.player_key else b""
        return hashlib.sha256(bytes.fromhex(self.salt) + key + self.client_seed.encode("utf-8")).hexdigest()

    def check_commitment(self) -> None:
        """Before sending a client seed: the header is signed by a key the server lists."""
        head = self.created["header"]
        keys = {k["key_id"]: k["public_key"] for k in self.client.keys()}
        if keys.get(head["key_id"]) != head["public_key"]:
            raise ProtocolError("the game's key is not one the server publishes")
        try:
            verify_signature(head["public_key"], self.created["commitment_signature"], canonical(head),
                             "sig.commitment")
        except SignatureError:
            raise ProtocolError("the commitment signature does not verify") from None

    def join(self, client_seed: str | None = None, wait: float = COMMIT_WAIT, poll: float = COMMIT_POLL) -> dict:
        """Send this seat's client seed (fresh from `secrets` unless given), after checking the commitment.  In
        a game of several humans: commit, wait until every human seat has, then reveal.  Called again after a
        failure, it resends the same seed (and salt), never a new one."""
        self.check_commitment()
        self.choose_client_seed(client_seed)
        if not self.created.get("commit_reveal"):
            return self._seed_step("client_seed", {"client_seed": self.client_seed},
                                   {"type": "client_seed", "seat": self.seat, "client_seed": self.client_seed})
        self.commit()
        self.wait_for_commitments(wait, poll)
        return self.reveal()

    def choose_client_seed(self, client_seed: str | None = None) -> str:
        """This seat's client seed for the game (fresh from `secrets` unless given) with its salt, its key
        (version 3), and the seat's receipt: chosen once; asking for another one later is refused."""
        if self.client_seed is None:
            seed = client_seed if client_seed is not None else new_client_seed()
            if self.signs and self.key is None:
                self.key = PlayerKey.generate()
            self.receipt = make_receipt(self.created["header"], self.created["commitment_signature"], self.seat,
                                        seed, log_version=self.version, player_key=self.player_key)
            self.client_seed, self.salt = seed, secrets.token_bytes(SALT_BYTES).hex()
        elif client_seed is not None and client_seed != self.client_seed:
            raise ValueError("this seat's client seed for the game is already chosen and may only be resent as it "
                             "is: a new seed after a refusal would let the server choose the dice")
        return self.client_seed

    def commit(self) -> dict:
        """Send this seat's commitment (a game of several humans; the seed is chosen now if it was not); an
        earlier one kept by the server is fine."""
        self.choose_client_seed()
        command = {"type": "client_seed_commit", "seat": self.seat, "commitment": self.seed_commitment}
        try:
            return self._seed_step("commit", {"commitment": self.seed_commitment}, command)
        except ApiResponseError as exc:
            if exc.code != "commitment_already_set":
                raise
            self._require_own(self.refresh(), "commitment", self.seed_commitment)
            return self.state

    def wait_for_commitments(self, wait: float = COMMIT_WAIT, poll: float = COMMIT_POLL) -> dict:
        """Poll the game until every human seat has committed (then, and only then, a reveal is safe)."""
        deadline = time.monotonic() + wait
        while True:
            state = self.refresh()
            if state["status"] != "awaiting_client_seed" or not state["awaiting_commitments"]:
                break
            if time.monotonic() >= deadline:
                raise TimeoutError(f"game {self.game_id}: seats {state['awaiting_commitments']} have not committed "
                                   f"after {wait:.0f} s; join() again to go on waiting (the same seed is kept)")
            time.sleep(poll)
        self._require_own(state, "commitment", self.seed_commitment)
        return state

    def reveal(self) -> dict:
        """Send this seat's client seed and salt, once every human seat has committed."""
        command = {"type": "client_seed", "seat": self.seat, "client_seed": self.client_seed, "salt": self.salt}
        try:
            return self._seed_step("reveal", {"client_seed": self.client_seed, "salt": self.salt}, command)
        except ApiResponseError as exc:
            if exc.code != "client_seed_already_set":
                raise
            state = self.refresh()
            sent = [e for e in self.events if e["type"] == "client_seed" and e["seat"] == self.seat]
            if [e["client_seed"] for e in sent] != [self.client_seed]:
                raise ProtocolError(f"game {self.game_id}: the server holds a client seed for seat {self.seat} "
                                    "that this client did not send") from exc
            return state

    def _seed_step(self, step: str, body: dict, command: dict) -> dict:
        """One seed step (client_seed, commit, reveal), with an Idempotency-Key kept for the game, so that a
        retry, even by a later join(), is the same request; signed anew (with a new key) only when the server
        says the history it was signed over is stale, which means it was not applied."""
        what = {"client_seed": "client seed", "commit": "commitment", "reveal": "client seed and salt"}[step]
        if self.signs:
            command = {**command, "player_key": self.player_key}
            body = {**body, "player_key": self.player_key}

        def send(signed: dict, fresh: bool) -> dict:
            if fresh or step not in self._bodies:
                self._keys[step], self._bodies[step] = uuid.uuid4().hex, {**body, **signed}
            return self.client._move(self.game_id, "client-seed", self.token, self._bodies[step], self._keys[step])

        try:
            return self._signed_move(lambda: command, send)
        except (ApiResponseError, *RETRYABLE) as exc:
            if isinstance(exc, ApiResponseError) and exc.status != 503:
                raise
            raise SeedNotAcceptedError(
                f"game {self.game_id}: the server refused or did not answer this seat's {what} "
                f"{1 + self.client.retries} times ({exc}). It was sent unchanged each time and must stay so: "
                "join() again resends the same one. Never start over with a new client seed in this game: a "
                "server that refuses seeds until one suits it chooses the dice.") from exc

    def _signed_move(self, command, send, attempts: int = 5) -> dict:
        """Send `command()` signed over the history this client holds (SPEC §5.7); `send(signed, fresh)` makes
        the request.  A stale history (another seat moved first) is fetched, checked, and signed over again:
        the same move (a seed step's very same command; a roll's or score's turn and roll numbers as they now
        stand)."""
        fresh = False
        for _ in range(attempts):
            try:
                return self._took(send(self._signature(command()), fresh))
            except ApiResponseError as exc:
                if exc.code != "stale_history":
                    raise
                self.refresh()
                fresh = True
        raise ProtocolError(f"game {self.game_id}: the history moved on {attempts} times while this seat signed")

    def _signature(self, command: dict) -> dict:
        """player_signature and event_count of `command` over the history held here ({} when not signing)."""
        if not self.signs or self.key is None:  # (no key before the seed is chosen: nothing to sign yet)
            return {}
        n = len(self.events)
        return {"player_signature": self.key.sign(self.game_id, n, self.chain.digest, command), "event_count": n}

    def _require_own(self, state: dict, field_name: str, mine: str) -> None:
        held = state["seats"][self.seat][field_name]
        if held != mine:
            raise ProtocolError(f"game {self.game_id}: the server shows {field_name} {held!r} for seat {self.seat}, "
                                f"not this client's {mine!r}")

    def _took(self, state: dict) -> dict:
        """Take an answer: its events extend the history held here (each checked), and its move receipt must
        be signed by the game's key over exactly that history; only then is the receipt kept."""
        self._absorb(state)
        try:
            check_move_receipt(state.get("receipt"), self.created["header"]["public_key"], self.game_id,
                               state["event_count"], expected_chain=self.chain.digest)
        except ValueError as exc:
            raise ProtocolError(f"game {self.game_id}: {exc}") from None
        if not self.receipts or self.receipts[-1]["events"] != state["event_count"]:
            self.receipts.append(state["receipt"])  # (one per history: a state read again adds nothing)
        self.state = state
        return state

    def _absorb(self, state: dict) -> None:
        """Extend `events` with what `state` shows beyond them (fetching any gap), refusing an answer that
        rewrites an event already shown or shows one of this seat's that it did not sign."""
        start, shown = state["events_from"], state["events"]
        if start > len(self.events):
            self._absorb(self.client.state(self.game_id, since=len(self.events)))
        for index, event in enumerate(shown, start):
            if index < len(self.events):
                if event != self.events[index]:
                    raise ProtocolError(f"game {self.game_id}: the server now shows event {index} otherwise than "
                                        "it did before")
                continue
            self._check_own(index, event)
            self.events.append(event)
            self._chain = self.chain.extend([event])
        if len(self.events) != state["event_count"]:
            raise ProtocolError(f"game {self.game_id}: the answer counts {state['event_count']} events but shows "
                                f"{len(self.events)}")

    def _check_own(self, index: int, event: dict) -> None:
        """An event in this seat's name must be one this client signed, at this place in the history."""
        if self.key is None or event.get("seat") != self.seat or self.seat is None or event["type"] == "start":
            return
        if event.get("player_key", self.player_key) != self.player_key:
            raise ProtocolError(f"game {self.game_id}: event {index} gives seat {self.seat} a key that is not this "
                                "client's")
        try:
            check_signature(self.player_key, event.get("player_signature"),
                            move_message(self.game_id, index, self.chain.digest, command_of(event)), self.seat)
        except FairdiceError:
            raise ProtocolError(f"game {self.game_id}: event {index} is a {event['type']} in seat {self.seat}'s "
                                "name that this client did not sign") from None

    def refresh(self) -> dict:
        """The game as it stands, its new events checked into the history held here."""
        state = self.client.state(self.game_id, since=len(self.events))
        self._took(state)
        return state

    def roll(self, hold: Iterable[int] = ()) -> dict:
        hold = list(hold)

        def command() -> dict:
            state = self._current()
            return {"type": "roll", "seat": self.seat, "turn": state["turn"], "roll": state["rolls_made"] + 1,
                    "hold": sorted(hold)}
        return self._signed_move(command, lambda signed, fresh: self.client.roll(self.game_id, self.token, hold,
                                                                                 signed=signed))

    def score(self, category: str) -> dict:
        def command() -> dict:
            return {"type": "score", "seat": self.seat, "turn": self._current()["turn"], "category": category}
        return self._signed_move(command, lambda signed, fresh: self.client.score(self.game_id, self.token,
                                                                                  category, signed=signed))

    def abandon(self) -> dict:
        command = {"type": "abandon", "seat": self.seat, "reason": "player"}
        return self._signed_move(lambda: command, lambda signed, fresh: self.client.abandon(
            self.game_id, self.token, signed=signed))

    def _current(self) -> dict:
        """The state the next command is made in (fetched when this client holds none yet)."""
        return self.state if self.state is not None and self.state["event_count"] == len(self.events) \
            else self.refresh()

    def hint(self) -> dict:
        """Advice for the seat to move now (409 `not_playing` / `bot_to_move` when there is none)."""
        return self.client.hint(self.game_id)

    def log(self) -> dict:
        return self.client.log(self.game_id)

    def verify(self) -> Verification:
        """Fetch the log and check it against the server's published key, this seat's receipt (the game
        joined, the commitment seen before the client seed was sent, and that client seed) and the server's
        receipt of every move this seat made (the history it answered, SPEC §5.6)."""
        return self.client.verify_log(self.client.log_bytes(self.game_id), receipt=self.receipt,
                                      move_receipts=self.receipts)

    def save_receipt(self, path: str) -> None:
        """Write this seat's receipt (SPEC §5.5) to `path`: the player's own evidence for after the game."""
        _write_json(path, self.receipt)

    def save_receipts(self, path: str) -> None:
        """Write the server's receipt of every move so far (SPEC §5.6) to `path`, as a JSON array: with them
        `fairdice-verify --receipts` holds the final log to each move the server answered."""
        _write_json(path, self.receipts)


def _write_json(path: str, doc) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1, ensure_ascii=False)
        fh.write("\n")


@dataclass
class Verification:
    """A log the independent verifier (`verifier`, SPEC §7) found true: given only then (a false one raises
    VerificationError), with `warnings` that hold even so (the human seats whose moves no player signed: the
    operator could have written them, SPEC §5.7)."""
    checked_by: list[str] = field(default_factory=lambda: ["verifier"])
    warnings: list[str] = field(default_factory=list)


def verify_log(log, trusted_public_key: str | None = None, receipt: dict | None = None,
               move_receipts: Sequence[dict] = ()) -> Verification:
    """Check a transcript with the verifier: every check of SPEC §7, bots replayed, signatures required, the
    log held to the player's `receipt` and the server's `move_receipts` when given. `log` is the log's bytes
    (parsed strictly, as a file is) or an already parsed document.  A log that fails a check (or cannot be
    checked: not JSON, an optimal game whose table is not on this machine) raises VerificationError; a receipt
    or move receipts the verifier cannot use raise its ReceiptError or MoveReceiptError (as the command line
    exits 2 for them) before anything is checked."""
    from verifier import verify_document
    from verifier.botcheck import PublishedBots
    from verifier.chain import well_formed_receipts
    from verifier.optimal import TableError
    from verifier.receipt import check_receipt
    from verifier.results import unsigned_warning
    from verifier.strictjson import StrictJSONError, loads

    if isinstance(log, (bytes, str)):
        try:
            log = loads(log.encode() if isinstance(log, str) else log)
        except StrictJSONError as e:
            raise VerificationError([f"log.format: {e}"]) from None
    if not isinstance(log, dict):
        raise VerificationError(["log.format: the log is not a JSON object"])
    receipts = [check_receipt(receipt)] if receipt is not None else []
    move_receipts = well_formed_receipts(move_receipts if isinstance(move_receipts, list) else list(move_receipts))
    trusted = [bytes.fromhex(trusted_public_key)] if trusted_public_key else None
    try:
        result = verify_document(log, "<api>", trusted_keys=trusted, bots=PublishedBots(), receipts=receipts,
                                 move_receipts=move_receipts)
    except TableError as e:  # an optimal game, its table not on this machine: not verified, and why
        raise VerificationError([f"bot.decision: not checked: {e.where}: {e.message}"]) from None
    problems = [f"{f.check}: event {'-' if f.event is None else f.event} {f.field}: expected {f.expected!r}, "
                f"found {f.found!r}" for f in result.failures]
    problems += [f"{check}: {n} more failures" for check, n in result.unlisted.items()]
    warning = unsigned_warning(result)
    warnings = [warning] if warning else []
    if not result.ok:
        raise VerificationError(problems, warnings)
    return Verification(warnings=warnings)


from .dice_session import Session  # noqa: E402,F401  (fair dice for any app, SPEC §10: its own module)
