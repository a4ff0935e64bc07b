"""The health check: is every target of a taught skill still there, before
anyone needs it? A read-only probe — it opens pages by their address and
looks, with the replay's own anchor ladder and evidence check, and never
clicks, types or submits anything.

Which steps can be checked without acting: those on a page a plain visit
reaches as it was recorded (the start page first; a page behind a sign-in
sends the visit elsewhere, and its steps are *not checked*). On such a page
a target that is missing fails the check — unless it lives in a list or menu
that an earlier step on the same page would open (a suggestion that appears
as one types): that one is *not checked* either, rather than a false alarm.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Error as PlaywrightError

from compiler.plan import Procedure
from compiler.scope import in_scope, matches_pattern, url_pattern
from recorder.errors import first_line
from teachd.core.outcomes import FOUND, health_verdict
from teachd.runner.gate import DenyAll, Gate
from teachd.runner.guard import Layer, guard_for
from teachd.runner.plan_view import with_values
from teachd.runner.replay import Halt, Replayer, plain

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

    from teachd.config import Settings
    from teachd.store.schedules import ScheduleStore

AMBIGUOUS, NOT_FOUND, NOT_CHECKED = "ambiguous", "not found", "not checked"  # and core.outcomes.FOUND
CHECK_TIMEOUT = 3.0  # seconds a target may take to show on a freshly opened page
_POPUP_ROLES = frozenset({"option", "menuitem", "treeitem", "listbox", "menu", "dialog", "tooltip"})


@dataclass
class StepCheck:
    n: int
    target: str
    status: str
    detail: str = ""
    via: list[str] = field(default_factory=list)


@dataclass
class Report:
    steps: list[StepCheck]

    @property
    def failed(self) -> StepCheck | None:
        return next((s for s in self.steps if s.status in (AMBIGUOUS, NOT_FOUND)), None)

    @property
    def ok(self) -> bool:
        return self.failed is None

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "steps": [asdict(s) for s in self.steps]}

    @property
    def found(self) -> int:
        return sum(1 for s in self.steps if s.status == FOUND)

    @property
    def verdict(self) -> str:
        return health_verdict(self.ok, (s.status for s in self.steps))

    def summary(self) -> str:
        bad = self.failed
        if bad is None:
            found, targets = self.found, len(self.steps)
            if found == targets:
                return f"all {targets} targets found"
            return (f"{found} of {targets} targets checked, all found; the other {targets - found} "
                    "are reached only by acting: unknown")
        return f"step {bad.n}, {bad.target} — {bad.status}" + (f" ({bad.detail})" if bad.detail else "")


# a target's check → a step's status on a run page (done, halted, skipped): a check acts on nothing
_STEP = {FOUND: "ok", NOT_CHECKED: "skipped", NOT_FOUND: "halted", AMBIGUOUS: "halted"}
# the verdict → the run's status: healthy is every target found; unknown confirms nothing
_STATUS = {"healthy": "success", "unknown": "unverified", "needs attention": "failure"}


def check_run(report: Report, slug: str) -> tuple[str, dict[str, Any]]:
    """A health check of ``slug`` as a run's record (its status, its steps):
    what the run page shows of it, as of any run."""
    steps = [{"n": c.n, "status": _STEP.get(c.status, "halted"), "action": "look for", "target": c.target,
              "detail": c.detail or c.status, "via": c.via} for c in report.steps]
    message = f"health check of {slug}: {report.summary()}"
    return _STATUS.get(report.verdict, "failure"), {"steps": steps, "message": message}


def _may_appear_later(expect: dict[str, Any]) -> bool:
    roles = {expect.get("role"), (expect.get("container") or {}).get("role")}
    return bool(roles & _POPUP_ROLES)


def probe(context: BrowserContext, page: Page, proc: Procedure, timeout: float = CHECK_TIMEOUT) -> Report:
    """Visit each recorded page that a plain visit reaches; look for each
    target there. Nothing on any page is acted on."""
    finder = Replayer(context, page, proc, Gate(DenyAll()), {}, _no_secret, step_timeout=timeout)
    guard = guard_for(context)  # no page or frame outside the scope loads, redirects included: nobody to ask
    layer = guard.add(Layer(finder.navigation_outside))  # no scope recorded: no page is in it
    try:
        return _probe(page, proc, finder)
    finally:
        guard.drop(layer)
        guard.take()


def _probe(page: Page, proc: Procedure, finder: Replayer) -> Report:
    targeted = [s for s in proc.steps if s.anchor and s.anchor in proc.anchors]
    visited: dict[str, str | None] = {}  # recorded page → why it cannot be checked (None: it can)
    acted_on: dict[str, int] = {}  # recorded page → the first step that acted there
    checks: list[StepCheck] = []
    for step in targeted:
        anchor = proc.anchors[str(step.anchor)]
        where = step.page or anchor.page
        target = plain(with_values(step.describe or anchor.describe, proc, {}))  # {{name}}: its default
        if where not in visited:
            visited[where] = _visit(page, where, proc.scope)
        why = visited[where]
        if why is not None:
            checks.append(StepCheck(step.n, target, NOT_CHECKED, why))
            continue
        if page.url != where and not matches_pattern(page.url, url_pattern(where)):
            visited[where] = _visit(page, where, proc.scope)  # a look never moves; a redirect may have
        try:
            _locator, choice = finder.resolve(step.n, anchor)
            checks.append(StepCheck(step.n, target, FOUND, via=list(choice.via)))
        except Halt as exc:
            reason = str(exc).split(" — ", 1)[-1].removesuffix("; stopping rather than guessing")
            earlier = acted_on.get(where)
            if earlier is not None and _may_appear_later(anchor.expect):
                checks.append(StepCheck(step.n, target, NOT_CHECKED, f"it appears after step {earlier}"))
            else:
                checks.append(StepCheck(step.n, target, AMBIGUOUS if "ambiguous" in reason else NOT_FOUND,
                                        reason))
        acted_on.setdefault(where, step.n)
    return Report(checks)


def _visit(page: Page, url: str, scope: list[str]) -> str | None:
    """Open a recorded page by its address; why its steps cannot be checked, or None."""
    if not url.startswith(("http://", "https://")) or "[masked]" in url:
        return "its address cannot be opened again"
    if not in_scope(url, scope):
        return "outside the skill's scope"
    try:
        page.goto(url, wait_until="domcontentloaded")
    except PlaywrightError as exc:
        return f"the page did not open ({first_line(exc)})"
    if not matches_pattern(page.url, url_pattern(url)):
        return f"a visit lands on {page.url}: the page needs the earlier steps"
    return None


def _no_secret(name: str) -> str:
    raise Halt("a health check types nothing")


def health_check(schedules: ScheduleStore, settings: Settings, slug: str, origin: str,
                 run_id: str | None = None) -> tuple[str, str | None, str]:
    """The skill's targets looked for, nothing acted on, kept as a run of
    its own with a page: each target's step found, not found or not
    checked, and the verdict (``check_run``); the skill's health set. The
    scheduler runs it in the daemon, a queue's worker wherever it runs
    (``run_id``: its record made already, waiting in the queue).
    ``settings``: the person's (another person's probe: public places only).
    Returns (verdict, run id, summary)."""
    from teachd.runner.policy import RunPolicy, Who
    from teachd.runner.run import RunOptions, open_chromium
    from teachd.runner.secrecy import without_secrets
    from teachd.store.runs import RunStore

    store = schedules.skills
    skill = store.load(slug)
    proc = Procedure.from_files(skill.current.files)
    policy = RunPolicy(Who.of(settings, store.owner))
    runs = RunStore(store)
    if run_id is None:
        run_id = runs.new_run_id()
        runs.start(run_id, {slug: skill.current_version})
    else:
        runs.set_skills(run_id, {slug: skill.current_version})
    try:
        with open_chromium(RunOptions(headless=True, chromium=settings.chromium,
                                      environ=without_secrets(settings.environ)), policy) as (ctx, page):
            report = probe(ctx, page, proc)
    except Exception as exc:
        runs.finish(run_id, "failure", {"checked": slug, "origin": origin, "steps": [],
                                        "message": f"the health check could not run: {exc}"})
        raise
    schedules.set_health(slug, report.as_dict(), report.summary())
    status, detail = check_run(report, slug)
    # not a run of the skill (no "slug"): nothing to run again, nothing acted on to judge
    runs.finish(run_id, status, {**detail, "checked": slug, "origin": origin})
    return report.verdict, run_id, report.summary()
