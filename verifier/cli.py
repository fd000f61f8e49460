"""fairdice-verify [options] PATH...  (also: python -m verifier)

Exit codes: 0 every game verified; 1 at least one check failed (or, with --audit, a finding);
2 a usage error, or input that is not a log at all."""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing
import os
import sys
import time

from . import audit as audit_mod
from .evidence import Inputs, sort_inputs
from .files import find_logs, verify_file
from .botcheck import PublishedBots
from .keys import KeyFileError, TrustedKeys, load_trusted_keys
from .optimal import TableError
from .chain import MoveReceiptError, load_move_receipts
from .receipt import ReceiptError, load_receipt
from .replay import CHECKS, Result
from .results import unsigned_warning
from .sessions import SessionReceiptError, load_session_receipts, session_json, session_lines

PROG = "fairdice-verify"
_options: dict = {}  # per process: the options of verify_file (set before the pool forks, and inherited)


def _init(options: dict) -> None:
    global _options
    _options = dict(options)
    tables = _options.pop("tables", None)
    if _options.pop("check_bots", False):
        _options["bots"] = PublishedBots(tables)


def _work(path: str):
    return verify_file(path, **_options)


def verify_all(files: list[str], options: dict, jobs: int, progress: bool = True):
    """Yield a Result per file, in order, on `jobs` processes; progress on stderr after a second."""
    start = last = time.monotonic()

    def tick(done):
        nonlocal last
        now = time.monotonic()
        if progress and now - start > 1 and now - last > 1:
            last = now
            print(f"{PROG}: {done}/{len(files)} logs ({done / (now - start):.0f}/s)", file=sys.stderr, flush=True)

    _init(options)
    if jobs > 1 and len(files) >= 64:
        # the first log is verified here, before the workers fork: the tables it needs are read, and the turns its
        # bots played are solved (every game's first turns among them), once for all the workers, which inherit them
        yield _work(files[0])
        forked = "fork" in multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if forked else None)
        chunk = max(1, min(64, len(files) // (jobs * 16)))
        with ctx.Pool(jobs, initializer=None if forked else _init, initargs=() if forked else (options,)) as pool:
            for done, r in enumerate(pool.imap(_work, files[1:], chunksize=chunk), 2):
                tick(done)
                yield r
    else:
        for done, path in enumerate(files, 1):
            tick(done)
            yield _work(path)


def describe_failure(f) -> str:
    """A failure as SPEC §7 names it: check, event index (`-` for the whole log), field, expected, found."""
    event = "-" if f.event is None else f.event
    if f.check == "seed.revealed":
        return (f"seed.revealed  event -  field final: the game is not over (final is null), so its server seed "
                f"is not revealed and its dice cannot be checked yet")
    return f"{f.check}  event {event}  field {f.field}: expected {shown(f.expected)}, found {shown(f.found)}"


def error_line(where: str, message: str) -> str:
    """A usage error: where it is (a file, an option) and what is wrong, the field named in the message when
    there is one (no "event -, field -" placeholders for what an error of a whole file does not have)."""
    return printable(f"{PROG}: error: {where}: {message}")


def shown(value, limit: int = 200) -> str:
    """A value as JSON, cut to `limit` characters: a hostile log's 16 MiB string is not a 16 MiB line
    (the whole value is in --json)."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def printable(line: str) -> str:
    """`line` with every unprintable character escaped: a file name, or a key or value of a hostile log,
    must neither break a result into several lines nor send control codes to the terminal."""
    return line if line.isprintable() else "".join(c if c.isprintable() else ascii(c)[1:-1] for c in line)


def game_lines(r, verbose: bool, evidence: list = ()) -> list[str]:
    """The result lines of one file, each made printable; `evidence`: the player's files found among the inputs
    that this log was held to (verifier.evidence)."""
    if r.error is not None:
        return [printable(f"ERROR {r.file}: {r.error}" + ("" if r.evidence_error else " (not a fairdice log)"))]
    if r.kind == "session":
        return [printable(line) for line in session_lines(r)]
    if r.signed and "fail" in (r.checks["sig.commitment"], r.checks["sig.final"]):
        signed = "signature INVALID"
    elif r.signed:
        signed = "signed"
    elif r.status == "in progress" and r.checks["sig.commitment"] != "skip":
        signed = "header signed; the log is signed once the game is over"
    elif r.checks["log.format"] == "fail":
        signed = "signatures not checked: the log is malformed"
    else:
        signed = "UNSIGNED"
    notes = [r.status or "?", signed]
    if r.signed:
        notes.append("trusted key" if r.trusted else "embedded key only: origin not checked")
    if r.checks["receipt.match"] == "pass":
        notes.append("matches the receipt")
    if r.checks["receipt.chain"] == "pass":
        notes.append("matches the move receipts")
    if r.bots and not r.bots_checked:
        notes.append("bot decisions NOT checked")
    if r.seed_secret is False:
        notes.append("public seed")
    if r.status == "abandoned" and r.abandoned_by:
        notes.append(f"abandoned by {r.abandoned_by}")
    if r.status == "abandoned" and r.ok:
        notes.append("verified up to the abandon event")
    lines = [f"{'OK  ' if r.ok else 'FAIL'}  {r.game_id or '?'}  {r.file}  ({', '.join(notes)})"]
    if evidence:
        lines.append("      held to: " + ", ".join(e.described(r.game_id) for e in evidence))
    warning = unsigned_warning(r)
    if warning:
        lines.append("      WARNING: " + warning)
    lines += ["      " + describe_failure(f) for f in r.failures]
    lines += [f"      ... and {n} more {c} failures" for c, n in r.unlisted.items()]
    if verbose and r.replay:
        lines += r.replay
    return [printable(line) for line in lines]


def game_json(r) -> dict:
    if r.error is not None:
        return {"file": r.file, "error": r.error, "ok": False}
    if r.kind == "session":
        return session_json(r)
    return {"file": r.file, "game_id": r.game_id, "rules": r.rules, "status": r.status, "ok": r.ok,
            "signed": r.signed, "trusted_key": r.trusted, "seed_secret": r.seed_secret, "checks": r.checks,
            "abandoned_by": r.abandoned_by, "bots_checked": r.bots_checked, "version": r.version,
            "unsigned_seats": r.unsigned_seats, "warnings": [w for w in (unsigned_warning(r),) if w],
            "failures": [f.as_dict() for f in r.failures], "unlisted_failures": r.unlisted,
            **({"replay": r.replay} if r.replay is not None else {})}


def summary_clauses(counts: dict, trusted: bool, receipts: bool, bots_checked: bool) -> list[tuple[str, bool]]:
    """What the verdicts do not cover, plainly, after the counts: (clause, whether it is a warning). The text
    summary and the HTML report (which lists the warnings) say the same."""
    if trusted:
        origin = "a trusted key (--pubkey)"
    elif receipts:
        origin = "the key of the receipt, for the games of a receipt, else the key inside the log"
    else:
        origin = ("the key inside each log only: the ORIGIN WAS NOT CHECKED (anyone can sign a log with a key of "
                  "their own; pass --pubkey with the server's key from GET /v1/keys)")
    clauses = [
        (f"{counts['unsigned']} unsigned (allowed by --allow-unsigned: those prove only that they are "
         "self-consistent, not that the server made them)", counts["unsigned"]),
        (f"{counts['not_logs']} files are not logs", counts["not_logs"]),
        (f"{counts['orphans']} of the player's evidence files without the log of their game (FAIL)", counts["orphans"]),
        (f"{counts['public_seed']} with a public seed (seed_secret false: they prove the dice and the scores, not "
         "that the seed was unknown beforehand)", counts["public_seed"]),
        (f"{counts['unsigned_moves']} with human moves the players did not sign (the operator could have written "
         "them)", counts["unsigned_moves"]),
        ("bot decisions NOT checked (--no-check-bots)", not bots_checked),
    ]
    return [(text, True) for text, present in clauses if present] + [
        (f"signatures checked against {origin}", not (trusted or receipts))]


def summary_line(counts: dict, trusted: bool, receipts: bool, bots_checked: bool) -> str:
    """The closing line: the counts, and plainly what the verdicts do not cover."""
    clauses = [text for text, _ in summary_clauses(counts, trusted, receipts, bots_checked)]
    unsigned = clauses.pop(0) if counts["unsigned"] else None
    logs = f"{counts['games']} games" + (f", {counts['sessions']} dice sessions" if counts.get("sessions") else "")
    return (f"{PROG}: {logs}: {counts['ok']} OK, {counts['failed']} FAIL"
            + (f", {unsigned}" if unsigned else "") + "".join(f"; {c}" for c in clauses))


def unusable_results(inputs: Inputs) -> list[Result]:
    """A result line for each file of a player's evidence that cannot be used (a usage error, exit 2, as a
    --receipt would be), in place of a log's."""
    return [Result(path, error=why, evidence_error=True) for path, why in inputs.unusable]


ORPHANS = {"receipt": ("receipt.match", "this receipt's"), "moves": ("receipt.chain", "these move receipts'"),
           "key": ("receipt.match", "this key file's")}  # a player's evidence without its log: check, and whose game


def orphan_lines(inputs: Inputs, given: list[tuple[str, dict]], game_ids: set) -> list[str]:
    """A FAIL line for each file of the player's evidence (found among the inputs, or given with --receipt and
    --receipts) and each game of it whose log is not among the inputs (SPEC §5.5, §5.6, §7.2)."""
    held = [(e.file, e.kind, item["game_id"]) for e in inputs.evidence for item in e.items]
    held += [(path, "moves" if "chain" in rc else "receipt", rc["game_id"]) for path, rc in given]
    return [printable(f"FAIL  {game_id}  {path}  ({ORPHANS[kind][0]}: no log of {ORPHANS[kind][1]} game among the "
                      "inputs)") for path, kind, game_id in dict.fromkeys(held) if game_id not in game_ids]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Verify fairdice game logs (SPEC.md §7) independently "
                                "of the server: signatures (the server's, and in log version 3 the players' own: "
                                "check player.signature), seed commitment, every die, every score.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="a log file, or a directory searched for *.json; a "
                   "player's receipt, move receipts or key file among them (as the page and `fairdice play` save "
                   "them) is recognised and held to the log of its game (SPEC §7.2)")
    p.add_argument("--pubkey", metavar="FILE", help="the trusted server key: 64 hex digits, a PEM public key, "
                   "or the JSON of GET /v1/keys (without it the key inside each log is used: self-consistency only)")
    p.add_argument("--receipt", metavar="FILE", action="append", default=[],
                   help="a player's receipt (SPEC §5.5: kept by the page, the client and `fairdice play` when the "
                   "client seed was sent): the log must be that game, with that commitment and that client seed "
                   "(and, in a receipt of version 2, that log version and player key, with which the seat's "
                   "signatures are checked); may be given once per receipt")
    p.add_argument("--receipts", metavar="FILE", action="append", default=[],
                   help="the server's signed receipts of the moves (SPEC §5.6), a JSON array as the page, the "
                   "client and `fairdice play --save-receipts` keep them: the log must be the history they sign, and "
                   "an abandon in the player's name that the player did not sign must be among them")
    p.add_argument("--session-receipts", metavar="FILE", action="append", default=[],
                   help="the server's signed receipts of a session's answers (SPEC §10.6), a JSON array as the "
                   "Python client's Session keeps them: the session log must be the history they sign")
    p.add_argument("--app-key", metavar="HEX", help="the app's own public key (SPEC §10.7, 64 hex digits): every "
                   "seed pair of a session log must be signed by it")
    p.add_argument("--allow-unsigned", action="store_true",
                   help="accept a log without its signatures (it then proves only that it is self-consistent, "
                   "not that the server made it)")
    p.add_argument("--require-signature", action="store_true", help=argparse.SUPPRESS)  # the default since v0.2
    p.add_argument("--no-check-bots", dest="check_bots", action="store_false",
                   help="do not replay the bot decisions (a bot that saw the future then goes unnoticed)")
    p.add_argument("--check-bots", dest="check_bots", action="store_true", default=True,
                   help="replay every bot decision with its published policy (the default)")
    p.add_argument("--tables", metavar="DIR", help="the directory of the optimal bot's tables (SPEC §4.6), only "
                   "read; default $FAIRDICE_CACHE_DIR, else $XDG_CACHE_HOME/fairdice, else ~/.cache/fairdice")
    p.add_argument("-v", "--verbose", action="store_true", help="print each game turn by turn")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout; text goes to stderr")
    p.add_argument("--audit", action="store_true", help="statistics over all logs: face uniformity, seed reuse, "
                   "scores, two signed logs of one game that differ (log.equivocation), selective unsigned abandons")
    p.add_argument("--html", metavar="FILE", help="write the audit as a self-contained HTML page (implies --audit)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: all cores)")
    return p


def main(argv=None) -> int:
    for stream in (sys.stdout, sys.stderr):  # an undecodable file name is printed escaped, not a traceback
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    try:
        return run(argv)
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except TableError as e:  # an optimal game, and its table missing or not the published one
        print(error_line(e.where, e.message), file=sys.stderr)
        return 2


def run(argv=None) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:
        return 0 if e.code in (0, None) else 2
    text = sys.stderr if args.json else sys.stdout

    def error(where: str, message: str) -> int:
        print(error_line(where, message), file=sys.stderr)
        return 2

    trusted = None
    if args.pubkey:
        try:
            trusted = TrustedKeys(load_trusted_keys(args.pubkey))  # (once: a signature is tried by its key id)
        except KeyFileError as e:
            return error(args.pubkey, f"--pubkey: {e}")
    receipts, move_receipts = [], []
    for path in args.receipt:
        try:
            receipts.append(load_receipt(path))
        except ReceiptError as e:
            return error(path, f"--receipt: {e}")
    for path in args.receipts:
        try:
            move_receipts += [(path, rc) for rc in load_move_receipts(path)]
        except MoveReceiptError as e:
            return error(path, f"--receipts: {e}")
    session_receipts = []
    for path in args.session_receipts:
        try:
            session_receipts += load_session_receipts(path)
        except SessionReceiptError as e:
            return error(path, f"--session-receipts: {e}")
    if args.app_key is not None and not (len(args.app_key) == 64 and all(c in "0123456789abcdef" for c in args.app_key)):
        return error("--app-key", "not 64 lowercase hex digits (the app's raw Ed25519 public key)")
    if args.tables and not os.path.isdir(args.tables):
        return error(args.tables, "--tables: not a directory")
    files, missing = find_logs(args.paths)
    usage_errors = 0
    for path in missing:
        usage_errors += 1
        error(path, "cannot be read (no such file or directory, or no permission to list it)"
              if os.path.lexists(path) else "no such file or directory")
    if not files and not missing:
        return error(" ".join(args.paths), "no *.json log found")
    inputs = sort_inputs(files)
    given = [(path, rc) for path, rc in zip(args.receipt, receipts)] + [(path, rc) for path, rc in move_receipts]
    receipts = receipts + inputs.of_kind("receipt")
    move_receipts = [rc for _, rc in move_receipts] + inputs.of_kind("moves")
    by_game = len(inputs.logs) > 1 or bool(inputs.evidence)  # evidence among the inputs goes to its game's log
    do_audit = args.audit or bool(args.html)
    options = {"trusted_keys": trusted, "require_signature": not args.allow_unsigned,
               "check_bots": args.check_bots, "tables": args.tables, "verbose": args.verbose, "audit": do_audit,
               "receipts": receipts, "receipts_by_game": by_game, "move_receipts": move_receipts,
               "player_keys": inputs.of_kind("key"), "session_receipts": session_receipts, "app_key": args.app_key}
    counts = {"games": 0, "sessions": 0, "ok": 0, "failed": 0, "unsigned": 0, "public_seed": 0, "unsigned_moves": 0,
              "not_logs": 0, "orphans": 0}
    games, agg, game_ids, problems = [], audit_mod.Audit() if do_audit else None, set(), []
    for r in [*unusable_results(inputs), *verify_all(inputs.logs, options, max(1, args.jobs))]:
        if r.error is not None:
            counts["not_logs"] += 1
        else:
            game_ids.add(r.game_id)
            counts["sessions" if r.kind == "session" else "games"] += 1
            counts["ok" if r.ok else "failed"] += 1
            counts["unsigned"] += r.ok and not r.signed  # verified without its signatures: --allow-unsigned
            counts["public_seed"] += r.seed_secret is False
            counts["unsigned_moves"] += bool(r.unsigned_seats)
        lines = game_lines(r, args.verbose, inputs.for_game(r.game_id) if r.error is None else ())
        print("\n".join(lines), file=text)
        problems += lines if not r.ok else []
        if args.json:
            games.append(game_json(r))
        if agg is not None:
            agg.add(r)
    if by_game:  # the player's own game is missing from what the server handed over
        for line in orphan_lines(inputs, given, game_ids):
            counts["orphans"] += 1
            problems.append(line)
            print(line, file=text)
    print(summary_line(counts, trusted is not None, bool(receipts), args.check_bots), file=text)
    rep = None
    if agg is not None:
        rep = agg.report()
        print(audit_mod.text_report(rep), file=text)
        if args.html:
            from .page import render
            try:
                with open(args.html, "w", encoding="utf-8") as f:
                    f.write(render(rep, warnings=[clause for clause, warning in summary_clauses(
                        counts, trusted is not None, bool(receipts), args.check_bots) if warning], problems=problems))
            except OSError as e:
                return error(args.html, f"--html: cannot write: {e.strerror or e}")
    if args.json:
        doc = {"tool": PROG, "checks": list(CHECKS), "trusted_key": trusted is not None,
               "summary": counts, "games": games,
               "evidence": [{"file": e.file, "kind": e.kind, "game_ids": e.game_ids} for e in inputs.evidence]}
        if rep is not None:
            doc["audit"] = rep
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    if usage_errors or counts["not_logs"]:
        return 2
    if counts["failed"] or counts["orphans"] or (rep is not None and rep["findings"]):
        return 1
    return 0
