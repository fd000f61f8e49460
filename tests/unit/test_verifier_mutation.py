"""Mutation tests: every single change to a log is caught, both with the signature left stale
and with the log re-signed by the server key (then the replay itself must catch it)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fairdice.game import Game, Setup
from fairdice.log import final_block, setup_from_header
from support.verifier_support import PUBLIC_HEX, core_log, load, resign, simulated
from verifier.botcheck import PublishedBots
from verifier.files import find_logs, verify_file
from verifier.replay import verify_document
from verifier.spec import CATEGORIES

TRUSTED = [bytes.fromhex(PUBLIC_HEX)]


def sample_logs() -> dict[str, dict]:
    rng = random.Random(3)
    logs = {}
    for rules, bots, seed in (("classic13", "greedy,ev", 201), ("yatzy", "ev,greedy", 202)):
        files, _ = find_logs([str(simulated(rules, bots, 3, seed))])
        logs[f"simulate-{rules}"] = load(files[0])
    seats = [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "ev"}, {"type": "human", "name": "bob"}]
    logs["humans-random-first-upper-first"] = core_log(
        Setup.build("mut-1", "yacht", seats, first="random", upper_first=True), rng.randbytes(32), rng)
    logs["abandoned"] = core_log(Setup.build("mut-2", "classic13", seats[:2], first=1), rng.randbytes(32), rng,
                                 abandon_after=30)
    assert logs["abandoned"]["final"]["status"] == "abandoned"
    return logs


LOGS = sample_logs()


def edit(doc, path, value):
    doc = json.loads(json.dumps(doc))
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


def with_events(doc, events):
    doc = json.loads(json.dumps(doc))
    doc["events"] = events
    return doc


def mutants(doc):
    """(name, mutated document, roll-hold info) for every single change of the enumeration."""
    events = doc["events"]
    n_seats = len(doc["header"]["seats"])
    cats = CATEGORIES[doc["header"]["rules"]]
    for i, e in enumerate(events):
        at = ("events", i)
        if e["type"] == "roll":
            for p in range(5):
                yield f"die {i}.{p}", edit(doc, at + ("dice", p), e["dice"][p] % 6 + 1), None
            for p in range(5):
                hold = sorted(set(e["hold"]) ^ {p})
                yield f"hold {i}.{p}", edit(doc, at + ("hold",), hold), (i, p)
        elif e["type"] == "score":
            yield f"points {i}", edit(doc, at + ("points",), e["points"] + 1), None
            yield f"total {i}", edit(doc, at + ("total",), e["total"] - 1), None
            yield f"joker {i}", edit(doc, at + ("joker",), not e["joker"]), None
            yield f"yahtzee_bonus {i}", edit(doc, at + ("yahtzee_bonus",), 100 - e["yahtzee_bonus"]), None
            yield f"upper_bonus {i}", edit(doc, at + ("upper_bonus",), 35 if e["upper_bonus"] == 0 else 0), None
            other = cats[(cats.index(e["category"]) + 1) % len(cats)]
            yield f"category {i}", edit(doc, at + ("category",), other), None
        elif e["type"] == "client_seed":
            yield f"client seed {i}", edit(doc, at + ("client_seed",), e["client_seed"] + "x"), None
        elif e["type"] == "start":
            yield f"first {i}", edit(doc, at + ("first",), (e["first"] + 1) % n_seats), None
            for r, rnd in enumerate(e["rolloff"]):
                for j, entry in enumerate(rnd):
                    yield (f"rolloff die {r}.{j}",
                           edit(doc, at + ("rolloff", r, j, "dice", 0), entry["dice"][0] % 6 + 1), None)
        elif e["type"] == "abandon":
            yield f"abandon seat {i}", edit(doc, at + ("seat",), 0 if e["seat"] is None else None), None
        yield f"remove {i}", with_events(doc, events[:i] + events[i + 1:]), None
        yield f"duplicate {i}", with_events(doc, events[:i + 1] + events[i:]), None
        if i + 1 < len(events):
            yield f"swap {i}", with_events(doc, events[:i] + [events[i + 1], e] + events[i + 2:]), None
    final = doc["final"]
    for s, totals in enumerate(final["totals"]):
        for part in totals:
            yield f"final {s}.{part}", edit(doc, ("final", "totals", s, part), totals[part] + 1), None
    yield "winner", edit(doc, ("final", "winner"), 0 if final["winner"] is None else None), None
    yield "draw", edit(doc, ("final", "draw"), not final["draw"]), None
    yield "status", edit(doc, ("final", "status"), {"finished": "abandoned"}.get(final["status"], "finished")), None
    seed = final["server_seed"]
    yield "server seed", edit(doc, ("final", "server_seed"), ("1" if seed[0] != "1" else "2") + seed[1:]), None
    c = doc["header"]["commitment"]
    yield "commitment", edit(doc, ("header", "commitment"), ("1" if c[0] != "1" else "2") + c[1:]), None
    yield "game id", edit(doc, ("header", "game_id"), doc["header"]["game_id"] + "x"), None


def core_reproduces(doc) -> bool:
    """The oracle: the core, given the same commands, produces exactly this log (events and final).
    Then the log is simply that of another game (e.g. a human who held differently, or stopped
    earlier, with the same outcome): no replay can tell it apart from the original."""
    try:
        game = Game(setup_from_header(doc["header"], doc["version"]), bytes.fromhex(doc["final"]["server_seed"]))
        if game.commitment != doc["header"]["commitment"]:
            return False
        for e in doc["events"]:  # (the sample logs' human seats have no key: their events are not signed)
            if e["type"] == "client_seed_commit":
                game.commit_client_seed(e["seat"], e["commitment"], player_key=e.get("player_key"))
            elif e["type"] == "client_seed":
                game.supply_client_seed(e["seat"], e["client_seed"], e.get("salt"), player_key=e.get("player_key"))
            elif e["type"] == "roll":
                game.roll(e["seat"], e["hold"])
            elif e["type"] == "score":
                game.score(e["seat"], e["category"])
            elif e["type"] == "abandon":
                game.abandon(e["seat"], e.get("reason", "player"))
        return list(game.events) == doc["events"] and final_block(game) == doc["final"]
    except Exception:
        return False


@pytest.mark.parametrize("name", sorted(LOGS))
def test_the_sample_logs_verify(name):
    doc = LOGS[name]
    assert verify_document(doc, name, trusted_keys=TRUSTED).ok
    assert verify_document(resign(doc), name, trusted_keys=TRUSTED).ok


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LOGS))
def test_every_change_is_caught_with_a_stale_signature(name):
    count = 0
    for what, doc, _ in mutants(LOGS[name]):
        r = verify_document(doc, what, trusted_keys=TRUSTED)
        assert not r.ok, what
        assert "fail" in (r.checks["sig.final"], r.checks["sig.commitment"]), what
        count += 1
    assert count > 100


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LOGS))
def test_every_change_is_caught_by_the_replay_when_resigned(name):
    """Re-signed by the server key, a changed log passes the verifier exactly when the core itself
    would have produced it (a different but legitimate game: checked for every change the verifier
    accepts and for one in five of the others); if such a change touches a bot's move,
    --check-bots flags it."""
    original = LOGS[name]
    bots = PublishedBots()
    legitimate, total = [], 0
    for what, doc, _ in mutants(original):
        total += 1
        doc = resign(doc)
        r = verify_document(doc, what, trusted_keys=TRUSTED)
        assert r.checks["sig.commitment"] == r.checks["sig.final"] == "pass", what
        assert {f.check for f in r.failures}.isdisjoint({"sig.commitment", "sig.final", "log.key"}), what
        if r.ok or total % 5 == 0:  # the core as oracle: on every accepted change, and on a sample of the rest
            assert r.ok == core_reproduces(doc), (what, r.failures)
        if r.ok:
            legitimate.append(what)
            i = int(what.split()[-1].split(".")[0])
            seat = original["events"][i].get("seat")
            if seat is not None and original["header"]["seats"][seat]["type"] == "bot":
                rb = verify_document(doc, what, trusted_keys=TRUSTED, bots=bots)
                assert rb.checks["bot.decision"] == "fail", what
    kinds = {w.split()[0] for w in legitimate}
    # holds, an early stop, the order client seeds arrived in, who abandoned
    assert kinds <= {"hold", "remove", "swap", "abandon"}, legitimate
    assert len(legitimate) < total / 5


def test_what_each_change_is_reported_as():
    doc = LOGS["simulate-classic13"]
    i = next(k for k, e in enumerate(doc["events"]) if e["type"] == "roll" and e["roll"] == 2)
    e = doc["events"][i]
    r = verify_document(resign(edit(doc, ("events", i, "dice", 4), e["dice"][4] % 6 + 1)), "x")
    f = r.failures[0]
    assert (f.check, f.event, f.field, f.expected, f.found) == ("roll.dice", i, "dice[4]", e["dice"][4],
                                                                 e["dice"][4] % 6 + 1)
    assert {x.check for x in r.failures} <= {"roll.dice", "score.points", "final.totals", "final.winner"}
    r = verify_document(resign(edit(doc, ("final", "server_seed"), "0" * 64)), "x")
    assert r.failures[0].check == "seed.commitment" and r.failures[0].field == "header.commitment"
    k = next(k for k, e in enumerate(doc["events"]) if e["type"] == "score")
    r = verify_document(resign(edit(doc, ("events", k, "total"), 1000)), "x")
    assert [(f.check, f.event, f.field, f.expected, f.found) for f in r.failures] == [
        ("score.points", k, "total", doc["events"][k]["total"], 1000)]
    # without the first box the first turn never ends: the next event, the next seat's roll, is out of turn
    r = verify_document(resign(with_events(doc, doc["events"][:k] + doc["events"][k + 1:])), "x")
    assert (r.failures[0].check, r.failures[0].event, r.failures[0].field) == ("turn.order", k, "seat")


def test_a_truncated_file_is_caught(tmp_path: Path):
    text = json.dumps(LOGS["abandoned"])
    for cut in [1, len(text) // 3, len(text) // 2, len(text) - 1]:
        path = tmp_path / f"cut-{cut}.json"
        path.write_text(text[:cut])
        r = verify_file(str(path))
        assert r.error and "not JSON" in r.error and not r.ok


JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 300) | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                    max_leaves=6)


@pytest.mark.slow  # 300 verifications: 4 to 6 seconds
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_value_anywhere_never_crashes_and_is_caught(data):
    """Replace any one value of the document by arbitrary JSON: the verifier never raises; with
    the signature stale the log never passes (unless the value did not change); re-signed, it
    still never raises."""
    doc = LOGS[data.draw(st.sampled_from(sorted(LOGS)))]
    path, target = [], doc
    while isinstance(target, (dict, list)) and target and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(target) if isinstance(target, dict) else range(len(target))))
        path.append(key)
        target = target[key]
    assume(path)  # the whole document replaced is not a log at all: the CLI's garbage tests
    value = data.draw(JSON)
    mutated = edit(doc, tuple(path), value)
    r = verify_document(mutated, "fuzz", trusted_keys=TRUSTED)
    if not (value == target and type(value) is type(target)):
        assert not r.ok, (path, value)
    if isinstance(mutated.get("header"), dict):
        verify_document(resign(mutated), "fuzz", trusted_keys=TRUSTED)
