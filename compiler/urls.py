"""The one URL reader of teachd: a URL read the way Chromium reads it.

Every decision about *where* a URL goes — the scope guard, ``--start-url``,
health checks, MCP ``goto``, the egress guard — reads the URL here, with the
WHATWG URL Standard's parser (``ada_url``, the parser Node.js uses), never
with :func:`urllib.parse.urlsplit`. The two disagree exactly where an attack
lives: ``http://127.0.0.1:1\\@127.0.0.1:2/`` is host ``127.0.0.1:2`` to
Python and ``127.0.0.1:1`` to Chromium (a backslash is a slash in a special
scheme); tabs and newlines are dropped; ``0x7f.1`` and ``2130706433`` are
``127.0.0.1``; Unicode dots and IDNA names become punycode; default ports
disappear; a trailing dot stays (it names a different origin).

Pure: parsing only (no clock, environment or network), so the compiler may
use it and its output stays deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass

import ada_url

WEB_SCHEMES = ("http", "https")


@dataclass(frozen=True)
class WebURL:
    """An http(s) URL as the browser will use it."""

    href: str
    scheme: str  # "http" | "https"
    host: str  # ASCII; IPv6 in brackets; IPv4 in dotted decimal
    port: int | None  # None: the scheme's default port
    path: str  # percent-encoded, dot segments resolved, never empty

    @property
    def origin(self) -> str:
        """``scheme://host[:port]``: what the same-origin policy compares."""
        return f"{self.scheme}://{self.host}" + (f":{self.port}" if self.port is not None else "")

    @property
    def hostname(self) -> str:
        """The host without IPv6 brackets (what a resolver or address check takes)."""
        return self.host[1:-1] if self.host.startswith("[") else self.host

    @property
    def effective_port(self) -> int:
        return self.port if self.port is not None else (443 if self.scheme == "https" else 80)


def parse_web(url: str, base: str | None = None) -> WebURL | None:
    """``url`` (resolved against ``base`` when given) as Chromium reads it, or
    None when it is not an http(s) URL Chromium would open (about:, data:,
    file:, javascript:, or no URL at all)."""
    try:
        parsed = ada_url.URL(url, base) if base is not None else ada_url.URL(url)
    except (ValueError, TypeError):
        return None
    scheme = parsed.protocol.removesuffix(":")
    if scheme not in WEB_SCHEMES or not parsed.hostname:
        return None
    port = int(parsed.port) if parsed.port else None
    return WebURL(parsed.href, scheme, parsed.hostname, port, parsed.pathname or "/")


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of a web URL as Chromium would reach it; None
    for about:, data:, file: … (and for the opaque origin ``null``)."""
    web = parse_web(url)
    return web.origin if web is not None else None


def join(base: str, ref: str) -> str | None:
    """``ref`` (a redirect's Location, a link) resolved against ``base``, as a browser does."""
    web = parse_web(ref, base)
    return web.href if web is not None else None
