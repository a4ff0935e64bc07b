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


def _masked(path: str) -> str:
    return "/".join("*" if _VARYING_SEGMENT.match(s) else s for s in path.split("/"))


def hash_route(url: str) -> str | None:
    """A single-page app's page: the fragment when it is a route (``#/items/3``,
    ``#!/items/3``), without its own query; None for an in-page anchor
    (``#section``) or no fragment."""
    fragment = url.partition("#")[2]
    if not fragment.startswith(("/", "!/")):
        return None
    return fragment.partition("?")[0]


def url_pattern(url: str) -> str:
    """Origin and path with the segments that vary per run (ids) as ``*``,
    and a hash route (``#/items/*``) the same way — on a single-page app the
    route is the page; the query and any other fragment are left out, since
    they carry state, not place."""
    web = urls.parse_web(url)
    if web is None:
        return url
    route = hash_route(url)
    return web.origin + _masked(web.path) + ("" if route is None else "#" + _masked(route))


def _same_place(got: str, want: str) -> bool:
    g, w = got.split("/"), want.split("/")
    return len(g) == len(w) and all(b in ("*", a) for a, b in zip(g, w, strict=True))


def matches_pattern(url: str, pattern: str) -> bool:
    """Does ``url`` fall under a pattern made by ``url_pattern``? A pattern
    without a hash route (a page that had none, or a skill compiled before
    routes were places) admits any fragment."""
    got_path, _, got_route = url_pattern(url).partition("#")
    want_path, routed, want_route = pattern.partition("#")
    return _same_place(got_path, want_path) and (not routed or _same_place(got_route, want_route))


def _masked_pair(pair: str) -> str:
    name, eq, value = pair.partition("=")
    return name + eq + ("*" if _VARYING_SEGMENT.match(value) else value)


def link_shape(href: str) -> str:
    """What a link's address says of the place it leads to, not of the
    record: its path, query values and hash route with ids, hashes and
    counters as ``*`` (``/items/1805…`` and ``/items/afd9…`` are one shape;
    ``?action=edit`` and ``?action=delete`` are not). Two links of one shape go to the same
    kind of page; the record is told by the link's name, not its id."""
    path, _, rest = href.partition("#")
    path, _, query = path.partition("?")
    pairs = sorted(_masked_pair(pair) for pair in query.split("&") if pair)
    route = hash_route("#" + rest) if rest else None
    fragment = "" if not rest else "#" + (rest if route is None else _masked(route))  # #delete stays itself
    return _masked(path) + ("?" + "&".join(pairs) if pairs else "") + fragment
