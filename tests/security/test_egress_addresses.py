"""The egress guard's address policy is IANA's special-purpose registries,
not a hand list: ``::ffff:0:7f00:1`` (IPv4-translated 127.0.0.1) and
``192.0.0.8`` (the IPv4 dummy address) got through the hand list.

Every block of both registries is tried at its edges and middle; every IPv6
form that carries an IPv4 address is judged by the address it carries; and
the real guard (``Egress``, with the real policy; only the internet is
faked) refuses to connect — the local server's own log stays empty.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

import pytest

from teachd.core.errors import BadInput, PolicyStop
from teachd.remote.addresses import IPV4_SPECIAL, IPV6_SPECIAL, Block, literal_ip, refusal, special_block
from teachd.remote.egress import Egress
from tests.netfake import FakeInternet

SKILL = "---\nname: pdf-forms\ndescription: Fills PDF forms. Use when a form must be filled.\n---\n# x\n"


@pytest.fixture
def net() -> Iterator[FakeInternet]:
    with FakeInternet() as fake:
        yield fake


def samples(block: Block) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    net = block.network
    middle = net.network_address + (net.num_addresses // 2)
    return [net.network_address, middle, net.broadcast_address]


def _ruling(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> Block | None:
    return special_block(ip)


@pytest.mark.parametrize("block", [b for b in IPV4_SPECIAL + IPV6_SPECIAL if b.globally_reachable is False],
                         ids=lambda b: str(b.network))
def test_every_block_the_registry_says_is_not_globally_reachable_is_refused(block: Block) -> None:
    for ip in samples(block):
        ruling = _ruling(ip)
        if ruling is not None and ruling.globally_reachable is not False:
            continue  # a more specific block rules this address (e.g. 192.0.0.9 inside 192.0.0.0/24)
        assert refusal(ip), f"{ip} ({block.name}, {block.rfc}) got through"


@pytest.mark.parametrize("address", ["192.0.0.8", "::ffff:0:7f00:1", "::ffff:0:a00:1", "::ffff:0:c0a8:101",
                                     "192.0.0.170", "192.0.0.1", "100:0:0:1::1", "100::1", "3fff::1",
                                     "5f00::1", "2001:2::1", "2001:10::1", "192.88.99.1", "240.0.0.1",
                                     "255.255.255.255", "64:ff9b:1::1", "2001:db8::1", "0.1.2.3",
                                     "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo of 127.0.0.1
                                     "2002:a00:1::1",  # 6to4 of 10.0.0.1
                                     "64:ff9b::c000:8",  # NAT64 of 192.0.0.8
                                     "::ffff:8.8.8.8",  # mapped: never routed as such
                                     "fec0::1", "4000::1", "ff0e::1"])
def test_the_addresses_the_hand_list_missed_are_refused(address: str) -> None:
    ip = literal_ip(address)
    assert ip is not None and refusal(ip), address


@pytest.mark.parametrize("address", ["192.0.0.9", "192.0.0.10", "2001:1::1", "2001:4:112::1", "2620:4f:8000::1",
                                     "64:ff9b::808:808", "2002:808:808::1", "93.184.216.34",
                                     "2001:0:4136:e378:8000:63bf:f7f7:f7f7"])
def test_what_the_registry_calls_globally_reachable_still_passes(address: str) -> None:
    ip = literal_ip(address)
    assert ip is not None and refusal(ip) is None, refusal(ip) if ip else address


@pytest.mark.parametrize("host", ["[::ffff:0:7f00:1]", "192.0.0.8", "[::ffff:0:127.0.0.1]", "0x7f.1",
                                  "[2002:7f00:1::]", "[2001:0:4136:e378:8000:63bf:80ff:fffe]"])
def test_the_guard_refuses_them_without_connecting(net: FakeInternet, host: str) -> None:
    net.text("127.0.0.1", "/SKILL.md", SKILL)
    with pytest.raises(PolicyStop, match="refused"):
        Egress().get(f"https://{host}:{net.port}/SKILL.md", 10_000)
    assert net.log == []


@pytest.mark.parametrize("answer", [["192.0.0.8"], ["::ffff:0:7f00:1"], ["93.184.216.34", "192.0.0.171"]])
def test_a_name_that_resolves_to_a_special_address_is_refused(net: FakeInternet, answer: list[str]) -> None:
    net.text("skills.example", "/SKILL.md", SKILL)
    with pytest.raises(PolicyStop, match="is refused"):
        net.egress({"skills.example": answer}).get("https://skills.example/SKILL.md", 10_000)
    assert net.log == []


@pytest.mark.parametrize("url", ["https://127.0.0.1:{port}\\@skills.example/SKILL.md",
                                 "https://127.0.0.1:{port}#@skills.example/SKILL.md",
                                 "https:\\\\127.0.0.1:{port}\\SKILL.md",
                                 "https://127%2E0%2E0%2E1:{port}/SKILL.md",
                                 "https://127。0。0。1:{port}/SKILL.md"])
def test_a_url_spelled_to_fool_a_parser_is_read_as_the_browser_reads_it(net: FakeInternet, url: str) -> None:
    """What the WHATWG parser reads is what is checked *and* what is fetched."""
    net.text("127.0.0.1", "/SKILL.md", SKILL)
    with pytest.raises(PolicyStop, match="refused"):
        net.egress({}).get(url.format(port=net.port), 10_000)
    assert net.log == []


def test_the_public_reading_of_a_backslash_url_is_the_one_fetched(net: FakeInternet) -> None:
    net.text("skills.example", "/@127.0.0.1/SKILL.md", SKILL)
    got = net.egress({"skills.example": ["93.184.216.34"]}).get("https://skills.example\\@127.0.0.1/SKILL.md",
                                                              10_000)
    assert got.url == "https://skills.example/@127.0.0.1/SKILL.md" and got.body.decode() == SKILL
    assert [host for host, _path in net.log] == ["skills.example"]


@pytest.mark.parametrize("url", ["not a url", "ftp://skills.example/SKILL.md", "https://"])
def test_what_is_not_an_http_url_is_refused_in_one_line(url: str) -> None:
    with pytest.raises((BadInput, PolicyStop)):
        Egress().get(url, 10_000)


@pytest.mark.parametrize("location", ["https://127.0.0.1:{port}\\@skills.example/SKILL.md",
                                      "\\\\192.0.0.8\\SKILL.md", "https://[::ffff:0:7f00:1]:{port}/SKILL.md"])
def test_a_redirect_is_joined_and_judged_as_the_browser_would(net: FakeInternet, location: str) -> None:
    net.redirect("skills.example", "/SKILL.md", location.format(port=net.port))
    net.text("127.0.0.1", "/SKILL.md", SKILL)
    with pytest.raises(PolicyStop, match="refused"):
        net.egress({"skills.example": ["93.184.216.34"]}).get("https://skills.example/SKILL.md", 10_000)
    assert net.log == [("skills.example", "/SKILL.md")]  # the public hop only
