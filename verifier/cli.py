"""fairdice-verify [options] PATH...  (also: python -m verifier)

Exit codes: 0 every game verified; 1 at least one check failed (or, with --audit, a finding);
2 a usage error, or input that is not a log at all."""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing
import os
import queue
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from . import audit as audit_mod
from .errors import VerifierError
from .evidence import Inputs, sort_inputs
from .files import find_logs, verify_file
from .botcheck import PublishedBots
from .keys import PublicKeyFileError, TrustedKeys, load_trusted_keys
from .optimal import TableError
from .chain import MoveReceiptError, load_move_receipts
from .receipt import ReceiptError, load_receipt
from .replay import CHECKS, Result
from .results import unsigned_warning
from .sessions import SessionReceiptError, load_session_receipts, session_json, session_lines

PROG = "fairdice-verify"
USAGE = 2  # exit code: a usage error, or input that is not a log at all
FAILED = 1  # exit code: a check failed, an orphan, or an audit finding


class UsageError(VerifierError):
    """An option or input that cannot be used: `where` (a file, an option) and what is wrong; exit 2."""

    def __init__(self, where: str, message: str):
        super().__init__(where, message)
        self.where, self.message = where, message


class WorkerLostError(UsageError):
    """A worker process ended without its answer: no verdict can be given on every log (exit 2, as for input
    that cannot be used: never a verdict)."""


class Verifier:
    """`verify_file` with one run's options, made once per process: the optimal tables are read and the bots'
    turns solved once, then every log of the run is checked with them (`verifier(path)`)."""

    def __init__(self, options: dict):
        self.given = dict(options)
        self.options = dict(options)
        tables = self.options.pop("tables", None)
        if self.options.pop("check_bots", False):
            self.options["bots"] = PublishedBots(tables)

    def __call__(self, path: str) -> Result:
        return verify_file(path, **self.options)

    def __reduce__(self):
        # a process that is not forked from this one gets the options and reads its own tables
        return Verifier, (self.given,)


def verify_all(files: list[str], options: dict, jobs: int, progress: bool = True):
    """Yield a Result per file, in order, on `jobs` processes; progress on stderr after a second."""
    start = last = time.monotonic()

    def tick(done):
        nonlocal last
        now = time.monotonic()
        if progress and now - start > 1 and now - last > 1:
            last = now
            print(f"{PROG}: {done}/{len(files)} logs ({done / (now - start):.0f}/s)", file=sys.stderr, flush=True)

    verify = Verifier(options)
    if jobs > 1 and len(files) >= 64:
        # the first log is verified here, before the workers fork: the tables it needs are read, and the turns its
        # bots played are solved (every game's first turns among them), once for all the workers, which inherit them
        yield verify(files[0])
        chunk = max(1, min(64, len(files) // (jobs * 16)))
        for done, r in enumerate(in_processes(verify, files[1:], jobs, chunk), 2):
            tick(done)
            yield r
    else:
        for done, path in enumerate(files, 1):
            tick(done)
            yield verify(path)


def in_processes(verify: Verifier, files: list[str], jobs: int, chunk: int):
    """verify(path) for each file, in order, from `jobs` worker processes that are handed `verify` as an
    argument: forked, they inherit it (its tables, its solved turns) and only paths and results cross the
    pipes; elsewhere it is pickled as its options.  An error in a worker is raised here, as it was there."""
    forked = "fork" in multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if forked else None)
    tasks, results = ctx.Queue(), ctx.Queue()
    batches = [files[i:i + chunk] for i in range(0, len(files), chunk)]
    for n, batch in enumerate(batches):
        tasks.put((n, batch))
    workers = [ctx.Process(target=_serve, args=(verify, tasks, results), daemon=True) for _ in range(jobs)]
    for w in workers:
        tasks.put(None)
        w.start()
    try:
        yield from _in_order(results, len(batches), workers)
    finally:
        for w in workers:
            w.kill()
            w.join()


def _serve(verify: Verifier, tasks, results) -> None:
    """A worker: verify each batch of paths it takes, until told to stop; an error goes back as the answer."""
    for n, batch in iter(tasks.get, None):
        try:
            results.put((n, [verify(path) for path in batch], None))
        except BaseException as e:  # raised again in the parent, which decides
            results.put((n, None, e))
            return


def _in_order(results, batches: int, workers) -> Iterator[Result]:
    """The workers' results in the order of the files (a batch that arrives early waits); a worker that died
    without answering is an error, not a wait for ever."""
    waiting, nxt = {}, 0
    while nxt < batches:
        try:
            n, verdicts, error = results.get(timeout=1)
        except queue.Empty:
            if any(w.exitcode not in (None, 0) for w in workers) or all(w.exitcode is not None for w in workers):
                raise WorkerLostError("--jobs", "a worker process ended without answering (killed, or out of "
                                      "memory?); no verdict is given: run again, or with --jobs 1") from None
            continue
        if error is not None:
            raise error
        waiting[n] = verdicts
        while nxt in waiting:
            yield from waiting.pop(nxt)
            nxt += 1


def describe_failure(f) -> str:
    """A failure as SPEC §7 names it: check, event index (`-` for the whole log), field, expected, found."""
    event = "-" if f.event is None else f.event
    if f.check == "seed.revealed":
        return ("seed.revealed  event -  field final: the game is not over (final is null), so its server seed "
                "is not revealed and its dice cannot be checked yet")
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
    lines = [f"{'OK  ' if r.ok else 'FAIL'}  {r.game_id or '?'}  {r.file}  ({', '.join(game_notes(r))})"]
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


def signature_note(r) -> str:
    """What the verdict says of the log's signatures: a reader must see at once a log that is not signed, or
    only half signed, since such a log proves only that it is self-consistent."""
    if r.signed and "fail" in (r.checks["sig.commitment"], r.checks["sig.final"]):
        return "signature INVALID"
    if r.signed:
        return "signed"
    if r.status == "in progress" and r.checks["sig.commitment"] != "skip":
        return "header signed; the log is signed once the game is over"
    if r.checks["log.format"] == "fail":
        return "signatures not checked: the log is malformed"
    return "UNSIGNED"


def game_notes(r) -> list[str]:
    """The notes in a game's verdict line: its status, its signatures, and what the verdict rests on or leaves
    out (whose key, which receipts, bots not replayed, a public seed, an abandon)."""
    notes = [r.status or "?", signature_note(r)]
    if r.signed:
        notes.append("trusted key" if r.trusted else "embedded key only: origin not checked")
    held = [("receipt.match", "matches the receipt"), ("receipt.chain", "matches the move receipts")]
    notes += [note for check, note in held if r.checks[check] == "pass"]
    if r.bots and not r.bots_checked:
        notes.append("bot decisions NOT checked")
    if r.seed_secret is False:
        notes.append("public seed")
    if r.status == "abandoned" and r.abandoned_by:
        notes.append(f"abandoned by {r.abandoned_by}")
    if r.status == "abandoned" and r.ok:
        notes.append("verified up to the abandon event")
    return notes


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
        return USAGE


@dataclass
class Given:
    """What the options hand over, each file loaded and checked before any log is read: a broken receipt is
    a usage error of its own, never a verdict on a log."""
    trusted: TrustedKeys | None
    receipts: list[tuple[str, dict]]  # (file, receipt) of each --receipt
    move_receipts: list[tuple[str, dict]]  # (file, receipt) of each move of each --receipts
    session_receipts: list


@dataclass
class Tally:
    """The verdicts so far: the summary's counts, the lines of the failures (for the HTML report), the games'
    JSON, their ids (to find the player's evidence without its log) and the audit's statistics."""
    audit: audit_mod.Audit | None
    counts: dict = field(default_factory=lambda: dict.fromkeys(
        ("games", "sessions", "ok", "failed", "unsigned", "public_seed", "unsigned_moves", "not_logs", "orphans"), 0))
    games: list = field(default_factory=list)
    game_ids: set = field(default_factory=set)
    problems: list = field(default_factory=list)

    def add(self, r: Result, lines: list[str]) -> None:
        """Count one file's verdict (a file that is not a log counts as such, and nothing else)."""
        counts = self.counts
        if r.error is not None:
            counts["not_logs"] += 1
        else:
            self.game_ids.add(r.game_id)
            counts["sessions" if r.kind == "session" else "games"] += 1
            counts["ok" if r.ok else "failed"] += 1
            counts["unsigned"] += r.ok and not r.signed  # verified without its signatures: --allow-unsigned
            counts["public_seed"] += r.seed_secret is False
            counts["unsigned_moves"] += bool(r.unsigned_seats)
        self.problems += lines if not r.ok else []
        if self.audit is not None:
            self.audit.add(r)


def run(argv=None) -> int:
    """The command: options checked, logs found, each verified and reported, then the summary; a usage
    error is one line naming where it is, and exit 2 (no traceback)."""
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:
        return 0 if e.code in (0, None) else USAGE
    try:
        return verify_and_report(args)
    except UsageError as e:
        print(error_line(e.where, e.message), file=sys.stderr)
        return USAGE


def verify_and_report(args) -> int:
    """Every step after parsing, in order; a step raises UsageError where the command cannot go on."""
    given = load_given(args)
    check_option_values(args)
    inputs, missing = find_inputs(args.paths)
    options, receipts, by_game = verification_options(args, given, inputs)
    text = sys.stderr if args.json else sys.stdout
    tally = Tally(audit_mod.Audit() if options["audit"] else None)
    for r in [*unusable_results(inputs), *verify_all(inputs.logs, options, max(1, args.jobs))]:
        report_result(r, args, inputs, tally, text)
    if by_game:  # the player's own game is missing from what the server handed over
        report_orphans(orphan_lines(inputs, given.receipts + given.move_receipts, tally.game_ids), tally, text)
    covered = (given.trusted is not None, bool(receipts), args.check_bots)
    print(summary_line(tally.counts, *covered), file=text)
    rep = tally.audit.report() if tally.audit is not None else None
    if rep is not None:
        print(audit_mod.text_report(rep), file=text)
        write_html(args.html, rep, tally, covered)
    if args.json:
        sys.stdout.write(json.dumps(json_document(given, tally, inputs, rep), ensure_ascii=False) + "\n")
    return exit_code(missing, tally.counts, rep)


def load_given(args) -> Given:
    """The trusted key and the player's receipts the options name, loaded before any log: a file among them
    that cannot be used stops the run (a verdict held to a receipt that was not read would mislead)."""
    trusted = None
    if args.pubkey:
        try:
            trusted = TrustedKeys(load_trusted_keys(args.pubkey))  # (once: a signature is tried by its key id)
        except PublicKeyFileError as e:
            raise UsageError(args.pubkey, f"--pubkey: {e}") from None
    return Given(trusted,
                 _loaded(args.receipt, "--receipt", lambda path: [load_receipt(path)], ReceiptError),
                 _loaded(args.receipts, "--receipts", load_move_receipts, MoveReceiptError),
                 [rc for _, rc in _loaded(args.session_receipts, "--session-receipts", load_session_receipts,
                                          SessionReceiptError)])


def _loaded(paths: list[str], option: str, load, error: type[Exception]) -> list[tuple[str, dict]]:
    """(file, item) for each item that `load(file)` finds in each file given with `option`, in order; the
    first file that cannot be read or is not what the option takes is a UsageError naming it."""
    items = []
    for path in paths:
        try:
            items += [(path, item) for item in load(path)]
        except error as e:
            raise UsageError(path, f"{option}: {e}") from None
    return items


def check_option_values(args) -> None:
    """The options whose value is checked by its form alone, before any log is read."""
    if args.app_key is not None and not (len(args.app_key) == 64 and all(c in "0123456789abcdef" for c in args.app_key)):
        raise UsageError("--app-key", "not 64 lowercase hex digits (the app's raw Ed25519 public key)")
    if args.tables and not os.path.isdir(args.tables):
        raise UsageError(args.tables, "--tables: not a directory")


def find_inputs(paths: list[str]) -> tuple[Inputs, int]:
    """The input files sorted into logs and the player's evidence, and how many paths could not be read (each
    said at once; the others are still verified, and the exit code is 2)."""
    files, missing = find_logs(paths)
    for path in missing:
        print(error_line(path, "cannot be read (no such file or directory, or no permission to list it)"
                         if os.path.lexists(path) else "no such file or directory"), file=sys.stderr)
    if not files and not missing:
        raise UsageError(" ".join(paths), "no *.json log found")
    return sort_inputs(files), len(missing)


def verification_options(args, given: Given, inputs: Inputs) -> tuple[dict, list, bool]:
    """The options of verify_file, the receipts the logs are held to (given and found among the inputs), and
    whether evidence goes to its game's log (several logs, or evidence among the inputs) rather than to the
    only log."""
    receipts = [rc for _, rc in given.receipts] + inputs.of_kind("receipt")
    by_game = len(inputs.logs) > 1 or bool(inputs.evidence)
    options = {"trusted_keys": given.trusted, "require_signature": not args.allow_unsigned,
               "check_bots": args.check_bots, "tables": args.tables, "verbose": args.verbose,
               "audit": args.audit or bool(args.html), "receipts": receipts, "receipts_by_game": by_game,
               "move_receipts": [rc for _, rc in given.move_receipts] + inputs.of_kind("moves"),
               "player_keys": inputs.of_kind("key"), "session_receipts": given.session_receipts,
               "app_key": args.app_key}
    return options, receipts, by_game


def report_result(r: Result, args, inputs: Inputs, tally: Tally, text) -> None:
    """One file's lines, as soon as it is verified, and its verdict counted."""
    lines = game_lines(r, args.verbose, inputs.for_game(r.game_id) if r.error is None else ())
    print("\n".join(lines), file=text)
    tally.add(r, lines)
    if args.json:
        tally.games.append(game_json(r))


def report_orphans(lines: list[str], tally: Tally, text) -> None:
    """The player's evidence whose game's log was not handed over: each a FAIL of its own."""
    for line in lines:
        tally.counts["orphans"] += 1
        tally.problems.append(line)
        print(line, file=text)


def write_html(path: str | None, rep: dict, tally: Tally, covered: tuple) -> None:
    """The audit as a self-contained page, with the summary's warnings and the failures, when --html asks."""
    if not path:
        return
    from .page import render
    warnings = [clause for clause, warning in summary_clauses(tally.counts, *covered) if warning]
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(render(rep, warnings=warnings, problems=tally.problems))
    except OSError as e:
        raise UsageError(path, f"--html: cannot write: {e.strerror or e}") from None


def json_document(given: Given, tally: Tally, inputs: Inputs, rep: dict | None) -> dict:
    """--json's one document: the check ids, the summary, each game, the evidence found, and the audit."""
    doc = {"tool": PROG, "checks": list(CHECKS), "trusted_key": given.trusted is not None,
           "summary": tally.counts, "games": tally.games,
           "evidence": [{"file": e.file, "kind": e.kind, "game_ids": e.game_ids} for e in inputs.evidence]}
    if rep is not None:
        doc["audit"] = rep
    return doc


def exit_code(missing: int, counts: dict, rep: dict | None) -> int:
    """2 when an input could not be used at all; else 1 when a check failed, evidence lost its log, or the
    audit found something; else 0."""
    if missing or counts["not_logs"]:
        return USAGE
    if counts["failed"] or counts["orphans"] or (rep is not None and rep["findings"]):
        return FAILED
    return 0
