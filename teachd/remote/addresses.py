"""Which addresses an outbound connection may reach: globally reachable ones only.

Pure functions over data. The data is IANA's two special-purpose address
registries (IPv4 and IPv6; RFC 6890 and its updates: RFC 8190, 9637, 9780 …),
each block with its *Globally Reachable* value, as published — not a hand
list of "private" ranges, which is how ``192.0.0.8`` (the IPv4 dummy address)
and ``::ffff:0:7f00:1`` (an IPv4-translated form of 127.0.0.1) got through.
An address is refused when the most specific registry block holding it is
not globally reachable, when it is multicast, or (IPv6) when it is outside
global unicast ``2000::/3``. IPv6 forms that carry an IPv4 address (mapped,
translated, compatible, NAT64, 6to4, Teredo) are judged by the IPv4 address
they carry.

A host is read the way the C library would read it, so that ``127.1``,
``2130706433``, ``0x7f000001`` and ``0177.0.0.1`` are all seen as the loopback
address they are.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Block:
    """One row of an IANA special-purpose address registry."""

    network: Network
    name: str  # as said in a refusal: "a loopback address"
    globally_reachable: bool | None  # None: the registry says N/A (judged another way, or never)
    rfc: str


def _rows(rows: list[tuple[str, str, bool | None, str]]) -> tuple[Block, ...]:
    return tuple(Block(ipaddress.ip_network(n), name, g, rfc) for n, name, g, rfc in rows)


# https://www.iana.org/assignments/iana-ipv4-special-registry (every row; "Globally Reachable").
IPV4_SPECIAL = _rows([
    ("0.0.0.0/8", "the \"this network\" block", False, "RFC 791"),
    ("0.0.0.0/32", "the unspecified address", False, "RFC 1122"),
    ("10.0.0.0/8", "a private address", False, "RFC 1918"),
    ("100.64.0.0/10", "a carrier-grade NAT address", False, "RFC 6598"),
    ("127.0.0.0/8", "a loopback address", False, "RFC 1122"),
    ("169.254.0.0/16", "a link-local address", False, "RFC 3927"),
    ("172.16.0.0/12", "a private address", False, "RFC 1918"),
    ("192.0.0.0/24", "an IETF protocol assignment", False, "RFC 6890"),
    ("192.0.0.0/29", "the IPv4 service continuity prefix", False, "RFC 7335"),
    ("192.0.0.8/32", "the IPv4 dummy address", False, "RFC 7600"),
    ("192.0.0.9/32", "the Port Control Protocol anycast address", True, "RFC 7723"),
    ("192.0.0.10/32", "the TURN anycast address", True, "RFC 8155"),
    ("192.0.0.170/32", "a NAT64/DNS64 discovery address", False, "RFC 8880"),
    ("192.0.0.171/32", "a NAT64/DNS64 discovery address", False, "RFC 8880"),
    ("192.0.2.0/24", "a documentation address", False, "RFC 5737"),
    ("192.31.196.0/24", "AS112-v4", True, "RFC 7535"),
    ("192.52.193.0/24", "AMT", True, "RFC 7450"),
    ("192.88.99.0/24", "the deprecated 6to4 relay anycast block", None, "RFC 7526"),
    ("192.168.0.0/16", "a private address", False, "RFC 1918"),
    ("192.175.48.0/24", "direct delegation AS112 service", True, "RFC 7534"),
    ("198.18.0.0/15", "a benchmarking address", False, "RFC 2544"),
    ("198.51.100.0/24", "a documentation address", False, "RFC 5737"),
    ("203.0.113.0/24", "a documentation address", False, "RFC 5737"),
    ("240.0.0.0/4", "a reserved address", False, "RFC 1112"),
    ("255.255.255.255/32", "the limited broadcast address", False, "RFC 919"),
])

# https://www.iana.org/assignments/iana-ipv6-special-registry (every row; "Globally Reachable").
IPV6_SPECIAL = _rows([
    ("::1/128", "a loopback address", False, "RFC 4291"),
    ("::/128", "the unspecified address", False, "RFC 4291"),
    ("::ffff:0:0/96", "an IPv4-mapped IPv6 address", False, "RFC 4291"),
    ("64:ff9b::/96", "a NAT64 address", True, "RFC 6052"),
    ("64:ff9b:1::/48", "a local-use NAT64 address", False, "RFC 8215"),
    ("100::/64", "a discard-only address", False, "RFC 6666"),
    ("100:0:0:1::/64", "the dummy IPv6 prefix", False, "RFC 9780"),
    ("2001::/23", "an IETF protocol assignment", False, "RFC 2928"),
    ("2001::/32", "a Teredo address", None, "RFC 4380"),
    ("2001:1::1/128", "the Port Control Protocol anycast address", True, "RFC 7723"),
    ("2001:1::2/128", "the TURN anycast address", True, "RFC 8155"),
    ("2001:1::3/128", "the DNS-SD service registration protocol anycast address", True, "RFC 9665"),
    ("2001:2::/48", "a benchmarking address", False, "RFC 5180"),
    ("2001:3::/32", "AMT", True, "RFC 7450"),
    ("2001:4:112::/48", "AS112-v6", True, "RFC 7535"),
    ("2001:10::/28", "a deprecated ORCHID address", False, "RFC 4843"),
    ("2001:20::/28", "ORCHIDv2", True, "RFC 7343"),
    ("2001:30::/28", "drone remote ID protocol entity tags", True, "RFC 9374"),
    ("2001:db8::/32", "a documentation address", False, "RFC 3849"),
    ("2002::/16", "a 6to4 address", None, "RFC 3056"),
    ("2620:4f:8000::/48", "direct delegation AS112 service", True, "RFC 7534"),
    ("3fff::/20", "a documentation address", False, "RFC 9637"),
    ("5f00::/16", "a segment routing (SRv6) SID", False, "RFC 9602"),
    ("fc00::/7", "a unique-local IPv6 address", False, "RFC 4193"),
    ("fe80::/10", "a link-local address", False, "RFC 4291"),
])

_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")  # IANA IPv6 address space: the rest is reserved
_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")  # SIIT IPv4-translated (RFC 2765): not in the registry
_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated IPv4-compatible (RFC 4291)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def special_block(ip: IP) -> Block | None:
    """The most specific registry block holding ``ip``, or None."""
    table = IPV4_SPECIAL if isinstance(ip, ipaddress.IPv4Address) else IPV6_SPECIAL
    holding = [b for b in table if ip in b.network]
    return max(holding, key=lambda b: b.network.prefixlen) if holding else None


def embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, list[ipaddress.IPv4Address]] | None:
    """The IPv4 address(es) an IPv6 form carries, and the form's name; None
    for an address that carries none."""
    low = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.ipv4_mapped is not None:
        return "an IPv4-mapped IPv6 address", [ip.ipv4_mapped]
    if ip in _TRANSLATED:
        return "an IPv4-translated IPv6 address", [low]
    if ip in _COMPATIBLE and int(ip) > 1:
        return "an IPv4-compatible IPv6 address", [low]
    if ip in _NAT64:
        return "NAT64", [low]
    if ip.sixtofour is not None:
        return "6to4", [ip.sixtofour]
    if ip.teredo is not None:
        server, client = ip.teredo
        return "Teredo", [client, server]
    return None


def refusal(ip: IP) -> str | None:
    """Why this address may not be reached; None when it is globally reachable."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            return "a scoped (zone) IPv6 address"
        carried = embedded_ipv4(ip)
        if carried is not None:
            form, inner = carried
            for v4 in inner:
                why = refusal(v4)
                if why:
                    return f"{form} of {v4}, {why}"
            if form not in ("NAT64", "6to4", "Teredo"):
                return f"{form} (of {inner[0]}): not globally reachable"  # never routed as such
            return None
    if ip.is_multicast:
        return "a multicast address"
    block = special_block(ip)
    if block is not None and not block.globally_reachable:
        return block.name
    if isinstance(ip, ipaddress.IPv6Address) and ip not in _GLOBAL_UNICAST:
        return "outside IPv6 global unicast (2000::/3)"
    return None


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


def name_refusal(host: str) -> str | None:
    """Names that mean this machine whatever a resolver says (RFC 6761)."""
    h = host.strip().rstrip(".").lower()
    if not h:
        return "no host"
    if h == "localhost" or h.endswith(".localhost"):
        return "localhost"
    return None
