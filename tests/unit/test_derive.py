"""The fairness scheme: vectors, uniformity, and the import rules that keep the core pure."""

import hashlib
import importlib.util
import json
import unicodedata
from collections import Counter

import pytest
from hypothesis import given, strategies as st

from fairdice import derive
from fairdice.errors import FairdiceError
from fairdice.game import NAME_MAX, check_seats
from fairdice.log import canonical, verify_signature
from fairdice.rules import options
from support import VECTORS



def load(name):
    return json.loads((VECTORS / name).read_text())


@pytest.mark.parametrize("vector", load("derivation.json"), ids=lambda v: f"{v['purpose']}{v['numbers']}")
def test_derivation_vectors(vector):
    seed = bytes.fromhex(vector["server_seed"])
    assert derive.commitment(seed) == vector["commitment"]
    msg = derive.message(vector["purpose"], vector["game_id"], vector["client_seeds"], *vector["numbers"])
    assert msg.hex() == vector["message"]
    values = derive.uniform_ints(seed, msg, vector["bound"], vector["count"])
    offset = 1 if vector["bound"] == 6 else 0
    assert [v + offset for v in values] == vector["values"]
    if vector["purpose"] == "tiebreak" and vector["count"] == 1:
        assert derive.tiebreak(seed, vector["game_id"], vector["client_seeds"], *vector["numbers"],
                               vector["bound"]) == vector["values"][0]


def test_the_vectors_reject_bytes_read_block_1_and_use_several_bounds():
    vectors = load("derivation.json")
    assert any(v["rejected"] and v["bound"] == 6 for v in vectors)
    assert any(v["rejected"] and v["bound"] == 43 for v in vectors)  # the largest tie-break rejection zone
    assert any(len(v["bytes_read"]) > 64 and "block1" in v for v in vectors)  # more than 32 bytes read
    assert {2, 6, 7, 43, 46, 129} <= {v["bound"] for v in vectors}


# ------------------------------------------------------------ client seeds and seat names (SPEC §2.2)

RULE = load("client_seed_rule.json")


def _rule_ranges(rule) -> set[tuple[int, int]]:
    """Every refused range of the vector file, the noncharacters of each plane written out."""
    planes = range(0, 0x110000, 0x10000)
    return ({tuple(r) for r in rule["generic_excluded"] + rule["excluded_ranges"]}
            | {(p + low, p + low) for p in planes for low in rule["noncharacter_low16"]})


def _covered(ranges) -> set[int]:
    return {c for lo, hi in ranges for c in range(lo, hi + 1)}


def test_the_core_refuses_exactly_the_code_points_of_the_vector_file():
    assert _covered(derive.REFUSED_CODE_POINTS) == _covered(_rule_ranges(RULE))
    assert (derive.CLIENT_SEED_MAX, NAME_MAX) == (RULE["client_seed_length"][1], RULE["seat_name_length"][1])


@pytest.mark.skipif(unicodedata.unidata_version != "14.0.0", reason="the list is that of Unicode 14.0")
def test_the_refused_code_points_are_the_unicode_14_categories():
    """Refused: Cc, Cf, Cs, Co, Zl, Zp, Zs but U+0020, and the noncharacters (SPEC §2.2), read off the database."""
    def refused(c):
        category = unicodedata.category(chr(c))
        return (category in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp") or (category == "Zs" and c != 0x20)
                or 0xFDD0 <= c <= 0xFDEF or c & 0xFFFE == 0xFFFE)
    assert {c for c in range(0x110000) if refused(c)} == _covered(_rule_ranges(RULE))


@pytest.mark.parametrize("example", RULE["valid_examples"], ids=lambda e: e["why"][:40])
def test_valid_client_seeds_are_accepted(example):
    assert derive.check_client_seed(example["text"]) == example["text"]


@pytest.mark.parametrize("example", RULE["invalid_examples"], ids=lambda e: e["why"][:40])
def test_invalid_client_seeds_are_refused_with_a_reason(example):
    with pytest.raises(FairdiceError) as refused:
        derive.check_client_seed(example["text"])
    assert refused.value.code == "invalid_client_seed" and "client seed" in refused.value.message


def test_seat_names_follow_the_client_seed_rule():
    """Every refused client seed is a refused name; valid seeds of 1..40 code points are valid names
    (those without spaces at their ends, which the core trims)."""
    short = [e for e in RULE["valid_examples"] if len(e["text"]) <= NAME_MAX and e["text"].strip(" ") == e["text"]]
    for example in RULE["valid_seat_names"] + short:
        assert check_seats([{"type": "human", "name": example["text"]}])[0].name == example["text"]
    for example in RULE["invalid_seat_names"] + RULE["invalid_examples"]:
        with pytest.raises(FairdiceError) as refused:
            check_seats([{"type": "bot", "bot": "ev", "name": example["text"]}])
        assert refused.value.code == "invalid_seats", example["why"]


def test_a_seat_name_is_trimmed_of_spaces_only():
    assert check_seats([{"type": "human", "name": "  ann  "}])[0].name == "ann"
    for name in (" ", "\tann"):
        with pytest.raises(FairdiceError):
            check_seats([{"type": "human", "name": name}])


# ------------------------------------------------------------ bot identities, public seeds (SPEC §4.5, §2.1)

@pytest.mark.parametrize("vector", load("bots.json"), ids=lambda v: v["id"])
def test_bot_identity_vectors(vector):
    from fairdice.bots import BOTS

    doc = {"id": vector["id"], "version": vector["version"], "params": vector["params"]}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    assert text == vector["canonical"] and hashlib.sha256(text.encode()).hexdigest() == vector["hash"]
    bot = BOTS[vector["id"]]
    assert bot.params() == vector["params"]
    assert bot.identity() == {"id": vector["id"], "version": vector["version"], "hash": vector["hash"]}


def _public(seed: str, label: str, index: int) -> bytes:
    """pub(label, i) of SPEC §2.1, written out from the byte layout of §2.3."""
    def field(text):
        data = text.encode("utf-8")
        return len(data).to_bytes(4, "big") + data
    msg = (field("fairdice/v1") + field("simulate-" + label) + field("") + (1).to_bytes(4, "big") + field(seed)
           + index.to_bytes(4, "big"))
    return hashlib.sha256(msg).digest()


def test_public_seed_vector_follows_the_spec_and_the_simulator():
    from fairdice.simulate import GameSpec, play_one, signer_for_seed

    vector = load("public_seed.json")
    seed = vector["seed"]
    signer = signer_for_seed(seed)
    assert signer.private_bytes() == _public(seed, "key", 0) and signer.private_bytes().hex() == vector["private_key"]
    assert signer.public_key.hex() == vector["public_key"]
    for game in vector["games"]:
        i = game["index"]
        assert game["server_seed"] == _public(seed, "server", i).hex()
        assert game["commitment"] == hashlib.sha256(_public(seed, "server", i)).hexdigest()
        assert game["game_id"] == f"sim-{_public(seed, 'run', 0).hex()[:12]}-{i:06d}"
        assert game["client_seed"] == f"simulate {seed} #{i}"
        log = play_one(GameSpec(vector["rules"], tuple(vector["bots"]), i, seed), signer)
        assert (log["header"]["game_id"], log["final"]["server_seed"], log["header"]["seed_secret"]) == (
            game["game_id"], game["server_seed"], False)
        assert log["header"]["seats"][0]["name"] == game["seat_name"] == f"{vector['bots'][0]} #0"


def test_scoring_vectors_cover_every_category():
    from fairdice import score
    from fairdice.rules import RULESETS

    vectors = load("scoring.json")
    for v in vectors:
        assert score(v["rules"], v["category"], v["dice"]) == v["points"], v
    covered = {(v["rules"], v["category"]) for v in vectors}
    assert covered == {(r, c) for r, rs in RULESETS.items() for c in rs.category_ids}


@pytest.mark.parametrize("vector", load("joker.json"), ids=lambda v: v["name"])
def test_joker_vectors(vector):
    legal = options(vector["rules"], vector["card"], vector["dice"], vector["upper_first"])
    got = {c: {"points": o.points, "yahtzee_bonus": o.yahtzee_bonus, "joker": o.joker} for c, o in legal.items()}
    assert got == vector["legal"]


def test_short_log_vector_replays_and_is_signed():
    from fairdice.bots import play_bots
    from fairdice.game import Game
    from fairdice.log import setup_from_header

    log = load("log_short.json")
    head = log["header"]
    verify_signature(head["public_key"], log["commitment_signature"], canonical(head), "sig.commitment")
    body = {k: v for k, v in log.items() if k != "signature"}
    verify_signature(head["public_key"], log["signature"], canonical(body), "sig.final")
    seed = bytes.fromhex(log["final"]["server_seed"])
    assert derive.commitment(seed) == head["commitment"]
    game = Game(setup_from_header(head), seed)
    game.supply_client_seed(None, log["events"][0]["client_seed"])
    play_bots(game)
    assert game.events == log["events"]


def test_vectors_and_spec_are_up_to_date():
    spec = importlib.util.spec_from_file_location("vector_build", VECTORS / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    for path, text in build.build().items():
        assert path.read_text() == text, f"{path.name} is stale: run python tests/vectors/build.py"


def test_six_hundred_thousand_dice_are_uniform():
    """Chi-square, 5 degrees of freedom; 20.515 is the 0.1% critical value. Inputs are fixed, so this cannot flake."""
    seed = hashlib.sha256(b"uniformity").digest()
    faces = Counter()
    by_position = [Counter() for _ in range(5)]
    for turn in range(120_000):
        dice = derive.five_dice(seed, derive.message("roll", "uniformity", ["c"], 0, turn, 1))
        faces.update(dice)
        for pos, die in enumerate(dice):
            by_position[pos][die] += 1

    def chi2(counter):
        n = sum(counter.values())
        return sum((counter[f] - n / 6) ** 2 / (n / 6) for f in range(1, 7))

    assert sum(faces.values()) == 600_000
    assert chi2(faces) < 20.515
    # five more tests: Bonferroni at 0.1% family-wide gives 0.02% each, critical value 23.4
    assert all(chi2(c) < 23.4 for c in by_position)


@pytest.mark.parametrize("bound", [6, 7, 43, 100, 256])
def test_rejection_sampling_is_exact_for_every_byte(monkeypatch, bound):
    """The sampler fed every byte value once, the rejected ones (SPEC §2.3: b >= 256 - 256 mod m) first:
    it skips exactly those and maps each other byte b to b mod m, so every value is drawn equally often."""
    rejected = list(range(256 - 256 % bound, 256))
    monkeypatch.setattr(derive, "hmac_blocks", lambda seed, msg: iter([bytes(rejected), bytes(range(256))]))
    accepted = 256 - len(rejected)
    values = derive.uniform_ints(bytes(32), b"any message", bound, accepted)
    assert values == [b % bound for b in range(accepted)]
    assert Counter(values) == {v: accepted // bound for v in range(bound)}


@given(st.binary(min_size=32, max_size=32), st.text(min_size=1, max_size=20), st.integers(0, 2**32 - 1),
       st.integers(1, 256))
def test_uniform_ints_stay_in_range(seed, client_seed, n, bound):
    values = derive.uniform_ints(seed, derive.message("tiebreak", "g", [client_seed], n), bound, 8)
    assert len(values) == 8 and all(0 <= v < bound for v in values)


def test_messages_are_unambiguous():
    a = derive.message("roll", "g", ["ab", "c"], 1, 2, 3)
    b = derive.message("roll", "g", ["a", "bc"], 1, 2, 3)
    c = derive.message("roll", "g", ["abc"], 1, 2, 3)
    assert len({a, b, c}) == 3
