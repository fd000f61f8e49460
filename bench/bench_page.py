"""What the game page costs a visitor: bytes of the first load and of a repeat load, and time to interactive.

    python bench/bench_page.py [--runs 3] [--no-browser] [--json]

The API (api.create_app, as `fairdice serve` builds it) is served on a loopback port by a thread of this process;
Debian's Chromium (Playwright) opens the page with an empty cache, waits until the lobby is shown (the page is
interactive: `#lobby:not([hidden])`), then loads it again from the same cache. Every response is counted as the
browser received it (Playwright's request sizes: headers plus the body as it came over the wire). Each load is
measured twice in the same run: as served, and with the same server answering every request uncompressed, as if
no client accepted gzip (`uncompressed()`: the page as it was sent before compression, the baseline; Chromium
does not let a page send `Accept-Encoding: identity` itself), alternating, `--runs` times each; the medians are
reported, and the time to interactive both on loopback and under an emulated slow phone network (`SLOW`:
1.6 Mbit/s down, 150 ms round trip, Chrome's "Slow 4G" preset).

Without Chromium (or with --no-browser) the first load's files are fetched with urllib (the page's files from
its index.html and the modules' imports, found by reading them), with and without gzip: bytes only.

Last, the optimal tables this machine has built (GET /v1/tables/{rules}, never built here): their bytes on the
wire with and without gzip, and the time of the first request (which reads, checks and compresses the table) and
of the next one.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import statistics
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # (support.api_helpers.app_server)

CHROMIUM = os.environ.get("FAIRDICE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
INTERACTIVE = "#lobby:not([hidden])"
SLOW = {"offline": False, "latency": 150, "downloadThroughput": 1_600_000 / 8, "uploadThroughput": 750_000 / 8}
IMPORT = re.compile(r"""(?:^|[;\s])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\s*\(?\s*["']([^"']+)["']""",
                    re.M)
ASSET = re.compile(r"""(?:src|href)="([^"#:]+)\"""")


@contextmanager
def uncompressed(on: bool):
    """While `on`, the server in this process answers as if no request accepted gzip (the baseline)."""
    from api import assets
    accepts = assets.accepts_gzip
    if on:
        assets.accepts_gzip = lambda header: False
    try:
        yield
    finally:
        assets.accepts_gzip = accepts


@contextmanager
def serving():
    """The API on 127.0.0.1:<free port>, in a thread (the tests' app_server): its base URL."""
    from api import create_app
    from support.api_helpers import app_server
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # (a line per request otherwise)
    with tempfile.TemporaryDirectory() as data:
        os.environ.setdefault("FAIRDICE_RATE_CREATE", "off")
        with app_server(create_app({"FAIRDICE_DATA_DIR": data})) as base:
            yield base


# ------------------------------------------------------------------------------------------- in Chromium

def browser_load(browser, base: str, network: dict | None) -> dict:
    """One visitor: the first load on an empty cache, then a repeat load; bytes, requests and times."""
    context = browser.new_context()
    page = context.new_page()
    if network is not None:
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", network)
    loads = {}
    for name in ("first", "repeat"):
        seen = []

        def finished(request, seen=seen):
            seen.append(request)

        page.on("requestfinished", finished)
        start = time.perf_counter()
        if name == "first":
            page.goto(base + "/")
        else:
            page.reload()
        page.wait_for_selector(INTERACTIVE, timeout=60_000)
        interactive = time.perf_counter() - start
        page.wait_for_load_state("networkidle")
        page.remove_listener("requestfinished", finished)
        sizes = [(r.url, r.sizes(), r.response()) for r in seen]
        encoded = [s for _, s, resp in sizes if resp is not None and resp.headers.get("content-encoding")]
        loads[name] = {
            "interactive_s": interactive,
            "requests": len(sizes),
            "bytes": sum(s["responseBodySize"] + s["responseHeadersSize"] for _, s, _ in sizes),
            "body_bytes": sum(s["responseBodySize"] for _, s, _ in sizes),
            "not_modified": sum(1 for _, _, resp in sizes if resp is not None and resp.status == 304),
            "compressed_responses": len(encoded),
        }
    context.close()
    return loads


def browser_runs(base: str, runs: int) -> dict:
    from playwright.sync_api import sync_playwright

    results = {(mode, net): [] for mode in ("identity", "gzip") for net in ("loopback", "slow")}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        browser_load(browser, base, None)  # warm-up: the server's first reads and compressions
        for _ in range(runs):
            for mode in ("identity", "gzip"):  # alternating: the two share the machine's moments
                for net, conditions in (("loopback", None), ("slow", SLOW)):
                    with uncompressed(mode == "identity"):
                        results[(mode, net)].append(browser_load(browser, base, conditions))
        browser.close()
    return {f"{mode}/{net}": summarise(loads) for (mode, net), loads in results.items()}


def summarise(loads: list[dict]) -> dict:
    """Medians over the runs of each figure of each load."""
    return {name: {key: statistics.median(run[name][key] for run in loads) for key in loads[0][name]}
            for name in ("first", "repeat")}


# ------------------------------------------------------------------------------------------- without a browser

def page_files(base: str) -> list[str]:
    """The page's own files as the first load fetches them: index.html's, then every module import, followed."""
    index = urllib.request.urlopen(base + "/").read().decode()
    todo = [f"{base}/{src.lstrip('./')}" for src in ASSET.findall(index)]
    seen = [base + "/"]
    while todo:
        url = todo.pop(0)
        if url in seen:
            continue
        seen.append(url)
        if url.endswith(".js"):
            text = urllib.request.urlopen(url).read().decode()
            for a, b in IMPORT.findall(text):
                spec = a or b
                if spec.startswith("."):
                    todo.append(urllib.request.urljoin(url, spec))
    return seen


def fetched_bytes(urls: list[str], encoding: str) -> int:
    total = 0
    for url in urls:
        with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept-Encoding": encoding})) as resp:
            total += len(resp.read())
    return total


def tables(base: str) -> dict:
    """Each built table's bytes with and without gzip, and the first and the next request's wall time."""
    from fairdice.adapters import table_cache
    out = {}
    for rules in ("yacht", "classic13", "yatzy"):
        if not table_cache.table_ready(rules):
            continue
        url = f"{base}/v1/tables/{rules}"
        times = []
        for _ in range(2):
            start = time.perf_counter()
            gz = fetched_bytes([url], "gzip")
            times.append(time.perf_counter() - start)
        out[rules] = {"identity_bytes": fetched_bytes([url], "identity"), "gzip_bytes": gz,
                      "first_request_s": times[0], "next_request_s": times[1]}
    return out


# ------------------------------------------------------------------------------------------- report

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    report = {}
    with serving() as base:
        urls = page_files(base)
        report["files"] = {"count": len(urls), "identity_bytes": fetched_bytes(urls, "identity"),
                           "gzip_bytes": fetched_bytes(urls, "gzip")}
        if not args.no_browser and Path(CHROMIUM).exists():
            report["chromium"] = browser_runs(base, args.runs)
        report["tables"] = tables(base)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    f = report["files"]
    print(f"page files (index.html and the modules it imports, followed): {f['count']} files, "
          f"{f['identity_bytes'] / 1024:.1f} KiB uncompressed, {f['gzip_bytes'] / 1024:.1f} KiB gzipped "
          f"({f['gzip_bytes'] / f['identity_bytes']:.1%})")
    for key, loads in report.get("chromium", {}).items():
        for name, m in loads.items():
            print(f"chromium {key:<17} {name:<6} load: {m['requests']:>3.0f} requests, {m['bytes'] / 1024:>7.1f} KiB "
                  f"(bodies {m['body_bytes'] / 1024:.1f} KiB; {m['compressed_responses']:.0f} compressed, "
                  f"{m['not_modified']:.0f} not modified), interactive after {m['interactive_s'] * 1000:.0f} ms")
    for rules, t in report["tables"].items():
        print(f"table {rules:<10} {t['identity_bytes'] / 2**20:5.2f} MiB, gzipped {t['gzip_bytes'] / 2**20:5.2f} MiB "
              f"({t['gzip_bytes'] / t['identity_bytes']:.1%}); first request {t['first_request_s'] * 1000:.0f} ms "
              f"(read, check, compress), next {t['next_request_s'] * 1000:.0f} ms")
    chromium = report.get("chromium")
    if chromium:
        before, after = chromium["identity/loopback"]["first"], chromium["gzip/loopback"]["first"]
        slow_before, slow_after = chromium["identity/slow"]["first"], chromium["gzip/slow"]["first"]
        print(f"first load: {after['bytes'] / before['bytes']:.1%} of the uncompressed bytes; interactive "
              f"{slow_after['interactive_s'] / slow_before['interactive_s']:.2f}x the time on a slow phone network, "
              f"{after['interactive_s'] / before['interactive_s']:.2f}x on loopback")
    return 0


if __name__ == "__main__":
    sys.exit(main())
