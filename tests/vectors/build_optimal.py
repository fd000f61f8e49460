"""Writes the worked example of the optimal policy (SPEC §4.6): tests/vectors/optimal_decision.json and
its rendering between SPEC's <!-- optimal-example:begin/end --> markers.

    python tests/vectors/build_optimal.py          # rewrite both
    python tests/vectors/build_optimal.py --check  # exit 1 if either is out of date

The numbers come from the core (fairdice's optimal table and policy, its derivation of the tie-break);
tests/unit/test_verifier_policies.py holds the verifier's own implementation of §4.6 to them. The position is
a real one, small enough for a hand-written programme: a yacht card with two boxes open, whose successor
states have one box open and whose values follow from the full card's 0 by one turn each.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from fairdice import derive  # noqa: E402
from fairdice.adapters import table_cache  # noqa: E402
from fairdice.bots import space  # noqa: E402
from fairdice.bots.optimal import programme, state_of  # noqa: E402
from fairdice.bots.base import TIE_TOLERANCE, Position  # noqa: E402
from fairdice.rules import RULESETS  # noqa: E402

BOTS = table_cache.bots()  # the optimal bot with this machine's cached tables
RULES = "yacht"
CARD = {"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": 18, "choice": 22,
        "four_of_a_kind": 0, "full_house": 25, "small_straight": None, "large_straight": 30, "yacht": None}
DECISIONS = ([1, 1, 2, 3, 4], 1), ([1, 1, 2, 3, 5], 1), ([1, 1, 2, 3, 5], 2)
TIEBREAK = {"server_seed": hashlib.sha256(b"fairdice spec optimal example").hexdigest(),
            "game_id": "spec-optimal-example", "client_seeds": ["optimal example"], "seat": 0, "turn": 11}
SCALE = 1 << programme.POINT_BITS


def state(table, boxes) -> dict:
    m, u, y = state_of(table.rules, boxes)
    return {"mask": m, "upper": u, "flag": y, "index": (m * 64 + u) * table.values.shape[2] + y,
            "value": int(table.values[m, u, y])}


def successors(table) -> list[dict]:
    """Each open box, filled: the state it leads to (the upper total does not move: no upper box is open)."""
    return [{"box": c, **state(table, {**CARD, c: 0})} for c, v in CARD.items() if v is None]


def hold_sums(table, rolls_left: int) -> list[int]:
    return [int(x) for x in table.turn(CARD)[rolls_left - 1]]  # 7776 x each hold's value


def decision(table, dice, roll) -> dict:
    """The candidates after `roll` with these dice: numerators (exact), values (binary64), ties, the draw."""
    ranked = BOTS["optimal"].candidates(Position(RULESETS[RULES], CARD, tuple(dice), roll))
    sums = hold_sums(table, 3 - roll) if roll < 3 else None
    out = []
    for c in ranked:
        if c.decision.action == "roll":
            keep = tuple(sorted(dice[p] for p in c.decision.hold))
            out.append({"hold": list(c.decision.hold), "keep": list(keep),
                        "numerator": sums[space.KEEP_INDEX[keep]], "denominator": 7776 * SCALE, "value": c.value})
        else:
            out.append({"box": c.decision.category, "numerator": int(c.value * SCALE), "denominator": SCALE,
                        "value": c.value})
    best = max(c["value"] for c in out)
    tied = [i for i, c in enumerate(out) if c["value"] >= best - TIE_TOLERANCE]
    index = 0
    if len(tied) > 1:
        index = derive.tiebreak(bytes.fromhex(TIEBREAK["server_seed"]), TIEBREAK["game_id"],
                                TIEBREAK["client_seeds"], TIEBREAK["seat"], TIEBREAK["turn"], roll, len(tied))
    chosen = out[tied[index]]
    return {"dice": dice, "roll": roll, "candidates": out, "best": best, "tied": tied, "m": len(tied),
            "tiebreak_index": index if len(tied) > 1 else None,
            "decision": {"hold": chosen["hold"]} if "hold" in chosen else {"box": chosen["box"]}}


def example() -> dict:
    table = table_cache.load_table(RULES)
    final = [int(x) for x in table.last_roll_values(CARD)]
    return {
        "about": "SPEC \u00a74.6: a real position of the optimal bot in yacht, two boxes open, its table values and "
                 "decisions. Rolls (and the arrays over them) are in lexicographic order of their sorted faces.",
        "rules": RULES, "card": CARD, "state": state(table, CARD),
        "full_card": state(table, {**CARD, "small_straight": 0, "yacht": 0}),
        "successors": successors(table),
        "final_values": final,
        "second_roll_values": [int(x) for x in
                               programme.earlier_roll_values(programme.keep_means(table.last_roll_values(CARD)))],
        "tiebreak_context": TIEBREAK,
        "decisions": [decision(table, dice, roll) for dice, roll in DECISIONS],
    }


def roll_of(i: int) -> str:
    return "".join(map(str, space.ROLLS[i]))


def render(doc: dict) -> str:
    """The example as SPEC shows it."""
    s, succ = doc["state"], {x["box"]: x for x in doc["successors"]}
    final = doc["final_values"]
    some = [space.ROLL_INDEX[r] for r in ((1, 2, 3, 4, 6), (2, 2, 2, 2, 2), (1, 1, 2, 3, 5))]
    lines = [
        f"Rule set `{doc['rules']}`, card {json.dumps({k: v for k, v in doc['card'].items()})}: every upper box "
        f"filled (u = 63), `small_straight` and `yacht` open: state (m, u, y) = ({s['mask']}, {s['upper']}, "
        f"{s['flag']}), element {s['index']}. The full card (element {doc['full_card']['index']}) is worth 0; the "
        f"two successor states have one box open and are worth, from it, one turn each:",
        "",
        *[f"- after `{b}`: only `{'yacht' if b == 'small_straight' else 'small_straight'}` open, element "
          f"{x['index']}, V = {x['value']} ({x['value'] / (1 << 29):.9f} points)" for b, x in succ.items()],
        "",
        "So R3(r) = max(15·2^29·[r has a small straight] + V_after_small_straight, "
        "50·2^29·[r is five alike] + V_after_yacht): for instance "
        + ", ".join(f"R3({roll_of(i)}) = {final[i]}" for i in some)
        + f". R2 = E(R3) and R1 = E(R2); the turn value rhe(K_R1(∅) / 7776) = {s['value']} is the state's own "
          "element of the table.",
        "",
    ]
    for d in doc["decisions"]:
        left = "2 rolls" if d["roll"] == 1 else "1 roll" if d["roll"] == 2 else "no roll"
        lines.append(f"Dice {d['dice']} after roll {d['roll']} ({left} left), candidates in canonical order (the "
                     "first three and the tied ones), numerator / denominator = value:")
        lines.append("")
        for i, c in enumerate(d["candidates"]):
            if i in d["tied"] or i < 3:
                what = f"hold {c['hold']} (keep {c['keep']})" if "hold" in c else f"box `{c['box']}`"
                lines.append(f"- {i}: {what}: {c['numerator']} / {c['denominator']} = {c['value']!r}"
                             + (" (tied)" if i in d["tied"] and d["m"] > 1 else ""))
        draw = (f"m = {d['m']} tied: `tiebreak(0, 11, {d['roll']})` with m = {d['m']} draws index "
                f"{d['tiebreak_index']}" if d["m"] > 1 else "one best candidate, nothing drawn")
        chosen = f"hold {d['decision']['hold']}" if "hold" in d["decision"] else f"box `{d['decision']['box']}`"
        lines += [f"- ({len(d['candidates'])} candidates in all) {draw}: the bot plays **{chosen}**.", ""]
    ctx = doc["tiebreak_context"]
    lines.append(f"The tie-breaks are drawn (§2.3) with server seed `{ctx['server_seed']}`, game id "
                 f"`{ctx['game_id']}`, client seeds {json.dumps(ctx['client_seeds'])}, seat 0, turn 11. "
                 "The vector file holds every candidate and R3, R2 over all 252 rolls.")
    return "\n".join(lines) + "\n"


def replace_region(spec: str, name: str, content: str) -> str:
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    head, rest = spec.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + "\n" + content + end + tail


def build() -> dict[Path, str]:
    doc = example()
    spec = ROOT / "SPEC.md"
    return {HERE / "optimal_decision.json": json.dumps(doc, indent=1) + "\n",
            spec: replace_region(spec.read_text(encoding="utf-8"), "optimal-example", render(doc))}


def main(argv) -> int:
    out = build()
    stale = [p for p, text in out.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    if "--check" in argv:
        for p in stale:
            print(f"out of date: {p.relative_to(ROOT)}")
        return 1 if stale else 0
    for p in stale:
        p.write_text(out[p], encoding="utf-8")
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
