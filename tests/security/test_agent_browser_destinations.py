"""Another person's ``/mcp`` session must not make the daemon's Chromium a
proxy into the daemon host's network.

Bob (not the owner) drives the browser of the daemon's machine. Every
spelling of a loopback or private destination — by ``goto``, by an image,
a frame, a ``fetch``, a redirect, a WebSocket — must be refused before a byte
leaves, whatever skill names it (his own taught one included: its loopback
was the machine it was taught on). The "internal" server's own request log
is the judge. The owner's session, on the same pages, does reach it: the
control that shows the test can fail.

A public site cannot exist here, so one stands in: ``inside.example``,
which the injected resolver answers with a public address, and which
Chromium (through a wrapper that adds ``--host-resolver-rules``) reaches on
the loopback site — the only part of the internet the test fakes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from mcp import Client

from recorder.browser import chromium_path
from teachd.errors import Unavailable
from teachd.remote.destinations import Destinations
from teachd.store import SkillStore, open_store
from teachd.store.grants import GrantStore
from teachd.store.runs import RunStore
from teachd.store.users import UserStore
from tests.security.test_frames_and_navigation import Person, act, settings_of
from tests.security.webs import Site, teach, two_sites


class Names:
    """A resolver of our own (the test has no public DNS)."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers

    def resolve(self, host: str, port: int) -> list[str]:
        if host not in self.answers:
            raise Unavailable(f"cannot resolve {host}")
        return self.answers[host]


@pytest.fixture
def sites() -> Iterator[tuple[Site, Site]]:
    with two_sites() as pair:
        yield pair


def bob_store(env: dict[str, str]) -> SkillStore:
    return open_store(settings_of(env)).as_person("bob")


PUBLIC = "inside.example"  # a public site's stand-in (see the module's note)


def public_chromium(tmp_path: Path) -> str:
    """Debian's Chromium, resolving PUBLIC to loopback (the injected resolver says it is public)."""
    wrapper = tmp_path / "chromium-public"
    wrapper.write_text(f"#!/bin/sh\nexec {chromium_path(None)} '--host-resolver-rules=MAP {PUBLIC} 127.0.0.1' \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)


@contextlib.asynccontextmanager
async def session(env: dict[str, str], person: Person, *, owner: bool) -> AsyncIterator[Client]:
    """Bob's session as the daemon makes it (``owner=False``), or the owner's."""
    from teachd.mcp.server import TeachdMCP
    from teachd.mcp.session import services_for

    settings = settings_of(env)
    store = open_store(settings) if owner else bob_store(env)
    server = TeachdMCP(services_for(RunStore(store), settings, headless=True, step_timeout=3,
                                    approval_timeout=20, owner=owner,
                                    resolver=Names({PUBLIC: ["93.184.216.34"]})))
    try:
        async with Client(server, mode="legacy", elicitation_callback=person) as client:
            yield client
    finally:
        server.close()


def test_anyone_but_the_owner_cannot_open_loopback_by_any_spelling(env: dict[str, str],
                                                                   sites: tuple[Site, Site]) -> None:
    _inside, internal = sites
    port = internal.port
    person = Person(default="accept")  # even a yes to every question does not open them
    spellings = [f"http://127.0.0.1:{port}/api", f"http://0x7f.1:{port}/api", f"http://2130706433:{port}/api",
                 f"http://127.1:{port}/api", f"http://localhost:{port}/api", f"http://LOCALHOST.:{port}/api",
                 f"http://[::1]:{port}/api", f"http://[::ffff:127.0.0.1]:{port}/api",
                 f"http://[::ffff:0:7f00:1]:{port}/api", f"http://127.0.0.1:{port}\\@example.com/api",
                 f"http://0.0.0.0:{port}/api", f"http://intranet.example:{port}/api"]

    async def go() -> list[tuple[bool, str]]:
        async with session(env, person, owner=False) as client:
            return [await act(client, action="goto", url=url) for url in spellings]

    results = asyncio.run(go())
    for url, (is_error, said) in zip(spellings, results, strict=True):
        assert is_error and "refused" in said and "nothing was opened" in said, (url, said)
    assert internal.log == []
    assert person.asked == []  # refused outright: not a question an agent could talk a person into


def test_a_public_page_of_bobs_skill_cannot_pull_local_subresources_frames_or_redirects(
        env: dict[str, str], sites: tuple[Site, Site], tmp_path: Path) -> None:
    """Bob taught a skill on a public site (``inside``, standing in for one);
    its page's image, frame, fetch and redirect to the internal server are
    all refused."""
    inside, internal = sites
    site = f"http://{PUBLIC}:{inside.port}"
    slug = teach(bob_store(env), site + "/")
    person = Person(default="accept")
    env = {**env, "TEACHD_CHROMIUM": public_chromium(tmp_path)}

    async def go() -> list[tuple[bool, str]]:
        async with session(env, person, owner=False) as client:
            assert not (await client.call_tool("load_skill", {"slug": slug})).is_error
            out = [await act(client, action="goto", url=site + "/subresources")]
            out.append(await act(client, action="goto", url=site + "/redirect-away"))
            out.append(await act(client, action="goto", url=site + "/links"))
            out.append(await act(client, action="click", role="link", name="Away"))
            return out

    shown, redirected, links, clicked = asyncio.run(go())
    assert shown[0] and "stopped:" in shown[1] and "refused" in shown[1], shown  # what was cut is said
    assert redirected[0] and "refused" in redirected[1], redirected
    assert not links[0], links
    assert clicked[0] and "refused" in clicked[1], clicked
    assert internal.log == []  # nothing — not the image, the frame, the fetch, the redirect, the link
    assert {"/subresources", "/redirect-away", "/links"} <= set(inside.paths())


def test_the_owner_on_the_same_page_does_reach_it(env: dict[str, str], sites: tuple[Site, Site]) -> None:
    """The control: the owner's browser (``teachd mcp``, the daemon's owner)
    is theirs to point anywhere, so the same page's requests arrive."""
    inside, internal = sites
    teach(open_store(settings_of(env)), inside.origin + "/")
    person = Person(default="accept")

    async def go() -> tuple[bool, str]:
        async with session(env, person, owner=True) as client:
            done = await act(client, action="goto", url=inside.origin + "/subresources")
            await act(client, action="snapshot")
            return done

    asyncio.run(go())
    assert {"/pixel.png", "/frame", "/api"} <= set(internal.paths())


def test_a_skill_shared_with_bob_does_not_open_local_places_for_him(env: dict[str, str],
                                                                     sites: tuple[Site, Site]) -> None:
    """Only Bob's *own* taught skill names places for him: the owner's,
    shared with him, is the owner's network, not his."""
    inside, _internal = sites
    alice = open_store(settings_of(env))
    slug = teach(alice, inside.origin + "/")
    UserStore(alice.db).add("bob")
    GrantStore(alice).share(slug, "bob", "use")
    person = Person(default="accept")

    async def go() -> tuple[bool, str]:
        async with session(env, person, owner=False) as client:
            assert not (await client.call_tool("load_skill", {"slug": slug})).is_error
            return await act(client, action="goto", url=inside.origin + "/")

    is_error, said = asyncio.run(go())
    assert is_error and "refused" in said, said
    assert inside.log == []


@pytest.mark.parametrize(("url", "answers", "refused"), [
    ("http://intranet.example/", {"intranet.example": ["10.0.0.7"]}, "a private address"),
    ("http://mixed.example/", {"mixed.example": ["93.184.216.34", "192.168.1.1"]}, "a private address"),
    ("http://meta.example/", {"meta.example": ["169.254.169.254"]}, "a link-local address"),
    ("http://dummy.example/", {"dummy.example": ["192.0.0.8"]}, "the IPv4 dummy address"),
    ("http://v6.example/", {"v6.example": ["::ffff:0:7f00:1"]}, "127.0.0.1"),
    ("http://nowhere.example/", {}, "the unspecified address"),
    ("ws://127.0.0.1:9/socket", {}, "a loopback address"),
    ("http://[fd00::1]/", {}, "unique-local"),
    ("http://LocalHost./", {}, "localhost"),
])
def test_names_are_resolved_and_every_address_judged(url: str, answers: dict[str, list[str]],
                                                     refused: str) -> None:
    why = Destinations(Names(answers)).refusal(url)
    assert why is not None and refused in why, why


@pytest.mark.parametrize("url", ["http://public.example/", "https://93.184.216.34/", "data:text/html,x",
                                 "about:blank", "blob:http://public.example/1"])
def test_public_places_pass(url: str) -> None:
    names = Names({"public.example": ["93.184.216.34", "2606:4700::1111"]})
    assert Destinations(names).refusal(url) is None


def test_bobs_own_taught_skill_on_loopback_does_not_open_it_for_him(env: dict[str, str],
                                                                  sites: tuple[Site, Site]) -> None:
    """His skill's 127.0.0.1 was the machine it was taught on (or a recording
    of his own making, compiled into the team's store): on the daemon's host
    it is the owner's network, refused even when he says yes."""
    inside, _internal = sites
    slug = teach(bob_store(env), inside.origin + "/")
    person = Person(default="accept")

    async def go() -> tuple[bool, str]:
        async with session(env, person, owner=False) as client:
            assert not (await client.call_tool("load_skill", {"slug": slug})).is_error
            return await act(client, action="goto", url=inside.origin + "/")

    is_error, said = asyncio.run(go())
    assert is_error and "refused" in said, said
    assert inside.log == []


def test_the_daemon_gives_every_person_but_the_owner_the_destination_rule(env: dict[str, str]) -> None:
    from teachd.server.security import Sessions
    from teachd.server.state import Daemon

    daemon = Daemon.open(settings_of(env), Sessions("token", "alice"), "code")
    try:
        server = daemon.mcp_server(frozenset({"127.0.0.1:1"}), "http://127.0.0.1:1")
        assert server.services.who is not None and server.services.who.host_network
        assert server.for_person is not None
        bobs = server.for_person("bob").who
        assert bobs is not None and bobs.person == "bob" and not bobs.host_network
    finally:
        daemon.close()

