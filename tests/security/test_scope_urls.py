"""One URL reader, held against the browser that follows the URL.

An attacker spells a URL so that teachd's check reads one origin and
Chromium goes to another (``http://127.0.0.1:OTHER\\@127.0.0.1:IN/`` was
host IN to Python's urlsplit, OTHER to Chromium). Every spelling here is
read by teachd (``compiler.urls`` / ``compiler.scope``) *and* by real
Chromium — its own URL parser (``new URL(u).origin``) and, for the ones it
can reach, the server it actually lands on — and the two must agree; and
the scope guard must refuse every spelling Chromium would take outside the
scope.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from compiler.scope import in_scope, origin_of, scope_of, url_pattern
from compiler.urls import join, parse_web
from tests.security.webs import Site, two_sites

HOST_RULES = "--host-resolver-rules=MAP *.test 127.0.0.1,MAP *.test. 127.0.0.1"  # names for the IDNA spellings, all on loopback


@pytest.fixture(scope="module")
def sites() -> Iterator[tuple[Site, Site]]:
    with two_sites() as pair:
        yield pair


@pytest.fixture(scope="module")
def chromium(sites: tuple[Site, Site]) -> Iterator[Any]:
    """One real Chromium (Debian's) for the module; a fresh page per use."""
    from playwright.sync_api import sync_playwright

    from recorder.browser import chromium_path, launch_args

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(None, headless=True), headless=True,
                                     args=[*launch_args(None), HOST_RULES])
        try:
            yield browser
        finally:
            browser.close()


def spellings(inside: int, other: int) -> list[str]:
    """Ways to write a URL whose origin is not what it seems (and a few plain ones)."""
    return [
        f"http://127.0.0.1:{other}\\@127.0.0.1:{inside}/",  # the reported one
        f"http://127.0.0.1:{other}\\\\@127.0.0.1:{inside}/x",
        f"http://127.0.0.1:{other}/\\@127.0.0.1:{inside}/",
        f"http://127.0.0.1:{inside}@127.0.0.1:{other}/",  # userinfo
        f"http://a:b@c@127.0.0.1:{other}/",
        f"http://127.0.0.1:{other}#@127.0.0.1:{inside}/",
        f"http://127.0.0.1:{other}?@127.0.0.1:{inside}/",
        f"http:\\\\127.0.0.1:{other}\\x",
        f"http:/127.0.0.1:{other}/",
        f"http:127.0.0.1:{other}/",
        f"http://127.0.\t0.1:{other}/",  # tab and newline inside the host and port
        f"http://127.0.0.1:{str(other)[:2]}\n{str(other)[2:]}/",
        f" http://127.0.0.1:{other}/ ",
        f"HTTP://127.0.0.1:{other}/UPPER",
        f"http://0x7f.1:{other}/",  # IPv4 number forms
        f"http://2130706433:{other}/",
        f"http://0177.0.0.1:{other}/",
        f"http://127.1:{other}/",
        f"http://127.0.0.1.:{other}/",  # trailing dot on an address
        f"http://%31%32%37.0.0.1:{other}/",  # percent-encoded host
        f"http://127%2E0%2E0%2E1:{other}/",
        f"http://127。0。0。1:{other}/",  # ideographic full stops
        f"http://１２７.０.０.１:{other}/",  # fullwidth digits
        f"http://bücher.test:{other}/",  # IDNA
        f"http://xn--bcher-kva.test:{other}/",
        f"http://BÜCHER.TEST:{other}/",
        f"http://inside.test.:{other}/",  # a trailing dot keeps a different origin
        f"http://inside.test:{other}/",
        f"http://inside。test:{other}/",
        f"http://127.0.0.1:0{other}/",  # leading zero in the port
        f"http://127.0.0.1:{inside}/",
        "http://example.test:80/",  # default ports drop; explicit others stay
        "https://example.test:443/",
        "https://example.test:80/",
        "http://[::1]:81/",
        "http://[0:0::1]/",
        "http://[::ffff:127.0.0.1]/",
        "about:blank",
        "data:text/html,hi",
        "javascript:alert(1)",
        "file:///etc/passwd",
    ]


def chromium_origin(page: Any, url: str) -> str | None:
    """Chromium's own URL parser's answer (the one its navigation uses)."""
    got = page.evaluate("u => { try { return new URL(u).origin } catch (e) { return 'invalid' } }", url)
    return str(got) if str(got).startswith(("http://", "https://")) else None  # file: is "file://" there


def test_every_spelling_reads_as_the_origin_chromium_reads(chromium: Any, sites: tuple[Site, Site]) -> None:
    inside, other = sites
    page = chromium.new_page()
    try:
        disagreements = [(u, origin_of(u), chromium_origin(page, u))
                         for u in spellings(inside.port, other.port)
                         if origin_of(u) != chromium_origin(page, u)]
    finally:
        page.close()
    assert disagreements == []


def test_chromium_lands_on_the_origin_we_read_and_the_guard_refuses_it(chromium: Any,
                                                                          sites: tuple[Site, Site]) -> None:
    """Open each spelling in Chromium: the server that received the request,
    and the URL the page shows, are the origin teachd read; whenever that is
    the other server, the inside skill's scope does not admit the URL."""
    inside, other = sites
    scope = [inside.origin]
    page = chromium.new_page()
    landed_outside = 0
    try:
        for url in spellings(inside.port, other.port):
            web = parse_web(url)
            if web is None or web.port not in (inside.port, other.port):
                continue  # not a place these two servers can show
            before = (len(inside.log), len(other.log))
            page.goto(url, wait_until="domcontentloaded")
            reached = inside if len(inside.log) > before[0] else other if len(other.log) > before[1] else None
            assert reached is not None, url
            assert origin_of(page.url) == origin_of(url), (url, page.url)
            assert reached.port == web.port, url
            if reached is other:
                landed_outside += 1
                assert not in_scope(url, scope), f"the guard would let {url!r} reach {other.origin}"
            else:
                assert in_scope(url, scope), url
    finally:
        page.close()
    assert landed_outside >= 25  # the bypass spellings really went to the other server


@pytest.mark.parametrize(("url", "origin"), [
    ("http://127.0.0.1:1\\@127.0.0.1:2/", "http://127.0.0.1:1"),
    ("https://EXAMPLE.com:443/a", "https://example.com"),
    ("http://example.com:8080", "http://example.com:8080"),
    ("https://bücher.de./x", "https://xn--bcher-kva.de."),
    ("http://[0:0:0:0:0:0:0:1]:8080/", "http://[::1]:8080"),
    ("http://0x7f000001/", "http://127.0.0.1"),
    ("http://u:p@h.example/", "http://h.example"),
    ("about:blank", None), ("null", None), ("ftp://example.com/", None), ("", None), ("http://", None),
])
def test_origin_of_reads_as_the_whatwg_parser(url: str, origin: str | None) -> None:
    assert origin_of(url) == origin


def test_ordinary_urls_keep_the_origins_and_patterns_of_existing_skills() -> None:
    """What recordings hold (Chromium's own serialisation) comes out exactly as before."""
    assert scope_of(["https://a.example.com/x", "https://a.example.com:443/y", "http://127.0.0.1:8712/z",
                     "about:blank"]) == ["http://127.0.0.1:8712", "https://a.example.com"]
    assert url_pattern("https://a.example.com/reports/123/edit?x=1#f") == "https://a.example.com/reports/*/edit"
    assert url_pattern("http://127.0.0.1:8712") == "http://127.0.0.1:8712/"
    assert in_scope("https://A.EXAMPLE.COM:443/", ["https://a.example.com"])


def test_a_redirect_location_is_joined_as_a_browser_joins_it() -> None:
    assert join("http://a.example/x/y", "\\\\evil.example/z") == "http://evil.example/z"
    assert join("https://a.example/x", "//b.example:8443/") == "https://b.example:8443/"
    assert join("https://a.example/x", "javascript:alert(1)") is None


class Refuse:
    """A person who says no to every question, and remembers them."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def ask(self, request: Any) -> Any:
        from teachd.runner.gate import Answer

        self.asked.append(request.describe())
        return Answer(request.id, False)


def test_a_skill_with_no_scope_recorded_has_no_page_in_scope(chromium: Any, sites: tuple[Site, Site]) -> None:
    """``scope: []`` (an imported or hand-made skill) once meant no guard at
    all: its replay opened anything, a ``run`` answer covering it. Now every
    page it would open asks, and a no reaches nothing."""
    from compiler.plan import PlanStep, Procedure
    from recorder.browser import CAPTURE_JS
    from teachd.core.errors import PolicyStop
    from teachd.runner.gate import Gate
    from teachd.runner.replay import Replayer

    _inside, other = sites
    before = len(other.log)
    context = chromium.new_context()
    context.add_init_script(path=str(CAPTURE_JS))
    page = context.new_page()
    proc = Procedure(start_url=other.origin + "/", steps=[PlanStep(1, "goto", other.origin + "/")], anchors={},
                     scope=[], success={}, parameters={})
    person = Refuse()
    try:
        with pytest.raises(PolicyStop):
            Replayer(context, page, proc, Gate(person), {}, lambda _n: "", step_timeout=2).run()
    finally:
        context.close()
    assert person.asked and "outside the skill's allowed scope (none recorded" in person.asked[0], person.asked
    assert other.log[before:] == []
