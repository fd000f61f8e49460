"""The verifier's fast writer of canonical JSON (spec.canonical_events) gives the very bytes of
canonical() on well-formed events, and the final signature is still checked over canonical()
when the replay finds an event that is not well formed."""

from __future__ import annotations

import functools
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairdice.game import Setup
from support.verifier_support import PUBLIC_HEX, core_log, load, random_setup, resign, simulated
from support import vectors
from verifier.files import find_logs
from verifier.replay import verify_document
from verifier.spec import CATEGORIES, HOLDS, canonical, canonical_events, canonical_object

TRUSTED = [bytes.fromhex(PUBLIC_HEX)]


def spec_canonical(value) -> bytes:
    """Canonical JSON as SPEC §1 defines it for Python: the reference every writer here is held to."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


@functools.cache
def sample_logs() -> list[dict]:
    rng = random.Random(5)
    docs = [vectors("log_short.json")]
    for rules, seed in (("yacht", 301), ("yatzy", 302), ("classic13", 303)):
        docs += [load(f) for f in find_logs([str(simulated(rules, "greedy,ev", 2, seed))])[0]]
    for k in range(12):  # humans (non-ASCII client seeds), roll-offs, upper_first, jokers, abandoned games
        docs.append(core_log(random_setup(rng, f"canon-{k}"), rng.randbytes(32), rng,
                             abandon_after=40 if k % 4 == 0 else None))
    for k in range(20):  # classic13 solitaires: humans here chase five alike, so jokers come up
        doc = core_log(Setup.build(f"canon-joker-{k}", "classic13", [{"type": "human", "name": "ann"}]),
                       rng.randbytes(32), rng)
        docs.append(doc)
        if any(e["type"] == "score" and e["joker"] for e in doc["events"]):
            break
    return docs


@pytest.mark.slow  # simulated logs of every rule set
def test_canonical_events_is_canonical_json_on_real_logs():
    kinds = set()
    for doc in sample_logs():
        assert canonical_events(doc["events"]) == spec_canonical(doc["events"]), doc["header"]["game_id"]
        assert canonical(doc) == spec_canonical(doc), doc["header"]["game_id"]
        kinds |= {e["type"] for e in doc["events"]}
        kinds |= {("joker", e["joker"]) for e in doc["events"] if e["type"] == "score"}
        kinds |= {("hold", len(e["hold"])) for e in doc["events"] if e["type"] == "roll"}
    assert kinds >= {"client_seed", "start", "roll", "score", "abandon", ("joker", True), ("joker", False)}
    assert {("hold", n) for n in range(6)} <= kinds


ints = st.integers(min_value=-2**70, max_value=2**70)
rolls = st.fixed_dictionaries({"type": st.just("roll"), "seat": ints, "turn": ints, "roll": ints,
                               "hold": st.sampled_from(sorted(HOLDS)).map(list),
                               "dice": st.lists(ints, min_size=5, max_size=5)})
scores = st.fixed_dictionaries({"type": st.just("score"), "seat": ints, "turn": ints,
                                "category": st.sampled_from(sorted({c for cs in CATEGORIES.values() for c in cs})),
                                "points": ints, "joker": st.booleans(), "yahtzee_bonus": ints,
                                "upper_bonus": ints, "total": ints})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(rolls, scores), max_size=8).map(lambda es: [dict(reversed(e.items())) for e in es]))
def test_canonical_events_is_canonical_json_on_any_well_formed_events(events):
    assert canonical_events(events) == spec_canonical(events)


@given(st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.text(), st.booleans(), st.none()),
                       max_size=5))
def test_canonical_object_is_canonical_json(doc):
    assert canonical_object({k: spec_canonical(v) for k, v in doc.items()}) == spec_canonical(doc)


def retyped(doc: dict, i: int, name: str, value) -> dict:
    doc = json.loads(json.dumps(doc))
    doc["events"][i][name] = value
    return doc


def test_an_event_of_the_wrong_json_type_fails_the_final_signature_too():
    """A value replaced by an equal one of another JSON type (1 by true or 1.0, false by 0) is a
    log.format failure; with the signature left as it was, it is a sig.final failure as well,
    however far the replay went."""
    doc = sample_logs()[1]
    assert verify_document(doc, "x", trusted_keys=TRUSTED).ok
    events = doc["events"]
    roll = next(i for i, e in enumerate(events) if e["type"] == "roll" and e["seat"] == 1 and e["roll"] == 2)
    score = next(i for i, e in enumerate(events) if e["type"] == "score" and not e["joker"])
    changes = [(roll, "seat", True), (roll, "roll", 2.0), (roll, "dice", [float(d) for d in events[roll]["dice"]]),
               (score, "joker", 0), (score, "points", float(events[score]["points"])),
               (score, "total", float(events[score]["total"]))]
    for i, name, value in changes:
        stale = retyped(doc, i, name, value)
        assert stale["events"][i][name] == events[i][name]  # equal in Python, not in JSON
        r = verify_document(stale, name, trusted_keys=TRUSTED)
        assert r.checks["log.format"] == "fail" and r.checks["sig.final"] == "fail", (name, r.failures)
        r = verify_document(resign(stale), name, trusted_keys=TRUSTED)
        assert r.checks["log.format"] == "fail" and r.checks["sig.final"] == "pass", (name, r.failures)


def test_the_final_signature_is_checked_after_an_early_stop():
    doc = json.loads(json.dumps(sample_logs()[1]))
    doc["events"][5]["turn"] += 1  # turn.order: the replay stops there
    r = verify_document(doc, "x", trusted_keys=TRUSTED)
    assert r.checks["turn.order"] == "fail" and r.checks["sig.final"] == "fail"
    assert verify_document(resign(doc), "x", trusted_keys=TRUSTED).checks["sig.final"] == "pass"
