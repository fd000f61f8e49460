"""--audit: statistics over many verified logs.

Thresholds are declared here, before any data is seen: the uniformity of the faces is one
family of FAMILY tests (overall, each of the 6 possible seats, each roll number 1..3, each die
position 0..4), each a chi-square test with 5 degrees of freedom, rejected at the family-wise
level ALPHA with the Bonferroni correction (p < ALPHA / len(FAMILY)). A test whose expected
count per face is below MIN_EXPECTED is not run (reported "too few dice") but stays in the
family. Only freshly rolled dice count: a held die is not a new draw. Roll-off dice are not
counted. Only logs that verify enter the statistics.

The house's bots are held to their published score distributions (SPEC §7.1, PUBLISHED below: the
mean and standard deviation of PUBLISHED_GAMES solitaire games per bot and rule set). A bot that
plays better than its policy (one that saw the future dice) or worse shows as a mean out of line:
for each (rule set, bot) with at least MIN_BOT_GAMES finished games, a two-sided z-test of the
mean against the published one, with the standard error of both samples, rejected at the
family-wise level ALPHA over the pairs tested (Bonferroni).

Abandons are counted by who abandoned (a seat, the server, the operator of a bots-only game), why, whether the
abandon is signed and who was ahead at the time (the best bot's total against the best human's). The server's
lever is to abandon the games its bot is losing, in its own name or in a player's name where no player signed the
abandon: among the unsigned abandons of games of bots and humans (the server's, a seat's in log version 1 or 2, a
version 3 seat's without a key; a version 3 abandon signed by its seat is the player's own and is left out), the
share where a human was ahead is tested, one-sided and exactly (binomial), against the share of all moments (each
box filled, in every verified game of bots and humans) at which a human was ahead; a p below ALPHA is a finding.

Two logs of one game id that both carry a valid final signature (by a trusted key) but differ are a finding,
log.equivocation: the server signed two histories of one game. Identical copies are only noted."""

from __future__ import annotations

import math
from collections import defaultdict

from . import session_audit

ALPHA = 0.001
FAMILY = ([("overall", None)] + [("seat", s) for s in range(6)] + [("roll", r) for r in (1, 2, 3)]
          + [("position", p) for p in range(5)])
ALPHA_PER_TEST = ALPHA / len(FAMILY)
MIN_EXPECTED = 5
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
# SPEC §7.1 (from `python bench/tiers.py`: 10,000 solitaire games per cell, 2026-11-29): (mean, sd)
PUBLISHED_GAMES = 10_000
PUBLISHED = {
    "greedy": {"yacht": (133.65, 34.49), "yatzy": (167.30, 39.20), "classic13": (195.77, 63.44)},
    "ev": {"yacht": (164.46, 32.37), "yatzy": (196.85, 37.69), "classic13": (216.74, 48.70)},
    "optimal": {"yacht": (192.04, 38.17), "yatzy": (248.38, 38.38), "classic13": (254.23, 59.53)},
}
MIN_BOT_GAMES = 10
MIN_UNSIGNED_ABANDONS = 5  # unsigned abandons of games of bots and humans before the selective-abandon test runs


def chi2_sf_df5(x: float) -> float:
    """P(X >= x) for a chi-square variable with 5 degrees of freedom (closed form for odd df)."""
    if x <= 0:
        return 1.0
    return math.erfc(math.sqrt(x / 2)) + math.sqrt(2 / math.pi) * math.exp(-x / 2) * (
        math.sqrt(x) + x ** 1.5 / 3)


def chi_square(counts: list[int]) -> float:
    n = sum(counts)
    e = n / 6
    return sum((c - e) ** 2 / e for c in counts)


def quantile(sorted_values: list[int], q: float) -> float:
    """Linear interpolation between closest ranks (the 'inclusive' method)."""
    h = (len(sorted_values) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (h - lo) * (sorted_values[hi] - sorted_values[lo])


def histogram(sorted_values: list[int]) -> dict:
    width = 5 if sorted_values[-1] - sorted_values[0] <= 150 else 10
    start = sorted_values[0] // width * width
    counts = [0] * ((sorted_values[-1] - start) // width + 1)
    for v in sorted_values:
        counts[(v - start) // width] += 1
    return {"start": start, "width": width, "counts": counts}


class Audit:
    """--audit: what many verified logs say together that no single log can (a loaded die, a bot better than its
    policy, a server abandoning the games it is losing, two signed histories of one game).  Results are added one
    at a time as the command line verifies them, so only tallies are kept (counts, totals, digests), never the
    logs; the tests and their thresholds are fixed in the module before any data is seen."""
    def __init__(self):
        self.logs = self.verified = self.failed = self.not_logs = 0
        self.status = defaultdict(int)
        self.rolls = self.dice = 0
        self.faces = {"seat": [[0] * 6 for _ in range(6)], "roll": [[0] * 6 for _ in range(3)],
                      "position": [[0] * 6 for _ in range(5)]}
        self.scores = defaultdict(list)  # (rules, player) -> totals
        self.seen = {"commitment": defaultdict(list), "server_seed": defaultdict(list),
                     "seed_pair": defaultdict(list)}
        self.abandons = defaultdict(int)  # (by, reason, signed, standing) -> games
        self.moments = defaultdict(int)  # standing -> boxes filled at which it held (games of bots and humans)
        # (game id, who signed: "trusted" for a key given, else the key) -> the logs with a valid final signature
        self.signed_logs = defaultdict(list)
        self.session_faces: dict[int, list[int]] = {}  # die size -> face counts, over the session logs (SPEC §10.9)

    def add(self, r) -> None:
        """Add one Result (verified with audit=True)."""
        self.logs += 1
        if r.error is not None:
            self.not_logs += 1
            return
        if r.kind == "session":
            self.add_session(r)
            return
        if r.final_digest is not None:  # signed by the server, whatever else it fails
            signer = "trusted" if r.trusted else r.final_key  # (without a trusted key: two logs by one key)
            self.signed_logs[(r.game_id, signer)].append({"file": r.file, "digest": r.final_digest})
        a = r.audit
        if a is not None:  # the log is well formed: its seeds count for reuse even if it fails
            game = {"game_id": r.game_id, "file": r.file}
            self.seen["commitment"][a["commitment"]].append(game)
            if a["server_seed"]:
                self.seen["server_seed"][a["server_seed"]].append(game)
                self.seen["seed_pair"][(a["server_seed"], tuple(a["client_seeds"]))].append(game)
        if not r.ok:
            self.failed += 1
            return
        self.verified += 1
        self.status[r.status] += 1
        self.rolls += a["rolls"]
        for kind, rows in a["faces"].items():
            for mine, theirs in zip(self.faces[kind], rows):
                for f in range(6):
                    mine[f] += theirs[f]
        for player, total in zip(a["players"], a.get("totals") or []):
            self.scores[(r.rules, player)].append(total)
        for who, n in (a.get("standings") or {}).items():
            self.moments[who] += n
        if a.get("abandon"):
            ab = a["abandon"]
            self.abandons[(ab["by"], ab["reason"] or "-", ab["signed"], ab["standing"] or "-")] += 1

    def add_session(self, r) -> None:
        """A session log (SPEC §10): its dice count per die size once it verifies."""
        if not r.ok:
            self.failed += 1
            return
        self.verified += 1
        self.status["session"] += 1
        for sides, counts in ((r.audit or {}).get("session_faces") or {}).items():
            mine = self.session_faces.setdefault(sides, [0] * sides)
            for f, c in enumerate(counts):
                mine[f] += c

    def abandon_test(self) -> dict:
        """Does the server abandon the games its bot is losing more often than its bot is losing at all? Every
        abandon that no player signed counts, whoever it names: the operator could have written it."""
        unsigned = [(by, standing, n) for (by, _, signed, standing), n in self.abandons.items()
                    if not signed and standing != "-"]  # ("-": a game without both bots and humans)
        n = sum(count for _, _, count in unsigned)
        k = sum(count for _, standing, count in unsigned if standing == "human ahead")
        by = defaultdict(int)
        for who, _, count in unsigned:
            by[who] += count
        moments = sum(self.moments.values())
        p0 = self.moments["human ahead"] / moments if moments else None
        test = {"unsigned_abandons": n, "by": dict(sorted(by.items())), "bot_behind": k,
                "baseline_bot_behind": None if p0 is None else round(p0, 4), "p": None,
                "verdict": "too few unsigned abandons"}
        if n >= MIN_UNSIGNED_ABANDONS and p0 is not None:
            test["p"] = sum(math.comb(n, j) * p0 ** j * (1 - p0) ** (n - j) for j in range(k, n + 1))
            test["verdict"] = "SELECTIVE" if test["p"] < ALPHA else "as often as the bot is behind"
        return test

    def uniformity(self) -> list[dict]:
        overall = [sum(row[f] for row in self.faces["seat"]) for f in range(6)]
        self.dice = sum(overall)
        tests = []
        for kind, index in FAMILY:
            counts = overall if kind == "overall" else self.faces[kind][index - (kind == "roll")]
            n = sum(counts)
            test = {"group": kind if index is None else f"{kind} {index}", "counts": counts, "dice": n}
            if n / 6 < MIN_EXPECTED:
                test.update(chi2=None, p=None, verdict="too few dice")
            else:
                x = chi_square(counts)
                p = chi2_sf_df5(x)
                test.update(chi2=round(x, 4), p=p, verdict="uniform" if p >= ALPHA_PER_TEST else "NOT UNIFORM")
            tests.append(test)
        return tests

    def reuse(self) -> tuple[dict, list]:
        """Seeds, commitments or game ids shared by different games; games present in several files."""
        found = {}
        for what, seen in self.seen.items():
            found[what] = []
            for value, games in seen.items():
                if len({g["game_id"] for g in games}) > 1:
                    shown = value if isinstance(value, str) else {"server_seed": value[0], "client_seeds": list(value[1])}
                    found[what].append({"value": shown, "games": games})
        files_of, commitments_of = defaultdict(list), defaultdict(set)
        for commitment, games in self.seen["commitment"].items():
            for g in games:
                files_of[g["game_id"]].append(g)
                commitments_of[g["game_id"]].add(commitment)
        # a game id is unique per game (§2.3): one id with two commitments is two games
        found["game_id"] = [{"value": gid, "games": files_of[gid]} for gid, cs in sorted(commitments_of.items())
                            if len(cs) > 1]
        duplicates = [{"game_id": gid, "files": [g["file"] for g in games]} for gid, games in sorted(files_of.items())
                      if len(games) > 1 and len(commitments_of[gid]) == 1]
        return found, duplicates

    def equivocation(self) -> list[dict]:
        """log.equivocation: the game ids of which the server signed logs that differ (their signed bytes): by trusted
        keys, or without any, by one key."""
        return [{"game_id": gid, "histories": len({c["digest"] for c in copies}), "files": [c["file"] for c in copies]}
                for (gid, _), copies in sorted(self.signed_logs.items()) if len({c["digest"] for c in copies}) > 1]

    def score_table(self) -> list[dict]:
        rows = []
        for (rules, player), totals in sorted(self.scores.items()):
            v = sorted(totals)
            n = len(v)
            mean = sum(v) / n
            sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1)) if n > 1 else 0.0
            rows.append({"rules": rules, "player": player, "n": n, "mean": round(mean, 3), "sd": round(sd, 3),
                         "min": v[0], "max": v[-1],
                         "quantiles": {f"p{round(q * 100)}": quantile(v, q) for q in QUANTILES},
                         "histogram": histogram(v)})
        return rows

    def bot_tests(self) -> list[dict]:
        """Each bot's mean score against its published one (see the module's docstring)."""
        tests = []
        for (rules, player), totals in sorted(self.scores.items()):
            published = PUBLISHED.get(player, {}).get(rules)
            if published is None or len(totals) < MIN_BOT_GAMES:
                continue
            n, (mu, sigma) = len(totals), published
            mean = sum(totals) / n
            z = (mean - mu) / (sigma * math.sqrt(1 / n + 1 / PUBLISHED_GAMES))
            tests.append({"rules": rules, "bot": player, "n": n, "mean": round(mean, 3), "published_mean": mu,
                          "published_sd": sigma, "z": round(z, 3), "p": math.erfc(abs(z) / math.sqrt(2))})
        for t in tests:
            t["verdict"] = "as published" if t["p"] >= ALPHA / len(tests) else "DEVIATES"
        return tests

    def report(self) -> dict:
        tests = self.uniformity()
        bots = self.bot_tests()
        abandons = self.abandon_test()
        reuse, duplicates = self.reuse()
        equivocation = self.equivocation()
        equivocating = {e["game_id"] for e in equivocation}
        duplicates = [d for d in duplicates if d["game_id"] not in equivocating]  # (copies that differ: a finding)
        sessions = session_audit.uniformity(self.session_faces)
        return {
            "session_uniformity": sessions,
            "thresholds": {"family_alpha": ALPHA, "tests": len(FAMILY), "alpha_per_test": ALPHA_PER_TEST,
                           "correction": "Bonferroni", "min_expected_per_face": MIN_EXPECTED},
            "logs": self.logs, "verified": self.verified, "failed": self.failed, "not_logs": self.not_logs,
            "games": dict(self.status), "rolls": self.rolls, "fresh_dice": self.dice,
            "uniformity": tests, "reuse": reuse, "duplicate_files": duplicates, "equivocation": equivocation,
            "scores": self.score_table(), "bots": bots,
            "abandons": {"games": [{"by": by, "reason": reason, "signed": signed, "standing": standing,
                                    "games": n}
                                   for (by, reason, signed, standing), n in sorted(self.abandons.items())],
                         "selective": abandons},
            "findings": self.findings(tests, reuse, bots, equivocation) + [
                f"session dice of {t['sides']} faces not uniform (p = {t['p']:.3g})" for t in sessions
                if t["verdict"] == "NOT UNIFORM"] + (
                [f"{abandons['bot_behind']} of the {abandons['unsigned_abandons']} unsigned abandons of games of bots "
                 f"and humans ({unsigned_abandons_named(abandons['by'])}) came while a human was ahead, against a "
                 f"share of {abandons['baseline_bot_behind']} of all moments (p = {abandons['p']:.3g}): the server "
                 "abandons the games its bot is losing"]
                if abandons["verdict"] == "SELECTIVE" else []),
        }

    @staticmethod
    def findings(tests, reuse, bots, equivocation) -> list[str]:
        out = [f"faces not uniform: {t['group']} (p = {t['p']:.3g})" for t in tests if t["verdict"] == "NOT UNIFORM"]
        out += [f"the {b['bot']} bot's scores in {b['rules']} deviate from its published distribution: mean "
                f"{b['mean']:.2f} over {b['n']} games against {b['published_mean']:.2f} (sd {b['published_sd']:.2f}; "
                f"z = {b['z']:.1f}, p = {b['p']:.3g})" for b in bots if b["verdict"] == "DEVIATES"]
        out += [f"the same {what.replace('_', ' ')} in {len(r['games'])} logs: "
                + ", ".join(f"{g['game_id']} ({g['file']})" for g in r["games"]) for what, rows in reuse.items() for r in rows]
        out += [f"log.equivocation: game {e['game_id']}: {e['histories']} different logs carry a valid final signature "
                "by a trusted key (the server signed two histories of one game): " + ", ".join(e["files"])
                for e in equivocation]
        return out


def unsigned_abandons_named(by: dict) -> str:
    """Whose names the unsigned abandons were written in, in words."""
    words = {"server": "the server's own", "seat": "in a player's name, unsigned", "operator": "the operator's"}
    return ", ".join(f"{n} {words.get(who, who)}" for who, n in by.items()) or "none"


def text_report(rep: dict) -> str:
    t = rep["thresholds"]
    lines = [
        f"audit: {rep['logs']} logs, {rep['verified']} verified ("
        + ", ".join(f"{n} {s}" for s, n in sorted(rep["games"].items())) + f"), {rep['failed']} failed, "
        f"{rep['not_logs']} not logs",
        f"rolls: {rep['rolls']}, freshly rolled dice: {rep['fresh_dice']}",
        f"uniformity of faces: chi-square, 5 df, family alpha {t['family_alpha']} over {t['tests']} tests "
        f"(Bonferroni: reject when p < {t['alpha_per_test']:.3g})",
        f"  {'group':<12}{'dice':>9}  {'1':>7}{'2':>7}{'3':>7}{'4':>7}{'5':>7}{'6':>7}  {'chi2':>8}  {'p':>9}  verdict",
    ]
    for u in rep["uniformity"]:
        chi = "-" if u["chi2"] is None else f"{u['chi2']:.2f}"
        p = "-" if u["p"] is None else f"{u['p']:.4f}"
        lines.append(f"  {u['group']:<12}{u['dice']:>9}  " + "".join(f"{c:>7}" for c in u["counts"])
                     + f"  {chi:>8}  {p:>9}  {u['verdict']}")
    lines.append("seed reuse: " + ("none (every commitment, server seed, seed pair and game id belongs to one game)"
                                   if not any(rep["reuse"].values()) else "FOUND"))
    for what, rows in rep["reuse"].items():
        for r in rows:
            lines.append(f"  same {what}: " + ", ".join(f"{g['game_id']} ({g['file']})" for g in r["games"]))
    for d in rep["duplicate_files"]:
        lines.append(f"  note: game {d['game_id']} appears in {len(d['files'])} files: " + ", ".join(d["files"]))
    lines.append("equivocation: " + ("none (no game has two different logs signed by the server)"
                                     if not rep["equivocation"] else "FOUND (log.equivocation)"))
    for e in rep["equivocation"]:
        lines.append(f"  game {e['game_id']}: {e['histories']} different signed logs: " + ", ".join(e["files"]))
    lines.append("scores of finished games:")
    lines.append(f"  {'rules':<10}{'player':<8}{'n':>7}{'mean':>9}{'sd':>8}{'min':>6}{'p5':>7}{'p25':>7}"
                 f"{'p50':>7}{'p75':>7}{'p95':>7}{'max':>6}")
    for s in rep["scores"]:
        q = s["quantiles"]
        lines.append(f"  {s['rules']:<10}{s['player']:<8}{s['n']:>7}{s['mean']:>9.2f}{s['sd']:>8.2f}{s['min']:>6}"
                     + "".join(f"{q[k]:>7.1f}" for k in ("p5", "p25", "p50", "p75", "p95")) + f"{s['max']:>6}")
    if rep["bots"]:
        lines.append(f"bots against their published scores: two-sided z-test of the mean, family alpha {ALPHA} "
                     f"over {len(rep['bots'])} tests (Bonferroni)")
        lines.append(f"  {'rules':<10}{'bot':<10}{'n':>7}{'mean':>9}{'published':>11}{'z':>8}{'p':>11}  verdict")
        for b in rep["bots"]:
            lines.append(f"  {b['rules']:<10}{b['bot']:<10}{b['n']:>7}{b['mean']:>9.2f}{b['published_mean']:>11.2f}"
                         f"{b['z']:>8.2f}{b['p']:>11.3g}  {b['verdict']}")
    ab = rep["abandons"]
    if ab["games"]:
        lines.append("abandoned games, by who abandoned, why, whether its player signed it, and who was ahead (bots "
                     "against humans):")
        for row in ab["games"]:
            signed = "signed" if row["signed"] else "unsigned"
            lines.append(f"  {row['by']:<9}{row['reason']:<9}{signed:<10}{row['standing']:<13}{row['games']:>7}")
        s = ab["selective"]
        lines.append(f"  unsigned abandons (the server's, and those in a player's name that no player signed: "
                     f"{unsigned_abandons_named(s['by'])}) with a human ahead: {s['bot_behind']} of "
                     f"{s['unsigned_abandons']} (a human is ahead at {s['baseline_bot_behind']} of all moments): "
                     f"{s['verdict']}" + (f" (p = {s['p']:.3g})" if s["p"] is not None else ""))
    lines += session_audit.text_lines(rep.get("session_uniformity", []))
    lines.append("findings: " + ("; ".join(rep["findings"]) if rep["findings"] else "none"))
    return "\n".join(lines)
