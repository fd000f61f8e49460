"""Issue 23 in a real browser (Playwright, Debian's Chromium, a phone's 390x844), against a real server on a
loopback port: the page's coach (api/static/coach.js) draws the server's analysis of a finished game in both
languages, costliest decision first with its dice; and the page's verification replays the optimal bot from
the table it fetches (api/static/tables.js: GET /v1/tables/{rules}, held to the published digest, kept in the
browser), ending ✓ where it used to end "–", while a table altered on the way is refused and the optimal bot is
then left unchecked, never passed.  Screenshots: artifacts/coach-{en,zh}-390.png, artifacts/optimal-verdict-390.png.
"""

from __future__ import annotations

import json
import re
import urllib.request

import pytest

from support.browser import ARTIFACTS, PHONE, new_page
from support.browser import altered_table

pytestmark = [pytest.mark.browser, pytest.mark.e2e]
HUMAN = {"type": "human", "name": "ann"}


def _call(url: str, body=None, token=None):
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers=headers, method="GET" if body is None else "POST")
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.load(resp)


def finished_game(base: str, bot: str) -> str:
    """A yacht game of a human (who scores every first roll in the first box open to it, rerolling once on
    turns 1 and 2) against `bot`, played to its end over HTTP: its id."""
    created = _call(f"{base}/v1/games", {"rules": "yacht", "seats": [HUMAN, {"type": "bot", "bot": bot}]})
    gid, token = created["game_id"], created["tokens"][0]["token"]
    state = _call(f"{base}/v1/games/{gid}/client-seed", {"client_seed": "coach in the browser"}, token)
    while state["status"] == "playing":
        state = _call(f"{base}/v1/games/{gid}/roll", {"hold": []}, token)
        if state["turn"] <= 2:
            state = _call(f"{base}/v1/games/{gid}/roll", {"hold": [0]}, token)
        state = _call(f"{base}/v1/games/{gid}/score", {"category": next(iter(state["options"]))}, token)
    return gid


COACH_SCRIPT = """async ([base, gid, lang]) => {
  const { coachView, fetchAnalysis } = await import("/ui/coach.js");
  const { translator } = await import("/ui/i18n.js");
  const t = translator(lang);
  const got = await fetchAnalysis(gid, { base: base + "/" });
  const el = coachView({ t, ...got, seat: 0, rules: { id: "yacht", categories: [] } });
  document.body.replaceChildren(el);
  return { text: el.innerText, total: el.querySelector("[data-testid=coach-total]").dataset.loss,
    moves: [...el.querySelectorAll("[data-testid=coach-move]")].map((m) => ({ loss: Number(m.dataset.loss),
      dice: [...m.querySelectorAll(".die")].map((d) => Number(d.dataset.face)),
      kept: [...m.querySelectorAll(".die.kept")].length, text: m.innerText })) };
}"""


def test_the_coach_shows_the_points_left_and_the_costliest_decisions_in_both_languages(browser, watch, app_url,
                                                                                        optimal_table):
    optimal_table("yacht")
    gid = finished_game(app_url, "ev")
    doc = _call(f"{app_url}/v1/games/{gid}/analysis")
    mine = doc["seats"][0]
    costly = sorted((d for d in mine["decisions"] if d["loss"] > 0), key=lambda d: -d["loss"])[:3]
    for lang, locale in (("en", "en-US"), ("zh", "zh-CN")):
        page = new_page(browser, watch, PHONE, locale=locale)
        page.goto(app_url + "/")
        page.add_style_tag(url=app_url + "/ui/coach.css")
        out = page.evaluate(COACH_SCRIPT, [app_url, gid, lang])
        page.screenshot(path=str(ARTIFACTS / f"coach-{lang}-390.png"), full_page=True)
        assert float(out["total"]) == mine["total_expected_loss"]
        assert [m["loss"] for m in out["moves"]] == [d["loss"] for d in costly] and len(costly) == 3
        assert [m["dice"] for m in out["moves"]] == [d["position"]["dice"] for d in costly]
        loss = f"{round(mine['total_expected_loss'] * 10) / 10:g}"
        first = out["moves"][0]["text"]
        if lang == "en":
            assert f"Points left on the table: {loss}" in out["text"], out["text"]
            assert re.search(r"Turn \d+, roll [123]", first) and re.search(r"you (kept|scored|rerolled)", first)
            assert re.search(r"best was .+: \u2212\d", first), first
            assert any(re.search(r"you scored \d+ in .+; best was to keep [1-6-]+ and roll again", m["text"])
                       for m in out["moves"]), out["moves"]
        else:
            assert f"白白丢掉的分数：{loss}" in out["text"] and re.search(r"第 \d+ 回合第 [123] 掷", first)
            assert re.search(r"；最好是.+：\u2212\d", first), first
            assert not re.search(r"[A-Za-z]{3,}", first), first  # the box names in Chinese too
        page.context.close()


VERDICT_SCRIPT = """async ([gid]) => {
  const { tablesFor } = await import("/ui/tables.js");
  const { checkSeats } = await import("/ui/verification.js");
  const keys = (await (await fetch("/v1/keys")).json()).keys.map((k) => k.public_key);
  const text = await (await fetch(`/v1/games/${gid}/log`)).text();
  const seen = [];
  const began = performance.now();
  const { tables, problem } = await tablesFor(JSON.parse(text), { onProgress: (n, of) => seen.push([n, of]) });
  const fetched = performance.now();
  const [{ report }] = await checkSeats(text, { trustedKeys: keys, tables });
  const done = performance.now();
  document.body.textContent = `${report.ok} ${JSON.stringify(report.botsReplayed)}`;
  return { ok: report.ok, decision: report.statuses["bot.decision"], replayed: report.botsReplayed,
    problem: problem && problem.reason, progress: seen.at(-1), fetchMs: fetched - began, verifyMs: done - fetched,
    detail: (report.checks.find((c) => c.id === "bot.decision") || {}).detail };
}"""


def test_a_game_against_the_optimal_bot_ends_verified_in_the_page(browser, watch, app_url, optimal_table):
    optimal_table("yacht")
    gid = finished_game(app_url, "optimal")
    log = _call(f"{app_url}/v1/games/{gid}/log")
    decisions = [e for e in log["events"] if e.get("seat") == 1 and (e["type"] == "score" or e.get("roll", 1) > 1)]
    page = new_page(browser, watch, PHONE)
    page.goto(app_url + "/")
    out = page.evaluate(VERDICT_SCRIPT, [gid])
    page.screenshot(path=str(ARTIFACTS / "optimal-verdict-390.png"))
    assert out["ok"] is True and out["decision"] == "pass" and out["problem"] is None, out
    assert out["replayed"]["optimal"] == len(decisions) and "of the optimal bot, replayed from its table" in out["detail"]
    assert out["progress"][0] == out["progress"][1] == 2 * 2 ** 20 + 55  # the unpacked table, as SPEC §4.6 sizes it
    again = page.evaluate(VERDICT_SCRIPT, [gid])  # kept in the browser: no download this time
    assert again["ok"] is True and again["progress"] is None
    print(f"optimal verdict in Chromium (390x844): table {out['fetchMs']:.0f} ms, verification {out['verifyMs']:.0f} ms;"
          f" again {again['fetchMs']:.0f} + {again['verifyMs']:.0f} ms")

    tampered = new_page(browser, watch, PHONE)  # a fresh browser profile: nothing kept
    tampered.route("**/v1/tables/yacht", altered_table)
    tampered.goto(app_url + "/")
    out = tampered.evaluate(VERDICT_SCRIPT, [gid])
    assert out["problem"] == "bad_table" and out["ok"] is None and out["decision"] == "unchecked", out
    assert "optimal" not in out["replayed"]
