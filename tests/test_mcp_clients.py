"""teachd mcp driven by a client nobody here wrote: Pydantic AI's MCPToolset
(on FastMCP's client) with a scripted FunctionModel as the agent, on both
protocol generations (2025-11-25 by initialize, 2026-07-28 without a back
channel). The agent loads the taught skill and replays it; every approval
is answered in the client (one question: the plan); progress only rises;
the app's own records judge the effect; the session leaves no browser."""

from __future__ import annotations

import asyncio
import sys
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
