"""The game as a state machine: commands in, events out (SPEC.md §4).

A command is checked completely before anything changes; only then are its
events built and applied through `_apply`, the one place that mutates state.
`Game.restore` replays stored events through the same `_apply`, so a game
loaded from a database is the game that was played.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from . import derive
from .chain import Chain
from .errors import FairdiceError, NotNowError
from .players import check_player_key, check_signature, command_of, move_message
from .rules import DICE, Option, RuleSet, Totals, options, ruleset, totals

MAX_SEATS = 6
NAME_MAX = 40
LOG_VERSIONS = (1, 2, 3)  # SPEC §5: the rules of a game are those of the log version it was created under
SIGNED_VERSION = 3  # from this version on, human seats sign their commands (SPEC §5.7)
DEFAULT_ABANDON_TIMEOUT = 86400  # seconds without a move before the server may abandon (version 2)
ABANDON_REASONS = ("player", "timeout")
AbandonReason = Literal["player", "timeout"]

AWAITING_CLIENT_SEED = "awaiting_client_seed"
PLAYING = "playing"
FINISHED = "finished"
ABANDONED = "abandoned"


@dataclass(frozen=True)
class Seat:
    type: str  # "human" or "bot"
    name: str
    bot: str | None = None

    @property
    def is_bot(self) -> bool:
        return self.type == "bot"


def check_seats(seats) -> tuple[Seat, ...]:
    """1..6 seats, each {"type": "human", "name": ...} or {"type": "bot", "bot": id}; a name is trimmed of
    spaces, then must be 1..40 code points of the client seed rule (SPEC §5.2, §2.2)."""
    from .bots import BOTS  # the registry imports the core, not the other way round at import time

    if not isinstance(seats, (list, tuple)) or not 1 <= len(seats) <= MAX_SEATS:
        raise FairdiceError("invalid_seats", f"seats must be a list of 1 to {MAX_SEATS} seats")
    out = []
    for i, seat in enumerate(seats):
        if isinstance(seat, Seat):
            seat = {"type": seat.type, "name": seat.name, "bot": seat.bot}
        if not isinstance(seat, dict):
            raise FairdiceError("invalid_seats", f"seat {i} must be an object")
        kind = seat.get("type")
        if kind not in ("human", "bot"):
            raise FairdiceError("invalid_seats", f"seat {i}: type must be 'human' or 'bot', got {kind!r}")
        bot = seat.get("bot") if kind == "bot" else None
        if kind == "bot" and (not isinstance(bot, str) or bot not in BOTS):
            raise FairdiceError("unknown_bot", f"seat {i}: unknown bot {bot!r}; valid: {', '.join(BOTS)}",
                                allowed=list(BOTS))
        name = seat.get("name")
        if name is None:
            name = f"{bot} bot" if bot else f"player {i + 1}"
        if isinstance(name, str):
            name = name.strip(" ")  # spaces around a name are a typing accident, not part of it
        out.append(Seat(kind, derive.check_text(name, f"seat {i}: name", NAME_MAX, "invalid_seats"), bot))
    return tuple(out)


def check_first(first, n_seats: int):
    if first == "random":
        return first
    if isinstance(first, bool) or not isinstance(first, int) or not 0 <= first < n_seats:
        raise FairdiceError("invalid_first", f"first must be a seat index 0..{n_seats - 1} or 'random', got {first!r}")
    return first


def check_hold(hold) -> tuple[int, ...]:
    """Positions 0..4 to keep, as a sorted tuple without repeats."""
    if not isinstance(hold, (list, tuple)):
        raise FairdiceError("invalid_hold", "hold must be a list of dice positions 0..4")
    for pos in hold:
        if isinstance(pos, bool) or not isinstance(pos, int) or not 0 <= pos < DICE:
            raise FairdiceError("invalid_hold", f"hold position {pos!r} does not exist; positions are 0..4",
                                allowed=list(range(DICE)))
    if len(set(hold)) != len(hold):
        raise FairdiceError("invalid_hold", f"hold {list(hold)!r} names a position twice")
    return tuple(sorted(hold))


@dataclass
class Card:
    boxes: dict[str, int | None]
    yahtzee_bonus: int = 0
    turns: int = 0  # turns completed (boxes filled)

    def filled(self) -> int:
        return sum(v is not None for v in self.boxes.values())


def check_abandon_timeout(timeout) -> int:
    """A positive whole number of seconds."""
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1:
        raise FairdiceError("invalid_options", f"abandon_timeout must be a positive number of seconds, got {timeout!r}")
    return timeout


@dataclass(frozen=True)
class Setup:
    """Everything fixed at creation: what the commitment is signed together with."""
    game_id: str
    rules: RuleSet
    seats: tuple[Seat, ...]
    first: int | str = 0
    upper_first: bool = False
    version: int = LOG_VERSIONS[-1]
    abandon_timeout: int | None = DEFAULT_ABANDON_TIMEOUT

    @classmethod
    def build(cls, game_id: str, rules, seats, first=0, upper_first: bool = False, *,
              version: int = LOG_VERSIONS[-1], abandon_timeout: int | None = DEFAULT_ABANDON_TIMEOUT) -> Setup:
        """A new game's setup; `version` 1 rebuilds the setup of a game created under the first log format."""
        if not isinstance(game_id, str) or not 1 <= len(game_id) <= 64 or not game_id.isascii() \
                or not game_id.isprintable():
            raise FairdiceError("invalid_game_id", "game id must be 1..64 printable ASCII characters")
        if isinstance(version, bool) or version not in LOG_VERSIONS:
            raise FairdiceError("invalid_version", f"log version must be one of {LOG_VERSIONS}, got {version!r}")
        timeout = None if version == 1 else check_abandon_timeout(abandon_timeout)  # version 1 has no timeout
        seats = check_seats(seats)
        if not isinstance(upper_first, bool):
            raise FairdiceError("invalid_options", "upper_first must be true or false")
        if upper_first:
            from .bots import BOTS

            refusing = sorted({s.bot for s in seats if s.is_bot and not BOTS[s.bot].plays_upper_first})
            if refusing:
                raise FairdiceError("unsupported_bot", f"the {refusing[0]} bot does not play the upper_first "
                                                       "house rule", allowed=[b for b in BOTS if BOTS[b].plays_upper_first])
        return cls(game_id, ruleset(rules), seats, check_first(first, len(seats)), upper_first, version, timeout)

    @property
    def human_seats(self) -> list[int]:
        return [i for i, s in enumerate(self.seats) if not s.is_bot]

    @property
    def commits_client_seeds(self) -> bool:
        """Version 2 with two or more humans: each commits to its seed before any is revealed (SPEC §4.3), so
        no one, the last to arrive included, chooses a seed knowing another's."""
        return self.version >= 2 and len(self.human_seats) >= 2

    @property
    def signs_moves(self) -> bool:
        """Version 3: each human seat's commands carry its player's signature (SPEC §5.7)."""
        return self.version >= SIGNED_VERSION


@dataclass
class _State:
    status: str = AWAITING_CLIENT_SEED
    commitments: dict = field(default_factory=dict)  # seat -> hex commitment to its client seed
    client_seeds: dict = field(default_factory=dict)  # seat (None: operator, for bot-only games) -> seed
    player_keys: dict = field(default_factory=dict)  # human seat -> its public key (hex), or None: it signs nothing
    first: int | None = None
    current: int | None = None
    turn: int = 0  # the current seat's turn number, 1-based
    roll: int = 0  # rolls made this turn
    dice: tuple[int, ...] = ()
    cards: list[Card] = field(default_factory=list)
    abandoned_by: int | None = None
    abandon_reason: str | None = None  # None in version 1, whose abandon events give no reason


class Game:
    """One game of SPEC §4 as a sans-IO state machine: commands in, events out, one `_apply` that alone changes
    state.  A command refuses (FairdiceError) before anything changes, and `restore` replays stored events through
    the same `_apply`, so a store need keep only the event log and the game it loads is the game that was played."""
    def __init__(self, setup: Setup, server_seed: bytes, header: dict | None = None):
        """`header`: the signed header of the game's log (SPEC §5.1); with it the game keeps the hash chain of
        its history (`chain`, SPEC §5.6), which the players' signatures cover (version 3 needs it)."""
        if not isinstance(server_seed, bytes) or len(server_seed) != derive.SEED_BYTES:
            raise ValueError("server seed must be 32 bytes")
        self.setup = setup
        self._server_seed = server_seed
        self.events: list[dict] = []
        self.chain: Chain | None = Chain.start(header) if header is not None else None
        self._s = _State(cards=[Card({c: None for c in setup.rules.category_ids}) for _ in setup.seats])
        self._options: dict[str, Option] | None = None  # scoring_options() of the position, until an event

    @classmethod
    def restore(cls, setup: Setup, server_seed: bytes, events: Sequence[dict], header: dict | None = None,
                known: Chain | None = None) -> Game:
        """The game after `events`.  `known`: the chain over the first `known.count` of them, as computed before
        by whoever restores this game again (events are append-only), so that they are not hashed again."""
        game = cls(setup, server_seed, header)
        start = 0
        if known is not None and game.chain is not None and known.count <= len(events):
            game.chain, start = None, known.count
            for event in events[:start]:
                game._apply(dict(event))
            game.chain = known
        for event in events[start:]:
            game._apply(dict(event))
        return game

    # --- reading the state -----------------------------------------------------

    @property
    def rules(self) -> RuleSet:
        return self.setup.rules

    @property
    def commitment(self) -> str:
        return derive.commitment(self._server_seed)

    @property
    def status(self) -> str:
        return self._s.status

    @property
    def over(self) -> bool:
        return self._s.status in (FINISHED, ABANDONED)

    @property
    def current_seat(self) -> int | None:
        return self._s.current if self._s.status == PLAYING else None

    @property
    def turn(self) -> int:
        return self._s.turn

    @property
    def rolls_made(self) -> int:
        return self._s.roll

    @property
    def rolls_left(self) -> int:
        return 3 - self._s.roll if self._s.status == PLAYING else 0

    @property
    def dice(self) -> tuple[int, ...]:
        return self._s.dice

    @property
    def first(self) -> int | None:
        return self._s.first

    @property
    def abandoned_by(self) -> int | None:
        return self._s.abandoned_by

    @property
    def abandon_reason(self) -> str | None:
        return self._s.abandon_reason

    @property
    def commitments(self) -> dict[int, str]:
        """The commitments to client seeds received so far, by seat (public: they hide the seeds)."""
        return dict(self._s.commitments)

    def player_key(self, seat: int) -> str | None:
        """The public key a human seat sent with its first command (None before, or if it sent none)."""
        return self._s.player_keys.get(seat)

    def card(self, seat: int) -> Card:
        return self._s.cards[seat]

    @property
    def client_seeds(self) -> list[str]:
        """The client seeds in the order they enter the derivation: human seats in seat order."""
        return self._ordered_seeds(self._s.client_seeds)

    def _ordered_seeds(self, seeds: dict) -> list[str]:
        if None in seeds:
            return [seeds[None]]
        return [seeds[i] for i in self.setup.human_seats if i in seeds]

    def missing_client_seeds(self) -> list[int | None]:
        if self._s.status != AWAITING_CLIENT_SEED:
            return []
        humans = self.setup.human_seats
        if not humans:
            return [None]
        return [i for i in humans if i not in self._s.client_seeds]

    def has_client_seed(self, seat: int | None) -> bool:
        """Whether this seat (None: the operator) has sent, or revealed, its client seed."""
        return seat in self._s.client_seeds

    def missing_commitments(self) -> list[int]:
        """The human seats yet to commit, in a game that takes commitments (else, or once all are in, [])."""
        if self._s.status != AWAITING_CLIENT_SEED or not self.setup.commits_client_seeds:
            return []
        return [i for i in self.setup.human_seats if i not in self._s.commitments]

    def totals(self, seat: int) -> Totals:
        card = self._s.cards[seat]
        return totals(self.rules, card.boxes, card.yahtzee_bonus)

    def scoring_options(self) -> dict[str, Option]:
        """What each legal box would score with the current dice (empty before the first roll)."""
        if self._s.status != PLAYING or not self._s.roll:
            return {}
        if self._options is None:  # the answer to a roll shows them, the score that follows checks them
            self._options = options(self.rules, self._s.cards[self._s.current].boxes, self._s.dice,
                                    self.setup.upper_first)
        return dict(self._options)

    def winners(self) -> list[int]:
        """Seats with the highest total once finished: one seat is a win, several a draw."""
        if self._s.status != FINISHED:
            return []
        scores = [self.totals(i).total for i in range(len(self.setup.seats))]
        best = max(scores)
        return [i for i, s in enumerate(scores) if s == best]

    def revealed_seed(self) -> bytes:
        """The server seed, only once the game is over."""
        if not self.over:
            raise NotNowError("not_revealed", "the server seed is revealed only when the game is over")
        return self._server_seed

    def tiebreak(self, choices: int) -> int:
        """A derived index among `choices` equally good decisions for the current seat, turn and roll."""
        if choices == 1:
            return 0
        s = self._s
        return derive.tiebreak(self._server_seed, self.setup.game_id, self.client_seeds,
                               s.current, s.turn, s.roll, choices)

    # --- commands --------------------------------------------------------------

    def commit_client_seed(self, seat: int, commitment, player_key=None, player_signature=None,
                           event_count=None) -> list[dict]:
        """A human seat's commitment to its client seed, in a game of two or more humans (SPEC §4.3); in
        version 3 with the seat's public key, and signed by it (SPEC §5.7)."""
        self._require_seed_seat(seat)
        if not self.setup.commits_client_seeds:
            raise FairdiceError("commitment_not_used", "this game takes its client seed in one step: send the "
                                                       "client seed itself, without commitment or salt")
        if seat in self._s.commitments:
            raise NotNowError("commitment_already_set", f"seat {seat} has already committed to its client seed")
        derive.check_hex(commitment, "commitment", 32, "invalid_commitment")
        event = {"type": "client_seed_commit", "seat": seat, "commitment": commitment}
        return self._emit([self._signed(self._with_key(event, player_key), player_signature, event_count)])

    def supply_client_seed(self, seat: int | None, client_seed, salt=None, player_key=None, player_signature=None,
                           event_count=None) -> list[dict]:
        """A human seat's client seed (seat None: the operator's, for a game with no human seat).  In a game
        of two or more humans it is a reveal: only once every human seat has committed, with the salt, and
        it must match the seat's commitment.  In version 3 a human seat's seed carries its public key and is
        signed by it (SPEC §5.7)."""
        self._require_seed_seat(seat)
        if self.setup.commits_client_seeds:
            event = self._reveal_event(seat, client_seed, salt, player_key)
        else:
            if salt is not None:
                raise FairdiceError("commitment_not_used", "this game takes its client seed in one step: send "
                                                           "the client seed without a salt")
            derive.check_client_seed(client_seed)
            event = self._with_key({"type": "client_seed", "seat": seat, "client_seed": client_seed}, player_key)
        events = [self._signed(event, player_signature, event_count)]
        if len(self.missing_client_seeds()) == 1:
            events.append(self._start_event({**self._s.client_seeds, seat: client_seed}))
        return self._emit(events)

    def _reveal_event(self, seat: int, client_seed, salt, player_key) -> dict:
        if salt is None:
            raise NotNowError("client_seed_commit_required", "in a game of several humans each seat first commits "
                                                             "to its client seed, then reveals it with its salt")
        waiting = self.missing_commitments()
        if waiting:
            raise NotNowError("awaiting_commitments", f"seats {waiting} have not committed yet; reveal your client "
                                                      "seed once every human seat has", awaiting=waiting)
        derive.check_client_seed(client_seed)
        derive.check_hex(salt, "salt", derive.SALT_BYTES, "invalid_salt")
        event = self._with_key({"type": "client_seed", "seat": seat, "client_seed": client_seed, "salt": salt},
                               player_key)
        committed_key = self._s.player_keys.get(seat)
        if event.get("player_key") != committed_key or \
                derive.seed_commitment(salt, client_seed, committed_key) != self._s.commitments[seat]:
            raise FairdiceError("client_seed_mismatch", f"this client seed, salt and player key do not match seat "
                                                        f"{seat}'s commitment")
        return event

    def _with_key(self, event: dict, player_key) -> dict:
        """A human seat's seed or commitment event with its `player_key` (version 3; None: it will not sign)."""
        if self.setup.signs_moves and event["seat"] is not None:
            return {**event, "player_key": check_player_key(player_key)}
        if player_key is not None:
            raise FairdiceError("invalid_player_key", self._unsigned_game("player_key"))
        return event

    def _signed(self, event: dict, player_signature, event_count) -> dict:
        """A human seat's event with its player's signature checked and attached (version 3, SPEC §5.7): the
        seat's key over the game id, the history so far (n, h_n) and the command.  A seat without a key signs
        nothing (its events say null); other events are the server's and carry no signature."""
        seat = event["seat"]
        if not self.setup.signs_moves or seat is None or self.setup.seats[seat].is_bot:
            if player_signature is not None:
                raise FairdiceError("invalid_player_signature", self._unsigned_game("player_signature"))
            return event
        key = self._s.player_keys.get(seat, event.get("player_key"))
        if key is None:
            if player_signature is not None:
                raise FairdiceError("invalid_player_signature", f"seat {seat} sent no player_key with its first "
                                                                "command, so its commands are not signed")
            return {**event, "player_signature": None}
        if player_signature is None:
            raise FairdiceError("player_signature_required", f"seat {seat} signs its commands (its player_key is "
                                                             f"{key}): send player_signature and event_count")
        n = len(self.events)
        if event_count is not None and event_count != n:
            raise NotNowError("stale_history", f"the command was signed over {event_count} events; the game has {n}: "
                                               "fetch them, check them and sign the command again", event_count=n)
        if self.chain is None:
            raise ValueError("a game whose players sign needs its header to check their signatures")
        check_signature(key, player_signature, move_message(self.setup.game_id, n, self.chain.digest,
                                                            command_of(event)), seat)
        return {**event, "player_signature": player_signature}

    def _unsigned_game(self, what: str) -> str:
        if self.setup.signs_moves:
            return f"{what} belongs to a human seat's commands, not to the operator's"
        return f"this game (log version {self.setup.version}) takes no {what}: its moves are not signed"

    def _require_seed_seat(self, seat) -> None:
        """Client seeds are open, and `seat` is one that still owes its seed."""
        if self._s.status != AWAITING_CLIENT_SEED:
            raise NotNowError("client_seed_closed", "client seeds are accepted only before the first roll")
        missing = self.missing_client_seeds()
        if seat not in missing:
            if seat in self._s.client_seeds:
                raise NotNowError("client_seed_already_set", f"seat {seat} has already sent its client seed")
            raise FairdiceError("invalid_seat", f"seat {seat!r} does not send a client seed; waiting for {missing}",
                                allowed=missing)

    def roll(self, seat: int, hold: Sequence[int] = (), player_signature=None, event_count=None) -> list[dict]:
        self._require_turn(seat)
        hold = check_hold(hold)
        s = self._s
        if s.roll >= 3:
            raise FairdiceError("no_rolls_left", "three rolls made this turn; score a category",
                                allowed=sorted(self.scoring_options()))
        if s.roll == 0 and hold:
            raise FairdiceError("invalid_hold", "the first roll of a turn throws all five dice; hold nothing")
        dice = derive.roll_dice(self._server_seed, self.setup.game_id, self.client_seeds,
                                seat, s.turn, s.roll + 1, s.dice, hold)
        event = {"type": "roll", "seat": seat, "turn": s.turn, "roll": s.roll + 1, "hold": list(hold), "dice": dice}
        return self._emit([self._signed(event, player_signature, event_count)])

    def score(self, seat: int, category, player_signature=None, event_count=None) -> list[dict]:
        self._require_turn(seat)
        s = self._s
        if not s.roll:
            raise NotNowError("roll_first", "roll the dice before scoring")
        if not isinstance(category, str):
            raise FairdiceError("unknown_category", "category must be a string", allowed=list(self.rules.category_ids))
        self.rules.category(category)  # unknown id: error listing the valid ones
        legal = self.scoring_options()
        if category not in legal:
            card = s.cards[seat].boxes
            why = "is already filled" if card[category] is not None else "is not allowed for these dice"
            raise FairdiceError("illegal_category", f"{category} {why}; allowed: {', '.join(legal)}",
                                allowed=list(legal))
        option = legal[category]
        before = self.totals(seat)
        boxes = {**s.cards[seat].boxes, category: option.points}
        after = totals(self.rules, boxes, s.cards[seat].yahtzee_bonus + option.yahtzee_bonus)
        event = {"type": "score", "seat": seat, "turn": s.turn, "category": category, "points": option.points,
                 "joker": option.joker, "yahtzee_bonus": option.yahtzee_bonus,
                 "upper_bonus": after.upper_bonus - before.upper_bonus, "total": after.total}
        return self._emit([self._signed(event, player_signature, event_count)])

    def abandon(self, seat: int | None = None, reason: AbandonReason = "player", player_signature=None,
                event_count=None) -> list[dict]:
        """End the game unfinished (SPEC §4.3).  Version 2: a human seat for itself ("player") before the
        start or on its own turn; the operator of a game without humans (seat None, "player"); the server
        (seat None, "timeout") once the game has waited `abandon_timeout` seconds for a move, which only the
        caller, holding the clock, can know.  Version 3: a seat's abandon is signed like its moves.  Version 1
        games keep their rule: anyone, any time."""
        if self.over:
            raise NotNowError("game_over", f"the game is already {self._s.status}")
        if self.setup.version == 1:
            return self._emit([self._signed({"type": "abandon", "seat": seat}, player_signature, event_count)])
        self._check_abandon(seat, reason)
        event = {"type": "abandon", "seat": seat, "reason": reason}
        return self._emit([self._signed(event, player_signature, event_count)])

    def _check_abandon(self, seat, reason) -> None:
        if reason not in ABANDON_REASONS:
            raise FairdiceError("invalid_abandon", f"reason must be one of {', '.join(ABANDON_REASONS)}, "
                                                   f"got {reason!r}", allowed=list(ABANDON_REASONS))
        humans = self.setup.human_seats
        if reason == "timeout":
            if seat is not None:
                raise FairdiceError("invalid_abandon", "only the server abandons for a timeout (seat null)")
            return
        if seat is None:
            if humans:
                raise FairdiceError("invalid_abandon", "in a game with human seats only a human seat abandons "
                                                       "for itself; the server only after a timeout")
            return
        if seat not in humans:
            raise FairdiceError("invalid_seat", f"seat {seat!r} is not a human seat of this game", allowed=humans)
        s = self._s
        if s.status == PLAYING and seat != s.current:
            raise NotNowError("not_your_turn", f"seat {seat} may abandon only on its own turn; it is seat "
                                               f"{s.current}'s turn", current_seat=s.current)

    # --- internals ---------------------------------------------------------------

    def _require_turn(self, seat) -> None:
        s = self._s
        if s.status != PLAYING:
            raise NotNowError("not_playing", f"the game is {s.status}; no move is possible now")
        if seat != s.current:
            raise NotNowError("not_your_turn", f"it is seat {s.current}'s turn, not seat {seat}'s",
                              current_seat=s.current)

    def _start_event(self, seeds: dict) -> dict:
        """Who plays first: fixed, or a derived roll-off (highest sum; tied seats roll again)."""
        first = self.setup.first
        if first != "random":
            return {"type": "start", "first": first, "rolloff": []}
        client_seeds = self._ordered_seeds(seeds)
        contenders = list(range(len(self.setup.seats)))
        rounds = []
        while len(contenders) > 1:
            rnd = len(rounds) + 1
            throws = {seat: derive.rolloff_dice(self._server_seed, self.setup.game_id, client_seeds, rnd, seat)
                      for seat in contenders}
            rounds.append([{"seat": seat, "dice": dice} for seat, dice in throws.items()])
            best = max(sum(d) for d in throws.values())
            contenders = [seat for seat, dice in throws.items() if sum(dice) == best]
        return {"type": "start", "first": contenders[0], "rolloff": rounds}

    def _emit(self, events: list[dict]) -> list[dict]:
        for event in events:
            self._apply(event)
        return events

    def _apply(self, event: dict) -> None:
        s = self._s
        self._options = None
        kind = event["type"]
        if kind == "client_seed_commit":
            s.commitments[event["seat"]] = event["commitment"]
            if "player_key" in event:
                s.player_keys[event["seat"]] = event["player_key"]
        elif kind == "client_seed":
            s.client_seeds[event["seat"]] = event["client_seed"]
            if "player_key" in event:
                s.player_keys[event["seat"]] = event["player_key"]
        elif kind == "start":
            s.status, s.first, s.current, s.turn = PLAYING, event["first"], event["first"], 1
        elif kind == "roll":
            s.roll, s.dice = event["roll"], tuple(event["dice"])
        elif kind == "score":
            card = s.cards[event["seat"]]
            card.boxes[event["category"]] = event["points"]
            card.yahtzee_bonus += event["yahtzee_bonus"]
            card.turns += 1
            self._advance()
        elif kind == "abandon":
            s.status, s.abandoned_by, s.abandon_reason = ABANDONED, event["seat"], event.get("reason")
        else:
            raise ValueError(f"unknown event type {kind!r}")
        self.events.append(event)
        if self.chain is not None:
            self.chain = self.chain.extend((event,))

    def _advance(self) -> None:
        s = self._s
        n = len(self.setup.seats)
        nxt = (s.current + 1) % n
        s.roll, s.dice = 0, ()
        if all(card.filled() == len(card.boxes) for card in s.cards):
            s.status, s.current = FINISHED, None
            return
        s.current = nxt
        s.turn = s.cards[nxt].turns + 1
