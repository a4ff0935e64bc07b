"""The daemon host's own network, through every kind of run but an MCP
session (that one is ``test_agent_browser_destinations``): Bob, a person of
the daemon who is not its owner, imports a skill recorded on a loopback
address and replays it from the Runs page, with a ``start_url`` aimed at
it, on a schedule, and as a health check. Each must be refused before a
byte leaves; the internal server's own request log is the judge. The
owner's run of the same skill does reach it: the control that shows the
test can fail."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from compiler.skill import compile_recording
from teachd.config import Settings
from teachd.skills.skillmd import render_skill_md
from teachd.store import open_store
from teachd.store.users import UserStore
from tests.compiler_helpers import recording
from tests.security.web_surface import daemon
from tests.security.webs import Site, two_sites
from tests.test_server import Server


@pytest.fixture(scope="module")
def sites() -> Iterator[tuple[Site, Site]]:
    with two_sites() as pair:
        yield pair


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with daemon(tmp_path_factory.mktemp("run-destinations")) as running:
        yield running


def _import(api: httpx.Client, start: str, name: str) -> str:
    """A replayable skill recorded on ``start``, imported (so: provenance
    imported, vouching for no place); its slug."""
    rec = recording([{"type": "page", "url": start, "title": "Inside", "tab": 0}], name=name, url=start)
    compiled = compile_recording(rec)
    skill_md = render_skill_md(compiled.frontmatter, compiled.body)
    r = api.post("/api/skills/import", json={"skill_md": skill_md, "folder": compiled.slug,
                                             "files": dict(compiled.references)})
    assert r.status_code == 200, r.text
    assert r.json().get("origin", "imported") == "imported", r.json()
    return compiled.slug


_TOKENS: dict[str, str] = {}


def _bob(server: Server) -> httpx.Client:
    """Bob's API client (added once per daemon: a person of it, not its owner)."""
    if server.url not in _TOKENS:
        _TOKENS[server.url] = UserStore(open_store(Settings(home=server.home, owner="alice")).db).add("bob")
    return httpx.Client(base_url=server.url, timeout=60,
                        headers={"Authorization": f"Bearer {_TOKENS[server.url]}"})


def _ended(api: httpx.Client, run_id: str, timeout: float = 120) -> dict[str, Any]:
    """The run's record once it ended; every question it asks on the way is
    answered yes by the person (Bob approving his own run is the attack)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = api.get(f"/api/runs/{run_id}").json()
        if run["status"] != "running":
            return dict(run)
        for waiting in api.get("/api/approvals").json()["pending"]:
            if waiting["run_id"] == run_id:
                api.post(f"/api/approvals/{waiting['id']}", json={"answer": "once"})
        time.sleep(0.3)
    raise AssertionError(f"run {run_id} still running after {timeout} s")


def _schedule_fired(api: httpx.Client, sid: int, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = next(s for s in api.get("/api/schedules").json() if s["id"] == sid)
        if found.get("last_at"):
            return dict(found)
        time.sleep(0.3)
    raise AssertionError(f"schedule {sid} did not fire within {timeout} s")


def test_bobs_run_from_the_runs_page_reaches_nothing_on_the_daemons_loopback(
        server: Server, sites: tuple[Site, Site]) -> None:
    _inside, internal = sites
    before = len(internal.log)
    with _bob(server) as bob:
        slug = _import(bob, internal.origin + "/api", "Read the internal api")
        r = bob.post("/api/runs", json={"slug": slug})
        assert r.status_code == 200, r.text
        run = _ended(bob, r.json()["run_id"])
    assert run["status"] == "aborted" and "refused" in run["message"], run
    assert internal.log[before:] == []  # nothing reached it: not the page, not a favicon


def test_bobs_start_url_aimed_at_the_daemons_loopback_reaches_nothing(
        server: Server, sites: tuple[Site, Site]) -> None:
    inside, internal = sites
    before_inside, before_internal = len(inside.log), len(internal.log)
    with _bob(server) as bob:
        slug = _import(bob, inside.origin + "/", "Visit the inside page")
        r = bob.post("/api/runs", json={"slug": slug, "start_url": internal.origin + "/api"})
        assert r.status_code == 200, r.text
        run = _ended(bob, r.json()["run_id"])
    assert run["status"] == "aborted" and "refused" in run["message"], run
    assert internal.log[before_internal:] == [] and inside.log[before_inside:] == []


@pytest.mark.parametrize("check", [False, True], ids=["scheduled run", "health check"])
def test_bobs_schedule_and_health_check_reach_nothing_on_the_daemons_loopback(
        server: Server, sites: tuple[Site, Site], check: bool) -> None:
    _inside, internal = sites
    before = len(internal.log)
    with _bob(server) as bob:
        slug = _import(bob, internal.origin + f"/api?{'check' if check else 'run'}",
                       f"Internal by schedule {'check' if check else 'run'}")
        r = bob.post("/api/schedules", json={"slug": slug, "every": "1h", "check": check})
        assert r.status_code == 200, r.text
        sid = int(r.json()["id"])
        deadline = time.monotonic() + 60  # the scheduler makes the job just after the schedule is added
        while (ran := bob.post(f"/api/schedules/{sid}/run")).status_code == 404 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert ran.status_code == 200, ran.text
        fired = _schedule_fired(bob, sid)
    assert internal.log[before:] == [], fired
    if not check:
        assert fired["last_outcome"] == "aborted" and "refused" in (fired["last_note"] or ""), fired


def test_bobs_run_again_reaches_nothing_on_the_daemons_loopback(server: Server, sites: tuple[Site, Site]) -> None:
    """*Run again* on the run page: the same person, the same rule."""
    _inside, internal = sites
    with _bob(server) as bob:
        slug = _import(bob, internal.origin + "/api?again", "Internal again")
        first = _ended(bob, bob.post("/api/runs", json={"slug": slug}).json()["run_id"])
        before = len(internal.log)
        r = bob.post(f"/api/runs/{first['run_id']}/again")
        assert r.status_code == 200, r.text
        run = _ended(bob, r.json()["run_id"])
    assert run["status"] == "aborted" and "refused" in run["message"], run
    assert internal.log[before:] == []


def test_bobs_run_skill_over_mcp_reaches_nothing_on_the_daemons_loopback(
        server: Server, sites: tuple[Site, Site]) -> None:
    """``run_skill`` replays in the MCP session's browser: Bob's session, Bob's rule."""
    import asyncio

    from mcp import Client

    from teachd.mcp.server import TeachdMCP
    from teachd.mcp.session import services_for
    from teachd.store.runs import RunStore

    _inside, internal = sites
    with _bob(server) as bob:
        slug = _import(bob, internal.origin + "/api?mcp", "Internal over mcp")
    settings = Settings(home=server.home, owner="alice")
    services = services_for(RunStore(open_store(settings).as_person("bob")), settings, headless=True,
                            step_timeout=3, approval_timeout=10, owner=False)
    server_ = TeachdMCP(services)
    before = len(internal.log)

    async def go() -> Any:
        async with Client(server_, mode="legacy") as client:
            return await client.call_tool("run_skill", {"slug": slug})

    try:
        result = asyncio.run(go())
    finally:
        server_.close()
    said = " ".join(getattr(c, "text", "") for c in result.content)
    assert "refused" in said, said
    assert internal.log[before:] == []


def test_the_command_line_is_the_local_persons_own(tmp_path: Path) -> None:
    """``teachd run`` runs as the person at this machine, in their own network:
    their settings hold the host network, as the daemon's owner's do."""
    from teachd.config import settings_from_env
    from teachd.runner.policy import RunPolicy, Who

    settings = settings_from_env({"TEACHD_HOME": str(tmp_path / "home"), "TEACHD_OWNER": "alice"})
    assert settings.host_network
    assert RunPolicy(Who.of(settings, "alice")).network_refusal("http://127.0.0.1:9/") is None


def test_the_owners_run_of_the_same_skill_does_reach_it(server: Server, sites: tuple[Site, Site]) -> None:
    """The control: the owner's runs are hers to point at her own machine."""
    _inside, internal = sites
    before = len(internal.log)
    with server.api() as alice:
        slug = _import(alice, internal.origin + "/api", "Owner reads the internal api")
        r = alice.post("/api/runs", json={"slug": slug})
        assert r.status_code == 200, r.text
        run = _ended(alice, r.json()["run_id"])
    assert run["status"] != "aborted" and "refused" not in run["message"], run  # its page is JSON: no title
    assert "/api" in [p for _m, p, _b in internal.log[before:]]


def test_a_person_is_held_to_public_places_by_the_settings_every_path_builds_from(tmp_path: Path) -> None:
    """The one switch: the settings a person's runs, schedules and sessions
    are built from (the daemon's ``person_settings``) say no host network,
    and the policy built from them refuses loopback by every spelling."""
    from teachd.runner.policy import RunPolicy, Who
    from teachd.runner.secret_desk import person_settings

    owner = Settings(home=tmp_path, owner="alice")
    bobs = person_settings(owner)
    assert owner.host_network and not bobs.host_network
    policy = RunPolicy(Who.of(bobs, "bob"))
    for url in ("http://127.0.0.1:9/", "http://localhost:9/", "http://[::1]:9/", "http://10.0.0.1/",
                "http://169.254.169.254/latest/meta-data/", "ws://127.0.0.1:9/socket"):
        assert policy.network_refusal(url) is not None, url
    assert [d.url for d in policy.decisions][:1] == ["http://127.0.0.1:9/"]
    assert RunPolicy(Who.of(owner, "alice")).network_refusal("http://127.0.0.1:9/") is None


def test_a_replays_workers_and_webrtc_reach_nothing_on_the_daemons_loopback(tmp_path: Path) -> None:
    """The replay's browser (the Runs page, schedules, Run again: ``run_skill``
    with another person's settings, as ``run_on_the_page`` builds it) holds
    what its request interception never sees to the same rule: a Worker's
    WebSocket and WebRTC go through the run's proxy, and are refused there.
    (The page's Workers start on their own clock, so whether the run's
    outcome names the refusal depends on when they come; what reached the
    internal service cannot.)"""
    from teachd.runner.gate import Answer
    from teachd.runner.policy import Who
    from teachd.runner.run import RunOptions, run_skill
    from teachd.runner.secret_desk import person_settings
    from teachd.store.runs import RunStore
    from tests.security.test_agent_browser_destinations import (
        PUBLIC,
        Internet,
        Listener,
        attack_page,
        public_chromium,
        public_site,
    )
    from tests.security.webs import teach

    class Yes:
        def ask(self, request: Any) -> Answer:
            return Answer(request.id, True)

    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    owners = Settings(home=home, owner="alice", chromium=public_chromium(tmp_path))
    bob = open_store(owners).as_person("bob")
    settings = person_settings(owners)  # what the daemon gives anyone but its owner
    listener = Listener()
    try:
        with public_site(attack_page(listener)) as port:
            slug = teach(bob, f"http://{PUBLIC}:{port}/attack")
            opts = RunOptions(headless=True, chromium=settings.chromium, environ=settings.environ)
            outcome = run_skill(RunStore(bob), frozenset(), slug, Yes(), lambda _name: "", opts,
                                Who("bob", settings.host_network, Internet(), Internet.dial))
            time.sleep(2)  # anything late would have landed by now
    finally:
        listener.close()
    assert listener.log == [], outcome.message


def test_team_origins_are_the_owners_choice_and_nothing_else_local_passes(tmp_path: Path) -> None:
    """config.yaml ``team_origins``: the places on the host's network the owner
    lets every person reach — read as the browser reads them, and held by
    host and port (what a proxy's ``CONNECT`` names: the same listening
    service whatever the scheme); a neighbour port, another spelling of
    loopback, or anything that is not an origin stays refused or is refused
    in one line."""
    from teachd.config import settings_from_env
    from teachd.core.errors import BadInput
    from teachd.runner.policy import RunPolicy, Who
    from teachd.runner.secret_desk import person_settings

    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.yaml").write_text("team_origins:\n  - HTTP://127.0.0.1:8080/some/path\n", encoding="utf-8")
    owners = settings_from_env({"TEACHD_HOME": str(home), "TEACHD_OWNER": "alice"})
    assert owners.team_origins == frozenset({"http://127.0.0.1:8080"})
    policy = RunPolicy(Who.of(person_settings(owners), "bob"))
    assert policy.network_refusal("http://127.0.0.1:8080/anything") is None
    for url in ("http://127.0.0.1:8081/", "http://localhost:8080/", "http://[::1]:8080/", "http://127.0.0.2:8080/"):
        assert policy.network_refusal(url) is not None, url
    from teachd.remote.destinations import Destinations

    team = Destinations(allowed=owners.team_origins)
    assert team.place("127.0.0.1", 8080) == (None, ["127.0.0.1"])  # a proxy's CONNECT to it
    assert team.place("127.0.0.1", 8081)[0] is not None
    for bad in ("- file:///etc/passwd", "- javascript:alert(1)", "http://127.0.0.1:8080"):
        (home / "config.yaml").write_text(f"team_origins:\n  {bad}\n" if bad.startswith("-") else
                                          f"team_origins: {bad}\n", encoding="utf-8")
        with pytest.raises(BadInput, match="team_origins"):
            settings_from_env({"TEACHD_HOME": str(home), "TEACHD_OWNER": "alice"})


@pytest.mark.parametrize("taker", ["the daemon's own slots", "a worker elsewhere"])
def test_bobs_run_taken_from_the_run_queue_reaches_nothing_on_the_takers_loopback(
        postgres_url: str, tmp_path: Path, sites: tuple[Site, Site], taker: str) -> None:
    """On the team store a run from the Runs page is a job on the run queue:
    the daemon's own slots or a ``teachd worker`` take it. Either holds Bob to
    public places; the owner's run of the same skill reaches the loopback
    site (the control)."""
    import os
    import signal
    import subprocess
    import sys

    from tests.test_server import serve

    _inside, internal = sites
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEACHD_")}
    homes = {name: tmp_path / name for name in ("daemon", "worker")}
    for home in homes.values():
        home.mkdir(mode=0o700)
    env.update(TEACHD_OWNER="alice", PYTHONUTF8="1", TEACHD_DB_URL=postgres_url, TEACHD_KEY=os.urandom(32).hex())
    elsewhere = taker == "a worker elsewhere"
    server = serve({**env, "TEACHD_HOME": str(homes["daemon"])}, *(("--slots", "0") if elsewhere else ()))
    worker = subprocess.Popen([sys.executable, "-m", "teachd", "worker", "--slots", "1"],
                              env={**env, "TEACHD_HOME": str(homes["worker"])}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) if elsewhere else None
    try:
        token = UserStore(open_store(Settings(home=homes["daemon"], owner="alice", db_url=postgres_url,
                                              key_env=env["TEACHD_KEY"])).db).add("bob")
        before = len(internal.log)
        with httpx.Client(base_url=server.url, timeout=60, headers={"Authorization": f"Bearer {token}"}) as bob:
            slug = _import(bob, internal.origin + "/api?queued", "Internal through the queue")
            r = bob.post("/api/runs", json={"slug": slug})
            assert r.status_code == 200, r.text
            run = _ended(bob, r.json()["run_id"])
        assert run["status"] == "aborted" and "refused" in run["message"], run
        assert internal.log[before:] == []
        with server.api() as alice:  # the control: the owner's run of the same kind of skill reaches it
            slug = _import(alice, internal.origin + "/api?owner", "Internal for the owner")
            r = alice.post("/api/runs", json={"slug": slug})
            assert r.status_code == 200, r.text
            run = _ended(alice, r.json()["run_id"])
        assert any("/api" in str(seen) for seen in internal.log[before:]), (run, internal.log[before:])
    finally:
        if worker is not None:
            worker.send_signal(signal.SIGKILL)
            worker.wait(30)
        server.stop()
