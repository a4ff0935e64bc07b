"""The run's proxy (teachd.remote.proxy) spoken to as Chromium speaks to it:
a refused CONNECT sends nothing on, an accepted one reaches exactly the
address judged, a plain request is forwarded one per connection, and a
closed proxy leaves no thread behind (a daemon opens one per browser)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from teachd.remote.destinations import Destinations
from teachd.remote.proxy import GuardedProxy

PUBLIC = "93.184.216.34"


class Internet:
    """example.test is public; only its address connects, to a local echo server."""

    def __init__(self, port: int) -> None:
        self.port, self.dialled = port, []  # type: ignore[var-annotated]

    def resolve(self, host: str, port: int) -> list[str]:
        return {"example.test": [PUBLIC], "rebind.test": ["127.0.0.1"]}.get(host, [])

    def dial(self, address: str, port: int) -> socket.socket:
        self.dialled.append((address, port))
        if address != PUBLIC:
            raise OSError("no route")
        return socket.create_connection(("127.0.0.1", self.port), timeout=5)


@pytest.fixture
def upstream() -> Iterator[tuple[int, list[bytes]]]:
    """A server that records what it receives and answers one HTTP response."""
    server = socket.create_server(("127.0.0.1", 0))
    seen: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.settimeout(5)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
            seen.append(data)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    yield int(server.getsockname()[1]), seen
    server.close()


def _ask(port: int, raw: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(raw)
        out = b""
        while chunk := s.recv(4096):
            out += chunk
        return out


def test_a_refused_connect_sends_nothing_on_and_the_run_hears_why(upstream: tuple[int, list[bytes]]) -> None:
    port, seen = upstream
    net = Internet(port)
    refused: list[tuple[str, int, str]] = []
    proxy = GuardedProxy(Destinations(net), lambda h, p, why: refused.append((h, p, why)), net.dial)
    try:
        for target in (f"127.0.0.1:{port}", f"[::1]:{port}", f"localhost:{port}", f"rebind.test:{port}"):
            said = _ask(proxy.port, f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
            assert said.startswith(b"HTTP/1.1 403"), (target, said)
        # a name that resolves to nothing is refused, but reached nothing: not told to the run
        assert _ask(proxy.port, b"CONNECT nowhere.test:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403")
    finally:
        proxy.close()
    assert seen == [] and net.dialled == []
    assert [h for h, _p, _w in refused] == ["127.0.0.1", "::1", "localhost", "rebind.test"]


def test_an_accepted_request_reaches_the_address_judged_one_request_a_connection(
        upstream: tuple[int, list[bytes]]) -> None:
    port, seen = upstream
    net = Internet(port)
    proxy = GuardedProxy(Destinations(net), lambda *_: None, net.dial)
    try:
        said = _ask(proxy.port, f"GET http://example.test:{port}/page?q=1 HTTP/1.1\r\nHost: example.test:{port}\r\n"
                                "Proxy-Connection: keep-alive\r\nConnection: keep-alive\r\n\r\n".encode())
    finally:
        proxy.close()
    assert said.endswith(b"ok")
    assert net.dialled == [(PUBLIC, port)]  # the address the rule judged: no second lookup
    [request] = seen
    assert request.startswith(b"GET /page?q=1 HTTP/1.1\r\n")
    assert b"Connection: close" in request and b"Proxy-Connection" not in request
    assert b"keep-alive" not in request


def test_a_closed_proxy_leaves_no_thread_behind() -> None:
    before = {t.name for t in threading.enumerate()}
    proxy = GuardedProxy(Destinations(Internet(1)), lambda *_: None)
    name = f"teachd-proxy-{proxy.port}"
    assert name in {t.name for t in threading.enumerate()} - before
    proxy.close()
    deadline = time.monotonic() + 5
    while name in {t.name for t in threading.enumerate()} and time.monotonic() < deadline:
        time.sleep(0.02)
    assert name not in {t.name for t in threading.enumerate()}
