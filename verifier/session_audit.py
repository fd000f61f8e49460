"""The audit of session dice (SPEC §10.9): one chi-square test of uniformity per die size M, over every die of
that size in the session logs that verify, with M - 1 degrees of freedom; family alpha ALPHA over the sizes
tested (Bonferroni). A size with fewer than MIN_EXPECTED dice expected per face is not tested."""

from __future__ import annotations

import math

ALPHA = 0.001
MIN_EXPECTED = 5


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for a chi-square variable with `df` degrees of freedom: the regularized upper incomplete gamma
    function Q(df/2, x/2), by its series below a + 1 and its continued fraction above (Numerical Recipes §6.2)."""
    if x <= 0:
        return 1.0
    a, z = df / 2, x / 2
    log_front = a * math.log(z) - z - math.lgamma(a)
    if z < a + 1:  # P by the series, Q = 1 - P
        term = total = 1 / a
        n = a
        while abs(term) > abs(total) * 1e-15:
            n += 1
            term *= z / n
            total += term
        return max(0.0, 1 - total * math.exp(log_front))
    tiny = 1e-300  # Q by Lentz's continued fraction
    b = z + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        step = d * c
        h *= step
        if abs(step - 1) < 1e-15:
            break
    return math.exp(log_front) * h


def uniformity(faces: dict[int, list[int]]) -> list[dict]:
    """One test per die size, in order of size; `faces[M]` counts faces 1..M."""
    sizes = sorted(faces)
    tested = [m for m in sizes if sum(faces[m]) / m >= MIN_EXPECTED]
    alpha = ALPHA / len(tested) if tested else ALPHA
    tests = []
    for m in sizes:
        counts = faces[m]
        n = sum(counts)
        test = {"sides": m, "dice": n, "df": m - 1}
        if m not in tested:
            test.update(chi2=None, p=None, verdict="too few dice")
        else:
            e = n / m
            x = sum((c - e) ** 2 / e for c in counts)
            p = chi2_sf(x, m - 1)
            test.update(chi2=round(x, 4), p=p, verdict="uniform" if p >= alpha else "NOT UNIFORM")
        tests.append(test)
    return tests


def text_lines(tests: list[dict]) -> list[str]:
    if not tests:
        return []
    tested = sum(t["p"] is not None for t in tests)
    lines = [f"session dice: chi-square per die size, family alpha {ALPHA} over {tested} sizes tested (Bonferroni)",
             f"  {'sides':>6}{'dice':>10}{'df':>6}{'chi2':>12}{'p':>10}  verdict"]
    for t in tests:
        chi = "-" if t["chi2"] is None else f"{t['chi2']:.2f}"
        p = "-" if t["p"] is None else f"{t['p']:.4f}"
        lines.append(f"  {t['sides']:>6}{t['dice']:>10}{t['df']:>6}{chi:>12}{p:>10}  {t['verdict']}")
    return lines
