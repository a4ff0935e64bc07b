"""``teachd run``: load skills, replay one in Chromium through the gate, and
keep a record of the run (status, skills and versions, steps; never secrets).

A run's status: ``success`` (every step, and a success check that could tell
the effect happened), ``unverified`` (every step ran and nothing failed, but
nothing on the final page could confirm the effect: no address that differs
from where the last step acted, no title, no value shown), ``failure`` (a
step or the success check halted: a missing effect is a failure),
``partial`` (a step halted after the app had answered a write the run sent:
a half change, reported with what was written and what was not done) or
``aborted`` (an approval or the scope stopped it). ``teachd run`` exits 0 only
on ``success``; ``unverified`` exits 1 like any run that is not known to have
worked, and a person's feedback (worked / failed) settles it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler.plan import Procedure
from recorder.browser import CAPTURE_JS
from teachd.core.errors import BadInput, PolicyStop, Unavailable
from teachd.runner.gate import Approver, Asking, Gate
from teachd.runner.observe import demonstrated_crop
from teachd.runner.plan_view import plan_of
from teachd.runner.policy import RunPolicy, Who
from teachd.runner.priority import yielding
from teachd.runner.replay import STEP_TIMEOUT, Cancelled, Halt, Replayer
from teachd.runner.secrecy import without_secrets
from teachd.runner.session import RunSession
from teachd.runner.shown import ShownSteps
from teachd.store.runs import RunStore

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page


UNVERIFIED = ("every step ran, but nothing on the final page could confirm the effect "
              "(no distinguishing address, no title, no typed value shown): unverified, check it yourself")


@dataclass
class RunOutcome:
    run_id: str
    status: str  # success | unverified | partial | failure | aborted (the module's docstring says when)
    message: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    skills: dict[str, int] = field(default_factory=dict)
    partial: dict[str, Any] | None = None  # what a run that stopped half way wrote, and left undone

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "status": self.status, "message": self.message,
                "steps": self.steps, "skills": self.skills,
                **({"partial": self.partial} if self.partial else {})}


@dataclass(frozen=True)
class RunOptions:
    """How to replay: what the user chose on the command line (or the API)."""

    params: Mapping[str, str] = field(default_factory=dict)
    start_url: str | None = None
    headless: bool = False
    chromium: str | None = None
    display: str | None = None  # the X display a visible browser shows on
    environ: Mapping[str, str] = field(default_factory=dict)  # the browser's environment
    profile: Sequence[str] | None = None  # bound: load exactly these skills
    run_setting: str = "auto"
    step_timeout: float = STEP_TIMEOUT
    origin: str = ""  # who started it, for the Runs page: "", "web UI", "schedule 3", "MCP session …"
    run_id: str | None = None  # recorded already (the daemon shows the run page before the browser starts)
    # a before/after picture of each step, for the run page (~0.1 s a step): on for the runs the
    # daemon starts (a person follows them there), `teachd run --pictures` for the command line
    pictures: bool = False
    # where demonstrations are kept: a changed step's question shows the demonstration's picture of its
    # target beside what this run found (read while the recording is kept; None: not shown)
    recordings: Path | None = None
    # more of the run's record, kept in it while it runs and after (a queued run's job, the run it repeats)
    record: Mapping[str, Any] = field(default_factory=dict)


def run_skill(runs: RunStore, saved_rules: frozenset[str], slug: str, approver: Approver,
              secret: Callable[[str], str], opts: RunOptions, who: Who,
              progress: Callable[[str], None] | None = None,
              on_start: Callable[[str], None] | None = None) -> RunOutcome:
    """Replay ``slug`` in a browser of its own, held to ``who``'s rules
    (teachd.runner.policy); the run is recorded (``on_start`` hears its id
    as soon as it has one) whatever the outcome."""
    gate = Gate(approver, run_setting=opts.run_setting, saved_rules=saved_rules)
    session = RunSession(runs.skills, gate, opts.profile)
    session.auto_load()
    proc = prepare(session, slug, opts.params)
    check_display(opts)
    with open_chromium(opts, RunPolicy(who)) as (context, page):
        outcome, _page = replay(runs, session, slug, proc, context, page, opts, secret, progress, on_start)
    return outcome


def check_display(opts: RunOptions) -> None:
    from recorder.browser import chromium_path

    chromium_path(opts.chromium, opts.headless)  # a missing browser is named before anything starts
    if not opts.headless and not opts.display:
        raise Unavailable("no display to show the browser on: pass --headless")


def prepare(session: RunSession, slug: str, params: Mapping[str, str]) -> Procedure:
    """Load the skill into the session (its gate with it) and check the parameters."""
    session.load_skill(slug)
    proc = Procedure.from_files(session.loaded[slug].current.files)
    unknown = set(params) - set(proc.parameters)
    if unknown:
        raise BadInput(f"unknown parameter(s) {', '.join(sorted(unknown))}; "
                       f"this skill takes: {', '.join(proc.parameters) or 'none'}")
    return proc


BROWSERS_PER_PERSON = 3  # Chromiums one person may hold open on a daemon's machine: replays, and MCP sessions


@contextlib.contextmanager
def open_chromium(opts: RunOptions, policy: RunPolicy) -> Iterator[tuple[BrowserContext, Page]]:
    """Debian's Chromium with the capture script (its mutation counter is what
    the replay waits on), visible on the display or headless; ``policy``'s
    rules are on it before its first page exists (every path that opens a
    browser for a run comes through here, and must say whose run it is)."""
    from playwright.sync_api import sync_playwright

    from recorder.browser import chromium_path, launch_args

    exe = yielding(chromium_path(opts.chromium, opts.headless))  # below the requests: runner.priority
    with sync_playwright() as pw, policy.network() as network_args:
        # No TEACHD_SECRET_* in the browser's environment: secrets are typed, never inherited.
        base = without_secrets(opts.environ or os.environ)
        env: dict[str, str | float | bool] = {**base, **({"DISPLAY": opts.display} if opts.display else {})}
        browser = pw.chromium.launch(executable_path=exe, headless=opts.headless,
                                     args=launch_args(None) + network_args, env=env)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            context.add_init_script(path=str(CAPTURE_JS))
            policy.arm(context)
            yield context, context.new_page()
        finally:
            browser.close()


class RunWatch:
    """A replay's observer that keeps the run page's record: the plan, each
    step as it begins and ends, the pictures (teachd.runner.observe)."""

    def __init__(self, runs: RunStore, run_id: str, base: dict[str, Any], pictures: bool,
                 recordings: Path | None = None) -> None:
        self.runs, self.run_id, self.base, self.pictures = runs, run_id, base, pictures
        self.recordings = recordings
        self.steps: dict[int, dict[str, Any]] = {}
        # the writes the app answered so far: kept with each step's record, so a run whose
        # process dies (a worker killed) still says what it wrote (RunStore.abandon)
        self.writes: Callable[[], list[dict[str, Any]]] = list

    def demonstration(self, crop: Mapping[str, str], geometry: Mapping[str, Any]) -> bytes | None:
        """The demonstration's crop of a target (compiler.plan ``Anchor.crop``),
        its target outlined, as a JPEG, while its recording is kept (else None)."""
        return demonstrated_crop(self.recordings, crop, geometry) if self.recordings is not None else None

    def step(self, result: dict[str, Any]) -> None:
        self.steps[int(result["n"])] = result
        self.runs.progress(self.run_id, self.detail())

    def picture(self, n: int, kind: str, jpeg: bytes) -> None:
        self.runs.put_picture(self.run_id, n, kind, jpeg)

    def detail(self) -> dict[str, Any]:
        wrote = self.writes()
        steps = [self.steps[n] for n in sorted(self.steps)]
        return {**self.base, "steps": steps, **({"wrote": wrote} if wrote else {})}


def begin(runs: RunStore, session: RunSession, opts: RunOptions) -> str:
    """The run's record, before anything acts: its id, skills and what it was asked to do."""
    run_id = opts.run_id or runs.new_run_id()
    if opts.run_id:
        runs.set_skills(run_id, session.versions())
    else:
        runs.start(run_id, session.versions())
    return run_id


def replay(runs: RunStore, session: RunSession, slug: str, proc: Procedure, context: BrowserContext,
           page: Page, opts: RunOptions, secret: Callable[[str], str],
           progress: Callable[[str], None] | None = None,
           on_start: Callable[[str], None] | None = None) -> tuple[RunOutcome, Page]:
    """The one executor (``teachd run``, the daemon, MCP's ``run_skill``): a
    recorded run whatever happens; returns the outcome and the page it ended on."""
    run_id = begin(runs, session, opts)
    if on_start:
        on_start(run_id)
    status, message = "failure", ""
    plan = plan_of(slug, proc, opts.params, opts.start_url)
    base = {"slug": slug, "origin": opts.origin, "used": [slug], "params": dict(opts.params),
            "start_url": opts.start_url, "plan": plan.as_dict()["steps"], "origins": list(plan.origins),
            **opts.record}
    watch = RunWatch(runs, run_id, base, opts.pictures, opts.recordings)
    runs.progress(run_id, watch.detail())
    # a person follows the run on its page: a step not found may be shown there, and the run goes on
    shown = ShownSteps(run_id, slug, session.versions()[slug], session.loaded[slug].current) \
        if session.gate.points else None
    replayer = Replayer(context, page, proc, session.gate, opts.params, secret,
                        start_url=opts.start_url, progress=progress, step_timeout=opts.step_timeout,
                        slug=slug, observer=watch, cancelled=lambda: runs.cancelled_by(run_id), plan=plan,
                        shown=shown)
    watch.writes = replayer.writes_so_far
    log_from = len(session.gate.log)
    asked_elsewhere = False
    try:
        replayer.run()
        if replayer.verified:
            status, message = "success", "every step and the success check held"
        else:
            status, message = "unverified", UNVERIFIED
        if replayer.notes:
            message += " (" + "; ".join(replayer.notes) + ")"
    except PolicyStop as exc:
        status, message = "aborted", str(exc)
        if (who := runs.cancelled_by(run_id)) and not isinstance(exc, Cancelled):
            message = f"cancelled by {who} ({exc})"
    except Halt as exc:
        status, message = "failure", str(exc)
        if who := runs.cancelled_by(run_id):  # the step in flight when it was cancelled ended badly
            status, message = "aborted", f"cancelled by {who} ({exc})"
    except Asking:  # its first question goes to the client in a round of its own: nothing acted yet
        asked_elsewhere = True
        raise
    finally:
        steps = [r.as_dict() for r in replayer.results]
        half = None if asked_elsewhere else replayer.half_change()
        if half:
            status, message = _half_told(status, message, half)
        if shown is not None and (kept := shown.keep(runs.skills)):
            message = f"{message} ({kept})"
        if asked_elsewhere:
            runs.discard(run_id)  # the call comes again with the answer, as a run of its own
        else:
            runs.finish(run_id, status, {**watch.detail(), "message": message, "steps": steps,
                                         "gate": session.gate.log[log_from:],
                                         **({"partial": half} if half else {})})
    return RunOutcome(run_id, status, message, steps, session.versions(), half), replayer.page


def _half_told(status: str, message: str, half: Mapping[str, Any]) -> tuple[str, str]:
    """A run stopped at a step after the app answered a write is ``partial``
    (a halt; a cancel or a denial stays ``aborted``, the person's own doing),
    and its message ends with what was written and what was not done (it
    begins with why it stopped, as every run's message does)."""
    wrote = ", ".join(f"{w['method']} {w['path']} ({w['status'] or 'no answer yet'}, step {w['step']})"
                      for w in half["wrote"])
    left = half["not_done"]
    undone = f"step {left[0]}" if len(left) == 1 else f"steps {left[0]}–{left[-1]}"
    told = f"{message} — partial change: the app answered {wrote} before the run stopped; {undone} not done"
    return ("partial" if status == "failure" else status), told
