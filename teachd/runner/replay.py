"""The replay executor: a taught skill's steps in Chromium, each one a
``computer_act`` call through the gate, its target resolved by the anchor's
locators and checked against the demonstrated evidence, its effect verified.

Anything unexpected halts the run with the step named: no silent wrong action.
Navigations are awaited with ``wait_for_url``; effects with ``expect``.

This module is the orchestrator: the step loop, the scope and plan checks
every act passes through the gate, each step's result, and the success
check. The parts it is made of: finding a step's target
(teachd.runner.locate), acting on it so that the act lands
(teachd.runner.perform), what the page is still doing and the waits on it
(teachd.runner.traffic), steps outside the browser
(teachd.runner.desktop_step), and how a replay halts (teachd.runner.halt).

The success check proves the effect where the demonstration showed it: the
values this run typed on the final page (``success.shows``), and for a
skill that ends in a desktop app what the app's window showed at the end
(``success.desktop``). A run with nothing checkable at its end, or an end
that differs, is *unverified*, never a success.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from compiler.plan import Anchor, PlanStep, Procedure
from compiler.scope import in_scope, matches_pattern
from recorder.errors import first_line
from teachd.core.errors import PolicyStop
from teachd.runner import locate
from teachd.runner.desktop_step import DesktopSteps
from teachd.runner.gate import Action, Gate, Plan
from teachd.runner.gate import PlanStep as PlanLine
from teachd.runner.guard import Layer, Stopped, focused_location, guard_for
from teachd.runner.halt import Halt, plain
from teachd.runner.match import Choice
from teachd.runner.observe import StepObserver, crop, thumbnail
from teachd.runner.perform import NAV_TIMEOUT, Actor, keys
from teachd.runner.perform import type_like_a_person as type_like_a_person  # teachd.mcp.acts types with it
from teachd.runner.plan_view import plan_of, plan_step, value_of, with_values
from teachd.runner.secrecy import Scrubber
from teachd.runner.shown import SHOWABLE, ShownSteps, changed_at, unfit
from teachd.runner.traffic import Traffic

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page
    from playwright.sync_api import Locator as PwLocator

STEP_TIMEOUT = 10.0  # seconds a step may look for its target (teachd run --step-timeout)
ARRIVE_SLICE = 0.5  # seconds between looks at whether a document is still on its way (Replayer._arrive)
# seconds, at least, a page loaded elsewhere is given to move on (Replayer._arrive), whatever the
# step timeout: on a loaded machine the request a click starts may be heard of a moment after it
ARRIVE_MIN = 2.0
SHOW_TRIES = 3  # times a person is asked to show a step's target before the step halts
SHOWS_TIMEOUT = 5.0  # seconds the final page may take to show this run's values once it is there
# A changed step's question lists the later steps of its page found changed too (Replayer._changed_ahead):
AHEAD_ACTIONS = frozenset({"click", "dblclick", "type", "select", "check"})  # the steps looked at ahead
AHEAD_TIMEOUT = 0.3  # seconds one may take to be found: it is on the page already, or it is passed over
AHEAD_STEPS = 12  # the most steps looked at ahead
# The final page's visible text holds each value as whole words, case and spacing aside.
_SHOWS = r"""needles => {
  const text = (document.body ? document.body.innerText : "").replace(/\s+/g, " ").toLowerCase();
  const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const word = (n) => new RegExp("(?<![\\p{L}\\p{N}_])" + esc(n) + "(?![\\p{L}\\p{N}_])", "u");
  return needles.filter((n) => !word(n).test(text));
}"""


@dataclass
class StepResult:
    n: int
    action: str
    status: str
    detail: str = ""
    via: list[str] = field(default_factory=list)
    ms: int | None = None  # how long the step took, not counting the wait for a person's answer
    asked: bool = False  # a person was asked before it went ahead
    waited_ms: int = 0  # how long it waited for that answer

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, "action": self.action, "status": self.status, "detail": self.detail,
                "via": self.via, "ms": self.ms, "asked": self.asked, "waited_ms": self.waited_ms}


class Cancelled(PolicyStop):
    """Someone cancelled the run: it stopped between steps."""


def _ms(since: float) -> int:
    return round((time.monotonic() - since) * 1000)


class Replayer:
    """One replay of a procedure in a browser context: ``run`` goes through
    its steps, each gated, found, acted on and checked, then checks success.
    ``results``, ``notes`` and ``verified`` say how it went."""

    def __init__(self, context: BrowserContext, page: Page, proc: Procedure, gate: Gate,
                 params: Mapping[str, str], secret: Callable[[str], str],
                 start_url: str | None = None, progress: Callable[[str], None] | None = None,
                 step_timeout: float = STEP_TIMEOUT, slug: str = "", observer: StepObserver | None = None,
                 cancelled: Callable[[], str | None] | None = None, plan: Plan | None = None,
                 shown: ShownSteps | None = None) -> None:
        self.context, self.page, self.proc, self.gate = context, page, proc, gate
        self.slug, self.observer = slug, observer
        self.shown = shown  # where a step's target is not found, a person may show it (teachd.runner.shown)
        self.plan = plan or plan_of(slug, proc, params, start_url)  # what a `run` answer approves
        self.cancelled = cancelled or (lambda: None)  # who cancelled the run, asked between steps
        self._asked = False  # the step under way asked a person
        self._waited = 0  # ... and waited this many ms for the answer
        self._secret_fields: list[PwLocator] = []  # painted over in every picture
        self.scrubber = Scrubber()  # the secrets this replay typed: never in its results or errors
        self.params, self.secret = dict(params), lambda name: self.scrubber.remember(secret(name))
        # every parameter's value in this run (its default where none was given): a record's name may be one
        self.values = {name: str(self.params.get(name, (p or {}).get("default") or ""))
                       for name, p in proc.parameters.items()}
        self.start_url = start_url
        self.progress = progress or (lambda _msg: None)
        self.step_timeout = step_timeout
        self._step: int | None = None  # the step under way (named in a navigation's question)
        self._shown_step: tuple[int, Any] | None = None  # a step a person showed, and the skill with it
        self._next: PlanStep | None = None  # the step after it (may leaving a field close what it needs?)
        self.traffic = Traffic()
        self.actor = Actor(context, proc, self.params, self._value, self.traffic, step_timeout, self._opened)
        self.desk = DesktopSteps(proc, gate, self.scrubber, step_timeout, self._line, self._value,
                                 self._shown_values)
        self.results: list[StepResult] = []
        self.notes: list[str] = []
        self.waited = self.actor.waited  # step → times a settle after its typing waited (the actor counts)
        self.verified = False  # set by the success check: something on the final page confirmed the effect

    # -- finding the target ------------------------------------------------
    def resolve(self, n: int, anchor: Anchor) -> tuple[PwLocator, Choice]:
        """Exactly one agreeing element, waiting for the page to change while
        there is none, up to the step timeout (teachd.runner.locate.resolve)."""
        hit = locate.resolve(self.page, n, anchor, self.step_timeout, self.values)
        return hit.target, hit.choice

    # -- guards -------------------------------------------------------------
    def _line(self, step: PlanStep, target: str | None = None, value: str | None = None) -> PlanLine:
        """The step's plan line from what it is about to do (``target``,
        ``value``: what this replay worked out itself — the URL it opens, the
        keys it presses): the gate holds it against the line approved."""
        line = plan_step(step, self.proc, self.params, self.start_url)
        return replace(line, target=line.target if target is None else target,
                       value=line.value if value is None else value)

    def _guard(self, n: int, what: str, url: str, planned: bool = True, step: PlanStep | None = None,
               target: str | None = None, value: str | None = None, changed: str = "",
               kind: str = "") -> None:
        """``planned``: the step is acted on as the plan lists it (a ``run``
        answer may cover it); a drifted or repaired match is not, and its
        question says what ``changed`` (expected vs found), and offers to
        allow later steps changed the same ``kind`` with it. ``step``:
        the step about to act, so the gate compares what it will do with the
        plan approved (``target``, ``value``: as this replay worked them out)."""
        outside = None if in_scope(url, self.proc.scope) else self._outside_words(url)
        asked, began = len(self.gate.log), time.monotonic()
        changed = self.scrubber.scrub(changed)
        differs = f"{changed}; " if changed else ""
        note = "" if planned else ("found, but not exactly as demonstrated (the page changed since): "
                                   f"{differs}asked again, outside any approval of the whole run")
        line = self._line(step, target, value) if step is not None else None
        # the page's other changed steps are offered with it only where this one changed in its name
        # alone (``kind``): a step found by a loosened name or its place may be another element
        act = Action("computer_act", what, url, n, planned=planned and not outside, note=note, shown=line,
                     change="" if planned else kind, changed="" if planned else changed,
                     ahead=() if planned or step is None or not kind else self._changed_ahead(step))
        try:
            self.gate.guard(act, outside)
        finally:
            self._asked = any(e.get("asked") for e in self.gate.log[asked:])  # a person answered
            if self._asked:
                self._waited += _ms(began)

    def _changed_ahead(self, step: PlanStep) -> tuple[tuple[int, str], ...]:
        """The later steps of this page found changed too, looked up now
        (nothing acts): from the step after ``step`` until a step leads to
        another page or presses a key, at most ``AHEAD_STEPS``, each that
        acts on an element of this page already there (one not there yet —
        an option a typed text will bring — is passed over). Only a step
        changed in its name alone while an identity of its own still agrees
        (``hit.kind``) is listed: one found by a loosened name or by its place
        may be another element, and asks on its own. Each: (its step, what
        changed, in the words its own question would say); its picture is
        taken, for the question to show."""
        later = self.proc.steps[self.proc.steps.index(step) + 1:][:AHEAD_STEPS]
        out: list[tuple[int, str]] = []
        before = step
        for nxt in later:
            anchor = self.proc.anchors.get(nxt.anchor or "")
            if before.expect or before.action == "press":
                break
            before = nxt
            if nxt.action not in AHEAD_ACTIONS or anchor is None:
                continue
            try:
                hit = locate.resolve(self.page, nxt.n, anchor, AHEAD_TIMEOUT, self.values)
            except Halt:
                continue
            if not hit.as_taught and hit.kind:  # changed in its name alone, an identity of its own agreeing
                out.append((nxt.n, self.scrubber.scrub(hit.changed)))
                self._before(nxt, hit.target, keep=False)
                self._demonstrated(nxt, anchor)
        return tuple(out)

    def navigation_outside(self, url: str) -> str | None:
        """A page or frame of any tab going outside the scope (the guard's judge;
        data:, about: and blob: documents reach no server)."""
        if in_scope(url, self.proc.scope) or not url.lower().startswith(("http:", "https:")):
            return None
        return self._outside_words(url)

    def _outside_words(self, url: str) -> str:
        """A skill with no scope recorded (``scope: []``) has no page in scope:
        everything it would open or act on asks, a ``run`` answer included."""
        scope = " ".join(self.proc.scope) or "none recorded: every page asks"
        return f"{url} is outside the skill's allowed scope ({scope})"

    def _ask_navigation(self, url: str, where: str, why: str) -> bool:
        """Asked by the guard before the request leaves: a no aborts it."""
        try:
            self.gate.check(Action("computer_act", f"let {where} open {url}", self.page.url, self._step),
                            reason=why)
        except PolicyStop:
            return False
        return True

    def _wait_url(self, n: int, step: PlanStep, before: str) -> None:
        expect_ = step.expect or {}
        pattern = expect_["url_pattern"]
        # Where the demonstration went somewhere new, the replay must too: a
        # page that merely still matches the pattern is not the next page.
        moved = bool(step.page and expect_.get("url") and step.page != expect_["url"])
        if not self._arrive(lambda u: matches_pattern(u, pattern) and (not moved or u != before),
                            "domcontentloaded"):
            raise Halt(f"step {n}: expected the page {pattern}, but it is {self.page.url}")

    def _arrive(self, at: Callable[[str], bool], wait_until: Literal["commit", "domcontentloaded"]) -> bool:
        """Whether the page reaches an address ``at`` accepts. A document on
        its way gets a navigation's time (``NAV_TIMEOUT``: a slow server is
        not a wrong page); a page that has arrived somewhere else gets the step
        timeout after its last request (a client-side route may still move
        it), so an app whose pages moved halts as soon as a missing target
        would, not a navigation's time later."""
        began = time.monotonic()
        hard = began + NAV_TIMEOUT
        while True:
            now = time.monotonic()
            limit = hard if self.traffic.loading() \
                else min(hard, max(began, self.traffic.last) + max(self.step_timeout, ARRIVE_MIN))
            if now >= limit:
                return False
            try:  # in slices: whether a document is under way is heard between them
                self.page.wait_for_url(at, wait_until=wait_until,
                                       timeout=min(limit - now, ARRIVE_SLICE) * 1000)
                return True
            except PlaywrightTimeout:
                continue

    def _value(self, step: PlanStep) -> str:
        """What the step types or chooses: the plan's own rule (plan_view.value_of), a secret's value."""
        return value_of(step, self.proc, self.params, self.secret) or ""

    # -- steps --------------------------------------------------------------
    def run(self, until: int | None = None) -> None:
        """Every step and the success check; with ``until``, only the steps
        before that one (a repair's lead-in: the person takes over there).
        While it runs, every page and frame of every tab is held to the
        skill's scope before a request leaves (teachd.runner.guard)."""
        guard = guard_for(self.context)
        layer = guard.add(Layer(self.navigation_outside, ask=self._ask_navigation))
        guard.take()  # what an earlier act stopped is not this replay's
        self.traffic.watch(self.page)
        self.gate.offer(self.plan)
        try:
            self._steps(until)
        finally:
            self.gate.offer(None)  # a run approval ends with its replay
            self.traffic.close()
            guard.drop(layer)

    def _steps(self, until: int | None) -> None:
        """Each step in order (with ``until``, those before it, and nothing
        more), a cancel heard between steps, its result told as it starts and
        as it ends. A step that halts or is stopped ends the run with its
        message (Playwright's own errors as a halt naming the step), any
        secret this run typed scrubbed from it. After the last step: the
        success check, then a note of anything the page did that the guard
        stopped; the notes scrubbed too."""
        for i, step in enumerate(self.proc.steps):
            n, action = step.n, step.action
            if until is not None and n >= until:
                return
            if who := self.cancelled():
                raise Cancelled(f"cancelled by {who} before step {n}")
            self._next = self.proc.steps[i + 1] if i + 1 < len(self.proc.steps) else None
            said = with_values(step.describe or "", self.proc, self.params)  # this run's values in its words
            self.progress(plain(f"step {n}: {action} {said or step.url or ''}"))
            self._asked, self._waited = False, 0
            began = time.monotonic()
            self._tell(StepResult(n, action, "running", plain(said or step.url or "")))
            try:
                via = self._do(step)
            except (Halt, PolicyStop) as exc:
                clean = self.scrubber.scrub(str(exc))
                self._end(StepResult(n, action, "halted", clean, **self._timing(began)))
                if clean != str(exc):
                    raise type(exc)(clean) from None
                raise
            except PlaywrightError as exc:  # Playwright's own errors: a halt, named
                first = first_line(exc)
                if self.browser_gone():
                    first = f"the browser went away ({first})"
                msg = self.scrubber.scrub(f"step {n}: {first}")
                self._end(StepResult(n, action, "halted", msg, **self._timing(began)))
                raise Halt(msg) from None
            self._end(StepResult(n, action, "ok", said, via, **self._timing(began)))
        self._next = None
        try:
            self.check_success()
        except Halt as exc:  # the final page's address or title could show a typed secret
            clean = self.scrubber.scrub(str(exc))
            if clean != str(exc):
                raise Halt(clean) from None
            raise
        if late := guard_for(self.context).take():  # the page's own doing after the last step
            self.notes.append("stopped after the last step: " + "; ".join(s.describe() for s in late))
        self.notes = [self.scrubber.scrub(note) for note in self.notes]

    def browser_gone(self) -> bool:
        """Chromium itself is gone (killed, crashed): not a fault of the page."""
        browser = self.context.browser
        return browser is not None and not browser.is_connected()

    def writes_so_far(self) -> list[dict[str, Any]]:
        """Every write the app answered so far (addresses scrubbed of what was typed)."""
        return [{**w.as_dict(), "path": self.scrubber.scrub(w.path)} for w in self.traffic.all_writes()]

    def half_change(self) -> dict[str, Any] | None:
        """When the run stopped at a step after the app answered a write (a
        record created, a form saved): what was written and what was not
        done — a half change the person must know of. None otherwise."""
        stopped = next((r.n for r in self.results if r.status != "ok"), None)
        if stopped is None and self.results and len(self.results) < len(self.proc.steps):
            stopped = self.results[-1].n + 1  # cancelled between steps
        writes = self.traffic.all_writes()
        if stopped is None or not writes:
            return None
        return {"wrote": self.writes_so_far(), "stopped_at": stopped,
                "not_done": [s.n for s in self.proc.steps if s.n >= stopped]}

    # -- watching -----------------------------------------------------------
    def _timing(self, began: float) -> dict[str, Any]:
        """The step's own time (a person's answer not counted), and that wait."""
        return {"ms": max(0, _ms(began) - self._waited), "asked": self._asked, "waited_ms": self._waited}

    def _tell(self, result: StepResult) -> None:
        if self.observer is not None:
            self.observer.step(result.as_dict())

    def _end(self, result: StepResult) -> None:
        self.results.append(result)
        watching = self.observer is not None and self.observer.pictures
        blank = self.page.url in ("about:blank", "")  # refused before any page opened: nothing to show
        if watching and result.action not in ("os_click", "os_key") and not blank \
                and (after := thumbnail(self.page, self._secret_fields)) is not None:
            self.observer.picture(result.n, "after", after)  # type: ignore[union-attr]
        self._tell(result)

    def _before(self, step: PlanStep, target: PwLocator, keep: bool = True) -> None:
        """The target's crop as it is about to be acted on (a secret's field
        painted over); ``keep``: a field a secret goes into, painted over in
        every later picture (not for a step only looked at ahead)."""
        if step.secret and keep:
            self._secret_fields.append(target)
        if self.observer is not None and self.observer.pictures:
            if (jpeg := crop(self.page, target, self._secret_fields)) is not None:
                self.observer.picture(step.n, "before", jpeg)

    def _demonstrated(self, step: PlanStep, anchor: Anchor) -> None:
        """Beside what was found, the demonstration's own picture of the target (while it is kept)."""
        if self.observer is not None and self.observer.pictures and anchor.crop:
            if (jpeg := self.observer.demonstration(anchor.crop, anchor.geometry)) is not None:
                self.observer.picture(step.n, "demonstrated", jpeg)

    def _do(self, step: PlanStep) -> list[str]:
        """Act, then, where the demonstration went to another page, wait for it."""
        before = self.page.url
        self._step = step.n
        guard = guard_for(self.context)
        self._shown_step = None
        try:
            via = self._perform(step)
            # The first page is checked too (an app whose entry point moved halts
            # here, before any write) — unless the person gave a start of their own.
            if (step.expect or {}).get("url_pattern") and not (step.action == "goto" and step.n == 1
                                                               and self.start_url):
                self._wait_url(step.n, step, before)
        except (Halt, PlaywrightError):
            self._raise_stops(step.n, guard.take())  # a stopped navigation is why, whatever the symptom
            raise
        self._raise_stops(step.n, guard.take())
        if self._shown_step is not None and self.shown is not None:  # a shown step that held: kept
            self.shown.took(*self._shown_step)
        return via

    @staticmethod
    def _raise_stops(n: int, stops: list[Stopped]) -> None:
        if stops:
            raise PolicyStop(f"step {n}: stopped: " + "; ".join(s.describe() for s in stops))

    def _perform(self, step: PlanStep) -> list[str]:
        n, action = step.n, step.action
        if action == "goto":
            url = self.start_url if (n == 1 and self.start_url) else str(step.url)
            if "[masked]" in url:
                raise Halt(f"step {n}: the recorded address held a secret; cannot open it again")
            self._guard(n, f"open {url}", url, step=step, target=url)
            guard_for(self.context).permit(url)  # asked just now (if outside): not asked twice
            self.traffic.step = n
            self.page.goto(url, wait_until="domcontentloaded")
            return []
        if action in ("os_click", "os_key", "os_type"):
            return self.desk.do(step)
        if action == "press" and not step.anchor:
            self._guard(n, f"press {step.key}", focused_location(self.page),  # the frame the keys go to
                        step=step, value=keys(step))
            self.page.keyboard.press(keys(step))
            return []
        anchor = self.proc.anchors.get(step.anchor or "")
        if anchor is None:
            raise Halt(f"step {n}: no anchor for its target")
        try:
            hit = locate.resolve(self.page, n, anchor, self.step_timeout, self.values)
        except Halt as exc:
            return self._show(step, exc)
        if not hit.as_taught:  # its question shows what was found: the picture is taken before it asks
            self._before(step, hit.target)
            self._demonstrated(step, anchor)
        # judged by the element's own frame: a cross-origin iframe on an in-scope page is not in scope
        said = with_values(step.describe or "", self.proc, self.params)  # this run's values in its words
        self._guard(n, plain(f"{action} {said}".strip()), hit.location(self.page),
                    planned=hit.as_taught, step=step, changed=hit.changed, kind=hit.kind)
        if hit.as_taught:
            self._before(step, hit.target)
        self.actor.act(self.page, step, anchor, hit, self._next)
        return list(hit.choice.via)

    def _show(self, step: PlanStep, halt: Halt) -> list[str]:
        """A step whose target is not found: where a person follows the run
        and the page is in scope, they are asked to show it on the page's
        picture (``Gate.point``), and this very run goes on from this step
        with what they showed (teachd.runner.shown) — kept in the skill only
        once the whole step held (``_do``). Not shown, the halt; shown where
        nothing can take the step, or where the page has changed since its
        picture, asked again (``SHOW_TRIES`` in all), then the halt with why."""
        n, where = step.n, self.page.url
        if self.shown is None or self.observer is None or step.action not in SHOWABLE \
                or not in_scope(where, self.proc.scope):
            raise halt
        taught = self.proc.anchors[str(step.anchor)].expect
        self._demonstrated(step, self.proc.anchors[str(step.anchor)])  # what to look for, beside the page
        what = plain(f"{step.action} {with_values(step.describe or '', self.proc, self.params)}".strip())
        reason = f"{self.scrubber.scrub(str(halt))}: click where it is now on the picture of the page"
        note = ""
        for _ in range(SHOW_TRIES):
            picture = thumbnail(self.page, self._secret_fields, width=None)
            if picture is None:
                raise halt
            self.observer.picture(n, "now", picture)
            began = time.monotonic()
            point = self.gate.point(Action("computer_act", what, where, n, note=note), reason)
            self._asked, self._waited = True, self._waited + _ms(began)
            if point is None:
                raise halt
            now = thumbnail(self.page, self._secret_fields, width=None)
            if self.page.url != where or now is None or changed_at(picture, now, point):
                note = "the page has changed there since its picture: show it again on this one"
                continue
            found = self.shown.element_at(self.page, point)
            if found is None:
                note = "nothing on the page there can take the step: show it again"
                continue
            element, target = found
            target = self.scrubber.scrub_all(target)
            if why := unfit(step, target, taught):
                shown = plain(str(target.get("name") or target.get("text") or ""))[:60]
                tag = str(target.get("tag") or "")
                place = "the page itself" if tag in ("html", "body") else f"a {tag} {shown!r}".rstrip()
                note = f"what you showed ({place}) is {why}: show it again"
                continue
            anchor, repaired = self.shown.merge(step, target, self.page.url)
            hit = locate.resolve(self.page, n, anchor, self.step_timeout, self.values)
            if not hit.target.evaluate("(el, shown) => el === shown", element):
                raise Halt(f"step {n}: what you showed cannot be told apart from another element on the "
                           "page; nothing was done at this step")
            self._before(step, hit.target)
            self.actor.act(self.page, step, anchor, hit, self._next)
            self._shown_step = (n, repaired)  # kept once the step held (``_do``)
            return [*hit.choice.via, "shown"]
        raise Halt(f"{self.scrubber.scrub(str(halt))}; {note.rsplit(':', 1)[0]}") from None

    def _opened(self, page: Page) -> None:
        """A click opened a tab: the replay goes on there (and hears its writes)."""
        self.page = page
        self.traffic.watch(page)

    def check_success(self) -> None:
        """The last page's address must match; its title too where the address
        alone does not tell the end from the page the last step acted on; and
        it must show this run's values where the demonstration's showed them.
        ``verified`` says whether any of that could tell the effect happened."""
        success = self.proc.success
        pattern = success.get("url_pattern")
        last_page = next((s.page for s in reversed(self.proc.steps) if s.page), "")
        if pattern:
            # the one rule for "this address is that page" (compiler.scope), as every step's wait
            if not self._arrive(lambda u: matches_pattern(u, pattern), "commit"):
                raise Halt(f"success check: the final page is {self.page.url}, expected {pattern}")
        shown = self._check_shows(success.get("shows") or [])
        title = success.get("title")
        self.verified = bool(shown or title or (pattern and not matches_pattern(last_page or "", pattern))
                             or self.desk.seen == self.proc.steps[-1].n)  # a desktop save, in its title
        if ends := success.get("desktop"):  # the apps' own display of the effect, as the demonstration ended
            off = self.desk.shows_end(ends, SHOWS_TIMEOUT)
            self.verified = not off
            self.notes.extend(off)
        if not title:
            return
        decisive = not pattern or matches_pattern(last_page or "", pattern)
        try:
            expect(self.page).to_have_title(title, timeout=2000 if decisive else 500)
        except AssertionError:
            now = self.page.title()
            if decisive:
                raise Halt(f"success check: the final title is {now!r}, expected {title!r}") from None
            self.notes.append(f"the final page's title is now {now!r} (was {title!r})")

    def _shown_values(self, shows: list[str]) -> dict[str, str]:
        """This run's values of the ``{{name}}`` parameters a demonstration showed, by name."""
        names = [m.group(1) for s in shows if (m := re.fullmatch(r"\{\{([\w-]+)\}\}", str(s)))]
        return {name: self._value(PlanStep(0, "type", None, param=name))
                for name in names if name in self.proc.parameters}

    def _check_shows(self, shows: list[str]) -> list[str]:
        """This run's values of the parameters the demonstration's final page
        showed, and the texts the person's review asked for (their words, a
        parameter in them as this run's value), must show on this one
        (waiting for the page to render them, up to ``SHOWS_TIMEOUT``: its
        address is already the final one); a missing one means the effect is
        missing. Returns the texts checked."""
        values = self._shown_values(shows)
        said: dict[str, str] = {}  # how a missing text is named → the text looked for
        for text in shows:
            if m := re.fullmatch(r"\{\{([\w-]+)\}\}", str(text)):
                if m.group(1) in values:
                    said[f"this run's {text}"] = values[m.group(1)]
            else:
                said[f"“{text}”"] = with_values(str(text), self.proc, self.params)
        wanted = {name: " ".join(v.split()).lower() for name, v in said.items()}
        needles = [v for v in wanted.values() if v]
        if not needles:
            return []
        try:
            if self.page.evaluate(_SHOWS, needles):  # a look now; a tab in the background gets no frames
                self.page.wait_for_function(f"n => ({_SHOWS})(n).length === 0", arg=needles,
                                            polling=100, timeout=SHOWS_TIMEOUT * 1000)
        except PlaywrightTimeout:
            missing = set(self.page.evaluate(_SHOWS, needles))
            gone = [name for name, v in wanted.items() if v in missing]
            raise Halt(self.scrubber.scrub(
                f"success check: the final page does not show {', '.join(gone)}: "
                "the effect the demonstration ended on is missing")) from None
        return needles
