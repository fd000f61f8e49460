"""`fairdice-verify FOLDER` on what a player saved (SPEC §7.2): the log beside the player's receipt, the server's move
receipts and the player's key file, each told by its content and held to the log of its game id; evidence that
does not match its log, or has none, fails by name. Also: error lines without "event -, field -" placeholders, and
the HTML audit page carrying the text summary's warnings.

The games are played by the core with the player's key on its "device" (test_verifier_v3.Table), and once through
the real API on a loopback port by the Python client, saved as the page and `fairdice play` name their files."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from support.verifier_support import PUBLIC_HEX, simulated
from support.verifier_support import write as write_file
from support.verifier_support import ANN, GREEDY, Table, played
from verifier.cli import main

GAME_ID = "folder-game"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def write(folder: Path, name: str, doc) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_file(folder, name, doc)


def result_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(("OK", "FAIL", "ERROR"))]


def key_file(table: Table, seat: int = 0) -> dict:
    """The key file `fairdice play` keeps beside the receipt (fairdice.edges.play._keep_key)."""
    key = table.keys[seat]
    return {"game_id": table.game.setup.game_id, "seat": seat, "player_key": key.public_hex,
            "private_key": key.private_hex()}


def save(folder: Path, table: Table, naming: str = "page", log: dict | None = None, key: bool = True) -> Path:
    """The game's files as the page downloads them (game-/receipt-/moves-<id>.json) or as `fairdice play` keeps
    them (<id>.receipt.json, <id>.moves.json, <id>.player-key.json, and the log where --save-log says)."""
    folder.mkdir(parents=True, exist_ok=True)
    gid = table.game.setup.game_id
    names = {"page": (f"game-{gid}.json", f"receipt-{gid}.json", f"moves-{gid}.json", None),
             "play": (f"{gid}.json", f"{gid}.receipt.json", f"{gid}.moves.json", f"{gid}.player-key.json")}[naming]
    write(folder, names[0], log if log is not None else table.log())
    write(folder, names[1], table.receipt(0))
    write(folder, names[2], table.move_receipts)
    if key and names[3]:
        write(folder, names[3], key_file(table))
    return folder


@pytest.fixture(scope="module")
def genuine() -> Table:
    return played(GAME_ID, (ANN, GREEDY), rng_seed=11)


def forged_as(genuine_table: Table, seeds=None, same_key: bool = False) -> dict:
    """The operator's rewrite of the same game id, re-signed with the server's key: the same server seed, and the
    player's client seed swapped (`seeds`) or the player's key replaced by one the operator holds. Consistent in
    itself: only the player's own evidence shows it."""
    table = Table(GAME_ID, [ANN, GREEDY])
    if seeds is not None:
        table.seeds = seeds
    if same_key:
        table.keys = genuine_table.keys
    table.join()
    table.play(random.Random(11))
    return table.log()


@pytest.mark.parametrize("naming", ["page", "play"])
def test_a_folder_of_one_games_files_reports_one_game_ok(capsys, tmp_path, genuine, naming):
    folder = save(tmp_path / naming, genuine, naming)
    code, out, _ = run(capsys, folder)
    assert code == 0, out
    lines = result_lines(out)
    assert len(lines) == 1 and lines[0].startswith(f"OK    {GAME_ID}  "), out
    assert "matches the receipt" in lines[0] and "matches the move receipts" in lines[0] and "trusted key" in lines[0]
    assert "fairdice-verify: 1 games: 1 OK, 0 FAIL;" in out and "ORIGIN WAS NOT CHECKED" not in out
    held = next(line for line in out.splitlines() if line.strip().startswith("held to:"))
    n = len(genuine.move_receipts)
    assert f"moves-{GAME_ID}.json ({n} move receipts)" in held or f"{GAME_ID}.moves.json ({n} move receipts)" in held
    assert "the player receipt" in held and ("the player key file" in held) == (naming == "play")
    assert "no such field" not in out and "event -" not in out


def test_explicit_files_are_told_apart_too(capsys, tmp_path, genuine):
    folder = save(tmp_path / "f", genuine, "play")
    code, out, _ = run(capsys, *sorted(folder.iterdir()))
    assert code == 0 and len(result_lines(out)) == 1, out


def test_a_log_that_contradicts_the_players_receipt_fails(capsys, tmp_path, genuine):
    """The operator hands the player a log whose client seed is one it chose: signed and consistent in itself."""
    forged = forged_as(genuine, seeds={0: "the operator's choice"})
    alone = write(tmp_path, "forged.json", forged)
    assert run(capsys, alone)[0] == 0  # on its own nothing can tell
    code, out, _ = run(capsys, save(tmp_path / "f", genuine, "play", log=forged))
    assert code == 1
    assert re.search(r"receipt\.match  event \d+  field client_seed: expected \"seed of seat 0\"", out), out
    assert "receipt.chain" in out  # the history the server acknowledged move by move is another one
    assert re.search(r"receipt\.match  event \d+  field player_key", out)  # and the key is not the player's
    assert len(result_lines(out)) == 1 and result_lines(out)[0].startswith("FAIL")


def test_a_key_file_catches_a_key_the_player_never_made(capsys, tmp_path, genuine):
    """The operator replaces the player's key with its own and signs every move in the player's name; the seeds
    and dice are the genuine ones. The player's key file alone shows it."""
    forged = forged_as(genuine)
    folder = tmp_path / "f"
    write(folder, "game.json", forged)
    assert run(capsys, "--pubkey", write(tmp_path, "k.pub", PUBLIC_HEX), folder)[0] == 0
    write(folder, f"{GAME_ID}.player-key.json", key_file(genuine))
    code, out, _ = run(capsys, "--pubkey", tmp_path / "k.pub", folder)
    expected = genuine.keys[0].public_hex
    assert code == 1 and re.search(rf"receipt\.match  event \d+  field player_key: expected \"{expected}\"", out), out
    key_hex = genuine.keys[0].private_hex()
    assert key_hex not in out  # a private key is never printed


def test_a_key_file_refuses_a_log_downgraded_to_version_2(capsys, tmp_path, genuine):
    downgraded = played(GAME_ID, (ANN, GREEDY), rng_seed=11, version=2).log()
    folder = tmp_path / "f"
    write(folder, "game.json", downgraded)
    write(folder, "key.json", key_file(genuine))
    code, out, _ = run(capsys, folder)
    assert code == 1 and "receipt.match  event -  field version: expected \"3 (the player keeps a key" in out, out


@pytest.mark.parametrize("kind", ["receipt", "moves", "key"])
def test_evidence_without_its_log_fails_by_name(capsys, tmp_path, genuine, kind):
    """The operator hands over the log of another game: the player's evidence finds no log of its game."""
    other = played("another-game", (ANN, GREEDY), rng_seed=5)
    folder = tmp_path / "f"
    write(folder, "game-another-game.json", other.log())
    evidence = {"receipt": genuine.receipt(0), "moves": genuine.move_receipts, "key": key_file(genuine)}[kind]
    path = write(folder, f"{kind}.json", evidence)
    code, out, _ = run(capsys, folder)
    check = "receipt.chain" if kind == "moves" else "receipt.match"
    assert code == 1
    assert f"FAIL  {GAME_ID}  {path}  ({check}: no log of" in out, out
    assert "OK    another-game" in out and "1 of the player's evidence files without the log of their game" in out


def test_a_move_receipts_file_given_with_receipts_is_named_when_its_game_is_missing(capsys, tmp_path, genuine):
    other = played("another-game", (ANN, GREEDY), rng_seed=5)
    moves = write(tmp_path, "kept.json", genuine.move_receipts)
    code, out, _ = run(capsys, "--receipts", moves, write(tmp_path / "logs", "a.json", other.log()),
                       write(tmp_path / "logs", "b.json", other.log()))
    assert code == 1 and out.count(f"FAIL  {GAME_ID}  {moves}  (receipt.chain: no log of") == 1, out  # one line


@pytest.mark.parametrize("name, change, problem", [
    ("receipt", lambda doc: doc.update(commitment="AB" * 32), "a player receipt (SPEC §5.5) that cannot be used: "
                                                               "commitment: expected 64 lowercase hex digits"),
    ("moves", lambda doc: doc[0].update(signature="00"), "move receipts (SPEC §5.6) that cannot be used: "
                                                         "receipts[0].signature: expected 128 lowercase hex digits"),
    ("key", lambda doc: doc.update(private_key="11" * 32), "a player key file (SPEC §5.7) that cannot be used: "
                                                           "player_key: not the public key of the file's private key"),
    ("key", lambda doc: doc.update(note="x"), "a player key file (SPEC §5.7) that cannot be used: "
                                              "note: no such field"),
])
def test_unusable_evidence_is_a_usage_error_on_its_own_line(capsys, tmp_path, genuine, name, change, problem):
    folder = save(tmp_path / "f", genuine, "play")
    target = {"receipt": f"{GAME_ID}.receipt.json", "moves": f"{GAME_ID}.moves.json",
              "key": f"{GAME_ID}.player-key.json"}[name]
    doc = json.loads((folder / target).read_text())
    change(doc)
    write(folder, target, doc)
    code, out, _ = run(capsys, folder)
    assert code == 2
    assert f"ERROR {folder / target}: {problem}" in out, out
    assert "11" * 32 not in out and "not a fairdice log" not in out and "event -" not in out


def test_the_html_audit_carries_the_texts_warnings(capsys, tmp_path):
    """Simulated logs: public seeds, signed by the key inside each log only. The page must say both, not a bare
    green "Findings: none"."""
    sims = simulated("yacht", "greedy,ev", 3, 302)
    html = tmp_path / "audit.html"
    code, out, _ = run(capsys, "--html", html, sims)
    assert code == 0 and "findings: none" in out and "ORIGIN WAS NOT CHECKED" in out and "public seed" in out
    page = html.read_text()
    assert '<p class="ok">Findings: none</p>' not in page and "Findings: none (but read the warnings" in page
    assert "ORIGIN WAS NOT CHECKED" in page and "3 with a public seed" in page
    # with a failed log, its lines are on the page too
    doc = json.loads(next(sims.iterdir()).read_text())
    doc["final"]["totals"][0]["total"] += 1
    write(tmp_path / "bad", "bad.json", doc)
    code, out, _ = run(capsys, "--html", html, tmp_path / "bad")
    page = html.read_text()
    assert code == 1 and "final.totals  event -  field final.totals[0].total" in page


def test_the_html_audit_is_green_only_without_warnings(capsys, tmp_path, genuine):
    html = tmp_path / "audit.html"
    code, out, _ = run(capsys, "--html", html, "--pubkey", write(tmp_path, "k.pub", PUBLIC_HEX),
                       save(tmp_path / "f", genuine, "page"))
    assert code == 0, out
    assert '<p class="ok">Findings: none</p>' in html.read_text()


# ------------------------------------------------------------------ the real API, saved as the clients save it

@pytest.mark.e2e
def test_a_game_played_through_the_api_and_saved_verifies_as_one_game(capsys, tmp_path, app_url):
    from fairdice.edges.client import Client
    from support.api_helpers import play_out

    game = Client(app_url).new_game("yacht", bot="greedy", name="ann")
    game.join()
    play_out(game)
    gid = game.game_id
    folder = tmp_path / "downloads"
    folder.mkdir()
    (folder / f"game-{gid}.json").write_bytes(game.client.log_bytes(gid))
    game.save_receipt(str(folder / f"receipt-{gid}.json"))
    game.save_receipts(str(folder / f"moves-{gid}.json"))
    write(folder, f"{gid}.player-key.json", {"game_id": gid, "seat": 0, "player_key": game.player_key,
                                              "private_key": game.key.private_hex()})
    code, out, _ = run(capsys, folder)
    assert code == 0, out
    lines = result_lines(out)
    assert len(lines) == 1 and lines[0].startswith(f"OK    {gid}  ") and "matches the move receipts" in lines[0]
    assert "1 games: 1 OK, 0 FAIL" in out and "no such field" not in out
