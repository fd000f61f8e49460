"""Rate limits: who the client is, which limit a request counts against, and the 429 past it.

Three limits (api/config.py; a rate `N/min` allows a burst of N, then one every 1/N minute):

- creations per client (`FAIRDICE_RATE_CREATE`), key `create:<client>`;
- moves per client, all its games together (`FAIRDICE_RATE_MOVES_CLIENT`), key `moves:<client>`;
- moves per seat token (`FAIRDICE_RATE_MOVES_TOKEN`), key `token:<sha256 of the token>`.

Moves are POST client-seed, roll, score and abandon.  The counts live in the store (`Store.rate_hits`, a
GCRA done atomically in the database; a move's two limits in one transaction, all or nothing), so every
worker and every server on one database shares them.

The client is the peer's address, unless the peer is a trusted proxy (`FAIRDICE_TRUSTED_PROXIES`): then
X-Forwarded-For is read from the right, skipping the trusted hops, and the first address that is not
trusted is the client.  Everything left of it was written by the client itself and is never believed.  An
IPv6 client is counted by its /64 network, the block one subscriber is given, so that the 2^64 addresses
of one network do not make 2^64 clients.
"""

from __future__ import annotations

import functools
import ipaddress
import math
from collections.abc import Callable, Iterable

from .config import Rate
from .games import token_hash
from .problems import ApiError

IPV6_CLIENT_PREFIX = 64

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class RateLimitedError(ApiError):
    """429: the client (or the token) has used up its rate; retry after `retry_after` whole seconds."""

    def __init__(self, limit: str, rate: Rate, wait: float, what: str):
        retry_after = max(1, math.ceil(wait))
        super().__init__(429, "rate_limited", f"too many {what} (at most {rate}); retry after {retry_after} s",
                         headers={"Retry-After": str(retry_after)}, limit=limit, retry_after=retry_after)
        self.retry_after = retry_after


def trusted_networks(entries: Iterable[str]) -> tuple[Network, ...]:
    """FAIRDICE_TRUSTED_PROXIES' entries (addresses or CIDR blocks) as networks; ValueError names a bad one."""
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ValueError(f"FAIRDICE_TRUSTED_PROXIES: {entry!r} is not an IP address or CIDR block") from None
    return tuple(networks)


def parse_address(text: str | None) -> Address | None:
    """An IP address as a peer or an X-Forwarded-For hop writes it (`[v6]:port` and `v4:port` too); an
    IPv4-mapped IPv6 address is the IPv4 address it maps.  None if it is not an address."""
    text = (text or "").strip()
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def client_address(peer: str | None, forwarded_for: Iterable[str], trusted: tuple[Network, ...]) -> str:
    """Who sent the request: `peer` (the connection's remote address) unless it is a trusted proxy; then the
    first hop of X-Forwarded-For (every such header, in order), read from the right, that is not trusted.
    A hop that is not an address stops the walk at the trusted proxy that wrote it; when every hop is trusted
    the leftmost one is the client."""
    current = parse_address(peer)
    if current is None:
        return (peer or "").strip() or "unknown"
    hops = [hop for header in forwarded_for for hop in header.split(",")]
    while _is_trusted(current, trusted) and hops:
        hop = parse_address(hops.pop())
        if hop is None:
            break
        current = hop
    return client_key(current)


def _is_trusted(address: Address, trusted: tuple[Network, ...]) -> bool:
    return any(address.version == net.version and address in net for net in trusted)


def client_key(address: Address) -> str:
    """The client as rate limits and quotas count it: an IPv4 address, or an IPv6 /64 network."""
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.ip_network(f"{address}/{IPV6_CLIENT_PREFIX}", strict=False))
    return str(address)


class Limiter:
    """The three rate limits over a store's shared counters; a rate with count 0 ("off") costs nothing."""

    CLIENT_CACHE = 4096  # (peer, X-Forwarded-For) pairs whose client is remembered

    def __init__(self, store, create: Rate, moves_client: Rate, moves_token: Rate,
                 trusted_proxies: Iterable[str] = (), clock: Callable[[], float] | None = None):
        """`clock`: seconds since the epoch, for tests; None lets the store use its own clock (with PostgreSQL
        the database's, the same for every server)."""
        self.store = store
        self.create, self.moves_client, self.moves_token = create, moves_client, moves_token
        self.trusted = trusted_networks(trusted_proxies)
        self.clock = clock
        # the same connection asks again and again: parse its addresses once
        self._client = functools.lru_cache(maxsize=self.CLIENT_CACHE)(self._client_uncached)

    @classmethod
    def from_settings(cls, conf, store, clock: Callable[[], float] | None = None) -> Limiter:
        return cls(store, conf.rate_create, conf.rate_moves_client, conf.rate_moves_token, conf.trusted_proxies,
                   clock)

    @property
    def off(self) -> bool:
        """Every limit off: no request is counted (nor its client looked up for them)."""
        return not (self.create.count or self.moves_client.count or self.moves_token.count)

    def client_of(self, peer: str | None, forwarded_for: Iterable[str] = ()) -> str:
        return self._client(peer, tuple(forwarded_for))

    def _client_uncached(self, peer: str | None, forwarded_for: tuple[str, ...]) -> str:
        return client_address(peer, forwarded_for, self.trusted)

    def check_create(self, client: str) -> None:
        """Count one game creation by `client`; RateLimitedError past its rate."""
        self._count([("create", f"create:{client}", self.create)])

    def check_move(self, client: str, token: str) -> None:
        """Count one move by `client` with the bearer `token` (whether it is a seat's is not known yet): both
        limits in one store transaction, and neither counted if either refuses."""
        token_limit = ("token", f"token:{token_hash(token)}", self.moves_token) if self.moves_token.count else None
        self._count([token_limit, ("moves", f"moves:{client}", self.moves_client)])

    def _count(self, limits: list[tuple[str, str, Rate] | None]) -> None:
        counted = [entry for entry in limits if entry is not None and entry[2].count]
        if not counted:
            return
        now = self.clock() if self.clock is not None else None
        wait = self.store.rate_hits([(key, rate.interval, rate.count) for _, key, rate in counted], now=now)
        if wait > 0:
            refused = getattr(wait, "key", None)  # a RateWait names its key; else the first counted limit
            limit, _, rate = next((entry for entry in counted if entry[1] == refused), counted[0])
            raise RateLimitedError(limit, rate, wait, WHAT[limit])


WHAT = {"create": "games created from this address", "token": "moves with this token",
        "moves": "moves from this address"}
