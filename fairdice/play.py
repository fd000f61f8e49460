"""`fairdice play`: a game against a bot in the terminal, through the HTTP API.

    fairdice play --url http://127.0.0.1:8000 --rules classic13 --bot ev

Commands at the prompt:
    r               roll (the first roll of a turn throws all five dice)
    r 0 2 4         roll again, keeping the dice at positions 0, 2 and 4
    s full_house    score the dice in a category (a unique prefix will do: s full)
    h               hint: the best move and the next best, with expected final scores
    c               show the score card        ?  help
    q               quit: abandon the game (the server reveals its seed)

The client seed is made here with `secrets` after the server has committed to
its seed; at the end the signed log is fetched and verified.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .client import ApiError, Client, new_client_seed

HELP = """commands:
  r               roll (first roll of a turn: all five dice)
  r 0 2 4         roll again keeping the dice at positions 0, 2, 4
  s <category>    score in a category (unique prefix: 's full' for full_house)
  h               hint: the best move now and the next best, with their expected final scores
  c               show the score card
  q               quit (abandon: the server reveals its seed)
  ?               this help"""

HINT_ALTERNATIVES = 4  # shown after the best move


def configure(parser: argparse.ArgumentParser) -> None:
    from .rules import RULESETS

    parser.add_argument("--url", default=os.environ.get("FAIRDICE_URL", "http://127.0.0.1:8000"),
                        help="the fairdice server (FAIRDICE_URL; default http://127.0.0.1:8000)")
    parser.add_argument("--rules", default="classic13", choices=list(RULESETS))
    parser.add_argument("--bot", default="ev", help="the opponent: a bot id from the server (default ev)")
    parser.add_argument("--name", default="you", help="your name on the score card")
    parser.add_argument("--first", default="0", choices=["0", "1", "random"],
                        help="who plays first: 0 you, 1 the bot, random a derived roll-off (default 0)")
    parser.add_argument("--upper-first", action="store_true", help="house rule: fill the upper section first")
    parser.add_argument("--client-seed", help="your client seed (default: 32 random hex digits made here)")
    parser.add_argument("--save-log", metavar="FILE", help="write the final signed log to FILE")
    parser.add_argument("--save-receipt", metavar="FILE",
                        help="where to keep your receipt (the game, the signed commitment and your client seed, "
                        "SPEC §5.5), written as soon as your seed is sent (default: <game id>.receipt.json in "
                        "$XDG_DATA_HOME/fairdice/receipts, else ~/.local/share/fairdice/receipts)")


class Terminal:
    """Input and output of one session (replaceable in tests)."""

    def __init__(self, read=input, out=None):
        self.read = read
        self.out = out or sys.stdout

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def ask(self, prompt: str) -> str | None:
        try:
            return self.read(prompt)
        except EOFError:
            return None


def default_receipt_path(game_id: str) -> str:
    """Where a receipt is kept unless told: the user's data directory, one file per game."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in game_id)
    return os.path.join(base, "fairdice", "receipts", f"{safe}.receipt.json")


def run(args) -> int:
    return play(Client(args.url), args, Terminal())


def play(client: Client, args, term: Terminal) -> int:
    try:
        bots = {b["id"] for b in client.bots()}
    except (OSError, ApiError) as exc:
        term.say(f"fairdice play: cannot reach a fairdice server at {client.base_url} ({exc.__class__.__name__}); "
                 "start one with `fairdice serve`")
        return 2
    if args.bot not in bots:
        term.say(f"fairdice play: unknown bot {args.bot!r}; this server has: {', '.join(sorted(bots))}")
        return 2
    first = args.first if args.first == "random" else int(args.first)
    try:
        game = client.new_game(args.rules, bot=args.bot, name=args.name, first=first, upper_first=args.upper_first)
        game.check_commitment()
    except (ApiError, ValueError) as exc:
        term.say(f"fairdice play: {exc}")
        return 2
    term.say(f"{args.rules} against the {args.bot} bot, at {client.base_url}")
    term.say(f"game {game.game_id}: the server committed to its seed {game.commitment}")
    term.say(f"  (signature checked against key {game.created['key_id']})")
    seed = args.client_seed if args.client_seed is not None else new_client_seed()
    try:
        state = game.join(seed)
    except ApiError as exc:
        term.say(f"fairdice play: client seed refused: {exc}")
        return 2
    term.say(f"your client seed: {seed}")
    receipt_path = args.save_receipt or default_receipt_path(game.game_id)
    try:
        os.makedirs(os.path.dirname(os.path.abspath(receipt_path)), exist_ok=True)
        game.save_receipt(receipt_path)
        term.say(f"your receipt: {receipt_path} (after the game: fairdice-verify --receipt {receipt_path} LOG)")
    except OSError as exc:
        term.say(f"fairdice play: could not write your receipt to {receipt_path}: {exc.strerror or exc}"
                 " (the game goes on; it is checked against the receipt kept in memory at the end)")
    term.say("type ? for help, h for a hint")
    seen = state["events_from"]
    state = game.refresh()
    cards_shown_turn = None
    while state["status"] == "playing":
        seen = _report_others(term, state, seen, game.seat)
        if state["current_seat"] != game.seat:  # cannot happen: bots move server-side
            state = game.refresh()
            continue
        if cards_shown_turn != state["turn"] and state["rolls_made"] == 0:
            term.say()
            term.say(render_card(state))
            cards_shown_turn = state["turn"]
        term.say()
        term.say(render_turn(state))
        line = term.ask("> ")
        if line is None or line.strip().lower() in ("q", "quit", "exit"):
            state = game.abandon()
            term.say("game abandoned")
            seen = state["event_count"]
            break
        try:
            state, seen = _command(game, state, line, term, seen)
        except ApiError as exc:
            term.say(f"  refused: {exc.problem.get('detail', exc)}")
            if exc.allowed:
                term.say(f"  allowed: {' '.join(str(a) for a in exc.allowed)}")
            if exc.status == 409:
                state = game.refresh()
    _report_others(term, state, seen, game.seat)
    return _finish(game, state, args, term)


def _command(game, state, line, term, seen):
    words = line.split()
    if not words:
        return state, seen
    verb, rest = words[0].lower(), words[1:]
    if verb in ("?", "help"):
        term.say(HELP)
    elif verb in ("h", "hint"):
        term.say(render_hint(game.hint()))
    elif verb in ("c", "card"):
        term.say(render_card(state))
    elif verb in ("r", "roll"):
        try:
            hold = [int(w) for w in rest]
        except ValueError:
            term.say("  positions are numbers 0..4, e.g. r 0 2 4")
            return state, seen
        state = game.roll(hold)
        seen = state["event_count"]
    elif verb in ("s", "score"):
        if len(rest) != 1:
            term.say("  name one category, e.g. s full_house")
            return state, seen
        category = _category(rest[0], state)
        if isinstance(category, list):
            term.say(f"  ambiguous: {', '.join(category)}")
            return state, seen
        state = game.score(category)
        points = state["events"][0]
        term.say(f"  {category}: {points['points']} points" + _extras(points) + f", total {points['total']}")
        seen = state["events_from"] + 1
    else:
        term.say(f"  unknown command {verb!r}; ? for help")
    return state, seen


def _category(word: str, state) -> str | list[str]:
    """The category a word names: exact, else the one open (or only) category it begins; several: the list."""
    card = state["seats"][state["current_seat"]]["card"]
    word = word.lower()
    if word in card:
        return word
    matches = [c for c in card if c.startswith(word)]
    open_matches = [c for c in matches if card[c] is None]
    if len(open_matches) == 1:
        return open_matches[0]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        return word  # unknown: the server says what is allowed
    return open_matches or matches


def _extras(event) -> str:
    parts = []
    if event.get("joker"):
        parts.append("joker")
    if event.get("yahtzee_bonus"):
        parts.append(f"+{event['yahtzee_bonus']} bonus")
    if event.get("upper_bonus"):
        parts.append(f"+{event['upper_bonus']} upper bonus")
    return f" ({', '.join(parts)})" if parts else ""


def _report_others(term, state, seen: int, me) -> int:
    """Say what the other seats did since event `seen` (bots move server-side)."""
    events = state["events"]
    offset = state["events_from"]
    names = [s["name"] for s in state["seats"]]
    rolls = {}
    for i, event in enumerate(events):
        if offset + i < seen or event.get("seat") == me:
            continue
        kind = event["type"]
        if kind == "start" and event["rolloff"]:
            term.say(f"roll-off: {names[event['first']]} plays first")
        elif kind == "roll":
            rolls[event["seat"]] = rolls.get(event["seat"], []) + [event["dice"]]
        elif kind == "score":
            seat = event["seat"]
            throws = "  ".join("".join(map(str, d)) for d in rolls.pop(seat, []))
            term.say(f"{names[seat]} rolled {throws} and scored {event['category']} for {event['points']}"
                     + _extras(event) + f" (total {event['total']})")
    return offset + len(events)


def render_turn(state) -> str:
    lines = []
    seat = state["current_seat"]
    if state["rolls_made"] == 0:
        lines.append(f"your turn {state['turn']}: r to roll")
        return "\n".join(lines)
    dice = state["dice"]
    lines.append(f"turn {state['turn']}, roll {state['rolls_made']} of 3"
                 + (f" ({state['rolls_left']} left)" if state["rolls_left"] else " (score now)"))
    lines.append("  dice      " + "  ".join(str(d) for d in dice))
    lines.append("  position  " + "  ".join(str(i) for i in range(len(dice))))
    options = state["options"]
    card = state["seats"][seat]["card"]
    best = max((o["points"] + o["yahtzee_bonus"] for o in options.values()), default=0)
    cells = []
    for category in card:
        if category in options:
            o = options[category]
            mark = "*" if o["points"] + o["yahtzee_bonus"] == best and best > 0 else ""
            cells.append(f"{category} {o['points']}{' joker' if o['joker'] else ''}"
                         f"{' +' + str(o['yahtzee_bonus']) if o['yahtzee_bonus'] else ''}{mark}")
    lines.append("  options: " + " | ".join(cells))
    return "\n".join(lines)


def _move(alt: dict, dice: list[int]) -> tuple[str, str]:
    """(what to do, the command that does it) for one alternative of a hint."""
    if alt["action"] == "score":
        return f"score {alt['category']} for {alt['points']}" + _extras(alt), f"s {alt['category']}"
    if not dice:
        return "roll all five", "r"
    if not alt["hold"]:
        return "reroll all five", "r"
    keep = " ".join(str(f) for f in alt["keep"])
    return f"keep {keep}, roll {len(dice) - len(alt['hold'])}", "r " + " ".join(str(p) for p in alt["hold"])


def render_hint(doc: dict, alternatives: int = HINT_ALTERNATIVES) -> str:
    """The best move and the next `alternatives`, each with its value (the expected final score of your card
    when the rest is played optimally) and how much less than the best it is expected to make."""
    kind = "expected final score" if doc["value_kind"] == "expected_final_score" else "expected points this turn"
    lines = [f"  hint ({doc['engine']} engine; values: {kind})"]
    if doc.get("note"):
        lines.append(f"  ({doc['note']})")
    shown = doc["alternatives"][:1 + alternatives]
    moves = [_move(alt, doc["dice"]) for alt in shown]
    width = max(len(what) for what, _ in moves)
    cwidth = max(len(cmd) for _, cmd in moves)
    for i, (alt, (what, cmd)) in enumerate(zip(shown, moves)):
        value = "" if alt["value"] is None else f"{alt['value']:8.2f}"
        loss = f"  -{alt['loss']:.2f}" if i and alt["loss"] else ""
        lines.append(f"  {'best' if i == 0 else '    '}  {what:<{width}}  {cmd:<{cwidth}}{value}{loss}")
    if doc["tied"] > 1:
        lines.append(f"  ({doc['tied']} moves are equally good)")
    more = len(doc["alternatives"]) - len(shown)
    if more > 0:
        lines.append(f"  ({more} more alternatives)")
    return "\n".join(lines)


def render_card(state) -> str:
    seats = state["seats"]
    names = [s["name"][:16] for s in seats]
    width = max(len(c) for c in seats[0]["card"]) + 2
    col = max(8, *(len(n) + 2 for n in names))
    rows = [" " * width + "".join(f"{n:>{col}}" for n in names)]
    for category in seats[0]["card"]:
        values = ["." if s["card"][category] is None else str(s["card"][category]) for s in seats]
        rows.append(f"{category:<{width}}" + "".join(f"{v:>{col}}" for v in values))
    for label, key in (("upper bonus", "upper_bonus"), ("yahtzee bonus", "yahtzee_bonus"), ("total", "total")):
        if key == "yahtzee_bonus" and not any(s["totals"][key] for s in seats):
            continue
        rows.append(f"{label:<{width}}" + "".join(f"{s['totals'][key]:>{col}}" for s in seats))
    return "\n".join(rows)


def _finish(game, state, args, term) -> int:
    final = state.get("final") or game.refresh().get("final")
    term.say()
    term.say(render_card(state))
    if final:
        names = [s["name"] for s in state["seats"]]
        if final["status"] == "finished":
            if final["draw"]:
                term.say("a draw")
            else:
                term.say(f"{names[final['winner']]} wins")
        term.say(f"server seed revealed: {final['server_seed']}")
    result = game.verify()
    if result.ok:
        term.say("log verified (by the independent verifier, against your receipt): signatures, commitment, "
                 "your client seed, every die, every score, every bot decision")
    else:
        term.say("LOG DOES NOT VERIFY:")
        for problem in result.problems:
            term.say(f"  {problem}")
    if args.save_log:
        with open(args.save_log, "w") as fh:
            json.dump(game.log(), fh, indent=1)
        term.say(f"log written to {args.save_log} (check it with: fairdice-verify {args.save_log})")
    return 0 if result.ok else 1
