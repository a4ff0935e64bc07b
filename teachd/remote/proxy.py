"""A forward proxy on loopback through which another person's run browser
makes every connection — so what Chromium's request interception never
shows still passes the destination rule.

The DevTools ``Fetch`` domain (teachd.runner.guard) sees requests of pages,
frames and service workers; it does not see a WebSocket a dedicated Worker
opens, nor WebRTC's TURN and STUN traffic. An attacker's public page could
use either to reach the daemon host's loopback (found by an attack on this
very rule). So a browser of anyone but the owner is started with
``--proxy-server`` pointing here, ``--proxy-bypass-list=<-loopback>`` (or
Chromium would still go to loopback directly) and WebRTC restricted to
proxied TCP (``--webrtc-ip-handling-policy=disable_non_proxied_udp``;
QUIC is off already). Every connection — ``CONNECT host:port`` for TLS,
WebSockets and TURN over TCP, an absolute-form request for plain HTTP — is
judged by :class:`~teachd.remote.destinations.Destinations` before a byte
leaves, and an accepted one is connected to the very address that was
judged: Chromium never resolves the name itself, so a DNS answer that
changes between the check and the connection (rebinding) no longer matters.

A refusal is answered ``403`` and told to ``refused`` (the run's policy,
which stops the run with it). Nothing here logs what passes through.
"""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import threading
from collections.abc import Callable
from urllib.parse import urlsplit

from teachd.remote.destinations import Destinations

log = logging.getLogger("teachd.remote.proxy")
Dial = Callable[[str, int], socket.socket]  # (address, port) → a connected socket
Refused = Callable[[str, int, str], None]  # (host, port, why): a place that exists, refused

HEAD_MAX = 64 * 1024  # a request head larger than this is refused
IDLE = 300.0  # seconds a relayed connection may be silent both ways (a WebSocket's pings come sooner)
_HOP = (b"proxy-connection", b"proxy-authorization", b"connection", b"keep-alive")


def dial(address: str, port: int) -> socket.socket:
    return socket.create_connection((address, port), timeout=10)


def chromium_args(port: int) -> list[str]:
    """How a browser is told to make every connection through the proxy on ``port``."""
    return [f"--proxy-server=http://127.0.0.1:{port}", "--proxy-bypass-list=<-loopback>",
            "--webrtc-ip-handling-policy=disable_non_proxied_udp"]


class GuardedProxy:
    """One browser's proxy: started at once on a free loopback port, closed with ``close``."""

    def __init__(self, destinations: Destinations, refused: Refused, connect: Dial | None = None) -> None:
        self.destinations, self.refused, self.connect = destinations, refused, connect or dial
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(128)
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()  # the destinations' cache is one per browser
        self._closed = False
        threading.Thread(target=self._accept, name=f"teachd-proxy-{self.port}", daemon=True).start()

    def close(self) -> None:
        """Stop taking connections. A blocked ``accept`` is woken by the
        shutdown (closing alone does not wake it on Linux): its thread ends,
        and with it the last reference to this proxy and its run."""
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    # -- one connection ----------------------------------------------------------
    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            client.settimeout(30)
            head, extra = _read_head(client)
            if head is None:
                return
            line, _, headers = head.partition(b"\r\n")
            parts = line.decode("latin-1").split(" ")
            if len(parts) != 3:
                return _answer(client, 400, "Bad Request")
            method, target, _version = parts
            if method == "CONNECT":
                host, port = _host_port(target, 443)
                upstream = self._open(client, host, port)
                if upstream is None:
                    return None
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if extra:
                    upstream.sendall(extra)
            else:
                url = urlsplit(target)
                if url.scheme != "http" or not url.hostname:
                    return _answer(client, 400, "Bad Request")
                upstream = self._open(client, url.hostname, url.port or 80)
                if upstream is None:
                    return None
                path = (url.path or "/") + (f"?{url.query}" if url.query else "")
                upstream.sendall(_forwarded(method, path, headers) + extra)
            _relay(client, upstream)
        except (OSError, ValueError):
            return None
        finally:
            for s in (client, upstream):
                if s is not None:
                    with contextlib.suppress(OSError):
                        s.close()

    def _open(self, client: socket.socket, host: str, port: int) -> socket.socket | None:
        """The upstream connection, to an address the rule accepted; None (and a 403) when refused."""
        with self._lock:
            why, addresses = self.destinations.place(host, port)
            nowhere = self.destinations.nowhere(host, port)
        if why is not None:
            log.info("refused a connection to %s:%d — %s", host, port, why)
            if not nowhere:  # a name that resolves to nothing reached nothing: Chromium's own
                self.refused(host, port, why)  # background calls on a machine without DNS, say
            _answer(client, 403, "Forbidden")
            return None
        for address in addresses:
            with contextlib.suppress(OSError):
                upstream = self.connect(address, port)
                upstream.settimeout(None)
                return upstream
        _answer(client, 502, "Bad Gateway")
        return None


def _read_head(client: socket.socket) -> tuple[bytes | None, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(8192)
        if not chunk or len(data) + len(chunk) > HEAD_MAX:
            return None, b""
        data += chunk
    head, _, extra = data.partition(b"\r\n\r\n")
    return head, extra


def _host_port(target: str, default: int) -> tuple[str, int]:
    """``host:port`` of a CONNECT (an IPv6 address in brackets)."""
    if target.startswith("["):
        host, _, rest = target[1:].partition("]")
        return host, int(rest.removeprefix(":") or default)
    host, _, port = target.rpartition(":")
    return (host, int(port)) if host else (target, default)


def _forwarded(method: str, path: str, headers: bytes) -> bytes:
    """The request as the origin server takes it: origin-form, no proxy headers;
    one request per connection (``Connection: close``) unless it upgrades (a WebSocket)."""
    lines = [h for h in headers.split(b"\r\n") if h]
    upgrade = any(h.split(b":", 1)[0].strip().lower() == b"upgrade" for h in lines)
    kept = [h for h in lines if h.split(b":", 1)[0].strip().lower() not in _HOP]
    kept.append(b"Connection: Upgrade" if upgrade else b"Connection: close")
    return f"{method} {path} HTTP/1.1\r\n".encode("latin-1") + b"\r\n".join(kept) + b"\r\n\r\n"


def _answer(client: socket.socket, status: int, reason: str) -> None:
    with contextlib.suppress(OSError):
        client.sendall(f"HTTP/1.1 {status} {reason}\r\nContent-Length: 0\r\n"
                       "Connection: close\r\n\r\n".encode())


def _relay(a: socket.socket, b: socket.socket) -> None:
    """Bytes both ways until either side closes (or both are silent for IDLE)."""
    a.settimeout(None)
    peer = {a: b, b: a}
    while True:
        ready, _, _ = select.select([a, b], [], [], IDLE)
        if not ready:
            return
        for s in ready:
            data = s.recv(65536)
            if not data:
                return
            peer[s].sendall(data)
