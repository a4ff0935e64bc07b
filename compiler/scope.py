"""The allowed scope: the exact origins (scheme, host, port) visited.

Exact, not registrable domains: ``a.example.com`` does not admit
``b.example.com``; default ports are dropped so ``:443`` equals no port.
Every URL is read by :mod:`compiler.urls` (the WHATWG parser, as Chromium
reads it), so the origin judged is the origin the browser goes to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from compiler import urls


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of a web URL, or None for about:, data:, file: …"""
    return urls.origin_of(url)


def scope_of(visited: Iterable[str]) -> list[str]:
    return sorted({o for o in (origin_of(u) for u in visited) if o})


def in_scope(url: str, scope: Iterable[str]) -> bool:
    """Is the origin Chromium would reach for ``url`` one of ``scope``'s? (The
    scope's own entries are read the same way, so an older skill's spelling
    of an origin still counts as that origin.)"""
    origin = origin_of(url)
    return origin is not None and origin in {origin_of(s) or s for s in scope}


_VARYING_SEGMENT = re.compile(
    r"^(\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?=.*\d)[0-9a-f]{8,}|.*\[masked\].*)$",
    re.I,
)


def url_pattern(url: str) -> str:
    """Origin and path with the segments that vary per run (ids) as ``*``;
    query and fragment left out, since they carry state, not place."""
    web = urls.parse_web(url)
    if web is None:
        return url
    origin, path = web.origin, web.path
    segments = ["*" if _VARYING_SEGMENT.match(s) else s for s in path.split("/")]
    return origin + "/".join(segments)


def matches_pattern(url: str, pattern: str) -> bool:
    """Does ``url`` fall under a pattern made by ``url_pattern``?"""
    got = url_pattern(url).split("/")
    want = pattern.split("/")
    return len(got) == len(want) and all(w in ("*", g) for g, w in zip(got, want, strict=True))
