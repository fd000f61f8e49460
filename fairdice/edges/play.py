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
its seed, with a key pair of the player's own (SPEC §5.7: every command is
signed with it, and the key is kept, mode 0600, beside the receipt); every
answer's move receipt is checked against the history shown and kept (written
after every move, beside the receipt unless `--save-receipts` says where); at
the end the signed log is fetched and verified against all of it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from .client import (ApiResponseError, Client, ProtocolError, SeedNotAcceptedError, VerificationError,
                     new_client_seed, parse_invite)
from .coachtext import render_analysis
from .playtext import ENGLISH, LANGUAGES, Words, pad

HINT_ALTERNATIVES = 4  # shown after the best move


def configure(parser: argparse.ArgumentParser) -> None:
    from ..rules import RULESETS

    parser.add_argument("--url", default=os.environ.get("FAIRDICE_URL", "http://127.0.0.1:8000"),
                        help="the fairdice server (FAIRDICE_URL; default http://127.0.0.1:8000)")
    parser.add_argument("--rules", default="classic13", choices=list(RULESETS))
    parser.add_argument("--bot", default="ev", help="the opponent: a bot id from the server (default ev)")
    parser.add_argument("--name", help="your name on the score card (default: you, in Chinese 你)")
    parser.add_argument("--first", default="0", choices=["0", "1", "random"],
                        help="who plays first: 0 you, 1 the bot, random a derived roll-off (default 0)")
    parser.add_argument("--upper-first", action="store_true", help="house rule: fill the upper section first")
    parser.add_argument("--client-seed", help="your client seed (default: 32 random hex digits made here)")
    parser.add_argument("--save-log", metavar="FILE", help="write the final signed log to FILE")
    parser.add_argument("--save-receipt", metavar="FILE",
                        help="where to keep your receipt (the game, the signed commitment and your client seed, "
                        "SPEC §5.5), written as soon as your seed is sent (default: <game id>.receipt.json in "
                        "$XDG_DATA_HOME/fairdice/receipts, else ~/.local/share/fairdice/receipts)")
    parser.add_argument("--lang", choices=LANGUAGES, default=os.environ.get("FAIRDICE_LANG") or "en",
                        help="the language of the game: en or zh, 中文 (FAIRDICE_LANG; default en)")
    parser.add_argument("--join", metavar="LINK",
                        help="join a game of friends from its invite link (http://host:port/#game=ID&seat=N&token=T, "
                        "as the page gives it): the server, the game and your seat come from the link")
    parser.add_argument("--save-receipts", metavar="FILE",
                        help="where to keep the server's signed receipt of every move (SPEC §5.6), a JSON array "
                        "rewritten after each move (default: <game id>.moves.json beside your receipt; check them "
                        "with: fairdice-verify --receipts FILE LOG)")


class Terminal:
    """Input and output of one session (replaceable in tests)."""

    def __init__(self, read=input, out=None, words: Words = ENGLISH):
        self.read = read
        self.out = out or sys.stdout
        self.words = words

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def ask(self, prompt: str) -> str | None:
        try:
            return self.read(prompt)
        except EOFError:
            return None


def default_receipt_path(game_id: str, kind: str = "receipt") -> str:
    """Where a player's evidence is kept unless told: the user's data directory, files per game (`kind`:
    receipt, moves, player-key)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in game_id)
    return os.path.join(base, "fairdice", "receipts", f"{safe}.{kind}.json")


def _keep_key(game, term) -> None:
    """The seat's private key, beside its receipt, mode 0600: the player's own, to sign this game's moves."""
    if game.key is None:
        return
    path = default_receipt_path(game.game_id, "player-key")
    doc = {"game_id": game.game_id, "seat": game.seat, "player_key": game.player_key,
           "private_key": game.key.private_hex()}
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh)
        term.say(term.words("your_key", key=game.player_key, path=path))
    except OSError as exc:
        term.say(term.words("key_unwritten", path=path, error=exc.strerror or exc))


POLL_SECONDS = 1.0  # between two looks at a game of friends while another seat moves


def run(args) -> int:
    if getattr(args, "join", None):
        try:
            url, game_id, seat, token = parse_invite(args.join)
        except ValueError as exc:
            print(f"fairdice play: --join: {exc}", file=sys.stderr)
            return 2
        return play(Client(url), args, Terminal(), invite=(game_id, seat, token))
    return play(Client(args.url), args, Terminal())


def play(client: Client, args, term: Terminal, invite: tuple | None = None, poll: float = POLL_SECONDS) -> int:
    """A game in the terminal: a new one against `--bot`, or the seat of an `invite` (game id, seat, token)."""
    term.words = w = Words(getattr(args, "lang", "en"))
    try:
        game = _joined(client, invite, term) if invite else _created(client, args, term)
    except (OSError, ApiResponseError, ValueError) as exc:
        term.say(w("no_server", url=client.base_url, error=exc.__class__.__name__) if isinstance(exc, OSError)
                 else w("failed", error=exc))
        return 2
    if game is None:
        return 2
    term.say(w("committed", game=game.game_id, commitment=game.commitment))
    term.say(w("signed", key=game.created["key_id"]))
    seed = args.client_seed if args.client_seed is not None else new_client_seed()
    try:
        state = game.join(seed)
    except (ApiResponseError, SeedNotAcceptedError) as exc:
        term.say(w("seed_refused", error=exc))
        return 2
    except ProtocolError as exc:
        term.say(w("broke_protocol", error=exc))
        return 1
    args.save_receipts = args.save_receipts or default_receipt_path(game.game_id, "moves")
    _keep_receipts(game, args, term)
    term.say(w("your_seed", seed=seed))
    _keep_key(game, term)
    receipt_path = args.save_receipt or default_receipt_path(game.game_id)
    try:
        os.makedirs(os.path.dirname(os.path.abspath(receipt_path)), exist_ok=True)
        game.save_receipt(receipt_path)
        term.say(w("your_receipt", path=receipt_path))
    except OSError as exc:
        term.say(w("receipt_unwritten", path=receipt_path, error=exc.strerror or exc))
    term.say(w("type_help"))
    seen = state["events_from"]
    state = game.refresh()
    cards_shown_turn = None
    waiting_for = None
    while state["status"] in ("awaiting_client_seed", "playing"):
        seen = _report_others(term, state, seen, game.seat, game.events)
        if state["current_seat"] != game.seat:  # friends still to send their seeds, or a friend's turn
            seats = state["awaiting_client_seeds"] or [state["current_seat"]]  # (bots move within our answers)
            if waiting_for != seats:
                waiting_for = seats
                term.say(w("waiting_for", name=", ".join(w.seat(state["seats"][i]) for i in seats)))
            time.sleep(poll)
            state = game.refresh()
            continue
        waiting_for = None
        if cards_shown_turn != state["turn"] and state["rolls_made"] == 0:
            term.say()
            term.say(render_card(state, w))
            cards_shown_turn = state["turn"]
        term.say()
        term.say(render_turn(state, w))
        line = term.ask("> ")
        if line is None or line.strip().lower() in ("q", "quit", "exit"):
            state = game.abandon()
            _keep_receipts(game, args, term)
            term.say(w("abandoned"))
            seen = state["event_count"]
            break
        try:
            state, seen = _command(game, state, line, term, seen)
            _keep_receipts(game, args, term)
        except ApiResponseError as exc:
            term.say(w("refused", detail=w.problem(exc.code, exc.problem.get("detail", str(exc)))))
            if exc.allowed:
                term.say(w("allowed", allowed=" ".join(str(a) for a in exc.allowed)))
            if exc.status == 409:
                state = game.refresh()
    _report_others(term, state, seen, game.seat, game.events)
    return _finish(game, state, args, term)


def _created(client: Client, args, term: Terminal):
    """A new game of this player against `--bot`, its commitment checked; None when the bot is unknown."""
    w = term.words
    bots = {b["id"] for b in client.bots()}
    if args.bot not in bots:
        term.say(w("unknown_bot", bot=args.bot, bots=", ".join(sorted(bots))))
        return None
    first = args.first if args.first == "random" else int(args.first)
    game = client.new_game(args.rules, bot=args.bot, name=args.name or w("default_name"), first=first,
                           upper_first=args.upper_first)
    game.check_commitment()
    term.say(w("intro", rules=w.rules(args.rules), bot=w.bot(args.bot), url=client.base_url))
    return game


def _joined(client: Client, invite: tuple, term: Terminal):
    """The seat of an invite link, the game's signed header checked against the server's published keys."""
    w = term.words
    game_id, seat, token = invite
    game = client.join_link(game_id, seat, token)
    game.check_commitment()
    head = game.created["header"]
    names = ", ".join(f"{i + 1}: {s['name']}" for i, s in enumerate(head["seats"]))  # seats counted from 1 here
    term.say(w("joining", rules=w.rules(head["rules"]), seat=seat + 1, name=head["seats"][seat]["name"], seats=names,
               url=client.base_url))
    return game


def _keep_receipts(game, args, term) -> None:
    """Rewrite --save-receipts with every move receipt so far (a crash loses none that was answered)."""
    if not args.save_receipts:
        return
    try:
        os.makedirs(os.path.dirname(os.path.abspath(args.save_receipts)), exist_ok=True)
        game.save_receipts(args.save_receipts)
    except OSError as exc:
        term.say(term.words("receipts_unwritten", path=args.save_receipts, error=exc.strerror or exc))
        args.save_receipts = None  # said once; the game goes on


def _command(game, state, line, term, seen):
    w = term.words
    words = line.split()
    if not words:
        return state, seen
    verb, rest = words[0].lower(), words[1:]
    if verb in ("?", "help"):
        term.say(w("help"))
    elif verb in ("h", "hint"):
        term.say(render_hint(game.hint(), words=w))
    elif verb in ("c", "card"):
        term.say(render_card(state, w))
    elif verb in ("r", "roll"):
        try:
            hold = [int(x) for x in rest]
        except ValueError:
            term.say(w("positions"))
            return state, seen
        state = game.roll(hold)
        seen = state["event_count"]
    elif verb in ("s", "score"):
        if len(rest) != 1:
            term.say(w("one_category"))
            return state, seen
        category = w.category_named(state["rules"], rest[0], state["seats"][state["current_seat"]]["card"]) \
            or _category(rest[0], state)
        if isinstance(category, list):
            term.say(w("ambiguous", choices=", ".join(category)))
            return state, seen
        state = game.score(category)
        points = state["events"][0]
        term.say(w("scored", box=w.box(state["rules"], category), points=points["points"], extras=_extras(points, w),
                   total=points["total"]))
        seen = state["events_from"] + 1
    else:
        term.say(w("unknown_command", verb=verb))
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


def _extras(event, w: Words = ENGLISH) -> str:
    parts = []
    if event.get("joker"):
        parts.append(w("joker"))
    if event.get("yahtzee_bonus"):
        parts.append(w("bonus", bonus=event["yahtzee_bonus"]))
    if event.get("upper_bonus"):
        parts.append(w("upper_bonus", bonus=event["upper_bonus"]))
    return w("extras", parts=w("list_sep").join(parts)) if parts else ""


def _report_others(term, state, seen: int, me, history: list[dict]) -> int:
    """Say what the other seats did since event `seen` of `history` (the events this client has checked)."""
    w = term.words
    names = [w.seat(s) for s in state["seats"]]
    rolls = {}
    for event in history[seen:]:
        if event.get("seat") == me:
            continue
        kind = event["type"]
        if kind == "start" and event["rolloff"]:
            term.say(w("rolloff", name=names[event["first"]]))
        elif kind == "roll":
            rolls[event["seat"]] = rolls.get(event["seat"], []) + [event["dice"]]
        elif kind == "score":
            seat = event["seat"]
            throws = "  ".join("".join(map(str, d)) for d in rolls.pop(seat, []))
            term.say(w("other_scored", name=names[seat], throws=throws, box=w.short_box(state["rules"], event["category"]),
                       points=event["points"], extras=_extras(event, w), total=event["total"]))
    return len(history)


def render_turn(state, w: Words = ENGLISH) -> str:
    lines = []
    seat = state["current_seat"]
    if state["rolls_made"] == 0:
        lines.append(w("your_turn", turn=state["turn"]))
        return "\n".join(lines)
    dice = state["dice"]
    lines.append(w("turn_roll", turn=state["turn"], roll=state["rolls_made"])
                 + (w("rolls_left", left=state["rolls_left"]) if state["rolls_left"] else w("score_now")))
    lines.append(w("dice") + "  ".join(str(d) for d in dice))
    lines.append(w("positions_row") + "  ".join(str(i) for i in range(len(dice))))
    options = state["options"]
    card = state["seats"][seat]["card"]
    best = max((o["points"] + o["yahtzee_bonus"] for o in options.values()), default=0)
    cells = []
    for category in card:
        if category in options:
            o = options[category]
            mark = "*" if o["points"] + o["yahtzee_bonus"] == best and best > 0 else ""
            cells.append(f"{w.box(state['rules'], category)} {o['points']}{w('option_joker') if o['joker'] else ''}"
                         f"{' +' + str(o['yahtzee_bonus']) if o['yahtzee_bonus'] else ''}{mark}")
    lines.append(w("options") + " | ".join(cells))
    return "\n".join(lines)


def _move(alt: dict, dice: list[int], rules: str = "", w: Words = ENGLISH) -> tuple[str, str]:
    """(what to do, the command that does it) for one alternative of a hint."""
    if alt["action"] == "score":
        box = w.short_box(rules, alt["category"])  # the command in the game's language: `s 葫芦` in Chinese
        return w("move_score", box=box, points=alt["points"]) + _extras(alt, w), f"s {box}"
    if not dice:
        return w("move_roll"), "r"
    if not alt["hold"]:
        return w("move_reroll"), "r"
    keep = " ".join(str(f) for f in alt["keep"])
    return w("move_keep", keep=keep, count=len(dice) - len(alt["hold"])), "r " + " ".join(str(p) for p in alt["hold"])


def render_hint(doc: dict, alternatives: int = HINT_ALTERNATIVES, words: Words = ENGLISH) -> str:
    """The best move and the next `alternatives`, each with its value (the expected final score of your card
    when the rest is played optimally) and how much less than the best it is expected to make."""
    w = words
    kind = w("kind_final") if doc["value_kind"] == "expected_final_score" else w("kind_turn")
    lines = [w("hint_head", engine=doc["engine"], kind=kind)]
    if doc.get("note"):
        lines.append(f"  ({w('hint_note_ev') if w.lang != 'en' and doc['engine'] == 'ev' else doc['note']})")
    shown = doc["alternatives"][:1 + alternatives]
    moves = [_move(alt, doc["dice"], doc.get("rules", ""), w) for alt in shown]
    width = max(w.width(what) for what, _ in moves)
    cwidth = max(len(cmd) for _, cmd in moves)
    best = w("best")
    for i, (alt, (what, cmd)) in enumerate(zip(shown, moves)):
        value = "" if alt["value"] is None else f"{alt['value']:8.2f}"
        loss = f"  -{alt['loss']:.2f}" if i and alt["loss"] else ""
        lines.append(f"  {pad(best if i == 0 else '', w.width(best))}  {pad(what, width)}  {cmd:<{cwidth}}{value}{loss}")
    if doc["tied"] > 1:
        lines.append(w("tied", count=doc["tied"]))
    more = len(doc["alternatives"]) - len(shown)
    if more > 0:
        lines.append(w("more", count=more))
    return "\n".join(lines)


def render_card(state, w: Words = ENGLISH) -> str:
    seats = state["seats"]
    names = [w.seat(s)[:16] for s in seats]
    labels = {c: w.box(state.get("rules", ""), c) for c in seats[0]["card"]}
    sums = (("card_upper_bonus", "upper_bonus"), ("card_yahtzee_bonus", "yahtzee_bonus"), ("card_total", "total"))
    width = max(w.width(x) for x in [*labels.values(), *(w(k) for k, _ in sums)] if x) + 2
    col = max(8, *(w.width(n) + 2 for n in names))
    rows = [" " * width + "".join(pad(n, col, right=True) for n in names)]
    for category in seats[0]["card"]:
        values = ["." if s["card"][category] is None else str(s["card"][category]) for s in seats]
        rows.append(pad(labels[category], width) + "".join(f"{v:>{col}}" for v in values))
    for label, key in sums:
        if key == "yahtzee_bonus" and not any(s["totals"][key] for s in seats):
            continue
        rows.append(pad(w(label), width) + "".join(f"{s['totals'][key]:>{col}}" for s in seats))
    return "\n".join(rows)


def _coach(game, term) -> None:
    """The coach's summary of the game that just ended (GET /v1/games/{id}/analysis, what `fairdice analyze
    LOG` prints): every seat's expected points left on the table, this seat's costliest decisions."""
    try:
        doc = game.client.analysis(game.game_id)
    except ApiResponseError as exc:
        if exc.code != "analysis_unavailable":
            term.say(term.words("coach_none", detail=term.words.problem(exc.code, exc.problem.get("detail", str(exc)))))
            return
        doc = {"available": False, "reason": exc.problem.get("reason"), "detail": exc.problem.get("detail", "")}
    except (OSError, ValueError) as exc:
        term.say(term.words("coach_none", detail=exc.__class__.__name__))
        return
    term.say()
    term.say(render_analysis(doc, term.words, focus=game.seat))


def _finish(game, state, args, term) -> int:
    w = term.words
    final = state.get("final") or game.refresh().get("final")
    term.say()
    term.say(render_card(state, w))
    if final:
        names = [w.seat(s) for s in state["seats"]]
        if final["status"] == "finished":
            if final["draw"]:
                term.say(w("draw"))
            else:
                winner = final["winner"]
                term.say(w("you_win") if winner == game.seat else w("wins", name=names[winner]))
        term.say(w("seed_revealed", seed=final["server_seed"]))
    try:
        warnings, problems = game.verify().warnings, []
    except VerificationError as failed:
        warnings, problems = failed.warnings, failed.problems
    for warning in warnings:
        term.say(w("warning", warning=warning))
    if not problems:
        term.say(w("verified"))
    else:
        term.say(w("not_verified"))
        for problem in problems:
            term.say(w("problem", problem=problem))
    if final:
        _coach(game, term)
    if args.save_log:
        with open(args.save_log, "w") as fh:
            json.dump(game.log(), fh, indent=1)
        term.say(w("log_written", path=args.save_log))
    if args.save_receipts:
        term.say(w("receipts_written", count=len(game.receipts), path=args.save_receipts))
    return 1 if problems else 0
