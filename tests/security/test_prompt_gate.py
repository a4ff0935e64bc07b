"""``/skill:<name>`` (``prompts/get skill:<slug>``), the ``skill://``
resource and the ``read_skill_file`` tool are ``load_skill``'s twins: the
attacker's way round the gate would be to have the agent fetch a skill
requiring approval by one of them — its body in hand, the gate never armed
— then act in the browser freely. Each loads the skill into the session
exactly as ``load_skill`` does: every later ``computer_act`` asks, and the
run's record lists the skill."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import Client
from mcp_types import ElicitResult

from teachd.config import settings_from_env
from teachd.core.approval import Approval
from teachd.core.models import SkillContent
from teachd.store import open_store
from teachd.store.runs import RunStore

SLUG = "pay-the-invoice"


class NoOne:
    """The person is away: every question is declined (no approval)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        self.asked.append(params.message)
        return ElicitResult(action="decline")


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


def _gated_skill(env: dict[str, str]) -> RunStore:
    settings = settings_from_env({k: v for k, v in env.items() if k != "DISPLAY"})
    store = open_store(settings)
    store.create(SLUG, SkillContent(name="Pay the invoice", description="Pays the open invoice.",
                                    instructions="# Pay\n\nOpen the invoice and press Pay.\n",
                                    approval=Approval(True, ("computer_act",))))
    return RunStore(store)


def _served(env: dict[str, str], runs: RunStore) -> Any:
    from teachd.mcp.server import TeachdMCP
    from teachd.mcp.session import services_for

    settings = settings_from_env({k: v for k, v in env.items() if k != "DISPLAY"})
    return TeachdMCP(services_for(runs, settings, headless=True, approval_timeout=20))


async def _body(client: Client, way: str) -> str:
    """The skill's body, fetched the way an agent might."""
    if way == "prompt":
        return str((await client.get_prompt(f"skill:{SLUG}", {})).messages[0].content.text)
    if way == "resource":
        return str((await client.read_resource(f"skill://{SLUG}")).contents[0].text)
    return _text(await client.call_tool("read_skill_file", {"slug": SLUG, "path": "SKILL.md"}))


@pytest.mark.parametrize("way", ["prompt", "resource", "read_skill_file"])
def test_getting_a_skills_body_any_way_arms_its_gate_as_load_skill_does(env: dict[str, str], way: str) -> None:
    runs = _gated_skill(env)
    server, person = _served(env, runs), NoOne()

    async def go() -> tuple[Any, int, str, Any]:
        async with Client(server, mode="legacy", elicitation_callback=person) as client:
            before = await client.call_tool("computer_act", {"action": "snapshot"})
            asked_before = len(person.asked)
            body = await _body(client, way)
            after = await client.call_tool("computer_act", {"action": "snapshot"})
            return before, asked_before, body, after

    try:
        before, asked_before, body, after = asyncio.run(go())
        [run] = list(server._runs.values())
        recorded = run.session.versions()
    finally:
        server.close()
    assert not before.is_error and asked_before == 0  # nothing loaded yet: no skill's gate
    assert "press Pay" in body  # the body was handed out…
    assert after.is_error and "not approved" in _text(after)  # …so the next act asks, and no one said yes
    assert len(person.asked) == 1 and SLUG in person.asked[0]
    assert "a loaded skill requires approval" in person.asked[0]
    assert recorded == {SLUG: 1}
    mine = next(r for r in runs.recent() if r["run_id"] == run.run_id)
    assert mine["skills"] == {SLUG: 1} and mine["used"] == [SLUG]  # its record lists it, as after load_skill


@pytest.mark.parametrize("way", ["prompt", "resource", "read_skill_file"])
def test_a_skill_that_cannot_load_hands_out_nothing_any_way(env: dict[str, str], way: str) -> None:
    """A disabled skill is refused by load_skill: its prompt, resource and files are refused too."""
    runs = _gated_skill(env)
    runs.skills.set_enabled(SLUG, False)
    server = _served(env, runs)

    async def go() -> str:
        async with Client(server, mode="legacy") as client:
            try:
                return await _body(client, way)
            except Exception as exc:  # a JSON-RPC error
                return str(exc)

    try:
        said = asyncio.run(go())
    finally:
        server.close()
    assert "press Pay" not in said and said
