"""The coach's summary in words, English and Chinese: what `fairdice analyze` and the end of `fairdice play` print.

From an analysis document (`fairdice.analysis.analyze`, GET /v1/games/{id}/analysis): per seat the expected
points left on the table against optimal play, then its costliest decisions first, each as its position
("turn 3, roll 1 of 3, dice 3 3 5 1 2: kept 3-3; best was 3-3-5  −2.10").
"""

from __future__ import annotations

from .playtext import ENGLISH, Words

TOP = 3  # costliest decisions shown per seat

EN = {
    "head": "coach ({engine} engine): expected points left on the table against optimal play of each seat's own "
            "card (SPEC §4.7)",
    "seat": "{name}: {loss} points left on the table; {mistakes} of {count} decisions not the best (scored {total})",
    "none": "  every decision was one of the best",
    "line": "  {minus}{loss}  turn {turn}, roll {roll} of 3, dice {dice}: {made}; best was {best}",
    "kept": "kept {keep}",
    "kept_none": "rerolled all five",
    "best_keep": "{keep}",
    "best_keep_none": "to reroll all five",
    "best_to_keep": "to keep {keep}",
    "scored": "scored {box} for {points}",
    "best_score": "{box} for {points}",
    "best_to_score": "to score {box} for {points}",
    "more": "  ({count} more decisions lost points: fairdice analyze --top N LOG shows more)",
    "unavailable": "coach: cannot judge this game: {detail}",
    "unavailable_upper_first": "coach: cannot judge this game: the optimal engine does not cover the upper-first "
                               "house rule, so there is no optimal play to compare with",
    "not_now": "coach: no analysis: {detail}",
}

ZH = {
    "head": "教练（{engine} 引擎）：和每个座位自己计分表的最优打法相比，期望中白白丢掉的分数（SPEC §4.7）",
    "seat": "{name}：丢掉 {loss} 分；{count} 个决定中有 {mistakes} 个不是最好的（实得 {total} 分）",
    "none": "  每个决定都是最好的之一",
    "line": "  {minus}{loss}  第 {turn} 回合第 {roll}/3 掷，骰子 {dice}：{made}；最好是{best}",
    "kept": "保留了 {keep}",
    "kept_none": "五颗全部重掷",
    "best_keep": "保留 {keep}",
    "best_keep_none": "五颗全部重掷",
    "best_to_keep": "保留 {keep}",
    "scored": "在{box}记了 {points} 分",
    "best_score": "在{box}记 {points} 分",
    "best_to_score": "在{box}记 {points} 分",
    "more": "  （还有 {count} 个决定丢了分：fairdice analyze --top N 对局记录 可以看更多）",
    "unavailable": "教练：无法评判这局：{detail}",
    "unavailable_upper_first": "教练：无法评判这局：最优引擎不支持“先填上半区”的房规，没有最优打法可以对照",
    "not_now": "教练：没有分析：{detail}",
}

MINUS = "\u2212"


def _say(words: Words, key: str, **fields) -> str:
    return (ZH if words.lang == "zh" else EN)[key].format(**fields)


def render_analysis(doc: dict, words: Words = ENGLISH, focus: int | None = None, top: int = TOP) -> str:
    """The summary of an analysis: a line per seat, then its `top` costliest decisions, costliest first (on
    equal losses, in the order played); given a `focus` seat, only that seat's decisions are listed."""
    if not doc.get("available", True):
        key = "unavailable_upper_first" if doc.get("reason") == "upper_first" else "unavailable"
        return _say(words, key, detail=doc.get("detail", ""))
    lines = [_say(words, "head", engine=doc["engine"])]
    for seat in doc["seats"]:
        name = words.seat({"type": seat["type"], "name": seat["name"], "bot": seat["bot"]})
        lines.append(_say(words, "seat", name=name, loss=f"{seat['total_expected_loss']:.2f}",
                          mistakes=seat["mistakes"], count=seat["decision_count"], total=seat["total"]))
        if focus is not None and seat["seat"] != focus:
            continue
        costly = sorted((d for d in seat["decisions"] if d["loss"] > 0), key=lambda d: -d["loss"])
        if not costly:
            lines.append(_say(words, "none"))
        for d in costly[:top]:
            lines.append(decision_line(d, doc["rules"], words))
        if len(costly) > top:
            lines.append(_say(words, "more", count=len(costly) - top))
    return "\n".join(lines)


def decision_line(d: dict, rules: str, words: Words = ENGLISH) -> str:
    """One decision as its position, what was done, what was best and the expected points lost."""
    pos = d["position"]
    return _say(words, "line", minus=MINUS, loss=f"{d['loss']:.2f}", turn=d["turn"], roll=pos["roll"],
                dice=" ".join(map(str, pos["dice"])), made=_made(d["choice"], rules, words),
                best=_best(d["best"], d["choice"]["action"], rules, words))


def _keep(choice: dict) -> str:
    return "-".join(map(str, choice["keep"]))


def _made(choice: dict, rules: str, words: Words) -> str:
    if choice["action"] == "score":
        return _say(words, "scored", box=words.short_box(rules, choice["category"]), points=choice["points"])
    return _say(words, "kept", keep=_keep(choice)) if choice["keep"] else _say(words, "kept_none")


def _best(best: dict, made_action: str, rules: str, words: Words) -> str:
    """The best choice; in English "to keep ..." / "to score ..." when it is not the kind of move made."""
    same = best["action"] == made_action
    if best["action"] == "score":
        return _say(words, "best_score" if same else "best_to_score", box=words.short_box(rules, best["category"]),
                    points=best["points"])
    if not best["keep"]:
        return _say(words, "best_keep_none")
    return _say(words, "best_keep" if same else "best_to_keep", keep=_keep(best))
