"""``/skill:<name>`` (``prompts/get skill:<slug>``) is ``load_skill``'s twin:
the attacker's way round the gate would be to have the agent fetch a skill
requiring approval as a prompt — its body in hand, the gate never armed —
then act in the browser freely. Getting the prompt loads the skill into the
session exactly as ``load_skill`` does: every later ``computer_act`` asks,
and the run's record lists the skill."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp import Client
from mcp_types import ElicitResult

from teachd.config import settings_from_env
from teachd.skills.approval import Approval
from teachd.store import open_store
from teachd.store.models import SkillContent
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


def test_getting_a_skills_prompt_arms_its_gate_as_load_skill_does(env: dict[str, str]) -> None:
    runs = _gated_skill(env)
    server, person = _served(env, runs), NoOne()

    async def go() -> tuple[Any, int, Any, Any]:
        async with Client(server, mode="legacy", elicitation_callback=person) as client:
            before = await client.call_tool("computer_act", {"action": "snapshot"})
            asked_before = len(person.asked)
            prompt = await client.get_prompt(f"skill:{SLUG}", {})
            after = await client.call_tool("computer_act", {"action": "snapshot"})
            return before, asked_before, prompt, after

    try:
        before, asked_before, prompt, after = asyncio.run(go())
        [run] = list(server._runs.values())
        recorded = run.session.versions()
    finally:
        server.close()
    assert not before.is_error and asked_before == 0  # nothing loaded yet: no skill's gate
    assert "press Pay" in prompt.messages[0].content.text  # the body was handed out…
    assert after.is_error and "not approved" in _text(after)  # …so the next act asks, and no one said yes
    assert len(person.asked) == 1 and SLUG in person.asked[0]
    assert "a loaded skill requires approval" in person.asked[0]
    assert recorded == {SLUG: 1}
    mine = next(r for r in runs.recent() if r["run_id"] == run.run_id)
    assert mine["skills"] == {SLUG: 1} and mine["used"] == [SLUG]  # its record lists it, as after load_skill


def test_a_prompt_of_a_skill_that_cannot_load_hands_out_nothing(env: dict[str, str]) -> None:
    """A disabled skill is refused by load_skill: its prompt is refused too."""
    runs = _gated_skill(env)
    runs.skills.set_enabled(SLUG, False)
    server = _served(env, runs)

    async def go() -> str:
        async with Client(server, mode="legacy") as client:
            try:
                await client.get_prompt(f"skill:{SLUG}", {})
            except Exception as exc:  # a JSON-RPC error
                return str(exc)
            return "answered"

    try:
        said = asyncio.run(go())
    finally:
        server.close()
    assert said != "answered" and "press Pay" not in said
