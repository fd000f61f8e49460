"""Games over a store: load a game, apply one core command, store its events, answer.

This is where HTTP-independent plumbing lives: fresh game ids, seeds and
tokens from `secrets`, sealing the seed, authenticating a token to a seat,
idempotent replays, and rendering the state.  Every rule of the game stays in
the core: commands go to `fairdice.game.Game`, bot turns to
`fairdice.bots.play_bots`, transcripts to `fairdice.log`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections import OrderedDict
from dataclasses import dataclass

from fairdice import derive
from fairdice.bots import play_bots, position_of
from fairdice.errors import FairdiceError
from fairdice.game import PLAYING, Game, Setup
from fairdice.hint import hint as advise
from fairdice.log import build_log, canonical, final_block, open_log, setup_from_header

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


def _json(doc) -> str:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def not_found(game_id: str) -> ApiError:
    return ApiError(404, "game_not_found", f"no game with id {game_id!r}")


class Games:
    def __init__(self, store: Store, keys: KeyRing, setup_cache: int = 4096, live_cache: int = 1024):
        self.store = store
        self.keys = keys
        self._setups: OrderedDict[str, Setup] = OrderedDict()
        self._setup_cache = setup_cache
        # Games this process has just stored, by id: a command takes its game out and puts it back only once
        # its events are committed.  A copy that another worker has overtaken cannot do harm: its append
        # expects the old event count and gets Conflict, so the command is computed again on a fresh load.
        self._live: OrderedDict[str, tuple[GameRecord, Game]] = OrderedDict()
        self._live_cache = live_cache

    # --- creating -----------------------------------------------------------------

    def create(self, rules, seats, first=0, upper_first=False) -> dict:
        for _ in range(3):
            game_id = secrets.token_urlsafe(GAME_ID_BYTES)
            setup = Setup.build(game_id, rules, seats, first, upper_first)  # refuses bad rules, seats, first
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
            }
        raise StoreError("could not find an unused game id")

    # --- reading ------------------------------------------------------------------

    def state(self, game_id: str, since: int = 0, limit: int = EVENTS_PAGE_MAX) -> str:
        snap = self.store.snapshot(game_id)
        if snap is None:
            raise not_found(game_id)
        game = self._restore(snap.record, snap.events)
        return _json(render_state(game, snap.record, since, limit))

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
            raise ApiError(409, "not_playing", f"the game is {game.status}; hints are given only during play")
        seat = game.current_seat
        if game.setup.seats[seat].is_bot:
            raise ApiError(409, "bot_to_move", f"seat {seat} is a bot; hints are for human seats",
                           current_seat=seat)
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

    def client_seed(self, game_id, token, client_seed, idempotency_key=None) -> Reply:
        return self._command(game_id, token, "client_seed", {"client_seed": client_seed}, idempotency_key,
                             lambda game, seat: game.supply_client_seed(seat, client_seed))

    def roll(self, game_id, token, hold, idempotency_key=None) -> Reply:
        return self._command(game_id, token, "roll", {"hold": hold}, idempotency_key,
                             lambda game, seat: game.roll(_player(seat), hold))

    def score(self, game_id, token, category, idempotency_key=None) -> Reply:
        return self._command(game_id, token, "score", {"category": category}, idempotency_key,
                             lambda game, seat: game.score(_player(seat), category))

    def abandon(self, game_id, token, idempotency_key=None) -> Reply:
        return self._command(game_id, token, "abandon", {}, idempotency_key,
                             lambda game, seat: game.abandon(seat))

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
            except ApiError:
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
            except ApiError:  # the operator token cannot move: nothing was touched
                self._keep(record, game)
                raise
            except FairdiceError:  # refused; the core changed nothing
                if cached and self.store.event_count(game_id) != before:
                    continue  # refused on an outdated copy: judge it again on the stored game
                self._keep(record, game)
                raise
            play_bots(game)  # bots whose turn it is move now (a no-op while a human is to move)
            reveal = None
            if game.over:
                signer = self.keys.signer_for(record.key_id)
                reveal = (game.revealed_seed().hex(), _json(build_log(record.opened, game, signer)))
            body = _json(render_state(game, record, since=before))
            remember = (Remember(seat, idempotency_key, fingerprint, 200, body)
                        if idempotency_key is not None else None)
            try:
                seen = self.store.append(game_id, before, game.events[before:], game.status, reveal, remember)
            except Conflict:
                continue  # another request got there first; this copy is dropped
            except GameNotFound:
                raise not_found(game_id) from None
            if seen is not None:  # a twin request with the same key got there first
                return _replay(seen, fingerprint)
            if not game.over:
                self._keep(record, game)
            return Reply(200, body)
        raise Busy(f"game {game_id} changed {MAX_ATTEMPTS} times while this command was computed")

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
        raise ApiError(422, "idempotency_key_reused",
                       "this Idempotency-Key was used for a different request on this game")
    return Reply(seen.status, seen.body, replayed=True)


def _player(seat):
    if seat is None:
        raise ApiError(403, "not_a_player", "the operator token of a game without human seats cannot move")
    return seat


def authenticate(record: GameRecord, presented_hash: str):
    """The seat whose token hashes to `presented_hash` (None: the operator); 403 if none.
    Every stored hash is compared, in constant time."""
    found, seat = False, None
    for entry in record.tokens:
        if hmac.compare_digest(entry["sha256"], presented_hash):
            found, seat = True, entry["seat"]
    if not found:
        raise ApiError(403, "invalid_token", "this token does not belong to a seat of this game")
    return seat


def _option(opt) -> dict:
    return {"points": opt.points, "yahtzee_bonus": opt.yahtzee_bonus, "joker": opt.joker}


def render_state(game: Game, record: GameRecord, since: int = 0, limit: int = EVENTS_PAGE_MAX) -> dict:
    """The game as the API shows it: no seed until the game is over (then in `final`)."""
    setup = game.setup
    header = record.opened["header"]
    missing = game.missing_client_seeds()
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
        "rules": setup.rules.id,
        "upper_first": setup.upper_first,
        "status": game.status,
        "first": setup.first,
        "first_seat": game.first,
        "awaiting_client_seeds": missing,
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
        "final": final_block(game) if game.over else None,
    }
