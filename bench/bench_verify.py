"""fairdice-verify throughput: games verified per second on one core, next to the floor.

    python bench/bench_verify.py [--games 300] [--repeat 7] [--dir DIR]

The floor, measured in the same run on the same logs: parsing the same JSON plus one
HMAC-SHA256 per roll, computed as the verifier computes it (`hmac.digest` over the message of
SPEC §2.3), and nothing else: the least any replay must do. The verification is the whole of
`verify_document`: format, key id, both Ed25519 signatures over canonical JSON, seed
commitment, every die re-derived, every score and total recomputed. It is also measured with
the two signature fields removed after parsing (the same JSON parsed; the log is then
verified as an unsigned one), which gives the ratio without the signatures; and next to a second
floor, the first plus the two Ed25519 verifications every signed log needs (SPEC §6: the
commitment signature over the header, the final one over the log), the signed bytes made
before the timing: what the ratio is once the public-key work no replay can skip is counted
on both sides (for information: the goal is against the first floor). Times are CPU
time of this process (robust to other load on the machine), best of --repeat interleaved runs;
on a shared machine also read the median of the per-run ratios (each run's verify against the
floor measured right beside it), printed last.
"""

from __future__ import annotations

import argparse
import hmac
import json
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from verifier import keys
from verifier.files import find_logs
from verifier.replay import verify_document
from verifier.spec import canonical, field, u32

PACK = struct.Struct(">IIII").pack
GOAL = 3.0  # issue 3: within 3x the floor


def make_logs(directory: Path, games: int) -> list[str]:
    texts = []
    for i, rules in enumerate(("yacht", "yatzy", "classic13")):
        out = directory / rules
        if not out.exists():
            subprocess.run(["fairdice", "simulate", "--rules", rules, "--bots", "greedy,ev", "--games",
                            str(games // 3), "--seed", f"bench-verify-{i}", "--out", str(out)],
                           check=True, capture_output=True)
        texts += [Path(f).read_text() for f in find_logs([str(out)])[0]]
    return texts


def floor(texts):
    """Parse, then one HMAC-SHA256 per roll over a message as long as the real one (SPEC §2.3)."""
    for text in texts:
        doc = json.loads(text)
        seed = bytes.fromhex(doc["final"]["server_seed"])
        seeds, prefix = [], b""
        for e in doc["events"]:
            kind = e["type"]
            if kind == "roll":
                hmac.digest(seed, prefix + PACK(e["seat"], e["turn"], e["roll"], 0), "sha256")
            elif kind == "client_seed":  # (they all come before the first roll)
                seeds.append(e["client_seed"])
                prefix = (field("fairdice/v1") + field("roll") + field(doc["header"]["game_id"])
                          + u32(len(seeds)) + b"".join(field(c) for c in seeds))


def signed_parts(texts) -> list[tuple[bytes, str, bytes, str, bytes]]:
    """Per log: (key, commitment signature, canonical header, final signature, canonical unsigned log)."""
    parts = []
    for text in texts:
        doc = json.loads(text)
        unsigned = {k: v for k, v in doc.items() if k != "signature"}
        parts.append((bytes.fromhex(doc["header"]["public_key"]), doc["commitment_signature"],
                      canonical(doc["header"]), doc["signature"], canonical(unsigned)))
    return parts


def signature_checks(parts) -> None:
    """The two Ed25519 verifications of each log, as the verifier makes them (verifier.keys)."""
    for key, commitment_signature, header, signature, log in parts:
        if not (keys.signature_valid(key, commitment_signature, header) and keys.signature_valid(key, signature, log)):
            raise SystemExit("a benchmark log's signatures do not verify")


def verify(texts):
    for text in texts:
        if not verify_document(json.loads(text), "bench").ok:
            raise SystemExit("a benchmark log does not verify")


def verify_unsigned(texts):
    """The same, with both signature fields removed after parsing: no canonical JSON, no Ed25519."""
    for text in texts:
        doc = json.loads(text)
        del doc["commitment_signature"], doc["signature"]
        r = verify_document(doc, "bench", require_signature=False)  # --allow-unsigned
        if not r.ok or r.signed:
            raise SystemExit("a benchmark log does not verify unsigned")


def parse_only(texts):
    for text in texts:
        json.loads(text)


def cpu_time(fn, arg) -> float:
    t = time.process_time()
    fn(arg)
    return time.process_time() - t


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--dir", help="where the logs are made (default: a temporary directory)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        texts = make_logs(Path(args.dir or tmp), args.games)
    docs = [json.loads(t) for t in texts]
    rolls = sum(e["type"] == "roll" for d in docs for e in d["events"])
    events = sum(len(d["events"]) for d in docs)
    n = len(texts)
    runs = {"floor": floor, "verify": verify, "unsigned": verify_unsigned, "parse": parse_only}
    parts = signed_parts(texts)
    times = {k: [] for k in [*runs, "signatures"]}
    for _ in range(args.repeat):  # interleaved, so that other load hits all alike
        for name, fn in runs.items():
            times[name].append(cpu_time(fn, texts))
        times["signatures"].append(cpu_time(signature_checks, parts))
    t = {k: min(v) / n * 1e3 for k, v in times.items()}  # ms per game, best run
    ratio, ratio_unsigned = t["verify"] / t["floor"], t["unsigned"] / t["floor"]
    print(f"{n} two-seat logs (yacht, yatzy, classic13; greedy vs ev): {rolls / n:.1f} rolls, "
          f"{events / n:.0f} events, {sum(map(len, texts)) / n:.0f} bytes each; CPU time, best of {args.repeat}")
    print(f"  floor: parse + one HMAC-SHA256 per roll     {1e3 / t['floor']:6.0f} games/s  {t['floor']:.3f} ms/game")
    print(f"  verify, every check of SPEC §7             {1e3 / t['verify']:6.0f} games/s  {t['verify']:.3f} ms/game"
          f"  = {ratio:.2f}x the floor (goal: {GOAL:.0f}x or less: {'met' if ratio <= GOAL else 'NOT met'})")
    print(f"  verify, signatures removed after parsing   {1e3 / t['unsigned']:6.0f} games/s  {t['unsigned']:.3f} ms/game"
          f"  = {ratio_unsigned:.2f}x the floor")
    print(f"  where the time goes (ms/game): parsing {t['parse']:.3f}, the two signatures (canonical JSON + "
          f"Ed25519) {t['verify'] - t['unsigned']:.3f}, replay and the rest {t['unsigned'] - t['parse']:.3f}; "
          f"of the floor, the HMACs {t['floor'] - t['parse']:.3f}")
    per_run = {k: statistics.median(a / b for a, b in zip(times[k], times["floor"])) for k in ("verify", "unsigned")}
    print(f"  median of the {args.repeat} runs' ratios: verify {per_run['verify']:.2f}x the floor, "
          f"signatures removed {per_run['unsigned']:.2f}x")
    signed_floor = statistics.median((f + s) / n * 1e3 for f, s in zip(times["floor"], times["signatures"]))
    signed_ratio = statistics.median(verified / (floored + checked) for verified, floored, checked
                                     in zip(times["verify"], times["floor"], times["signatures"]))
    print(f"  (for information) the floor plus the two Ed25519 checks of every signed log: {signed_floor:.3f} ms/game "
          f"(the checks {statistics.median(times['signatures']) / n * 1e3:.3f}); verify is {signed_ratio:.2f}x that "
          f"(median of the runs' ratios)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
