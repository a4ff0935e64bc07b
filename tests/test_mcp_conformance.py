"""What the MCP spec and the seeds require of teachd's server, checked with
the SDK's own client: every tool argument described, tool annotations,
spec error codes (no traceback), prompt arguments described from the
skill's parameters, one SKILL.md through tool and resource, resources typed
as seed 000 says, progress that only rises, and the daemon's discovery
paths answering plainly."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from teachd.demo.sampleapp import SampleApp
from teachd.store import open_store
from teachd.store.approvals import ApprovalQueue
from teachd.store.runs import RunStore
from tests.sample_task import PASSWORD, SLUG
from tests.security.web_surface import daemon
from tests.test_mcp import session, settings_of, text, with_secret


def test_tools_describe_every_argument_and_say_what_they_touch(taught) -> None:
    env, _port = taught

    async def go() -> dict[str, Any]:
        async with session(env) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    tools = asyncio.run(go())
    for tool in tools.values():
        props = tool.input_schema.get("properties", {})
        blank = [name for name, spec in props.items() if not spec.get("description")]
        assert not blank, (tool.name, blank)
        assert tool.annotations is not None, tool.name
    assert tools["load_skill"].annotations.read_only_hint and tools["read_skill_file"].annotations.read_only_hint
    assert tools["computer_act"].annotations.destructive_hint and tools["run_skill"].annotations.destructive_hint
    assert not tools["computer_act"].annotations.read_only_hint


def test_prompts_answer_with_spec_error_codes_and_describe_their_arguments(taught) -> None:
    env, _port = taught

    async def go() -> None:
        async with session(env) as client:
            [prompt] = (await client.list_prompts()).prompts
            described = {a.name: a.description for a in prompt.arguments or []}
            assert described and all(described.values()), described
            assert "Amount" in (described["amount"] or "") and "42.50" in (described["amount"] or "")
            for name, args in (("skill:taught-no-such-skill", {}), ("nonsense", {}),
                               (f"skill:{SLUG}", {"no_such_argument": "1"})):
                with pytest.raises(MCPError) as err:
                    await client.get_prompt(name, args)
                assert err.value.code == INVALID_PARAMS, (name, err.value.code)

    asyncio.run(go())


def test_skill_command_injects_the_body_with_skill_path_and_user_args_and_a_switch_turns_it_off(taught) -> None:
    """Seed 000, /skill:<name> [args]: the skill's body, frontmatter stripped,
    then ``Skill: <path>`` and, when given, ``User: <args>``; config.yaml
    ``skills.enableSkillCommands: false`` offers no skill commands."""
    env, _port = taught

    async def prompt(args: dict[str, str]) -> str:
        async with session(env) as client:
            got = await client.get_prompt(f"skill:{SLUG}", args)
            return str(got.messages[0].content.text)  # type: ignore[union-attr]

    plain = asyncio.run(prompt({}))
    said = asyncio.run(prompt({"args": "file it for the Lyon trip", "amount": "9.99"}))
    assert plain.startswith("# File a report and add approvers\n") and "---\nname:" not in plain
    assert plain.endswith(f"\n\nSkill: skill://{SLUG}/SKILL.md") and "User:" not in plain
    assert said.startswith(plain + "\nUser: file it for the Lyon trip\nParameter amount: 9.99")

    (Path(env["TEACHD_HOME"]) / "config.yaml").write_text("skills:\n  enableSkillCommands: false\n")

    async def off() -> None:
        async with session(env) as client:
            assert (await client.list_prompts()).prompts == []
            with pytest.raises(MCPError) as err:
                await client.get_prompt(f"skill:{SLUG}", {})
            assert err.value.code == INVALID_PARAMS and "enableSkillCommands" in str(err.value)
            assert not (await client.call_tool("load_skill", {"slug": SLUG})).is_error  # the skill itself stays

    asyncio.run(off())


def test_skill_md_is_the_same_through_the_tool_and_the_resource_and_files_are_typed(taught) -> None:
    env, _port = taught

    async def go() -> None:
        async with session(env) as client:
            by_tool = text(await client.call_tool("read_skill_file", {"slug": SLUG, "path": "SKILL.md"}))
            by_resource = (await client.read_resource(f"skill://{SLUG}")).contents[0].text  # type: ignore[union-attr]
            assert by_tool == by_resource and by_tool.startswith("---\nname: " + SLUG)
            types = {str(r.uri): r.mime_type for r in (await client.list_resources()).resources}
            assert types[f"skill://{SLUG}"] == "text/markdown"
            assert types[f"skill://{SLUG}/references/steps.json"] == "text/plain"
            assert types[f"skill://{SLUG}/references/recording.md"] == "text/markdown"

    asyncio.run(go())
    [run] = RunStore(open_store(settings_of(env))).recent()
    assert run["message"].startswith("MCP session (mcp ")  # the client's own name and version, not "an MCP client"


def test_run_skill_progress_only_rises_when_approvals_wait_on_the_daemons_page(taught) -> None:
    """A client that cannot elicit: the run waits on the Approvals page (a
    person answers `run` there) and says so as a progress note — which
    must not send progress back to 0 between steps."""
    env, port = taught
    values: list[float] = []
    stop = threading.Event()
    queue = ApprovalQueue(open_store(settings_of(env)))

    def person() -> None:
        while not stop.is_set():
            for p in queue.pending():
                queue.answer(p["id"], "run" if p.get("offers_run") else "once")
            stop.wait(0.05)

    async def on_progress(n: float, total: float | None, message: str | None) -> None:
        values.append(n)

    async def go() -> Any:
        async with session(with_secret(env), None) as client:
            return await client.call_tool("run_skill", {"slug": SLUG}, progress_callback=on_progress)

    answering = threading.Thread(target=person, daemon=True)
    answering.start()
    try:
        with SampleApp(password=PASSWORD, port=port) as app:
            done = asyncio.run(go())
            assert len(app.state.reports) == 1
    finally:
        stop.set()
        answering.join(5)
    assert not done.is_error, text(done)
    assert len(values) >= 28 and all(b > a for a, b in zip(values, values[1:], strict=False)), values


def test_discovery_paths_answer_404_not_a_login_page(tmp_path: Path) -> None:
    with daemon(tmp_path) as server:
        for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server",
                     "/.well-known/oauth-protected-resource/mcp"):
            r = httpx.get(server.url + path, follow_redirects=False, timeout=10)
            assert r.status_code == 404 and "location" not in r.headers, (path, r.status_code)


@pytest.mark.parametrize("asks", ["client", "page"])
def test_a_cancelled_call_withdraws_its_question_and_nothing_more_acts(taught, asks: str) -> None:
    """The client gives up on run_skill while its plan question waits — in
    the client (an elicitation nobody answers) or on the Approvals page (a
    client that cannot elicit): the question is withdrawn, the replay stops,
    the app records nothing, and the session's next call still works."""
    env, port = taught
    asked = asyncio.Event()
    queue = ApprovalQueue(open_store(settings_of(env)))

    async def never(context: Any, params: Any) -> Any:
        asked.set()
        await asyncio.sleep(3600)  # the person never answers

    async def go() -> Any:
        async with session(with_secret(env), never if asks == "client" else None) as client:  # type: ignore[arg-type]
            call = asyncio.create_task(client.call_tool("run_skill", {"slug": SLUG}))
            for _ in range(300):
                if asked.is_set() or queue.pending():
                    break
                await asyncio.sleep(0.1)
            assert asked.is_set() or queue.pending(), "the question never came"
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            for _ in range(100):  # withdrawn, not left waiting for a person
                if not queue.pending():
                    break
                await asyncio.sleep(0.1)
            assert queue.pending() == []
            return await client.call_tool("read_skill_file", {"slug": SLUG, "path": "SKILL.md"})

    with SampleApp(password=PASSWORD, port=port) as app:
        after = asyncio.run(go())
        assert app.state.reports == [] and not app.state.sessions and app.state.clicked() == []
    assert not after.is_error
    runs = RunStore(open_store(settings_of(env))).recent()
    replays = [r for r in runs if r["slug"] == SLUG]
    assert replays and replays[0]["status"] == "aborted", replays[:1]


def test_on_2026_07_28_every_approval_is_asked_in_the_client_in_rounds(taught) -> None:
    """A client on the 2026-07-28 protocol (no back channel) is asked through
    input-required rounds: run_skill's one question carries the plan (28 steps,
    one answer), each computer_act is asked before it acts, a decline acts
    nothing; judged by the app's own records."""
    from tests.test_mcp import EXPECTED, Person, act

    env, port = taught
    person = Person("accept")

    async def replay() -> Any:
        async with session(with_secret(env), person, mode="2026-07-28") as client:
            return await client.call_tool("run_skill", {"slug": SLUG})

    with SampleApp(password=PASSWORD, port=port) as app:
        done = asyncio.run(replay())
        assert not done.is_error, text(done)
        assert {k: app.state.reports[0][k] for k in EXPECTED} == EXPECTED
    [question] = person.asked
    assert question.startswith("teachd asks: allow this run?") and "28 steps" in question
    assert [r["status"] for r in RunStore(open_store(settings_of(env))).recent() if r["slug"] == SLUG] == \
        ["success"]  # the round that only asked left no run behind

    declining = Person("decline", "accept")

    async def acts(base: str) -> tuple[Any, str, Any]:
        async with session(env, declining, mode="2026-07-28") as client:
            refused = await act(client, action="goto", url=f"{base}/login")
            snap = text(await act(client, action="snapshot"))
            opened = await act(client, action="goto", url=f"{base}/login")
            return refused, snap, opened

    with SampleApp(password=PASSWORD, port=port) as app:
        refused, snap, opened = asyncio.run(acts(app.url))
    assert refused.is_error and "not approved" in text(refused)
    assert snap.startswith("Page: about:blank")  # the declined goto opened nothing
    assert not opened.is_error and "Sign in" in text(opened)
    assert len(declining.asked) == 3 and all("allow this once?" in q for q in declining.asked)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_client_that_cannot_be_asked_is_told_where_to_answer_at_once(taught, mode: str) -> None:
    """`teachd mcp` over stdio, a client that declares no elicitation, no
    daemon running: a gated action is refused at once with where to answer
    (start teachd serve), not after a five-minute silent wait."""
    import sys
    import time

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from tests.test_mcp import act

    env, port = taught

    async def go() -> Any:
        server = StdioServerParameters(command=sys.executable, args=["-m", "teachd", "mcp", "--headless"],
                                       env=with_secret(env))
        async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
            return await act(client, action="goto", url=f"http://127.0.0.1:{port}/login")

    began = time.monotonic()
    with SampleApp(password=PASSWORD, port=port) as app:
        refused = asyncio.run(go())
        assert not app.state.sessions
    assert refused.is_error and "start teachd serve" in text(refused), text(refused)
    assert time.monotonic() - began < 60
