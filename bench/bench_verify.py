"""fairdice-verify throughput: games verified per second on one core, next to the floor.

    python bench/bench_verify.py [--games 300] [--repeat 7] [--dir DIR]

The floor, measured in the same run on the same logs: parsing the same JSON plus one
HMAC-SHA256 per roll (the least any replay must do). The verification is the whole of
`verify_document`: format, key id, both Ed25519 signatures over canonical JSON, seed
commitment, every die re-derived, every score and total recomputed. Times are CPU time of
this process (robust to other load on the machine), best of --repeat interleaved runs.
A breakdown shows where the time goes: parsing, the signatures, the replay.
"""

from __future__ import annotations

import argparse
import hmac
import json
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from verifier import keys  # noqa: E402
from verifier.files import find_logs  # noqa: E402
from verifier.replay import verify_document  # noqa: E402
from verifier.spec import canonical, field, u32  # noqa: E402

PACK = struct.Struct(">IIII").pack


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
    for text in texts:
        doc = json.loads(text)
        seed = bytes.fromhex(doc["final"]["server_seed"])
        seeds = [e["client_seed"] for e in doc["events"] if e["type"] == "client_seed"]
        # the message of SPEC §2.3, so that each HMAC hashes as many bytes as the real one
        prefix = (field("fairdice/v1") + field("roll") + field(doc["header"]["game_id"]) + u32(len(seeds))
                  + b"".join(field(c) for c in seeds))
        for e in doc["events"]:
            if e["type"] == "roll":
                hmac.digest(seed, prefix + PACK(e["seat"], e["turn"], e["roll"], 0), "sha256")


def verify(texts):
    for text in texts:
        if not verify_document(json.loads(text), "bench").ok:
            raise SystemExit("a benchmark log does not verify")


def parse_only(texts):
    for text in texts:
        json.loads(text)


def signatures_only(docs):
    for doc in docs:
        key = bytes.fromhex(doc["header"]["public_key"])
        keys.signature_valid(key, doc["commitment_signature"], canonical(doc["header"]))
        keys.signature_valid(key, doc["signature"], canonical({k: v for k, v in doc.items() if k != "signature"}))


def best(fn, arg, repeat):
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn(arg)
        times.append(time.process_time() - t)
    return min(times)


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
    n = len(texts)
    results = {"floor": [], "verify": [], "parse": [], "signatures": []}
    for _ in range(args.repeat):  # interleaved, so that other load hits both alike
        results["floor"].append(best(floor, texts, 1))
        results["verify"].append(best(verify, texts, 1))
        results["parse"].append(best(parse_only, texts, 1))
        results["signatures"].append(best(signatures_only, docs, 1))
    t = {k: min(v) for k, v in results.items()}
    replay = t["verify"] - t["parse"] - t["signatures"]
    print(f"{n} two-seat logs (yacht, yatzy, classic13; greedy vs ev), {rolls} rolls, {sum(map(len, texts)) / n:.0f} bytes each")
    print(f"floor (parse + one HMAC-SHA256 per roll): {n / t['floor']:8.0f} games/s  {t['floor'] / n * 1e3:.3f} ms/game")
    print(f"verify (every check of SPEC §7):          {n / t['verify']:8.0f} games/s  {t['verify'] / n * 1e3:.3f} ms/game")
    print(f"ratio verify / floor: {t['verify'] / t['floor']:.2f}x")
    print(f"  of which: parsing {t['parse'] / n * 1e3:.3f} ms, signatures (canonical JSON + 2 Ed25519) "
          f"{t['signatures'] / n * 1e3:.3f} ms, replay and the rest {replay / n * 1e3:.3f} ms")
    print(f"  without the signatures: {(t['verify'] - t['signatures']) / t['floor']:.2f}x the floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
