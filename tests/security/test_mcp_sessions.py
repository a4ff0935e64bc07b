"""Another person's MCP session on the daemon's ``/mcp``: bob knows (or
guesses) alice's ``Mcp-Session-Id``. He can neither use it nor end it. A
session its person ends closes its browser at once, and one person cannot
fill the daemon's machine with browsers."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from teachd.config import Settings
from teachd.store import open_store
from teachd.store.users import UserStore
from tests.people import wait_for
from tests.security.daemon import chromiums_under, running_daemon

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw-attacker", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _result(r: httpx.Response) -> Any:
    """The JSON-RPC message of a response, plain JSON or one SSE event."""
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in r.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1]) if data else None
    return r.json() if r.content else None


def _open(base: str, token: str) -> tuple[httpx.Client, str]:
    c = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}", **ACCEPT}, timeout=60)
    r = c.post("/mcp", json=INIT)
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    c.headers.update({"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
    assert c.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
    return c, sid


def _call(c: httpx.Client, n: int, tool: str, args: dict[str, Any]) -> Any:
    return _result(c.post("/mcp", json={"jsonrpc": "2.0", "id": n, "method": "tools/call",
                                        "params": {"name": tool, "arguments": args}}))


def _people(tmp_path: Path) -> tuple[str, str]:
    home = tmp_path / "daemon-home"
    store = open_store(Settings(home=home, owner="alice"))
    users = UserStore(store.db)
    return users.add("bob"), users.add("carol")


def test_another_person_can_neither_use_nor_end_a_session_by_its_id(tmp_path: Path) -> None:
    (tmp_path / "daemon-home").mkdir(mode=0o700)
    with running_daemon(tmp_path, _exists_ok=True) as (api, base):
        bob, _carol = _people(tmp_path)
        alice_c, alice_sid = _open(base, api.headers["Authorization"][7:])
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {bob}", **ACCEPT,
                                                    "Mcp-Session-Id": alice_sid,
                                                    "MCP-Protocol-Version": "2025-11-25"}) as as_bob:
            assert as_bob.delete("/mcp").status_code == 404
            listed = as_bob.post("/mcp", json={"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
            assert listed.status_code == 404
            assert as_bob.get("/mcp").status_code == 404  # nor listen to its stream
        still = _result(alice_c.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        assert any(t["name"] == "computer_act" for t in still["result"]["tools"])
        assert alice_c.delete("/mcp").status_code < 300  # her own: she may end it
        assert alice_c.post("/mcp", json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).status_code == 404


def test_an_ended_session_closes_its_browser_and_one_person_has_a_few_at_most(tmp_path: Path) -> None:
    (tmp_path / "daemon-home").mkdir(mode=0o700)
    with running_daemon(tmp_path, _exists_ok=True) as (api, base):
        pid = int(json.loads((tmp_path / "daemon-home" / "daemon.json").read_text())["pid"])
        bob, carol = _people(tmp_path)
        sessions = [_open(base, bob) for _ in range(4)]
        for i, (c, _sid) in enumerate(sessions[:3]):
            done = _call(c, 10 + i, "computer_act", {"action": "snapshot"})
            assert not done["result"].get("isError"), done
        assert chromiums_under(pid) == 3
        refused = _call(sessions[3][0], 20, "computer_act", {"action": "snapshot"})
        assert refused["result"]["isError"] and "browsers open" in refused["result"]["content"][0]["text"]
        carols, _sid = _open(base, carol)  # another person is not held back by bob's
        assert not _call(carols, 30, "computer_act", {"action": "snapshot"})["result"].get("isError")
        assert chromiums_under(pid) == 4

        first, _sid = sessions[0]
        assert first.delete("/mcp").status_code < 300
        deadline = time.monotonic() + 20
        while chromiums_under(pid) != 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert chromiums_under(pid) == 3  # ended: its browser closed now, not at the daemon's stop
        def ended() -> bool:  # the run's record is closed just after its browser
            runs = httpx.get(base + "/api/runs", headers={"Authorization": f"Bearer {bob}"}).json()
            return any(r["status"] == "ended" for r in runs)

        assert wait_for(ended, 20, "the ended session's run to say so")
        again = _call(sessions[3][0], 21, "computer_act", {"action": "snapshot"})
        assert not again["result"].get("isError"), again  # a place freed up


def test_an_idle_session_is_closed_with_its_browser(env: dict[str, str]) -> None:
    """A client that vanished without ending its session: after the idle
    time its run is recorded as ended and its browser is gone."""
    import asyncio

    from mcp import Client

    from teachd.config import settings_from_env
    from teachd.mcp.server import TeachdMCP
    from teachd.mcp.session import services_for
    from teachd.store.runs import RunStore

    settings = settings_from_env({k: v for k, v in env.items() if k != "DISPLAY"})
    runs = RunStore(open_store(settings))
    server = TeachdMCP(services_for(runs, settings, headless=True), idle_after=60)

    async def go() -> list[str]:
        async with Client(server) as client:
            assert not (await client.call_tool("computer_act", {"action": "snapshot"})).is_error
            assert server.reap() == []  # just used: not idle
            [run] = list(server._runs.values())
            assert run.worker.started
            reaped = server.reap(now=time.monotonic() + 61)
            assert reaped == [run.run_id] and run.closed and not run.worker.started
            return reaped

    try:
        [rid] = asyncio.run(go())
    finally:
        server.close()
    assert next(r for r in runs.recent() if r["run_id"] == rid)["status"] == "ended"


def test_calls_naming_no_session_lose_their_browser_after_a_few_idle_minutes(env: dict[str, str]) -> None:
    """The 2026-07-28 protocol has no session to end: a person's calls share
    one run, whose browser goes after SESSIONLESS_IDLE with no call — far
    sooner than a session's (IDLE_AFTER), which DELETE or leaving can end."""
    import asyncio

    from mcp import Client

    from teachd.config import settings_from_env
    from teachd.mcp.server import IDLE_AFTER, SESSIONLESS_IDLE, TeachdMCP
    from teachd.mcp.session import services_for
    from teachd.store.runs import RunStore

    settings = settings_from_env({k: v for k, v in env.items() if k != "DISPLAY"})
    server = TeachdMCP(services_for(RunStore(open_store(settings)), settings, headless=True), idle_after=IDLE_AFTER)

    async def go() -> None:
        async with Client(server, mode="2026-07-28") as client:
            assert not (await client.call_tool("computer_act", {"action": "snapshot"})).is_error
            [run] = list(server._runs.values())
            assert server.reap(now=time.monotonic() + SESSIONLESS_IDLE - 5) == [] and run.worker.started
            assert server.reap(now=time.monotonic() + SESSIONLESS_IDLE + 1) == [run.run_id]
            assert run.closed and not run.worker.started

    try:
        asyncio.run(go())
    finally:
        server.close()


def test_the_daemon_holds_a_bounded_number_of_session_browsers_in_all(env: dict[str, str]) -> None:
    """Past its per-person caps, the daemon's machine has one of its own:
    a session that would open one browser too many is told so, and opens
    nothing (a cap of 1 here, so one Chromium shows it)."""
    import asyncio
    from types import SimpleNamespace

    from mcp.server.mcpserver.exceptions import ToolError

    from teachd.config import settings_from_env
    from teachd.mcp.server import TeachdMCP
    from teachd.mcp.session import services_for
    from teachd.store.runs import RunStore

    settings = settings_from_env({k: v for k, v in env.items() if k != "DISPLAY"})
    server = TeachdMCP(services_for(RunStore(open_store(settings)), settings, headless=True), browsers_in_all=1)

    def request(session: str) -> SimpleNamespace:  # a call of one streamable-HTTP session, as the SDK hands it over
        return SimpleNamespace(request=SimpleNamespace(headers={"mcp-session-id": session}, scope={}))

    async def go() -> None:
        assert await server.on_browser(request("one"), lambda run, b: b.page.url) == "about:blank"
        with pytest.raises(ToolError, match="MCP session browsers open, its most"):
            await server.on_browser(request("two"), lambda run, b: b.page.url)
        assert [r.worker.started for r in server._runs.values()] == [True, False]
        server.end("", "one")
        assert await server.on_browser(request("two"), lambda run, b: b.page.url) == "about:blank"

    try:
        asyncio.run(go())
    finally:
        server.close()


def test_daemon_replays_are_capped_per_person_too(store, settings: Settings) -> None:
    """Replays started on the Runs page are Chromiums on the daemon's machine
    as well: a person's fourth at once is refused (429), someone else's is not,
    and finished ones free their place."""
    import threading

    import pytest

    from teachd.core.errors import NotFound, TooMany
    from teachd.runner.secret_desk import SecretDesk
    from teachd.server.jobs import Runs
    from teachd.store.approvals import ApprovalQueue
    from teachd.store.runs import RunStore

    UserStore(store.db).add("bob")
    release = threading.Event()
    live = [threading.Thread(target=release.wait, daemon=True) for _ in range(3)]
    for t in live:
        t.start()
    threads = {f"job-{i}": ("alice", t) for i, t in enumerate(live)}
    alice = Runs(RunStore(store), settings, ApprovalQueue(store), SecretDesk(), threads)
    bob_store = store.as_person("bob")
    bob = alice.for_person(RunStore(bob_store), ApprovalQueue(bob_store), SecretDesk(), settings)
    try:
        with pytest.raises(TooMany, match="3 replays running"):
            alice.start("taught-anything", {})
        with pytest.raises(NotFound):  # past the cap: refused only because he has no such skill
            bob.start("taught-nothing-here", {})
        release.set()
        for t in live:
            t.join(5)
        with pytest.raises(NotFound):  # alice's finished replays no longer count
            alice.start("taught-nothing-here", {})
    finally:
        release.set()


def test_a_client_whose_stream_comes_back_is_not_taken_for_gone() -> None:
    """Presence ends a session only after its stream closed and nothing of
    it reopened for the grace time; a session that never streamed is left to
    DELETE and the idle timeout."""
    from teachd.mcp.presence import Presence

    gone: list[tuple[str, str]] = []
    presence = Presence(lambda person, session: gone.append((person, session)), grace=0.3)
    live, quiet = ("bob", "s1"), ("bob", "s2")
    presence.opened(live, stream=True)
    presence.opened(quiet, stream=False)
    presence.closed(quiet)
    presence.closed(live)  # the stream dropped…
    time.sleep(0.1)
    presence.opened(live, stream=True)  # …and came back in time
    time.sleep(0.5)
    assert gone == []
    presence.opened(live, stream=False)  # a call, then the stream goes: nothing open at all
    presence.closed(live)
    presence.closed(live)
    assert wait_for(lambda: gone == [live], 5, "the session that left to be ended")
    time.sleep(0.5)
    assert gone == [live]  # once
