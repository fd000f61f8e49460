"""--html FILE: the audit as one self-contained page (inline CSS and SVG, nothing fetched)."""

from __future__ import annotations

from html import escape

CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1,h2{font-weight:600}table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;text-align:right;
border-bottom:1px solid #ddd}th:first-child,td:first-child{text-align:left}.bad{color:#b00;font-weight:600}
.ok{color:#070}.warn{color:#8a5a00}pre{white-space:pre-wrap}.charts{display:flex;flex-wrap:wrap;gap:12px}
figure{margin:0}figcaption{font-size:12px;text-align:center}svg text{font:10px sans-serif;fill:#444}"""


def bars(counts: list[int], labels: list[str], width=340, height=140) -> str:
    """A bar chart as inline SVG."""
    top = max(counts, default=0) or 1
    n = len(counts)
    bw = (width - 20) / max(n, 1)
    parts = [f'<svg width="{width}" height="{height + 14}" viewBox="0 0 {width} {height + 14}" role="img">']
    for i, c in enumerate(counts):
        h = c / top * (height - 10)
        x = 10 + i * bw
        parts.append(f'<rect x="{x + 1:.1f}" y="{height - h:.1f}" width="{max(bw - 2, 1):.1f}" height="{h:.1f}" '
                     f'fill="#4a78b5"><title>{escape(labels[i])}: {c}</title></rect>')
        if n <= 12 or i % max(1, n // 8) == 0:
            parts.append(f'<text x="{x + bw / 2:.1f}" y="{height + 11}" text-anchor="middle">{escape(labels[i])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def residuals(counts: list[int], width=220, height=120) -> str:
    """The faces as standardized residuals (observed - expected) / sqrt(expected), as inline SVG:
    bars up or down from 0, dashed lines at -2 and +2, the scale fixed at -4..4 (clipped beyond)."""
    n = sum(counts)
    e = n / 6
    mid, unit, bw = height / 2, (height / 2 - 6) / 4, (width - 30) / 6
    parts = [f'<svg width="{width}" height="{height + 14}" viewBox="0 0 {width} {height + 14}" role="img">',
             f'<line x1="22" x2="{width - 4}" y1="{mid}" y2="{mid}" stroke="#888"/>']
    for z in (-2, 2):
        y = mid - z * unit
        parts.append(f'<line x1="22" x2="{width - 4}" y1="{y:.1f}" y2="{y:.1f}" stroke="#c33" stroke-dasharray="4 3"/>'
                     f'<text x="2" y="{y + 3:.1f}">{z:+d}</text>')
    for f, c in enumerate(counts):
        z = max(-4.0, min(4.0, (c - e) / e ** 0.5)) if e else 0.0
        x = 24 + f * bw
        top, h = (mid - z * unit, z * unit) if z >= 0 else (mid, -z * unit)
        parts.append(f'<rect x="{x + 1:.1f}" y="{top:.1f}" width="{bw - 2:.1f}" height="{max(h, 0.5):.1f}" fill="#4a78b5">'
                     f'<title>face {f + 1}: {c} (expected {e:.1f})</title></rect>'
                     f'<text x="{x + bw / 2:.1f}" y="{height + 11}" text-anchor="middle">{f + 1}</text>')
    parts.append("</svg>")
    return "".join(parts)


def render(rep: dict, title: str = "fairdice audit", warnings: list[str] = (), problems: list[str] = ()) -> str:
    """The page. `warnings`: what the verdicts do not cover, as the text summary says it (origin not checked,
    public seeds, ...); `problems`: the result lines of the files that failed or are not logs. A page without
    findings is green only when it has neither."""
    t = rep["thresholds"]
    out = [f"<!doctype html><html lang=en><meta charset=utf-8><title>{escape(title)}</title><style>{CSS}</style>",
           f"<h1>{escape(title)}</h1>",
           f"<p>{rep['logs']} logs: {rep['verified']} verified, {rep['failed']} failed, {rep['not_logs']} not logs. "
           f"{rep['rolls']} rolls, {rep['fresh_dice']} freshly rolled dice.</p>"]
    findings = rep["findings"]
    if findings:
        out.append(f'<p class="bad">Findings: {escape("; ".join(findings))}</p>')
    else:
        out.append(f'<p class="{"warn" if warnings or problems else "ok"}">Findings: none'
                   + (" (but read the warnings and failures below)" if warnings or problems else "") + "</p>")
    if warnings:
        out.append('<h2 class="warn">Warnings</h2><ul class="warn">'
                   + "".join(f"<li>{escape(w)}</li>" for w in warnings) + "</ul>")
    if problems:
        out.append('<h2 class="bad">Failures and files that are not logs</h2><pre class="bad">'
                   + escape("\n".join(problems)) + "</pre>")
    out.append(f"<h2>Uniformity of the faces</h2><p>Chi-square, 5 degrees of freedom; family alpha {t['family_alpha']} "
               f"over {t['tests']} tests, Bonferroni: a test rejects when p &lt; {t['alpha_per_test']:.3g}. Only freshly "
               f"rolled dice count. Each chart shows, per face, (observed &minus; expected) / &radic;expected; "
               f"the dashed lines are at &plusmn;2.</p>")
    out.append("<table><tr><th>group</th><th>dice</th>" + "".join(f"<th>{f}</th>" for f in range(1, 7))
               + "<th>chi2</th><th>p</th><th>verdict</th></tr>")
    for u in rep["uniformity"]:
        cls = "bad" if u["verdict"] == "NOT UNIFORM" else ""
        out.append(f"<tr><td>{u['group']}</td><td>{u['dice']}</td>" + "".join(f"<td>{c}</td>" for c in u["counts"])
                   + f"<td>{'-' if u['chi2'] is None else u['chi2']}</td>"
                   + f"<td>{'-' if u['p'] is None else format(u['p'], '.4f')}</td><td class='{cls}'>{u['verdict']}</td></tr>")
    out.append("</table><div class=charts>")
    for u in rep["uniformity"]:
        if u["dice"]:
            out.append(f"<figure>{residuals(u['counts'])}"
                       f"<figcaption>{u['group']}</figcaption></figure>")
    out.append("</div><h2>Seed reuse</h2>")
    rows = [(what, r) for what, rs in rep["reuse"].items() for r in rs]
    if not rows:
        out.append("<p class=ok>Every commitment, server seed, (server seed, client seeds) pair and game id belongs to one game.</p>")
    for what, r in rows:
        out.append(f"<p class=bad>same {escape(what)}: " + escape(", ".join(g["game_id"] for g in r["games"])) + "</p>")
    out.append("<h2>Scores of finished games</h2><table><tr><th>rules</th><th>player</th><th>n</th><th>mean</th>"
               "<th>sd</th><th>min</th><th>p5</th><th>p25</th><th>p50</th><th>p75</th><th>p95</th><th>max</th></tr>")
    for s in rep["scores"]:
        q = s["quantiles"]
        out.append(f"<tr><td>{s['rules']}</td><td>{escape(s['player'])}</td><td>{s['n']}</td><td>{s['mean']:.2f}</td>"
                   f"<td>{s['sd']:.2f}</td><td>{s['min']}</td>" + "".join(f"<td>{q[k]:.1f}</td>" for k in q)
                   + f"<td>{s['max']}</td></tr>")
    out.append("</table><div class=charts>")
    for s in rep["scores"]:
        hist = s["histogram"]
        labels = [str(hist["start"] + i * hist["width"]) for i in range(len(hist["counts"]))]
        out.append(f"<figure>{bars(hist['counts'], labels, width=340, height=140)}"
                   f"<figcaption>{escape(s['rules'])} / {escape(s['player'])}: total score (bins of {hist['width']})"
                   "</figcaption></figure>")
    out.append("</div></html>\n")
    return "\n".join(out)
