"""An approval question answered with "accept" and content is not an allow
(issue 22, "also seen"), tried as a client would. teachd asks "allow this
once?" as a form elicitation with no fields: only an empty accept allows.
A client (or an agent answering in the person's place) that accepts while
saying ``{"allow": false}``, ``{"answer": "deny"}`` or anything else gets a
deny, said in the tool result, and the page never sees the action.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_types import ElicitResult

from tests.security.people_and_traps import Trap
from tests.test_mcp import session, text

SPELLINGS: list[dict[str, Any]] = [{"allow": False}, {"allow": "false"}, {"answer": "deny"}, {"allow": True},
                                   {"confirm": "yes"}, {"": ""}, {"allow": None}, {"answer": ["once"]}]


class Accepts:
    """Accepts every question, with the given contents in turn."""

    def __init__(self, contents: list[Any]) -> None:
        self.contents, self.asked = list(contents), 0

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        content = self.contents[min(self.asked, len(self.contents) - 1)]
        self.asked += 1
        return ElicitResult(action="accept", content=content)


def test_an_accept_with_any_content_is_a_deny_and_only_an_empty_accept_allows(taught) -> None:
    env, port = taught
    person = Accepts([*SPELLINGS, {}, None])

    async def go(trap: Trap) -> list[Any]:
        async with session(env, person, step_timeout=2) as client:  # type: ignore[arg-type]
            out = [await client.call_tool("computer_act", {"action": "goto", "url": f"{trap.url}/login?try={i}"})
                   for i in range(len(SPELLINGS))]
            assert trap.received() == ""  # not one of them reached the page
            out.append(await client.call_tool("computer_act", {"action": "goto", "url": f"{trap.url}/login?ok=1"}))
            out.append(await client.call_tool("computer_act", {"action": "goto", "url": f"{trap.url}/login?ok=2"}))
            return out

    with Trap(port=port) as trap:
        results = asyncio.run(go(trap))
        log = trap.received()
    for spelling, r in zip(SPELLINGS, results, strict=False):
        assert r.is_error and "not approved (the client accepted with content" in text(r), (spelling, text(r))
        assert "only an empty accept allows" in text(r)
    assert [r.is_error for r in results[len(SPELLINGS):]] == [False, False]  # {} and no content: allowed
    assert "GET /login?ok=1" in log and "GET /login?ok=2" in log and "try=" not in log
