"""How the page and the optimal tables go over the wire (issue 25 item 4, issue 23 item 1): gzip when the client
accepts it (and only then), `Vary: Accept-Encoding`, a strong ETag naming the content and 304 on revalidation,
Cache-Control per resource, a changed file seen at once; `GET /v1/tables/{rules}` serving SPEC §4.6's canonical
bytes, whose SHA-256 is the digest the optimal bot's hash in a log commits to.

Over a real HTTP server on a loopback port (the app in a thread: conftest's `app_url`), read with http.client so
that the bytes on the wire are seen as they are, not as a client library decoded them."""

from __future__ import annotations

import gzip
import hashlib
import http.client
import json
import os
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from api.assets import accepts_gzip, not_modified
from api.page import STATIC_DIR, StaticFiles
from fairdice.bots.optimal import table_format

pytestmark = pytest.mark.e2e

PAGE_TYPES = (".html", ".js", ".css", ".svg")


def fetch(base: str, path: str, headers: dict | None = None, method: str = "GET"):
    """(status, headers with lowercase names, the body as sent) of one request, on a connection of its own."""
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.request(method, path, headers={"Accept-Encoding": "identity", **(headers or {})})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def page_files() -> list[Path]:
    return sorted(p for p in STATIC_DIR.rglob("*") if p.is_file() and p.suffix in PAGE_TYPES)


# ------------------------------------------------------------------------------------------- the page

def test_every_page_file_is_gzipped_only_for_a_client_that_accepts_gzip(app_url):
    for path in page_files():
        url = "/" if path.name == "index.html" else "/ui/" + path.relative_to(STATIC_DIR).as_posix()
        on_disk = path.read_bytes()
        status, headers, body = fetch(app_url, url, {"Accept-Encoding": "gzip, deflate, br"})
        assert status == 200 and headers["vary"] == "Accept-Encoding", url
        assert headers.get("content-encoding") == "gzip" and gzip.decompress(body) == on_disk, url
        assert int(headers["content-length"]) == len(body)
        for refused in ("identity", "gzip;q=0, deflate", "br", ""):
            status, headers, body = fetch(app_url, url, {"Accept-Encoding": refused})
            assert status == 200 and "content-encoding" not in headers and body == on_disk, (url, refused)


def test_the_page_sends_at_most_half_its_bytes(app_url):
    """Every file of the page, as a browser that accepts gzip gets it, against the files themselves."""
    sent = plain = 0
    for path in page_files():
        url = "/" if path.name == "index.html" else "/ui/" + path.relative_to(STATIC_DIR).as_posix()
        sent += len(fetch(app_url, url, {"Accept-Encoding": "gzip"})[2])
        plain += path.stat().st_size
    assert sent <= plain / 2, (sent, plain)


def test_a_page_file_is_revalidated_by_its_etag(app_url):
    status, headers, body = fetch(app_url, "/ui/main.js", {"Accept-Encoding": "gzip"})
    etag = headers["etag"]
    digest = hashlib.sha256((STATIC_DIR / "main.js").read_bytes()).hexdigest()
    assert status == 200 and etag == f'"{digest[:32]}"'  # strong, and the content's: the same for either encoding
    assert fetch(app_url, "/ui/main.js")[1]["etag"] == etag
    assert headers["cache-control"] == "no-cache"  # stored, and revalidated before each use: a release is seen
    for asked in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        status, again, body = fetch(app_url, "/ui/main.js", {"If-None-Match": asked, "Accept-Encoding": "gzip"})
        assert status == 304 and body == b"" and again["etag"] == etag and again["vary"] == "Accept-Encoding"
    assert fetch(app_url, "/ui/main.js", {"If-None-Match": '"other"'})[0] == 200


def test_the_index_is_revalidated_and_carries_the_security_policy(app_url):
    status, headers, _ = fetch(app_url, "/", {"Accept-Encoding": "gzip"})
    assert status == 200 and headers["cache-control"] == "no-cache" and headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in headers["content-security-policy"] and headers["x-content-type-options"] == "nosniff"
    assert fetch(app_url, "/", {"If-None-Match": headers["etag"]})[0] == 304
    _, module, _ = fetch(app_url, "/ui/main.js")
    assert module["content-type"] == "text/javascript; charset=utf-8" and module["x-content-type-options"] == "nosniff"


def test_a_missing_or_outside_file_is_a_problem_document(app_url):
    for path in ("/ui/no-such-file.js", "/ui/../page.py", "/ui/%2e%2e/page.py", "/ui/i18n"):
        status, headers, body = fetch(app_url, path)
        assert status == 404 and headers["content-type"] == "application/problem+json", path
        assert json.loads(body)["status"] == 404


def test_a_file_changed_on_disk_is_served_changed(tmp_path):
    """Compressed once, but never stale: a new size or modification time is a new asset (a release, or an edit
    while the server runs)."""
    files = StaticFiles(tmp_path)
    (tmp_path / "a.js").write_text("export const a = 1;\n" * 50)
    first = files.get("a.js")
    assert files.get("a.js") is first  # kept: compressed once
    (tmp_path / "a.js").write_text("export const a = 2;\n" * 50)  # the same size...
    os.utime(tmp_path / "a.js", ns=(time.time_ns(), time.time_ns() + 10**9))  # ...a later modification time
    second = files.get("a.js")
    assert second.etag != first.etag and gzip.decompress(second.gzipped) == (tmp_path / "a.js").read_bytes()
    assert files.get("../a.js") is None and files.get("missing.js") is None


@pytest.mark.parametrize("header, gzip_ok", [
    ("gzip", True), ("GZIP", True), ("deflate, gzip;q=0.5", True), ("x-gzip", True), ("*", True), ("br, *;q=0.1", True),
    (None, False), ("", False), ("identity", False), ("br", False), ("gzip;q=0", False), ("gzip;q=0.0, *", False),
    ("*;q=0", False), ("gzip;q=zero", False),
])
def test_accept_encoding_is_read_as_rfc_9110_says(header, gzip_ok):
    assert accepts_gzip(header) is gzip_ok


def test_if_none_match_compares_weakly():
    assert not_modified('"a"', '"a"') and not_modified('"a"', 'W/"a"') and not_modified('"a"', '"b", "a"')
    assert not_modified('"a"', "*") and not not_modified('"a"', '"b"') and not not_modified('"a"', None)


# ------------------------------------------------------------------------------------------- the tables

@pytest.fixture(scope="module")
def yacht_table(app_url, optimal_table):
    optimal_table("yacht")
    return app_url


def test_a_table_is_its_canonical_bytes_gzipped_on_the_wire(yacht_table):
    status, headers, body = fetch(yacht_table, "/v1/tables/yacht", {"Accept-Encoding": "gzip"})
    assert status == 200 and headers["content-encoding"] == "gzip" and headers["vary"] == "Accept-Encoding"
    assert headers["content-type"] == "application/octet-stream"
    table = gzip.decompress(body)
    line = b"fairdice-optimal/1 yacht int64-le 4096x64x1 scale=2^29\n"  # SPEC §4.6, word for word
    assert table.startswith(line) and len(table) == len(line) + 4096 * 64 * 8
    assert int.from_bytes(table[len(line):len(line) + 8], "little", signed=True) == 102958080485  # V[0][0][0]
    digest = hashlib.sha256(table).hexdigest()
    assert headers["etag"] == f'"{digest}"' and headers["cache-control"] == "public, max-age=31536000, immutable"
    assert len(body) < len(table) / 3  # (580 KiB of 2 MiB)
    status, plain_headers, plain = fetch(yacht_table, "/v1/tables/yacht")
    assert status == 200 and "content-encoding" not in plain_headers and plain == table
    status, _, empty = fetch(yacht_table, "/v1/tables/yacht", {"If-None-Match": f'"{digest}"'})
    assert status == 304 and empty == b""
    status, head, empty = fetch(yacht_table, "/v1/tables/yacht", {"Accept-Encoding": "gzip"}, method="HEAD")
    assert status == 200 and empty == b"" and int(head["content-length"]) == len(body)


def test_the_tables_digest_is_what_the_optimal_bots_hash_commits_to(yacht_table):
    """A game against the optimal bot: the log's header names the bot by a hash of its identity, whose params are
    the tables' digests (SPEC §4.5, §8.6). With the digest of the bytes served, the hash is the log's."""
    created = fetch_json(yacht_table, "/v1/games", {"rules": "yacht", "seats": [
        {"type": "human", "name": "ann"}, {"type": "bot", "bot": "optimal"}]})
    status, _, log = fetch(yacht_table, f"/v1/games/{created['game_id']}/log")
    seat = json.loads(log)["header"]["seats"][1]["bot"]
    _, _, table = fetch(yacht_table, "/v1/tables/yacht", {"Accept-Encoding": "gzip"})
    digests = {rules: entry["sha256"] for rules, entry in table_format.manifest()["tables"].items()}
    digests["yacht"] = hashlib.sha256(gzip.decompress(table)).hexdigest()
    identity = {"id": "optimal", "version": seat["version"], "params": {"table_sha256": dict(sorted(digests.items()))}}
    text = json.dumps(identity, sort_keys=True, separators=(",", ":")).encode()
    assert seat["id"] == "optimal" and hashlib.sha256(text).hexdigest() == seat["hash"]


@pytest.mark.parametrize("rules", ["nope", "yacht-upper_first", "upper_first", "YACHT"])
def test_a_rule_set_without_a_table_is_404(yacht_table, rules):
    status, headers, body = fetch(yacht_table, f"/v1/tables/{rules}")
    doc = json.loads(body)
    assert status == 404 and headers["content-type"] == "application/problem+json"
    assert doc["code"] == "unknown_rules" and doc["allowed"] == ["yacht", "yatzy", "classic13"]


def fetch_json(base: str, path: str, body: dict) -> dict:
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        assert resp.status == 201, data
        return json.loads(data)
    finally:
        conn.close()
