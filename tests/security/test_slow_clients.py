"""A client that trickles its request — the headers a byte at a time, or a
body slower than it announced, or nothing at all — is cut off after the
bound (``teachd serve --request-timeout``, 2 s here), measured with raw
sockets against a real daemon; meanwhile others are answered."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.security.web_surface import daemon
from tests.test_server import Server

BOUND = 2.0
SLACK = 1.5  # the loop's timer and a busy 2-core machine


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with daemon(tmp_path_factory.mktemp("slow"), "--request-timeout", str(BOUND)) as s:
        yield s


def _connect(server: Server) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=0.2)
    return sock


def _trickle(sock: socket.socket, data: bytes, every: float = 0.25, limit: float = 15) -> tuple[float, bytes]:
    """Send ``data`` a byte at a time; (seconds until the daemon closed, what it sent)."""
    start, got = time.monotonic(), b""
    for i in range(len(data)):
        try:
            sock.sendall(data[i:i + 1])
        except OSError:
            break
        deadline = time.monotonic() + every
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return time.monotonic() - start, got
            if not chunk:
                return time.monotonic() - start, got
            got += chunk
        if time.monotonic() - start > limit:
            break
    while time.monotonic() - start < limit:  # everything sent: wait for the close
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            continue
        except OSError:
            break
        if not chunk:
            break
        got += chunk
    return time.monotonic() - start, got


def _head(server: Server, extra: str = "") -> bytes:
    host = server.url.removeprefix("http://")
    return f"GET /api/skills HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {server.token}\r\n{extra}\r\n".encode()


def test_headers_sent_a_byte_at_a_time_are_cut_off(server: Server) -> None:
    with _connect(server) as sock:
        took, got = _trickle(sock, _head(server, "X-Padding: " + "a" * 200 + "\r\n"))
    assert took < BOUND + SLACK and b"200 OK" not in got, (took, got[:80])


def test_a_connection_that_sends_nothing_is_closed(server: Server) -> None:
    with _connect(server) as sock:
        took, got = _trickle(sock, b"")
    assert took < BOUND + SLACK and got == b""


def test_a_body_slower_than_announced_is_cut_off_with_408(server: Server) -> None:
    host = server.url.removeprefix("http://")
    body = b'{"on": false}' + b" " * 60
    head = (f"PUT /api/skills/expenses/enabled HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {server.token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    with _connect(server) as sock:
        sock.sendall(head)
        took, got = _trickle(sock, body)
    assert took < BOUND + SLACK and got.startswith(b"HTTP/1.1 408"), (took, got[:80])
    with server.api() as api:
        assert api.get("/api/skills/expenses").json()["enabled"] is True  # the trickled change never applied


def test_the_next_request_on_a_kept_alive_connection_has_the_same_bound(server: Server) -> None:
    with _connect(server) as sock:
        sock.settimeout(5)
        sock.sendall(_head(server))
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        sock.settimeout(0.2)
        took, got = _trickle(sock, _head(server, "X-Padding: " + "b" * 200 + "\r\n"))
    assert took < BOUND + SLACK and b"200 OK" not in got


def test_others_are_answered_while_slow_clients_hang_on(server: Server) -> None:
    socks = [_connect(server) for _ in range(30)]
    try:
        for s in socks:
            s.sendall(b"GET /api/skills HTTP/1.1\r\nHo")
        start = time.monotonic()
        with server.api() as api:
            assert api.get("/api/skills").status_code == 200
        assert time.monotonic() - start < 2
    finally:
        for s in socks:
            s.close()


def test_a_normal_request_with_a_body_still_works(tmp_path: Path, server: Server) -> None:
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {server.token}"}) as api:
        r = api.put("/api/skills/expenses/files/references/n.md", json={"text": "x" * 200_000})
        assert r.status_code == 200
