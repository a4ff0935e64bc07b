"""Faults under real work (issue 27): a piece of the machine goes away
while teachd is in the middle of something, and teachd says so and goes on."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
import uuid

from mcp import Client

from teachd.demo.sampleapp import SampleApp
from teachd.store import open_store
from teachd.store.runs import RunStore
from tests.sample_task import PASSWORD, SLUG, held_at
from tests.test_mcp import Person, settings_of, text, with_secret
from tests.test_mcp_clients import _chromiums


def test_chromium_killed_mid_replay_halts_naming_the_step_and_the_next_call_gets_a_fresh_browser(taught) -> None:
    """The replay is held at the report form (step 6); every Chromium process
    of this session is killed. The run halts naming its step and "the browser
    went away", its record says so, the app kept no report, and the
    session's next call opens a new browser and works."""
    from teachd.mcp.server import TeachdMCP
    from teachd.mcp.session import services_for

    env, port = taught
    mark = uuid.uuid4().hex
    settings = settings_of({**with_secret(env), "TEACHD_TEST_MARK": mark})
    runs = RunStore(open_store(settings))
    server = TeachdMCP(services_for(runs, settings, headless=True, step_timeout=5, approval_timeout=20))

    async def go(app: SampleApp, reached: object) -> tuple[object, object, set[int]]:
        async with Client(server, mode="legacy", elicitation_callback=Person("accept")) as client:
            replay = asyncio.ensure_future(client.call_tool("run_skill", {"slug": SLUG}))
            while not reached.is_set():  # type: ignore[attr-defined]
                await asyncio.sleep(0.1)
            killed = _chromiums(mark)
            for pid in killed:
                os.kill(pid, signal.SIGKILL)
            result = await asyncio.wait_for(replay, 60)
            again = await client.call_tool("computer_act", {"action": "goto", "url": f"{app.url}/login"})
            return result, again, killed

    try:
        with SampleApp(password=PASSWORD, port=port) as app, held_at(app, "/reports/new") as (reached, _hold):
            result, again, killed = asyncio.run(go(app, reached))
            assert killed
            assert app.state.reports == []
    finally:
        server.close()
    said = text(result)
    assert result.is_error and "the browser went away" in said, said  # type: ignore[attr-defined]
    halted = next(line for line in said.splitlines() if line.startswith("halted at step"))
    assert halted.startswith("halted at step 6:"), said
    assert not again.is_error, text(again)  # type: ignore[attr-defined]
    record = runs.one(re.search(r"run (run-[\w-]+):", said).group(1))  # type: ignore[union-attr]
    assert record["status"] == "failure" and "the browser went away" in record["message"], record
    time.sleep(0.5)
    assert not _chromiums(mark), "the session's browsers outlived it"
