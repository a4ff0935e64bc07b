"""Scope judged for every frame and every navigation, not the top page's URL.

The attacker's page is *in* scope; the attack goes elsewhere from it: a
cross-origin iframe the agent types into or submits, a link whose target is
off scope, a redirect, a new tab, a ``--start-url`` spelled to fool a
parser. Each must not reach the other server without a question, and a
"no" must leave that server's request log untouched — which is what these
tests read (the other server's own log), not what teachd reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from mcp import Client
from mcp_types import ElicitResult

from teachd.config import Settings, settings_from_env
from teachd.store import open_store
from teachd.store.runs import RunStore
from tests.security.webs import Site, teach, two_sites


class Person:
    """Answers each question by the first rule whose words it contains
    (else ``default``), and keeps what it was asked."""

    def __init__(self, rules: list[tuple[str, str]] | None = None, default: str = "decline") -> None:
        self.rules, self.default = rules or [], default
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        self.asked.append(str(params.message))
        answer = next((a for words, a in self.rules if words in params.message), self.default)
        return ElicitResult(action=answer, content={} if answer == "accept" else None)  # type: ignore[arg-type]


def settings_of(env: dict[str, str]) -> Settings:
    return settings_from_env({k: v for k, v in env.items() if k != "DISPLAY"})


@pytest.fixture
def sites() -> Iterator[tuple[Site, Site]]:
    with two_sites() as pair:
        yield pair


@contextlib.asynccontextmanager
async def session(env: dict[str, str], person: Person) -> AsyncIterator[Client]:
    """The owner's MCP session (``teachd mcp``), headless, with the skills of the store."""
    from teachd.mcp.server import TeachdMCP
    from teachd.mcp.session import services_for

    settings = settings_of(env)
    server = TeachdMCP(services_for(RunStore(open_store(settings)), settings, headless=True,
                                    step_timeout=3, approval_timeout=20))
    try:
        async with Client(server, mode="legacy", elicitation_callback=person) as client:
            yield client
    finally:
        server.close()


async def act(client: Client, **args: Any) -> tuple[bool, str]:
    r = await client.call_tool("computer_act", args)
    return r.is_error, "\n".join(str(getattr(c, "text", "")) for c in r.content if getattr(c, "text", None))


def ref_of(snapshot: str, role: str, name: str) -> str:
    found = re.search(rf'{role} "{re.escape(name)}"[^\n]*\[ref=(\w+)\]', snapshot)
    assert found, snapshot
    return found.group(1)


def test_typing_into_a_cross_origin_iframe_on_an_in_scope_page_asks_and_a_no_sends_nothing(
        env: dict[str, str], sites: tuple[Site, Site]) -> None:
    inside, other = sites
    teach(open_store(settings_of(env)), inside.origin + "/")
    person = Person([("let a frame open", "accept")])  # the frame may load; everything else: no

    async def go() -> list[tuple[bool, str]]:
        async with session(env, person) as client:
            done = [await act(client, action="goto", url=inside.origin + "/framed")]
            snap = (await act(client, action="snapshot"))[1]
            note, send = ref_of(snap, "textbox", "Note"), ref_of(snap, "button", "Send")
            done.append(await act(client, action="type", ref=note, text="for the other site"))
            done.append(await act(client, action="press", ref=note, key="Enter"))
            done.append(await act(client, action="click", ref=send))
            return done

    goto, typed, pressed, clicked = asyncio.run(go())
    assert not goto[0], goto[1]
    for refused in (typed, pressed, clicked):
        assert refused[0] and "not approved" in refused[1] and other.origin in refused[1], refused
    assert other.log == [("GET", "/frame", "")]  # the frame was shown (asked); nothing typed, nothing posted
    asked = [q for q in person.asked if "type" in q or "click" in q or "press" in q]
    assert len(asked) == 3 and all("outside the allowed scope" in q for q in asked)


def test_a_form_post_from_the_cross_origin_frame_is_stopped_before_it_is_sent(
        env: dict[str, str], sites: tuple[Site, Site]) -> None:
    """Even with the typing and the click allowed, the frame's navigation to
    post the form asks on its own; a no aborts the POST before it leaves."""
    inside, other = sites
    teach(open_store(settings_of(env)), inside.origin + "/")
    person = Person([("let a frame open " + other.origin + "/frame", "accept"), ("type", "accept"),
                     ("click", "accept")])

    async def go() -> tuple[bool, str]:
        async with session(env, person) as client:
            await act(client, action="goto", url=inside.origin + "/framed")
            snap = (await act(client, action="snapshot"))[1]
            typed = await act(client, action="type", ref=ref_of(snap, "textbox", "Note"), text="hello")
            assert not typed[0], typed
            return await act(client, action="click", ref=ref_of(snap, "button", "Send"))

    clicked = asyncio.run(go())
    assert clicked[0] and "stopped: a frame would have opened " + other.origin + "/post" in clicked[1]
    assert "nothing was sent to it" in clicked[1]
    assert [m for m, _p, _b in other.log] == ["GET"]  # no POST reached the other server
    assert any("let a frame open " + other.origin + "/post" in q for q in person.asked)


def test_a_link_redirect_or_new_tab_leading_off_scope_is_not_loaded_without_a_question(
        env: dict[str, str], sites: tuple[Site, Site]) -> None:
    inside, other = sites
    teach(open_store(settings_of(env)), inside.origin + "/")
    person = Person()  # every question: no

    async def go() -> list[tuple[bool, str]]:
        async with session(env, person) as client:
            out = []
            for name in ("Away", "Bounce", "Away in a tab"):
                assert not (await act(client, action="goto", url=inside.origin + "/links"))[0]
                out.append(await act(client, action="click", role="link", name=name))
            return out

    results = asyncio.run(go())
    for is_error, said in results:
        assert is_error and "stopped:" in said and other.origin + "/landed" in said, said
        assert "nothing was sent to it" in said
    assert other.log == []  # not the link, not the redirect's target, not the new tab
    assert ("GET", "/redirect-away", "") in inside.log  # the in-scope hop itself went ahead
    assert sum(1 for q in person.asked if other.origin + "/landed" in q) == 3


def test_an_approved_off_scope_goto_is_asked_once_and_then_opens(env: dict[str, str],
                                                                  sites: tuple[Site, Site]) -> None:
    """The guard is a question, not a wall: allowed once, the page opens (and is not asked twice)."""
    inside, other = sites
    teach(open_store(settings_of(env)), inside.origin + "/")
    person = Person(default="accept")

    async def go() -> tuple[bool, str]:
        async with session(env, person) as client:
            return await act(client, action="goto", url=other.origin + "/landed")

    opened = asyncio.run(go())
    assert not opened[0] and "Title: Landed" in opened[1], opened
    assert other.paths() == ["/landed"] and len(person.asked) == 1


@pytest.mark.parametrize("spelling", [
    "http://127.0.0.1:{other}\\@127.0.0.1:{inside}/",
    "http://127.0.0.1:{other}#@127.0.0.1:{inside}/",
    "http://0x7f.1:{other}/",
    "http:\\\\127.0.0.1:{other}\\",
    "http://127.0.0.1:{inside}/redirect-away",
])
def test_a_replay_start_url_outside_the_scope_asks_and_a_no_reaches_nothing(
        cli: Any, env: dict[str, str], sites: tuple[Site, Site], spelling: str) -> None:
    inside, other = sites
    slug = teach(open_store(settings_of(env)), inside.origin + "/")
    url = spelling.format(inside=inside.port, other=other.port)
    r = cli("run", slug, "--start-url", url, "--headless", input="")  # end of input: deny
    said = r.err + r.out
    assert r.code != 0 and ("not approved" in said or "stopped:" in said) and other.origin in said, r
    assert "aborted" in r.out  # a policy stop, asked first; not a failure of the page
    assert other.log == []


def test_a_replay_inside_its_scope_still_runs(cli: Any, env: dict[str, str], sites: tuple[Site, Site]) -> None:
    inside, _other = sites
    slug = teach(open_store(settings_of(env)), inside.origin + "/")
    r = cli("run", slug, "--start-url", f"HTTP://127.0.0.1:{inside.port}/", "--headless", input="")
    assert r.code == 0, r
    assert inside.paths() == ["/"]


@pytest.mark.parametrize("url", ["javascript:alert(1)", "file:///etc/passwd", "data:text/html,hi", "http://"])
def test_a_start_url_that_is_not_a_web_address_is_refused_in_one_line(cli: Any, env: dict[str, str],
                                                                        url: str) -> None:
    slug = teach(open_store(settings_of(env)), "http://127.0.0.1:9/")
    r = cli("run", slug, "--start-url", url, "--headless")
    assert r.code != 0 and "--start-url must be an http(s) URL" in r.err and r.err.count("\n") == 1, r
