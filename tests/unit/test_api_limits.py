"""Rate limits and the quota of unfinished games (issue 14): who the client is, which limit a request counts
against, 429 with Retry-After past it, counts shared between processes.

Expected numbers come from the definition of a rate (api/config.py): `N/min` allows a burst of N, then one
every 60/N seconds; Retry-After is the wait rounded up to whole seconds.
"""

from __future__ import annotations

import hashlib
import ipaddress
import time

import pytest
import requests

from api.config import parse_rate
from api.limits import Limiter, RateLimitedError, client_address, trusted_networks
from support.api_helpers import ServeProcess, openapi_checker

SOLO = {"rules": "yacht", "seats": [{"type": "human", "name": "ann"}]}
HOME = "203.0.113.5"  # the test client's address (TEST-NET-3), unless a test says otherwise


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def assert_limited(resp, code: str = "rate_limited", retry_after: int | None = None) -> dict:
    assert resp.status_code == 429, resp.get_data(as_text=True)
    assert resp.mimetype == "application/problem+json"
    body = resp.get_json()
    assert body["status"] == 429 and body["code"] == code and body["type"] == f"urn:fairdice:problem:{code}"
    if retry_after is not None:
        assert resp.headers["Retry-After"] == str(retry_after)
        assert body["retry_after"] == retry_after
    return body


class Clock:
    """Seconds since the epoch, moved by the test."""

    def __init__(self, start: float = 1_700_000_000.0):
        self.now = start

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def limited(make_app):
    """`limited(**settings)`: (test client, clock) of an app with these FAIRDICE_* settings (RATE_CREATE="3/min"
    ...; every other limit off), its rate limits on an injected clock."""

    def make(**settings):
        app = make_app({f"FAIRDICE_{name}": value for name, value in settings.items()})
        clock = Clock()
        app.extensions["fairdice_limits"].clock = clock
        client = app.test_client()
        client.environ_base["REMOTE_ADDR"] = HOME
        return client, clock

    return make


def create(client, **environ):
    return client.post("/v1/games", json=SOLO, environ_overrides=environ)


def started_game(client) -> tuple[str, dict]:
    created = create(client)
    assert created.status_code == 201, created.get_json()
    gid, auth = created.get_json()["game_id"], bearer(created.get_json()["tokens"][0]["token"])
    return gid, auth


# --- who the client is ---------------------------------------------------------------------------------------

PROXIES = trusted_networks(["10.0.0.0/8", "2001:db8:ffff::1"])


@pytest.mark.parametrize("peer, forwarded, client", [
    ("198.51.100.7", [], "198.51.100.7"),
    ("198.51.100.7", ["192.0.2.1"], "198.51.100.7"),            # not a proxy of ours: its header is the client's
    ("10.1.2.3", [], "10.1.2.3"),                                # a proxy's own request
    ("10.1.2.3", ["192.0.2.1"], "192.0.2.1"),
    ("10.1.2.3", ["6.6.6.6, 192.0.2.1"], "192.0.2.1"),           # what the client wrote itself is not believed
    ("10.1.2.3", ["6.6.6.6, 192.0.2.1, 10.9.9.9"], "192.0.2.1"),  # two proxies of ours, both skipped
    ("10.1.2.3", ["6.6.6.6", "192.0.2.1, 10.9.9.9"], "192.0.2.1"),  # several headers are one list, in order
    ("10.1.2.3", ["10.7.7.7, 10.9.9.9"], "10.7.7.7"),            # every hop ours: the farthest one
    ("10.1.2.3", ["192.0.2.1, not-an-address"], "10.1.2.3"),     # garbage stops the walk at the proxy that wrote it
    ("10.1.2.3", ["192.0.2.1:4711"], "192.0.2.1"),              # a port is not part of the client
    ("10.1.2.3", ["[2001:db8:1:2::99]:443"], "2001:db8:1:2::/64"),
    ("2001:db8:ffff::1", ["192.0.2.1"], "192.0.2.1"),
    ("2001:db8:ffff::2", ["192.0.2.1"], "2001:db8:ffff::/64"),   # only ::1 is trusted
    ("2001:db8:1:2:aaaa::1", [], "2001:db8:1:2::/64"),           # an IPv6 client is its /64
    ("::ffff:10.1.2.3", ["192.0.2.1"], "192.0.2.1"),            # IPv4-mapped: the IPv4 proxy it is
    ("::ffff:198.51.100.7", [], "198.51.100.7"),
])
def test_the_client_is_the_first_untrusted_hop_from_the_right(peer, forwarded, client):
    assert client_address(peer, forwarded, PROXIES) == client


def test_without_trusted_proxies_x_forwarded_for_is_never_read():
    assert client_address("10.1.2.3", ["192.0.2.1"], ()) == "10.1.2.3"


def test_two_addresses_of_one_ipv6_network_are_one_client():
    a, b = (ipaddress.ip_address("2001:db8:5:6::1"), ipaddress.ip_address("2001:db8:5:6:ffff:ffff:ffff:ffff"))
    assert client_address(str(a), [], ()) == client_address(str(b), [], ()) == "2001:db8:5:6::/64"
    assert client_address("2001:db8:5:7::1", [], ()) != client_address(str(a), [], ())


def test_a_trusted_proxy_setting_that_is_not_an_address_is_refused():
    assert [str(n) for n in trusted_networks([" 10.0.0.0/8", "192.0.2.1", "::1"])] == ["10.0.0.0/8", "192.0.2.1/32",
                                                                                    "::1/128"]
    with pytest.raises(ValueError, match="FAIRDICE_TRUSTED_PROXIES: 'proxy.example'"):
        trusted_networks(["10.0.0.0/8", "proxy.example"])


# --- the policy: which key, which rate -------------------------------------------------------------------------

class CountingStore:
    """A store's rate_hits that records each hit (and each transaction in `batches`) and answers `wait`
    (a plain float, which names no key: the refusal then names the first limit counted)."""

    def __init__(self, wait: float = 0.0):
        self.calls, self.batches, self.wait = [], [], wait

    def rate_hits(self, hits, now=None):
        self.batches.append(len(hits))
        self.calls.extend((key, interval, burst, now) for key, interval, burst in hits)
        return self.wait


def limiter(store, create="30/min", moves="1200/min", token="300/min", clock=None) -> Limiter:
    return Limiter(store, parse_rate(create), parse_rate(moves), parse_rate(token), clock=clock)


def test_each_limit_has_its_key_and_its_rate():
    store = CountingStore()
    policy = limiter(store, clock=lambda: 1234.5)
    policy.check_create("192.0.2.1")
    policy.check_move("192.0.2.1", "seat-token")
    token_key = "token:" + hashlib.sha256(b"seat-token").hexdigest()
    # Rate(N, period) is a GCRA of interval period/N and burst N
    assert store.calls == [("create:192.0.2.1", 2.0, 30, 1234.5), (token_key, 0.2, 300, 1234.5),
                           ("moves:192.0.2.1", 0.05, 1200, 1234.5)]
    assert store.batches == [1, 2]  # a move's two limits are counted in one transaction


def test_without_an_injected_clock_the_store_keeps_time():
    store = CountingStore()
    limiter(store).check_create("192.0.2.1")
    assert store.calls == [("create:192.0.2.1", 2.0, 30, None)]


def test_a_limit_that_is_off_costs_nothing():
    store = CountingStore(wait=99.0)
    policy = limiter(store, create="off", moves="off", token="off")
    policy.check_create("192.0.2.1")
    policy.check_move("192.0.2.1", "t")
    assert store.calls == []


@pytest.mark.parametrize("wait, retry_after", [(0.001, 1), (0.999, 1), (1.0, 1), (1.01, 2), (19.2, 20)])
def test_retry_after_is_the_wait_rounded_up(wait, retry_after):
    with pytest.raises(RateLimitedError) as refused:
        limiter(CountingStore(wait)).check_create("192.0.2.1")
    assert refused.value.status == 429 and refused.value.code == "rate_limited"
    assert refused.value.headers == {"Retry-After": str(retry_after)}
    assert refused.value.extra == {"limit": "create", "retry_after": retry_after}


# --- through the app, on the real store ------------------------------------------------------------------------

def test_a_burst_of_creations_is_throttled(limited):
    client, clock = limited(RATE_CREATE="3/min")
    for _ in range(3):  # the burst
        assert create(client).status_code == 201
    body = assert_limited(create(client), retry_after=20)  # then one every 60/3 s
    assert body["limit"] == "create" and "3/min" in body["detail"]
    clock.now += 19
    assert_limited(create(client), retry_after=1)
    clock.now += 1
    assert create(client).status_code == 201
    assert_limited(create(client), retry_after=20)
    assert create(client, REMOTE_ADDR="198.51.100.9").status_code == 201  # another client has its own count


def test_the_store_clock_throttles_in_real_time(limited):
    client, clock = limited(RATE_CREATE="1/s")
    client.application.extensions["fairdice_limits"].clock = None  # the store's own clock
    assert create(client).status_code == 201
    assert_limited(create(client), retry_after=1)  # well within the second
    time.sleep(1.0)
    assert create(client).status_code == 201


def test_a_refused_creation_makes_no_game(limited):
    client, clock = limited(RATE_CREATE="1/h")
    assert create(client).status_code == 201
    store = client.application.extensions["fairdice"].store
    before = store.stats()["games"]
    assert_limited(create(client), retry_after=3600)
    assert store.stats()["games"] == before


def test_moves_are_limited_per_token(limited):
    client, clock = limited(RATE_MOVES_TOKEN="3/min")
    gid, auth = started_game(client)
    assert client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "s"}, headers=auth).status_code == 200
    assert client.post(f"/v1/games/{gid}/roll", json={}, headers=auth).status_code == 200
    assert client.post(f"/v1/games/{gid}/roll", json={}, headers=auth).status_code == 200
    count = client.get(f"/v1/games/{gid}").get_json()["event_count"]
    body = assert_limited(client.post(f"/v1/games/{gid}/roll", json={}, headers=auth), retry_after=20)
    assert body["limit"] == "token"
    assert client.get(f"/v1/games/{gid}").get_json()["event_count"] == count  # nothing was done
    other, other_auth = started_game(client)  # the same client, another seat's token
    assert client.post(f"/v1/games/{other}/client-seed", json={"client_seed": "s"},
                       headers=other_auth).status_code == 200
    clock.now += 20
    assert client.post(f"/v1/games/{gid}/roll", json={}, headers=auth).status_code == 200


def test_moves_are_limited_per_client_across_its_games(limited):
    client, clock = limited(RATE_MOVES_CLIENT="3/min")
    games = [started_game(client) for _ in range(2)]
    for gid, auth in games:
        assert client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "s"}, headers=auth).status_code == 200
    gid, auth = games[0]
    assert client.post(f"/v1/games/{gid}/roll", json={}, headers=auth).status_code == 200
    gid, auth = games[1]
    body = assert_limited(client.post(f"/v1/games/{gid}/roll", json={}, headers=auth), retry_after=20)
    assert body["limit"] == "moves"
    assert client.post(f"/v1/games/{gid}/roll", json={}, headers=auth,
                       environ_overrides={"REMOTE_ADDR": "198.51.100.9"}).status_code == 200


def test_a_move_refused_by_one_limit_counts_against_neither(limited):
    """The token and client limits are counted together: refused by the client's, the move leaves the token its
    slot (2 per minute: two more moves with it from elsewhere go through, a third does not)."""
    client, clock = limited(RATE_MOVES_CLIENT="2/min", RATE_MOVES_TOKEN="2/min")
    (first, first_auth), (second, second_auth) = started_game(client), started_game(client)
    seed = {"client_seed": "s"}
    assert client.post(f"/v1/games/{first}/client-seed", json=seed, headers=first_auth).status_code == 200
    assert client.post(f"/v1/games/{first}/roll", json={}, headers=first_auth).status_code == 200
    body = assert_limited(client.post(f"/v1/games/{second}/client-seed", json=seed, headers=second_auth),
                          retry_after=30)
    assert body["limit"] == "moves"
    moves = [("/client-seed", seed, "198.51.100.9"), ("/roll", {}, "198.51.100.9"),
             ("/roll", {}, "203.0.113.7")]
    answers = [client.post(f"/v1/games/{second}{path}", json=doc, headers=second_auth,
                           environ_overrides={"REMOTE_ADDR": peer}) for path, doc, peer in moves]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert answers[2].get_json()["limit"] == "token"


def test_the_limiter_is_off_only_when_every_limit_is():
    policy = limiter(CountingStore(), create="off", moves="off", token="off")
    assert policy.off
    assert not limiter(CountingStore(), create="off", moves="off").off


def test_every_move_counts(limited):
    """client-seed, roll, score and abandon each count one move; reading does not."""
    client, clock = limited(RATE_MOVES_CLIENT="4/min")
    gid, auth = started_game(client)
    for _ in range(3):
        assert client.get(f"/v1/games/{gid}").status_code == 200
    assert client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "s"}, headers=auth).status_code == 200
    assert client.post(f"/v1/games/{gid}/roll", json={}, headers=auth).status_code == 200
    assert client.post(f"/v1/games/{gid}/score", json={"category": "choice"}, headers=auth).status_code == 200
    assert client.post(f"/v1/games/{gid}/abandon", headers=auth).status_code == 200
    assert_limited(client.post(f"/v1/games/{gid}/abandon", headers=auth))
    assert client.get(f"/v1/games/{gid}/log").status_code == 200


def test_a_move_without_a_token_is_a_401_and_not_counted(limited):
    client, clock = limited(RATE_MOVES_CLIENT="1/min")
    gid, auth = started_game(client)
    for _ in range(3):
        resp = client.post(f"/v1/games/{gid}/roll", json={})
        assert resp.status_code == 401 and resp.get_json()["code"] == "missing_token"
    assert client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "s"}, headers=auth).status_code == 200
    assert_limited(client.post(f"/v1/games/{gid}/roll", json={}, headers=auth))
    assert client.post(f"/v1/games/{gid}/roll", json={}).status_code == 401  # past the limit too


def test_x_forwarded_for_from_an_untrusted_peer_is_ignored(limited):
    client, clock = limited(RATE_CREATE="1/min")
    assert create(client, HTTP_X_FORWARDED_FOR="198.51.100.1").status_code == 201
    assert_limited(create(client, HTTP_X_FORWARDED_FOR="198.51.100.2"))  # a new header is not a new client


def test_x_forwarded_for_from_a_trusted_proxy_names_the_client(limited):
    client, clock = limited(RATE_CREATE="1/min", TRUSTED_PROXIES="10.0.0.0/8")
    proxy = {"REMOTE_ADDR": "10.1.2.3"}
    assert create(client, **proxy, HTTP_X_FORWARDED_FOR="198.51.100.1").status_code == 201
    assert create(client, **proxy, HTTP_X_FORWARDED_FOR="198.51.100.2").status_code == 201
    assert_limited(create(client, **proxy, HTTP_X_FORWARDED_FOR="198.51.100.1"))
    # what the client put in front of the header itself changes nothing
    assert_limited(create(client, **proxy, HTTP_X_FORWARDED_FOR="6.6.6.6, 198.51.100.2"))
    # through two of our proxies, the same client
    assert create(client, **proxy, HTTP_X_FORWARDED_FOR="198.51.100.3, 10.9.9.9").status_code == 201
    assert_limited(create(client, **proxy, HTTP_X_FORWARDED_FOR="198.51.100.3"))
    # a client that reaches the server directly is counted by its own address, whatever it claims
    assert create(client, HTTP_X_FORWARDED_FOR="198.51.100.4").status_code == 201
    assert_limited(create(client, HTTP_X_FORWARDED_FOR="198.51.100.5"))


def test_the_game_remembers_who_created_it(limited):
    client, clock = limited(TRUSTED_PROXIES="10.0.0.0/8")
    resp = create(client, REMOTE_ADDR="10.1.2.3", HTTP_X_FORWARDED_FOR="198.51.100.1")
    store = client.application.extensions["fairdice"].store
    assert store.snapshot(resp.get_json()["game_id"]).record.client == "198.51.100.1"


def test_refusals_are_documented_problems(limited):
    client, clock = limited(RATE_CREATE="1/min", RATE_MOVES_TOKEN="1/min")
    check = openapi_checker(client)
    gid, auth = started_game(client)
    refused = create(client)
    check("Problem", assert_limited(refused))
    assert client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "s"}, headers=auth).status_code == 200
    check("Problem", assert_limited(client.post(f"/v1/games/{gid}/roll", json={}, headers=auth)))


# --- the quota of unfinished games -----------------------------------------------------------------------------

def test_a_client_may_have_only_so_many_unfinished_games(limited):
    client, clock = limited(MAX_UNFINISHED="2")
    games = [started_game(client) for _ in range(2)]
    body = assert_limited(create(client), code="too_many_unfinished_games")
    # finishing a game helps at once; waiting helps once the server abandons the longest-idle one (issue 21)
    assert 86390 <= int(create(client).headers["Retry-After"]) <= 86400
    assert body["max_unfinished"] == 2
    assert create(client, REMOTE_ADDR="198.51.100.9").status_code == 201  # another client's games are its own
    gid, auth = games[0]
    assert client.post(f"/v1/games/{gid}/abandon", headers=auth).status_code == 200
    assert create(client).status_code == 201
    assert_limited(create(client), code="too_many_unfinished_games")


def test_a_quota_of_zero_is_no_quota(limited):
    client, clock = limited(MAX_UNFINISHED="0")
    for _ in range(25):  # more than the default quota
        assert create(client).status_code == 201


# --- shared between processes ------------------------------------------------------------------------------------

@pytest.mark.e2e
@pytest.mark.slow  # two servers start: about 6 s
def test_two_servers_on_one_database_share_the_count(tmp_path):
    """Two `fairdice serve` on one SQLite database: what one server counted, the other sees."""
    env = {"FAIRDICE_RATE_CREATE": "3/min", "FAIRDICE_RATE_MOVES_TOKEN": "2/min"}
    first = ServeProcess(tmp_path, workers=1, threads=2, extra_env=env).start()
    try:
        second = ServeProcess(tmp_path, workers=1, threads=2, extra_env=env).start()
        try:
            urls = [first.url, second.url]
            answers = [requests.post(url + "/v1/games", json=SOLO, timeout=10) for url in urls + urls]
            assert [a.status_code for a in answers] == [201, 201, 201, 429]
            assert 1 <= int(answers[3].headers["Retry-After"]) <= 20  # 60/3 s after the burst, less the time since
            assert requests.post(first.url + "/v1/games", json=SOLO, timeout=10).status_code == 429
            created = answers[0].json()
            url, auth = f"/v1/games/{created['game_id']}", bearer(created["tokens"][0]["token"])
            moves = [requests.post(base + url + path, json=body, headers=auth, timeout=10) for base, path, body in
                     ((first.url, "/client-seed", {"client_seed": "s"}), (second.url, "/roll", {}),
                      (first.url, "/roll", {}))]
            assert [m.status_code for m in moves] == [200, 200, 429]
            assert moves[2].json()["limit"] == "token"
        finally:
            second.stop()
    finally:
        first.stop()
