"""The scheduler: APScheduler inside the daemon, its jobs in the store's
database. Time is moved by time-machine (the process's clock, jumped), never
by sleeping for minutes; every effect is judged by the sample app's records."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import time_machine
from apscheduler.events import EVENT_JOB_EXECUTED

from teachd.config import Settings, settings_from_env
from teachd.core.schedules import Spec, spec_from, trigger
from teachd.demo.sampleapp import SampleApp, Variant
from teachd.runner.on_page import run_on_the_page
from teachd.runner.secret_desk import SecretDesk
from teachd.schedule.service import ScheduleService
from teachd.store import open_store
from teachd.store.approvals import ApprovalQueue
from teachd.store.jobstore import next_runs
from teachd.store.locks import FileLock
from teachd.store.runs import RunStore
from teachd.store.schedules import ScheduleStore
from tests.conftest import all_bytes_under
from tests.people import wait_for
from tests.sample_task import PASSWORD, SLUG, held_at

LOCAL = datetime.now().astimezone().tzinfo


def local(*args: int) -> datetime:
    return datetime(*args, tzinfo=LOCAL)  # type: ignore[misc]


def settings_of(env: dict[str, str], **extra: str) -> Settings:
    return settings_from_env({**{k: v for k, v in env.items() if k != "DISPLAY"}, **extra})


class Daemonish:
    """The scheduler as the daemon holds it, in this process (so time-machine
    moves its clock), with a person answering the Approvals page's queue."""

    def __init__(self, settings: Settings, allow: bool = True) -> None:
        self.store = open_store(settings)
        self.approvals = ApprovalQueue(self.store)
        self.service = ScheduleService(self.store, settings, self.approvals, SecretDesk(), run_on_the_page)
        self.fired: list[str] = []
        self.service.scheduler.add_listener(lambda ev: self.fired.append(ev.job_id), EVENT_JOB_EXECUTED)
        self.allow, self._stop = allow, threading.Event()
        self._person = threading.Thread(target=self._answer, daemon=True)

    def __enter__(self) -> Daemonish:
        self.service.start()
        self._person.start()
        wait_for(lambda: self.service.leading, 20)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.service.stop()
        self.approvals.close()

    def _answer(self) -> None:
        while not self._stop.is_set():
            for p in self.approvals.pending():
                self.approvals.answer(p["id"], "once" if self.allow else "deny")
            self._stop.wait(0.05)

    def jump(self, traveller: Any, to: datetime) -> None:
        traveller.move_to(to)
        self.service.scheduler.wakeup()

    def fire_at(self, traveller: Any, sid: int, to: datetime) -> dict[str, Any]:
        """Once the scheduler has the job: move the clock to ``to``, and wait
        for the schedule's outcome."""
        wait_for(lambda: sid in next_runs(self.store.db), 20)
        self.jump(traveller, to)
        return wait_for(lambda: (v := ScheduleStore(self.store).get(sid))["last_outcome"] and v)


def test_crontab_weekdays_mean_what_cron_means() -> None:
    sunday = local(2026, 11, 29, 10, 0)
    monday_9 = trigger(Spec("x", "run", cron="0 9 * * 1"), tz=LOCAL).get_next_fire_time(None, sunday)
    assert monday_9 == local(2026, 11, 30, 9, 0)
    weekdays = trigger(Spec("x", "run", cron="30 8 * * 1-5"), tz=LOCAL)
    friday = local(2026, 12, 4, 9, 0)
    assert weekdays.get_next_fire_time(None, friday) == local(2026, 12, 7, 8, 30)  # not Saturday
    assert trigger(Spec("x", "run", cron="0 9 * * 7"), tz=LOCAL).get_next_fire_time(None, sunday) == \
        local(2026, 12, 6, 9, 0)  # 7 is Sunday too


@pytest.mark.parametrize(("args", "message"), [
    (["--cron", "0 9 * *"], "five fields"),
    (["--cron", "0 25 * * *"], "--cron"),
    (["--cron", "0 9 * * 1", "--every", "1d"], "one of"),
    (["--every", "10s"], "at least 1m"),
    (["--every", "soon"], "a number and a unit"),
    (["--every", "1d", "--param", "nope=1"], "unknown parameter(s) nope"),
    (["--every", "1d", "--profile", "work"], "no profile 'work'"),
])
def test_a_schedule_that_cannot_work_is_refused_when_added(taught, cli_env_runner, args: list[str],
                                                           message: str) -> None:
    env, _port = taught
    r = cli_env_runner(env, "schedule", "add", SLUG, *args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert json.loads(cli_env_runner(env, "schedule", "list", "--json").stdout) == []


def test_a_cron_schedule_fires_at_its_time_and_records_an_ordinary_run(taught) -> None:
    env, port = taught
    settings = settings_of(env, TEACHD_SECRET_PASSWORD=PASSWORD)
    monday = local(2026, 11, 30, 8, 59, 30)
    with time_machine.travel(monday, tick=True) as clock, SampleApp(password=PASSWORD, port=port) as app:
        sid = ScheduleStore(open_store(settings)).add(spec_from(SLUG, cron="0 9 * * 1",
                                                                 params={"name": "Monday approvers"}))
        with Daemonish(settings) as d:
            wait_for(lambda: sid in next_runs(d.store.db), 20)
            assert next_runs(d.store.db)[sid] == local(2026, 11, 30, 9, 0).isoformat()
            time.sleep(1)
            assert d.fired == [] and app.state.reports == []  # not before its time
            d.jump(clock, local(2026, 11, 30, 9, 0, 5))
            view = wait_for(lambda: (v := ScheduleStore(d.store).get(sid))["last_outcome"] and v)
            assert [g["name"] for g in app.state.groups] == ["Monday approvers"]
            assert len(app.state.reports) == 1
    assert view["last_outcome"] == "success" and view["last_note"].startswith("every step")
    [run] = RunStore(open_store(settings)).recent()
    assert run["run_id"] == view["last_run_id"] and run["status"] == "success" and run["skills"] == {SLUG: 1}
    assert next_runs(open_store(settings).db)[sid] == local(2026, 12, 7, 9, 0).isoformat()


def test_run_now_while_the_schedules_run_is_in_flight_runs_after_it_and_is_not_dropped(taught) -> None:
    """APScheduler skips a job's firing while its one instance still runs: a
    "Run now" answered 200 would never run when it came as the last run wound
    down (seen under load: two daemons, the second Run now lost)."""
    env, port = taught
    settings = settings_of(env, TEACHD_SECRET_PASSWORD=PASSWORD)
    with SampleApp(password=PASSWORD, port=port) as app, held_at(app, "/reports/new") as (reached, release):
        sid = ScheduleStore(open_store(settings)).add(spec_from(SLUG, every="1d"))
        with Daemonish(settings) as d:
            wait_for(lambda: sid in next_runs(d.store.db), 20)
            d.service.run_now(sid)
            assert reached.wait(120), "the first run never reached the report form"
            d.service.run_now(sid)  # the person clicks Run now again while the first run is held
            # the scheduler took it (its next time is a day off again) while the first still runs
            wait_for(lambda: datetime.fromisoformat(next_runs(d.store.db)[sid] or "2000-01-01T00:00:00+00:00")
                     > datetime.now(UTC) + timedelta(hours=1), 20)
            assert len(app.state.reports) == 0
            release.set()
            runs = wait_for(lambda: len(rs := RunStore(d.store).recent()) == 2
                            and all(r["status"] != "running" for r in rs) and rs, 180, "both runs to end")
    assert [r["status"] for r in runs] == ["success", "success"], runs
    assert len(app.state.reports) == 2


def test_a_restart_keeps_the_next_run_time_and_a_missed_window_runs_once(taught) -> None:
    env, port = taught
    settings = settings_of(env)
    with time_machine.travel(local(2026, 11, 30, 8, 30), tick=True) as clock, \
            SampleApp(password=PASSWORD, port=port) as app:
        sid = ScheduleStore(open_store(settings)).add(spec_from(SLUG, cron="0 * * * *", check=True))
        with Daemonish(settings) as first:
            wait_for(lambda: sid in next_runs(first.store.db), 20)
        assert next_runs(open_store(settings).db)[sid] == local(2026, 11, 30, 9, 0).isoformat()  # kept
        clock.move_to(local(2026, 11, 30, 12, 30))  # no daemon at 9, 10, 11 and 12
        with Daemonish(settings) as second:
            wait_for(lambda: second.fired, 30)
            time.sleep(2)  # room for a second firing, if one were coming
            fired = list(second.fired)
            view = ScheduleStore(second.store).get(sid)
        assert app.state.clicked() == [] and not app.state.sessions  # a check never acts
    assert fired == [f"schedule-{sid}"]
    assert view["last_outcome"] == "unknown"  # the sign-in page's targets found; the rest lie behind it
    assert view["last_note"].startswith("missed 3 run(s) while no daemon ran; ran once")
    assert next_runs(open_store(settings).db)[sid] == local(2026, 11, 30, 13, 0).isoformat()


def test_a_health_check_on_a_drifted_page_names_the_step_and_acts_on_nothing(taught, cli_env_runner) -> None:
    env, port = taught
    settings = settings_of(env)
    with time_machine.travel(local(2026, 11, 30, 8, 59, 55), tick=True) as clock:
        sid = ScheduleStore(open_store(settings)).add(spec_from(SLUG, every="1d", check=True))
        with SampleApp(password=PASSWORD, port=port, variant=Variant(signin_removed=True)) as app, \
                Daemonish(settings) as d:
            view = d.fire_at(clock, sid, local(2026, 12, 1, 9, 0, 30))
            assert app.state.clicked() == [] and not app.state.sessions and app.state.reports == []
    assert view["last_outcome"] == "needs attention"
    listed = cli_env_runner(env, "skills", "list")
    assert "NEEDS ATTENTION: step 4, the Sign in button — not found" in listed.stdout
    health = json.loads(cli_env_runner(env, "skills", "list", "--json").stdout)[0]["health"]
    assert health["ok"] is False and health["step"] == 4
    report = ScheduleStore(open_store(settings)).health()[SLUG]["report"]
    statuses = {s["n"]: s["status"] for s in report["steps"]}
    assert statuses[2] == statuses[3] == "found" and statuses[4] == "not found" and statuses[15] == "not checked"


def test_a_health_check_on_the_unchanged_app_raises_no_alarm(taught) -> None:
    env, port = taught
    settings = settings_of(env)
    with time_machine.travel(local(2026, 11, 30, 8, 0), tick=True) as clock, \
            SampleApp(password=PASSWORD, port=port) as app:
        sid = ScheduleStore(open_store(settings)).add(spec_from(SLUG, every="1h", check=True))
        with Daemonish(settings) as d:
            view = d.fire_at(clock, sid, local(2026, 11, 30, 9, 0, 30))
        assert app.state.clicked() == []
    # no alarm, and not "healthy" either: only the targets a plain visit reaches were checked
    assert view["last_outcome"] == "unknown", view["last_note"]
    assert view["last_note"] == ("3 of 27 targets checked, all found; the other 24 are reached only by acting: "
                                 "unknown")  # the sign-in page's email, password and button
    health = ScheduleStore(open_store(settings)).health()[SLUG]
    assert health["ok"] is True and health["verdict"] == "unknown"


def test_a_scheduled_run_nobody_approves_ends_not_approved_with_no_effect(taught) -> None:
    env, port = taught
    settings = settings_of(env, TEACHD_SECRET_PASSWORD=PASSWORD)
    with time_machine.travel(local(2026, 11, 30, 8, 59, 50), tick=True) as clock, \
            SampleApp(password=PASSWORD, port=port) as app:
        sid = ScheduleStore(open_store(settings)).add(spec_from(SLUG, cron="0 9 * * *", timeout=1))
        with Daemonish(settings, allow=False) as d:
            d._stop.set()  # nobody at the Approvals page
            view = d.fire_at(clock, sid, local(2026, 11, 30, 9, 0, 10))
        assert app.state.clicked() == [] and app.state.reports == [] and not app.state.sessions
    assert view["last_outcome"] == "not approved"
    [run] = RunStore(open_store(settings)).recent()
    assert run["status"] == "aborted" and run["message"].startswith("not approved")


def test_retention_purges_only_old_finished_recordings(settings: Settings) -> None:
    rec = settings.recordings_dir
    for name, age_days in (("rec-old", 30), ("rec-new", 1), ("rec-old-but-writing", 30)):
        folder = rec / name
        folder.mkdir(parents=True)
        (folder / "events.jsonl").write_text("{}\n")
        old = time.time() - age_days * 86400
        os.utime(folder / "events.jsonl", (old, old))
    lock = FileLock(settings.home / "teach.lock")
    assert lock.try_acquire()
    lock.describe({"pid": os.getpid(), "recording_dir": str(rec / "rec-old-but-writing")})
    store = open_store(settings)
    service = ScheduleService(store, settings, ApprovalQueue(store), SecretDesk(), run_on_the_page)
    try:
        assert service.purge() == ["rec-old"]
    finally:
        lock.release()
    assert sorted(p.name for p in rec.iterdir()) == ["rec-new", "rec-old-but-writing"]


def test_only_one_daemon_on_a_store_runs_the_jobs_and_another_takes_over(settings: Settings) -> None:
    store = open_store(settings)
    one = ScheduleService(store, settings, ApprovalQueue(store), SecretDesk(), run_on_the_page)
    two = ScheduleService(open_store(settings), settings, ApprovalQueue(store), SecretDesk(), run_on_the_page)
    one.start()
    wait_for(lambda: one.leading, 20)
    two.start()
    time.sleep(1)
    assert one.leading and not two.leading and not two.scheduler.running
    one.stop()  # the holder goes away: the other takes over at its next look
    wait_for(lambda: two.leading, 20)
    assert two.scheduler.running
    two.stop()


def test_the_daemon_runs_a_schedule_that_waits_for_the_person_at_the_approvals_page(taught, cli_env_runner,
                                                                                     pw) -> None:
    """Through the daemon and a real browser: a scheduled run waits; one
    click (Allow this run, with the whole plan in view) and the secret typed
    on the Approvals page let its 28 steps finish right; it shows on Runs; a
    health check then catches the drifted sign-in page."""
    from tests.test_server import browser_login, serve, shot

    env, port = taught
    run_sid = json.loads(cli_env_runner(env, "schedule", "add", SLUG, "--every", "1d", "--timeout", "120",
                                        "--param", "name=Scheduled approvers", "--json").stdout)["id"]
    check_sid = json.loads(cli_env_runner(env, "schedule", "add", SLUG, "--check", "--every", "1d",
                                          "--json").stdout)["id"]
    daemon = serve(env)
    try:
        api = daemon.api()
        wait_for(lambda: all(s["next_run"] for s in api.get("/api/schedules").json()), 30)
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        browser_login(page, daemon.login_url)
        with SampleApp(password=PASSWORD, port=port) as app:
            page.goto(daemon.url + "/schedules")
            shot(page, "schedules")
            row = page.locator(f"tr[data-schedule='{run_sid}']")
            row.get_by_role("button", name="Run now").click()
            follow = row.get_by_role("link", name=re.compile(r"^Follow run-"))  # the run it started, linked
            follow.wait_for(timeout=30_000)
            started = follow.inner_text().removeprefix("Follow ")
            follow.click()
            page.wait_for_url(f"**/runs/{started}")
            page.goto(daemon.url + "/approvals")
            allow = page.get_by_role("button", name="Allow this run")
            allow.wait_for(timeout=30_000)
            assert "Open audit log link" in page.inner_text("main")  # the whole plan is in view, step 28 too
            allow.click()
            secret = page.get_by_label("Secret password for", exact=False)
            secret.wait_for(timeout=30_000)
            shot(page, "approvals-secret")
            secret.fill(PASSWORD)
            page.get_by_role("button", name="Give it").click()
            done = wait_for(lambda: next(s for s in api.get("/api/schedules").json()
                                         if s["id"] == run_sid)["last_outcome"], 120)
            assert done == "success"
            assert api.get("/api/approvals").json()["pending"] == []  # nothing else was asked
            assert [g["name"] for g in app.state.groups] == ["Scheduled approvers"]
            assert len(app.state.reports) == 1
        page.goto(daemon.url + "/runs")
        shot(page, "runs-scheduled")
        run_id = next(s for s in api.get("/api/schedules").json() if s["id"] == run_sid)["last_run_id"]
        assert run_id == started
        assert page.locator(f".chip[data-run='{run_id}']").count() == 1  # its feedback chip, one click away
        with SampleApp(password=PASSWORD, port=port, variant=Variant(signin_removed=True)) as drifted:
            assert api.post(f"/api/schedules/{check_sid}/run").status_code == 200
            outcome = wait_for(lambda: next(s for s in api.get("/api/schedules").json()
                                            if s["id"] == check_sid)["last_outcome"], 60)
            assert drifted.state.clicked() == [] and not drifted.state.sessions
        assert outcome == "needs attention"
        page.goto(daemon.url + f"/skills/{SLUG}")
        assert "Needs attention" in page.locator("#health").inner_text()
        shot(page, "skill-needs-attention")
        browser.close()
    finally:
        assert daemon.stop() == 0
        out, err = daemon.proc.communicate()
    assert PASSWORD not in out + err
    assert PASSWORD.encode() not in all_bytes_under(Path(env["TEACHD_HOME"]))


def test_a_schedule_for_a_skill_with_no_taught_steps_is_refused_whether_it_runs_or_checks(store) -> None:
    """A skill written by hand is instructions for an agent: there is nothing
    for a schedule to replay or check, so it is refused when added, saying so
    (the docs promised it; a plain run schedule once slipped through)."""
    from teachd.core.errors import BadInput
    from teachd.core.models import SkillContent

    store.create("by-hand", SkillContent(name="By hand", description="For agents.", instructions="# Do it\n"))
    schedules = ScheduleStore(store)
    for kind, check in (("replay", False), ("check", True)):
        with pytest.raises(BadInput, match=f"no steps to {kind}; agents use it as instructions"):
            schedules.add(spec_from("by-hand", every="1d", check=check))
    assert schedules.all() == []
