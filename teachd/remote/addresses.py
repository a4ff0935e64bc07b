"""Which addresses an outbound request may reach: globally routable ones only.

Pure functions. A host is read the way the C library would read it, so that
``127.1``, ``2130706433``, ``0x7f000001`` and ``0177.0.0.1`` are all seen as
the loopback address they are, and IPv6 that wraps an IPv4 address (mapped,
compatible, NAT64, 6to4) is judged by the address it wraps.
"""

from __future__ import annotations

import ipaddress
import socket

IP = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_COMPATIBLE = ipaddress.ip_network("::/96")
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_ULA = ipaddress.ip_network("fc00::/7")


def literal_ip(host: str) -> IP | None:
    """The address a host names literally, in any spelling; None for a name."""
    h = host.strip()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    h = h.split("%", 1)[0]  # an IPv6 zone
    try:
        return ipaddress.ip_address(h)
    except ValueError:
        pass
    if not h or not all(c in "0123456789abcdefxABCDEFX." for c in h) or not h[0].isdigit():
        return None  # a name (inet_aton would also take some names, e.g. "1e"; names start with a letter)
    try:
        return ipaddress.IPv4Address(socket.inet_aton(h))  # 127.1, 2130706433, 0x7f000001, 0177.0.0.1
    except OSError:
        return None


def refusal(ip: IP) -> str | None:
    """Why this address may not be reached; None when it is globally routable."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return f"an IPv4-mapped IPv6 address (of {ip.ipv4_mapped})"
        if ip in _COMPATIBLE and int(ip) > 1:
            return f"an IPv4-compatible IPv6 address (of {ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)})"
        if ip in _NAT64_LOCAL:
            return "a local-use NAT64 address"
        if ip in _NAT64:
            inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
            why = refusal(inner)
            return f"NAT64 of {inner}, {why}" if why else None
        if ip.sixtofour is not None:
            why = refusal(ip.sixtofour)
            return f"6to4 of {ip.sixtofour}, {why}" if why else None
        if ip in _ULA:
            return "a unique-local IPv6 address"
    if ip.is_unspecified:
        return "the unspecified address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_link_local:
        return "a link-local address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT:
        return "a carrier-grade NAT address"
    if ip.is_private:
        return "a private address"
    if not ip.is_global:
        return "not a globally routable address"
    return None


def name_refusal(host: str) -> str | None:
    """Names that mean this machine whatever a resolver says (RFC 6761)."""
    h = host.strip().rstrip(".").lower()
    if not h:
        return "no host"
    if h == "localhost" or h.endswith(".localhost"):
        return "localhost"
    return None
