"""The adversarial corpus (`tests/vectors/forged/`): logs forged as the dishonest operator forges them.

    python tests/support/forge.py          # rewrite tests/vectors/forged/
    python tests/support/forge.py --check  # exit 1 if the directory is out of date

The operator holds the server's signing key, so a forged log is re-signed and its signatures hold:
only the replay, the trusted key or the player's receipt can catch it.  The genuine games are played
with the core (`fairdice`) under a fixed key and seeds derived from fixed labels, so every byte is
reproducible (Ed25519 signatures are deterministic).  Each case says what the operator did and the
verdict and check that SPEC §7 calls for.  A change that leaves a legal game (the core, fed the same
moves, writes the same log, and every bot move is its policy's) is no forgery: it must verify.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

# run as a script: the repository (fairdice) and tests/ (the package `support`) on the path
sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]
from support import REPO as ROOT  # noqa: E402
from support import VECTORS  # noqa: E402

OUT = VECTORS / "forged"

from fairdice import derive  # noqa: E402
from fairdice.adapters import table_cache  # noqa: E402
from fairdice.bots import position_of  # noqa: E402
from fairdice.bots.base import TIE_TOLERANCE, Decision  # noqa: E402
from fairdice.game import Game, Seat, Setup  # noqa: E402
from fairdice.log import LOG_FORMAT, Signer, canonical, final_block, move_receipt, setup_from_header  # noqa: E402
from fairdice.log import header as make_header  # noqa: E402
from fairdice.players import PlayerKey  # noqa: E402
from fairdice.rules import options, ruleset, totals  # noqa: E402

# the published bots, the optimal one with its tables from the fairdice cache (built there if missing, when first asked)
BOTS = table_cache.bots()

ABOUT = ("The adversarial corpus of SPEC §7, made by tests/support/forge.py: genuine games played by the core, "
         "and logs forged by an operator who holds the server key and re-signs what it changes. Every "
         "verifier is held to it: run each file with its trusted keys, receipt and allow_unsigned; a "
         "'fail' case must list its check among the failures, an 'error' case is not a log at all. The "
         "server seeds are derived from public labels, but the headers say seed_secret true, as the "
         "server's do.")


def _signer(label: str) -> Signer:
    return Signer.from_private_bytes(hashlib.sha256(f"fairdice forged corpus: {label}".encode()).digest())


OPERATOR = _signer("the operator's signing key")
OTHER = _signer("another signing key")
OPERATOR_HEX, OTHER_HEX = OPERATOR.public_key.hex(), OTHER.public_key.hex()
RECEIPT_REQUIRED = ("game_id", "seat", "commitment", "client_seed")
EVENT_TYPES = ("client_seed", "start", "roll", "score", "abandon")


def server_seed(label: str) -> bytes:
    return hashlib.sha256(f"fairdice forged corpus: server seed {label}".encode()).digest()


# --------------------------------------------------------------------------- playing

Mover = Callable[[Game], list]  # makes the move of the seat to play; returns the events it adds


def most_common_face(dice) -> list[int]:
    face = max(set(dice), key=lambda f: (dice.count(f), f))
    return [p for p, d in enumerate(dice) if d == face]


def gains(game: Game, dice) -> dict[str, int]:
    """What each legal box would add to the total of the seat to play, with these dice (bonuses included)."""
    seat = game.current_seat
    card, before = game.card(seat), game.totals(seat).total
    out = {}
    for cat, opt in options(game.rules, card.boxes, dice, game.setup.upper_first).items():
        after = totals(game.rules, {**card.boxes, cat: opt.points}, card.yahtzee_bonus + opt.yahtzee_bonus)
        out[cat] = after.total - before
    return out


def best_box(game: Game, dice=None) -> str:
    scored = gains(game, dice or game.dice)
    return max(scored, key=scored.get)  # the first of the best, in table order


def human_move(game: Game) -> list[dict]:
    """The human seats' player: three rolls keeping the most common face (stops at five alike), then the
    box of highest immediate gain."""
    seat = game.current_seat
    if game.rolls_made == 0:
        return game.roll(seat)
    if game.rolls_left and len(set(game.dice)) > 1:
        return game.roll(seat, most_common_face(game.dice))
    return game.score(seat, best_box(game))


def bot_decision(game: Game) -> Decision:
    return BOTS[game.setup.seats[game.current_seat].bot].decide(position_of(game), game.tiebreak)


def bot_move(game: Game) -> list[dict]:
    seat = game.current_seat
    if game.rolls_made == 0:
        return game.roll(seat)
    return do(game, bot_decision(game))


def do(game: Game, decision: Decision) -> list[dict]:
    seat = game.current_seat
    return game.roll(seat, decision.hold) if decision.action == "roll" else game.score(seat, decision.category)


CURRENT = "the seat to play"  # Base.abandoned_by: whoever's turn it is when the game is abandoned


@dataclass(frozen=True)
class Base:
    """A genuine game: its setup, server seed, the client seed of each sender (a human seat, or None for
    the operator of a bot-only game) in the order they arrived (in version 2 with several humans: the
    order of the commitments, then of the reveals), and where it was abandoned, if it was."""
    name: str
    setup: Setup
    seed: bytes
    client_seeds: dict
    abandon_after: int | None = None  # abandoned once this many boxes are filled...
    abandoned_by: int | str | None = None  # ...by this seat (None: the server; CURRENT: the seat to play)...
    abandon_reason: str = "player"  # ...for this reason (version 2; a version 1 abandon gives none)


def salt(setup: Setup, seat: int) -> str:
    """The salt a human seat commits to its client seed with (SPEC §2.2, version 2): 32 bytes, fixed here."""
    return hashlib.sha256(f"fairdice forged corpus: salt of seat {seat} in {setup.game_id}".encode()).hexdigest()


def seed_commitment(setup: Setup, seat: int, client_seed: str) -> str:
    return derive.seed_commitment(salt(setup, seat), client_seed)


def opening(setup: Setup, seed: bytes, client_seeds: dict) -> list[dict]:
    """The client seed events and the start event, as the core writes them: in a game that commits to its
    client seeds, every commitment first, then every reveal."""
    game = Game(setup, seed)
    committed = setup.commits_client_seeds
    if committed:
        for sender, text in client_seeds.items():
            game.commit_client_seed(sender, seed_commitment(setup, sender, text))
    for sender, text in client_seeds.items():
        game.supply_client_seed(sender, text, salt(setup, sender) if committed else None)
    return list(game.events)


def play(base: Base, movers: dict | None = None, seed: bytes | None = None, client_seeds: dict | None = None,
         events: list | None = None) -> list[dict]:
    """The events of the game played to its end (or its abandon): humans by human_move, bots by their
    policy, except the seats given a mover.  Each move sees the game restored from the events so far, so
    a mover may add events that the core would never write."""
    seed = seed or base.seed
    events = events if events is not None else opening(base.setup, seed, client_seeds or base.client_seeds)
    while True:
        game = Game.restore(base.setup, seed, events)
        if game.status != "playing":
            return events
        if base.abandon_after is not None and sum(e["type"] == "score" for e in events) >= base.abandon_after:
            seat = game.current_seat if base.abandoned_by == CURRENT else base.abandoned_by
            return events + game.abandon(seat, base.abandon_reason)
        seat = game.current_seat
        mover = (movers or {}).get(seat) or (bot_move if base.setup.seats[seat].is_bot else human_move)
        events = events + mover(game)


def roll_event(seed: bytes, game: Game, turn: int, roll: int, hold=()) -> dict:
    """A roll of the seat to play under any turn and roll label, its dice derived for that label."""
    seat = game.current_seat
    dice = derive.roll_dice(seed, game.setup.game_id, game.client_seeds, seat, turn, roll, game.dice, hold)
    return {"type": "roll", "seat": seat, "turn": turn, "roll": roll, "hold": list(hold), "dice": dice}


def score_event(game: Game, category: str, turn: int | None = None) -> dict:
    """The score event the core writes for `category` with the current dice (under any turn label)."""
    seat = game.current_seat
    card = game.card(seat)
    opt = options(game.rules, card.boxes, game.dice, game.setup.upper_first)[category]
    before = game.totals(seat)
    after = totals(game.rules, {**card.boxes, category: opt.points}, card.yahtzee_bonus + opt.yahtzee_bonus)
    return {"type": "score", "seat": seat, "turn": game.turn if turn is None else turn, "category": category,
            "points": opt.points, "joker": opt.joker, "yahtzee_bonus": opt.yahtzee_bonus,
            "upper_bonus": after.upper_bonus - before.upper_bonus, "total": after.total}


# --------------------------------------------------------------------------- logs and receipts

def unsigned(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k not in ("commitment_signature", "signature")}


def signed(doc: dict, signer: Signer = OPERATOR, header_signer: Signer | None = None) -> dict:
    """The document signed as the server signs it (SPEC §6): the header, and the log once it is over."""
    doc = unsigned(doc)
    doc["commitment_signature"] = (header_signer or signer).sign(canonical(doc["header"]))
    if doc["final"] is not None:
        doc["signature"] = signer.sign(canonical(doc))
    return doc


def log_of(setup: Setup, seed: bytes, events: list, signer: Signer = OPERATOR, header: dict | None = None) -> dict:
    """The signed log of these events (its final block computed by the core from the events)."""
    game = Game.restore(setup, seed, events)
    head = header or make_header(setup, derive.commitment(seed), signer)
    return signed({"format": LOG_FORMAT, "version": setup.version, "header": head, "events": events,
                   "final": final_block(game) if game.over else None}, signer)


@cache
def genuine(name: str) -> dict:
    base = BASES[name]
    return log_of(base.setup, base.seed, play(base))


def receipt(name: str, sender, minimal: bool = False) -> dict:
    """What the player of `sender` keeps from the genuine game: what it saw before play, and its seed."""
    doc, base = genuine(name), BASES[name]
    head = doc["header"]
    full = {"format": "fairdice-receipt", "version": 1, "game_id": head["game_id"], "seat": sender,
            "commitment": head["commitment"], "client_seed": base.client_seeds[sender], "header": head,
            "commitment_signature": doc["commitment_signature"], "public_key": head["public_key"]}
    return {k: full[k] for k in RECEIPT_REQUIRED} if minimal else full


def text(doc) -> bytes:
    """A log file's bytes: canonical JSON (any JSON would do: the signatures cover the parsed document)."""
    return canonical(doc) + b"\n"


def edited(doc, path: tuple, value):
    doc = copy.deepcopy(doc)
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


def with_events(doc: dict, events: list) -> dict:
    return {**copy.deepcopy(doc), "events": copy.deepcopy(events)}


# --------------------------------------------------------------------------- the core as oracle

class NotThePolicy(Exception):
    """A bot move that is not its published policy's decision."""


def replay_move(game: Game, event: dict) -> None:
    kind = event["type"]
    if kind == "client_seed_commit":
        game.commit_client_seed(event["seat"], event["commitment"])
    elif kind == "client_seed":
        game.supply_client_seed(event["seat"], event["client_seed"], event.get("salt"))
    elif kind in ("roll", "score"):
        seat = event["seat"]
        if type(seat) is not int:
            raise TypeError("seat")
        if game.current_seat == seat and game.setup.seats[seat].is_bot and game.rolls_made:
            logged = (Decision("roll", tuple(event["hold"])) if kind == "roll"
                      else Decision("score", (), event["category"]))
            if bot_decision(game) != logged:
                raise NotThePolicy
        game.roll(seat, event["hold"]) if kind == "roll" else game.score(seat, event["category"])
    elif kind == "abandon":
        game.abandon(event["seat"], event.get("reason", "player"))
    elif kind != "start":  # (the core writes the start event itself, after the last client seed)
        raise ValueError(kind)


def core_reproduces(doc: dict) -> bool:
    """True when the core, fed this log's moves, writes exactly this log signed by the operator, and every
    bot move in it is its policy's decision: then it is the log of a legal game, however it differs."""
    try:
        head = doc["header"]
        if type(head["seed_secret"]) is not bool:
            return False
        game = Game(setup_from_header(head), bytes.fromhex(doc["final"]["server_seed"]))
        for event in doc["events"]:
            replay_move(game, event)
        rebuilt = {"format": LOG_FORMAT, "version": game.setup.version, "events": game.events,
                   "final": final_block(game),
                   "header": make_header(game.setup, game.commitment, OPERATOR, head["seed_secret"])}
        return canonical(signed(rebuilt)) == canonical(doc)
    except Exception:  # the core refuses a move, or the log is not one it could have written
        return False


# --------------------------------------------------------------------------- the genuine games

ANN, BOB = {"type": "human", "name": "ann"}, {"type": "human", "name": "bob"}


def bot(policy: str) -> dict:
    return {"type": "bot", "bot": policy, "name": f"{policy} bot"}


BASES = {b.name: b for b in (
    Base("yacht-ann-vs-greedy", Setup.build("forged-yacht-1", "yacht", [ANN, bot("greedy")], first=0, version=1),
         server_seed("yacht-ann-vs-greedy"), {0: "ann typed this seed herself"}),
    Base("classic13-ann-vs-ev", Setup.build("forged-classic13-1", "classic13", [ANN, bot("ev")], first="random",
                                            version=1),
         server_seed("classic13-ann-vs-ev"), {0: "5e0c7a1f9b2d4c68a3e1f0b7d2c95a41"}),
    Base("yatzy-bot", Setup.build("forged-yatzy-bot-1", "yatzy", [bot("ev")], version=1),
         server_seed("yatzy-bot"), {None: "the operator's client seed"}),
    Base("yacht-ann-vs-bob", Setup.build("forged-yacht-2", "yacht", [ANN, BOB], first="random", upper_first=True,
                                         version=1),
         server_seed("yacht-ann-vs-bob"), {1: "bob's seed: béta \U0001F3B2", 0: "ann's seed for the game with bob"}),
    Base("classic13-abandoned", Setup.build("forged-classic13-2", "classic13",
                                            [ANN, {**bot("ev"), "name": "ev bot ✓"}], first="random",
                                            version=1),
         server_seed("classic13-abandoned"), {0: "ann's seed for a short game"}, abandon_after=3, abandoned_by=0),
    Base("yacht-optimal", Setup.build("forged-yacht-optimal-1", "yacht", [bot("optimal")], version=1),
         server_seed("yacht-optimal"), {None: "the operator's seed for the optimal bot"}),
)}
SHORT = "classic13-abandoned"  # the small log most single changes are made to
V1_BASES = tuple(BASES)  # log format version 1: legacy logs, which SPEC promises keep verifying

V2_BASES = {b.name: b for b in (
    Base("v2-yacht-ann-vs-bob", Setup.build("forged-v2-yacht-1", "yacht", [ANN, BOB], first="random", version=2),
         server_seed("v2-yacht-ann-vs-bob"),
         {1: "bob commits first: béta \U0001F3B2", 0: "ann's seed, committed second"}),
    Base("v2-classic13-ann-bob-ev", Setup.build("forged-v2-classic13-1", "classic13", [ANN, BOB, bot("ev")],
                                                first="random", version=2),
         server_seed("v2-classic13-ann-bob-ev"), {0: "ann's seed for three seats", 1: "bob's seed for three seats"},
         abandon_after=4, abandoned_by=CURRENT),
    Base("v2-yacht-ann-vs-greedy-timeout", Setup.build("forged-v2-yacht-2", "yacht", [ANN, bot("greedy")],
                                                       abandon_timeout=600, version=2),
         server_seed("v2-yacht-ann-vs-greedy-timeout"), {0: "ann's seed, and then she went quiet"},
         abandon_after=3, abandoned_by=None, abandon_reason="timeout"),
    Base("v2-yatzy-bot", Setup.build("forged-v2-yatzy-bot-1", "yatzy", [bot("greedy")], version=2),
         server_seed("v2-yatzy-bot"), {None: "the operator's seed, version 2"}, abandon_after=2, abandoned_by=None),
)}
BASES.update(V2_BASES)
TWO = "v2-yacht-ann-vs-bob"  # two humans who commit to their client seeds, a finished game
SHORT_V2 = "v2-classic13-ann-bob-ev"  # two humans and a bot, abandoned by the seat to play: the v2 sweep's log


# --------------------------------------------------------------------------- cases

@dataclass
class Case:
    name: str
    what: str
    data: bytes
    verdict: str  # "ok", "fail" or "error"
    check: str | None = None
    trusted_keys: tuple = (OPERATOR_HEX,)
    receipt: object = None
    allow_unsigned: bool = False
    move_receipts: object = None  # the move receipts the player kept (SPEC §5.6), given to --receipts
    audit_with: bytes | None = None  # an audit case: the other log audited together with this one (SPEC §7.1)

    def entry(self, file: str, audit_with: str | None = None) -> dict:
        entry = {"name": self.name, "file": file, "what": self.what, "trusted_keys": list(self.trusted_keys),
                 "receipt": self.receipt, "allow_unsigned": self.allow_unsigned, "verdict": self.verdict,
                 "check": self.check}
        if self.move_receipts is not None:  # (only there: the entries of the cases before them are unchanged)
            entry["move_receipts"] = self.move_receipts
        if audit_with is not None:
            entry["audit_with"] = audit_with
        return entry


def ok(name, what, doc, **kw) -> Case:
    return Case(name, what, doc if isinstance(doc, bytes) else text(doc), "ok", **kw)


def fail(name, what, doc, check, **kw) -> Case:
    return Case(name, what, doc if isinstance(doc, bytes) else text(doc), "fail", check, **kw)


def error(name, what, data: bytes, **kw) -> Case:
    return Case(name, what, data, "error", **kw)


def genuine_cases() -> Iterator[Case]:
    yield from genuine_games(V1_BASES)
    yield from more_genuine_cases()


def genuine_games(names) -> Iterator[Case]:
    """Each genuine game, checked against the operator's key and against the receipt of each sender."""
    for name in names:
        base, doc = BASES[name], genuine(name)
        yield ok(f"genuine-{name}", f"nothing: the genuine log of {name}, checked against the operator's key", doc)
        for sender in base.client_seeds:
            who = "the operator" if sender is None else base.setup.seats[sender].name
            yield ok(f"genuine-{name}-receipt-{who.replace(' ', '-')}",
                     f"nothing: the genuine log of {name}, checked against the receipt of {who}", doc,
                     receipt=receipt(name, sender))


def more_genuine_cases() -> Iterator[Case]:
    one = "yacht-ann-vs-greedy"
    yield ok(f"genuine-{one}-embedded-key", "nothing: a genuine log, checked without a trusted key (so only "
             "its self-consistency)", genuine(one), trusted_keys=())
    yield ok(f"genuine-{one}-two-trusted-keys", "nothing: a genuine log, checked against two trusted keys "
             "(key rotation), one of them the operator's", genuine(one), trusted_keys=(OTHER_HEX, OPERATOR_HEX))
    yield ok(f"genuine-{one}-minimal-receipt", "nothing: a genuine log, checked against a receipt with only "
             "the required fields", genuine(one), receipt=receipt(one, 0, minimal=True))
    yield ok(f"genuine-{SHORT}-receipt-key-only", "nothing: a genuine log checked with no trusted key but the "
             "receipt's public key, which is then the trusted one", genuine(SHORT), trusted_keys=(),
             receipt=receipt(SHORT, 0))
    spaced = (json.dumps(genuine(SHORT), indent=1, ensure_ascii=False) + "\n").encode()
    yield ok(f"genuine-{SHORT}-indented", "nothing: a genuine log written indented, its keys unsorted and the "
             "bot's name as raw UTF-8 (the signatures cover the parsed document)", spaced)


# ---- turn labels

def perfect_labels_mover(base: Base, first_label: int = 100, pool: int = 40_000) -> Mover:
    """Each turn of the seat: one roll under a turn label picked from a pool for its dice (the box of
    highest gain that any unused label gives), then that box; every die derives for its label."""
    labels: dict[tuple, list[int]] = {}  # the unused labels, by the faces they show

    def move(game: Game) -> list[dict]:
        seat, cs, gid = game.current_seat, game.client_seeds, game.setup.game_id
        if not labels:
            for label in range(first_label, first_label + pool):
                dice = derive.five_dice(base.seed, derive.message("roll", gid, cs, seat, label, 1))
                labels.setdefault(tuple(sorted(dice)), []).append(label)
        candidates = [(g, -ls[0], faces, cat) for faces, ls in labels.items() if ls
                      for cat, g in gains(game, faces).items()]
        _, _, faces, cat = max(candidates)
        label = labels[faces].pop(0)
        roll = roll_event(base.seed, game, label, 1)
        after = Game.restore(base.setup, base.seed, game.events + [roll])
        return [roll, score_event(after, cat, turn=label)]
    return move


def relabel_cases() -> Iterator[Case]:
    base = BASES["yacht-ann-vs-greedy"]
    doc = log_of(base.setup, base.seed, play(base, {1: perfect_labels_mover(base)}))
    yield fail(f"relabelled-bot-turns-{base.name}", "every turn of the bot is one roll under a turn label the "
               "operator picked for its perfect dice, which derive for that label; scores, totals and signatures "
               f"all agree (total {doc['final']['totals'][1]['total']})", doc, "turn.order")


# ---- roll counts

def one_turn_mover(base: Base, when: Callable[[Game], bool], forged: Callable[[Game], list]) -> Mover:
    """The seat's policy, except on the first turn where `when` holds, where `forged` moves."""
    target = []

    def move(game: Game) -> list[dict]:
        if not target and when(game):
            target.append(game.turn)
        if target and target[0] == game.turn:
            return forged(game)
        return bot_move(game)
    return move


def extra_rolls(base: Base) -> Callable[[Game], list]:
    def forged(game: Game) -> list[dict]:
        if game.rolls_made < 3:
            return bot_move(game)
        if game.rolls_made < 20 and len(set(game.dice)) > 1:
            return [roll_event(base.seed, game, game.turn, game.rolls_made + 1, most_common_face(game.dice))]
        return game.score(game.current_seat, best_box(game))
    return forged


def skipped_second_roll(base: Base) -> Callable[[Game], list]:
    def forged(game: Game) -> list[dict]:
        if game.rolls_made == 1:
            decision = bot_decision(game)
            if decision.action == "roll":
                return [roll_event(base.seed, game, game.turn, 3, decision.hold)]
        return bot_move(game)
    return forged


def first_roll_labelled(base: Base, label: int) -> Callable[[Game], list]:
    def forged(game: Game) -> list[dict]:
        if game.rolls_made == 0:
            return [roll_event(base.seed, game, game.turn, label)]
        return bot_move(game)
    return forged


def score_without_roll(base: Base) -> Callable[[Game], list]:
    def forged(game: Game) -> list[dict]:
        roll = roll_event(base.seed, game, game.turn, 1)
        after = Game.restore(base.setup, base.seed, game.events + [roll])
        return [score_event(after, best_box(after))]
    return forged


def forged_log(name: str, seat: int, when, forged) -> dict:
    base = BASES[name]
    events = play(base, {seat: one_turn_mover(base, when, forged(base))})
    return log_of(base.setup, base.seed, events)


def roll_count_cases() -> Iterator[Case]:
    doc = forged_log(SHORT, 1, lambda g: g.rolls_made == 3, extra_rolls)
    assert max(e.get("roll", 0) for e in doc["events"]) > 3
    yield fail("extra-rolls", "in one turn the bot rolls on after its third roll (rolls 4, 5, ... up to 20) until "
               "five alike or roll 20; every die derives for its roll number", doc, "roll.count")
    doc = forged_log(SHORT, 1, lambda g: g.rolls_made == 1 and bot_decision(g).action == "roll", skipped_second_roll)
    yield fail("missing-second-roll", "in one turn of the bot the roll numbered 2 is missing: after roll 1 comes "
               "a roll 3, its dice derived as roll 3", doc, "roll.count")
    doc = forged_log(SHORT, 1, lambda g: True, lambda b: first_roll_labelled(b, 2))
    yield fail("turn-begins-with-roll-2", "the bot's first turn begins with a roll numbered 2 (its dice derive "
               "for roll 2): its roll 1 was dropped", doc, "roll.count")
    doc = forged_log(SHORT, 1, lambda g: True, score_without_roll)
    yield fail("score-without-roll", "the bot's first turn is a score with no roll event before it (the "
               "points are those of the dice its roll 1 would have shown)", doc, "roll.count")
    short = genuine(SHORT)
    i = first_index(short, lambda e: e["type"] == "roll" and e["seat"] == 1)
    events = short["events"][:i + 1] + short["events"][i:]
    yield fail("duplicated-roll", "the bot's first roll appears twice in a row", signed(with_events(short, events)),
               "roll.count")


# ---- events out of place

def first_index(doc: dict, test, start: int = 0) -> int:
    return next(i for i, e in enumerate(doc["events"]) if i >= start and test(e))


def turn_span(doc: dict, seat: int, turn: int) -> tuple[int, int]:
    """[begin, end) of the events of one turn of one seat."""
    idx = [i for i, e in enumerate(doc["events"]) if e.get("seat") == seat and e.get("turn") == turn
           and e["type"] in ("roll", "score")]
    return idx[0], idx[-1] + 1


def moved(events: list, i: int, j: int) -> list:
    """The events with the one at i moved to position j."""
    events = list(events)
    events.insert(j, events.pop(i))
    return events


def order_cases() -> Iterator[Case]:
    yield from reordered_cases()
    yield from dropped_cases()
    yield from added_cases()


def reordered_cases() -> Iterator[Case]:
    short = genuine(SHORT)
    a0, a1 = turn_span(short, 0, 1)
    b0, b1 = turn_span(short, 1, 2)
    assert a1 == b0
    ev = short["events"]
    events = ev[:a0] + ev[b0:b1] + ev[a0:a1] + ev[b1:]
    yield fail("swapped-turns", "the bot's second turn is moved before ann's first turn (all dice and scores "
               "unchanged)", signed(with_events(short, events)), "turn.order")
    r1 = first_index(short, lambda e: e["type"] == "roll" and e["roll"] == 1 and e["seat"] == 0)
    assert short["events"][r1 + 1]["roll"] == 2
    yield fail("swapped-rolls", "ann's first two rolls change places",
               signed(with_events(short, moved(short["events"], r1, r1 + 1))), "roll.count")
    s = next(i for i, e in enumerate(short["events"]) if e["type"] == "score" and short["events"][i - 1]["roll"] > 1)
    yield fail("score-before-last-roll", "the first score after several rolls is moved before the last roll",
               signed(with_events(short, moved(short["events"], s, s - 1))), "turn.order")
    yield fail("start-before-client-seed", "the start event comes before ann's client seed",
               signed(with_events(short, moved(short["events"], 1, 0))), "client_seed.valid")
    two = genuine("yacht-ann-vs-bob")
    swapped = signed(with_events(two, moved(two["events"], 1, 0)))
    assert core_reproduces(swapped)
    yield ok("client-seeds-in-other-order", "not a forgery: the two client seeds are listed in the other order of "
             "arrival, which is free (client_seeds are in seat order whatever the arrival)", swapped)


def dropped_cases() -> Iterator[Case]:
    long, short = genuine("yacht-optimal"), genuine(SHORT)
    ev, sev = long["events"], short["events"]
    s = first_index(short, lambda e: e["type"] == "score" and e["seat"] == 1)
    yield fail("dropped-bot-score", "a score of the bot is left out, the rest as it was",
               signed(with_events(short, sev[:s] + sev[s + 1:])), "turn.order")
    yield fail("dropped-start", "the start event is left out", signed(with_events(short, sev[:1] + sev[2:])),
               "turn.order")
    yield fail("dropped-client-seed", "ann's client seed event is left out (the dice are those of the game with "
               "her seed)", signed(with_events(short, sev[1:])), "client_seed.valid")
    yield fail("dropped-abandon", "the abandon event is left out; the final block still says abandoned",
               signed(with_events(short, sev[:-1])), "game.complete")
    yield fail("dropped-last-score", "the last score of the game is left out; the final block still says finished",
               signed(with_events(long, ev[:-1])), "game.complete")
    tiny_log = tiny("no-seed")
    yield fail("no-operator-client-seed", "the bot-only game has no client seed event: the operator chose every "
               "die alone", signed(with_events(tiny_log, tiny_log["events"][1:])), "client_seed.valid")


def added_cases() -> Iterator[Case]:
    long, short = genuine("yacht-optimal"), genuine(SHORT)
    base = BASES["yacht-optimal"]
    ev, sev, cs = long["events"], short["events"], [base.client_seeds[None]]
    dice = derive.roll_dice(base.seed, base.setup.game_id, cs, 0, 13, 1)
    extra = {"type": "roll", "seat": 0, "turn": 13, "roll": 1, "hold": [], "dice": dice}
    yield fail("roll-after-the-end", "a thirteenth turn for the bot is added after the last box",
               signed(with_events(long, ev + [extra])), "game.complete")
    voided = edited(with_events(long, ev + [{"type": "abandon", "seat": None}]), ("final",),
                    {**long["final"], "status": "abandoned", "winner": None, "draw": False})
    yield fail("abandon-after-the-end", "the operator voids a finished game: an abandon event after the last box, "
               "the final block turned into an abandoned one", signed(voided), "game.complete")
    roll = next(e for e in sev if e["type"] == "roll" and e["seat"] == 1)
    yield fail("roll-after-abandon", "a roll of the bot after the abandon event",
               signed(with_events(short, sev + [roll])), "game.complete")
    yield fail("second-start", "a second start event right after the first",
               signed(with_events(short, sev[:2] + [sev[1]] + sev[2:])), "turn.order")
    s = first_index(short, lambda e: e["type"] == "score")
    restart = {"type": "start", "first": 1 - sev[1]["first"], "rolloff": []}
    yield fail("start-mid-game", "a start event after the first score, handing the move to the other seat",
               signed(with_events(short, sev[:s + 1] + [restart] + sev[s + 1:])), "turn.order")
    late = {"type": "client_seed", "seat": 0, "client_seed": "a second seed from ann"}
    yield fail("client-seed-after-start", "a second client seed for ann after play started",
               signed(with_events(short, sev[:2] + [late] + sev[2:])), "client_seed.valid")
    twice = {"type": "client_seed", "seat": 0, "client_seed": "ann again"}
    yield fail("client-seed-twice", "ann's seat sends a second client seed before the start",
               signed(with_events(short, sev[:1] + [twice] + sev[1:])), "client_seed.valid")
    for name, what, seat in (("client-seed-from-bot", "a client seed for the bot's seat before the start", 1),
                             ("operator-seed-in-human-game", "a client seed from the operator (seat null) in a "
                              "game with a human seat", None)):
        extra_seed = {"type": "client_seed", "seat": seat, "client_seed": "one more seed"}
        yield fail(name, what, signed(with_events(short, sev[:1] + [extra_seed] + sev[1:])), "client_seed.valid")
    s2 = first_index(short, lambda e: e["type"] == "score" and e["seat"] == 0)
    yield fail("duplicated-score", "ann's first score appears twice in a row",
               signed(with_events(short, sev[:s2 + 1] + sev[s2:])), "turn.order")


# ---- what only the receipt shows

def totals_of(setup: Setup, seed: bytes, events: list) -> list[int]:
    game = Game.restore(setup, seed, events)
    return [game.totals(s).total for s in range(len(setup.seats))]


def lead(setup: Setup, seed: bytes, events: list, seat: int) -> int:
    """How far `seat` ends ahead of the best other seat (alone: its total)."""
    scores = totals_of(setup, seed, events)
    return scores[seat] - max((s for i, s in enumerate(scores) if i != seat), default=0)


def ground_seed(base: Base, favoured: int, tries: int = 8) -> bytes:
    """The server seed, among `tries` new ones, under which seat `favoured` ends furthest ahead."""
    seeds = [server_seed(f"{base.name} ground {k}") for k in range(tries)]
    return max(seeds, key=lambda s: lead(base.setup, s, play(base, seed=s), favoured))


def ground_client_seed(base: Base, sender: int, favoured: int, tries: int = 8) -> str:
    """The client seed, among `tries` the server made up, under which seat `favoured` ends furthest ahead."""
    def outcome(pick: str) -> int:
        return lead(base.setup, base.seed, play(base, client_seeds={**base.client_seeds, sender: pick}), favoured)
    return max((f"the server's pick #{k}" for k in range(tries)), key=outcome)


def receipt_cases() -> Iterator[Case]:
    yield from new_commitment_cases()
    yield from swapped_seed_cases()
    yield from other_receipt_cases()


def new_commitment_cases() -> Iterator[Case]:
    for name, sender, favoured in (("yacht-ann-vs-greedy", 0, 1), ("yatzy-bot", None, 0)):
        base = BASES[name]
        seed = ground_seed(base, favoured)
        doc = log_of(base.setup, seed, play(base, seed=seed))
        what = (f"after seeing the client seed the operator picked a new server seed (the best of a few for seat "
                f"{favoured}), re-derived the whole game and signed a new header and log")
        who = "ann" if sender == 0 else "the operator"
        yield fail(f"new-commitment-{name}", what + f"; {who}'s receipt holds the first commitment", doc,
                   "receipt.match", receipt=receipt(name, sender))
        if name == "yacht-ann-vs-greedy":
            yield fail(f"new-commitment-{name}-minimal-receipt", what + "; checked against a receipt with only the "
                       "required fields", doc, "receipt.match", receipt=receipt(name, sender, minimal=True))
            yield ok(f"new-commitment-{name}-no-receipt", what + "; without the receipt nothing shows it: only the "
                     "player's receipt can catch a new commitment", doc)


def swapped_seed_cases() -> Iterator[Case]:
    name = "yacht-ann-vs-greedy"
    base = BASES[name]
    pick = ground_client_seed(base, 0, 1)
    doc = log_of(base.setup, base.seed, play(base, client_seeds={0: pick}))
    what = "the server put a client seed of its own choosing in place of ann's and re-derived the whole game"
    yield fail("swapped-client-seed", what + "; ann's receipt holds the seed she sent", doc, "receipt.match",
               receipt=receipt(name, 0))
    yield ok("swapped-client-seed-no-receipt", what + "; without the receipt nothing shows it", doc)
    two = BASES["yacht-ann-vs-bob"]
    pick = ground_client_seed(two, 1, 0)
    doc = log_of(two.setup, two.seed, play(two, client_seeds={**two.client_seeds, 1: pick}))
    what = "the server replaced bob's client seed by one of its choosing and re-derived the game"
    yield fail("swapped-bob-seed-bob-receipt", what + "; bob's receipt shows it", doc, "receipt.match",
               receipt=receipt(two.name, 1))
    yield ok("swapped-bob-seed-ann-receipt", what + "; ann's receipt cannot show it (her seed, the header and "
             "the commitment are as she saw them)", doc, receipt=receipt(two.name, 0))
    nfd = unicodedata.normalize("NFD", two.client_seeds[1])
    assert nfd != two.client_seeds[1]
    doc = log_of(two.setup, two.seed, play(two, client_seeds={**two.client_seeds, 1: nfd}))
    yield fail("normalized-bob-seed", "bob's seed is logged in Unicode normalization form D (é as e + U+0301), "
               "the game re-derived with it: a different seed, which his receipt shows", doc, "receipt.match",
               receipt=receipt(two.name, 1))


def other_receipt_cases() -> Iterator[Case]:
    short = genuine(SHORT)
    renamed = signed(edited(short, ("header", "seats", 0, "name"), "anne"))
    assert core_reproduces(renamed)
    what = "ann's seat is renamed 'anne' in the header, which is re-signed"
    yield fail("renamed-seat-receipt", what + "; ann's receipt holds the header she saw", renamed, "receipt.match",
               receipt=receipt(SHORT, 0))
    yield ok("renamed-seat-no-receipt", what + "; a name derives nothing, so without the receipt this is a legal "
             "game", renamed)
    yield fail("receipt-of-another-game", "ann is shown the log of another game of hers (a genuine one)", short,
               "receipt.match", receipt=receipt("yacht-ann-vs-greedy", 0))
    yield fail("receipt-seat-of-the-bot", "a receipt naming the bot's seat, which sent no client seed", short,
               "receipt.match", receipt={**receipt(SHORT, 0), "seat": 1})
    other = log_of(BASES[SHORT].setup, BASES[SHORT].seed, short["events"], signer=OTHER)
    yield fail("receipt-key-other-signer", "the log is signed throughout by another key; no trusted key is given, "
               "but the receipt's public key is the operator's", other, "receipt.match", trusted_keys=(),
               receipt=receipt(SHORT, 0))
    unusable = {"not-an-object": [],
                "no-commitment": {k: v for k, v in receipt(SHORT, 0).items() if k != "commitment"},
                "seat-a-string": {**receipt(SHORT, 0), "seat": "0"},
                "client-seed-a-number": {**receipt(SHORT, 0, minimal=True), "client_seed": 42}}
    for label, bad in unusable.items():
        yield error(f"receipt-{label}", f"a genuine log with an unusable receipt ({label.replace('-', ' ')})",
                    text(short), receipt=bad)


# ---- bots

def future_reader(base: Base, once: bool = False) -> Mover:
    """A bot that knows the coming dice: after each roll it takes the hold (or box) that leads, with the
    dice the next rolls will show, to the highest immediate gain this turn.  With `once`, only on the first
    turn where that differs from its policy."""
    state = {"turn": None, "done": False}

    def best(game: Game, dice, roll: int):
        seat, turn = game.current_seat, game.turn
        here = gains(game, dice)
        cat = max(here, key=here.get)
        plan = (here[cat], 0, 0, Decision("score", (), cat))
        if roll < 3:
            for mask in range(31):
                hold = tuple(p for p in range(5) if mask >> p & 1)
                nxt = derive.roll_dice(base.seed, game.setup.game_id, game.client_seeds, seat, turn, roll + 1,
                                       dice, hold)
                value = best(game, nxt, roll + 1)[0]
                plan = max(plan, (value, -1, -mask, Decision("roll", hold)))
        return plan

    def move(game: Game) -> list[dict]:
        if game.rolls_made == 0 or (once and state["done"] and state["turn"] != game.turn):
            return bot_move(game)
        peek = best(game, game.dice, game.rolls_made)[3]
        if once and not state["done"]:
            if peek == bot_decision(game):
                return bot_move(game)
            state.update(turn=game.turn, done=True)
        return do(game, peek)
    return move


def other_tie(game: Game) -> Decision | None:
    """Another of the policy's tied decisions than the tie-break draws, when there is a tie."""
    ranked = BOTS[game.setup.seats[game.current_seat].bot].candidates(position_of(game))
    top = max(c.value for c in ranked)
    tied = [c.decision for c in ranked if c.value >= top - TIE_TOLERANCE]
    return tied[(game.tiebreak(len(tied)) + 1) % len(tied)] if len(tied) > 1 else None


def tie_mover() -> Mover:
    done = []

    def move(game: Game) -> list[dict]:
        if game.rolls_made and not done and (other := other_tie(game)) is not None:
            done.append(game.turn)
            return do(game, other)
        return bot_move(game)
    return move


def bot_cases() -> Iterator[Case]:
    for name in ("yacht-ann-vs-greedy", "classic13-ann-vs-ev"):
        base = BASES[name]
        policy = base.setup.seats[1].bot
        events = play(base, {1: future_reader(base)})
        doc = log_of(base.setup, base.seed, events)
        assert not core_reproduces(doc)
        yield fail(f"future-reading-{policy}", f"the {policy} bot chose every hold knowing the dice to come (all "
                   f"dice, scores and signatures correct; it ends on {doc['final']['totals'][1]['total']} instead "
                   f"of {genuine(name)['final']['totals'][1]['total']})", doc, "bot.decision")
    base = BASES[SHORT]
    doc = log_of(base.setup, base.seed, play(base, {1: future_reader(base, once=True)}))
    assert not core_reproduces(doc)
    yield fail("future-reading-once", "the ev bot reads the coming dice in one turn only (the first where that "
               "changes its move); all else genuine", doc, "bot.decision")
    events = play(base, {1: future_reader(base)})
    fake = {"id": "oracle", "version": "1", "hash": hashlib.sha256(b"no such policy").hexdigest()}
    setup_head = make_header(base.setup, derive.commitment(base.seed), OPERATOR)
    setup_head["seats"][1] = {"type": "bot", "name": "oracle bot", "bot": fake}
    yield fail("unpublished-bot", "the header names a bot 'oracle' that is no published policy, and it plays by "
               "reading the dice to come", log_of(base.setup, base.seed, events, header=setup_head), "bot.identity")
    yacht = BASES["yacht-ann-vs-greedy"]
    doc = log_of(yacht.setup, yacht.seed, play(yacht, {1: tie_mover()}))
    assert not core_reproduces(doc)
    yield fail("tie-broken-by-hand", "once, among tied decisions of the greedy bot, the operator took another than "
               "the derived tie-break picks", doc, "bot.decision")
    opt = BASES["yacht-optimal"]
    head = make_header(opt.setup, derive.commitment(opt.seed), OPERATOR)
    head["seats"][0] = {"type": "bot", "name": "greedy bot", "bot": BOTS["greedy"].identity()}
    yield fail("stronger-bot-than-named", "the header names the greedy bot, but the optimal bot played",
               log_of(opt.setup, opt.seed, genuine("yacht-optimal")["events"], header=head), "bot.decision")


# ---- scores

def inflated(doc: dict, i: int, delta: int) -> dict:
    """Event i's points raised by `delta`, with every later total of that seat and the final block to match."""
    doc = copy.deepcopy(doc)
    event = doc["events"][i]
    seat = event["seat"]
    event["points"] += delta
    for e in doc["events"][i:]:
        if e["type"] == "score" and e["seat"] == seat:
            e["total"] += delta
    final = doc["final"]
    final["totals"][seat]["lower"] += delta
    final["totals"][seat]["total"] += delta
    if final["status"] == "finished":
        scores = [t["total"] for t in final["totals"]]
        winners = [s for s, t in enumerate(scores) if t == max(scores)]
        final["winner"], final["draw"] = (winners[0] if len(winners) == 1 else None), len(winners) > 1
    return signed(doc)


def score_cases() -> Iterator[Case]:
    long, short = genuine("yacht-ann-vs-greedy"), genuine(SHORT)
    lower = ruleset("classic13").category_ids[6:]
    i = first_index(short, lambda e: e["type"] == "score" and e["seat"] == 1 and e["category"] in lower)
    yield fail("inflated-bot-score", "one score of the bot is raised by 40 points, its later totals and the final "
               "block to match", inflated(short, i, 40), "score.points")
    final = long["final"]
    loser = 1 - final["winner"] if final["winner"] is not None else 0
    yield fail("winner-changed", "the final block names the other seat as the winner",
               signed(edited(long, ("final", "winner"), loser)), "final.winner")
    other_seed = server_seed("another seed, same commitment")
    events = play(BASES[SHORT], seed=other_seed)
    doc = log_of(BASES[SHORT].setup, other_seed, events, header=short["header"])
    yield fail("new-seed-old-commitment", "the game is re-derived from another server seed, which is revealed, "
               "under the old commitment", doc, "seed.commitment")


# ---- who plays first

def start_cases() -> Iterator[Case]:
    base, doc = BASES[SHORT], genuine(SHORT)
    start = doc["events"][1]
    loser = 1 - start["first"]
    rolloff = copy.deepcopy(start["rolloff"])
    for rnd in rolloff:
        for e in rnd:
            if e["seat"] == loser:
                e["dice"] = [6, 6, 6, 6, 6]
    faked = {"type": "start", "first": loser, "rolloff": rolloff[:1]}
    events = play(base, events=doc["events"][:1] + [faked])
    yield fail("rolloff-faked", f"the roll-off shows seat {loser} throwing five sixes and playing first; the game "
               "is played from there", log_of(base.setup, base.seed, events), "start.first")
    events = play(base, events=doc["events"][:1] + [{"type": "start", "first": loser, "rolloff": []}])
    yield fail("rolloff-skipped", f"the random first player is settled without a roll-off: seat {loser} plays first",
               log_of(base.setup, base.seed, events), "start.first")
    yield from rolloff_tie_cases()
    game = Game(base.setup, base.seed)
    game.abandon(None)
    yield ok("abandoned-before-play", "nothing: the server abandoned the game before any client seed, which SPEC "
             "§4.3 allows; there is nothing to replay", log_of(base.setup, base.seed, game.events))


def rolloff_tie_cases() -> Iterator[Case]:
    """A bot-only game whose roll-off ties in round 1, abandoned at its start, and two forgeries of it."""
    setup = Setup.build("forged-rolloff-tie", "yacht", [bot("greedy"), bot("greedy")], first="random", version=1)
    seeds = (server_seed(f"rolloff tie {k}") for k in range(1000))
    seed = next(x for x in seeds if len(opening(setup, x, {None: "tie"})[1]["rolloff"]) > 1)
    base = Base("rolloff-tie", setup, seed, {None: "tie"}, abandon_after=0, abandoned_by=None)
    doc = log_of(setup, seed, play(base))
    yield ok("genuine-rolloff-tie", "nothing: a genuine game whose roll-off ties in round 1, abandoned at once", doc)
    start = doc["events"][1]
    tied = [e["seat"] for e in start["rolloff"][1]]
    cut = {**start, "first": tied[0], "rolloff": start["rolloff"][:1]}
    yield fail("rolloff-tie-cut", f"the roll-off ends at its tied first round, seat {tied[0]} named first",
               signed(with_events(doc, doc["events"][:1] + [cut] + doc["events"][2:])), "start.first")
    changed = edited(start, ("rolloff", 1, 0, "dice"), [6, 6, 6, 6, 6])
    changed["first"] = start["rolloff"][1][0]["seat"]
    assert changed["rolloff"] != start["rolloff"]
    yield fail("rolloff-tie-second-round", "the second round of a tied roll-off shows five sixes for the first "
               "tied seat, which is named first",
               signed(with_events(doc, doc["events"][:1] + [changed] + doc["events"][2:])), "start.first")


# ---- signatures and keys

def signature_cases() -> Iterator[Case]:
    yield from stripped_signature_cases()
    yield from key_cases()


def stripped_signature_cases() -> Iterator[Case]:
    short = genuine(SHORT)
    no_final = {k: v for k, v in short.items() if k != "signature"}
    yield fail("no-final-signature", "the final signature is removed", no_final, "sig.final")
    yield ok("no-final-signature-allowed", "the final signature is removed, and unsigned logs are allowed: the "
             "replay holds", no_final, allow_unsigned=True)
    yield fail("no-signatures", "both signatures are removed", unsigned(short), "sig.commitment")
    yield ok("no-signatures-allowed", "both signatures are removed, and unsigned logs are allowed", unsigned(short),
             allow_unsigned=True)
    resigned = unsigned(short)
    resigned["signature"] = OPERATOR.sign(canonical(resigned))
    yield fail("no-commitment-signature", "the commitment signature is removed, the log signed again without it",
               resigned, "sig.commitment")
    yield ok("no-commitment-signature-allowed", "the commitment signature is removed, the log signed again "
             "without it, and unsigned logs are allowed", resigned, allow_unsigned=True)
    stale = {k: v for k, v in short.items() if k != "commitment_signature"}
    yield fail("no-commitment-signature-stale", "the commitment signature is removed; the final signature, made "
               "over it, is left", stale, "sig.commitment")
    yield fail("no-commitment-signature-stale-allowed", "the commitment signature is removed, the final signature "
               "left stale; unsigned logs are allowed, a wrong signature is not", stale, "sig.final",
               allow_unsigned=True)
    base = BASES[SHORT]
    in_progress = log_of(base.setup, base.seed, short["events"][:-1])
    assert in_progress["final"] is None and "signature" not in in_progress
    yield fail("in-progress", "a log of a game still being played: no final block, the seed unrevealed",
               in_progress, "seed.revealed")
    yield fail("in-progress-allowed", "a log of a game still being played, unsigned logs allowed: its dice still "
               "cannot be checked", in_progress, "seed.revealed", allow_unsigned=True)


def key_cases() -> Iterator[Case]:
    long, short, base = genuine("yacht-ann-vs-greedy"), genuine(SHORT), BASES[SHORT]
    other = log_of(base.setup, base.seed, short["events"], signer=OTHER)
    yield fail("signed-by-another-key", "the whole log is signed by another key, which the header names", other,
               "log.key")
    yield ok("signed-by-another-key-untrusted", "the whole log is signed by another key, which the header names; "
             "with no trusted key it is only self-consistent", other, trusted_keys=())
    yield ok("signed-by-another-trusted-key", "the whole log is signed by another key that is trusted too", other,
             trusted_keys=(OPERATOR_HEX, OTHER_HEX))
    yield fail("signatures-by-another-key", "both signatures are made by another key; the header still names the "
               "operator's", signed(short, OTHER), "sig.commitment")
    yield fail("header-signed-by-another-key", "the header is signed by another key, the log by the operator's",
               signed(short, OPERATOR, header_signer=OTHER), "sig.commitment")
    wrong_id = signed(edited(short, ("header", "key_id"), OTHER.key_id))
    yield fail("key-id-of-another-key", "the header's key_id is that of another key; all else is the operator's, "
               "re-signed", wrong_id, "log.key")
    yield fail("key-id-of-another-key-untrusted", "the header's key_id is that of another key, re-signed; no "
               "trusted key given", wrong_id, "log.key", trusted_keys=())
    other_key = signed(edited(short, ("header", "public_key"), OTHER_HEX))
    yield fail("public-key-of-another-key", "the header names another public key (key_id kept); signed by the "
               "operator", other_key, "log.key")
    yield fail("signature-of-another-game", "the final signature is taken from another genuine log",
               {**short, "signature": long["signature"]}, "sig.final")
    yield fail("commitment-signature-of-another-game", "the commitment signature is taken from another genuine log",
               {**short, "commitment_signature": long["commitment_signature"]}, "sig.commitment")
    yield fail("signature-truncated", "the final signature loses its last byte",
               {**short, "signature": short["signature"][:-2]}, "sig.final")
    pretty = unsigned(short)
    pretty["commitment_signature"] = short["commitment_signature"]
    pretty["signature"] = OPERATOR.sign(json.dumps(pretty, indent=1).encode())
    yield fail("signature-over-other-bytes", "the final signature is made over an indented JSON text, not the "
               "canonical one", pretty, "sig.final")


# ---- every single field

def leaves(value, path=()) -> Iterator[tuple[tuple, object]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, path + (i,))
    else:
        yield path, value


def flip_hex(s: str) -> str:
    return ("1" if s[0] != "1" else "2") + s[1:]


def sweep_targets(doc: dict) -> list[tuple]:
    """The paths whose leaves are changed: top fields, header, final, and one event of each kind."""
    ev, seats = doc["events"], doc["header"]["seats"]

    def first(test):
        return (first_index(doc, test),)

    human, bot_seat = (next(s for s, x in enumerate(seats) if x["type"] == kind) for kind in ("human", "bot"))
    roll_2 = [first(lambda e: e["type"] == "roll" and e["seat"] == s and e["roll"] == 2 and e["hold"]) for s in (0, 1)]
    last_score = [(max(i for i, e in enumerate(ev) if e["type"] == "score" and e["seat"] == s),) for s in (0, 1)]
    picks = [first(lambda e: e["type"] == "client_seed"), first(lambda e: e["type"] == "start"), roll_2[human],
             last_score[human], first(lambda e: e["type"] == "abandon"),
             roll_2[bot_seat] + ("hold",), last_score[bot_seat] + ("category",)]  # of the bot's: what it decides
    return [("format",), ("version",), ("commitment_signature",), ("signature",), ("header",), ("final",)] + [
        ("events",) + p for p in picks]


def variants(doc: dict, path: tuple, value) -> list[tuple[str, object]]:
    """(label, new value) for one leaf: another value of the same type (two where one field has two meanings)."""
    name = next(k for k in reversed(path) if isinstance(k, str))
    n = len(doc["header"]["seats"])
    if type(value) is bool:
        return [("", not value)]
    if value is None:
        return [("", 0)]
    if type(value) is int:
        if name == "hold":
            return hold_variants(doc, path)
        if name == "dice":
            return [("", value % 6 + 1)]
        if name in ("seat", "first"):
            return [("", (value + 1) % n)]
        return [("", value + 1)]
    if name in ("commitment", "public_key", "key_id", "hash", "server_seed", "commitment_signature", "signature"):
        return [("", flip_hex(value))]
    if name == "category":
        return category_variants(doc, path)
    if name == "first":  # "random": a string of another spelling, and a seat
        return [("string", "randomly"), ("seat", 0)]
    if name == "type" and path[0] == "events":
        return [("", EVENT_TYPES[(EVENT_TYPES.index(value) + 1) % len(EVENT_TYPES)])]
    other = {"scheme": "fairdice/v2", "format": "fairdice-log-v2", "rules": rules_missing_a_category(doc),
             "status": {"finished": "abandoned"}.get(value, "finished"), "id": "greedy" if value != "greedy" else "ev",
             "version": "2", "type": {"human": "bot", "bot": "human"}.get(value)}
    return [("", other.get(name, value + "x"))]


def hold_variants(doc: dict, path: tuple) -> list[tuple[str, object]]:
    hold, k = doc["events"][path[1]]["hold"], path[-1]
    lo, hi = (hold[k - 1] + 1 if k else 0), (hold[k + 1] if k + 1 < len(hold) else 5)
    free = [q for q in range(lo, hi) if q not in hold]
    out = [("absent-position", 5)]
    if free:
        out.append(("other-position", free[0]))
    return out


def category_variants(doc: dict, path: tuple) -> list[tuple[str, object]]:
    i = path[1]
    base = BASES[SHORT]
    event = doc["events"][i]
    before = Game.restore(base.setup, base.seed, doc["events"][:i])
    filled = [c for c, v in before.card(event["seat"]).boxes.items() if v is not None]
    out = [("filled-box", filled[0])] if filled else []
    other = [c for c, o in before.scoring_options().items() if c != event["category"] and o.points != event["points"]]
    if other:
        out.append(("open-box", other[0]))
    return out


def rules_missing_a_category(doc: dict) -> str:
    """A rule set without one of the categories this log scores (so that a score names no box of it)."""
    scored = {e["category"] for e in doc["events"] if e["type"] == "score"}
    return next(r for r in ("yacht", "yatzy", "classic13") if not scored <= set(ruleset(r).category_ids))


def dice_rederive(doc: dict, i: int, hold: list) -> bool:
    """Whether roll i's logged dice are what this hold gives (the other positions derived)."""
    base, ev = BASES[SHORT], doc["events"]
    game = Game.restore(base.setup, base.seed, ev[:i])
    e = ev[i]
    return derive.roll_dice(base.seed, base.setup.game_id, game.client_seeds, e["seat"], e["turn"], e["roll"],
                            game.dice, hold) == e["dice"]


def expected_check(doc: dict, path: tuple, label: str, new) -> str | None:
    """The check SPEC §7 gives a change of this field, re-signed; None where the change leaves a legal game."""
    if path[0] != "events":
        return TOP_EXPECTED.get(path[0]) or {"header": header_expected, "final": final_expected}[path[0]](path, label)
    event = doc["events"][path[1]]
    name = path[2]
    if name == "type":
        return "log.format"  # another type: not the fields of that type
    if event["type"] == "roll" and name == "hold":
        hold = edited(event, ("hold", path[3]), new)["hold"]
        if hold != sorted(set(hold)) or not all(0 <= p < 5 for p in hold):
            return "roll.hold"
        if not dice_rederive(doc, path[1], hold):
            return "roll.dice"
        return "bot.decision" if doc["header"]["seats"][event["seat"]]["type"] == "bot" else None
    if event["type"] == "score" and name == "category":
        return "score.category" if label == "filled-box" else "score.points"
    return EVENT_EXPECTED[event["type"]][name]


TOP_EXPECTED = {"format": "log.format", "version": "log.format", "commitment_signature": "sig.commitment",
                "signature": "sig.final"}
HEADER_EXPECTED = {
    "scheme": "log.format",
    "game_id": "start.first",  # the roll-off (first is "random") derives from the game id
    "rules": "score.category",  # a rule set without a category this game scores
    "upper_first": "score.category",  # a lower box filled while upper boxes are open
    "commitment": "seed.commitment",
    "seed_secret": None,  # a claim about where the seed came from that nothing derives from
    "key_id": "log.key",
    "public_key": "log.key",  # not the trusted key, nor the one key_id names
}


def header_expected(path: tuple, label: str) -> str | None:
    name = path[1]
    if name == "first":
        return "log.format" if label == "string" else "start.first"  # a fixed first has no roll-off
    if name != "seats":
        return HEADER_EXPECTED[name]
    if path[3] == "bot":
        return "bot.identity"
    return {"type": "log.format", "name": None}[path[3]]  # a name derives nothing


def final_expected(path: tuple, label: str) -> str:
    return {"status": "game.complete", "server_seed": "seed.commitment", "totals": "final.totals",
            "winner": "final.winner", "draw": "final.winner"}[path[1]]


EVENT_EXPECTED = {
    "client_seed": {"seat": "client_seed.valid", "client_seed": "start.first"},  # the roll-off derives from it
    "start": {"first": "start.first", "rolloff": "start.first"},
    "roll": {"seat": "turn.order", "turn": "turn.order", "roll": "roll.count", "dice": "roll.dice"},
    "score": {"seat": "turn.order", "turn": "turn.order", **dict.fromkeys(
        ("points", "joker", "yahtzee_bonus", "upper_bonus", "total"), "score.points")},
    "abandon": {"seat": None},  # any seat, or the server, may abandon
}

STALE = ("header.commitment", "header.seats.0.name", "final.totals.1.total")  # (and one die, one category below)


def assert_sweep_preconditions(doc: dict) -> None:
    """What the expected checks above rely on in the base log."""
    ev = doc["events"]
    start = ev[1]
    assert doc["header"]["first"] == "random" and start["rolloff"], "game_id and client_seed changes need a roll-off"
    upper = ruleset("classic13").category_ids[:6]
    cards: dict[int, set] = {0: set(), 1: set()}
    lower_early = False
    for e in ev:
        if e["type"] == "score":
            lower_early |= e["category"] not in upper and len(cards[e["seat"]] & set(upper)) < 6
            cards[e["seat"]].add(e["category"])
    assert lower_early, "upper_first needs a lower box filled while an upper box is open"


def field_cases() -> Iterator[Case]:
    doc = genuine(SHORT)
    assert_sweep_preconditions(doc)
    stale_events = 0
    for target in sweep_targets(doc):
        value = doc
        for key in target:
            value = value[key]
        for sub, leaf in leaves(value):
            path = target + sub
            for label, new in variants(doc, path, leaf):
                dotted = ".".join(map(str, path))
                name = f"field-{dotted}" + (f"-{label}" if label else "")
                changed = edited(doc, path, new)
                forged = signed(changed) if path[0] not in TOP_EXPECTED else changed
                check = expected_check(doc, path, label, new)
                legal = core_reproduces(forged)
                assert legal == (check is None), (name, check, legal)
                what = f"{dotted} changed from {json.dumps(leaf)} to {json.dumps(new)}" + (
                    ", re-signed" if path[0] not in TOP_EXPECTED else "")
                if check is None:
                    yield ok(name, what + ": not a forgery, the core writes the same log for the same moves", forged)
                else:
                    yield fail(name, what, forged, check)
                stale = dotted in STALE or (path[0] == "events" and path[2] in ("dice", "category") and stale_events < 2
                                            and (path[2] != "dice" or path[3] == 0))
                if stale and path[0] not in TOP_EXPECTED:
                    stale_events += path[0] == "events"
                    yield fail(f"stale-{dotted}" + (f"-{label}" if label else ""), f"{dotted} changed from "
                               f"{json.dumps(leaf)} to {json.dumps(new)}, the signatures left as they were", changed,
                               "sig.commitment" if path[0] == "header" else "sig.final")


# ---- format, types and hostile input

SENTINEL = "@@forged@@"  # sorts before every field name: a member keyed by it comes first in canonical JSON


def with_raw(doc: dict, path: tuple, raw: str) -> bytes:
    """The log's canonical bytes with the value at `path` written as `raw` (JSON no encoder writes)."""
    data = canonical(edited(doc, path, SENTINEL)).decode("ascii")
    assert data.count(f'"{SENTINEL}"') == 1
    return (data.replace(f'"{SENTINEL}"', raw) + "\n").encode("utf-8")


def with_duplicate(doc: dict, path: tuple, key_json: str, value) -> bytes:
    """The log's canonical bytes with a second member `key_json` (written first) in the object at `path`."""
    data = canonical(edited(doc, path + (SENTINEL,), value)).decode("ascii")
    assert data.count(f'"{SENTINEL}":') == 1
    return (data.replace(f'"{SENTINEL}":', key_json + ":") + "\n").encode("utf-8")


def format_cases() -> Iterator[Case]:
    short = genuine(SHORT)
    r = first_index(short, lambda e: e["type"] == "roll")
    s = first_index(short, lambda e: e["type"] == "score")
    ev = short["events"]
    changes = [
        ("extra-top-field", "a field 'note' is added to the log", ("note",), "the operator was here"),
        ("extra-event-field", "a field 'note' is added to a roll", ("events", r, "note"), "x"),
        ("version-a-string", "version is the string \"1\"", ("version",), "1"),
        ("die-seven", "a die shows 7", ("events", r, "dice", 0), 7),
        ("four-dice", "a roll has four dice", ("events", r, "dice"), ev[r]["dice"][:4]),
        ("seat-true", "a roll's seat is true (a boolean is no integer)", ("events", r, "seat"), True),
        ("points-false", "a score's points are false", ("events", s, "points"), False),
        ("die-a-float", "a die is written 2.0 (a float)", ("events", r, "dice", 0), float(ev[r]["dice"][0])),
        ("turn-a-fraction", "a roll's turn is 1.5", ("events", r, "turn"), 1.5),
        ("hold-a-float", "a hold names position 0.0", ("events", r + 1, "hold"), [0.0]),
    ]
    for name, what, path, value in changes:
        yield fail(name, what + ", re-signed", signed(edited(short, path, value)), "log.format")
    for name, what, path, value in (("events-an-object", "events is an object", ("events",), {}),
                                    ("header-a-string", "header is a string", ("header",), "forged"),
                                    ("final-an-array", "final is an array", ("final",), [])):
        yield fail(name, what, edited(short, path, value), "log.format")
    yield fail("category-of-another-rule-set", "a score names 'choice', a box of yacht, not of classic13; re-signed",
               signed(edited(short, ("events", s, "category"), "choice")), "score.category")
    no_upper_first = copy.deepcopy(short)
    del no_upper_first["header"]["upper_first"]
    yield fail("header-field-missing", "the header has no upper_first field, re-signed", signed(no_upper_first),
               "log.format")
    yield fail("points-as-exponent", "a score's points are written 1e1",
               with_raw(short, ("events", s, "points"), "1e1"), "log.format")
    yield fail("points-max-safe-integer", "a score's points are 2^53 - 1 (a valid integer, not the score), re-signed",
               signed(edited(short, ("events", s, "points"), 2**53 - 1)), "score.points")
    held = first_index(short, lambda e: e["type"] == "roll" and e["roll"] > 1 and len(e["hold"]) >= 2)
    hold = short["events"][held]["hold"]
    yield fail("hold-unsorted", "a hold lists its positions in falling order, re-signed",
               signed(edited(short, ("events", held, "hold"), hold[::-1])), "roll.hold")
    yield fail("hold-repeated", "a hold names a position twice, re-signed",
               signed(edited(short, ("events", held, "hold"), [hold[0]] + hold)), "roll.hold")
    yield fail("hold-on-first-roll", "a first roll holds position 0 (keeping the die of the turn before), re-signed",
               signed(edited(short, ("events", first_index(short, lambda e: e["type"] == "roll" and e["roll"] == 1, s),
                                     "hold"), [0])), "roll.hold")


def hostile_cases() -> Iterator[Case]:
    victim = tiny("hostile", client_seed="the operator's seed")
    yield from hostile_value_cases(victim)
    yield from hostile_byte_cases(victim)
    yield from duplicate_key_cases(victim)


def hostile_value_cases(victim: dict) -> Iterator[Case]:
    r = first_index(victim, lambda e: e["type"] == "roll")
    s = first_index(victim, lambda e: e["type"] == "score")
    seed, name = ("events", 0, "client_seed"), ("header", "seats", 0, "name")
    raws = [
        ("nan", "a score's points are NaN", ("events", s, "points"), "NaN"),
        ("infinity", "a die is Infinity", ("events", r, "dice", 0), "Infinity"),
        ("minus-infinity", "a total is -Infinity", ("events", s, "total"), "-Infinity"),
        ("1e400", "a turn is 1e400", ("events", r, "turn"), "1e400"),
        ("two-to-the-53", "a score's points are 2^53", ("events", s, "points"), str(2**53)),
        ("minus-two-to-the-53", "a seat is -2^53", ("events", r, "seat"), str(-2**53)),
        ("huge-integer", "a score's points are a 400-digit integer", ("events", s, "points"), "9" * 400),
        ("too-many-digits", "a die is written with 25 digits (1.000...0001)", ("events", r, "dice", 0),
         "1.000000000000000000000001"),
        ("nested-70", "a seat name is an array nested 70 deep", name, "[" * 70 + "]" * 70),
        ("nested-3000", "a seat name is an array nested 3000 deep", name, "[" * 3000 + "]" * 3000),
        ("lone-high-surrogate", "the client seed ends in a lone \\ud800", seed, '"ann\\ud800"'),
        ("lone-low-surrogate", "the client seed holds a lone \\udc00", seed, '"\\udc00ann"'),
        ("reversed-surrogates", "the client seed holds a surrogate pair in the wrong order", seed,
         '"ann\\ude00\\ud83d"'),
        ("raw-control-character", "the client seed holds an unescaped U+0001", seed, '"a\x01b"'),
    ]
    for label, what, path, raw in raws:
        yield error(f"hostile-{label}", what, with_raw(victim, path, raw))


def hostile_byte_cases(victim: dict) -> Iterator[Case]:
    canon = text(victim)
    seed = json.dumps(victim["events"][0]["client_seed"]).encode()
    assert canon.count(seed) == 1
    for label, what, bad in (("invalid-utf8", "a byte 0xff in the client seed", b"\xff"),
                             ("overlong-utf8", "an overlong UTF-8 encoding of '/' in the client seed", b"\xc0\xaf"),
                             ("cesu-surrogate", "a surrogate encoded as UTF-8 bytes (ED A0 80) in the client seed",
                              b"\xed\xa0\x80")):
        yield error(f"hostile-{label}", what, canon.replace(seed, seed[:-1] + bad + b'"'))
    yield error("hostile-utf16", "the log encoded as UTF-16", canon.decode().encode("utf-16"))
    for label, data in (("array", b"[]\n"), ("string", b'"fairdice-log"\n'), ("number", b"42\n"),
                        ("null", b"null\n"), ("true", b"true\n")):
        yield error(f"not-an-object-{label}", f"the file is the JSON {data.decode().strip()}, not an object", data)
    broken = [("empty", "an empty file", b""), ("blank", "white space only", b" \n\n"),
              ("truncated", "the log cut in the middle", canon[: len(canon) // 2]),
              ("trailing-garbage", "the log followed by text", canon.rstrip() + b" garbage\n"),
              ("two-documents", "two logs one after the other", canon + canon),
              ("trailing-comma", "a comma before the log's closing brace", canon.rstrip()[:-1] + b",}\n"),
              ("single-quotes", "the format field in single quotes",
               canon.replace(b'"format":"fairdice-log"', b"'format':'fairdice-log'")),
              ("comment", "a comment before the log", b"// forged\n" + canon)]
    for label, what, data in broken:
        yield error(f"not-json-{label}", what, data)


def duplicate_key_cases(victim: dict) -> Iterator[Case]:
    r = first_index(victim, lambda e: e["type"] == "roll")
    fake_final = {**victim["final"], "totals": [{**t, "total": t["total"] + 50} for t in victim["final"]["totals"]]}
    dups = [("final", "a second, fake final block before the genuine one (the log is signed over the genuine one; "
             "a parser that keeps the first member shows the fake)", (), '"final"', fake_final),
            ("final-escaped", "a second final block under the key \"\\u0066inal\", which is \"final\" once parsed", (),
             '"\\u0066inal"', fake_final),
            ("signature", "a second signature member", (), '"signature"', victim["signature"]),
            ("event-dice", "a roll with two dice members (the first five sixes)", ("events", r), '"dice"', [6] * 5),
            ("header-commitment", "a header with two commitment members", ("header",), '"commitment"', "0" * 64),
            ("totals-total", "a seat's totals with two total members", ("final", "totals", 0), '"total"', 999)]
    for label, what, path, key, value in dups:
        yield error(f"duplicate-key-{label}", what, with_duplicate(victim, path, key, value))


# ---- the client seed and name rule (SPEC §2.2)

RULE = json.loads((VECTORS / "client_seed_rule.json").read_text(encoding="utf-8"))


def allowed(text_: str, lo: int, hi: int) -> bool:
    """The rule of SPEC §2.2, from its vector file: length in code points, and no excluded code point."""
    ranges = RULE["generic_excluded"] + RULE["excluded_ranges"]
    return lo <= len(text_) <= hi and not any(
        (ord(ch) & 0xFFFF) in RULE["noncharacter_low16"] or any(a <= ord(ch) <= b for a, b in ranges) for ch in text_)


def tiny(label: str, client_seed: str = "a seed", name: str = "greedy bot", game_id: str | None = None,
         turns: int = 1) -> dict:
    """A bot-only yacht game abandoned by the server after `turns` turns, with any client seed, name or game
    id (the core's own checks bypassed: this is what the operator can write)."""
    game_id = f"forged-tiny-{label}" if game_id is None else game_id
    setup = Setup(game_id, ruleset("yacht"), (Seat("bot", name, "greedy"),), 0, False, version=1,
                  abandon_timeout=None)
    seed = server_seed(f"tiny {label}")
    base = Base(label, setup, seed, {}, abandon_after=turns, abandoned_by=None)
    events = [{"type": "client_seed", "seat": None, "client_seed": client_seed},
              {"type": "start", "first": 0, "rolloff": []}]
    return log_of(setup, seed, play(base, events=events))


SEEDS = [  # (label, what, the operator's client seed)
    ("unassigned", "an unassigned code point U+0378 (allowed: the rule does not depend on a Unicode version)",
     "x\u0378"),
    ("unicode-15-format", "U+13439, a format character only since Unicode 15 (allowed by the 14.0 list)",
     "x\U00013439"),
    ("256-astral", "256 dice emoji (256 code points, 512 UTF-16 units)", "\U0001F3B2" * 256),
    ("space", "a single space", " "), ("combining", "e and a combining acute accent", "e\u0301"),
    ("replacement-char", "U+FFFD", "\ufffd"), ("empty", "the empty string", ""), ("257", "257 characters", "a" * 257),
    ("257-astral", "257 dice emoji", "\U0001F3B2" * 257), ("nul", "U+0000", "a\x00"), ("delete", "U+007F", "a\x7f"),
    ("c1-control", "U+0085", "a\x85"), ("no-break-space", "U+00A0 (a space other than U+0020)", "a\u00a0b"),
    ("zero-width-space", "U+200B (a format character)", "a\u200bb"), ("line-separator", "U+2028", "a\u2028b"),
    ("private-use", "U+E000", "a\ue000"), ("noncharacter-fdd0", "U+FDD0", "a\ufdd0"),
    ("noncharacter-fffe", "U+FFFE", "a\ufffe"), ("noncharacter-1fffe", "U+1FFFE", "a\U0001fffe"),
    ("plane-15", "U+F0000 (private use)", "a\U000f0000"),
    ("language-tag", "U+E0001 (a format character)", "a\U000e0001"),
]
NAMES = [  # (label, what, the bot's name)
    ("40-astral", "a bot named by 40 dice emoji", "\U0001F3B2" * 40),
    ("unassigned", "a bot named 'bot\\u0378'", "bot\u0378"), ("empty", "a bot with an empty name", ""),
    ("41", "a bot name of 41 characters", "b" * 41), ("bell", "a bot name holding U+0007", "bot\x07"),
    ("zero-width-space", "a bot name holding U+200B", "b\u200bot"),
]
GAME_IDS = [("64", "a game id of 64 characters", "g" * 64), ("space", "a game id with a space", "game with spaces"),
            ("65", "a game id of 65 characters", "g" * 65), ("empty", "an empty game id", ""),
            ("non-ascii", "a game id with an é", "forgé"), ("delete", "a game id with U+007F", "game\x7f")]


def rule_cases() -> Iterator[Case]:
    for label, what, seed in SEEDS:
        good = allowed(seed, *RULE["client_seed_length"])
        doc = tiny(f"seed-{label}", client_seed=seed, turns=1 if good else 0)  # (a refused seed: abandoned at once)
        what = f"the operator's client seed is {what}" + ("; one turn derived from it" if good else "")
        if good:
            yield ok(f"client-seed-{label}", what, doc)
        else:
            yield fail(f"client-seed-{label}", what, doc, "client_seed.valid")
    for label, what, name in NAMES:
        doc = tiny(f"name-{label}", name=name)
        if allowed(name, *RULE["seat_name_length"]):
            yield ok(f"seat-name-{label}", what, doc)
        else:
            yield fail(f"seat-name-{label}", what, doc, "log.format")
    for label, what, game_id in GAME_IDS:
        doc = tiny(f"id-{label}", game_id=game_id)
        if 1 <= len(game_id) <= 64 and all(" " <= ch <= "~" for ch in game_id):
            yield ok(f"game-id-{label}", what + ", the game derived with it", doc)
        else:
            yield fail(f"game-id-{label}", what + ", the game derived with it", doc, "log.format")


# =========================================================================== log format version 2
# (SPEC §4.3 and §5: commitments to the client seeds of two or more humans, abandon reasons and the timeout,
# move receipts.)  The version 1 cases above are left exactly as they were: legacy logs keep verifying.

def index_of(doc: dict, kind: str, start: int = 0) -> int:
    """The first event of this type from `start`."""
    return first_index(doc, lambda e: e["type"] == kind, start)


def v2_genuine_cases() -> Iterator[Case]:
    yield from genuine_games(V2_BASES)
    two = BASES[TWO]
    ann, bob = two.client_seeds[0], two.client_seeds[1]
    game = Game(two.setup, two.seed)
    game.commit_client_seed(1, seed_commitment(two.setup, 1, bob))
    game.commit_client_seed(0, seed_commitment(two.setup, 0, ann))
    game.supply_client_seed(1, bob, salt(two.setup, 1))
    game.abandon(0, "player")
    yield ok("v2-abandoned-by-ann-before-her-reveal", "nothing: both seats committed, bob revealed his seed, and ann "
             "abandoned before revealing hers (a human seat may abandon before the start)",
             log_of(two.setup, two.seed, game.events))
    game = Game(two.setup, two.seed)
    game.commit_client_seed(1, seed_commitment(two.setup, 1, bob))
    game.abandon(None, "timeout")
    yield ok("v2-timeout-awaiting-a-commitment", "nothing: bob committed, ann never did, and the server abandoned "
             "the game on its timeout", log_of(two.setup, two.seed, game.events))
    short, base = genuine(SHORT_V2), BASES[SHORT_V2]
    k = index_of(short, "abandon")
    game = Game.restore(base.setup, base.seed, short["events"][:k])
    seat = game.current_seat
    events = short["events"][:k] + game.roll(seat) + game.abandon(seat, "player")
    yield ok("v2-abandoned-mid-turn", f"nothing: seat {seat}, the seat to play, abandons after its first roll (on "
             "its own turn)", log_of(base.setup, base.seed, events))
    bots = replace(BASES["v2-yatzy-bot"], abandon_reason="timeout")
    yield ok("v2-bot-game-timeout", "nothing: a game without human seats abandoned by the server on its timeout",
             log_of(bots.setup, bots.seed, play(bots)))


def v2_commitment_cases() -> Iterator[Case]:
    """client_seed.commit: with two or more humans, every human seat commits once, before any reveal, and each
    reveal opens its seat's commitment."""
    two, doc = BASES[TWO], genuine(TWO)
    ev = doc["events"]
    assert [e["type"] for e in ev[:5]] == ["client_seed_commit"] * 2 + ["client_seed"] * 2 + ["start"]
    assert [e["seat"] for e in ev[:4]] == [1, 0, 1, 0]
    pick = ground_client_seed(two, 1, 0)
    swapped = play(two, client_seeds={**two.client_seeds, 1: pick})
    yield fail("v2-reveal-of-another-seed", "the server logs bob's reveal with a seed of its own choosing (bob's "
               "salt kept, his commitment as he sent it) and re-derives the whole game from it", log_of(
                   two.setup, two.seed, [ev[0]] + swapped[1:]), "client_seed.commit")
    yield fail("v2-reveal-with-another-salt", "bob's reveal carries another salt than the one he committed with, "
               "re-signed", signed(edited(doc, ("events", 2, "salt"), salt(two.setup, 2))), "client_seed.commit")
    yield fail("v2-commitment-after-a-reveal", "bob commits and reveals before ann commits: the last to commit "
               "could choose knowing a seed (re-signed)", signed(with_events(doc, moved(ev, 2, 1))),
               "client_seed.commit")
    yield fail("v2-missing-commitment", "ann's commitment is left out: her seed is revealed without one, re-signed",
               signed(with_events(doc, ev[:1] + ev[2:])), "client_seed.commit")
    second = {"type": "client_seed_commit", "seat": 1, "commitment": seed_commitment(two.setup, 1, "bob's other seed")}
    yield fail("v2-second-commitment", "bob commits a second time, to another seed, before the reveals (he could "
               "open whichever suits him), re-signed", signed(with_events(doc, ev[:2] + [second] + ev[2:])),
               "client_seed.commit")
    yield fail("v2-same-commitment-twice", "bob's commitment appears twice before the reveals, re-signed",
               signed(with_events(doc, ev[:2] + [ev[0]] + ev[2:])), "client_seed.commit")
    late = {"type": "client_seed_commit", "seat": 0, "commitment": seed_commitment(two.setup, 0, "ann, later")}
    yield fail("v2-commitment-after-start", "a second commitment of ann's after the start event, re-signed",
               signed(with_events(doc, ev[:5] + [late] + ev[5:])), "client_seed.commit")
    plain = [{"type": "client_seed", "seat": e["seat"], "client_seed": e["client_seed"]} for e in ev[2:4]]
    yield fail("v2-plain-client-seeds", "the two humans' seeds are logged in one step, without commitments or "
               "salts (the dice are those of the same seeds), re-signed", signed(with_events(doc, plain + ev[4:])),
               "log.format")
    three, trio = genuine(SHORT_V2), BASES[SHORT_V2]
    for_bot = {"type": "client_seed_commit", "seat": 2, "commitment": seed_commitment(trio.setup, 2, "the bot's")}
    yield fail("v2-commitment-from-the-bot", "a commitment for the bot's seat among the humans' ones, re-signed",
               signed(with_events(three, three["events"][:2] + [for_bot] + three["events"][2:])),
               "client_seed.commit")
    solo, one = genuine("v2-yacht-ann-vs-greedy-timeout"), BASES["v2-yacht-ann-vs-greedy-timeout"]
    commit = {"type": "client_seed_commit", "seat": 0,
              "commitment": seed_commitment(one.setup, 0, one.client_seeds[0])}
    yield fail("v2-commitment-in-a-one-human-game", "a commitment before ann's client seed in a game with one "
               "human seat, which takes its seed in one step (re-signed)",
               signed(with_events(solo, [commit] + solo["events"])), "log.format")
    yield fail("v2-salt-in-a-one-human-game", "ann's one-step client seed carries a salt, re-signed",
               signed(edited(solo, ("events", 0, "salt"), salt(one.setup, 0))), "log.format")
    who = "the server replaced bob's commitment and client seed by its own (consistent with each other) and " \
          "re-derived the game"
    yield ok("v2-bob-commitment-and-seed-replaced", who + "; without bob's receipt nothing shows it: a commitment "
             "binds a seat's seed against the other seats, not against the server", log_of(two.setup, two.seed,
                                                                                            swapped))
    yield fail("v2-bob-commitment-and-seed-replaced-bob-receipt", who + "; bob's receipt holds the seed he sent",
               log_of(two.setup, two.seed, swapped), "receipt.match", receipt=receipt(TWO, 1))
    yield ok("v2-bob-commitment-and-seed-replaced-ann-receipt", who + "; ann's receipt cannot show it (her seed, "
             "the header and the commitment are as she saw them)", log_of(two.setup, two.seed, swapped),
             receipt=receipt(TWO, 0))


def v2_abandon_cases() -> Iterator[Case]:
    """game.abandon: a human seat before the start or on its own turn; the operator of a game without humans;
    the server (seat null) only for its timeout."""
    doc, base = genuine(SHORT_V2), BASES[SHORT_V2]
    k = len(doc["events"]) - 1
    last = doc["events"][k]
    seat = last["seat"]
    assert last == {"type": "abandon", "seat": seat, "reason": "player"} and seat in (0, 1)
    game = Game.restore(base.setup, base.seed, doc["events"][:k])
    assert game.current_seat == seat
    changes = [
        ("v2-server-abandon-without-timeout", "the server abandons a game with human seats (seat null) giving the "
         "reason 'player': only a timeout lets the server abandon", None, "player"),
        ("v2-timeout-by-a-seat", f"seat {seat} abandons giving the reason 'timeout', which is the server's",
         seat, "timeout"),
        ("v2-abandon-not-on-its-turn", f"seat {1 - seat} abandons during seat {seat}'s turn", 1 - seat, "player"),
        ("v2-abandon-reason-unknown", f"seat {seat} abandons for the reason 'forfeit', which does not exist", seat,
         "forfeit"),
        ("v2-abandon-by-the-bot", "the bot's seat abandons (reason 'player'): only a human seat abandons for itself",
         2, "player"),
    ]
    for name, what, who, reason in changes:
        yield fail(name, what + "; re-signed", signed(edited(doc, ("events", k), {**last, "seat": who,
                                                                                   "reason": reason})), "game.abandon")
    yield fail("v2-abandon-without-reason", "the abandon event gives no reason (a version 1 abandon), re-signed",
               signed(edited(doc, ("events", k), {"type": "abandon", "seat": seat})), "log.format")
    bot_quits = doc["events"][:3] + [{"type": "abandon", "seat": 2, "reason": "player"}]
    yield fail("v2-abandon-by-the-bot-before-start", "after ann's reveal, before bob's, the bot's seat abandons "
               "(reason 'player'): only a human seat abandons for itself", log_of(base.setup, base.seed, bot_quits),
               "game.abandon")
    two, duo = genuine(TWO), BASES[TWO]
    early = [two["events"][0], {"type": "abandon", "seat": None, "reason": "player"}]
    yield fail("v2-server-abandon-before-start", "after bob's commitment the server abandons the game as if a player "
               "had (seat null, reason 'player'), signed", log_of(duo.setup, duo.seed, early), "game.abandon")


def v2_version_cases() -> Iterator[Case]:
    v1, v2 = genuine(SHORT), genuine(SHORT_V2)
    yield fail("v1-log-labelled-version-2", "a version 1 log is labelled version 2 (no abandon_timeout, an abandon "
               "without reason), re-signed", signed(edited(v1, ("version",), 2)), "log.format")
    yield fail("v2-log-labelled-version-1", "a version 2 log is labelled version 1 (its header has an "
               "abandon_timeout, its reveals a salt), re-signed", signed(edited(v2, ("version",), 1)), "log.format")
    no_timeout = copy.deepcopy(v2)
    del no_timeout["header"]["abandon_timeout"]
    yield fail("v2-header-without-abandon-timeout", "the header has no abandon_timeout, re-signed",
               signed(no_timeout), "log.format")
    for label, value in (("a-string", "86400"), ("null", None), ("true", True), ("zero", 0)):
        yield fail(f"v2-abandon-timeout-{label}", f"the header's abandon_timeout is {json.dumps(value)}, re-signed",
                   signed(edited(v2, ("header", "abandon_timeout"), value)), "log.format")
    yield fail("v2-abandon-timeout-a-float", "the header's abandon_timeout is written 86400.0, re-signed",
               signed(edited(v2, ("header", "abandon_timeout"), 86400.0)), "log.format")


# ---- every single field that version 2 adds

V2_EVENT_TYPES = ("client_seed_commit", "client_seed", "start", "roll", "score", "abandon")
SEATS_V2 = len(V2_BASES[SHORT_V2].setup.seats)  # the sweep's log: ann, bob and the ev bot


def v2_sweep_targets(doc: dict) -> list[tuple]:
    ev = doc["events"]
    commits = [("events", i) for i, e in enumerate(ev) if e["type"] == "client_seed_commit"]
    return [("version",), ("header", "abandon_timeout"), *commits, ("events", index_of(doc, "client_seed")),
            ("events", index_of(doc, "abandon"))]


def v2_variants(path: tuple, value) -> list[tuple[str, object]]:
    """(label, new value) for one leaf of what version 2 adds."""
    name = path[-1]
    if name == "type":
        return [("", V2_EVENT_TYPES[(V2_EVENT_TYPES.index(value) + 1) % len(V2_EVENT_TYPES)])]
    if name in ("commitment", "salt"):
        return [("", flip_hex(value))]
    if name == "seat":
        return [("", (value + 1) % SEATS_V2)]
    if name == "reason":
        return [("", value + "x"), ("timeout", "timeout")]
    if name == "client_seed":
        return [("", value + "x")]
    return [("", value + 1)]  # version, abandon_timeout


def v2_expected(doc: dict, path: tuple, label: str, new) -> str | None:
    """The check a change of this field calls for (SPEC §7), re-signed; None for a legal game."""
    if path == ("version",):
        return "log.format"  # there is no version 3
    if path == ("header", "abandon_timeout"):
        return None  # nothing in the log derives from it (the log has no clock): only a receipt's header shows it
    event = doc["events"][path[1]]
    name, humans = path[2], [s for s, seat in enumerate(doc["header"]["seats"]) if seat["type"] == "human"]
    if name == "type":
        return "log.format"  # another type: not the fields of that type
    if event["type"] == "client_seed_commit":
        return "client_seed.commit"  # a second commitment, a bot's, or one its seat's reveal does not open
    if event["type"] == "client_seed":
        if name == "seat" and new not in humans:
            return "client_seed.valid"  # a reveal from the bot's seat, which commits to nothing
        return "client_seed.commit"  # the reveal does not open its seat's commitment
    return "game.abandon"  # another seat than the one to play, or a reason that is not the seat's to give


def v2_field_cases() -> Iterator[Case]:
    doc = genuine(SHORT_V2)
    assert len(doc["header"]["seats"]) == SEATS_V2
    for target in v2_sweep_targets(doc):
        value = doc
        for key in target:
            value = value[key]
        for sub, leaf in leaves(value):
            path = target + sub
            for label, new in v2_variants(path, leaf):
                dotted = ".".join(map(str, path))
                name = f"v2-field-{dotted}" + (f"-{label}" if label else "")
                changed = edited(doc, path, new)
                forged = signed(changed)
                check = v2_expected(doc, path, label, new)
                assert core_reproduces(forged) == (check is None), (name, check)
                what = f"{dotted} changed from {json.dumps(leaf)} to {json.dumps(new)}, re-signed"
                if check is None:
                    yield ok(name, what + ": not a forgery, the core writes the same log for the same moves", forged)
                else:
                    yield fail(name, what, forged, check)
                if path[-1] in ("abandon_timeout", "reason", "salt") and not label:
                    yield fail(f"v2-stale-{dotted}", f"{dotted} changed from {json.dumps(leaf)} to "
                               f"{json.dumps(new)}, the signatures left as they were", changed,
                               "sig.commitment" if path[0] == "header" else "sig.final")


# ---- move receipts (SPEC §5.6): the server's signed word on the history after each move

def move_receipts_of(doc: dict, counts, signer: Signer = OPERATOR) -> list[dict]:
    """The move receipts of this log's history after each of `counts` events, as the server signs them."""
    return [move_receipt(signer, doc["header"], doc["events"][:n]) for n in counts]


def answers_to(doc: dict, seat, kinds=("client_seed_commit", "client_seed", "score")) -> list[int]:
    """The event counts of the answers to `seat`'s commands of these kinds (a client seed that completes the
    set is answered after the start event), after the game as created (0)."""
    ev = doc["events"]
    counts = [0]
    for i, e in enumerate(ev):
        if e["type"] in kinds and e.get("seat") == seat:
            counts.append(i + 2 if i + 1 < len(ev) and ev[i + 1]["type"] == "start" else i + 1)
    return counts


def other_hold_mover(turn: int) -> Mover:
    """human_move, except that on turn `turn` the seat keeps nothing after its first roll."""
    def move(game: Game) -> list[dict]:
        if game.turn == turn and game.rolls_made == 1:
            return game.roll(game.current_seat, ())
        return human_move(game)
    return move


def move_receipt_cases() -> Iterator[Case]:
    two, doc = BASES[TWO], genuine(TWO)
    bobs = move_receipts_of(doc, answers_to(doc, 1))
    yield ok("v2-move-receipts-bob", "nothing: the genuine log, checked against the move receipts bob kept (the "
             "game as created, and the answers to his commitment, his reveal and each of his boxes)", doc,
             move_receipts=bobs)
    v1 = genuine("yacht-ann-vs-greedy")
    yield ok("v1-move-receipts-ann", "nothing: a genuine version 1 log, checked against move receipts of its "
             "history (the chain covers every version)", v1, move_receipts=move_receipts_of(
                 v1, answers_to(v1, 0, ("client_seed", "score"))[::3]))
    rewritten = log_of(two.setup, two.seed, play(two, {1: other_hold_mover(8)}))
    assert core_reproduces(rewritten) and rewritten["events"] != doc["events"]
    what = ("after the game the operator publishes another legal game: in bob's turn 8 he keeps nothing after his "
            "first roll, the rest played out from there")
    yield fail("v2-history-rewritten-after-receipts", what + "; bob's move receipts hold the history he was shown",
               rewritten, "receipt.chain", move_receipts=bobs)
    yield ok("v2-history-rewritten-no-receipts", what + "; without bob's move receipts nothing shows it", rewritten)
    cut = first_index(doc, lambda e: e["type"] == "score" and e["seat"] == 1, len(doc["events"]) // 2) + 1
    game = Game.restore(two.setup, two.seed, doc["events"][:cut])
    ended = log_of(two.setup, two.seed, doc["events"][:cut] + game.abandon(None, "timeout"))
    what = (f"the operator publishes the game as abandoned on a timeout after event {cut - 1}, though it went on "
            "to its end")
    yield fail("v2-log-ends-before-the-receipts", what + "; bob holds receipts of later moves", ended,
               "receipt.chain", move_receipts=bobs)
    yield ok("v2-log-ends-early-no-receipts", what + "; without bob's move receipts a timeout abandon is the "
             "server's right", ended)
    yield from forged_receipt_cases(doc, bobs)


def forged_receipt_cases(doc: dict, bobs: list) -> Iterator[Case]:
    n = len(doc["events"])
    last = bobs[-1]
    other_game = genuine(SHORT_V2)
    cases = [
        ("signed-by-another-key", "bob's move receipts are signed by another key than the trusted one",
         move_receipts_of(doc, answers_to(doc, 1), OTHER), (OPERATOR_HEX,)),
        ("signed-by-another-key-untrusted", "bob's move receipts are signed by another key than the log's (no "
         "trusted key given: the log's own key)", move_receipts_of(doc, answers_to(doc, 1), OTHER), ()),
        ("of-another-game", "a genuine move receipt of another game is among bob's",
         bobs + move_receipts_of(other_game, [3]), (OPERATOR_HEX,)),
        ("count-changed", "a move receipt's event count is changed (its signature left as it was)",
         bobs[:-1] + [{**last, "events": last["events"] - 1}], (OPERATOR_HEX,)),
        ("chain-changed", "a move receipt's chain is changed (its signature left as it was)",
         bobs[:-1] + [{**last, "chain": flip_hex(last["chain"])}], (OPERATOR_HEX,)),
        ("beyond-the-log", f"a move receipt for {n + 1} events, signed, of a log of {n}",
         bobs + [OPERATOR.sign_receipt(doc["header"]["game_id"], n + 1, hashlib.sha256(b"a move to come").digest())],
         (OPERATOR_HEX,)),
    ]
    for label, what, receipts, keys in cases:
        yield fail(f"v2-move-receipt-{label}", what, doc, "receipt.chain", move_receipts=receipts, trusted_keys=keys)
    yield ok("v2-move-receipts-two-trusted-keys", "nothing: bob's move receipts checked against two trusted keys, "
             "one of them the operator's", doc, move_receipts=bobs, trusted_keys=(OTHER_HEX, OPERATOR_HEX))
    unusable = {"not-an-array": {"receipts": bobs}, "an-element-not-an-object": [last["chain"]],
                "missing-chain": [{k: v for k, v in last.items() if k != "chain"}],
                "events-a-string": [{**last, "events": str(last["events"])}],
                "chain-uppercase": [{**last, "chain": last["chain"].upper()}],
                "extra-field": [{**last, "seat": 1}]}
    for label, bad in unusable.items():
        yield error(f"v2-move-receipts-{label}", f"a genuine log with unusable move receipts "
                    f"({label.replace('-', ' ')})", text(doc), move_receipts=bad)


# --------------------------------------------------------------------------- version 3: players' signatures

def player_key(seat: int) -> PlayerKey:
    """The key the player of `seat` made on its device (fixed here, so the corpus is reproducible)."""
    return PlayerKey.from_private_hex(hashlib.sha256(f"fairdice forged corpus: player key {seat}".encode()).hexdigest())


@dataclass(frozen=True)
class Signed:
    """A version 3 game: its base, which human seats sign (the others sent no key), and who abandons it."""
    base: Base
    signing: tuple


V3_BASES = {g.base.name: g for g in (
    Signed(Base("v3-yacht-ann-vs-greedy", Setup.build("forged-v3-yacht-1", "yacht", [ANN, bot("greedy")]),
                server_seed("v3-yacht-ann-vs-greedy"), {0: "ann signs every move"}), (0,)),
    Signed(Base("v3-classic13-ann-bob-ev", Setup.build("forged-v3-classic13-1", "classic13", [ANN, BOB, bot("ev")],
                                                       first="random"),
                server_seed("v3-classic13-ann-bob-ev"), {1: "bob commits first, and signs", 0: "ann too"},
                abandon_after=4, abandoned_by=CURRENT), (0, 1)),
    Signed(Base("v3-yacht-ann-unsigned-vs-greedy", Setup.build("forged-v3-yacht-2", "yacht", [ANN, bot("greedy")]),
                server_seed("v3-yacht-ann-unsigned"), {0: "ann plays without a key"}), ()),
)}
ONE_V3, TWO_V3, UNSIGNED_V3 = V3_BASES


class V3Player:
    """The players' devices of a version 3 game: each signing seat signs its command over the game's history."""

    def __init__(self, game: Game, signing: tuple):
        self.game, self.keys = game, {seat: player_key(seat) for seat in signing}

    def signed(self, seat, command: dict) -> dict:
        if seat not in self.keys:
            return {}
        g = self.game
        return {"player_signature": self.keys[seat].sign(g.setup.game_id, len(g.events), g.chain.digest, command),
                "event_count": len(g.events)}

    def key_of(self, seat) -> str | None:
        return self.keys[seat].public_hex if seat in self.keys else None

    def opening(self, client_seeds: dict) -> None:
        g, setup = self.game, self.game.setup
        commitments = {}
        if setup.commits_client_seeds:
            for seat, text in client_seeds.items():
                key = self.key_of(seat)
                c = derive.seed_commitment(salt(setup, seat), text, key)
                command = {"type": "client_seed_commit", "seat": seat, "commitment": c, "player_key": key}
                g.commit_client_seed(seat, c, player_key=key, **self.signed(seat, command))
                commitments[seat] = c
        for seat, text in client_seeds.items():
            s = salt(setup, seat) if commitments else None
            command = {"type": "client_seed", "seat": seat, "client_seed": text, "player_key": self.key_of(seat),
                       **({"salt": s} if s else {})}
            g.supply_client_seed(seat, text, s, player_key=self.key_of(seat), **self.signed(seat, command))

    def move(self) -> None:
        """human_move, signed."""
        g = self.game
        seat = g.current_seat
        if g.rolls_made == 0 or (g.rolls_left and len(set(g.dice)) > 1):
            hold = most_common_face(g.dice) if g.rolls_made else []
            command = {"type": "roll", "seat": seat, "turn": g.turn, "roll": g.rolls_made + 1, "hold": hold}
            g.roll(seat, hold, **self.signed(seat, command))
        else:
            box = best_box(g)
            g.score(seat, box, **self.signed(seat, {"type": "score", "seat": seat, "turn": g.turn, "category": box}))

    def abandon(self, seat) -> None:
        command = {"type": "abandon", "seat": seat, "reason": "player"}
        self.game.abandon(seat, "player", **self.signed(seat, command))


def v3_game(name: str, boxes: int | None = None) -> Game:
    """The genuine version 3 game `name`, played to its end or abandon (or stopped once `boxes` are filled)."""
    signed_game = V3_BASES[name]
    base = signed_game.base
    game = Game(base.setup, base.seed, make_header(base.setup, derive.commitment(base.seed), OPERATOR))
    players = V3Player(game, signed_game.signing)
    players.opening(base.client_seeds)
    while game.status == "playing":
        filled = sum(e["type"] == "score" for e in game.events)
        if boxes is not None and filled >= boxes:
            break
        if base.abandon_after is not None and filled >= base.abandon_after \
                and not base.setup.seats[game.current_seat].is_bot:  # the first human seat to play then
            players.abandon(game.current_seat)
            break
        if base.setup.seats[game.current_seat].is_bot:
            do(game, bot_decision(game)) if game.rolls_made else game.roll(game.current_seat)
        else:
            players.move()
    return game


@cache
def genuine_v3(name: str) -> dict:
    base = V3_BASES[name].base
    return log_of(base.setup, base.seed, v3_game(name).events)


def receipt_v3(name: str, seat: int) -> dict:
    """The receipt of version 2 the player of `seat` keeps (SPEC §5.5): with the log version and its key."""
    doc, signed_game = genuine_v3(name), V3_BASES[name]
    head = doc["header"]
    key = player_key(seat).public_hex if seat in signed_game.signing else None
    return {"format": "fairdice-receipt", "version": 2, "game_id": head["game_id"], "seat": seat,
            "commitment": head["commitment"], "client_seed": signed_game.base.client_seeds[seat], "header": head,
            "commitment_signature": doc["commitment_signature"], "public_key": head["public_key"],
            "log_version": 3, "player_key": key}


def last_of_seat(doc: dict, seat: int, before: int | None = None) -> int:
    ev = doc["events"]
    return max(i for i, e in enumerate(ev[:before]) if e.get("seat") == seat and e["type"] != "start")


def v3_genuine_cases() -> Iterator[Case]:
    for name, signed_game in V3_BASES.items():
        doc = genuine_v3(name)
        yield ok(f"genuine-{name}", f"nothing: the genuine version 3 log of {name}", doc)
        for seat in signed_game.base.client_seeds:
            yield ok(f"genuine-{name}-receipt-{seat}", f"nothing: the genuine version 3 log of {name}, checked "
                     f"against the receipt (version 2) of seat {seat}", doc, receipt=receipt_v3(name, seat))
    doc = genuine_v3(ONE_V3)
    yield ok(f"genuine-{ONE_V3}-move-receipts", "nothing: the genuine log, with the move receipts ann kept",
             doc, move_receipts=move_receipts_of(doc, answers_to(doc, 0, ("client_seed", "roll", "score"))),
             receipt=receipt_v3(ONE_V3, 0))


def framed_abandon(name: str, seat: int) -> tuple[dict, Game, int]:
    """The genuine game cut at the start of `seat`'s turn while `seat` leads, with the events so far."""
    base = V3_BASES[name].base
    for boxes in range(2, 13):
        game = v3_game(name, boxes)
        while game.status == "playing" and (game.current_seat != seat or game.rolls_made):
            if base.setup.seats[game.current_seat].is_bot:
                do(game, bot_decision(game)) if game.rolls_made else game.roll(game.current_seat)
            else:
                V3Player(game, V3_BASES[name].signing).move()
        leads = game.totals(seat).total > max(game.totals(s).total for s in range(len(base.setup.seats)) if s != seat)
        if game.status == "playing" and leads:
            return log_of(base.setup, base.seed, game.events), game, boxes
    raise RuntimeError(f"{name}: seat {seat} never leads at the start of its turn")


def v3_framed_cases() -> Iterator[Case]:
    """The operator writes a move (above all an abandon) in a player's name: the player's signature is missing."""
    base = V3_BASES[ONE_V3].base
    cut, game, boxes = framed_abandon(ONE_V3, 0)
    events = cut["events"]
    ann_signatures = [e["player_signature"] for e in events if e.get("seat") == 0]
    abandon = {"type": "abandon", "seat": 0, "reason": "player"}
    what = f"the genuine game cut at the start of ann's turn while she leads ({boxes} boxes filled), and an abandon "
    for label, signature in (("unsigned", None), ("garbage", "ab" * 64), ("her-last-signature", ann_signatures[-1])):
        forged = log_of(base.setup, base.seed, events + [{**abandon, "player_signature": signature}])
        yield fail(f"v3-framed-abandon-{label}", what + f"written in her name with player_signature {label}; re-signed",
                   forged, "player.signature")
    yield fail("v3-framed-abandon-with-her-receipts", what + "written in her name; checked with her receipt and "
               "the move receipts she holds", log_of(base.setup, base.seed, events + [{**abandon, "player_signature":
                                                                                   None}]),
               "player.signature", receipt=receipt_v3(ONE_V3, 0),
               move_receipts=move_receipts_of(cut, answers_to(cut, 0, ("client_seed", "roll", "score"))))
    yield fail("v3-framed-abandon-no-field", what + "without player_signature at all; re-signed",
               log_of(base.setup, base.seed, events + [abandon]), "log.format")
    yield ok("v3-timeout-abandon-while-ann-leads", what.replace("and an abandon ", "and the server's abandon on "
             "its timeout (seat null), its right: only the audit's selective-abandon test weighs it"),
             log_of(base.setup, base.seed, events + [{"type": "abandon", "seat": None, "reason": "timeout"}]))
    doc = genuine_v3(ONE_V3)
    ev = doc["events"]
    last = last_of_seat(doc, 0)
    earlier = last_of_seat(doc, 0, last)
    swapped = edited(doc, ("events", last, "player_signature"), ev[earlier]["player_signature"])
    yield fail("v3-move-with-another-moves-signature", f"ann's last move (event {last}) carries the signature of "
               f"her move at event {earlier}; re-signed", signed(swapped), "player.signature")
    roll = next(i for i in range(last) if ev[i]["type"] == "roll" and ev[i]["seat"] == 0 and ev[i]["roll"] == 2)
    held = edited(doc, ("events", roll, "hold"), sorted(set(ev[roll]["hold"]) ^ {4}))
    yield fail("v3-earlier-move-changed", f"ann's roll at event {roll} is said to hold other dice than she chose, "
               "her signatures left as they were (her last one covers it); re-signed", signed(held), "player.signature")
    own = log_of(base.setup, base.seed, ev[:last] + [{**ev[last], "player_signature": OTHER.sign(b"anything")}])
    yield fail("v3-last-move-signed-by-the-operator", "ann's last move is signed by the operator's own key; "
               "re-signed", own, "player.signature")


def with_player_key(doc: dict, seat: int, new: PlayerKey | None, resign: bool) -> dict:
    """The log with `seat`'s key replaced by `new` (None: no key), its events re-signed by it when `resign`."""
    base = next(g.base for g in V3_BASES.values() if g.base.setup.game_id == doc["header"]["game_id"])
    head = doc["header"]
    events, digest = [], None
    from fairdice.chain import Chain
    chain = Chain.start(head)
    from fairdice.players import command_of
    for i, event in enumerate(copy.deepcopy(doc["events"])):
        if event.get("seat") == seat and event["type"] != "start":
            if "player_key" in event:
                event["player_key"] = new.public_hex if new else None
            if new is None:
                event["player_signature"] = None
            elif resign:
                event["player_signature"] = new.sign(head["game_id"], i, chain.digest, command_of(event))
        events.append(event)
        chain = chain.extend([event])
    del digest
    return log_of(base.setup, base.seed, events)


def v3_key_cases() -> Iterator[Case]:
    doc = genuine_v3(ONE_V3)
    mine = PlayerKey.from_private_hex(hashlib.sha256(b"fairdice forged corpus: the operator's player key").hexdigest())
    replaced = with_player_key(doc, 0, mine, resign=True)
    what = "the operator replaced ann's player key by one of its own and re-signed every move of hers with it"
    yield fail("v3-replaced-player-key", what + "; her receipt holds her key", replaced, "player.signature",
               receipt=receipt_v3(ONE_V3, 0))
    yield ok("v3-replaced-player-key-no-receipt", what + "; without her receipt (or her move receipts) nothing "
             "shows it", replaced)
    yield fail("v3-replaced-player-key-signatures-kept", "the operator replaced ann's player key by its own but "
               "left her signatures", with_player_key(doc, 0, mine, resign=False), "player.signature")
    yield fail("v3-player-key-removed", "the operator removed ann's key (null) and her signatures, as if she had "
               "not signed; her receipt holds her key", with_player_key(doc, 0, None, resign=False), "receipt.match",
               receipt=receipt_v3(ONE_V3, 0))
    two = genuine_v3(TWO_V3)
    reveal = next(i for i, e in enumerate(two["events"]) if e["type"] == "client_seed" and e["seat"] == 1)
    yield fail("v3-reveal-names-another-key", "bob's reveal names another key than his commitment; re-signed",
               signed(edited(two, ("events", reveal, "player_key"), mine.public_hex)), "client_seed.commit")
    bot_signs = copy.deepcopy(doc)
    k = next(i for i, e in enumerate(bot_signs["events"]) if e.get("seat") == 1)
    bot_signs["events"][k]["player_signature"] = None
    yield fail("v3-bot-event-with-a-signature-field", "a bot's roll carries player_signature null; re-signed",
               signed(bot_signs), "log.format")


def downgraded(doc: dict, version: int) -> dict:
    """A version 3 log re-signed as version 1 or 2: the players' keys and signatures stripped."""
    out = copy.deepcopy(doc)
    out["version"] = version
    for event in out["events"]:
        event.pop("player_key", None)
        event.pop("player_signature", None)
        if version == 1:
            event.pop("reason", None)
    if version == 1:
        del out["header"]["abandon_timeout"]
    return signed(out)


def v3_version_cases() -> Iterator[Case]:
    doc = genuine_v3(ONE_V3)
    for version in (2, 1):
        low = downgraded(doc, version)
        what = f"a version 3 game re-signed as version {version}, the players' keys and signatures stripped"
        yield fail(f"v3-resigned-as-v{version}", what + "; ann's receipt records version 3", low, "receipt.match",
                   receipt=receipt_v3(ONE_V3, 0))
        if version == 2:
            yield ok(f"v3-resigned-as-v{version}-no-receipt", what + "; without her receipt it verifies, with the "
                     "warning that the operator could have written every human move", low)
    yield fail("v3-log-labelled-version-2", "a version 3 log labelled version 2, its new fields left; re-signed",
               signed(edited(doc, ("version",), 2)), "log.format")


def unsigned_abandon_cases() -> Iterator[Case]:
    """An abandon in the name of a player who signs nothing: only the player's move receipts can refute it."""
    for name in (UNSIGNED_V3, "v2-yacht-ann-vs-greedy-timeout"):
        base = V3_BASES[name].base if name in V3_BASES else BASES[name]
        source = genuine_v3(name) if name in V3_BASES else genuine(name)
        cut = first_index(source, lambda e: e["type"] == "score" and e["seat"] == 1, 8) + 1
        events = source["events"][:cut]
        abandon = {"type": "abandon", "seat": 0, "reason": "player"}
        if name in V3_BASES:
            abandon["player_signature"] = None
        forged = log_of(base.setup, base.seed, events + [abandon])
        held = move_receipts_of(forged, [n for n in answers_to(forged, 0, ("client_seed", "roll", "score"))
                                         if n <= cut])
        version = 3 if name in V3_BASES else 2
        what = (f"version {version}, ann signs nothing: the operator cuts the game after event {cut - 1} and writes "
                "an abandon in her name")
        yield fail(f"v{version}-unsigned-abandon-with-her-move-receipts", what + "; she holds no receipt of it",
                   forged, "game.abandon", move_receipts=held, receipt=None)
        yield ok(f"v{version}-unsigned-abandon-no-receipts", what + "; without her move receipts it verifies, with "
                 "the warning that the operator could have written her moves", forged)


def equivocation_cases() -> Iterator[Case]:
    """Two logs of one game, each signed by the operator: `fairdice-verify --audit` over both (SPEC §7.1).  Each
    log alone verifies; only together do they show that the server signed two histories of one game."""
    doc = genuine_v3(ONE_V3)
    cut, _, boxes = framed_abandon(ONE_V3, 0)
    base = V3_BASES[ONE_V3].base
    other = log_of(base.setup, base.seed, cut["events"] + [{"type": "abandon", "seat": None, "reason": "timeout"}])
    yield fail("v3-equivocation", f"the operator signed two histories of one game: the whole game, and the game "
               f"abandoned on a timeout after {boxes} boxes; audited together", doc, "log.equivocation",
               audit_with=text(other))
    yield ok("v3-same-log-twice", "nothing: the same signed log in two files, audited together (a note, not a "
             "finding)", doc, audit_with=text(doc))


def v3_cases() -> Iterator[Case]:
    for group in (v3_genuine_cases, v3_framed_cases, v3_key_cases, v3_version_cases, unsigned_abandon_cases,
                  equivocation_cases):
        yield from group()


def v2_cases() -> Iterator[Case]:
    for group in (v2_genuine_cases, v2_commitment_cases, v2_abandon_cases, v2_version_cases, v2_field_cases,
                  move_receipt_cases):
        yield from group()


# --------------------------------------------------------------------------- the corpus

def all_cases() -> list[Case]:
    groups = (genuine_cases, relabel_cases, roll_count_cases, order_cases, receipt_cases, bot_cases, score_cases,
              start_cases, signature_cases, field_cases, format_cases, hostile_cases, rule_cases, v2_cases, v3_cases)
    cases = [case for group in groups for case in group()]
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
    return cases


def build() -> dict[str, bytes]:
    """File name -> bytes, for every file of the corpus; cases with the same bytes share a file."""
    files: dict[str, bytes] = {}
    by_content: dict[bytes, str] = {}
    entries = []
    for case in all_cases():
        file = by_content.setdefault(case.data, f"{case.name}.json")
        files[file] = case.data
        other = None
        if case.audit_with is not None:
            other = by_content.setdefault(case.audit_with, f"{case.name}-other.json")
            files[other] = case.audit_with
        entries.append(case.entry(file, other))
    head = json.dumps({"about": ABOUT, "server_public_key": OPERATOR_HEX}, ensure_ascii=True)[:-1]
    lines = ",\n".join(json.dumps(e, ensure_ascii=True, separators=(",", ":")) for e in entries)
    files["index.json"] = f'{head}, "cases": [\n{lines}\n]}}\n'.encode("ascii")  # one case a line
    return files


def _differences(out: Path, files: dict[str, bytes]) -> tuple[list[str], list[str]]:
    """(files missing or changed, files on disk that the corpus no longer has)."""
    on_disk = {p.name for p in out.glob("*.json")} if out.exists() else set()
    return (sorted(n for n, data in files.items() if n not in on_disk or (out / n).read_bytes() != data),
            sorted(on_disk - files.keys()))


def check_corpus(out: Path, files: dict[str, bytes]) -> int:
    """1 (naming each file) if the directory `out` is not exactly `files`, else 0."""
    stale, extra = _differences(out, files)
    for name in stale + extra:
        print(f"out of date: {out.relative_to(ROOT) / name}")
    return 1 if stale or extra else 0


def write_corpus(out: Path, files: dict[str, bytes]) -> None:
    """Make the directory `out` exactly `files`: stale files rewritten, stray ones removed."""
    stale, extra = _differences(out, files)
    out.mkdir(parents=True, exist_ok=True)
    for name in extra:
        (out / name).unlink()
    for name in stale:
        (out / name).write_bytes(files[name])


def main(argv: list[str]) -> int:
    files = build()
    if "--check" in argv:
        return check_corpus(OUT, files)
    write_corpus(OUT, files)
    cases = json.loads(files["index.json"])["cases"]
    counts = {v: sum(c["verdict"] == v for c in cases) for v in ("ok", "fail", "error")}
    print(f"{len(cases)} cases ({counts}), {len(files)} files, {sum(map(len, files.values()))} bytes")
    return 0


if __name__ == "__main__":
    from support import forge_sessions  # the session logs' corpus (SPEC §10.9), in its own directory

    sys.exit(main(sys.argv[1:]) or forge_sessions.main(sys.argv[1:]))
