"""fairdice-verify [options] PATH...  (also: python -m verifier)

Exit codes: 0 every game verified; 1 at least one check failed (or, with --audit, a finding);
2 a usage error, or input that is not a log at all."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time

from . import audit as audit_mod
from .files import find_logs, verify_file
from .keys import KeyFileError, load_trusted_keys
from .replay import CHECKS

PROG = "fairdice-verify"
_options: dict = {}  # per process: the options of verify_file (set before the pool forks)


def _init(options: dict) -> None:
    global _options
    _options = dict(options)
    if _options.pop("check_bots", False):
        from .botcheck import PublishedBots
        _options["bots"] = PublishedBots()


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

    if jobs > 1 and len(files) >= 64:
        ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        chunk = max(1, min(64, len(files) // (jobs * 16)))
        with ctx.Pool(jobs, initializer=_init, initargs=(options,)) as pool:
            for done, r in enumerate(pool.imap(_work, files, chunksize=chunk), 1):
                tick(done)
                yield r
    else:
        _init(options)
        for done, path in enumerate(files, 1):
            tick(done)
            yield _work(path)


def describe_failure(f) -> str:
    event = "-" if f.event is None else f.event
    if f.check == "seed.revealed":
        return (f"seed.revealed  event -  field final: the game is not over (final is null), so its server seed "
                f"is not revealed and its dice cannot be checked yet")
    return (f"{f.check}  event {event}  field {f.field}: expected {json.dumps(f.expected, ensure_ascii=False)}, "
            f"found {json.dumps(f.found, ensure_ascii=False)}")


def game_lines(r, verbose: bool) -> list[str]:
    if r.error is not None:
        return [f"ERROR {r.file}: event -, field -: {r.error} (not a fairdice log)"]
    if r.signed and "fail" in (r.checks["sig.commitment"], r.checks["sig.final"]):
        signed = "signature INVALID"
    elif r.signed:
        signed = "signed"
    elif r.status == "in progress" and r.checks["sig.commitment"] != "skip":
        signed = "header signed; the log is signed once the game is over"
    else:
        signed = "UNSIGNED"
    notes = [r.status or "?", signed]
    if r.signed:
        notes.append("trusted key" if r.trusted else "embedded key only")
    if r.seed_secret is False:
        notes.append("public seed")
    if r.status == "abandoned" and r.ok:
        notes.append("verified up to the abandon event")
    lines = [f"{'OK  ' if r.ok else 'FAIL'}  {r.game_id or '?'}  {r.file}  ({', '.join(notes)})"]
    lines += ["      " + describe_failure(f) for f in r.failures]
    lines += [f"      ... and {n} more {c} failures" for c, n in r.unlisted.items()]
    if verbose and r.replay:
        lines += r.replay
    return lines


def game_json(r) -> dict:
    if r.error is not None:
        return {"file": r.file, "error": r.error, "ok": False}
    return {"file": r.file, "game_id": r.game_id, "rules": r.rules, "status": r.status, "ok": r.ok,
            "signed": r.signed, "trusted_key": r.trusted, "seed_secret": r.seed_secret, "checks": r.checks,
            "failures": [f.as_dict() for f in r.failures], "unlisted_failures": r.unlisted,
            **({"replay": r.replay} if r.replay is not None else {})}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Verify fairdice game logs (SPEC.md §7) independently "
                                "of the server: signatures, seed commitment, every die, every score.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="a log file, or a directory searched for *.json")
    p.add_argument("--pubkey", metavar="FILE", help="the trusted server key: 64 hex digits, a PEM public key, "
                   "or the JSON of GET /v1/keys (without it the key inside each log is used: self-consistency only)")
    p.add_argument("--require-signature", action="store_true", help="a log without its signatures fails")
    p.add_argument("--check-bots", action="store_true", help="replay every bot decision with the published policy")
    p.add_argument("-v", "--verbose", action="store_true", help="print each game turn by turn")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout; text goes to stderr")
    p.add_argument("--audit", action="store_true", help="statistics over all logs: face uniformity, seed reuse, scores")
    p.add_argument("--html", metavar="FILE", help="write the audit as a self-contained HTML page (implies --audit)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: all cores)")
    return p


def main(argv=None) -> int:
    try:
        return run(argv)
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def run(argv=None) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:
        return 0 if e.code in (0, None) else 2
    text = sys.stderr if args.json else sys.stdout

    def error(where: str, message: str) -> int:
        print(f"{PROG}: error: {where}: event -, field -: {message}", file=sys.stderr)
        return 2

    trusted = None
    if args.pubkey:
        try:
            trusted = load_trusted_keys(args.pubkey)
        except KeyFileError as e:
            return error(args.pubkey, f"--pubkey: {e}")
    if args.check_bots:
        try:
            from .botcheck import PublishedBots
            PublishedBots()
        except ImportError as e:
            return error("--check-bots", f"the published bot policies (fairdice.bots) cannot be imported: {e}")
    files, missing = find_logs(args.paths)
    usage_errors = 0
    for path in missing:
        usage_errors += 1
        error(path, "no such file or directory")
    if not files and not missing:
        return error(" ".join(args.paths), "no *.json log found")
    do_audit = args.audit or bool(args.html)
    options = {"trusted_keys": trusted, "require_signature": args.require_signature,
               "check_bots": args.check_bots, "verbose": args.verbose, "audit": do_audit}
    counts = {"games": 0, "ok": 0, "failed": 0, "unsigned": 0, "public_seed": 0, "not_logs": 0}
    games, agg = [], audit_mod.Audit() if do_audit else None
    for r in verify_all(files, options, max(1, args.jobs)):
        if r.error is not None:
            counts["not_logs"] += 1
        else:
            counts["games"] += 1
            counts["ok" if r.ok else "failed"] += 1
            counts["unsigned"] += not r.signed and r.status != "in progress"
            counts["public_seed"] += r.seed_secret is False
        print("\n".join(game_lines(r, args.verbose)), file=text)
        if args.json:
            games.append(game_json(r))
        if agg is not None:
            agg.add(r)
    origin = ("a trusted key (--pubkey)" if trusted is not None else
              "the key inside each log: that shows each log is self-consistent, not who made it (use --pubkey)")
    summary = (f"{PROG}: {counts['games']} games: {counts['ok']} OK, {counts['failed']} FAIL"
               + (f", {counts['unsigned']} unsigned" if counts["unsigned"] else "")
               + (f"; {counts['not_logs']} files are not logs" if counts["not_logs"] else "")
               + (f"; {counts['public_seed']} with a public seed (seed_secret false: they prove the dice and the "
                  "scores, not that the seed was unknown beforehand)" if counts["public_seed"] else "")
               + f"; signatures checked against {origin}")
    print(summary, file=text)
    rep = None
    if agg is not None:
        rep = agg.report()
        print(audit_mod.text_report(rep), file=text)
        if args.html:
            from .page import render
            try:
                with open(args.html, "w", encoding="utf-8") as f:
                    f.write(render(rep))
            except OSError as e:
                return error(args.html, f"--html: cannot write: {e.strerror or e}")
    if args.json:
        doc = {"tool": PROG, "checks": list(CHECKS), "trusted_key": trusted is not None,
               "summary": counts, "games": games}
        if rep is not None:
            doc["audit"] = rep
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    if usage_errors or counts["not_logs"]:
        return 2
    if counts["failed"] or (rep is not None and rep["findings"]):
        return 1
    return 0
