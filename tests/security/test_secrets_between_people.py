"""Secrets belong to a person (issue 22, row 1), tried as bob would.

alice runs ``teachd serve`` with her ``TEACHD_SECRET_PASSWORD`` in its
environment. bob, a second person with a token of his own, has a taught skill
of his own whose masked password step points at a page on a loopback server
he controls. He makes the daemon run it every way it can: through the Runs
API, through a schedule, over ``/mcp`` with ``computer_act`` (``{{secret:
password}}``) and with ``run_skill``. The daemon must never type alice's value
into his page: his server's request log and every response must be free of
it, and he is asked on his own secret page instead (what he types there is
what reaches his page). Then everything written (TEACHD_HOME, the database,
the daemon's output) is searched for alice's value. The store-heavy path runs
on SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from teachd.config import settings_from_env
from teachd.store import open_store
from teachd.store.users import UserStore
from tests.conftest import all_bytes_under
from tests.people import wait_for
from tests.sample_task import PASSWORD, SLUG
from tests.security.people_and_traps import Trap, Watch, give_bob_the_skill

BOBS_OWN = "bobs-own-typed-value-7"


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _daemon_env(taught: tuple[dict[str, str], int], request: pytest.FixtureRequest, engine: str,
                trap: Trap) -> tuple[dict[str, str], str]:
    """alice's daemon environment (her secret in it), and bob's token; bob's
    skill aimed at ``trap``, on the engine asked for. Both apps run on the
    daemon's loopback, which is alice's network: she lets her team reach
    them (config.yaml ``team_origins``), or bob's runs would be stopped
    before any secret is asked."""
    env, port = taught
    env = {**env, "TEACHD_SECRET_PASSWORD": PASSWORD}
    (Path(env["TEACHD_HOME"]) / "config.yaml").write_text(
        f"team_origins:\n  - http://127.0.0.1:{port}\n  - http://127.0.0.1:{trap.port}\n", encoding="utf-8")
    if engine == "postgresql":
        env["TEACHD_DB_URL"] = request.getfixturevalue("postgres_url")
        sqlite = open_store(settings_from_env({k: v for k, v in env.items() if k != "TEACHD_DB_URL"}))
        store = open_store(settings_from_env(env))
        skill = sqlite.get(SLUG)
        store.create(SLUG, skill.current, origin="taught")
    store = open_store(settings_from_env(env))
    token = UserStore(store.db).add("bob")
    give_bob_the_skill(store, port, trap.port)
    return env, token


def _written(env: dict[str, str], request: pytest.FixtureRequest) -> bytes:
    extra = request.getfixturevalue("postgres_server").written() if env.get("TEACHD_DB_URL") else b""
    return all_bytes_under(Path(env["TEACHD_HOME"])) + extra


def _finished_run(api: Any) -> dict[str, Any]:
    runs = [r for r in api.get("/api/runs").json() if r["status"] not in ("running", "started")]
    return runs[0] if runs else {}


def test_bobs_run_through_the_runs_api_never_gets_the_owners_secret(taught, request, engine) -> None:
    from tests.test_server import serve
    from tests.test_teams import _as

    with Trap() as trap:
        env, bob_token = _daemon_env(taught, request, engine, trap)
        server = serve(env)
        try:
            with server.api() as alice, _as(server, bob_token) as bob:
                with Watch(bob, None) as bob_at_his_pages, Watch(alice, None) as alice_at_hers:
                    started = bob.post("/api/runs", json={"slug": SLUG})
                    assert started.status_code == 200, started.text
                    # The run waits for the secret on bob's page, not alice's; nothing typed yet.
                    wait_for(lambda: bob_at_his_pages.secrets_asked or _finished_run(bob), 60,
                             "bob's secret page to ask")
                    assert PASSWORD not in trap.received()
                    asked = bob_at_his_pages.secrets_asked
                    assert [a["name"] for a in asked] == ["password"] and asked[0]["skills"] == [SLUG], \
                        _finished_run(bob).get("message")
                    assert alice_at_hers.secrets_asked == []
                    assert "password=" not in trap.received()  # nothing was submitted to bob's page
                    bob_at_his_pages.value = BOBS_OWN  # bob types his own: that is what his page gets
                    run = wait_for(lambda: _finished_run(bob), 90, "bob's run to end")
                assert run["status"] == "success", run
                assert f"password={BOBS_OWN}" in trap.received()
                assert alice_at_hers.secrets_asked == [] and alice_at_hers.approvals_seen == []
                responses = bob.get("/api/runs").text + bob.get(f"/api/runs/{run['run_id']}").text
                assert PASSWORD not in responses and BOBS_OWN not in responses
        finally:
            assert server.stop() == 0
            out, err = server.proc.communicate()
        assert PASSWORD not in trap.received()
        assert PASSWORD not in out + err and BOBS_OWN not in out + err
        written = _written(env, request)
        assert PASSWORD.encode() not in written and BOBS_OWN.encode() not in written


def test_bobs_schedule_never_gets_the_owners_secret(taught, request, engine) -> None:
    from tests.test_server import serve
    from tests.test_teams import _as

    with Trap() as trap:
        env, bob_token = _daemon_env(taught, request, engine, trap)
        server = serve(env)
        try:
            with server.api() as alice, _as(server, bob_token) as bob:
                with Watch(bob, BOBS_OWN) as bob_at_his_pages, Watch(alice, None) as alice_at_hers:
                    sid = bob.post("/api/schedules", json={"slug": SLUG, "every": "1h", "timeout": 60}).json()["id"]
                    wait_for(lambda: bob.post(f"/api/schedules/{sid}/run").status_code == 200, 60,
                             "the scheduler to take bob's schedule")
                    run = wait_for(lambda: _finished_run(bob), 90, "bob's scheduled run to end")
                assert run["status"] == "success", run
                assert [a["name"] for a in bob_at_his_pages.secrets_asked] == ["password"]
                assert alice_at_hers.secrets_asked == [] and alice_at_hers.approvals_seen == []
                assert bob_at_his_pages.approvals_seen  # his run asked him, step by step
                assert PASSWORD not in bob.get("/api/schedules").text
        finally:
            assert server.stop() == 0
            out, err = server.proc.communicate()
        log = trap.received()
        assert f"password={BOBS_OWN}" in log and PASSWORD not in log
        assert PASSWORD not in out + err
        assert PASSWORD.encode() not in _written(env, request)


def test_bobs_mcp_session_never_gets_the_owners_secret(taught, request) -> None:
    """``{{secret:password}}`` typed through ``computer_act`` on bob's own
    masked field, then ``run_skill`` on the same session: each time his
    own secret page asks, and alice's value reaches neither his server nor
    any tool result."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from tests.test_server import serve
    from tests.test_teams import _as

    async def as_bob(url: str, token: str, trap: Trap) -> list[Any]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as h:
            async with Client(streamable_http_client(url + "/mcp", http_client=h)) as client:
                out = [await client.call_tool("load_skill", {"slug": SLUG})]
                for args in ({"action": "goto", "url": f"{trap.url}/login"},
                             {"action": "type", "skill": SLUG, "anchor": "a2", "text": "{{secret:password}}"},
                             {"action": "click", "skill": SLUG, "anchor": "a3"},
                             {"action": "snapshot"}):
                    out.append(await client.call_tool("computer_act", args))
                out.append(await client.call_tool("run_skill", {"slug": SLUG}))
                return out

    with Trap() as trap:
        env, bob_token = _daemon_env(taught, request, "sqlite", trap)
        server = serve(env)
        try:
            with server.api() as alice, _as(server, bob_token) as bob:
                with Watch(bob, BOBS_OWN) as bob_at_his_pages, Watch(alice, None) as alice_at_hers:
                    results = asyncio.run(as_bob(server.url, bob_token, trap))
                said = [_text(r) for r in results]
                assert [r.is_error for r in results] == [False] * 6, said
                assert "run " in said[-1] and ": success" in said[-1]
                assert [a["name"] for a in bob_at_his_pages.secrets_asked] == ["password", "password"]
                assert alice_at_hers.secrets_asked == [] and alice_at_hers.approvals_seen == []
                assert all(PASSWORD not in s and BOBS_OWN not in s for s in said)
        finally:
            assert server.stop() == 0
            out, err = server.proc.communicate()
        log = trap.received()
        assert log.count(f"password={BOBS_OWN}") == 2 and PASSWORD not in log
        assert PASSWORD not in out + err
        assert PASSWORD.encode() not in _written(env, request)


def test_a_child_started_for_another_person_has_none_of_the_owners_secrets(tmp_path: Path) -> None:
    """The teach/repair child and every browser: no ``TEACHD_SECRET_*`` but the owner's own child."""
    from teachd.runner.secrecy import without_secrets
    from teachd.server.jobs import Teaching

    environ = {"TEACHD_HOME": str(tmp_path), "TEACHD_SECRET_PASSWORD": PASSWORD,
               "teachd_secret_lower": PASSWORD, "PATH": "/usr/bin"}
    teaching = Teaching(environ, tmp_path / "teach.control", "alice")
    for someone in ("bob", "Alice", "", "alice "):
        child = teaching.child_environ(someone)
        assert PASSWORD not in child.values() and child["TEACHD_HOME"] == str(tmp_path), someone
    assert teaching.child_environ("alice")["TEACHD_SECRET_PASSWORD"] == PASSWORD  # the owner's own
    assert Teaching(environ, tmp_path / "teach.control").child_environ("alice") == without_secrets(environ)


def test_bobs_client_is_sent_to_his_own_secret_page_and_cannot_aim_the_secret_elsewhere(taught, request) -> None:
    """A client that can open a page (URL-mode elicitation) is sent to bob's
    own secret page: alice's login sees nothing there. Aiming
    ``{{secret:password}}`` at a plain box on his page is refused first."""
    import threading

    import httpx
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import ElicitResult

    from tests.test_server import serve
    from tests.test_teams import _as

    opened: list[str] = []

    async def as_bob(url: str, token: str, trap: Trap, bob: httpx.Client, alice: httpx.Client) -> list[Any]:
        def type_on_his_page(page: str) -> None:
            sid = page.rsplit("/", 1)[1]
            alices_view = alice.get(f"/secrets/{sid}").text
            opened.append(f"{page} alice-sees-form={'Give it to the run' in alices_view}")
            bob.post(f"/api/secrets/{sid}", json={"value": BOBS_OWN})

        async def answer(context: Any, params: Any) -> ElicitResult:
            if getattr(params, "mode", None) == "url":
                threading.Thread(target=type_on_his_page, args=(params.url,), daemon=True).start()
            return ElicitResult(action="accept", content=None if getattr(params, "mode", None) == "url" else {})

        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as h:
            async with Client(streamable_http_client(url + "/mcp", http_client=h), mode="legacy",
                              elicitation_callback=answer) as client:  # type: ignore[arg-type]
                out = [await client.call_tool("computer_act", {"action": "goto", "url": f"{trap.url}/login"})]
                for aim in ({"role": "textbox", "name": "Comment"}, {"role": "textbox", "name": "Email"},
                            {"skill": SLUG, "anchor": "a1"}):
                    out.append(await client.call_tool("computer_act", {"action": "type", **aim,
                                                                        "text": "{{secret:password}}"}))
                out.append(await client.call_tool("computer_act", {"action": "type", "skill": SLUG,
                                                                    "anchor": "a2", "text": "{{secret:password}}"}))
                out.append(await client.call_tool("computer_act", {"action": "click", "skill": SLUG,
                                                                    "anchor": "a3"}))
                return out

    with Trap(echo=True) as trap:
        env, bob_token = _daemon_env(taught, request, "sqlite", trap)
        server = serve(env)
        try:
            with server.api() as alice, _as(server, bob_token) as bob:
                results = asyncio.run(as_bob(server.url, bob_token, trap, bob, alice))
            said = [_text(r) for r in results]
            assert [r.is_error for r in results] == [False, True, True, True, False, False], said
            assert all("nothing was typed" in s for s in said[1:4])
            assert len(opened) == 1 and opened[0].startswith(server.url + "/secrets/")
            assert opened[0].endswith("alice-sees-form=False")
        finally:
            assert server.stop() == 0
            out, err = server.proc.communicate()
        log = trap.received()
        assert PASSWORD not in log
        assert f"password={BOBS_OWN}" in log  # what bob typed on his own page is what his page got
        assert PASSWORD not in out + err + "\n".join(said)
        assert PASSWORD.encode() not in _written(env, request)
