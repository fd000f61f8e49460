"""The words of `fairdice play` (the terminal game), in English and Chinese: `--lang en|zh`.

One catalogue per language, `str.format` templates with named fields; box names in Chinese are those of the
Chinese rule documents (快艇 幺点…, 亚兹 一点…, 经典13), as on the game page. Commands stay the same in every
language (`r 0 2`, `s full_house`); in Chinese a box may also be named in Chinese (`s 葫芦`).
"""

from __future__ import annotations

import unicodedata

LANGUAGES = ("en", "zh")

EN = {
    "help": """commands:
  r               roll (first roll of a turn: all five dice)
  r 0 2 4         roll again keeping the dice at positions 0, 2, 4
  s <category>    score in a category (unique prefix: 's full' for full_house)
  h               hint: the best move now and the next best, with their expected final scores
  c               show the score card
  q               quit (abandon: the server reveals its seed)
  ?               this help""",
    "default_name": "you",
    "no_server": "fairdice play: cannot reach a fairdice server at {url} ({error}); start one with `fairdice serve`",
    "unknown_bot": "fairdice play: unknown bot {bot!r}; this server has: {bots}",
    "failed": "fairdice play: {error}",
    "intro": "{rules} against the {bot} bot, at {url}",
    "committed": "game {game}: the server committed to its seed {commitment}",
    "signed": "  (signature checked against key {key})",
    "seed_refused": "fairdice play: client seed refused: {error}",
    "broke_protocol": "fairdice play: the server broke the protocol: {error}",
    "your_seed": "your client seed: {seed}",
    "your_receipt": "your receipt: {path} (after the game: fairdice-verify --receipt {path} LOG)",
    "receipt_unwritten": "fairdice play: could not write your receipt to {path}: {error}"
                         " (the game goes on; it is checked against the receipt kept in memory at the end)",
    "receipts_unwritten": "fairdice play: could not write the move receipts to {path}: {error}",
    "joining": "{rules} at {url}: you play seat {seat} ({name}); seats {seats}",
    "waiting_for": "waiting for {name} to play...",
    "warning": "WARNING: {warning}",
    "your_key": "your player key: {key} (every move you make is signed with it; kept in {path})",
    "key_unwritten": "fairdice play: could not keep your player key in {path}: {error} (the game goes on)",
    "type_help": "type ? for help, h for a hint",
    "abandoned": "game abandoned",
    "refused": "  refused: {detail}",
    "allowed": "  allowed: {allowed}",
    "positions": "  positions are numbers 0..4, e.g. r 0 2 4",
    "one_category": "  name one category, e.g. s full_house",
    "ambiguous": "  ambiguous: {choices}",
    "scored": "  {box}: {points} points{extras}, total {total}",
    "unknown_command": "  unknown command {verb!r}; ? for help",
    "joker": "joker",
    "bonus": "+{bonus} bonus",
    "upper_bonus": "+{bonus} upper bonus",
    "extras": " ({parts})",
    "list_sep": ", ",
    "rolloff": "roll-off: {name} plays first",
    "other_scored": "{name} rolled {throws} and scored {box} for {points}{extras} (total {total})",
    "your_turn": "your turn {turn}: r to roll",
    "turn_roll": "turn {turn}, roll {roll} of 3",
    "rolls_left": " ({left} left)",
    "score_now": " (score now)",
    "dice": "  dice      ",
    "positions_row": "  position  ",
    "options": "  options: ",
    "option_joker": " joker",
    "hint_head": "  hint ({engine} engine; values: {kind})",
    "kind_final": "expected final score",
    "kind_turn": "expected points this turn",
    "hint_note_ev": "the optimal engine does not cover the upper-first house rule; values are the one-turn ev "
                    "heuristic's expected points this turn",
    "move_score": "score {box} for {points}",
    "move_roll": "roll all five",
    "move_reroll": "reroll all five",
    "move_keep": "keep {keep}, roll {count}",
    "best": "best",
    "tied": "  ({count} moves are equally good)",
    "more": "  ({count} more alternatives)",
    "card_upper_bonus": "upper bonus",
    "card_yahtzee_bonus": "yahtzee bonus",
    "card_total": "total",
    "draw": "a draw",
    "wins": "{name} wins",
    "you_win": "you win",
    "seed_revealed": "server seed revealed: {seed}",
    "verified": "log verified (by the independent verifier, against your receipt and the server's receipt of "
                "each of your moves): signatures, commitment, your client seed, every move answered, every die, "
                "every score, every bot decision",
    "not_verified": "LOG DOES NOT VERIFY:",
    "problem": "  {problem}",
    "log_written": "log written to {path} (check it with: fairdice-verify {path})",
    "receipts_written": "{count} move receipts in {path} (check the log against them: "
                        "fairdice-verify --receipts {path} LOG)",
    "coach_none": "coach: no analysis from the server ({detail}); fairdice analyze LOG makes one here",
}

ZH = {
    "help": """命令：
  r               掷骰（每回合第一掷：五颗全掷）
  r 0 2 4         再掷一次，保留位置 0、2、4 的骰子
  s <计分项>      记分（英文名可只写开头，如 's full' 即 full_house；也可以写中文名，如 's 葫芦'）
  h               提示：现在最好的一步和次好的几步，以及各自的最终总分期望
  c               显示计分表
  q               退出（放弃这局：服务器会公开它的种子）
  ?               显示本帮助""",
    "default_name": "你",
    "no_server": "fairdice play：无法连接 {url} 上的 fairdice 服务器（{error}）；请先用 `fairdice serve` 启动一个",
    "unknown_bot": "fairdice play：没有机器人 {bot!r}；这台服务器有：{bots}",
    "failed": "fairdice play：{error}",
    "intro": "{rules}，对战{bot}机器人，服务器 {url}",
    "committed": "对局 {game}：服务器已对它的种子做出承诺 {commitment}",
    "signed": "  （签名已用密钥 {key} 核对）",
    "seed_refused": "fairdice play：客户端种子被拒绝：{error}",
    "broke_protocol": "fairdice play：服务器违反了协议：{error}",
    "your_seed": "你的客户端种子：{seed}",
    "your_receipt": "你的凭据：{path}（对局结束后可运行：fairdice-verify --receipt {path} 对局记录）",
    "receipt_unwritten": "fairdice play：无法把凭据写入 {path}：{error}（对局照常进行；结束时会用内存中保存的凭据核对）",
    "receipts_unwritten": "fairdice play：无法把每一步的回执写入 {path}：{error}",
    "joining": "{rules}，服务器 {url}：你坐在第 {seat} 座（{name}）；全部座位 {seats}",
    "waiting_for": "等待 {name} 出手……",
    "warning": "警告：{warning}",
    "your_key": "你的玩家密钥：{key}（你的每一步都用它签名；保存在 {path}）",
    "key_unwritten": "fairdice play：无法把你的玩家密钥保存到 {path}：{error}（对局照常进行）",
    "type_help": "输入 ? 查看帮助，h 获取提示",
    "abandoned": "对局已放弃",
    "refused": "  被拒绝：{detail}",
    "allowed": "  可以用：{allowed}",
    "positions": "  位置是 0 到 4 的数字，例如 r 0 2 4",
    "one_category": "  请写一个计分项，例如 s full_house 或 s 葫芦",
    "ambiguous": "  不明确：{choices}",
    "scored": "  {box}：{points} 分{extras}，总分 {total}",
    "unknown_command": "  没有命令 {verb!r}；输入 ? 查看帮助",
    "joker": "百搭",
    "bonus": "奖励 +{bonus}",
    "upper_bonus": "上半区奖励 +{bonus}",
    "extras": "（{parts}）",
    "list_sep": "、",
    "rolloff": "掷骰定先后：{name} 先掷",
    "other_scored": "{name} 掷出 {throws}，在{box}记 {points} 分{extras}（总分 {total}）",
    "your_turn": "你的第 {turn} 回合：输入 r 掷骰",
    "turn_roll": "第 {turn} 回合，第 {roll}/3 掷",
    "rolls_left": "（还剩 {left} 次）",
    "score_now": "（现在必须记分）",
    "dice": "  骰子      ",
    "positions_row": "  位置      ",
    "options": "  可记：",
    "option_joker": " 百搭",
    "hint_head": "  提示（{engine} 引擎；数值：{kind}）",
    "kind_final": "最终总分期望",
    "kind_turn": "本回合期望得分",
    "hint_note_ev": "最优引擎不支持“先填上半区”的房规；数值是单回合 ev 启发式的本回合期望得分",
    "move_score": "在{box}记 {points} 分",
    "move_roll": "五颗全掷",
    "move_reroll": "五颗全部重掷",
    "move_keep": "保留 {keep}，重掷 {count} 颗",
    "best": "最好",
    "tied": "  （有 {count} 步同样好）",
    "more": "  （还有 {count} 种走法）",
    "card_upper_bonus": "上半区奖励",
    "card_yahtzee_bonus": "额外快艇奖励",
    "card_total": "总分",
    "draw": "平局",
    "wins": "{name}获胜",
    "you_win": "你赢了",
    "seed_revealed": "服务器种子已公开：{seed}",
    "verified": "对局记录已验证（由独立的验证程序，对照你的凭据和服务器对你每一步的回执）：签名、承诺、你的客户端种子、"
                "每一步都有回应、每一颗骰子、每一项得分、机器人的每一个决定",
    "not_verified": "对局记录未通过验证：",
    "problem": "  {problem}",
    "log_written": "对局记录已写入 {path}（可用 fairdice-verify {path} 检查）",
    "receipts_written": "{path} 中有 {count} 份每一步的回执（用 fairdice-verify --receipts {path} 对局记录 核对）",
    "coach_none": "教练：服务器没有给出分析（{detail}）；可以在本机运行 fairdice analyze 对局记录",
}

RULES_ZH = {"yacht": "快艇", "yatzy": "亚兹（Yatzy）", "classic13": "经典13"}
BOTS_ZH = {"greedy": "贪心", "ev": "期望值", "optimal": "最优"}
_BOXES_ZH = {
    "ones": "幺点", "twos": "两点", "threes": "三点", "fours": "四点", "fives": "五点", "sixes": "六点",
    "choice": "自选", "chance": "机会", "one_pair": "一对", "two_pairs": "两对", "three_of_a_kind": "三条",
    "four_of_a_kind": "四条", "full_house": "葫芦", "small_straight": "小顺", "large_straight": "大顺",
    "yacht": "快艇", "yatzy": "亚兹", "yahtzee": "快艇",
}
BOXES_ZH = {
    "yacht": _BOXES_ZH,
    "classic13": _BOXES_ZH,
    "yatzy": {**_BOXES_ZH, "ones": "一点", "small_straight": "小顺子", "large_straight": "大顺子"},
}
# the server's refusals a player meets in the terminal, by their stable code
PROBLEMS_ZH = {
    "not_your_turn": "还没轮到你", "not_playing": "这局现在不在进行中", "game_over": "这局已经结束了",
    "no_rolls_left": "三次已经掷完：请记分", "roll_first": "先掷骰，再记分", "illegal_category": "这手骰子不能记在那个计分项",
    "unknown_category": "计分表上没有这个计分项", "invalid_hold": "这些位置现在不能保留",
    "engine_warming_up": "最优引擎还在计算决策表（大约一分钟），请稍后再试", "busy": "服务器正忙，请稍后再试",
}


def display_width(text: str) -> int:
    """Columns a text takes in a terminal: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text: str, width: int, right: bool = False) -> str:
    """`text` padded with spaces to `width` terminal columns (on the left when `right`)."""
    fill = " " * max(0, width - display_width(text))
    return fill + text if right else text + fill


class Words:
    """The terminal game's words in one language: `words("key", field=...)`, and names of boxes and bots."""

    def __init__(self, lang: str = "en"):
        if lang not in LANGUAGES:
            raise ValueError(f"unknown language {lang!r}; languages: {', '.join(LANGUAGES)}")
        self.lang = lang
        self._messages = ZH if lang == "zh" else EN

    def __call__(self, message: str, /, **fields) -> str:
        return self._messages[message].format(**fields)

    @staticmethod
    def width(text: str) -> int:
        return display_width(text)

    def box(self, rules: str, category: str) -> str:
        """A box as the player knows it, in the game's language only: its id in English, its name in Chinese
        (`葫芦`; a Chinese name is also a command: `s 葫芦`)."""
        return self.short_box(rules, category)

    def short_box(self, rules: str, category: str) -> str:
        """A box in a sentence: its id in English, its name in Chinese."""
        if self.lang != "zh":
            return category
        return BOXES_ZH.get(rules, _BOXES_ZH).get(category, category)

    def category_named(self, rules: str, word: str, categories) -> str | None:
        """The box of `categories` a Chinese name stands for (`葫芦` → full_house), else None."""
        if self.lang != "zh":
            return None
        names = BOXES_ZH.get(rules, _BOXES_ZH)
        found = [cid for cid in categories if names.get(cid) == word]
        return found[0] if len(found) == 1 else None

    def rules(self, rules: str) -> str:
        return RULES_ZH.get(rules, rules) if self.lang == "zh" else rules

    def bot(self, bot: str) -> str:
        return BOTS_ZH.get(bot, bot) if self.lang == "zh" else bot

    def seat(self, seat: dict) -> str:
        """A seat's name; in Chinese a bot is called by its Chinese name (`期望值机器人`)."""
        if self.lang == "zh" and seat.get("type") == "bot" and seat.get("bot"):
            return f"{self.bot(seat['bot'])}机器人"
        return seat["name"]

    def problem(self, code: str, detail: str) -> str:
        """A refusal of the server in words: its own detail in English, by its code in Chinese."""
        if self.lang == "zh":
            return PROBLEMS_ZH.get(code, detail)
        return detail


ENGLISH = Words("en")
