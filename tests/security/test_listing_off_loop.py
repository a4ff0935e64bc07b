"""One person's listing must not hold up another's requests. Written from the
side of a person with thousands of large skills (or anyone who makes a
listing slow): while their skills are decrypted, everyone else is answered.

Decryption (``Cipher.open``) is watched where it happens: a call made on the
thread running the event loop fails the test, whatever its speed. And a
listing held open on purpose (the store waits in the middle of it) must not
stop another person's request from being answered. Nor may any route ask the
store on the event loop at all."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from teachd.config import Settings
from teachd.core.approval import Approval
from teachd.store import SkillContent, SkillStore, open_store
from teachd.store.crypto import Cipher
from teachd.store.users import UserStore

BIG = "Step.\n" * 2000  # a large body: its decryption is real work


def _on_a_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every decryption made on an event loop's thread, by field."""
    seen: list[str] = []
    for name in ("open", "open_remembered"):
        original = getattr(Cipher, name)

        def watching(self: Cipher, owner: str, slug: str, version: int, field: str, blob: bytes,
                     _original: Any = original) -> str:
            if _on_a_loop():
                seen.append(f"{owner}/{slug} {field}")
            return str(_original(self, owner, slug, version, field, blob))

        monkeypatch.setattr(Cipher, name, watching)
    yield seen


def _skills(store: SkillStore, prefix: str, n: int) -> None:
    for i in range(n):
        store.create(f"{prefix}-{i:03d}", SkillContent(name=f"{prefix} {i}", description=f"Does {prefix} {i}.",
                                                      instructions=BIG, approval=Approval(True, ())))


def test_one_persons_listing_holds_up_no_one_else(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                  watched: list[str]) -> None:
    from teachd.server.app import create_app

    settings = Settings(home=home, owner="alice")
    store = open_store(settings)
    _skills(store, "alice", 40)
    bob = UserStore(store.db).add("bob")
    _skills(store.as_person("bob"), "bob", 2)
    app = create_app(settings, "127.0.0.1", 8765)
    alice = (home / "token").read_text().strip()

    armed, inside, release = threading.Event(), threading.Event(), threading.Event()
    listing = SkillStore.summaries  # what GET /api/skills reads

    def held(self: SkillStore, *args: Any, **kwargs: Any) -> Any:
        """Alice's listing stops in the middle until the test lets it go."""
        if armed.is_set() and self.owner == "alice":
            inside.set()
            release.wait(60)
        return listing(self, *args, **kwargs)

    monkeypatch.setattr(SkillStore, "summaries", held)
    answers: dict[str, Any] = {}
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        def ask(who: str, token: str) -> None:
            answers[who] = client.get("/api/skills", headers={"Authorization": f"Bearer {token}"})

        watched.clear()  # the daemon's start (its key check) is not a request
        armed.set()
        alices = threading.Thread(target=ask, args=("alice", alice))
        alices.start()
        try:
            assert inside.wait(20), "alice's listing never started"
            bobs = threading.Thread(target=ask, args=("bob", bob))
            bobs.start()
            bobs.join(20)
            answered_meanwhile = not bobs.is_alive() and alices.is_alive()
        finally:
            release.set()
            alices.join(60)
        armed.clear()
        assert answered_meanwhile, "bob waited for alice's listing"
        assert [s["slug"] for s in answers["bob"].json()] == ["bob-000", "bob-001"]
        assert len(answers["alice"].json()) == 40
        headers = {"Authorization": f"Bearer {alice}"}
        for path in ("/api/skills", "/api/manifest", "/api/skills/alice-001", "/api/skills/alice-001/load",
                     "/api/skills/alice-001/export", "/api/skills/alice-001/export?format=json",
                     "/api/skills/alice-001/grants", "/api/approvals", "/api/schedules",
                     "/skills", "/skills/alice-001", "/runs", "/schedules", "/approvals"):
            got = client.get(path, headers=headers)
            assert got.status_code == 200, path
            assert not path.startswith("/skills") or "alice 1" in got.text, path  # the page itself, not a shell
    assert watched == []  # nothing of anyone's was decrypted on the event loop


def test_mcp_listings_and_reads_decrypt_off_the_event_loop(env: dict[str, str], watched: list[str]) -> None:
    """The in-process MCP client shares the server's event loop: any
    decryption on it is caught."""
    from mcp import Client

    from teachd.config import settings_from_env
    from teachd.mcp.server import TeachdMCP
    from teachd.mcp.session import services_for
    from teachd.store.runs import RunStore

    settings = settings_from_env({k: v for k, v in env.items() if k != "DISPLAY"})
    store = open_store(settings)
    _skills(store, "alice", 5)
    server = TeachdMCP(services_for(RunStore(store), settings, headless=True))

    async def go() -> None:
        async with Client(server, mode="legacy") as client:
            assert "alice-004" in str((await client.list_tools()).tools)
            assert len((await client.list_resources()).resources) == 5
            assert len((await client.list_prompts()).prompts) == 5
            assert (await client.read_resource("skill://alice-001")).contents
            assert (await client.get_prompt("skill:alice-002", {})).messages
            assert not (await client.call_tool("load_skill", {"slug": "alice-003"})).is_error

    watched.clear()  # the skills were made (and read back) outside any loop
    try:
        asyncio.run(go())
    finally:
        server.close()
    assert watched == []


SLUG = "expenses"
# what starts a browser or a recording is left to the tests that run them
STARTS_SOMETHING = re.compile(r"^(POST /api/runs$|POST /api/runs/\{run_id\}/(again|repair)$|POST /api/teach|"
                              r"POST /api/skills-from-url$|.* /mcp$)")
# a body each route takes far enough to reach the store (an answer, a tool, a file's text, …)
BODY = {"text": "a\n", "on": True, "slug": SLUG, "outcome": "success", "answer": "deny", "tool": "computer_act",
        "with": "bob", "can": "use", "every": "1h"}


def test_no_route_asks_the_store_on_the_event_loop(home: Path) -> None:
    """A query on the event loop holds up every other request the daemon is
    answering, for as long as the store takes (on PostgreSQL a round trip, or
    a wait for a free connection): the soak's GET p99 was made of such
    waits. Every route of the app (pages, API) is called as another person
    (whose token the guard looks up in the store); every call of the store
    made on a thread running an event loop is an offence, named by route."""
    from teachd.server.app import create_app

    settings = Settings(home=home, owner="alice")
    store = open_store(settings)
    store.create(SLUG, SkillContent(name="Expenses", description="File them. Use when.", instructions="# E\n"))
    bob = UserStore(store.db).add("bob")
    app = create_app(settings, "127.0.0.1", 8765)
    offences: list[str] = []
    now: list[str] = [""]
    with TestClient(app, base_url="http://127.0.0.1:8765", raise_server_exceptions=False) as client:
        owner = (home / "token").read_text().strip()
        client.post(f"/api/skills/{SLUG}/grants", json={"with": "bob", "can": "edit"},
                    headers={"Authorization": f"Bearer {owner}"})
        db = app.state.daemon.store.db

        def watched(call: Callable[..., Any]) -> Callable[..., Any]:
            def checked(*args: Any, **kwargs: Any) -> Any:
                if _on_a_loop():
                    offences.append(now[0])
                return call(*args, **kwargs)
            return checked

        db.query, db.atomic = watched(db.query), watched(db.atomic)
        routes = sorted({(m, r.path) for r in app.routes for m in getattr(r, "methods", None) or ()
                         if m != "HEAD"})
        called = []
        for method, path in routes:
            if STARTS_SOMETHING.match(f"{method} {path}"):
                continue
            url = re.sub(r"\{[^}]+\}", lambda m: {"{slug}": SLUG, "{path:path}": "references/a.md",
                                                   "{sid:int}": "1", "{pid:int}": "1", "{rid:int}": "1",
                                                   "{n:int}": "1", "{action}": "pause"}.get(m.group(0), "x"),
                         path)
            now[0] = f"{method} {path}"
            r = client.request(method, url, json=BODY, headers={"Authorization": f"Bearer {bob}"})
            assert r.status_code < 500, (method, url, r.text[:300])
            called.append(now[0])
        now[0] = "GET /login?token= (a person's)"
        assert client.get(f"/login?token={bob}").status_code == 200
        now[0] = "POST /login (a person's)"
        assert client.post("/login", content=f"token={bob}", headers={
            "Origin": "http://127.0.0.1:8765", "Content-Type": "application/x-www-form-urlencoded"}).status_code == 200
        assert client.cookies, "bob's session began"
        for page in ("/", "/api/skills", f"/skills/{SLUG}"):  # bob's session, and a header that is no token
            for headers in ({}, {"Authorization": "Basic Ym9iOng="}, {"Authorization": f"Bearer {owner}x"}):
                now[0] = f"GET {page} with bob's session and {headers or 'no header'}"
                assert client.get(page, headers=headers).status_code < 500
    assert len(called) > 40, called  # the schema's routes were called, not a handful
    assert not offences, "; ".join(sorted(set(offences)))
