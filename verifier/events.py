"""The replay of a log's events (SPEC §2.2-§4): each event checked in order against the game as it truly stands,
every die re-derived from the revealed seed (without one: the logged dice are taken, so that the rest can still be
checked), every score recomputed, every bot decision replayed.

The replay follows the true game: a die that does not re-derive is reported and the derived value is used from
then on. A failure that leaves no meaningful game to follow (an event out of order, a bad hold, a box that cannot
be filled) stops the replay there (StopReplay). One EventReplay walks one log: each step gets the ReplayState, the game
as it stands, and `run` returns it for the checks of the final block; nothing else is left behind."""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import Literal, NamedTuple

from .logformat import (SCORE_FIELDS, all_ints, carries_player_signature, client_seed_ok, event_fields,
                        event_format, human_event_fields)
from .optimal import TableError
from .players import SeatKeys
from .results import Checks, Result
from .spec import CATEGORIES, HOLDS, UPPER, Deriver, options, score_box, sha256_hex, upper_bonus, yahtzee_bonus

Phase = Literal["seeds", "play", "over", "abandoned"]  # in this order; "over": every box is filled
ABANDON_REASONS = ("player", "timeout")
ROLL_FIELDS = itemgetter("seat", "turn", "roll", "hold", "dice")  # (one call: the hot paths read events so)
SCORE_MOVE = itemgetter("seat", "turn", "category")
SCORE_VALUES = itemgetter(*SCORE_FIELDS)
STANDINGS = ("bot ahead", "human ahead", "level")


@dataclass(frozen=True)
class GameSetup:
    """What the header fixes for the whole game (the format check has made sure it is well formed)."""
    rules: str
    upper_first: bool
    first: int | str  # a seat, or "random" (a roll-off)
    game_id: str
    version: int  # of the log format
    seats: list  # the header's seats
    humans: list[int]
    senders: list  # who sends a client seed: the human seats, else the operator (None)
    bot_seats: list[int]
    fields: dict  # event type -> its fields (SPEC §5.3)
    human_fields: dict  # the same for an event of a human seat (version 3: with the player's key and signature)
    n: int  # seats
    n_boxes: int  # the game is over when they are all filled

    @classmethod
    def of(cls, doc: dict) -> GameSetup:
        h = doc["header"]
        seats, humans = h["seats"], [s for s, seat in enumerate(h["seats"]) if seat["type"] == "human"]
        return cls(h["rules"], h["upper_first"], h["first"], h["game_id"], doc["version"], seats, humans,
                   humans or [None], [s for s, seat in enumerate(seats) if seat["type"] == "bot"],
                   event_fields(doc["version"], len(humans)), human_event_fields(doc["version"], len(humans)),
                   len(seats), len(seats) * len(CATEGORIES[h["rules"]]))

    @property
    def committed(self) -> bool:
        """Client seeds are committed to first (version 2 with two or more human seats)."""
        return "client_seed_commit" in self.fields


@dataclass(slots=True, eq=False)
class ReplayState:
    """The game as it stands after the events replayed so far: what the next one is checked against."""
    boxes: list[dict]  # per seat: category -> points, None while open
    bonus: list[list[int]]  # per seat: [upper bonus, Yahtzee bonuses]
    filled: list[int]  # per seat: boxes filled
    total: list[int]  # per seat: running total
    upper: list[int]  # per seat: points in the upper boxes
    phase: Phase = "seeds"
    cur: int | None = None  # the seat to move, once play has started
    rolls: int = 0  # rolls made in the current turn
    dice: list = field(default_factory=lambda: [0] * 5)
    derive: Deriver | None = None  # from the start event on, when the server seed is revealed
    seeds: dict = field(default_factory=dict)  # seat -> its client seed
    commitments: dict = field(default_factory=dict)  # seat -> the commitment to its client seed (committed games)
    committed_keys: dict = field(default_factory=dict)  # seat -> the player_key its commitment names (version 3)
    n_rolls: int = 0
    n_scores: int = 0

    @classmethod
    def new(cls, setup: GameSetup) -> ReplayState:
        n = setup.n
        return cls([dict.fromkeys(CATEGORIES[setup.rules]) for _ in range(n)], [[0, 0] for _ in range(n)],
                   [0] * n, [0] * n, [0] * n)

    def client_seeds(self, setup: GameSetup) -> list[str]:
        """The client seeds received, in seat order (SPEC §2.2)."""
        return [self.seeds[s] for s in setup.senders if s in self.seeds]

    def totals(self, seat: int) -> dict:
        """Seat's entry of final.totals (SPEC §5.4), as the replay computed it."""
        upper = lower = 0
        for c, v in self.boxes[seat].items():
            if v is not None:
                if c in UPPER:
                    upper += v
                else:
                    lower += v
        ub, yb = self.bonus[seat]
        return {"upper": upper, "upper_bonus": ub, "lower": lower, "yahtzee_bonus": yb,
                "total": upper + ub + lower + yb}

    def open_boxes(self) -> int:
        return sum(v is None for b in self.boxes for v in b.values())


class Acknowledged(NamedTuple):
    """What the player's move receipts acknowledge (SPEC §5.7): an abandon in the name of one of `seats` that its
    player did not sign must be among the first `events` events."""
    seats: frozenset
    events: int


class EventReplay:
    """One walk through a log's events. `bots`: the published policies (verifier.botcheck) to replay the bots'
    decisions with, or None; `verbose` writes the game turn by turn into result.replay, `audit` the numbers the
    audit aggregates into result.audit; `players`: which human seats sign their moves (verifier.players);
    `acknowledged`: given move receipts, what they acknowledge."""

    def __init__(self, checks: Checks, doc: dict, seed: bytes | None, bots=None, verbose: bool = False,
                 audit: bool = False, players: SeatKeys | None = None, acknowledged: Acknowledged | None = None):
        self.checks, self.doc, self.seed = checks, doc, seed
        self.setup = setup = GameSetup.of(doc)
        self.players, self.acknowledged = players or SeatKeys({}, {}, []), acknowledged
        self.bots = BotReplay(checks, bots, setup) if bots is not None else None
        self.is_bot = [self.bots is not None and seat["type"] == "bot" for seat in setup.seats]
        # the fields of a roll and of a score, per seat: a human seat's carry its signature in version 3
        signs = [setup.version >= 3 and seat["type"] == "human" for seat in setup.seats]
        self.roll_size, self.score_size = [6 + s for s in signs], [9 + s for s in signs]
        result: Result = checks.r
        result.replay = [] if verbose else None
        self.narration = Narration(result.replay) if verbose else None
        self.tally = Tally(setup) if audit else None

    def run(self) -> ReplayState:
        """Every event in order (StopReplay at a failure the game cannot go on from), then the checks that passed."""
        st = ReplayState.new(self.setup)
        if self.bots is not None:
            self.bots.check_identities()
        roll, score, other = self.roll, self.score, self.other
        for i, ev in enumerate(self.doc["events"]):
            kind = ev.get("type") if type(ev) is dict else None
            if kind == "roll" and st.phase == "play":
                roll(st, i, ev)
            elif kind == "score" and st.phase == "play":
                score(st, i, ev)
            else:
                other(st, i, ev)
        self.finish(st)
        return st

    def event_format(self, i: int, ev) -> str:
        setup = self.setup
        return event_format(self.checks, setup.fields, setup.human_fields, setup.humans, setup.n, i, ev)

    # -- the two hot paths (every roll, every box filled): a few conditions, which record nothing, pass the usual
    #    case; anything else goes to check_roll, check_dice or check_score, which check in SPEC §7's order

    def roll(self, st: ReplayState, i: int, ev: dict) -> None:
        """A roll during play: exactly the six fields of a roll (a human seat's seven in version 3), of their JSON
        types (log.format); the seat, turn and roll whose move it is (turn.order, roll.count, bot.decision); a legal
        hold (roll.hold); every die re-derived (roll.dice). The usual roll passes the conditions here, which record
        nothing (a bot's then has only its decision checked); anything else goes to check_roll and check_dice, which
        check it in that order and say what is wrong."""
        try:
            seat, turn, roll, hold, logged = ROLL_FIELDS(ev)
        except KeyError:
            self.event_format(i, ev)
        cur, derive = st.cur, st.derive
        size = self.roll_size[cur]
        if not (len(ev) == size and (size == 6 or carries_player_signature(ev)) and seat == cur
                and turn == st.filled[cur] + 1 and roll == st.rolls + 1 and type(seat) is int and type(turn) is int
                and type(roll) is int and roll < 4
                and type(hold) is list and (not hold or (roll > 1 and all_ints(hold) and tuple(hold) in HOLDS))):
            self.check_roll(st, i, ev)
        elif self.is_bot[cur] and st.rolls:  # in order: only a bot's decision is left to check (check_move)
            self.bots.check_decision(st, i, ev, turn)
        if derive is not None:
            dice = derive.roll(seat, turn, roll)
        else:  # no revealed seed: the logged dice are taken, once their format is checked
            self.event_format(i, ev)
            dice = list(logged)
        if hold:  # a held die keeps its value (the stream is not shifted)
            previous = st.dice
            for p in hold:
                dice[p] = previous[p]
        if dice != logged or not (  # (equal to dice of 1..6: of their JSON type too?)
                type(logged[0]) is type(logged[1]) is type(logged[2]) is type(logged[3]) is type(logged[4]) is int):
            self.check_dice(i, ev, dice)
        st.dice, st.rolls = dice, roll
        st.n_rolls += 1
        if self.tally is not None:
            self.tally.roll(cur, roll, dice, hold)
        if self.narration is not None:
            self.narration.roll(cur, turn, roll, dice, hold)

    def check_roll(self, st: ReplayState, i: int, ev: dict) -> None:
        """log.format, then turn.order, bot.decision and roll.count, then roll.hold for a roll: the replay stops
        at the first failure, or goes on with a roll it can follow (and a bot's decision checked)."""
        self.event_format(i, ev)
        self.check_move(st, i, ev)
        hold, roll = ev["hold"], ev["roll"]
        if hold and (roll == 1 or tuple(hold) not in HOLDS):
            self.checks.stop("roll.hold", i, "hold", "[] on roll 1" if roll == 1 else "sorted distinct positions 0..4",
                             hold)

    def check_dice(self, i: int, ev: dict, dice: list) -> None:
        """log.format for the logged dice, then roll.dice: each die as derived (`dice`)."""
        self.event_format(i, ev)
        logged = ev["dice"]
        for p in range(5):
            if dice[p] != logged[p]:
                self.checks.fail("roll.dice", i, f"dice[{p}]", dice[p], logged[p])

    def score(self, st: ReplayState, i: int, ev: dict) -> None:
        """A box filled during play: exactly the nine fields of a score (a human seat's ten in version 3; log.format;
        the types of those that recompute are checked with their values); the seat and turn whose move it is, after
        a roll (turn.order, roll.count, bot.decision); a box the dice may go into (score.category); the points,
        joker, bonuses and running total (score.points). The usual score passes the conditions here (a bot's then has
        only its decision checked); anything else goes to check_score, which checks it in that order and says what is
        wrong."""
        try:
            seat, turn, cat = SCORE_MOVE(ev)
            found = SCORE_VALUES(ev)  # (points, joker, yahtzee_bonus, upper_bonus, total)
        except KeyError:
            self.event_format(i, ev)
        cur = st.cur
        size = self.score_size[cur]
        if not (len(ev) == size and (size == 9 or carries_player_signature(ev)) and seat == cur
                and turn == st.filled[cur] + 1 and type(seat) is int and type(turn) is int and st.rolls
                and type(cat) is str):
            self.check_score(st, i, ev)
        elif self.is_bot[cur]:  # in order: only a bot's decision is left to check (check_move)
            self.bots.check_decision(st, i, ev, turn)
        mine = self.fill_box(st, i, cat)
        if found != mine or type(found[0]) is not int or type(found[1]) is not bool or \
                type(found[2]) is not int or type(found[3]) is not int or type(found[4]) is not int:
            self.event_format(i, ev)  # first: are these the right JSON types?
            for name, m, t in zip(SCORE_FIELDS, mine, found):
                if m != t:
                    self.checks.fail("score.points", i, name, m, t)
        if self.narration is not None:
            self.narration.score(cat, mine)
        st.rolls = 0
        st.filled[cur] += 1
        st.n_scores += 1
        if self.tally is not None:
            self.tally.scored(st.total)
        if st.n_scores == self.setup.n_boxes:
            st.phase = "over"
        else:
            st.cur = (cur + 1) % self.setup.n

    def check_score(self, st: ReplayState, i: int, ev: dict) -> None:
        """log.format for the seat and turn, then turn.order, bot.decision and roll.count, then log.format for the
        category: the replay stops at the first failure, or goes on (and a bot's decision is checked)."""
        size = self.score_size[st.cur]
        if not (len(ev) == size and (size == 9 or carries_player_signature(ev)) and type(ev["seat"]) is int
                and type(ev["turn"]) is int):
            self.event_format(i, ev)
        self.check_move(st, i, ev)
        if type(ev["category"]) is not str:
            self.event_format(i, ev)

    def fill_box(self, st: ReplayState, i: int, cat: str) -> tuple:
        """score.category: a box of the rule set, open, and legal for the dice now (else the replay stops); then
        the box and its bonuses written into the card. Returns (points, joker, Yahtzee bonus, upper bonus, total)."""
        cur, rules, dice = st.cur, self.setup.rules, st.dice
        boxes = st.boxes[cur]
        if cat not in boxes:
            self.checks.stop("score.category", i, "category", f"a category of {rules}", cat)
        if boxes[cat] is not None:
            self.checks.stop("score.category", i, "category", "an open box", f"{cat} (already filled)")
        scored = score_box(rules, boxes, dice, cat, self.setup.upper_first)
        if scored is None:
            self.checks.stop("score.category", i, "category",
                             "one of " + ", ".join(options(rules, boxes, dice, self.setup.upper_first)), cat)
        pts, joker = scored
        yb = yahtzee_bonus(rules, boxes, dice)
        ub = upper_bonus(rules, st.upper[cur], cat, pts)
        boxes[cat] = pts
        if cat in UPPER:
            st.upper[cur] += pts
        if ub or yb:
            st.bonus[cur][0] += ub
            st.bonus[cur][1] += yb
        st.total[cur] += pts + ub + yb
        return pts, joker, yb, ub, st.total[cur]

    def check_move(self, st: ReplayState, i: int, ev: dict) -> None:
        """turn.order, the bot's decision (with bots) and roll.count for a roll or a score (called only when
        something is to be said, or for a bot's move)."""
        cur, turn, rolls = st.cur, st.filled[st.cur] + 1, st.rolls
        if ev["seat"] != cur:
            self.checks.stop("turn.order", i, "seat", cur, ev["seat"])
        if ev["turn"] != turn:
            self.checks.stop("turn.order", i, "turn", turn, ev["turn"])
        if self.is_bot[cur] and rolls > 0:
            self.bots.check_decision(st, i, ev, turn)
        if ev["type"] == "roll" and (rolls == 3 or ev["roll"] != rolls + 1):
            self.checks.stop("roll.count", i, "roll", rolls + 1 if rolls < 3 else "a box after the third roll",
                             ev["roll"])
        if ev["type"] == "score" and rolls == 0:
            self.checks.stop("roll.count", i, "type", "roll (a turn begins with a roll)", "score")

    # -- every other event: before play, and whatever comes out of its place

    def other(self, st: ReplayState, i: int, ev) -> None:
        """An event other than a roll or a score during play: its format, its place in the game, then its step."""
        kind = self.event_format(i, ev)
        if st.phase in ("over", "abandoned"):
            self.checks.stop("game.complete", i, "type", "no event after " + (
                "the last box" if st.phase == "over" else "the abandon event"), kind)
        if st.phase == "seeds" and len(st.seeds) == len(self.setup.senders) and kind not in ("start", "client_seed"):
            self.checks.stop("turn.order", i, "type", "start (it follows the last client seed)", kind)
        step = STEPS_BEFORE_PLAY.get(kind)
        if step is None:  # a roll or a score before play began
            self.checks.stop("turn.order", i, "type", "start before any roll or score", kind)
        step(self, st, i, ev)

    def client_seed_commit(self, st: ReplayState, i: int, ev: dict) -> None:
        """client_seed.commit (SPEC §2.2, version 2): each human seat commits once, before any seed is revealed."""
        s, humans = ev["seat"], self.setup.humans
        if st.phase != "seeds" or st.seeds:
            self.checks.stop("client_seed.commit", i, "type", "every commitment before any client seed", ev["type"])
        if s not in humans:
            self.checks.stop("client_seed.commit", i, "seat", f"a human seat: {humans}", s)
        if s in st.commitments:
            self.checks.stop("client_seed.commit", i, "seat", "one commitment per seat", s)
        st.commitments[s] = ev["commitment"]
        st.committed_keys[s] = ev.get("player_key")

    def client_seed(self, st: ReplayState, i: int, ev: dict) -> None:
        """client_seed.valid (SPEC §2.2): one seed from each human seat (else the operator), before play."""
        s, senders, humans = ev["seat"], self.setup.senders, self.setup.humans
        if st.phase != "seeds":
            self.checks.stop("client_seed.valid", i, "type", "no client seed once play has started", ev["type"])
        if self.setup.committed:
            self.check_reveal(st, i, ev)
        if s not in senders:
            self.checks.fail("client_seed.valid", i, "seat",
                             f"a human seat: {humans}" if humans else "null (no human seat)", s)
        elif s in st.seeds:
            self.checks.fail("client_seed.valid", i, "seat", "one client seed per seat", s)
        else:
            if not client_seed_ok(ev["client_seed"]):
                self.checks.fail("client_seed.valid", i, "client_seed", "1 to 256 code points allowed by SPEC §2.2",
                                 ev["client_seed"])
            st.seeds[s] = ev["client_seed"]

    def check_reveal(self, st: ReplayState, i: int, ev: dict) -> None:
        """client_seed.commit: every commitment made before the first reveal, and this seed and salt open its own."""
        missing = [s for s in self.setup.humans if s not in st.commitments]
        if missing:
            self.checks.stop("client_seed.commit", i, "type",
                             f"a commitment from seat(s) {missing} before any client seed", ev["type"])
        seed, s = ev["client_seed"], ev["seat"]
        if type(seed) is not str or not client_seed_ok(seed) or s not in st.commitments:
            return  # client_seed.valid says what is wrong with it
        key = b""  # version 3: the commitment is over the seat's key too, which the reveal names again
        if self.setup.version >= 3:
            if ev["player_key"] != st.committed_keys[s]:
                self.checks.fail("client_seed.commit", i, "player_key", st.committed_keys[s], ev["player_key"])
            key = bytes.fromhex(ev["player_key"] or "")
        opened = sha256_hex(bytes.fromhex(ev["salt"]) + key + seed.encode("utf-8"))
        if opened != st.commitments[s]:  # (expected: the commitment; found: what this seed and salt hash to)
            self.checks.fail("client_seed.commit", i, "client_seed", st.commitments[s], opened)

    def start(self, st: ReplayState, i: int, ev: dict) -> None:
        """The start of play, once every client seed is in: from here the dice are derived (SPEC §2.3)."""
        if st.phase != "seeds":
            self.checks.stop("turn.order", i, "type", "roll or score", ev["type"])
        missing = [s for s in self.setup.senders if s not in st.seeds]
        if missing:
            self.checks.fail("client_seed.valid", i, "type", f"a client seed from seat(s) {missing} first",
                             ev["type"])
        if self.seed is not None:
            st.derive = Deriver(self.seed, self.setup.game_id, st.client_seeds(self.setup))
        st.cur = self.check_start(i, ev, st.derive)
        st.phase = "play"
        if self.narration is not None:
            self.narration.start(st.cur, ev["rolloff"] if self.setup.first == "random" else None)

    def check_start(self, i: int, ev: dict, derive: Deriver | None) -> int:
        """start.first: the fixed first seat, or the roll-off re-derived. Returns the true first seat."""
        first = self.setup.first
        if first != "random":
            self.checks.expect("start.first", i, "first", first, ev["first"])
            self.checks.expect("start.first", i, "rolloff", [], ev["rolloff"])
            return first
        rounds, alive = rolloff_rounds(self.setup.n, ev["rolloff"], derive)
        diff = first_difference(rounds, ev["rolloff"], "rolloff")
        if diff:
            self.checks.fail("start.first", i, *diff)
        if len(alive) == 1:
            self.checks.expect("start.first", i, "first", alive[0], ev["first"])
            return alive[0]
        self.checks.fail("start.first", i, "rolloff", "rounds until one seat has the highest sum", ev["rolloff"])
        return ev["first"]

    def abandon(self, st: ReplayState, i: int, ev: dict) -> None:
        """The end of an abandoned game (SPEC §4.3); version 2 also says who may abandon, when, and why; and given
        move receipts, an abandon in the player's name that the player did not sign must be among them (§5.7)."""
        if self.setup.version >= 2:
            self.check_abandon(i, ev, st.cur if st.phase == "play" else None)
        signed = ev["seat"] is not None and self.players.signs(ev["seat"])
        if self.acknowledged is not None and not signed:
            self.check_acknowledged(i, ev)
        who = abandoner(ev, self.setup.humans)
        self.checks.r.abandoned_by = who
        if self.tally is not None:
            self.tally.abandoned(ev, st.phase, st.total, signed)
        st.phase = "abandoned"
        if self.narration is not None:
            self.narration.abandon(who)

    def check_abandon(self, i: int, ev: dict, current: int | None) -> None:
        """game.abandon (version 2): a player abandons for a human seat, on its turn once play has started (or
        for the operator of a bots-only game); the server only on a timeout."""
        seat, reason, humans = ev["seat"], ev["reason"], self.setup.humans
        if reason not in ABANDON_REASONS:
            self.checks.fail("game.abandon", i, "reason", " or ".join(ABANDON_REASONS), reason)
        elif reason == "timeout" and seat is not None:
            self.checks.fail("game.abandon", i, "seat", "null (only the server abandons on a timeout)", seat)
        elif reason == "player" and seat is None and humans:
            self.checks.fail("game.abandon", i, "seat", "a seat (the server abandons only on a timeout)", seat)
        elif reason == "player" and seat is not None and seat not in humans:
            self.checks.fail("game.abandon", i, "seat", f"a human seat: {humans}", seat)
        elif reason == "player" and seat is not None and current is not None and seat != current:
            self.checks.fail("game.abandon", i, "seat", f"seat {current}, whose turn it is (or any seat before play)",
                             seat)

    def check_acknowledged(self, i: int, ev: dict) -> None:
        """game.abandon (SPEC §5.7): an unsigned abandon in the player's name is one the server answered, so one
        of the player's move receipts counts it."""
        seen = self.acknowledged.events
        if ev["seat"] in self.acknowledged.seats and seen < i + 1:
            self.checks.fail("game.abandon", i, "seat", f"a move receipt of at least {i + 1} events, which counts "
                             "this abandon", f"you hold no receipt of this abandon (your receipts acknowledge "
                             f"{seen} events)")

    def finish(self, st: ReplayState) -> None:
        """Every event went through its checks: those that ran and did not fail pass."""
        passed = self.checks.passed
        passed("client_seed.valid")
        if self.setup.committed:
            passed("client_seed.commit")
        if st.phase == "abandoned" and (self.setup.version >= 2 or self.acknowledged is not None):
            passed("game.abandon")
        if st.phase != "seeds":
            passed("start.first")
        if st.n_rolls:
            passed("turn.order", "roll.count", "roll.hold", "roll.dice")
        if st.n_scores:
            passed("score.category", "score.points")
        if self.narration is not None:
            self.narration.end()
        if self.tally is not None:
            self.checks.r.audit = self.tally.report(self.doc, st)


STEPS_BEFORE_PLAY = {"client_seed_commit": EventReplay.client_seed_commit, "client_seed": EventReplay.client_seed,
                     "start": EventReplay.start, "abandon": EventReplay.abandon}  # (abandon: at any time)


def rolloff_rounds(n: int, logged: list, derive: Deriver | None) -> tuple[list, list[int]]:
    """(the roll-off's rounds, the seats still in after them): every seat throws five dice, the highest sums go
    on to the next round until one is left (SPEC §4.2). Without a seed, the logged dice are taken."""
    dice_logged = {(r, e["seat"]): e["dice"] for r, rnd in enumerate(logged, 1) for e in rnd}
    rounds, alive, r = [], list(range(n)), 1
    while len(alive) > 1 and r <= 1000:
        if derive is None and r > len(logged):  # no seed: check the logged roll-off is consistent
            break
        rnd = [{"seat": s, "dice": derive.rolloff(r, s) if derive else dice_logged.get((r, s))} for s in alive]
        rounds.append(rnd)
        if any(e["dice"] is None for e in rnd):
            break
        best = max(sum(e["dice"]) for e in rnd)
        alive = [e["seat"] for e in rnd if sum(e["dice"]) == best]
        r += 1
    return rounds, alive


def first_difference(expected, found, path: str):
    """(path, expected, found) at the first place two JSON values differ, or None."""
    if type(expected) is list and type(found) is list and len(expected) == len(found):
        for i, (e, f) in enumerate(zip(expected, found)):
            d = first_difference(e, f, f"{path}[{i}]")
            if d:
                return d
        return None
    if type(expected) is dict and type(found) is dict and expected.keys() == found.keys():
        for k in expected:
            d = first_difference(expected[k], found[k], f"{path}.{k}")
            if d:
                return d
        return None
    same = expected == found and type(expected) is type(found)
    return None if same else (path, expected, found)


def abandoner(ev: dict, humans: list) -> str:
    """Who abandoned, in words (the verifier's output names an abandon by the server)."""
    if ev["seat"] is not None:
        return f"seat {ev['seat']}"
    if ev.get("reason") == "timeout":
        return "THE SERVER, on a timeout"
    return "the operator" if not humans else "THE SERVER"


class BotReplay:
    """bot.identity and bot.decision (SPEC §4.5): every bot seat names a published policy, and each of its moves
    is the one that policy makes, given the dice and the derived tie-breaks."""

    def __init__(self, checks: Checks, bots, setup: GameSetup):
        self.checks, self.bots, self.setup = checks, bots, setup
        self.published: dict[int, bool] = {}  # bot seat -> it names a published policy

    def check_identities(self) -> None:
        for s, seat in enumerate(self.setup.seats):
            if seat["type"] == "bot":
                problem = self.bots.identity_problem(seat["bot"])
                if problem:
                    self.checks.fail("bot.identity", None, f"header.seats[{s}].bot.{problem[0]}", problem[1],
                                     problem[2])
                self.published[s] = not problem
        self.checks.passed("bot.identity")

    def check_decision(self, st: ReplayState, i: int, ev: dict, turn: int) -> None:
        """The move of event i, made by the bot of the seat to move after its roll `st.rolls` of `turn`."""
        seat, rolls, derive = st.cur, st.rolls, st.derive
        if not self.published.get(seat) or derive is None:
            return
        setup = self.setup
        try:
            action, value = self.bots.decide(
                setup.seats[seat]["bot"]["id"], setup.rules, dict(st.boxes[seat]), tuple(st.dice), rolls,
                st.bonus[seat][1], setup.upper_first, lambda k: derive.tiebreak(seat, turn, rolls, k))
        except TableError:
            raise  # the optimal table is missing: a usage error (exit 2), not a decision of this log
        except Exception as e:  # the published policy cannot decide here (e.g. a house rule it does not play)
            self.checks.fail("bot.decision", i, "type", f"a decision of the policy, which failed: {e!r}", ev["type"])
            return
        if action != ev["type"]:
            self.checks.fail("bot.decision", i, "type", f"{action} {list(value) if action == 'roll' else value}",
                             f"{ev['type']} {ev['hold'] if ev['type'] == 'roll' else ev['category']}")
        elif action == "roll":
            self.checks.expect("bot.decision", i, "hold", list(value), ev["hold"])
        else:
            self.checks.expect("bot.decision", i, "category", value, ev["category"])
        self.checks.passed("bot.decision")


class Narration:
    """The game turn by turn, in words (verbose): one line per turn, its rolls (held dice in brackets) and box."""

    def __init__(self, lines: list[str]):
        self.lines, self.turn = lines, ""  # the turn being played, until its box

    def start(self, first: int, rolloff: list | None) -> None:
        self.lines.append(f"  start: seat {first} plays first" + (
            f" (roll-off: {rolloff_text(rolloff)})" if rolloff is not None else ""))

    def roll(self, seat: int, turn: int, roll: int, dice: list, hold: list) -> None:
        self.turn += (f"  seat {seat} turn {turn}:" if roll == 1 else "") + " " + " ".join(
            f"[{d}]" if p in hold else str(d) for p, d in enumerate(dice)) + " |"

    def score(self, cat: str, scored: tuple) -> None:
        pts, joker, yb, ub, total = scored
        extra = "".join(s for s, on in ((" joker", joker), (f" +{ub} upper bonus", ub),
                                        (f" +{yb} Yahtzee bonus", yb)) if on)
        self.lines.append(f"{self.turn} {cat} {pts}{extra} (total {total})")
        self.turn = ""

    def abandon(self, who: str) -> None:
        self.end()
        self.lines.append("  abandoned by " + who)

    def end(self) -> None:
        if self.turn:
            self.lines.append(self.turn + " (turn not finished)")
            self.turn = ""


def rolloff_text(rounds) -> str:
    return "; ".join(", ".join(f"seat {e['seat']} {sum(e['dice'])}" for e in rnd) for rnd in rounds)


class Tally:
    """What the audit aggregates (verifier.audit): the freshly rolled faces counted by seat, by roll number and by
    position; who was ahead after each box filled (bots against humans) and at an abandon."""

    def __init__(self, setup: GameSetup):
        self.setup = setup
        self.faces = {"seat": [[0] * 6 for _ in range(6)], "roll": [[0] * 6 for _ in range(3)],
                      "position": [[0] * 6 for _ in range(5)]}
        self.standings = dict.fromkeys(STANDINGS, 0) if setup.bot_seats and setup.humans else None
        self.abandon = None

    def roll(self, seat: int, roll: int, dice: list, hold: list) -> None:
        by_seat, by_roll, by_position = self.faces["seat"][seat], self.faces["roll"][roll - 1], self.faces["position"]
        for p in range(5):
            if p not in hold:
                by_seat[dice[p] - 1] += 1
                by_roll[dice[p] - 1] += 1
                by_position[p][dice[p] - 1] += 1

    def scored(self, total: list[int]) -> None:
        if self.standings is not None:
            self.standings[self.standing(total)] += 1

    def abandoned(self, ev: dict, phase: Phase, total: list[int], signed: bool) -> None:
        """`signed`: by a seat that signed it (version 3), the player's own; else whoever it names, the operator
        could have written it."""
        humans = self.setup.humans
        self.abandon = {"by": "seat" if ev["seat"] is not None else "server" if humans else "operator",
                        "reason": ev.get("reason"), "signed": signed, "during": phase,
                        "standing": self.standing(total) if self.standings is not None else None}

    def standing(self, total: list[int]) -> str:
        """Who leads a game of bots and humans right now: the best bot's total against the best human's."""
        bots = max(total[s] for s in self.setup.bot_seats)
        people = max(total[s] for s in self.setup.humans)
        return STANDINGS[0] if bots > people else STANDINGS[1] if people > bots else STANDINGS[2]

    def report(self, doc: dict, st: ReplayState) -> dict:
        h, final = doc["header"], doc["final"]
        return {"faces": self.faces, "rolls": st.n_rolls, "commitment": h["commitment"],
                "server_seed": final["server_seed"] if final else None,
                "client_seeds": st.client_seeds(self.setup),
                # a bot under the upper_first house rule plays another game than the published one
                "players": [(s["bot"]["id"] + (" (upper_first)" if h["upper_first"] else ""))
                            if s["type"] == "bot" else "human" for s in h["seats"]],
                "abandon": self.abandon, "standings": self.standings}
