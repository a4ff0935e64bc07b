"""``teachd run``: load skills, replay one in Chromium through the gate, and
keep a record of the run (status, skills and versions, steps; never secrets)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compiler.plan import PlanError, Procedure
from recorder.browser import CAPTURE_JS
from teachd.errors import InvalidSkill, PolicyStop, TeachdError
from teachd.runner.gate import Approver, Gate
from teachd.runner.replay import STEP_TIMEOUT, Halt, Replayer
from teachd.runner.session import RunSession
from teachd.store.runs import RunStore


@dataclass
class RunOutcome:
    run_id: str
    status: str  # success | failure | aborted
    message: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    skills: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "status": self.status, "message": self.message,
                "steps": self.steps, "skills": self.skills}


def run_skill(
    runs: RunStore,
    slug: str,
    approver: Approver,
    secret: Callable[[str], str],
    params: Mapping[str, str] | None = None,
    start_url: str | None = None,
    headless: bool = False,
    chromium: str | None = None,
    profile: Sequence[str] | None = None,
    run_setting: str = "auto",
    progress: Callable[[str], None] | None = None,
    step_timeout: float = STEP_TIMEOUT,
) -> RunOutcome:
    from recorder.browser import BrowserMissing, chromium_path, launch_args

    saved = frozenset(r["tool"] for r in runs.rules())
    gate = Gate(approver, run_setting=run_setting, saved_rules=saved)
    session = RunSession(runs.skills, gate, profile)
    session.auto_load()
    session.load_skill(slug)
    skill = session.loaded[slug]
    try:
        proc = Procedure.from_files(skill.current.files)
    except PlanError as exc:
        raise InvalidSkill(f"{slug}: {exc}") from None
    unknown = set(params or {}) - set(proc.parameters)
    if unknown:
        raise TeachdError(f"unknown parameter(s) {', '.join(sorted(unknown))}; "
                          f"this skill takes: {', '.join(proc.parameters) or 'none'}")
    try:
        exe = chromium_path(chromium)
    except BrowserMissing as exc:
        raise TeachdError(str(exc)) from None
    if not headless and not os.environ.get("DISPLAY"):
        raise TeachdError("no display to show the browser on: pass --headless")
    run_id = runs.new_run_id()
    runs.start(run_id, session.versions())
    status, message = "failure", ""
    replayer: Replayer | None = None
    try:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=exe, headless=headless,
                                         args=launch_args(None))
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            context.add_init_script(path=str(CAPTURE_JS))
            page = context.new_page()
            replayer = Replayer(context, page, proc, gate, params or {}, secret,
                                start_url=start_url, progress=progress, step_timeout=step_timeout)
            try:
                replayer.run()
                status, message = "success", "every step and the success check held"
                if replayer.notes:
                    message += " (" + "; ".join(replayer.notes) + ")"
            except PolicyStop as exc:
                status, message = "aborted", str(exc)
            except Halt as exc:
                status, message = "failure", str(exc)
            finally:
                browser.close()
    finally:
        steps = [r.as_dict() for r in replayer.results] if replayer else []
        runs.finish(run_id, status, {"message": message, "steps": steps, "gate": gate.log,
                                     "slug": slug})
    return RunOutcome(run_id, status, message, steps, session.versions())
