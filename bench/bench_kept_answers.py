"""What an Idempotency-Key costs the disk, and a replay the CPU: kept answers as references (api/games.py).

    python bench/bench_kept_answers.py [--games 20] [--rules classic13]

Plays `--games` games (one human seat against the ev bot: a roll, a reroll towards the most common face, the
best box), every move with its own Idempotency-Key, through the Flask app's test client on a fresh SQLite data
directory, then reports per move: the answer's size (what servers before references kept), the kept record's
size (its key, fingerprint, reference and time), the database file's growth, and the server CPU of a first
answer against a replay (which rebuilds the answer from the stored history) measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from api import create_app
from support.api_helpers import EV, HUMAN, bearer, play_turn, started


def play(client, rules: str) -> tuple[str, str, list]:
    created, tokens, state = started(client, [HUMAN, EV], rules)
    gid, token, moves = created["game_id"], tokens[0], []

    def post(path, body):
        key = f"key-{len(moves)}"
        t0 = time.process_time()
        resp = client.post(f"/v1/games/{gid}/{path}", json=body, headers={**bearer(token), "Idempotency-Key": key})
        moves.append((path, body, key, len(resp.get_data()), time.process_time() - t0))
        return resp.get_json()

    while state["status"] == "playing":
        state = play_turn(lambda hold: post("roll", {"hold": hold} if hold else {}),
                          lambda box: post("score", {"category": box}), state, rerolls=1)
    return gid, token, moves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--rules", default="classic13")
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-kept-"))
    client = create_app({"FAIRDICE_DATA_DIR": str(data)}).test_client()
    database = data / "fairdice.sqlite3"
    empty = database.stat().st_size
    played = [play(client, args.rules) for _ in range(args.games)]
    moves = [move for *_, game_moves in played for move in game_moves]
    replay_cpu = []
    for gid, token, game_moves in played:
        for path, body, key, _, _ in game_moves:
            t0 = time.process_time()
            client.post(f"/v1/games/{gid}/{path}", json=body, headers={**bearer(token), "Idempotency-Key": key})
            replay_cpu.append(time.process_time() - t0)
    with sqlite3.connect(database) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        kept = db.execute("SELECT avg(length(key) + length(fingerprint) + length(body) + length(created_at) + 8) "
                          "FROM idempotency").fetchone()[0]
    report = {
        "games": args.games, "rules": args.rules, "moves": len(moves),
        "answer_bytes_per_move": round(statistics.mean(m[3] for m in moves)),
        "kept_bytes_per_move": round(kept, 1),
        "database_bytes_per_move": round((database.stat().st_size - empty) / len(moves)),
        "first_answer_cpu_us": round(1e6 * statistics.median(m[4] for m in moves)),
        "replay_cpu_us": round(1e6 * statistics.median(replay_cpu)),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
