"""Games over a store: load a game, apply one core command, store its events, answer.

This is where HTTP-independent plumbing lives: fresh game ids, seeds and
tokens from `secrets`, sealing the seed, authenticating a token to a seat,
idempotent replays, the server's timeout abandon, and rendering the state
with its signed move receipt.  Every rule of the game stays in the core:
commands go to `fairdice.game.Game`, bot turns to `fairdice.bots.play_bots`,
transcripts and receipts to `fairdice.log`.  Refusals are domain errors
(`FairdiceError` and the two below); the HTTP layer maps them to statuses.
"""

from __future__ import annotations

import calendar
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
from fairdice.errors import FairdiceError, NotNow
from fairdice.game import DEFAULT_ABANDON_TIMEOUT, PLAYING, Game, Setup, check_abandon_timeout
from fairdice.hint import hint as advise
from fairdice.log import Chain, build_log, canonical, final_block, open_log, setup_from_header

from .engines import require_bot_tables, require_table
from .keys import KeyRing
from .problems import ApiError
from .store import Busy, Conflict, DuplicateGame, GameNotFound, GameRecord, Remember, Store, StoreError

TOKEN_BYTES = 32
GAME_ID_BYTES = 12  # 16 URL-safe characters
EVENTS_PAGE_MAX = 1000
MAX_ATTEMPTS = 50  # recomputations of one command overtaken by others on the same game


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Reply:
    status: int
    body: str  # JSON text
    replayed: bool = False


class UnknownGame(FairdiceError):
    """No game has this id (HTTP 404)."""
    kind = "not_found"


class Forbidden(FairdiceError):
    """The token is not one of this game's, or its holder may not make this move (HTTP 403)."""
    kind = "forbidden"


def _json(doc) -> str:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def not_found(game_id: str) -> UnknownGame:
    return UnknownGame("game_not_found", f"no game with id {game_id!r}")


def _epoch(stamp: str) -> int:
    """A store timestamp (UTC, whole seconds: 2024-05-01T12:00:00Z) as seconds since the epoch."""
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


class Games:
    def __init__(self, store: Store, keys: KeyRing, setup_cache: int = 4096, live_cache: int = 1024,
                 abandon_timeout: int = DEFAULT_ABANDON_TIMEOUT):
        """`abandon_timeout`: the seconds without a move after which the server may abandon a game, written
        into (and signed with) the header of every game created here."""
        self.store = store
        self.keys = keys
        self.abandon_timeout = check_abandon_timeout(abandon_timeout)
        self._setups: OrderedDict[str, Setup] = OrderedDict()
        self._setup_cache = setup_cache
        # h_n of SPEC §5.6 for stored histories, by game id: events are append-only, so a chain over a stored
        # history stays a prefix of every later one and is extended rather than recomputed.
        self._chains: OrderedDict[str, Chain] = OrderedDict()
        self._chains_lock = threading.Lock()
        # Games this process has just stored, by id: a command takes its game out and puts it back only once
        # its events are committed.  A copy that another worker has overtaken cannot do harm: its append
        # expects the old event count and gets Conflict, so the command is computed again on a fresh load.
        self._live: OrderedDict[str, tuple[GameRecord, Game]] = OrderedDict()
        self._live_cache = live_cache

    # --- creating -----------------------------------------------------------------

    def create(self, rules, seats, first=0, upper_first=False) -> dict:
        for _ in range(3):
            game_id = secrets.token_urlsafe(GAME_ID_BYTES)
            setup = Setup.build(game_id, rules, seats, first, upper_first,  # refuses bad rules, seats, first
                                abandon_timeout=self.abandon_timeout)
            require_bot_tables(setup)
            seed = secrets.token_bytes(derive.SEED_BYTES)
            game = Game(setup, seed)
            signer = self.keys.signer
            opened = open_log(game, signer)
            humans = setup.human_seats
            tokens = [(seat, secrets.token_urlsafe(TOKEN_BYTES)) for seat in (humans or [None])]
            record = GameRecord(game_id=game_id, opened=opened, key_id=signer.key_id,
                                tokens=[{"seat": seat, "sha256": token_hash(tok)} for seat, tok in tokens],
                                seed_sealed=self.keys.seed_box.seal(game_id, seed), seed_revealed=None,
                                status=game.status)
            try:
                self.store.create_game(record)
            except DuplicateGame:
                continue
            header = opened["header"]
            return {
                "game_id": game_id,
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

    # --- reading ------------------------------------------------------------------

    def state(self, game_id: str, since: int = 0, limit: int = EVENTS_PAGE_MAX) -> str:
        snap = self.store.snapshot(game_id)
        if snap is None:
            raise not_found(game_id)
        game = self._restore(snap.record, snap.events)
        return _json(render_state(game, snap.record, self._receipt(snap.record, game), since, limit))

    def log(self, game_id: str) -> str:
        stored = self.store.final_log(game_id)  # signed and stored when the game ended
        if stored:
            return stored
        snap = self.store.snapshot(game_id)
        if snap is None:
            raise not_found(game_id)
        game = self._restore(snap.record, snap.events)
        return _json(build_log(snap.record.opened, game, self.keys.signer_for(snap.record.key_id)))

    def hint(self, game_id: str) -> str:
        """Advice for the human seat to move (`fairdice.hint`): every alternative valued, best first.

        No token: the position is public (GET /v1/games/{id} shows it), and anyone can run the same engine
        on it.  409 unless the game is playing with a human seat to move."""
        snap = self.store.snapshot(game_id)
        if snap is None:
            raise not_found(game_id)
        game = self._restore(snap.record, snap.events)
        if game.status != PLAYING:
            raise NotNow("not_playing", f"the game is {game.status}; hints are given only during play")
        seat = game.current_seat
        if game.setup.seats[seat].is_bot:
            raise NotNow("bot_to_move", f"seat {seat} is a bot; hints are for human seats", current_seat=seat)
        if not game.setup.upper_first:  # the house rule is advised by the ev engine, without a table
            require_table(game.rules.id)
        try:
            doc = advise(position_of(game))
        except FairdiceError as exc:  # the engine failed (say a table that does not match): not the client's doing
            raise RuntimeError(f"hint for game {game_id}: {exc.code}: {exc.message}") from exc
        context = {"game_id": game_id, "seat": seat, "turn": game.turn, "dice": list(game.dice),
                   "event_count": len(game.events)}
        return _json({**context, **doc})

    # --- commands -----------------------------------------------------------------

    def commit_client_seed(self, game_id, token, commitment, idempotency_key=None) -> Reply:
        """A seat's commitment to its client seed (games of two or more humans)."""
        return self._command(game_id, token, "client_seed_commit", {"commitment": commitment}, idempotency_key,
                             lambda game, seat: game.commit_client_seed(_player(seat), commitment))

    def client_seed(self, game_id, token, client_seed, salt=None, idempotency_key=None) -> Reply:
        """A seat's client seed; with its salt, the reveal of a commitment."""
        payload = {"client_seed": client_seed, **({"salt": salt} if salt is not None else {})}
        return self._command(game_id, token, "client_seed", payload, idempotency_key,
                             lambda game, seat: game.supply_client_seed(seat, client_seed, salt))

    def roll(self, game_id, token, hold, idempotency_key=None) -> Reply:
        return self._command(game_id, token, "roll", {"hold": hold}, idempotency_key,
                             lambda game, seat: game.roll(_player(seat), hold))

    def score(self, game_id, token, category, idempotency_key=None) -> Reply:
        return self._command(game_id, token, "score", {"category": category}, idempotency_key,
                             lambda game, seat: game.score(_player(seat), category))

    def abandon(self, game_id, token, idempotency_key=None) -> Reply:
        """The token's seat gives up (reason "player"); the operator token of a game without humans too."""
        return self._command(game_id, token, "abandon", {}, idempotency_key,
                             lambda game, seat: game.abandon(seat, "player"))

    def expire(self, game_id: str, now: float | None = None) -> Reply:
        """The server's own abandon (seat null, reason "timeout"), refused (409 `not_expired`) unless the game
        has had no move for its header's `abandon_timeout` seconds by the store's clock.  `now`: seconds since
        the epoch (default: this machine's clock).  The store keeps whole seconds, so the wait is counted from
        the end of the second of the last move: never shorter than promised."""
        now = time.time() if now is None else now
        self._live.pop(game_id, None)  # the store's clock is the judge: read it afresh
        for _ in range(MAX_ATTEMPTS):
            snap = self.store.snapshot(game_id)
            if snap is None:
                raise not_found(game_id)
            record = snap.record
            game = self._restore(record, snap.events)
            if game.over:
                raise NotNow("game_over", f"the game is already {game.status}")
            timeout = game.setup.abandon_timeout or self.abandon_timeout  # version 1 games: this server's
            idle = now - (_epoch(record.updated_at) + 1)
            if idle < timeout:
                raise NotNow("not_expired", f"the game has waited {max(0, int(idle))} s for a move; the server may "
                                            f"abandon it after {timeout} s", abandon_timeout=timeout)
            before = len(game.events)
            game.abandon(None, "timeout")
            try:
                return self._store_move(record, game, before)
            except Conflict:
                continue  # someone moved meanwhile: judge again on the new history
        raise Busy(f"game {game_id} changed {MAX_ATTEMPTS} times while it was being expired")

    def _command(self, game_id, token, action, payload, idempotency_key, apply) -> Reply:
        """Compute the command on the game as stored, then append its events only if no other
        event was stored meanwhile (else compute again on the new history)."""
        presented = token_hash(token)
        fingerprint = hashlib.sha256(action.encode() + b"\n" + canonical(payload)).hexdigest()
        for _ in range(MAX_ATTEMPTS):
            record, game, cached = self._take(game_id)
            try:
                seat = authenticate(record, presented)
                require_bot_tables(game.setup)
            except (FairdiceError, ApiError):
                self._keep(record, game)
                raise
            if idempotency_key is not None:
                seen = self.store.recall(game_id, seat, idempotency_key)
                if seen is not None:
                    self._keep(record, game)
                    return _replay(seen, fingerprint)
            before = len(game.events)
            try:
                apply(game, seat)
            except FairdiceError:  # refused; the core changed nothing
                if cached and self.store.event_count(game_id) != before:
                    continue  # refused on an outdated copy: judge it again on the stored game
                self._keep(record, game)
                raise
            try:
                return self._store_move(record, game, before, seat, idempotency_key, fingerprint)
            except Conflict:
                continue  # another request got there first; this copy is dropped
        raise Busy(f"game {game_id} changed {MAX_ATTEMPTS} times while this command was computed")

    def _store_move(self, record: GameRecord, game: Game, before: int, seat=None, idempotency_key=None,
                    fingerprint: str = "") -> Reply:
        """After a command applied to `game` (events from `before` on): the bots move, the answer is rendered
        with its receipt, and the new events are appended if the stored game still has `before` events
        (else Conflict), with the answer kept under the seat's Idempotency-Key when there is one."""
        game_id = record.game_id
        play_bots(game)  # bots whose turn it is move now (a no-op while a human is to move)
        reveal = None
        if game.over:
            signer = self.keys.signer_for(record.key_id)
            reveal = (game.revealed_seed().hex(), _json(build_log(record.opened, game, signer)))
        chain = self._chain(record, game.events[:before]).extend(game.events[before:])
        body = _json(render_state(game, record, self._sign(record, chain), since=before))
        kept = Remember(seat, idempotency_key, fingerprint, 200, body) if idempotency_key is not None else None
        try:
            seen = self.store.append(game_id, before, game.events[before:], game.status, reveal, kept)
        except GameNotFound:
            raise not_found(game_id) from None
        if seen is not None:  # a twin request with the same key got there first
            return _replay(seen, fingerprint)
        self._remember_chain(game_id, chain)
        if not game.over:
            self._keep(record, game)
        return Reply(200, body)

    def _take(self, game_id: str) -> tuple[GameRecord, Game, bool]:
        """The game as this process last stored it (removed from the cache while in use), else as loaded."""
        entry = self._live.pop(game_id, None)
        if entry is not None:
            return entry[0], entry[1], True
        snap = self.store.snapshot(game_id)
        if snap is None:
            raise not_found(game_id)
        return snap.record, self._restore(snap.record, snap.events), False

    def _keep(self, record: GameRecord, game: Game) -> None:
        self._live[record.game_id] = (record, game)
        if len(self._live) > self._live_cache:
            self._live.popitem(last=False)

    # --- move receipts (SPEC §5.6) ---------------------------------------------------------

    def _chain(self, record: GameRecord, stored_events: list[dict]) -> Chain:
        """h_n over the header and `stored_events`, which must be the game's history as stored."""
        with self._chains_lock:
            known = self._chains.get(record.game_id)
        if known is None or known.count > len(stored_events):
            known = Chain.start(record.opened["header"])
        return known.extend(stored_events[known.count:])

    def _remember_chain(self, game_id: str, chain: Chain) -> None:
        with self._chains_lock:
            known = self._chains.get(game_id)
            if known is not None and known.count > chain.count:
                return  # another request has stored a longer history meanwhile
            self._chains[game_id] = chain
            self._chains.move_to_end(game_id)
            if len(self._chains) > self._live_cache:
                self._chains.popitem(last=False)

    def _sign(self, record: GameRecord, chain: Chain) -> dict:
        return self.keys.signer_for(record.key_id).sign_receipt(record.game_id, chain.count, chain.digest)

    def _receipt(self, record: GameRecord, game: Game) -> dict:
        """The receipt of the stored history `game` was restored from."""
        chain = self._chain(record, game.events)
        self._remember_chain(record.game_id, chain)
        return self._sign(record, chain)

    # --- internals ----------------------------------------------------------------

    def _setup(self, record: GameRecord) -> Setup:
        setup = self._setups.get(record.game_id)
        if setup is None:
            setup = setup_from_header(record.opened["header"])
            self._setups[record.game_id] = setup
            if len(self._setups) > self._setup_cache:
                self._setups.popitem(last=False)
        return setup

    def _restore(self, record: GameRecord, events: list[dict]) -> Game:
        if record.seed_revealed is not None:
            seed = bytes.fromhex(record.seed_revealed)
        else:
            seed = self.keys.seed_box.open(record.game_id, record.seed_sealed)
        game = Game.restore(self._setup(record), seed, events)
        if not hmac.compare_digest(game.commitment, record.opened["header"]["commitment"]):
            raise StoreError(f"game {record.game_id}: stored seed does not match its commitment")
        return game


def _replay(seen, fingerprint: str) -> Reply:
    if not hmac.compare_digest(seen.fingerprint, fingerprint):
        raise FairdiceError("idempotency_key_reused", "this Idempotency-Key was used for a different request on "
                                                      "this game")
    return Reply(seen.status, seen.body, replayed=True)


def _player(seat):
    if seat is None:
        raise Forbidden("not_a_player", "the operator token of a game without human seats cannot move")
    return seat


def authenticate(record: GameRecord, presented_hash: str):
    """The seat whose token hashes to `presented_hash` (None: the operator); Forbidden if none.
    Every stored hash is compared, in constant time."""
    found, seat = False, None
    for entry in record.tokens:
        if hmac.compare_digest(entry["sha256"], presented_hash):
            found, seat = True, entry["seat"]
    if not found:
        raise Forbidden("invalid_token", "this token does not belong to a seat of this game")
    return seat


def _option(opt) -> dict:
    return {"points": opt.points, "yahtzee_bonus": opt.yahtzee_bonus, "joker": opt.joker}


def render_state(game: Game, record: GameRecord, receipt: dict, since: int = 0,
                 limit: int = EVENTS_PAGE_MAX) -> dict:
    """The game as the API shows it, with the move receipt of its whole history: no server seed until the
    game is over (then in `final`), and no client seed before every human seat has committed (none is
    accepted before)."""
    setup = game.setup
    header = record.opened["header"]
    missing = game.missing_client_seeds()
    commitments = game.commitments
    current = game.current_seat
    seats = []
    for i, seat in enumerate(setup.seats):
        card = game.card(i)
        seats.append({
            "seat": i,
            "type": seat.type,
            "name": seat.name,
            "bot": seat.bot,
            "awaiting_client_seed": i in missing,
            "committed": i in commitments,
            "commitment": commitments.get(i),
            "revealed": game.has_client_seed(i),
            "card": dict(card.boxes),
            "yahtzee_bonus": card.yahtzee_bonus,
            "totals": game.totals(i).as_dict(),
        })
    options = {}
    if current is not None and not setup.seats[current].is_bot:
        options = {cid: _option(opt) for cid, opt in game.scoring_options().items()}
    since = max(0, since)
    return {
        "game_id": setup.game_id,
        "version": setup.version,
        "rules": setup.rules.id,
        "upper_first": setup.upper_first,
        "status": game.status,
        "first": setup.first,
        "first_seat": game.first,
        "commit_reveal": setup.commits_client_seeds,
        "awaiting_commitments": game.missing_commitments(),
        "awaiting_client_seeds": missing,
        "abandon_timeout": setup.abandon_timeout,
        "seats": seats,
        "current_seat": current,
        "turn": game.turn if current is not None else None,
        "rolls_made": game.rolls_made if current is not None else 0,
        "rolls_left": game.rolls_left,
        "dice": list(game.dice),
        "options": options,
        "commitment": header["commitment"],
        "commitment_signature": record.opened["commitment_signature"],
        "key_id": header["key_id"],
        "event_count": len(game.events),
        "events_from": since,
        "events": game.events[since:since + limit],
        "receipt": receipt,
        "final": final_block(game) if game.over else None,
    }
