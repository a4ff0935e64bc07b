"""The egress guard: the one way teachd reaches the network.

- http and https only; proxy variables are ignored (``trust_env=False``).
- The host is resolved once; *every* address in the answer is checked (an
  answer that mixes a public and a private address is refused), and the
  connection goes to the checked address — the original Host header and TLS
  SNI kept, so the certificate is still verified for the name. No second
  lookup can swap the address (DNS rebinding).
- Redirects are followed here, each hop checked again: at most 5, never from
  https to http.
- Sizes are counted on the raw bytes as they arrive (compressed bodies are
  refused, so nothing expands behind the count); connect and read timeouts,
  and an overall deadline.

What cannot exist in tests — the public internet — is injected: a
``Resolver`` (name → addresses) and an httpcore network backend (how an
address is dialled). The address policy itself is never injected.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

import httpcore
import httpx

from compiler import urls
from teachd.core.errors import BadInput, LimitExceeded, NotFound, PolicyStop, Unavailable
from teachd.remote.addresses import literal_ip, name_refusal, refusal

MAX_REDIRECTS = 5
USER_AGENT = "teachd (skill import)"


class Resolver(Protocol):
    def resolve(self, host: str, port: int) -> list[str]: ...


class SystemResolver:
    def resolve(self, host: str, port: int) -> list[str]:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise Unavailable(f"cannot resolve {host}: {exc.strerror or exc}") from None
        return sorted({str(info[4][0]) for info in infos})


@dataclass(frozen=True)
class Limits:
    connect: float = 5.0
    read: float = 15.0
    deadline: float = 60.0  # seconds for one request, redirects and body included


@dataclass(frozen=True)
class Fetched:
    url: str  # where the body came from, after redirects
    status: int
    content_type: str
    body: bytes


class GuardedTransport(httpx.BaseTransport):
    """httpx's transport, with the address checked and pinned for every request."""

    def __init__(self, resolver: Resolver, backend: httpcore.NetworkBackend | None = None,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        self.resolver = resolver
        self._pool = httpcore.ConnectionPool(ssl_context=ssl_context or ssl.create_default_context(),
                                             network_backend=backend, retries=0)

    def address_for(self, scheme: str, host: str, port: int | None) -> str:
        """The one checked address to connect to, or PolicyStop saying why not."""
        if scheme not in ("http", "https"):
            raise PolicyStop(f"only http and https may be fetched, not {scheme}:")
        why = name_refusal(host)
        if why:
            raise PolicyStop(f"{host} is refused: {why}")
        literal = literal_ip(host)
        if literal is not None:
            addresses = [str(literal)]
        else:
            addresses = self.resolver.resolve(host, port or (443 if scheme == "https" else 80))
            if not addresses:
                raise Unavailable(f"{host} has no address")
        for address in addresses:
            ip = literal_ip(address)
            why = refusal(ip) if ip is not None else "not an address"
            if why:
                shown = host if literal is not None else f"{host} ({address})"
                raise PolicyStop(f"{shown} is refused: {why}; only public addresses are fetched")
        return addresses[0]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        address = self.address_for(url.scheme, url.host, url.port)
        target = url.raw_path
        pinned = httpcore.URL(scheme=url.raw_scheme, host=address.encode("ascii"),
                              port=url.port, target=target)
        extensions = dict(request.extensions)
        if url.scheme == "https":
            extensions["sni_hostname"] = url.host  # the certificate is verified for the name
        core = httpcore.Request(method=request.method, url=pinned, headers=request.headers.raw,
                                content=request.stream, extensions=extensions)
        with _httpx_errors():
            resp = self._pool.handle_request(core)
        return httpx.Response(status_code=resp.status, headers=resp.headers,
                              stream=_Stream(resp), extensions=resp.extensions)

    def close(self) -> None:
        self._pool.close()


@contextlib.contextmanager
def _httpx_errors() -> Iterator[None]:
    """httpcore's failures as httpx's (what httpx's own transport does)."""
    try:
        yield
    except httpcore.TimeoutException as exc:
        raise httpx.TimeoutException(str(exc)) from exc
    except httpcore.ConnectError as exc:
        raise httpx.ConnectError(str(exc)) from exc
    except (httpcore.NetworkError, httpcore.ProtocolError) as exc:
        raise httpx.TransportError(str(exc)) from exc


class _Stream(httpx.SyncByteStream):
    def __init__(self, resp: httpcore.Response) -> None:
        self._resp = resp

    def __iter__(self) -> Iterator[bytes]:
        with _httpx_errors():
            yield from self._resp.iter_stream()

    def close(self) -> None:
        self._resp.close()


class Egress:
    def __init__(self, resolver: Resolver | None = None, backend: httpcore.NetworkBackend | None = None,
                 ssl_context: ssl.SSLContext | None = None, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self.transport = GuardedTransport(resolver or SystemResolver(), backend, ssl_context)
        timeout = httpx.Timeout(self.limits.read, connect=self.limits.connect)
        self.client = httpx.Client(transport=self.transport, trust_env=False, follow_redirects=False,
                                   timeout=timeout, headers={"User-Agent": USER_AGENT,
                                                             "Accept-Encoding": "identity"})

    def get(self, url: str, max_bytes: int, headers: Mapping[str, str] | None = None) -> Fetched:
        """GET ``url`` (redirects followed and checked), its body at most ``max_bytes``."""
        deadline = time.monotonic() + self.limits.deadline
        current = self.canonical(url)
        for _hop in range(MAX_REDIRECTS + 1):
            try:
                with self.client.stream("GET", current, headers=dict(headers or {})) as resp:
                    if resp.is_redirect:
                        location = resp.headers.get("location", "")
                        nxt = urls.join(current, location)
                        if nxt is None:
                            raise PolicyStop(f"{current} redirects to {location!r}, not http(s): refused")
                        if current.startswith("https:") and not nxt.startswith("https:"):
                            raise PolicyStop(f"{current} redirects from https to {nxt}: refused")
                        current = self.canonical(nxt)
                        continue
                    if resp.status_code == 404:
                        raise NotFound(f"{current} was not found (404)")
                    if resp.status_code >= 400:
                        raise Unavailable(f"{current} answered {resp.status_code}")
                    body = self._body(resp, current, max_bytes, deadline)
                    return Fetched(current, resp.status_code, resp.headers.get("content-type", ""), body)
            except httpx.InvalidURL as exc:
                raise BadInput(f"not a URL that can be fetched: {current} ({exc})") from None
            except httpx.TimeoutException:
                raise Unavailable(f"{current} timed out") from None
            except httpx.TransportError as exc:
                raise Unavailable(f"cannot fetch {current}: {_one_line(exc)}") from None
        raise PolicyStop(f"{url} redirects more than {MAX_REDIRECTS} times: refused")

    def canonical(self, url: str) -> str:
        """``url`` as the WHATWG parser (Chromium's reading) serialises it, its
        address checked; httpx is handed that serialisation and must read the
        same host and port from it, so no two parsers can disagree on where
        a request goes (``http://a:1\\@b:2/`` is ``a:1`` to both)."""
        web = urls.parse_web(url)
        if web is None:
            scheme = url.split(":", 1)[0].lower() if ":" in url else ""
            if scheme and scheme not in urls.WEB_SCHEMES and scheme.isalpha():
                raise PolicyStop(f"only http and https may be fetched, not {scheme}:")
            raise BadInput(f"not a URL that can be fetched: {url}")
        try:
            seen = httpx.URL(web.href)
        except httpx.InvalidURL as exc:
            raise BadInput(f"not a URL that can be fetched: {url} ({exc})") from None
        if (seen.host.lower(), seen.port or web.effective_port) != (web.hostname, web.effective_port):
            raise PolicyStop(f"{url} is read differently by a browser and the fetcher: refused")
        self.transport.address_for(web.scheme, web.hostname, web.port)
        return web.href

    @staticmethod
    def _body(resp: httpx.Response, url: str, max_bytes: int, deadline: float) -> bytes:
        encoding = resp.headers.get("content-encoding", "identity").lower()
        if encoding not in ("", "identity"):
            raise PolicyStop(f"{url} sent a {encoding}-compressed body; only plain bodies are accepted")
        length = resp.headers.get("content-length")
        if length and length.isdigit() and int(length) > max_bytes:
            raise LimitExceeded(f"{url} is {int(length)} bytes, over the {max_bytes}-byte limit")
        chunks, total = [], 0
        for chunk in resp.iter_raw():
            total += len(chunk)
            if total > max_bytes:
                raise LimitExceeded(f"{url} is over the {max_bytes}-byte limit")
            if time.monotonic() > deadline:
                raise Unavailable(f"{url} took longer than the deadline")
            chunks.append(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        self.client.close()


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
