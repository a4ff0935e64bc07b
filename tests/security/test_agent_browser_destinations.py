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
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from recorder.browser import chromium_path
from teachd.core.errors import Unavailable
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


PUBLIC_ADDRESS = "93.184.216.34"


class Internet:
    """The public internet as this machine cannot have it: PUBLIC (and any
    other name, as Chromium's own background traffic asks) resolves to a
    public address; only PUBLIC's is reachable, and it leads to the loopback
    site standing in for it. Nothing else connects. ``intranet.example`` is a
    name whose answer is a private address."""

    def resolve(self, host: str, port: int) -> list[str]:
        return {PUBLIC: [PUBLIC_ADDRESS], "intranet.example": ["10.0.0.7"]}.get(host, ["8.8.4.4"])

    @staticmethod
    def dial(address: str, port: int) -> socket.socket:
        if address != PUBLIC_ADDRESS:
            raise OSError(f"no route to {address} from here")
        return socket.create_connection(("127.0.0.1", port), timeout=10)


class Listener:
    """An internal service on the daemon's loopback that logs the first bytes
    of every TCP connection and UDP datagram it receives (a WebSocket
    handshake, a TURN allocation, a STUN binding): where an attack would land."""

    def __init__(self) -> None:
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.port, self.udp_port = self.tcp.getsockname()[1], self.udp.getsockname()[1]
        self.log: list[bytes] = []
        threading.Thread(target=self._tcp, daemon=True).start()
        threading.Thread(target=self._udp, daemon=True).start()

    def _tcp(self) -> None:
        while True:
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                return
            conn.settimeout(3)
            with contextlib.suppress(OSError):
                self.log.append(b"tcp:" + conn.recv(2000))
            conn.close()

    def _udp(self) -> None:
        while True:
            try:
                self.log.append(b"udp:" + self.udp.recvfrom(2000)[0])
            except OSError:
                return

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()


def attack_page(listener: Listener) -> dict[str, tuple[str, str]]:
    """A public page whose Worker (and a blob: Worker) opens a WebSocket to the
    internal service, and whose WebRTC asks a TURN (TCP) and a STUN (UDP)
    server there: what Chromium's request interception does not see."""
    target = f"127.0.0.1:{listener.port}"
    worker = f"const w = new WebSocket('ws://{target}/from-a-worker'); w.onopen = () => w.send('hello');"
    page = f"""<!doctype html><title>Public</title><h1>Public</h1><script>
new Worker('/w.js');
new Worker(URL.createObjectURL(new Blob([{worker!r}], {{type: 'text/javascript'}})));
const pc = new RTCPeerConnection({{iceServers: [
  {{urls: 'turn:{target}?transport=tcp', username: 'u', credential: 'c'}},
  {{urls: 'stun:127.0.0.1:{listener.udp_port}'}}]}});
pc.createDataChannel('x'); pc.createOffer().then(o => pc.setLocalDescription(o));
</script>"""
    return {"/attack": ("text/html", page), "/w.js": ("text/javascript", worker)}


@contextlib.contextmanager
def public_site(pages: dict[str, tuple[str, str]]) -> Iterator[int]:
    """The public page's server (on loopback, reached as PUBLIC through Internet); its port."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            kind, body = pages.get(self.path.split("?")[0], ("text/plain", "not found"))
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


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
                                    approval_timeout=20, owner=owner, resolver=Internet(), dial=Internet.dial))
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


def test_a_workers_websocket_and_webrtc_reach_nothing_on_the_daemons_loopback(env: dict[str, str],
                                                                           tmp_path: Path) -> None:
    """What the request interception never sees goes through the run's proxy
    (teachd.remote.proxy): a dedicated Worker's WebSocket, a blob: Worker's,
    WebRTC's TURN over TCP and STUN over UDP — found by an attack, refused now.
    (Chromium's host rules reach the page even without the proxy, so the
    test would see the attack land if the proxy were gone.)"""
    env = {**env, "TEACHD_CHROMIUM": public_chromium(tmp_path)}
    listener = Listener()
    try:
        with public_site(attack_page(listener)) as port:
            async def go() -> tuple[bool, str]:
                async with session(env, Person(default="accept"), owner=False) as client:
                    done = await act(client, action="goto", url=f"http://{PUBLIC}:{port}/attack")
                    await asyncio.sleep(4)  # the Workers and ICE have their time
                    await act(client, action="snapshot")
                    return done

            asyncio.run(go())
    finally:
        listener.close()
    assert listener.log == []


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


@pytest.mark.parametrize("whose", ["shared with him", "his own"])
def test_no_skill_opens_local_places_for_bob(env: dict[str, str], sites: tuple[Site, Site], whose: str) -> None:
    """The owner's taught skill shared with Bob is the owner's network, not
    his; his own taught skill's 127.0.0.1 was the machine it was taught on
    (or a recording of his own making, compiled into the team's store): on
    the daemon's host both are the owner's network, refused even when he
    says yes."""
    inside, _internal = sites
    if whose == "his own":
        slug = teach(bob_store(env), inside.origin + "/")
    else:
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

