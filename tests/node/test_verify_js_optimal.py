"""The optimal bot in the page's verdict (issue 23): verify.js, given the rule set's table as its canonical bytes
(SPEC §4.6), replays every optimal decision and gives the reference verifier's verdict; a table whose SHA-256 is
not the published digest (the one the log's bot identity commits to) is refused.  Run under Node, as
tests/node/test_verify_js.py runs verify.js."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fairdice.adapters import table_cache
from fairdice.bots import position_of
from fairdice.bots.optimal import table_format
from fairdice.game import Game, Setup
from fairdice.log import build_log, open_log
from support.verifier_support import PUBLIC_HEX, SIGNER
from verifier.optimal import canonical_header
from support import FORGED, NODE_TESTS, REPO
from support.node import NODE, cli_verdicts, reference_verdict, write_logs

BOTS = table_cache.bots()  # the core's bots, the optimal one with the run's cached tables (conftest)

pytestmark = pytest.mark.skipif(not Path(NODE).exists(), reason="Node (v20 or later) is not installed")


@pytest.fixture(scope="module")
def yacht_bytes(optimal_table, tmp_path_factory) -> Path:
    """The yacht table's canonical bytes (SPEC §4.6: the header line, then int64 little-endian), in a file."""
    optimal_table("yacht")
    values = np.load(table_cache.table_path("yacht")).astype(table_format.DTYPE)
    path = tmp_path_factory.mktemp("tables") / "optimal-yacht-v1.bin"
    path.write_bytes(table_format.header("yacht", values.shape) + values.tobytes())
    return path


def js(jobs: list[dict], tmp: Path) -> list[dict]:
    """verify.js's report on each job {file, tables?, trusted_keys}: ok, reason, statuses, failures, bots_replayed."""
    path = tmp / "jobs.json"
    path.write_text(json.dumps([{"trusted_keys": [PUBLIC_HEX], **job} for job in jobs]))
    done = subprocess.run([NODE, str(NODE_TESTS / "verify_files.mjs"), str(path)], capture_output=True,
                          text=True, timeout=600, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["results"]


def bot_game(bots: tuple[str, ...], index: int, deviate_at: int | None = None) -> dict:
    """A yacht game of bots, signed; with `deviate_at`, the optimal seat's decision number `deviate_at` is its
    worst candidate instead of its own (what a server that peeked at the dice to come could write)."""
    seats = [{"type": "bot", "bot": b, "name": f"{b} {i}"} for i, b in enumerate(bots)]
    game = Game(Setup.build(f"opt-js-{index}", "yacht", seats), bytes([index + 1]) * 32)
    opened = open_log(game, SIGNER)
    game.supply_client_seed(None, f"optimal in the page {index}")
    made = 0
    while game.status == "playing":
        seat = game.current_seat
        if game.rolls_made == 0:
            game.roll(seat)
            continue
        policy = BOTS[game.setup.seats[seat].bot]
        decision = policy.decide(position_of(game), game.tiebreak)
        if policy.id == "optimal":
            if made == deviate_at:
                decisions, values = policy.choices(position_of(game))
                decision = decisions[min(range(len(values)), key=values.__getitem__)]
            made += 1
        game.roll(seat, decision.hold) if decision.action == "roll" else game.score(seat, decision.category)
    return build_log(opened, game, SIGNER)


def optimal_decisions(log: dict) -> list[int]:
    """The events that are decisions of an optimal seat: every roll after the first of a turn, every score."""
    seats = {i for i, s in enumerate(log["header"]["seats"]) if s["type"] == "bot" and s["bot"]["id"] == "optimal"}
    return [i for i, e in enumerate(log["events"]) if e.get("seat") in seats and
            (e["type"] == "score" or (e["type"] == "roll" and e["roll"] > 1))]


def test_every_optimal_decision_is_replayed_with_the_table(yacht_bytes, tmp_path):
    logs = {"opt-ev": bot_game(("optimal", "ev"), 0), "opt": bot_game(("optimal",), 1),
            "greedy-opt": bot_game(("greedy", "optimal"), 2)}
    files = write_logs(tmp_path, logs)
    reports = js([{"file": str(f), "tables": {"yacht": str(yacht_bytes)}} for f in files], tmp_path)
    reference = cli_verdicts(files, tmp_path)  # fairdice-verify finds the table in the run's cache
    for f, report in zip(files, reports):
        log = logs[f.stem]
        assert report["ok"] is True and report["statuses"]["bot.decision"] == "pass", report
        assert report["bots_replayed"]["optimal"] == len(optimal_decisions(log))
        assert (True, report["statuses"]) == reference[str(f)]
    without = js([{"file": str(files[0])}], tmp_path)[0]
    assert without["ok"] is None and without["statuses"]["bot.decision"] == "unchecked"
    assert "optimal" not in without["bots_replayed"] and without["bots_replayed"]["ev"] > 0


def test_an_optimal_bot_that_deviates_once_fails_bot_decision_at_that_event(yacht_bytes, tmp_path):
    logs = {f"deviates-{k}": bot_game(("optimal", "ev"), 3 + k, deviate_at=k) for k in (0, 7, 20)}
    files = write_logs(tmp_path, logs)
    reports = js([{"file": str(f), "tables": {"yacht": str(yacht_bytes)}} for f in files], tmp_path)
    reference = cli_verdicts(files, tmp_path)
    for (name, log), f, report in zip(logs.items(), files, reports):
        at = optimal_decisions(log)[int(name.split("-")[1])]
        assert report["ok"] is False and report["failing"] == ["bot.decision"], report
        assert report["failures"][0]["check"] == "bot.decision" and report["failures"][0]["event"] == at
        assert (False, report["statuses"]) == reference[str(f)]


def test_a_table_that_is_not_the_published_one_is_refused(yacht_bytes, tmp_path):
    data = bytearray(yacht_bytes.read_bytes())
    data[-8] ^= 1  # one value of the last state, a bit off: another table
    wrong = tmp_path / "wrong.bin"
    wrong.write_bytes(bytes(data))
    [log_file] = write_logs(tmp_path, {"opt": bot_game(("optimal",), 9)})
    reports = js([{"file": str(log_file), "tables": {"yacht": str(wrong)}},
                  {"file": str(log_file), "tables": {"classic13": str(yacht_bytes)}},
                  {"file": str(log_file), "tables": {"nonsense": str(yacht_bytes)}}], tmp_path)
    for report in reports:
        assert report["ok"] is False and report["reason"] == "bad_table" and report["statuses"] == {}, report
    assert "not the published" in reports[0]["error"] and "SHA-256" in reports[0]["error"]


@pytest.mark.slow  # the whole forged corpus through both verifiers
def test_the_shared_corpus_gets_the_reference_statuses_with_the_table(yacht_bytes, tmp_path, capsys):
    """tests/vectors/forged/ with the yacht table given: verify.js now replays the optimal bot's decisions, so
    every case gets exactly the reference's verdict and statuses (no allowance for the optimal bot)."""
    index_path = FORGED / "index.json"
    if not index_path.exists():
        pytest.skip("the corpus (tests/support/forge.py) is not written yet")
    cases = json.loads(index_path.read_text())["cases"]
    reports = js([{"file": str(FORGED / c["file"]), "trusted_keys": c["trusted_keys"], "receipt": c["receipt"],
                   "move_receipts": c.get("move_receipts"), "allow_unsigned": c["allow_unsigned"],
                   "tables": {"yacht": str(yacht_bytes)}} for c in cases], tmp_path)
    replayed = 0
    for case, report in zip(cases, reports):
        py_ok, py = reference_verdict(case, tmp_path, capsys)
        if not isinstance(py, dict):
            assert report["error"], case["name"]
            continue
        assert (report["ok"], report["statuses"]) == (py_ok, py), case["name"]
        replayed += report["bots_replayed"].get("optimal", 0)
    assert replayed > 0 and len(cases) > 200


# ------------------------------------------------------------------ the page's fetch of a table (api/static/tables.js)

TABLES_SCRIPT = """
import { optimalTable, tablesFor, tableSize } from "./api/static/tables.js";
import { verifyLog } from "./api/static/verify.js";
import { readFileSync } from "node:fs";
const [base, logFile] = process.argv.slice(1);
const log = JSON.parse(readFileSync(logFile, "utf8"));
const seen = [];
const got = await tablesFor(log, { base, onProgress: (n, of) => seen.push([n, of]) });
const report = await verifyLog(log, { trustedKeys: [log.header.public_key], tables: got.tables });
const again = await optimalTable("yacht", { base: "http://127.0.0.1:9" });  // nothing listens: kept in memory
const problems = {};
for (const rules of ["classic13", "yatzy"]) {
  try { await optimalTable(rules, { base }); problems[rules] = null; } catch (err) { problems[rules] = err.reason; }
}
process.stdout.write(JSON.stringify({ ok: report.ok, replayed: report.botsReplayed, progress: seen.at(-1),
  sizes: ["yacht", "classic13", "yatzy"].map(tableSize), again: again.length, problems, problem: got.problem }));
"""


def test_the_page_fetches_a_table_checks_its_digest_and_keeps_it(yacht_bytes, tmp_path):
    """tables.js against a real HTTP server: the yacht table fetched, held to its digest, kept (a second ask needs
    no server), and the game verified with it; another table under classic13's name refused (bad_table), a
    missing one (404) unavailable."""
    import http.server
    import threading

    served = {"/v1/tables/yacht": yacht_bytes.read_bytes(), "/v1/tables/classic13": yacht_bytes.read_bytes()}

    class Tables(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # (the standard library's name)
            body = served.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Tables)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        [log_file] = write_logs(tmp_path, {"opt": bot_game(("optimal", "ev"), 11)})
        done = subprocess.run([NODE, "--input-type=module", "-e", TABLES_SCRIPT, f"http://127.0.0.1:{server.server_port}",
                               str(log_file)], capture_output=True, text=True, timeout=120, cwd=REPO)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    size = len(served["/v1/tables/yacht"])
    assert out["ok"] is True and out["replayed"]["optimal"] > 0 and out["problem"] is None
    assert out["progress"] == [size, size] and out["sizes"][0] == size and out["again"] == size
    # SPEC §4.6: 2, 8 and 16 MiB of values after the header line (the reference verifier's own header)
    assert out["sizes"] == [len(canonical_header(r)) + n * 2 ** 20 for r, n in (("yacht", 2), ("classic13", 8), ("yatzy", 16))]
    assert out["problems"] == {"classic13": "bad_table", "yatzy": "unavailable"}
