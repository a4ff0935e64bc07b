"""The run page's routes, from the attacker's side: another person asking
for alice's run, its live stream, its pictures, or cancelling it, running it
again or taking back her feedback; the page key in a URL (the one place it
may ride, for EventSource) tried everywhere else; a start address that is
not a web page."""

from __future__ import annotations

from pathlib import Path

import httpx

from teachd.config import Settings
from teachd.store import open_store
from teachd.store.runs import RunStore
from teachd.store.users import UserStore
from tests.security.web_surface import SKILL, daemon
from tests.test_server import web_login

JPEG = b"\xff\xd8\xff\xe0" + b"alice's screen" * 20


def _alices_run(home: Path) -> str:
    runs = RunStore(open_store(Settings(home=home, owner="alice")))
    run_id = runs.new_run_id()
    runs.start(run_id, {SKILL: 1})
    runs.progress(run_id, {"slug": SKILL, "used": [SKILL], "params": {"amount": "12.00"},
                           "steps": [{"n": 1, "action": "click", "status": "running"}]})
    runs.put_picture(run_id, 1, "before", JPEG)
    return run_id


def test_another_person_reaches_none_of_alices_run(tmp_path: Path) -> None:
    with daemon(tmp_path) as server:
        run_id = _alices_run(server.home)
        bob = UserStore(open_store(Settings(home=server.home, owner="alice")).db).add("bob")
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {bob}"}, timeout=10) as api:
            for method, path in (("GET", f"/api/runs/{run_id}"), ("GET", f"/api/runs/{run_id}/events"),
                                 ("GET", f"/api/runs/{run_id}/pictures/1/before"),
                                 ("POST", f"/api/runs/{run_id}/cancel"), ("POST", f"/api/runs/{run_id}/again"),
                                 ("DELETE", f"/api/runs/{run_id}/feedback/{SKILL}")):
                r = api.request(method, path)
                assert r.status_code == 404, (method, path, r.status_code)
                assert b"alice's screen" not in r.content and b"12.00" not in r.content
            assert run_id not in api.get("/api/runs").text
            assert api.get(f"/api/skills/{SKILL}/runs").status_code == 404  # not his skill at all
        with server.api() as alice:
            assert alice.get(f"/api/runs/{run_id}").json()["status"] == "running"  # still running: untouched
            assert alice.get(f"/api/runs/{run_id}/pictures/1/before").content == JPEG
            assert alice.get(f"/api/runs/{run_id}/pictures/1/after").status_code == 404
            assert alice.get(f"/api/runs/{run_id}/pictures/1/../../../skills").status_code == 404


def test_the_page_key_in_a_url_opens_only_the_runs_live_stream(tmp_path: Path) -> None:
    with daemon(tmp_path) as server:
        run_id = _alices_run(server.home)
        web = web_login(server.url, server.login_url)
        key = str(web.headers.pop("X-CSRF-Token"))
        try:
            for method, path in (("GET", "/api/runs"), ("GET", f"/api/runs/{run_id}"),
                                 ("GET", f"/api/runs/{run_id}/pictures/1/before"), ("GET", "/api/skills"),
                                 ("POST", f"/api/runs/{run_id}/cancel"), ("POST", f"/api/runs/{run_id}/events"),
                                 ("GET", f"/api/runs/{run_id}/events/extra"), ("GET", "/runs")):
                r = web.request(method, path, params={"key": key})
                shell = path == "/runs" and r.status_code == 200 and "teachd-key" in r.text  # the data-free shell
                assert r.status_code in (403, 404, 405) or shell, (path, r.status_code)
                assert b"alice's screen" not in r.content and b"12.00" not in r.content, path
            assert web.get(f"/api/runs/{run_id}/events", params={"key": "wrong"}).status_code == 403
            with web.stream("GET", f"/api/runs/{run_id}/events", params={"key": key}) as r:
                assert r.status_code == 200
                for line in r.iter_lines():
                    if line.startswith("data: "):
                        assert '"12.00"' in line  # her own run, to her own page
                        break
        finally:
            web.close()
        with server.api() as alice:
            assert alice.get(f"/api/runs/{run_id}").json()["status"] == "running"  # nothing was cancelled


def test_a_run_starts_only_at_a_web_address(tmp_path: Path) -> None:
    with daemon(tmp_path) as server, server.api() as api:
        for url in ("javascript:alert(1)", "file:///etc/passwd", "data:text/html,hi", "chrome://settings",
                    " javascript:alert(1)", "view-source:http://127.0.0.1/"):
            r = api.post("/api/runs", json={"slug": SKILL, "start_url": url})
            assert r.status_code == 400, (url, r.text)
            s = api.post("/api/schedules", json={"slug": SKILL, "every": "1h", "start_url": url})
            assert s.status_code == 400, (url, s.text)
        assert api.get("/api/runs").json() == []  # nothing started
