"""The allowed scope: the exact origins (scheme, host, port) visited.

Exact, not registrable domains: ``a.example.com`` does not admit
``b.example.com``; default ports are dropped so ``:443`` equals no port.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
_WEB = ("http", "https")


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of a web URL, or None for about:, data:, file: …"""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _WEB or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def scope_of(urls: Iterable[str]) -> list[str]:
    return sorted({o for o in (origin_of(u) for u in urls) if o})


def in_scope(url: str, scope: Iterable[str]) -> bool:
    origin = origin_of(url)
    return origin is not None and origin in set(scope)


_VARYING_SEGMENT = re.compile(
    r"^(\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?=.*\d)[0-9a-f]{8,}|.*\[masked\].*)$",
    re.I,
)


def url_pattern(url: str) -> str:
    """Origin and path with the segments that vary per run (ids) as ``*``;
    query and fragment left out, since they carry state, not place."""
    origin = origin_of(url)
    if origin is None:
        return url
    path = urlsplit(url).path or "/"
    segments = ["*" if _VARYING_SEGMENT.match(s) else s for s in path.split("/")]
    return origin + "/".join(segments)


def matches_pattern(url: str, pattern: str) -> bool:
    """Does ``url`` fall under a pattern made by ``url_pattern``?"""
    got = url_pattern(url).split("/")
    want = pattern.split("/")
    return len(got) == len(want) and all(w in ("*", g) for g, w in zip(got, want, strict=True))
