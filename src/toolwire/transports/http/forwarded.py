"""Who a request comes from: its peer's address, or, when the peer is a trusted proxy, the
client the proxy names in ``X-Forwarded-For`` (or ``Forwarded``, when there is no
``X-Forwarded-For``). Per-client caps and anonymous callers' rate limits are keyed on it."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any


class TrustedProxies:
    """The peers whose forwarding headers are believed, as uvicorn's ``--forwarded-allow-ips``:
    addresses, networks (``"10.0.0.0/8"``), or ``"*"`` for any peer; a comma-separated string
    or a list. ``ValueError`` for an entry that is neither an address nor a network.

    No proxies (the default): every request's client is its peer, and no header is read."""

    def __init__(self, allowed: str | Iterable[str] | None = ()) -> None:
        if allowed is None:
            allowed = ()
        if isinstance(allowed, str):
            allowed = allowed.split(",")
        entries = [entry.strip() for entry in allowed if entry.strip()]
        self.any = "*" in entries
        try:
            self.networks = [ipaddress.ip_network(entry, strict=False) for entry in entries if entry != "*"]
        except ValueError as exc:
            raise ValueError(f"a trusted proxy is an address, a network or '*': {exc}") from None
        self._trusted: dict[str, bool] = {}  # by peer address, as found

    def __bool__(self) -> bool:
        return self.any or bool(self.networks)

    def trusts(self, host: str) -> bool:
        """Whether ``host`` (an address) is one of the trusted proxies."""
        if self.any:
            return True
        if not self.networks:
            return False
        known = self._trusted.get(host)
        if known is None:
            known = _within(host, self.networks)
            if len(self._trusted) < 4096:
                self._trusted[host] = known
        return known

    def client(self, scope: dict[str, Any]) -> str:
        """The address of the client of the ASGI request ``scope``: its peer's, unless the peer
        is a trusted proxy that names one; then the last address of the chain that is not a
        trusted proxy (the first one, if all are). ``""`` when the server knows no peer."""
        peer = scope.get("client")
        host = str(peer[0]) if peer else ""
        if not (self.any or self.networks) or not self.trusts(host):
            return host
        chain = forwarded_chain(scope.get("headers", ()))
        for hop in reversed(chain):
            if not self.trusts(hop):
                return hop
        return chain[0] if chain else host


def forwarded_chain(headers: Iterable[tuple[bytes, bytes]]) -> list[str]:
    """The addresses a request passed through, the client first: those of
    ``X-Forwarded-For`` (all of its lines, in order), else the ``for=`` of ``Forwarded``."""
    listed: list[str] = []
    named: list[str] = []
    for name, value in headers:
        if name == b"x-forwarded-for":
            listed += value.decode("latin-1").split(",")
        elif name == b"forwarded":
            for element in value.decode("latin-1").split(","):
                for pair in element.split(";"):
                    key, _, found = pair.partition("=")
                    if key.strip().lower() == "for":
                        named.append(found)
    return [_host(hop) for hop in (listed or named) if hop.strip()]


def _host(hop: str) -> str:
    """An address as a forwarding header gives it, without quotes, brackets or port."""
    hop = hop.strip().strip('"')
    if hop.startswith("["):
        return hop[1:].partition("]")[0]
    if hop.count(":") == 1:
        return hop.partition(":")[0]
    return hop


def _within(host: str, networks: list[Any]) -> bool:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in networks)


def client_group(host: str) -> str:
    """What counts as one client for the connection caps: an IPv4 address, or an IPv6
    address's /64 (a host commonly holds a whole /64)."""
    if ":" not in host:
        return host
    try:
        address = ipaddress.IPv6Address(host)
    except ValueError:
        return host
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.IPv6Network((address, 64), strict=False))
