"""A run started from the daemon, followed and steered over its API as the run
page does: its id at once, a duplicate refused while it starts, one answer
for the whole plan, its steps and pictures live over server-sent events, the
form's parameters in the app's own record, feedback only once it ended (and
undoable), cancel and run again."""

from __future__ import annotations

import json
from typing import Any

from teachd.demo.sampleapp import SampleApp
from tests.people import run_until
from tests.sample_task import PASSWORD, SLUG
from tests.test_server import serve


def _events(s: Any, run_id: str) -> list[dict[str, Any]]:
    """Every `run` event of the stream until `end` (the run page's feed)."""
    seen = []
    with s.api() as api, api.stream("GET", f"/api/runs/{run_id}/events", timeout=120) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        event = ""
        for line in r.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "run":
                seen.append(json.loads(line[6:]))
            elif event == "end":
                break
    return seen


def test_a_daemon_run_asks_once_streams_its_steps_with_pictures_and_uses_the_forms_values(taught) -> None:
    env, port = taught
    s = serve({**env, "TEACHD_SECRET_PASSWORD": PASSWORD})
    try:
        with SampleApp(password=PASSWORD, port=port) as app, s.api() as api:
            form = api.get(f"/api/skills/{SLUG}").json()
            names = {p["name"]: p for p in form["parameters"]}
            assert names["amount"]["default"] == "42.50" and "Amount" in names["amount"]["description"]
            assert "password" not in names and form["secrets"] == ["password"]  # a secret is never a form field
            params = {"amount": "77.10", "description": "Train to Lyon", "name": "Auditors-77"}
            started = api.post("/api/runs", json={"slug": SLUG, "params": params})
            assert started.status_code == 200, started.text
            run_id = started.json()["run_id"]
            again = api.post("/api/runs", json={"slug": SLUG, "params": params})  # a second click
            assert again.status_code == 409 and run_id in again.text
            early = api.post(f"/api/runs/{run_id}/feedback", json={"slug": SLUG, "outcome": "success"})
            assert early.status_code == 409  # not while it runs
            waiting = run_until(api, run_id, lambda r: r["waiting"])
            question = waiting["waiting"][0]
            assert question["offers_run"] and question["of"] == len(question["plan"]["steps"]) == 28
            assert question["skills"] == [SLUG]
            typed = {st["value"] for st in question["plan"]["steps"] if st["action"] == "type into"}
            assert {"77.10", "Train to Lyon", "Auditors-77", "[secret password]"} <= typed
            assert api.get("/api/waiting").json()["approvals"] == 1
            answered = api.post(f"/api/approvals/{question['id']}", json={"answer": "run"})
            assert answered.status_code == 200, answered.text
            events = _events(s, run_id)
            run = run_until(api, run_id, lambda r: r["status"] != "running")
            reports, groups = list(app.state.reports), [g["name"] for g in app.state.groups]
        assert run["status"] == "success", run["message"]
        assert api_count(s) == 0  # nothing waits any more
        assert len(reports) == 1 and reports[0]["amount"] == "77.10"
        assert reports[0]["description"] == "Train to Lyon" and "Auditors-77" in groups
        # live: the stream saw steps one by one, each with its pictures
        counts = [len(e["steps"]) for e in events]
        assert counts == sorted(counts) and len(set(counts)) > 5
        last = events[-1]
        assert [st["status"] for st in last["steps"]] == ["ok"] * 28
        with s.api() as api:
            for st in last["steps"][1:]:
                assert set(st["pictures"]) == {"before", "after"}, st
                jpeg = api.get(st["pictures"]["after"])
                assert jpeg.status_code == 200 and jpeg.content[:3] == b"\xff\xd8\xff"
            # feedback once it ended, undoable: the History line goes again
            given = api.post(f"/api/runs/{run_id}/feedback", json={"slug": SLUG, "outcome": "success"}).json()
            undone = api.delete(f"/api/runs/{run_id}/feedback/{SLUG}")
            assert undone.status_code == 200, undone.text
            assert undone.json()["version"] == given["version"] + 1 and undone.json()["feedback"] == {}
            skill = api.get(f"/api/skills/{SLUG}").json()
            assert run_id not in skill["instructions"]  # the History line is gone
            assert api.get(f"/api/skills/{SLUG}/runs").json()[0]["run_id"] == run_id
    finally:
        s.stop()


def api_count(s: Any) -> int:
    with s.api() as api:
        return int(api.get("/api/waiting").json()["approvals"])


def test_cancel_withdraws_the_question_and_run_again_asks_again(taught) -> None:
    env, port = taught
    s = serve({**env, "TEACHD_SECRET_PASSWORD": PASSWORD})
    try:
        with SampleApp(password=PASSWORD, port=port) as app, s.api() as api:
            run_id = api.post("/api/runs", json={"slug": SLUG, "params": {"amount": "5.00"}}).json()["run_id"]
            run_until(api, run_id, lambda r: r["waiting"])
            assert api.post(f"/api/runs/{run_id}/cancel").status_code == 200
            run = run_until(api, run_id, lambda r: r["status"] != "running")
            assert run["status"] == "aborted" and "cancelled" in run["message"]
            assert api.get("/api/approvals").json()["pending"] == []
            refused = api.post(f"/api/runs/{run_id}/feedback", json={"slug": SLUG, "outcome": "failure"})
            assert refused.status_code == 409  # a cancelled run says nothing about the skill
            second = api.post(f"/api/runs/{run_id}/again").json()["run_id"]
            assert second != run_id
            again = run_until(api, second, lambda r: r["waiting"])
            assert again["params"] == {"amount": "5.00"} and again["waiting"][0]["offers_run"]
            api.post(f"/api/approvals/{again['waiting'][0]['id']}", json={"answer": "deny"})
            run_until(api, second, lambda r: r["status"] != "running")
            assert app.state.reports == [] and app.state.clicked() == []
    finally:
        s.stop()


def test_cancel_while_a_secret_is_asked_withdraws_it_and_nothing_more_is_typed(taught) -> None:
    env, port = taught
    s = serve(env)  # no TEACHD_SECRET_PASSWORD: the run asks for it on the page
    try:
        with SampleApp(password=PASSWORD, port=port) as app, s.api() as api:
            run_id = api.post("/api/runs", json={"slug": SLUG}).json()["run_id"]
            question = run_until(api, run_id, lambda r: r["waiting"])["waiting"][0]
            api.post(f"/api/approvals/{question['id']}", json={"answer": "run"})
            asked = run_until(api, run_id, lambda r: r["secrets_waiting"])["secrets_waiting"][0]
            assert api.get("/api/waiting").json()["secrets"] == 1
            cancelled = api.post(f"/api/runs/{run_id}/cancel").json()
            assert cancelled["withdrawn"] == 1
            run = run_until(api, run_id, lambda r: r["status"] != "running", timeout=20)
            assert run["status"] == "aborted" and "cancelled" in run["message"]
            assert api.get("/api/waiting").json() == {"approvals": 0, "secrets": 0}
            late = api.post(f"/api/secrets/{asked['id']}", json={"value": PASSWORD})
            assert late.status_code == 404  # no longer asked: nothing is typed
            assert not app.state.sessions and app.state.reports == []  # never signed in
    finally:
        s.stop()
