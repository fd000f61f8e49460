"""Games over a store: load a game, apply one core command, store its events, answer.

This is where HTTP-independent plumbing lives: fresh game ids, seeds and
tokens from `secrets`, sealing the seed, authenticating a token to a seat,
idempotent replays, the server's timeout abandon, and rendering the state
with its signed move receipt.  Every rule of the game stays in the core:
commands go to `fairdice.game.Game`, bot turns to `fairdice.bots.play_bots`,
transcripts and receipts to `fairdice.log`.  Refusals are domain errors
(`FairdiceError`, `GameNotFoundError` and the two below); the HTTP layer maps them to statuses.

Every move is answered with the whole state document.  It is written as JSON
text by `StateText` from fragments kept with the game between its moves
(what is fixed at creation is encoded once, a seat's block again only when
that seat's card changes), so a move pays for what it changed, not for the
whole document.
"""

from __future__ import annotations

import calendar
import functools
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from fairdice import derive
from fairdice.bots import play_bots, position_of
from fairdice.errors import FairdiceError, NotNowError
from fairdice.game import DEFAULT_ABANDON_TIMEOUT, PLAYING, Game, Setup, check_abandon_timeout
from fairdice.hint import hint as advise
from fairdice.log import Chain, build_log, canonical, final_block, open_log, setup_from_header

from .engines import BOTS, TABLES, require_bot_tables, require_table
from .keys import KeyRing
from .errors import RefusalError
from .store import (BusyError, ConflictError, DuplicateGameError, GameNotFoundError, GameRecord, Remember, Remembered,
                    Store, StoreError, UnavailableError)

TOKEN_BYTES = 32
GAME_ID_BYTES = 12  # 16 URL-safe characters
EVENTS_PAGE_MAX = 1000
MAX_ATTEMPTS = 50  # recomputations of one command overtaken by others on the same game
# A kept answer written as "ref:state:<since>:<count>" (`_reference`); one written in full begins with "{".
REFERENCE_PREFIX = "ref:state:"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Answer:
    """What a command answers, as a domain value: the state document (JSON text), and whether it is the answer
    kept for an earlier request with the same Idempotency-Key.  The routes choose the HTTP status and headers."""
    body: str  # JSON text
    replayed: bool = False


# The status an idempotency record keeps beside a kept answer (the store's `status` column, kept for its schema):
# every kept answer is a command's, which the routes answer 200.  A replay is answered by the route as well.
KEPT_STATUS = 200


class ForbiddenError(RefusalError):
    """The token is not one of this game's, or its holder may not make this move (HTTP 403)."""
    kind = "forbidden"


class TooManyUnfinishedError(RefusalError):
    """The client already has as many unfinished games as a client may (HTTP 429)."""
    kind = "quota"


# json.dumps(doc, separators=(",", ":"), ensure_ascii=False), without building an encoder for every call
_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_string = json.encoder.encode_basestring  # a str as that encoder writes it


def _epoch(stamp: str) -> int:
    """A store timestamp (UTC, whole seconds: 2024-05-01T12:00:00Z) as seconds since the epoch."""
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


class Games:
    """The game service the routes call, one method per command: load the game, apply one core command, store its
    events by compare-and-append (recomputing on a conflict), answer the signed state.  It holds no rule (those
    are the core's) and no HTTP (the routes choose statuses); what it keeps between requests (setups, live games,
    rendered fragments) is a cache of the store, never a second truth, so any number of workers may serve a game."""
    def __init__(self, store: Store, keys: KeyRing, setup_cache: int = 4096, live_cache: int = 1024,
                 abandon_timeout: int = DEFAULT_ABANDON_TIMEOUT, max_unfinished: int = 0):
        """`abandon_timeout`: the seconds without a move after which the server may abandon a game, written
        into (and signed with) the header of every game created here.  `max_unfinished`: how many unfinished
        games one client may have (0: no quota)."""
        self.store = store
        self.keys = keys
        self.abandon_timeout = check_abandon_timeout(abandon_timeout)
        if isinstance(max_unfinished, bool) or not isinstance(max_unfinished, int) or max_unfinished < 0:
            raise ValueError(f"max_unfinished must be a whole number, 0 for no quota, not {max_unfinished!r}")
        self.max_unfinished = max_unfinished
        self._setups: OrderedDict[str, Setup] = OrderedDict()
        self._setup_cache = setup_cache
        # h_n of SPEC §5.6 over stored histories, by game id: events are append-only, so a chain over a stored
        # history is a prefix of every later one, and a game restored again hashes only its new events.
        self._chains: OrderedDict[str, Chain] = OrderedDict()
        self._chains_lock = threading.Lock()
        # Games this process has just stored, by id, with their state writer: a command takes its game out and
        # puts it back only once its events are committed.  A copy that another worker has overtaken cannot do
        # harm: its append expects the old event count and gets ConflictError, so the command is computed again on a
        # fresh load.
        self._live: OrderedDict[str, _Live] = OrderedDict()
        self._live_cache = live_cache

    # --- creating -----------------------------------------------------------------

    def create(self, rules, seats, first=0, upper_first=False, client: str = "") -> dict:
        """A new game; TooManyUnfinishedError if `client` (who asks, as the rate limits name it) already has
        `max_unfinished` unfinished games.  The quota is checked before the game is stored, not in the same
        transaction: clients racing their own creations may end one or two games over it."""
        for _ in range(3):
            game_id = secrets.token_urlsafe(GAME_ID_BYTES)
            setup = Setup.build(game_id, rules, seats, first, upper_first,  # refuses bad rules, seats, first
                                abandon_timeout=self.abandon_timeout)
            require_bot_tables(setup)
            self._check_quota(client)
            seed = secrets.token_bytes(derive.SEED_BYTES)
            signer = self.keys.signer
            opened = open_log(Game(setup, seed), signer)
            game = Game(setup, seed, opened["header"])  # with the chain its players' signatures cover
            humans = setup.human_seats
            tokens = [(seat, secrets.token_urlsafe(TOKEN_BYTES)) for seat in (humans or [None])]
            record = GameRecord(game_id=game_id, opened=opened, key_id=signer.key_id,
                                tokens=[{"seat": seat, "sha256": token_hash(tok)} for seat, tok in tokens],
                                seed_sealed=self.keys.seed_box.seal(game_id, seed), seed_revealed=None,
                                status=game.status, client=client)
            try:
                self.store.create_game(record)
            except DuplicateGameError:
                continue
            self._setups_put(game_id, setup)
            self._keep(_Live(record, game, StateText(record, setup)))
            header = opened["header"]
            return {
                "game_id": game_id,
                "version": setup.version,
                "status": game.status,
                "commitment": header["commitment"],
                "commitment_signature": opened["commitment_signature"],
                "key_id": header["key_id"],
                "public_key": header["public_key"],
                "header": header,
                "tokens": [{"seat": seat, "name": setup.seats[seat].name if seat is not None else None,
                            "token": tok} for seat, tok in tokens],
                "awaiting_client_seeds": game.missing_client_seeds(),
                "commit_reveal": setup.commits_client_seeds,
            }
        raise StoreError("could not find an unused game id")

    def _check_quota(self, client: str) -> None:
        """TooManyUnfinishedError if `client` has as many unfinished games as it may: `max_unfinished`, or the quota an
        operator set for it (`fairdice admin quota`; 0: none); with no quota at all (0) the store is not asked.
        The refusal's retry_after (Retry-After) is when, at the soonest, the server's timeout abandons the
        client's idlest game, so that a client that finishes nothing learns when a place frees by itself."""
        if not self.max_unfinished:
            return
        standing = self.store.client_games(client)
        limit = self.max_unfinished if standing.max_unfinished is None else standing.max_unfinished
        if not limit or standing.unfinished < limit:
            return
        retry_after = max(1, _epoch(standing.idle_since) + self.abandon_timeout - int(time.time()))
        raise TooManyUnfinishedError(
            "too_many_unfinished_games",
            f"this client has {standing.unfinished} unfinished games, the most it may have; finish or abandon one "
            f"first (a game without a move for {self.abandon_timeout} s is abandoned by the server: the idlest "
            f"of these in {retry_after} s)", max_unfinished=limit, retry_after=retry_after)

    # --- reading ------------------------------------------------------------------

    def state(self, game_id: str, since: int = 0, limit: int = EVENTS_PAGE_MAX) -> str:
        snap = self.store.snapshot(game_id)
        if snap is None:
            raise GameNotFoundError(game_id)
        game = self._restore(snap.record, snap.events)
        return StateText(snap.record, game.setup).text(game, self._receipt(snap.record, game), since, limit)

    def log(self, game_id: str) -> str:
        stored = self.store.final_log(game_id)  # signed and stored when the game ended
        if stored:
            return stored
        snap = self.store.snapshot(game_id)
        if snap is None:
            raise GameNotFoundError(game_id)
        game = self._restore(snap.record, snap.events)
        return _json(build_log(snap.record.opened, game, self.keys.signer_for(snap.record.key_id)))

    def hint(self, game_id: str) -> str:
        """Advice for the human seat to move (`fairdice.hint`): every alternative valued, best first.

        No token: the position is public (GET /v1/games/{id} shows it), and anyone can run the same engine
        on it.  409 unless the game is playing with a human seat to move."""
        snap = self.store.snapshot(game_id)
        if snap is None:
            raise GameNotFoundError(game_id)
        game = self._restore(snap.record, snap.events)
        if game.status != PLAYING:
            raise NotNowError("not_playing", f"the game is {game.status}; hints are given only during play")
        seat = game.current_seat
        if game.setup.seats[seat].is_bot:
            raise NotNowError("bot_to_move", f"seat {seat} is a bot; hints are for human seats", current_seat=seat)
        if not game.setup.upper_first:  # the house rule is advised by the ev engine, without a table
            require_table(game.rules.id)
        try:
            doc = advise(position_of(game), TABLES)
        except FairdiceError as exc:  # the engine failed (say a table that does not match): not the client's doing
            raise RuntimeError(f"hint for game {game_id}: {exc.code}: {exc.message}") from exc
        context = {"game_id": game_id, "seat": seat, "turn": game.turn, "dice": list(game.dice),
                   "event_count": len(game.events)}
        return _json({**context, **doc})

    # --- commands -----------------------------------------------------------------

    # Each move takes `signed`: the player's signature of a version 3 game (SPEC §5.7), as a dict of
    # player_signature and event_count (and player_key with a seat's first command), or {} for none.

    def commit_client_seed(self, game_id, token, commitment, idempotency_key=None, signed=None) -> Answer:
        """A seat's commitment to its client seed (games of two or more humans)."""
        signed = signed or {}
        return self._command(game_id, token, "client_seed_commit", {"commitment": commitment, **signed},
                             idempotency_key, lambda game, seat: game.commit_client_seed(_player(seat), commitment,
                                                                                         **signed))

    def client_seed(self, game_id, token, client_seed, salt=None, idempotency_key=None, signed=None) -> Answer:
        """A seat's client seed; with its salt, the reveal of a commitment."""
        signed = signed or {}
        payload = {"client_seed": client_seed, **({"salt": salt} if salt is not None else {}), **signed}
        return self._command(game_id, token, "client_seed", payload, idempotency_key,
                             lambda game, seat: game.supply_client_seed(seat, client_seed, salt, **signed))

    def roll(self, game_id, token, hold, idempotency_key=None, signed=None) -> Answer:
        signed = signed or {}
        return self._command(game_id, token, "roll", {"hold": hold, **signed}, idempotency_key,
                             lambda game, seat: game.roll(_player(seat), hold, **signed))

    def score(self, game_id, token, category, idempotency_key=None, signed=None) -> Answer:
        signed = signed or {}
        return self._command(game_id, token, "score", {"category": category, **signed}, idempotency_key,
                             lambda game, seat: game.score(_player(seat), category, **signed))

    def abandon(self, game_id, token, idempotency_key=None, signed=None) -> Answer:
        """The token's seat gives up (reason "player"); the operator token of a game without humans too."""
        signed = signed or {}
        return self._command(game_id, token, "abandon", dict(signed), idempotency_key,
                             lambda game, seat: game.abandon(seat, "player", **signed))

    def expire(self, game_id: str, now: float | None = None) -> Answer:
        """The server's own abandon (seat null, reason "timeout"), refused (409 `not_expired`) unless the game
        has had no move for its header's `abandon_timeout` seconds by the store's clock.  `now`: seconds since
        the epoch (default: this machine's clock).  The store keeps whole seconds, so the wait is counted from
        the end of the second of the last move: never shorter than promised."""
        now = time.time() if now is None else now
        self._live.pop(game_id, None)  # the store's clock is the judge: read it afresh
        for _ in range(MAX_ATTEMPTS):
            live = self._load(game_id)
            record, game = live.record, live.game
            if game.over:
                raise NotNowError("game_over", f"the game is already {game.status}")
            timeout = game.setup.abandon_timeout or self.abandon_timeout  # version 1 games: this server's
            idle = now - (_epoch(record.updated_at) + 1)
            if idle < timeout:
                raise NotNowError("not_expired", f"the game has waited {max(0, int(idle))} s for a move; the server "
                                                 f"may abandon it after {timeout} s", abandon_timeout=timeout)
            before = len(game.events)
            game.abandon(None, "timeout")
            try:
                return self._store_move(live, before)
            except ConflictError:
                continue  # someone moved meanwhile: judge again on the new history
        raise BusyError(f"game {game_id} changed {MAX_ATTEMPTS} times while it was being expired")

    def _command(self, game_id, token, action, payload, idempotency_key, apply) -> Answer:
        """Compute the command on the game as stored, then append its events only if no other
        event was stored meanwhile (else compute again on the new history)."""
        presented = token_hash(token)
        fingerprint = "" if idempotency_key is None else _fingerprint(action, payload)
        for _ in range(MAX_ATTEMPTS):
            live, cached = self._take(game_id)
            record, game = live.record, live.game
            try:
                seat = authenticate(record, presented)
                require_bot_tables(game.setup)
            except BaseException:
                self._keep(live)
                raise
            if idempotency_key is not None:
                seen = self.store.recall(game_id, seat, idempotency_key)
                if seen is not None:
                    try:
                        return self._replay(record, live.game.events, seen, fingerprint)
                    finally:
                        self._keep(live)
            before = len(game.events)
            try:
                apply(game, seat)
            except FairdiceError:  # refused; the core changed nothing
                if cached and self.store.event_count(game_id) != before:
                    continue  # refused on an outdated copy: judge it again on the stored game
                self._keep(live)
                raise
            try:
                return self._store_move(live, before, seat, idempotency_key, fingerprint)
            except ConflictError:
                continue  # another request got there first; this copy is dropped
        raise BusyError(f"game {game_id} changed {MAX_ATTEMPTS} times while this command was computed")

    def _store_move(self, live: _Live, before: int, seat=None, idempotency_key=None, fingerprint: str = "") -> Answer:
        """After a command applied to the game (events from `before` on): the bots move, the answer is rendered
        with its receipt, and the new events are appended if the stored game still has `before` events
        (else ConflictError), with the answer kept under the seat's Idempotency-Key when there is one."""
        record, game = live.record, live.game
        game_id = record.game_id
        play_bots(game, BOTS)  # bots whose turn it is move now (a no-op while a human is to move)
        reveal = None
        if game.over:
            signer = self.keys.signer_for(record.key_id)
            reveal = (game.revealed_seed().hex(), _json(build_log(record.opened, game, signer)))
        new_events = game.events[before:]
        body = live.view.text(game, self._sign(record, game.chain), since=before)
        kept = (Remember(seat, idempotency_key, fingerprint, KEPT_STATUS, _reference(before, len(game.events)))
                if idempotency_key is not None else None)
        seen = self.store.append(game_id, before, new_events, game.status, reveal, kept)
        if seen is not None:  # a twin request with the same key got there first: its answer, from the store
            snap = self.store.snapshot(game_id)
            return self._replay(snap.record, snap.events, seen, fingerprint)
        if not game.over:
            self._keep(live)
        return Answer(body)

    def _take(self, game_id: str) -> tuple[_Live, bool]:
        """The game as this process last stored it (removed from the cache while in use), else as loaded;
        and whether it came from the cache."""
        live = self._live.pop(game_id, None)
        if live is not None:
            return live, True
        return self._load(game_id), False

    def _load(self, game_id: str) -> _Live:
        snap = self.store.snapshot(game_id)
        if snap is None:
            raise GameNotFoundError(game_id)
        game = self._restore(snap.record, snap.events)
        return _Live(snap.record, game, StateText(snap.record, game.setup))

    def _keep(self, live: _Live) -> None:
        self._live[live.record.game_id] = live
        if len(self._live) > self._live_cache:
            self._live.popitem(last=False)

    # --- move receipts (SPEC §5.6) ---------------------------------------------------------

    def _sign(self, record: GameRecord, chain: Chain) -> dict:
        return self.keys.signer_for(record.key_id).sign_receipt(record.game_id, chain.count, chain.digest)

    def _receipt(self, record: GameRecord, game: Game) -> dict:
        """The receipt of the stored history `game` was restored from (the game keeps its chain)."""
        return self._sign(record, game.chain)

    # --- kept answers (Idempotency-Key) -------------------------------------------------

    def _replay(self, record: GameRecord, events: list[dict], seen: Remembered, fingerprint: str) -> Answer:
        """The answer kept under an Idempotency-Key, if it was kept for this same request."""
        if not hmac.compare_digest(seen.fingerprint, fingerprint):
            raise FairdiceError("idempotency_key_reused", "this Idempotency-Key was used for a different request "
                                                          "on this game")
        body = seen.body
        if body.startswith(REFERENCE_PREFIX):
            body = self._rebuild(record, events, *_parse_reference(record.game_id, body))
        return Answer(body, replayed=True)

    def _rebuild(self, record: GameRecord, events: list[dict], since: int, count: int) -> str:
        """The state document answered after the first `count` events of the history, with the events from
        `since`: the same text as then, since the history only grows, the document is a function of it, and
        the receipt's Ed25519 signature is deterministic (RFC 8032).  `events`: the history as this process
        holds it, which may be older than the answer (another process or thread moved since): then as stored."""
        if count > len(events):
            snap = self.store.snapshot(record.game_id)
            if snap is not None:
                record, events = snap.record, snap.events
        if not 0 <= since <= count <= len(events):
            raise UnavailableError("database_corrupt", f"game {record.game_id}: a kept answer refers to events "
                                                       f"{since}..{count} of {len(events)}")
        game = Game.restore(self._setup(record), self._seed(record), events[:count], record.opened["header"])
        return StateText(record, game.setup).text(game, self._sign(record, game.chain), since=since)

    # --- internals ----------------------------------------------------------------

    def _setup(self, record: GameRecord) -> Setup:
        setup = self._setups.get(record.game_id)
        if setup is None:
            setup = setup_from_header(record.opened["header"], record.opened["version"])
            self._setups_put(record.game_id, setup)
        return setup

    def _setups_put(self, game_id: str, setup: Setup) -> None:
        self._setups[game_id] = setup
        if len(self._setups) > self._setup_cache:
            self._setups.popitem(last=False)

    def _seed(self, record: GameRecord) -> bytes:
        if record.seed_revealed is not None:
            return bytes.fromhex(record.seed_revealed)
        return self.keys.seed_box.open(record.game_id, record.seed_sealed)

    def _restore(self, record: GameRecord, events: list[dict]) -> Game:
        seed = self._seed(record)
        with self._chains_lock:
            known = self._chains.get(record.game_id)
        game = Game.restore(self._setup(record), seed, events, record.opened["header"], known)
        if not hmac.compare_digest(game.commitment, record.opened["header"]["commitment"]):
            raise StoreError(f"game {record.game_id}: stored seed does not match its commitment")
        with self._chains_lock:
            self._chains[record.game_id] = game.chain
            self._chains.move_to_end(record.game_id)
            if len(self._chains) > self._live_cache:
                self._chains.popitem(last=False)
        return game


@dataclass
class _Live:
    """A game this process holds between its moves: as stored, and the writer of its state document."""
    record: GameRecord
    game: Game
    view: StateText


def _fingerprint(action: str, payload: dict) -> str:
    """What an Idempotency-Key is bound to: the command and its arguments."""
    return hashlib.sha256(action.encode() + b"\n" + canonical(payload)).hexdigest()


def _reference(since: int, count: int) -> str:
    """What an Idempotency-Key keeps of a move's answer: not its text (a few KiB, most of the database) but
    where it stands in the append-only history, from which `_rebuild` writes it again byte for byte."""
    return f"{REFERENCE_PREFIX}{since}:{count}"


def _parse_reference(game_id: str, body: str) -> tuple[int, int]:
    try:
        since, count = (int(part) for part in body[len(REFERENCE_PREFIX):].split(":"))
    except ValueError:
        raise UnavailableError("database_corrupt", f"game {game_id}: a kept answer is neither a state document nor "
                                                   "a reference") from None
    return since, count


def _player(seat):
    if seat is None:
        raise ForbiddenError("not_a_player", "the operator token of a game without human seats cannot move")
    return seat


def authenticate(record: GameRecord, presented_hash: str):
    """The seat whose token hashes to `presented_hash` (None: the operator); ForbiddenError if none.
    Every stored hash is compared, in constant time."""
    found, seat = False, None
    for entry in record.tokens:
        if hmac.compare_digest(entry["sha256"], presented_hash):
            found, seat = True, entry["seat"]
    if not found:
        raise ForbiddenError("invalid_token", "this token does not belong to a seat of this game")
    return seat


class StateText:
    """The state document of one game as the API shows it, written as JSON text: the game with the move
    receipt of its whole history; no server seed until the game is over (then in `final`), and no client seed
    before every human seat has committed (none is accepted before).

    One writer serves one game for as long as this process holds it: the parts fixed at creation (ids, rules,
    commitment, seats' names) are encoded once, and a seat's block (card, totals, seed flags) again only when
    it changed; the rest is a handful of small values, the new events and the receipt.  The text is exactly
    what `json.dumps(document, separators=(",", ":"), ensure_ascii=False)` makes of the document whose fields
    are listed in api/openapi.json (GameState), in the same order (tests/unit/test_games_state_text.py)."""

    def __init__(self, record: GameRecord, setup: Setup):
        header, opened = record.opened["header"], record.opened
        self._fixed = (  # the text between the changing values, in document order
            f'{{"game_id":{_json(setup.game_id)},"version":{_json(setup.version)},"rules":{_json(setup.rules.id)},'
            f'"upper_first":{_json(setup.upper_first)},"status":',
            f',"first":{_json(setup.first)},"first_seat":',
            f',"commit_reveal":{_json(setup.commits_client_seeds)},"awaiting_commitments":',
            ',"awaiting_client_seeds":',
            f',"abandon_timeout":{_json(setup.abandon_timeout)},"seats":[',
            '],"current_seat":',
            f',"commitment":{_json(header["commitment"])},'
            f'"commitment_signature":{_json(opened["commitment_signature"])},"key_id":{_json(header["key_id"])},'
            '"event_count":',
        )
        self._seat_heads = [f'{{"seat":{i},"type":{_json(seat.type)},"name":{_json(seat.name)},'
                            f'"bot":{_json(seat.bot)},"awaiting_client_seed":'
                            for i, seat in enumerate(setup.seats)]
        self._seats: list[tuple[tuple, str] | None] = [None] * len(setup.seats)  # (what it shows, its text)
        self._kept_phase: tuple[tuple, str] | None = None

    def text(self, game: Game, receipt: dict, since: int = 0, limit: int = EVENTS_PAGE_MAX) -> str:
        """The document of `game` as it stands, with `receipt` and the events from `since` (at most `limit`)."""
        fixed = self._fixed
        missing = game.missing_client_seeds()
        commitments = game.commitments
        since = max(0, since)
        return "".join((
            self._phase(game, missing), fixed[4],
            ",".join([self._seat(game, i, missing, commitments) for i in range(len(self._seats))]),
            fixed[5], _turn(game), fixed[6], str(len(game.events)), ',"events_from":', str(since),
            ',"events":', _json(game.events[since:since + limit]), ',"receipt":', _json(receipt),
            ',"final":', _json(final_block(game)) if game.over else "null", "}",
        ))

    def _phase(self, game: Game, missing: list) -> str:
        """From the game id to the seeds awaited: changes only before the start and at the end."""
        shows = (game.status, game.first, game.missing_commitments(), missing)
        kept = self._kept_phase
        if kept is not None and kept[0] == shows:
            return kept[1]
        fixed = self._fixed
        text = "".join((fixed[0], _value(shows[0]), fixed[1], _value(shows[1]), fixed[2], _json(shows[2]),
                        fixed[3], _json(shows[3])))
        self._kept_phase = (shows, text)
        return text

    def _seat(self, game: Game, i: int, missing: list, commitments: dict) -> str:
        card = game.card(i)
        # Everything the block shows besides the fixed head: a card changes only by a score, which counts a turn.
        shows = (card.turns, card.yahtzee_bonus, i in missing, commitments.get(i), game.has_client_seed(i),
                 game.player_key(i))
        kept = self._seats[i]
        if kept is not None and kept[0] == shows:
            return kept[1]
        text = "".join((
            self._seat_heads[i], _value(shows[2]), ',"committed":', _value(i in commitments),
            ',"commitment":', _value(shows[3]), ',"revealed":', _value(shows[4]), ',"player_key":', _value(shows[5]),
            ',"card":', _json(card.boxes), ',"yahtzee_bonus":', _value(card.yahtzee_bonus),
            ',"totals":', _json(game.totals(i).as_dict()), "}",
        ))
        self._seats[i] = (shows, text)
        return text


def _turn(game: Game) -> str:
    """The seat to move, its turn, rolls and dice, and what each box would score for a human seat."""
    current = game.current_seat
    if current is None:
        return (f'null,"turn":null,"rolls_made":0,"rolls_left":{_json(game.rolls_left)},'
                f'"dice":{_json(list(game.dice))},"options":{{}}')
    # (the core's counts and dice are whole numbers; ":d" refuses None or a float rather than write it wrongly)
    options = "{}" if game.setup.seats[current].is_bot else _options(game.scoring_options())
    return (f'{current:d},"turn":{game.turn:d},"rolls_made":{game.rolls_made:d},"rolls_left":{game.rolls_left:d},'
            f'"dice":[{",".join([f"{die:d}" for die in game.dice])}],"options":{options}')


def _options(options: dict) -> str:
    return "{" + ",".join([_option(cid, opt) for cid, opt in options.items()]) + "}"


@functools.lru_cache(maxsize=4096)
def _option(cid: str, opt) -> str:
    """One box of `options` as JSON (the same few hundred options come back roll after roll)."""
    return (f'{_key(cid)}{{"points":{opt.points:d},"yahtzee_bonus":{opt.yahtzee_bonus:d},'
            f'"joker":{_value(opt.joker)}}}')


def _value(value) -> str:
    """A string, whole number, true, false or null as JSON, as `_json` writes it but without its overhead."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if kind is str:
        return _string(value)
    return _json(value)


@functools.lru_cache(maxsize=256)
def _key(name: str) -> str:
    """A member name of a JSON object, with its colon."""
    return _json(name) + ":"
