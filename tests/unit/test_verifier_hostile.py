"""Hostile input to fairdice-verify: whatever a file holds, the verifier answers with one clean line per
file (a verdict, or "ERROR <file>: <reason>" and exit 2 for what is not a log at all, SPEC §7), never a
traceback, a hang, or a verdict on a value that another parser would read differently; and a batch
goes on past a bad file.

The logs come from the core in this process (a few milliseconds each), not from `fairdice simulate`."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairdice.game import Setup
from support.verifier_support import PUBLIC_HEX, core_log, resign
from verifier import strictjson
from verifier.botcheck import PublishedBots
from verifier.cli import game_json, game_lines, main
from verifier.files import INTERNAL_ERROR, MAX_LOG_BYTES, verify_file
from verifier.replay import verify_document
from support import REPO as ROOT

TRUSTED = [bytes.fromhex(PUBLIC_HEX)]
SEATS = [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "ev"}]


def _logs() -> dict[str, dict]:
    rng = random.Random(10)
    greedy = [{"type": "human", "name": "bo"}, {"type": "bot", "bot": "greedy"}]
    return {
        "finished": core_log(Setup.build("hostile-1", "yacht", SEATS, first="random"), rng.randbytes(32), rng),
        "abandoned": core_log(Setup.build("hostile-2", "yatzy", SEATS), rng.randbytes(32), rng, abandon_after=20),
        "other": core_log(Setup.build("hostile-3", "yacht", greedy, first=1), rng.randbytes(32), rng),
    }


LOGS = _logs()
LOG = LOGS["finished"]


def as_bytes(doc) -> bytes:
    """A log as the server writes it (UTF-8, non-ASCII characters as they are)."""
    return json.dumps(doc, ensure_ascii=False).encode()


@pytest.fixture
def key_file(tmp_path) -> Path:
    path = tmp_path / "server-key.txt"
    path.write_text(PUBLIC_HEX + "\n")
    return path


def run(capsys, *argv):
    code = main(["--jobs", "1", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def result_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(("OK  ", "FAIL", "ERROR "))]


def first_roll(doc) -> int:
    return next(i for i, e in enumerate(doc["events"]) if e["type"] == "roll")


def rendered(r) -> list[str]:
    """What the CLI prints for a result, text and JSON: it must be printable and encodable."""
    lines = game_lines(r, verbose=True)
    for line in lines:
        assert line.isprintable(), line
        line.encode("utf-8")
    json.dumps(game_json(r), ensure_ascii=False).encode("utf-8")
    return lines


# ------------------------------------------------------------------ strict JSON (contract: unusable input)

@pytest.mark.parametrize("data, reason", [
    (b'{"a": 1, "a": 1}', "duplicate_key"),
    (b'{"e": [{"seat": 0, "turn": 1, "seat": 1}]}', "duplicate_key"),
    (b'[NaN]', "not_json"), (b'[Infinity]', "not_json"), (b'[-Infinity]', "not_json"),
    (b'[9007199254740992]', "number_out_of_range"), (b'[-9007199254740992]', "number_out_of_range"),
    (b'[1e400]', "number_out_of_range"), (b'[-1e400]', "number_out_of_range"), (b'[9.1e15]', "number_out_of_range"),
    (b'[0.12345678901234567890]', "number_out_of_range"),  # 21 digits
    (b'[1' + b'0' * 5000 + b']', "number_out_of_range"),
    (b'[' * 65 + b']' * 65, "nesting_too_deep"),
    (b'{"a":' * 65 + b'1' + b'}' * 65, "nesting_too_deep"),
    (b'[' * 985 + b']' * 985, "nesting_too_deep"),
    (b'[' * 100_000, "nesting_too_deep"),
    (b'["\\ud800"]', "lone_surrogate"), (b'["\\udc00"]', "lone_surrogate"),
    (b'["\\udfb2\\ud83c"]', "lone_surrogate"),  # a pair in the wrong order
    (b'["\\ud83c\\\\udfb2"]', "lone_surrogate"),  # the second half is text, not an escape
    (b'{"\\uDBFF": 1}', "lone_surrogate"),
    (b'["\xed\xa0\x80"]', "not_utf8"),  # a surrogate encoded in UTF-8 bytes
    (b'{"a": "\xff"}', "not_utf8"),
    (b'\xef\xbb\xbf{}', "not_json"),
    (b'{"a": 1} {}', "not_json"), (b'{"a": 1,}', "not_json"), (b"{'a': 1}", "not_json"),
])
def test_strict_json_refuses(data, reason):
    with pytest.raises(strictjson.StrictJSONError) as caught:
        strictjson.loads(data)
    assert caught.value.reason == reason
    assert isinstance(caught.value, ValueError) and str(caught.value).isprintable()


@pytest.mark.parametrize("data, value", [
    (b'[' * 64 + b']' * 64, None),
    (b'{"k": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', None),  # in a string
    (b'{"\\"[[[[": "\\\\", "b": ' + b'[' * 63 + b']' * 63 + b'}', None),  # escaped quote and backslash
    (b'[9007199254740991, -9007199254740991, 0.1234567890123456789]', None),  # 2^53 - 1; 20 digits
    (b'[1e-400, 9.007e15, -0]', None),
    (b'["\\ud83c\\udfb2", "\\\\ud800", "\xf0\x9f\x8e\xb2"]', ["\U0001F3B2", "\\ud800", "\U0001F3B2"]),
    (b'{"a": {"a": {"a": 1}}}', None),  # the same key in nested objects is no duplicate
])
def test_strict_json_reads(data, value):
    assert strictjson.loads(data) == (json.loads(data) if value is None else value)


def test_strict_json_takes_bytes_and_keeps_floats_unless_asked():
    with pytest.raises(TypeError):
        strictjson.loads('{"a": 1}')
    assert strictjson.loads(b"[0.0, 1e2, 0.5]") == [0.0, 100.0, 0.5]
    assert [type(v) for v in strictjson.loads(b"[0.0, 1e2]")] == [float, float]
    whole = strictjson.loads(b"[0.0, -0.0, 1e2, 4E0, 0.5, 1e-400, 0.9999999999999999999]", integral_floats=True)
    assert [(v, type(v)) for v in whole] == [(0, int), (0, int), (100, int), (4, int), (0.5, float), (0.0, float),
                                             (1.0, float)]  # 1e-400 and 0.99... are not whole numbers


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 53) + 1, 2 ** 53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15).filter(
        lambda x: sum(c.isdigit() for c in repr(x)) <= 20)  # (not 0.00012345678901234567: 21 digits)
    | st.text(st.characters(blacklist_categories=("Cs",))),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=200, deadline=None)
@given(value=JSON_VALUES, ascii_only=st.booleans())
def test_strict_json_reads_what_json_reads(value, ascii_only):
    data = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert strictjson.loads(data) == json.loads(data)


# ------------------------------------------------------------------ files that are not regular, or too large

def test_only_regular_files_are_read(tmp_path):
    """A FIFO named *.json must not hang the scan, /dev/zero must not fill the memory: each is one ERROR
    line and the scan goes on (run as a process: a hang ends at the timeout, not in the test runner)."""
    (tmp_path / "a-good.json").write_bytes(as_bytes(LOG))
    os.mkfifo(tmp_path / "b-fifo.json")
    (tmp_path / "c-zero.json").symlink_to("/dev/zero")
    (tmp_path / "d-null.json").symlink_to("/dev/null")
    (tmp_path / "e-good-link.json").symlink_to(tmp_path / "a-good.json")
    proc = subprocess.run([sys.executable, "-m", "verifier", "--jobs", "1", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    lines = result_lines(proc.stdout)
    assert [line.split()[0] for line in lines] == ["OK", "ERROR", "ERROR", "ERROR", "OK"]
    assert f"ERROR {tmp_path / 'b-fifo.json'}: not a regular file (a FIFO)" in lines[1]
    assert "not a regular file (a character device)" in lines[2] and "not a regular file" in lines[3]


def test_a_file_over_16_mib_is_refused(tmp_path):
    log = as_bytes(LOG)
    exact = tmp_path / "exact.json"
    exact.write_bytes(log + b" " * (MAX_LOG_BYTES - len(log)))  # trailing white space: the same log
    over = tmp_path / "over.json"
    over.write_bytes(log + b" " * (MAX_LOG_BYTES + 1 - len(log)))
    assert verify_file(str(exact), trusted_keys=TRUSTED).ok
    r = verify_file(str(over))
    assert r.error == "larger than 16 MiB, the most a log may be"


# ------------------------------------------------------------------ the crashes found, each made a clean answer

def test_a_final_status_that_is_not_a_string_fails_log_format(capsys, tmp_path):
    path = tmp_path / "status.json"
    path.write_bytes(as_bytes({**LOG, "final": {"status": 1}}))
    code, out, _ = run(capsys, path)
    assert code == 1
    assert result_lines(out)[0].startswith("FAIL  hostile-1  ") and "(?, " in result_lines(out)[0]
    assert 'log.format  event -  field final.status: expected "\\"finished\\" or \\"abandoned\\"", found 1' in out


def test_an_infinite_number_after_a_failing_event_is_unusable_input(capsys, tmp_path):
    doc = json.loads(json.dumps(LOG))
    i = first_roll(doc)
    doc["events"][i]["dice"][0] = doc["events"][i]["dice"][0] % 6 + 1  # roll.dice fails here
    doc["events"][i + 1]["turn"] = "INFINITY"
    path = tmp_path / "inf.json"
    path.write_bytes(as_bytes(doc).replace(b'"INFINITY"', b"1e400"))
    code, out, _ = run(capsys, path)
    assert code == 2
    assert result_lines(out) == [f"ERROR {path}: not strict JSON: the number 1e400 is too large "
                                 "(2^53 or more: not exact in every parser) (not a fairdice log)"]


@pytest.mark.parametrize("mode", ["text", "json"])
def test_nesting_985_deep_is_unusable_input(capsys, tmp_path, mode):
    path = tmp_path / "deep.json"
    path.write_bytes(as_bytes(LOG)[:-1] + b', "x": ' + b"[" * 985 + b"]" * 985 + b"}")
    code, out, err = run(capsys, *(["--json"] if mode == "json" else []), path)
    assert code == 2
    text = err if mode == "json" else out
    assert "not strict JSON: arrays and objects nested deeper than 64 levels" in result_lines(text)[0]
    if mode == "json":
        assert json.loads(out)["games"][0]["error"].startswith("not strict JSON: arrays and objects nested")


@pytest.mark.parametrize("mode", ["text", "json"])
def test_a_lone_surrogate_in_a_client_seed_loses_no_output(capsys, tmp_path, mode):
    """It used to raise UnicodeEncodeError while printing, and a batch lost its whole --json document."""
    doc = json.loads(json.dumps(LOG))
    seed_event = next(e for e in doc["events"] if e["type"] == "client_seed")
    seed_event["client_seed"] = "ab\ud800"
    (tmp_path / "a.json").write_bytes(json.dumps(doc).encode())  # (ASCII: the surrogate is an escape)
    (tmp_path / "b.json").write_bytes(as_bytes(LOG))
    code, out, err = run(capsys, *(["--json"] if mode == "json" else []), tmp_path)
    assert code == 2
    lines = result_lines(err if mode == "json" else out)
    assert len(lines) == 2 and lines[1].startswith("OK  ")
    assert "not strict JSON: a lone surrogate \\ud800 in the string" in lines[0]
    if mode == "json":
        games = json.loads(out)["games"]
        assert [g["ok"] for g in games] == [False, True] and "lone surrogate" in games[0]["error"]


@pytest.mark.parametrize("kept", ["last", "first"])
def test_a_second_final_block_is_refused(capsys, tmp_path, key_file, kept):
    """A signed log with a second, forged final block (another winner) after or before its own: refused,
    whichever value a parser would keep."""
    forged = json.dumps({**LOG["final"], "winner": 1 - (LOG["final"]["winner"] or 0)})
    text = json.dumps(LOG)
    if kept == "first":
        text = text.replace('"final": ', f'"final": {forged}, "final": ', 1)
    else:
        text = text[:-1] + f', "final": {forged}}}'
    path = tmp_path / "two-finals.json"
    path.write_text(text)
    code, out, _ = run(capsys, "--pubkey", key_file, path)
    assert code == 2
    assert result_lines(out) == [f'ERROR {path}: not strict JSON: the key "final" twice in one '
                                 'object (parsers differ on which value counts) (not a fairdice log)']


def test_two_signed_logs_in_one_file_are_refused(capsys, tmp_path, key_file):
    """Every field twice: a parser that keeps the first value sees one validly signed game, a parser that
    keeps the last value sees another. The file is not read at all."""
    first, last = LOG, LOGS["other"]
    assert all(verify_document(doc, "x", trusted_keys=TRUSTED).ok for doc in (first, last))
    text = json.dumps(first)[:-1] + ", " + json.dumps(last)[1:]
    assert json.loads(text) == last
    path = tmp_path / "two-logs.json"
    path.write_text(text)
    code, out, _ = run(capsys, "--pubkey", key_file, path)
    assert code == 2 and "twice in one object" in result_lines(out)[0]


def test_a_duplicate_key_inside_an_event_is_refused(capsys, tmp_path):
    text = json.dumps(LOG)
    i = text.index('"dice": [')
    path = tmp_path / "dup.json"
    path.write_text(text[:i] + '"dice": [6, 6, 6, 6, 6], ' + text[i:])
    code, out, _ = run(capsys, path)
    assert code == 2 and 'the key "dice" twice in one object' in out


def test_file_names_and_log_values_cannot_break_or_forge_result_lines(capsys, tmp_path, key_file):
    r"""A file name that is not UTF-8, or holds a newline, and a log whose unknown field is named
    "\nOK  ..." each give exactly one line (per failure), printable, with the odd characters escaped."""
    odd = os.fsencode(tmp_path) + b"/odd-\xff-\nOK  forged.json"
    with open(odd, "wb") as f:
        f.write(as_bytes(LOG))
    doc = {**LOG, "\nOK  forged  \x1b[2J": 1}
    (tmp_path / "field.json").write_bytes(as_bytes(doc))
    code, out, _ = run(capsys, "--pubkey", key_file, tmp_path)
    assert code == 1
    lines = out.splitlines()
    assert all(line.isprintable() for line in lines)
    results = result_lines(out)
    assert len(results) == 2
    assert results[0].startswith("FAIL  ?  ") and "field.json" in results[0]
    assert lines[1].startswith("      log.format  event -  field \\nOK  forged  \\x1b[2J: expected")
    assert results[1].startswith("OK    hostile-1  ") and "odd-\\udcff-\\nOK  forged.json" in results[1]


# ------------------------------------------------------------------ any value anywhere, any bytes: never a crash

HOSTILE_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70) | st.floats() | st.text(max_size=8)
    | st.sampled_from(["finished", "abandoned", "random", "human", "bot", "roll", "score", "", "\ud800"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hostile")


def replace_somewhere(data, doc):
    """(path, old value, document with one value anywhere replaced by an arbitrary one, the new value)."""
    path, target = [], doc
    while isinstance(target, (dict, list)) and target and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(target) if isinstance(target, dict) else range(len(target))))
        path.append(key)
        target = target[key]
    value = data.draw(HOSTILE_VALUES)
    mutated = json.loads(json.dumps(doc))
    if not path:
        return path, target, value, value
    holder = mutated
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return path, target, mutated, value


def file_of(directory: Path, data: bytes) -> str:
    fd, name = tempfile.mkstemp(suffix=".json", dir=directory)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return name


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_value_anywhere_is_a_clean_answer(scratch, data):
    """Any value (NaN, 2^70, lone surrogates and all) in place of any part of a real log, written as
    json.dumps writes it: verify_file answers without an internal error, the answer prints, a changed
    log never passes with its old signature; re-signed, it still gets a clean answer (bots replayed)."""
    doc = LOGS[data.draw(st.sampled_from(sorted(LOGS)))]
    path, old, mutated, value = replace_somewhere(data, doc)
    name = file_of(scratch, json.dumps(mutated, ensure_ascii=data.draw(st.booleans())).encode("utf-8", "surrogatepass"))
    try:
        r = verify_file(name, trusted_keys=TRUSTED)
        assert INTERNAL_ERROR not in (r.error or ""), r.error
        rendered(r)
        if r.ok:
            assert value == old and type(value) is type(old) and strictjson.loads(Path(name).read_bytes()) == doc
        if r.error is None and isinstance(mutated.get("header"), dict):
            Path(name).write_bytes(as_bytes(resign(mutated)))
            r = verify_file(name, trusted_keys=TRUSTED, bots=PublishedBots())
            assert INTERNAL_ERROR not in (r.error or ""), r.error
            rendered(r)
    finally:
        os.unlink(name)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_any_bytes_are_a_clean_answer(scratch, data):
    """Arbitrary bytes, and a real log with bytes deleted, inserted or changed: never an internal error,
    always a printable answer; a changed file passes only if it still holds exactly the same log."""
    text = as_bytes(LOG)
    if data.draw(st.booleans()):
        content = data.draw(st.binary(max_size=300))
    else:
        content = bytearray(text)
        for _ in range(data.draw(st.integers(1, 4))):
            at = data.draw(st.integers(0, len(content)))
            edit = data.draw(st.sampled_from(["delete", "insert", "replace"]))
            byte = data.draw(st.sampled_from(b'[]{}",:\\ 0123456789eE.-+tfnu\x00\xff'))
            if edit == "delete":
                del content[at:at + 1]
            elif edit == "insert":
                content[at:at] = bytes([byte])
            else:
                content[at:at + 1] = bytes([byte])
        content = bytes(content)
    name = file_of(scratch, content)
    try:
        r = verify_file(name, trusted_keys=TRUSTED)
        assert INTERNAL_ERROR not in (r.error or ""), r.error
        rendered(r)
        if r.ok:
            assert json.loads(content) == LOG
    finally:
        os.unlink(name)


# ------------------------------------------------------------------ batches go on

HOSTILE_FILES = {
    "status-not-a-string.json": as_bytes({**LOG, "final": {"status": 1}}),
    "deep.json": as_bytes(LOG)[:-1] + b', "x": ' + b"[" * 985 + b"]" * 985 + b"}",
    "surrogate.json": json.dumps({**LOG, "header": {**LOG["header"], "game_id": "\udfff"}}).encode(),
    "nan.json": json.dumps({**LOG, "final": {**LOG["final"], "winner": float("nan")}}).encode(),
    "huge.json": as_bytes(LOG).replace(b'"turn": 1', b'"turn": 1e400', 1),
    "binary.json": bytes(range(256)),
    "empty.json": b"",
    "array.json": b"[]",
    "second-final.json": as_bytes(LOG)[:-1] + b', "final": null}',
    "abandoned.json": as_bytes(LOGS["abandoned"]),
    "good.json": as_bytes(LOG),
}


@pytest.mark.parametrize("extra", [[], ["--json"], ["--audit"], ["--audit", "--json"]])
def test_a_batch_prints_one_result_per_file(capsys, tmp_path, extra):
    for name, content in HOSTILE_FILES.items():
        (tmp_path / name).write_bytes(content)
    code, out, err = run(capsys, *extra, tmp_path)
    assert code == 2
    lines = result_lines(err if "--json" in extra else out)
    assert len(lines) == len(HOSTILE_FILES)
    verdicts = {line.split()[2] if not line.startswith("ERROR") else line.split()[1].rstrip(":"): line.split()[0]
                for line in lines}
    assert verdicts == {str(tmp_path / n): "FAIL" if n == "status-not-a-string.json" else
                        "OK" if n in ("good.json", "abandoned.json") else "ERROR" for n in HOSTILE_FILES}
    if "--json" in extra:
        doc = json.loads(out)
        assert len(doc["games"]) == len(HOSTILE_FILES) and doc["summary"]["not_logs"] == len(HOSTILE_FILES) - 3
        assert ("audit" in doc) == ("--audit" in extra)


def test_bad_files_do_not_stop_worker_processes(capsys, tmp_path):
    """With 64 files or more the verifier uses a process pool: a bad file is still one line."""
    names = []
    for k in range(8):
        for name, content in HOSTILE_FILES.items():
            (tmp_path / f"{k}-{name}").write_bytes(content)
            names.append(name)
    code = main(["--jobs", "2", str(tmp_path)])
    out, _ = capsys.readouterr()
    assert code == 2 and len(names) >= 64
    assert len(result_lines(out)) == len(names)
    assert sum(line.startswith("OK  ") for line in result_lines(out)) == 16


def test_a_huge_value_is_cut_in_the_text_lines():
    """A failure's expected/found values are shown cut to 200 characters in the text lines (a 16 MiB string in a
    hostile log must not become a 16 MiB line); --json has them whole (game_json)."""
    from verifier.cli import shown
    assert shown("x" * 10) == '"xxxxxxxxxx"'
    long = shown("y" * 5000)
    assert long.startswith('"' + "y" * 199) and long.endswith("… (5002 characters)") and len(long) < 230
