"""``teachd demo``: the whole loop on the bundled sample app.

Record a scripted demonstration (through ``teachd teach`` and the DevTools
port, with a password that must be masked), compile and store it, show the
SKILL.md, replay it on a changed version of the app (renamed ids, moved
layout), record the feedback and show the History.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from teachd.config import Settings
from teachd.core.errors import Failed
from teachd.demo.sampleapp import SampleApp, Variant
from teachd.demo.sampleapp.judge import RIGHT, judge, teachd_env
from teachd.demo.sampleapp.script import TASK, demonstrate
from teachd.demo.xvfb import xvfb
from teachd.runner.gate import Answer, Request
from teachd.skills.exchange import export_md
from teachd.store import open_store
from teachd.store.runs import RunStore
from teachd.teach.process import TeachProcess, free_port

DRIFT = Variant.named("combination")


@contextlib.contextmanager
def display(desktop: str | None) -> Iterator[tuple[str | None, bool]]:
    """(DISPLAY, headless): the desktop if there is one, else our own Xvfb,
    else headless."""
    if desktop:
        yield desktop, False
        return
    if not shutil.which("Xvfb"):
        yield None, True
        return
    with xvfb() as disp:
        yield disp, False


class AnnouncingApprover:
    """The demo's person: the plan is shown and allowed for this run (one
    answer); anything the plan does not cover is shown and allowed once."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.count = 0

    def ask(self, request: Request) -> Answer:
        self.count += 1
        if request.plan is not None:
            self.say(f"  {request.plan.describe()}")
            self.say(f"  approve? {request.describe()} → run (this run's whole plan)")
            return Answer(request.id, True, run=True)
        self.say(f"  approve? {request.describe()} → once")
        return Answer(request.id, True)


def demo_password() -> str:
    """The sample app's password for one demo: known only to this process
    (and, with ``teachd demo --serve``, to the person it is shown to)."""
    return "demo-" + secrets.token_urlsafe(9)


def run_demo(say: Callable[[str], None], settings: Settings, home: Path | None = None,
             password: str | None = None, port: int | None = None) -> dict[str, Any]:
    """``settings`` are the caller's (its environment, display, Chromium); the
    demo keeps its own state in ``home``. The sample app listens on ``port``
    (the skill's scope) with ``password``: a caller that keeps the app up
    after the demo gives both."""
    home = home or Path(tempfile.mkdtemp(prefix="teachd-demo-"))
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    password = password or demo_password()
    # saved as the person running the demo: `teachd serve` on this home then shows the skill
    env = teachd_env(home, base=settings.environ, owner=settings.owner)
    port = port or free_port()
    summary: dict[str, Any] = {"home": str(home)}
    with display(settings.display) as (disp, headless):
        flags = ["--no-os-input"] + (["--headless"] if headless else [])
        if disp:
            env["DISPLAY"] = disp
        say(f"1. Starting the sample expenses app on 127.0.0.1:{port} and recording a demonstration "
            f"({'headless' if headless else 'Chromium on display ' + str(disp)})…")
        with SampleApp(password=password, port=port) as app:
            teach = TeachProcess(env, TASK, app.url + "/login", *flags)
            demonstrate(teach, password, pause=0.1)
            code, out, err = teach.finish()
            if code != 0:
                raise Failed("the recording failed: " + " ".join(err.split())[-300:])
        saved = json.loads(out)
        summary.update(saved)
        store = open_store(Settings(home=home, owner=settings.owner))
        skill = store.get(saved["slug"])
        say(f"2. Compiled and stored {skill.slug} v{skill.current_version} "
            f"(approval: {', '.join(sorted(skill.current.approval.gated)) or 'none'}). Its SKILL.md:\n")
        say(export_md(skill))
        say("3. Replaying it on a changed app: ids renamed, layout moved, new theme, wrappers, "
            "look-alike decoys, targets below the fold…")
        runs = RunStore(store)
        from teachd.runner.feedback import give_feedback
        from teachd.runner.policy import Who
        from teachd.runner.run import RunOptions, run_skill

        opts = RunOptions(headless=headless, chromium=settings.chromium, display=disp, environ=env)
        with SampleApp(password=password, variant=DRIFT, port=port) as changed:
            person = AnnouncingApprover(say)
            outcome = run_skill(runs, frozenset(), skill.slug, person,
                                lambda _name: password, opts, Who.of(settings, store.owner),
                                progress=lambda m: say("  " + m))
            judged = judge(outcome.status, changed.state)
            effect = {"reports": list(changed.state.reports), "groups": list(changed.state.groups)}
        ok = judged.verdict == RIGHT
        say(f"   run {outcome.run_id}: {outcome.status} — {outcome.message}")
        say(f"   the app now holds: {effect}")
        say(f"   judged by the app's own log: {judged.verdict}, wrong actions: {len(judged.wrong)}")
        verdict = "success" if ok else "failure"
        updated = give_feedback(runs, outcome.run_id, skill.slug, verdict, note="teachd demo").skill
        history = updated.current.instructions.split("## History", 1)[1].strip()
        say(f"4. Feedback recorded as v{updated.current_version}. History:\n{history}\n")
        # The scan reads the database's own files: this process's connection to them closes first.
        # (Closing any handle on a file drops every POSIX lock this process holds on it: a connection
        # left open would look to another process like none, and the next CLI command on this home
        # would check the WAL in and delete it from under the daemon that --serve starts here.)
        store.db.close()
        leaks = [p for p in home.rglob("*") if p.is_file() and password.encode() in p.read_bytes()]
        say(f"5. The demo password appears in {len(leaks)} of the files under {home}.")
        summary.update(status=outcome.status, effect_ok=ok, run_id=outcome.run_id, leaks=len(leaks),
                       version=updated.current_version, questions=person.count)
        if not ok or leaks:
            raise Failed(f"the demo did not complete as expected (status {outcome.status}, "
                              f"{len(leaks)} leaks)")
    return summary
