"""teachd mcp driven by a client nobody here wrote: Pydantic AI's MCPToolset
(on FastMCP's client) with a scripted FunctionModel as the agent, on both
protocol generations (2025-11-25 by initialize, 2026-07-28 without a back
channel). The agent loads the taught skill and replays it; every approval
is answered in the client (one question: the plan); progress only rises;
the app's own records judge the effect; the session leaves no browser."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from teachd.demo.sampleapp import SampleApp
from tests.sample_task import PASSWORD, SLUG
from tests.test_mcp import EXPECTED, with_secret


def _chromiums(mark: str) -> set[int]:
    """The Chromium processes started under this test's server (they inherit
    its environment, marked), not another test's running beside it."""
    found = set()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and f"TEACHD_TEST_MARK={mark}".encode() in (proc / "environ").read_bytes() \
                    and b"chrom" in (proc / "cmdline").read_bytes():
                found.add(int(proc.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_pydantic_ai_agent_replays_the_taught_skill_asked_once_in_its_client(taught, mode: str) -> None:
    from fastmcp.client import Client
    from fastmcp.client.elicitation import ElicitResult
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    env, port = taught
    asked: list[str] = []
    progress: list[float] = []
    during: set[int] = set()
    mark = uuid.uuid4().hex

    async def person(message: str, response_type: Any, params: Any, context: Any) -> Any:
        asked.append(message)
        return ElicitResult(action="accept", content=None)

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    def agent_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """The agent: load the skill, replay it, say how it went."""
        returns = [p for m in messages for p in getattr(m, "parts", []) if p.part_kind == "tool-return"]
        if not returns:
            return ModelResponse(parts=[ToolCallPart("load_skill", {"slug": SLUG})])
        if len(returns) == 1:
            assert "## History" in str(returns[0].content)  # it read the SKILL.md body
            return ModelResponse(parts=[ToolCallPart("run_skill", {"slug": SLUG})])
        during.update(_chromiums(mark))  # the session's browser, while the session is open
        return ModelResponse(parts=[TextPart(str(returns[-1].content))])

    async def go() -> str:
        transport = StdioTransport(command=sys.executable, args=["-m", "teachd", "mcp", "--headless"],
                                   env={**with_secret(env), "TEACHD_TEST_MARK": mark})
        client = Client(transport, elicitation_handler=person, progress_handler=on_progress, mode=mode)
        agent = Agent(FunctionModel(agent_model), toolsets=[MCPToolset(client)])
        async with agent:
            result = await agent.run("File the taxi report and add the approvers, as taught.")
        return str(result.output)

    with SampleApp(password=PASSWORD, port=port) as app:
        said = asyncio.run(go())
        assert len(app.state.reports) == 1 and {k: app.state.reports[0][k] for k in EXPECTED} == EXPECTED
        assert [g["name"] for g in app.state.groups] == ["Approvers"]
    assert ": success — every step and the success check held" in said
    [question] = asked  # 28 steps, one answer, in the client
    assert question.startswith("teachd asks: allow this run?") and "28 steps" in question
    assert len(progress) >= 28 and all(b > a for a, b in zip(progress, progress[1:], strict=False))
    for _ in range(50):  # the server process ended with the session: its browser with it
        if not _chromiums(mark):
            break
        asyncio.run(asyncio.sleep(0.2))
    assert during and not _chromiums(mark)  # it had one, and it is gone


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_pydantic_ai_agent_on_the_daemon_signs_in_step_by_step_then_cancels_its_replay(taught, mode: str) -> None:
    """Over the daemon's ``/mcp``: the agent follows SKILL.md's sign-in through
    computer_act (each action asked in its client), then replays the skill and
    gives up on it mid-run (the app holds step six): the replay stops before
    step seven, no question waits, and closing the client frees the browser."""
    from fastmcp.client import Client
    from fastmcp.client.elicitation import ElicitResult
    from fastmcp.client.transports import StreamableHttpTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from teachd.store import open_store
    from teachd.store.runs import RunStore
    from tests.sample_task import held_at
    from tests.test_mcp import settings_of
    from tests.test_server import serve

    env, port = taught
    mark = uuid.uuid4().hex
    server = serve({**with_secret(env), "TEACHD_TEST_MARK": mark})
    asked: list[str] = []

    async def person(message: str, response_type: Any, params: Any, context: Any) -> Any:
        asked.append(message)
        return ElicitResult(action="accept", content=None)

    signed_in: list[int] = []  # the app's sessions when the agent turned to run_skill

    def agent_model(app: SampleApp) -> FunctionModel:
        """The agent: load the skill, read its plan, sign in as SKILL.md says
        (the password by its masked step's anchor), then replay the rest."""

        def calls(returns: list[Any]) -> list[tuple[str, dict[str, Any]]]:
            script = [("load_skill", {"slug": SLUG}),
                      ("read_skill_file", {"slug": SLUG, "path": "references/steps.json"})]
            if len(returns) < 2:
                return script
            steps = json.loads(str(returns[1].content))["steps"]
            anchor = next(s["anchor"] for s in steps if s.get("secret") == "password")
            return [*script,
                    ("computer_act", {"action": "goto", "url": f"{app.url}/login"}),
                    ("computer_act", {"action": "type", "role": "textbox", "name": "Email",
                                      "text": "alice@example.com"}),
                    ("computer_act", {"action": "type", "skill": SLUG, "anchor": anchor,
                                      "text": "{{secret:password}}"}),
                    ("computer_act", {"action": "click", "role": "button", "name": "Sign in"}),
                    ("run_skill", {"slug": SLUG})]

        def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            returns = [p for m in messages for p in getattr(m, "parts", []) if p.part_kind == "tool-return"]
            script = calls(returns)
            if len(returns) < len(script):
                if script[len(returns)][0] == "run_skill":
                    signed_in.append(len(app.state.sessions))
                return ModelResponse(parts=[ToolCallPart(*script[len(returns)])])
            return ModelResponse(parts=[TextPart(str(returns[-1].content))])

        return FunctionModel(model)

    try:
        with SampleApp(password=PASSWORD, port=port) as app, held_at(app, "/reports/new") as (reached, hold):
            store = RunStore(open_store(settings_of(env)))

            async def go() -> list[dict[str, Any]]:
                transport = StreamableHttpTransport(f"{server.url}/mcp",
                                                    headers={"Authorization": f"Bearer {server.token}"})
                client = Client(transport, elicitation_handler=person, mode=mode)
                agent = Agent(agent_model(app), toolsets=[MCPToolset(client)])
                async with agent:
                    task = asyncio.create_task(agent.run("File the taxi report, as taught."))
                    while not reached.is_set():
                        assert not task.done(), task.result()
                        await asyncio.sleep(0.1)
                    assert signed_in == [1]  # signed in, step by step, by the agent's own calls
                    task.cancel()  # the person stops the agent
                    with pytest.raises(asyncio.CancelledError):
                        await task
                    running = [r for r in store.recent() if r["slug"] == SLUG]
                    for _ in range(100):  # cancelled by the call's cancellation, the client still open
                        if running and store.cancelled_by(running[0]["run_id"]):
                            break
                        await asyncio.sleep(0.1)
                    hold.set()
                    assert running and store.cancelled_by(running[0]["run_id"]), running
                    assert _chromiums(mark)  # the session's browser, until the client goes
                return [r for r in store.recent() if r["slug"] == SLUG]

            [replay] = asyncio.run(go())
            for _ in range(100):
                if store.recent()[0]["status"] != "running" and (mode != "legacy" or not _chromiums(mark)):
                    break
                time.sleep(0.2)
            assert app.state.reports == [] and app.state.groups == []
        assert [q.split("?")[0] for q in asked] == ["teachd asks: allow this once"] * 4 + \
            ["teachd asks: allow this run"]
        assert [r["status"] for r in store.recent() if r["slug"] == SLUG] == ["aborted"]
        assert server.api().get("/api/approvals").json()["pending"] == []
        if mode == "legacy":  # closing the client ended its session (DELETE): no browser left
            assert not _chromiums(mark)
    finally:
        server.stop()
