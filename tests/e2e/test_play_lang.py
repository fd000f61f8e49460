"""`fairdice play --lang zh`: the terminal game in Chinese, against the API served on a loopback port."""

from __future__ import annotations

import re

import pytest

from fairdice.edges.playtext import EN, ZH, display_width
from support.api_helpers import play_session

pytestmark = pytest.mark.e2e

# The box names of the Chinese rule documents the players know, in yacht's table order.
YACHT_ZH = ["幺点", "两点", "三点", "四点", "五点", "六点", "自选", "四条", "葫芦", "小顺", "大顺", "快艇"]


@pytest.fixture(scope="module")
def url(app_url, optimal_table):
    optimal_table("yacht")  # the hint asks the optimal engine
    return app_url


def session(url, lines, *argv):
    return play_session(url, lines, list(argv))


def test_both_catalogues_say_the_same_things():
    assert set(EN) == set(ZH)
    fields = re.compile(r"\{(\w+)")
    assert {k: set(fields.findall(v)) for k, v in EN.items()} == {k: set(fields.findall(v)) for k, v in ZH.items()}


def test_a_whole_game_in_chinese_with_chinese_box_names(url, tmp_path):
    lines = ["?", "h", "x"]
    for name in YACHT_ZH:  # every box named in Chinese, in turn (yacht has no forced joker)
        lines += ["r", "r 0 1", f"s {name}"]
    lines[3:5] = ["r", "r 0 1", "r 0 1", "h"]  # a hint after the third roll: every move it offers is a box
    code, out = session(url, lines, "--lang", "zh", "--rules", "yacht", "--bot", "greedy", "--client-seed", "终端",
                        "--save-receipt", str(tmp_path / "r.json"))
    assert code == 0, out
    assert "快艇，对战贪心机器人" in out and "服务器已对它的种子做出承诺" in out and "你的客户端种子：终端" in out
    assert "命令：" in out and "没有命令 'x'" in out and "提示（optimal 引擎；数值：最终总分期望）" in out
    assert re.search(r"贪心机器人 掷出 [1-6 ]+，在.+记 \d+ 分", out)
    for name in YACHT_ZH:
        assert re.search(rf"  {name}：\d+ 分", out), name  # "  葫芦：25 分，总分 …" (the name only, in Chinese)
    assert not re.search(r"\n *(幺点 ones|葫芦 full_house)", out)  # no English box id beside it on the card
    assert re.search(r"\n  最好 .+  s [\u4e00-\u9fff]+ ", out)  # the hint's command in Chinese too: "s 葫芦"
    assert "服务器种子已公开" in out and "对局记录已验证" in out
    block = out.split("服务器种子已公开")[0].rstrip().split("\n\n")[-1].splitlines()
    card = block[:next(i for i, row in enumerate(block) if row.startswith("总分")) + 1]
    assert card[0].split() == ["你", "贪心机器人"] and re.fullmatch(r"你赢了|贪心机器人获胜|平局", block[-1])
    assert [row.split()[0] for row in card[1:13]] == YACHT_ZH
    assert len({display_width(row) for row in card}) == 1, card  # columns line up, Chinese characters are two wide


def test_english_stays_the_default(url):
    code, out = session(url, ["q"], "--rules", "yacht", "--bot", "ev")
    assert code == 0 and "yacht against the ev bot" in out and "game abandoned" in out
    assert not re.search(r"[\u3000-\u9fff]", out)
