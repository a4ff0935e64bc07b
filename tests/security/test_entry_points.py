"""Every way into a run, listed from the code itself — the daemon's routes,
the MCP server's tools, prompts and resources, the command line, the
scheduler's job kinds — and each one tied to the rule that holds it.

The faults of the last round were all twins: a rule fixed on the path an
attack used and missing on its sibling (the daemon's network refused to
/mcp sessions, open to the same person on the Runs page and in schedules;
the gate armed by ``load_skill``, not by the ``skill:`` prompt). So a new
route, tool, prompt, command or job kind fails here until someone says
which rule holds it, and a path that opens a browser names the attack test
that proves the person's rules hold there. Below that, one place opens a
browser for a run (``teachd.runner.run.open_chromium``), and it cannot be
called without the run's policy.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import textwrap
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parents[2]

# What holds each kind of path:
STORE = "the person's own store view (SkillStore.as_person): their skills, runs, approvals, secrets"
PUBLIC = "open to all by design (login, static files, the daemon's proof)"
OWNER_ONLY = "the daemon's owner only (Teaching._claim): a demonstration uses the owner's display"
LOCAL = "the local person's own machine and network (the CLI runs as them)"
EGRESS = "public addresses only (teachd.remote.egress)"
GATE = "loads the skill into the session: its approval gate is armed"
# a path that opens a browser for a run names the test that attacks it through that very path
BROWSER = "a browser through open_chromium with the person's RunPolicy — attacked in "

ROUTES: dict[str, str] = {
    "GET /": STORE, "GET /login": PUBLIC, "POST /login": PUBLIC, "POST /logout": PUBLIC,
    "GET /logged-out": PUBLIC, "GET /favicon.ico": PUBLIC, "GET /static/{name}": PUBLIC,
    "GET /skills": STORE, "GET /skills/{slug}": STORE, "GET /teach": STORE, "GET /runs": STORE,
    "GET /runs/{run_id}": STORE, "GET /schedules": STORE, "GET /approvals": STORE, "GET /secrets/{sid}": STORE,
    "GET /api/people": STORE, "GET /api/skills/{slug}/grants": STORE, "POST /api/skills/{slug}/grants": STORE,
    "DELETE /api/skills/{slug}/grants/{grantee}": STORE, "GET /api/skills": STORE, "POST /api/skills": STORE,
    "GET /api/skill-templates": STORE, "POST /api/skills/import": STORE, "GET /api/skills/{slug}": STORE,
    "DELETE /api/skills/{slug}": STORE, "PUT /api/skills/{slug}": STORE, "GET /api/skills/{slug}/load": STORE,
    "PUT /api/skills/{slug}/enabled": STORE, "PUT /api/skills/{slug}/repeatable": STORE,
    "PUT /api/skills/{slug}/at-once": STORE,
    "PUT /api/skills/{slug}/content": STORE,
    "DELETE /api/skills/{slug}/files/{path:path}": STORE, "PUT /api/skills/{slug}/files/{path:path}": STORE,
    "PUT /api/skills/{slug}/approval": STORE, "POST /api/skills/{slug}/restore": STORE,
    "GET /api/skills/{slug}/export": STORE, "GET /api/manifest": STORE,
    "GET /api/teach": STORE, "POST /api/teach": OWNER_ONLY, "POST /api/teach/stop": OWNER_ONLY,
    "POST /api/teach/save": OWNER_ONLY, "POST /api/teach/discard": OWNER_ONLY,
    "POST /api/teach/command": OWNER_ONLY, "POST /api/teach/apply": OWNER_ONLY,
    "POST /api/runs/{run_id}/repair": OWNER_ONLY,
    "POST /api/skills-from-url": EGRESS,
    "GET /api/approvals": STORE, "GET /api/schedules": STORE, "GET /api/scheduler": STORE,
    "POST /api/schedules": STORE,
    "POST /api/schedules/{sid:int}/{action}": BROWSER + "test_run_destinations.py::"
                                              "test_bobs_schedule_and_health_check_reach_nothing_on_the_daemons_loopback",
    "DELETE /api/schedules/{sid:int}": STORE,
    "GET /api/secrets": STORE, "POST /api/secrets": STORE, "POST /api/secrets/{sid}": STORE,
    "DELETE /api/secrets/{sid}": STORE, "GET /api/secrets/{sid}/value": STORE,
    "POST /api/approvals/{pid:int}": STORE, "POST /api/rules": STORE, "DELETE /api/rules/{rid:int}": STORE,
    "GET /api/runs": STORE, "GET /api/workers": "the team's run queue as counts and workers (no one's runs)",
    "POST /api/runs": BROWSER + "test_run_destinations.py::"
                                "test_bobs_run_from_the_runs_page_reaches_nothing_on_the_daemons_loopback",
    "GET /api/runs/{run_id}": STORE, "GET /api/runs/{run_id}/events": STORE,
    "GET /api/runs/{run_id}/pictures/{n:int}/{kind}": STORE, "POST /api/runs/{run_id}/cancel": STORE,
    "POST /api/runs/{run_id}/again": BROWSER + "test_run_destinations.py::"
                                               "test_bobs_run_again_reaches_nothing_on_the_daemons_loopback",
    "POST /api/runs/{run_id}/feedback": STORE, "DELETE /api/runs/{run_id}/feedback/{slug}": STORE,
    "GET /api/waiting": STORE, "GET /api/skills/{slug}/runs": STORE,
    "GET /openapi.json": PUBLIC, "GET /teachd-proof": PUBLIC,
    "GET /mcp": BROWSER + "test_agent_browser_destinations.py::"
                          "test_anyone_but_the_owner_cannot_open_loopback_by_any_spelling",
    "POST /mcp": BROWSER + "test_agent_browser_destinations.py::"
                           "test_anyone_but_the_owner_cannot_open_loopback_by_any_spelling",
    "DELETE /mcp": STORE,
}

TOOLS: dict[str, str] = {
    "load_skill": GATE,
    "read_skill_file": GATE,
    "computer_act": BROWSER + "test_agent_browser_destinations.py::"
                              "test_anyone_but_the_owner_cannot_open_loopback_by_any_spelling",
    "run_skill": BROWSER + "test_run_destinations.py::test_bobs_run_skill_over_mcp_reaches_nothing_on_the_daemons_loopback",
    "feedback": STORE,
}

JOB_KINDS: dict[str, str] = {
    "schedule": BROWSER + "test_run_destinations.py::"
                          "test_bobs_schedule_and_health_check_reach_nothing_on_the_daemons_loopback",
    "retention": "the daemon's own housekeeping: no browser, no person's input",
}

COMMANDS: dict[str, str] = {
    "run": BROWSER + "test_run_destinations.py::test_the_command_line_is_the_local_persons_own",
    "teach": LOCAL, "compile": LOCAL, "demo": LOCAL, "serve": LOCAL, "mcp": LOCAL, "feedback": LOCAL,
    "skills": LOCAL, "approvals": LOCAL, "schedule": LOCAL, "profiles": LOCAL, "users": LOCAL,
    "groups": LOCAL, "key": LOCAL, "workers": LOCAL,
    # a worker replays anyone's queued run: each through open_chromium with that person's policy
    "worker": BROWSER + "test_run_destinations.py::"
                        "test_bobs_run_taken_from_the_run_queue_reaches_nothing_on_the_takers_loopback",
}


def _routes() -> set[str]:
    from teachd.server.app import create_app

    app = create_app(_settings(), "127.0.0.1", 1)
    out = set()
    for route in app.routes:
        for method in sorted(getattr(route, "methods", None) or []):
            if method != "HEAD":
                out.add(f"{method} {route.path}")
    return out


def _settings():  # type: ignore[no-untyped-def]
    import tempfile

    from teachd.config import Settings

    home = Path(tempfile.mkdtemp(prefix="teachd-entry-"))
    (home).chmod(0o700)
    return Settings(home=home, owner="alice")


def _test_exists(where: str) -> bool:
    module, name = where.split("::")
    loaded = importlib.import_module("tests.security." + module.removesuffix(".py"))
    return callable(getattr(loaded, name, None))


def _attacked_in(rule: str) -> str | None:
    return rule.removeprefix(BROWSER) if rule.startswith(BROWSER) else None


def test_every_daemon_route_is_held_by_a_named_rule() -> None:
    found = _routes()
    assert found - set(ROUTES) == set(), "a new route: say which rule holds it (and attack it if it runs a browser)"
    assert set(ROUTES) - found == set(), "listed here, gone from the daemon"


def test_every_mcp_tool_prompt_and_resource_is_held_by_a_named_rule(tmp_path: Path) -> None:
    from teachd.mcp.server import TeachdMCP
    from teachd.mcp.session import services_for
    from teachd.store import open_store
    from teachd.store.runs import RunStore

    settings = _settings()
    server = TeachdMCP(services_for(RunStore(open_store(settings)), settings, headless=True))
    try:
        tools = {t.name for t in asyncio.run(server.list_tools())}
    finally:
        server.close()
    assert tools == set(TOOLS)
    # prompts (skill:<slug>) and resources (skill://<slug>[/path]) each have one handler, held by the
    # gate: tests/security/test_prompt_gate.py gets each and then acts


def test_every_command_is_held_by_a_named_rule() -> None:
    from teachd.cli import cli

    assert set(cli.list_commands(click.Context(cli))) == set(COMMANDS)


def test_every_scheduler_job_kind_is_held_by_a_named_rule() -> None:
    from teachd.schedule import service

    tree = ast.parse(textwrap.dedent(inspect.getsource(service.ScheduleService.fire)))
    kinds = {node.comparators[0].value for node in ast.walk(tree)
             if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "kind"
             and isinstance(node.comparators[0], ast.Constant)}
    assert kinds == set(JOB_KINDS)


@pytest.mark.parametrize("where", sorted({w for table in (ROUTES, TOOLS, JOB_KINDS, COMMANDS)
                                          for rule in table.values() if (w := _attacked_in(rule))}))
def test_each_path_that_opens_a_browser_names_an_attack_test_that_exists(where: str) -> None:
    assert _test_exists(where), where


def test_one_place_launches_chromium_for_a_run_and_it_takes_the_runs_policy() -> None:
    """Chromium is launched or attached to in three places only: the recorder
    (a person's own demonstration), the demo's scripted person (driving that
    recorder's browser as a person would) and ``open_chromium`` — which every
    run's browser goes through and which cannot be called without a RunPolicy."""
    from teachd.runner.policy import RunPolicy
    from teachd.runner.run import open_chromium

    launches = []
    for top in ("teachd", "recorder", "compiler"):
        for path in sorted((ROOT / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Attribute) and node.attr in ("launch", "launch_persistent_context",
                                                                     "connect_over_cdp"):
                    launches.append(str(path.relative_to(ROOT)))
    assert sorted(set(launches)) == ["recorder/record.py", "teachd/demo/sampleapp/script.py",
                                     "teachd/runner/run.py"], launches
    policy = inspect.signature(open_chromium).parameters["policy"]
    assert policy.default is inspect.Parameter.empty and policy.annotation in ("RunPolicy", RunPolicy)
