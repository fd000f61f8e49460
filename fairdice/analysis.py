"""The coach: every decision of a finished or abandoned game, valued against optimal play (SPEC §4.7).

After each roll a seat either holds some dice and rolls again, or fills a box.  Each such decision is valued
with the hint's engine (`fairdice.hint`, the `optimal` tables of SPEC §4.6): the expected final score of the
seat's own card after the choice made and after the best choice, and the expected points lost between them.
A seat's game is valued as solitaire: the other seats' cards never change what a box is worth to it, and the
optimal table maximises the seat's own expected total, not its chance of winning.

Pure: the log's events in, a JSON-friendly document out.  The game's dice must be public, so only a game that
is over (its seed revealed) is analysed.  Nothing here verifies the log (signatures, dice, bot decisions: that
is `fairdice-verify`); it checks only that the events it values make sense as a game, and says which event and
field do not.  The upper-first house rule has no optimal table: its analysis says it cannot judge, and why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .bots.base import TIE_TOLERANCE
from .bots.optimal import SolvedTable, TableSource
from .bots.optimal.policy import NO_TABLES
from .bots.space import KEEP_INDEX
from .errors import FairdiceError, NotNowError
from .rules import DICE, RuleSet, options, ruleset, totals

ENGINE = "optimal"
VALUE_KIND = "expected_final_score"
UPPER_FIRST_REASON = "upper_first"
UPPER_FIRST_TEXT = ("the optimal engine does not cover the upper-first house rule (SPEC §4.5), so there is no "
                    "optimal play to value these decisions against")
SETUP_EVENTS = ("client_seed_commit", "client_seed", "start")


class AnalysisUnavailableError(FairdiceError):
    """The game cannot be judged (the upper-first house rule): no optimal table values its decisions."""


def analyze(log: dict, tables: TableSource | None = None) -> dict:
    """The analysis of a finished or abandoned game's log (SPEC §5): per seat, every decision valued.

    Returns {"game_id", "rules", "upper_first", "status", "available", "engine", "value_kind", "seats"}: each
    seat {"seat", "name", "type", "bot", "total_expected_loss", "decision_count", "mistakes", "total",
    "decisions"}, each decision {"event", "turn", "position": {"card", "dice", "rolls_left", "roll", "banked"},
    "kind" ("hold" or "box"), "choice", "best", "expected_made", "expected_best", "loss"}.  Under the
    upper-first house rule `available` is false, `reason` and `detail` say why, and `seats` is empty.
    Raises FairdiceError("invalid_log", ..., event=, field=) for events that are not a game, and
    NotNowError("game_not_over") for a log whose game is still being played (its dice are not public yet).
    `tables` is the optimal engine's table source (`fairdice.adapters.table_cache.source()`), asked once."""
    head, events = _check_document(log)
    rules = _rules_of(head)
    upper_first = head.get("upper_first", False)
    doc = {"game_id": head.get("game_id"), "rules": rules.id, "upper_first": upper_first,
           "status": log["final"].get("status"), "engine": ENGINE, "value_kind": VALUE_KIND}
    if upper_first:
        return {**doc, "available": False, "reason": UPPER_FIRST_REASON, "detail": UPPER_FIRST_TEXT, "seats": []}
    seats = head["seats"]
    cards = [_Card(rules) for _ in seats]
    decisions: list[list[dict]] = [[] for _ in seats]
    table = None
    for made in _decisions(rules, events, cards):
        table = table or _table(tables, rules)
        decisions[made.seat].append(_valued(table, made))
    return {**doc, "available": True, "seats": [_seat_summary(i, seat, cards[i], decisions[i])
                                                for i, seat in enumerate(seats)]}


def _table(tables: TableSource | None, rules: RuleSet) -> SolvedTable:
    """The optimal table that values this game's decisions, from the source the caller passed (the core reads
    no file: `fairdice.adapters.table_cache.source()` is the cache's)."""
    if tables is None:
        raise FairdiceError("table_unavailable", NO_TABLES)
    return tables(rules.id)


def require_available(doc: dict) -> dict:
    """`doc` if it judged the game; else raise AnalysisUnavailableError with its reason (the API answers with it)."""
    if not doc["available"]:
        raise AnalysisUnavailableError("analysis_unavailable", doc["detail"], reason=doc["reason"])
    return doc


# --- reading the log ------------------------------------------------------------------------------------

def _invalid(message: str, event: int | None = None, field: str | None = None) -> FairdiceError:
    where = (f"event {event}: " if event is not None else "") + (f"field {field}: " if field else "")
    return FairdiceError("invalid_log", where + message, event=event, field=field)


def _check_document(log) -> tuple[dict, list]:
    """The header and events of a log whose game is over."""
    if not isinstance(log, dict):
        raise _invalid("a log is a JSON object (SPEC §5)")
    head, events, final = log.get("header"), log.get("events"), log.get("final", None)
    if not isinstance(head, dict):
        raise _invalid("must be an object", field="header")
    if not isinstance(events, list):
        raise _invalid("must be an array", field="events")
    if final is None:
        raise NotNowError("game_not_over", "the game is still being played: only a finished or abandoned game, whose "
                                           "seed is revealed, can be analysed")
    if not isinstance(final, dict):
        raise _invalid("must be an object", field="final")
    seats = head.get("seats")
    if not isinstance(seats, list) or not seats or not all(isinstance(s, dict) for s in seats):
        raise _invalid("must be an array of seats", field="header.seats")
    if not isinstance(head.get("upper_first", False), bool):
        raise _invalid("must be true or false", field="header.upper_first")
    return head, events


def _rules_of(head: dict) -> RuleSet:
    try:
        return ruleset(head.get("rules"))
    except FairdiceError as exc:
        raise _invalid(exc.message, field="header.rules") from None


class _Card:
    """One seat's card as the events fill it."""

    def __init__(self, rules: RuleSet):
        self.rules = rules
        self.boxes: dict[str, int | None] = {cid: None for cid in rules.category_ids}
        self.yahtzee_bonus = 0

    @property
    def banked(self) -> int:
        return totals(self.rules, self.boxes, self.yahtzee_bonus).total


@dataclass(frozen=True)
class _Made:
    """A decision as the log shows it: after roll `roll` of a turn with `dice`, the seat held `hold` and rolled
    again (event `event` is that roll), or filled `category` (event `event` is the score)."""
    seat: int
    event: int
    turn: int
    boxes: dict
    yahtzee_bonus: int
    dice: tuple
    roll: int
    hold: tuple | None = None
    category: str | None = None


@dataclass
class _Throw:
    """The last roll of the turn being played."""
    seat: int
    turn: int
    roll: int
    dice: tuple


def _decisions(rules: RuleSet, events: list, cards: list[_Card]):
    """Every decision of the game in event order; the cards are filled as the events go."""
    throw: _Throw | None = None
    for i, event in enumerate(events):
        if not isinstance(event, dict):
            raise _invalid("an event is an object", i)
        kind = event.get("type")
        if kind in SETUP_EVENTS:
            continue
        if kind == "abandon":
            if i != len(events) - 1:
                raise _invalid("the game ends at an abandon; events follow it", i, "type")
            return
        if kind not in ("roll", "score"):
            raise _invalid(f"unknown event type {kind!r}", i, "type")
        seat = _int(event, "seat", i, 0, len(cards) - 1)
        if kind == "roll":
            roll, dice, hold = _int(event, "roll", i, 1, 3), _dice(event, i), _hold(event, i)
            if roll == 1:
                if throw is not None:
                    raise _invalid(f"a turn begins while seat {throw.seat}'s turn is not over", i, "roll")
                if hold:
                    raise _invalid("the first roll of a turn holds nothing", i, "hold")
            else:
                _follows(throw, seat, roll, i)
                if any(dice[p] != throw.dice[p] for p in hold):
                    raise _invalid("a held die changed", i, "dice")
                yield _made(throw, cards, i, hold=hold)
            throw = _Throw(seat, _int(event, "turn", i, 1, len(rules.categories)), roll, dice)
        else:
            if throw is None or throw.seat != seat:
                raise _invalid("a box is filled before its seat has rolled this turn", i, "seat")
            category = event.get("category")
            card = cards[seat]
            legal = options(rules, card.boxes, throw.dice)
            if category not in legal:
                raise _invalid(f"{category!r} is not a box open to these dice ({', '.join(legal)})", i, "category")
            if event.get("points") != legal[category].points:
                raise _invalid(f"the rules give {legal[category].points}, the log {event.get('points')!r}", i,
                               "points")
            yield _made(throw, cards, i, category=category)
            card.boxes[category] = legal[category].points
            card.yahtzee_bonus += legal[category].yahtzee_bonus
            throw = None


def _made(throw: _Throw, cards: list[_Card], event: int, hold=None, category=None) -> _Made:
    card = cards[throw.seat]
    return _Made(throw.seat, event, throw.turn, dict(card.boxes), card.yahtzee_bonus, throw.dice, throw.roll, hold,
                 category)


def _follows(throw: _Throw | None, seat: int, roll: int, event: int) -> None:
    if throw is None or throw.seat != seat or throw.roll != roll - 1:
        raise _invalid(f"roll {roll} of seat {seat} does not follow its roll {roll - 1} of this turn", event, "roll")


def _int(event: dict, field: str, i: int, lo: int, hi: int) -> int:
    value = event.get(field)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise _invalid(f"must be an integer {lo}..{hi}, got {value!r}", i, field)
    return value


def _dice(event: dict, i: int) -> tuple[int, ...]:
    dice = event.get("dice")
    if not isinstance(dice, list) or len(dice) != DICE or \
            not all(type(d) is int and 1 <= d <= 6 for d in dice):
        raise _invalid(f"must be {DICE} integers 1..6, got {dice!r}", i, "dice")
    return tuple(dice)


def _hold(event: dict, i: int) -> tuple[int, ...]:
    hold = event.get("hold")
    if not isinstance(hold, list) or not all(type(p) is int and 0 <= p < DICE for p in hold) \
            or list(hold) != sorted(set(hold)):
        raise _invalid(f"must be sorted distinct positions 0..{DICE - 1}, got {hold!r}", i, "hold")
    return tuple(hold)


# --- valuing ------------------------------------------------------------------------------------------

def _valued(table: SolvedTable, made: _Made) -> dict:
    """One decision against every alternative of its position (the hint's candidates, SPEC §4.5)."""
    rules, rolls_left = table.rules, 3 - made.roll
    candidates, values = table.choices(made.boxes, made.dice, rolls_left)
    floor = max(values) - TIE_TOLERANCE
    best = next(i for i, value in enumerate(values) if value >= floor)  # canonical order among the tied
    legal = options(rules, made.boxes, made.dice)
    if made.category is not None:
        kind, choice = "box", _box(made.category, legal)
        value = next(v for d, v in zip(candidates, values) if d.category == made.category)
    else:
        keep = tuple(sorted(made.dice[p] for p in made.hold))
        kind, choice = "hold", {"action": "roll", "hold": list(made.hold), "keep": list(keep)}
        value = _hold_value(table, made, candidates, values, keep, rolls_left)
    if value >= floor:  # the choice made is one of the best (tied within 10^-9, as the bots' ties)
        best_choice, best_value, loss = choice, value, 0.0
    else:
        d = candidates[best]
        best_choice = _box(d.category, legal) if d.action == "score" else \
            {"action": "roll", "hold": list(d.hold), "keep": sorted(made.dice[p] for p in d.hold)}
        best_value, loss = values[best], values[best] - value
    banked = totals(rules, made.boxes, made.yahtzee_bonus).total
    return {"event": made.event, "turn": made.turn,
            "position": {"card": made.boxes, "dice": list(made.dice), "rolls_left": rolls_left, "roll": made.roll,
                         "banked": banked},
            "kind": kind, "choice": choice, "best": best_choice,
            "expected_made": banked + value, "expected_best": banked + best_value, "loss": loss}


def _hold_value(table: SolvedTable, made: _Made, candidates, values, keep, rolls_left) -> float:
    """The value of holding `keep` and rolling the rest: the candidate's own value, or, for a hold of all five
    (allowed, SPEC §4.3: the roll changes nothing, so it is worth the same dice with a roll fewer), the table's."""
    for d, v in zip(candidates, values):
        if d.action == "roll" and tuple(sorted(made.dice[p] for p in d.hold)) == keep:
            return v
    return float(table.hold_values(made.boxes, rolls_left)[KEEP_INDEX[keep]])


def _box(category: str, legal: dict) -> dict:
    opt = legal[category]
    return {"action": "score", "category": category, "points": opt.points, "yahtzee_bonus": opt.yahtzee_bonus,
            "joker": opt.joker}


def _seat_summary(i: int, seat: dict, card: _Card, decisions: list[dict]) -> dict:
    bot = seat.get("bot")
    return {"seat": i, "name": seat.get("name"), "type": seat.get("type"),
            "bot": bot.get("id") if isinstance(bot, dict) else None,
            "total_expected_loss": math.fsum(d["loss"] for d in decisions),
            "decision_count": len(decisions), "mistakes": sum(d["loss"] > 0 for d in decisions),
            "total": card.banked, "decisions": decisions}
