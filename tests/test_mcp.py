"""teachd as an MCP server, driven by the MCP SDK's own client: in-process,
over stdio against ``teachd mcp``, and over HTTP at the daemon's ``/mcp``.
Every effect is judged by the sample app's own records, never by what
teachd says it did."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import ElicitResult

from teachd.config import Settings, settings_from_env
from teachd.demo.sampleapp import SampleApp, Variant
from teachd.store import open_store
from teachd.store.rules import RuleStore
from teachd.store.runs import RunStore
from tests.conftest import all_bytes_under
from tests.people import PersonAtTheDaemon
from tests.sample_task import PASSWORD, SLUG

TRANSCRIPT = os.environ.get("TEACHD_TRANSCRIPT")  # a file: the README's session transcript is written there
EXPECTED = {"amount": "42.50", "description": "Taxi from the airport", "category": "travel",
            "merchant_id": "taxi-paris", "has_receipt": True}


class Person:
    """The client's side of elicitation: answers each question in turn
    (the last answer repeats) and keeps what it was asked."""

    def __init__(self, *answers: str) -> None:
        self.answers, self.asked = list(answers) or ["accept"], []

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        answer = self.answers[min(len(self.asked), len(self.answers) - 1)]
        self.asked.append(params.message)
        return ElicitResult(action=answer, content={} if answer == "accept" else None)


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


def settings_of(env: dict[str, str]) -> Settings:
    return settings_from_env({k: v for k, v in env.items() if k != "DISPLAY"})


@contextlib.asynccontextmanager
async def session(env: dict[str, str], person: Person | None = None, mode: str = "legacy",
                  step_timeout: float = 10.0) -> AsyncIterator[Client]:
    """An MCP session with an in-process teachd server (headless browser)."""
    from teachd.mcp.server import TeachdMCP
    from teachd.mcp.session import services_for

    settings = settings_of(env)
    server = TeachdMCP(services_for(RunStore(open_store(settings)), settings, headless=True,
                                    step_timeout=step_timeout, approval_timeout=20))
    try:
        async with Client(server, mode=mode, elicitation_callback=person) as client:  # type: ignore[arg-type]
            yield client
    finally:
        server.close()


def with_secret(env: dict[str, str]) -> dict[str, str]:
    return {**env, "TEACHD_SECRET_PASSWORD": PASSWORD}


async def act(client: Client, **args: Any) -> Any:
    return await client.call_tool("computer_act", args)


async def plan(client: Client) -> dict[str, Any]:
    return json.loads(text(await client.call_tool("read_skill_file",
                                                  {"slug": SLUG, "path": "references/steps.json"})))


async def masked_anchor(client: Client, secret: str = "password") -> str:
    """The anchor of the taught step that types ``secret``: the one field a secret may go into."""
    return str(next(s["anchor"] for s in (await plan(client))["steps"] if s.get("secret") == secret))


def step_args(step: dict[str, Any], plan_doc: dict[str, Any]) -> dict[str, Any]:
    """What an agent following SKILL.md passes for one step: the anchor it
    names, the parameter's value or the secret's placeholder."""
    args: dict[str, Any] = {"action": step["action"]}
    if step["action"] == "goto":
        args["url"] = step["url"]
    if step.get("anchor"):
        args.update(skill=SLUG, anchor=step["anchor"])
    value = "{{secret:" + step["secret"] + "}}" if step.get("secret") else \
        plan_doc["parameters"].get(step.get("param") or "", {}).get("default")
    if step["action"] == "type":
        args["text"] = value
    if step["action"] == "select":
        args["value"] = value
    if step["action"] == "press":
        args["key"] = step.get("key")
    return args


def test_load_skill_lists_the_enabled_skills_and_refuses_a_disabled_one(taught) -> None:
    env, _port = taught

    async def go() -> None:
        async with session(env) as client:
            [load] = [t for t in (await client.list_tools()).tools if t.name == "load_skill"]
            assert f"- {SLUG}: File a report and add approvers" in (load.description or "")
            assert {t.name for t in (await client.list_tools()).tools} == {
                "load_skill", "read_skill_file", "computer_act", "run_skill", "feedback"}
            loaded = await client.call_tool("load_skill", {"slug": SLUG})
            assert not loaded.is_error
            assert text(loaded).startswith("# File a report and add approvers")
            assert "references/steps.json" in text(loaded) and "anchor: a1" in text(loaded)
        open_store(settings_of(env)).set_enabled(SLUG, False)
        async with session(env) as client:
            [load] = [t for t in (await client.list_tools()).tools if t.name == "load_skill"]
            assert SLUG not in (load.description or "")
            refused = await client.call_tool("load_skill", {"slug": SLUG})
            assert refused.is_error and "disabled" in text(refused)
            assert (await client.list_prompts()).prompts == []

    asyncio.run(go())


REFUSED_PATH = r"leaves its folder|absolute|holds '%'"


def test_skill_files_resources_and_prompts_never_leave_the_skill(taught) -> None:
    env, _port = taught

    async def go() -> None:
        async with session(env) as client:
            for path in ("../../key", "/etc/passwd", "references/../../token", "..\\..\\key"):
                r = await client.call_tool("read_skill_file", {"slug": SLUG, "path": path})
                assert r.is_error and re.search(REFUSED_PATH, text(r)), path
            uris = [str(r.uri) for r in (await client.list_resources()).resources]
            assert f"skill://{SLUG}" in uris and f"skill://{SLUG}/references/anchors.json" in uris
            skill_md = (await client.read_resource(f"skill://{SLUG}")).contents[0]
            assert skill_md.text.startswith("---\nname: " + SLUG)  # type: ignore[union-attr]
            with pytest.raises(Exception, match=REFUSED_PATH):
                await client.read_resource(f"skill://{SLUG}/..%2F..%2Fkey")
            [prompt] = (await client.list_prompts()).prompts
            assert prompt.name == f"skill:{SLUG}"
            assert {"amount", "name", "category"} <= {a.name for a in prompt.arguments or []}
            got = await client.get_prompt(f"skill:{SLUG}", {"amount": "9.99"})
            assert "Parameter amount: 9.99" in got.messages[0].content.text  # type: ignore[union-attr]

    asyncio.run(go())


def test_computer_act_by_ref_role_and_anchor_signs_in_on_the_sample_app(taught) -> None:
    env, port = taught
    person = Person("accept")

    async def go(app: SampleApp) -> list[str]:
        results: list[str] = []
        async with session(with_secret(env), person, step_timeout=2) as client:
            steps = (await plan(client))["steps"]
            sign_in = next(s["anchor"] for s in steps if s["action"] == "click")
            results.append(text(await act(client, action="goto", url=f"{app.url}/login")))
            snap = text(await act(client, action="snapshot"))
            ref = re.search(r'textbox "Email" \[ref=(e\d+)\]', snap)
            assert ref, snap
            for args in ({"action": "type", "ref": ref.group(1), "text": "alice@example.com"},
                         {"action": "type", "skill": SLUG, "anchor": await masked_anchor(client),
                          "text": "{{secret:password}}"},
                         {"action": "click", "skill": SLUG, "anchor": sign_in}):
                r = await act(client, **args)
                assert not r.is_error, text(r)
                results.append(text(r))
            assert "Title: Dashboard — Expenses" in results[-1]
            missing = await act(client, action="click", role="link", name="Reports")  # it is a tab
            assert missing.is_error and "is not on the page; nothing was done" in text(missing)
        return results

    with SampleApp(password=PASSWORD, port=port) as app:
        results = asyncio.run(go(app))
        assert len(app.state.sessions) == 1  # signed in: the typed e-mail and secret were right
    assert all(PASSWORD not in r for r in results)
    assert len(person.asked) == 5 and all(SLUG in q for q in person.asked)  # each call asked (not the refusal)
    assert PASSWORD.encode() not in all_bytes_under(Path(env["TEACHD_HOME"]))


def test_a_declined_question_does_nothing_and_an_accepted_one_acts_once(taught) -> None:
    env, port = taught
    person = Person("accept", "accept", "accept", "decline", "cancel", "accept")

    async def go(app: SampleApp) -> list[Any]:
        async with session(with_secret(env), person) as client:
            await act(client, action="goto", url=f"{app.url}/login")
            await act(client, action="type", role="textbox", name="Email", text="alice@example.com")
            await act(client, action="type", skill=SLUG, anchor=await masked_anchor(client),
                      text="{{secret:password}}")
            out = [await act(client, action="click", role="button", name="Sign in")]  # decline
            out.append(await act(client, action="click", role="button", name="Sign in"))  # cancel
            assert not app.state.sessions and app.state.clicked() == []  # the page never saw a click
            out.append(await act(client, action="click", role="button", name="Sign in"))  # accept
            return out

    with SampleApp(password=PASSWORD, port=port) as app:
        declined, cancelled, accepted = asyncio.run(go(app))
        assert len(app.state.sessions) == 1
    for refused in (declined, cancelled):
        assert refused.is_error and "not approved" in text(refused) and "click the button “Sign in”" in text(refused)
    assert not accepted.is_error and "Dashboard" in text(accepted)


def test_a_saved_always_allow_rule_never_spares_the_question(taught) -> None:
    env, port = taught
    store = open_store(settings_of(env))
    RuleStore(store.db, store.owner).allow_always("computer_act")
    person = Person("decline")

    async def go(app: SampleApp) -> Any:
        async with session(env, person) as client:
            return await act(client, action="goto", url=f"{app.url}/login")

    with SampleApp(password=PASSWORD, port=port) as app:
        refused = asyncio.run(go(app))
    assert refused.is_error and len(person.asked) == 1
    assert "a loaded skill requires approval" in person.asked[0] and SLUG in person.asked[0]


def test_a_page_outside_the_taught_scope_asks_first_and_a_deny_opens_nothing(taught) -> None:
    env, port = taught
    person = Person("decline", "accept")

    async def go(other: SampleApp) -> tuple[Any, str, Any]:
        async with session(env, person) as client:
            refused = await act(client, action="goto", url=f"{other.url}/login")
            snap = text(await act(client, action="snapshot"))
            return refused, snap, await act(client, action="goto", url=f"{other.url}/login")

    with SampleApp(password=PASSWORD) as other:  # another origin (port) than the one taught
        refused, snap, allowed = asyncio.run(go(other))
    assert refused.is_error and "outside the allowed scope" in text(refused)
    assert "outside the allowed scope" in person.asked[0] and f"127.0.0.1:{port}" in person.asked[0]
    assert snap.startswith("Page: about:blank")  # the other site was never opened
    # allowed: one question for the out-of-scope goto (it names the skill that requires approval too)
    after_snapshot = person.asked[2:]  # asked[1]: the snapshot, a computer_act the skill gates
    assert not allowed.is_error and len(after_snapshot) == 1, person.asked
    assert "outside the allowed scope" in after_snapshot[0] and SLUG in after_snapshot[0]


def test_run_skill_replays_in_the_session_and_halts_on_a_drifted_page(taught) -> None:
    """One question for the whole replay (the plan in it; accept = run),
    judged by the app's record; a second run_skill asks again."""
    env, port = taught
    progress: list[str] = []
    person = Person("accept")

    async def on_progress(n: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async def go(timeout: float) -> Any:
        async with session(with_secret(env), person, step_timeout=timeout) as client:
            return await client.call_tool("run_skill", {"slug": SLUG, "params": {"name": "Auditors"}},
                                          progress_callback=on_progress)

    with SampleApp(password=PASSWORD, port=port) as app:
        done = asyncio.run(go(10))
        assert [g["name"] for g in app.state.groups] == ["Auditors"]
        assert {k: app.state.reports[0][k] for k in EXPECTED} == EXPECTED
    [question] = person.asked  # 28 steps, one answer
    assert question.startswith("teachd asks: allow this run?") and "28 steps" in question
    assert "28. click “the Open audit log link”" in question and "[secret password]" in question
    assert PASSWORD not in question
    assert not done.is_error and ": success — every step and the success check held" in text(done)
    assert len(progress) >= 28 and progress[0].startswith("step 1: goto")
    with SampleApp(password=PASSWORD, variant=Variant(submit_removed=True), port=port) as app:
        halted = asyncio.run(go(1))
        assert app.state.reports == [] and app.state.groups == []
    assert len(person.asked) == 2 and person.asked[1].startswith("teachd asks: allow this run?")
    assert halted.is_error and "halted at step 15" in text(halted) and "Submit report" in text(halted)
    runs = RunStore(open_store(settings_of(env))).recent()
    # halted at Submit after the sign-in and the note: a half change, said as one
    assert [r["status"] for r in runs if r["slug"] == SLUG][:2] == ["partial", "success"]
    assert "partial change: the app answered POST /login" in text(halted)


def test_feedback_from_the_session_adds_a_dated_history_line_as_a_new_version(taught) -> None:
    env, _port = taught

    async def go() -> tuple[str, str]:
        async with session(env) as client:
            first = text(await client.call_tool("feedback", {"slug": SLUG, "outcome": "success",
                                                             "note": "filed by the agent"}))
            again = text(await client.call_tool("feedback", {"slug": SLUG, "outcome": "failure"}))
            return first, again

    first, again = asyncio.run(go())
    assert re.match(rf"{SLUG} v2: recorded success for run run-\d{{8}}-\d{{6}}-[0-9a-f]{{6}}$", first)
    assert "already has its feedback (success)" in again
    store = open_store(settings_of(env))
    skill = store.get(SLUG)
    run_id = first.rsplit(" ", 1)[1]
    assert skill.current_version == 2
    history = skill.current.instructions.split("## History", 1)[1]
    assert re.search(rf"- \d{{4}}-\d{{2}}-\d{{2}} — success — run {run_id} — filed by the agent", history), history
    [run] = [r for r in RunStore(store).recent() if r["run_id"] == run_id]
    assert run["status"] == "ended" and run["skills"] == {SLUG: 1} and "MCP session" in run["message"]


def test_teachd_mcp_over_stdio_does_the_taught_task_step_by_step_under_the_gate(taught) -> None:
    """The issue's 'done when': an agent follows SKILL.md's steps and anchors
    through ``teachd mcp``, every action asked, then leaves feedback."""
    env, port = taught
    person = Person("accept")
    lines: list[str] = []

    def note(kind: str, body: str) -> None:
        lines.append(f"{kind} {body}")

    async def go() -> None:
        server = StdioServerParameters(command=sys.executable, args=["-m", "teachd", "mcp", "--headless"],
                                       env=with_secret(env))
        async with Client(server, mode="legacy", elicitation_callback=person) as client:  # type: ignore[arg-type]
            tools = (await client.list_tools()).tools
            note("→ tools/list", ", ".join(t.name for t in tools))
            loaded = text(await client.call_tool("load_skill", {"slug": SLUG}))
            note("→ load_skill", f'{{"slug": "{SLUG}"}}')
            note("←", loaded.splitlines()[0] + " … (" + str(len(loaded.splitlines())) + " lines)")
            plan_doc = await plan(client)
            for step in plan_doc["steps"]:
                args = step_args(step, plan_doc)
                asked = len(person.asked)
                r = await act(client, **args)
                note("→ computer_act", json.dumps(args, ensure_ascii=False))
                note("  ? asked", person.asked[asked] if len(person.asked) > asked else "(nothing)")
                note("←" if not r.is_error else "← error", " · ".join(text(r).splitlines()))
                assert not r.is_error, text(r)
            fb = text(await client.call_tool("feedback", {"slug": SLUG, "outcome": "success"}))
            note("→ feedback", f'{{"slug": "{SLUG}", "outcome": "success"}}')
            note("←", fb)

    with SampleApp(password=PASSWORD, port=port) as app:
        asyncio.run(go())
        assert {k: app.state.reports[0][k] for k in EXPECTED} == EXPECTED and len(app.state.reports) == 1
        assert [g["name"] for g in app.state.groups] == ["Approvers"]
        assert app.state.groups[0]["permissions"] == ["approve_reports", "archive_reports", "export_reports"]
    assert len(person.asked) == 28  # every computer_act asked, the skill having masked a secret
    assert open_store(settings_of(env)).get(SLUG).current_version == 2
    assert PASSWORD not in "\n".join(lines)
    assert PASSWORD.encode() not in all_bytes_under(Path(env["TEACHD_HOME"]))
    if TRANSCRIPT:
        Path(TRANSCRIPT).write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_client_that_leaves_mid_question_ends_the_session_cleanly(taught) -> None:
    """The client goes away while a question waits: the question is a deny,
    nothing happens on the page, and the session's run is recorded as ended."""
    env, port = taught

    class Away(Person):
        async def __call__(self, context: Any, params: Any) -> ElicitResult:
            self.asked.append(params.message)
            await asyncio.Event().wait()  # never answers
            raise AssertionError("unreachable")

    person = Away()

    async def go(app: SampleApp) -> None:
        server = StdioServerParameters(command=sys.executable, args=["-m", "teachd", "mcp", "--headless"],
                                       env=env)
        async with Client(server, mode="legacy", elicitation_callback=person) as client:  # type: ignore[arg-type]
            call = asyncio.ensure_future(act(client, action="goto", url=f"{app.url}/login"))
            for _ in range(600):  # the question comes once its browser is up: however long that takes
                if person.asked or call.done():
                    break
                await asyncio.sleep(0.1)
            assert not call.done(), call.result()
            call.cancel()  # the client gives up on the call and leaves while the question waits
            with contextlib.suppress(asyncio.CancelledError):
                await call

    with SampleApp(password=PASSWORD, port=port) as app:
        asyncio.run(go(app))
        assert app.state.clicked() == [] and not app.state.sessions
    assert len(person.asked) == 1
    [run] = RunStore(open_store(settings_of(env))).recent()
    assert run["status"] == "ended", run
    assert [s["status"] for s in run["steps"]] == ["refused"] and "not approved" in run["steps"][0]["detail"]


def test_mcp_over_http_needs_the_token_and_asks_on_the_daemons_pages(taught) -> None:
    """A client that cannot be asked (the sessionless 2026 protocol has no
    back-channel) waits on the daemon's Approvals page, and the secret is
    typed on its secret page; the Runs page shows the session's run with its
    feedback chip."""
    from mcp.client.streamable_http import streamable_http_client

    from tests.test_server import serve

    env, port = taught
    server = serve(env)
    try:
        assert httpx.post(server.url + "/mcp", json={}).status_code == 401
        cookie_only = httpx.post(server.url + "/mcp", json={}, cookies={"teachd_session": "x"})
        assert cookie_only.status_code == 401
        api = server.api()

        async def go(app: SampleApp) -> tuple[list[Any], str]:
            import httpx2

            # an approval waits on the daemon's page: a busy machine may take longer than the 5 s default
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=120) as h:
                transport = streamable_http_client(server.url + "/mcp", http_client=h)
                async with Client(transport) as client:
                    out = [await act(client, action="goto", url=f"{app.url}/login"),
                           await act(client, action="type", role="textbox", name="Email", text="alice@example.com"),
                           await act(client, action="type", skill=SLUG, anchor=await masked_anchor(client),
                                     text="{{secret:password}}"),
                           await act(client, action="click", role="button", name="Sign in")]
                    assert not app.state.sessions and app.state.clicked() == []  # denied: nothing happened
                    out.append(await act(client, action="click", role="button", name="Sign in"))
                    fb = text(await client.call_tool("feedback", {"slug": SLUG, "outcome": "success"}))
                    return out, fb

        with SampleApp(password=PASSWORD, port=port) as app, \
                PersonAtTheDaemon(api, [True, True, True, False, True], {"password": PASSWORD}) as person:
            results, fb = asyncio.run(go(app))
            assert len(app.state.sessions) == 1  # the secret typed on the page signed in
        assert [r.is_error for r in results] == [False, False, False, True, False]
        assert "not approved" in text(results[3])
        assert person.seen[0] == f"allow: open “{app.url}/login” | ['{SLUG}']"
        assert f"secret password for ['{SLUG}']" in person.seen
        run_id = fb.rsplit(" ", 1)[1]
        page = api.get("/runs").text
        assert run_id in page and "✓ worked" in page.split(run_id, 1)[1].split("</tr>", 1)[0]
        assert api.get("/api/secrets").json()["pending"] == []
    finally:
        assert server.stop() == 0
        out, err = server.proc.communicate()
    assert PASSWORD not in out + err
    assert PASSWORD.encode() not in all_bytes_under(Path(env["TEACHD_HOME"]))


def test_teachd_mcp_sends_the_person_to_the_secret_page_and_never_sees_the_secret(taught) -> None:
    """Over stdio, with no TEACHD_SECRET_ set: the client is asked to open the
    daemon's secret page (URL-mode elicitation); a person types it there in a
    real browser; the sign-in works; the agent's transcript never holds it."""
    from tests.test_server import browser_login, serve

    env, port = taught
    daemon = serve(env)
    typed: list[str] = []

    def type_on_page(url: str) -> None:
        """A person in a real browser of their own (this thread's own Playwright)."""
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                        args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            browser_login(page, daemon.login_url)
            page.goto(url)
            page.get_by_label("password").fill(PASSWORD)
            page.get_by_role("button", name="Give it to the run").click()
            page.get_by_text("Given to the run").wait_for()
            typed.append(url)
            browser.close()

    class PersonWithBrowser(Person):
        async def __call__(self, context: Any, params: Any) -> ElicitResult:
            if getattr(params, "mode", None) == "url":
                self.asked.append(f"url: {params.message}")
                threading.Thread(target=type_on_page, args=(params.url,), daemon=True).start()
                return ElicitResult(action="accept")
            return await super().__call__(context, params)

    person = PersonWithBrowser("accept")
    seen: list[str] = []

    async def go(app: SampleApp) -> None:
        server = StdioServerParameters(command=sys.executable, args=["-m", "teachd", "mcp", "--headless"],
                                       env=env)
        async with Client(server, mode="legacy", elicitation_callback=person) as client:  # type: ignore[arg-type]
            anchor = await masked_anchor(client)
            for args in ({"action": "goto", "url": f"{app.url}/login"},
                         {"action": "type", "role": "textbox", "name": "Email", "text": "alice@example.com"},
                         {"action": "type", "skill": SLUG, "anchor": anchor, "text": "{{secret:password}}"},
                         {"action": "click", "role": "button", "name": "Sign in"}):
                r = await act(client, **args)
                seen.append(text(r))
                assert not r.is_error, text(r)

    try:
        with SampleApp(password=PASSWORD, port=port) as app:
            asyncio.run(go(app))
            assert len(app.state.sessions) == 1
    finally:
        assert daemon.stop() == 0
        out, err = daemon.proc.communicate()
    assert typed and typed[0].startswith(daemon.url + "/secrets/")
    assert any(q.startswith("url: teachd needs the secret 'password'") for q in person.asked)
    assert PASSWORD not in "\n".join(seen + person.asked) + out + err
    assert PASSWORD.encode() not in all_bytes_under(Path(env["TEACHD_HOME"]))


def test_a_closed_session_browser_leaves_none_of_its_playwright_in_memory() -> None:
    """A daemon opens a browser per MCP session all day: once a session's
    worker is closed, its Playwright (connection, browser, the request guard
    and its DevTools session) must be garbage, or every session costs the
    daemon ~300 kB for good."""
    import gc
    import weakref

    from teachd.mcp.worker import BrowserWorker
    from teachd.runner.guard import guard_for
    from teachd.runner.policy import RunPolicy, Who
    from teachd.runner.run import RunOptions

    def playwrights() -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if type(o).__module__ == "playwright._impl.playwright")

    before = playwrights()
    guards: list[weakref.ref[Any]] = []
    for _ in range(2):
        worker = BrowserWorker(RunOptions(headless=True, environ=dict(os.environ)),
                               RunPolicy(Who("alice", host_network=False)))  # a guard with a layer on it
        worker.submit(lambda b: guards.append(weakref.ref(guard_for(b.context)))).result(60)
        assert playwrights() == before + 1  # the live one is counted: the count can tell
        worker.close()
    assert playwrights() == before
    assert [g() for g in guards] == [None, None]


def test_run_skill_on_a_skill_that_was_not_taught_says_why_instead_of_a_bare_error(env) -> None:
    """A written (imported) skill has no plan to replay: the agent reads that, not
    "Error executing tool run_skill" — the SDK hides the message of anything but a tool error."""
    from teachd.skills.exchange import from_skill_md

    imported = from_skill_md("---\nname: plain\ndescription: Does it. Use when asked.\n---\n# Plain\n", None, {})
    open_store(settings_of(env)).save(imported.slug, imported.onto, note="t", origin="imported")

    async def go() -> Any:
        async with session(env) as client:
            return await client.call_tool("run_skill", {"slug": "plain", "params": {}})

    result = asyncio.run(go())
    assert result.is_error
    assert "not a replayable taught skill: references/steps.json" in text(result)


def test_a_relabelled_apps_changed_step_offers_like_in_the_mcp_question_and_one_tick_covers_the_later_ones(
        taught) -> None:
    """Over MCP, the first field found changed in its name alone asks with
    its evidence (what it is now, what still agrees) and a form with one
    box; accepted with the box ticked, it is the ``like`` answer: the later
    fields relabelled the same way ask no more, and the app saves exactly
    the demonstrated report. A plan question has no such box."""
    from teachd.mcp.approver import LIKE

    env, port = taught
    asked: list[tuple[str, dict[str, Any]]] = []

    async def person(context: Any, params: Any) -> ElicitResult:
        schema = dict(params.requested_schema or {})
        asked.append((params.message, schema))
        offers = LIKE in (schema.get("properties") or {})
        return ElicitResult(action="accept", content={LIKE: True} if offers else {})

    async def go() -> Any:
        async with session(with_secret(env), person) as client:  # type: ignore[arg-type]
            return await client.call_tool("run_skill", {"slug": SLUG, "params": {}})

    with SampleApp(password=PASSWORD, port=port, variant=Variant(changed_labels=True)) as app:
        done = asyncio.run(go())
        assert len(app.state.reports) == 1 and {k: app.state.reports[0][k] for k in EXPECTED} == EXPECTED
    assert not done.is_error, text(done)
    plan_q, *changed = asked
    assert "allow this run?" in plan_q[0] and LIKE not in (plan_q[1].get("properties") or {})
    liked = [m for m, s in changed if LIKE in (s.get("properties") or {})]
    assert liked, [m[:200] for m, _ in changed]
    from teachd.mcp.approver import THESE  # the same question lists its page's other changed steps: a box too

    assert THESE in changed[0][1]["properties"] and "on this page changed too" in changed[0][0]
    assert "is now" in liked[0] and "still the same" in liked[0] and "“also later steps changed like this”" in liked[0]
    assert len(changed) <= 6, [m[:120] for m, _ in changed]  # one tick, not one question per relabelled step
