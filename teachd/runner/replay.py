"""The replay executor: a taught skill's steps in Chromium, each one a
``computer_act`` call through the gate, its target resolved by the anchor's
locators and checked against the demonstrated evidence, its effect verified.

Anything unexpected halts the run with the step named: no silent wrong action.
Waiting is Playwright's own: a target is looked for again when the page
changes (a mutation counter the capture script keeps), never on a clock;
navigations are awaited with ``wait_for_url``; effects with ``expect``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from compiler.plan import Anchor, Locator, PlanStep, Procedure
from compiler.scope import in_scope, matches_pattern, url_pattern
from teachd.errors import InvalidSkill, PolicyStop, TeachdError
from teachd.runner.gate import Action, Gate
from teachd.runner.guard import Layer, Stopped, element_location, focused_location, guard_for
from teachd.runner.match import EXACT, GAINED, Candidate, Choice, choose, name_score
from teachd.runner.secrecy import MARK, Scrubber

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Frame, Page
    from playwright.sync_api import Locator as PwLocator

STEP_TIMEOUT = 10.0  # seconds a step may look for its target (teachd run --step-timeout)
NAV_TIMEOUT = 15.0
MAX_MATCHES = 20  # candidates taken from one locator; more is a list, not a target
# One round trip per locator: the evidence of every match, and the page's
# mutation count (what a wait for the page to change starts from).
_EVIDENCE = ("els => [window.__teachdMutations || 0,"
             " els.map(e => window.__teachdEvidence ? window.__teachdEvidence(e) : null)]")
_CHANGED = "m => (window.__teachdMutations || 0) !== m"
_MARK = "teachd-target"


def plain(text: str) -> str:
    """Markdown emphasis off, for a terminal line."""
    return text.replace("**", "").replace("\\", "")


class Halt(TeachdError):
    """The replay stopped on purpose; the message names the step."""


@dataclass
class StepResult:
    n: int
    action: str
    status: str
    detail: str = ""
    via: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, "action": self.action, "status": self.status, "detail": self.detail,
                "via": self.via}


def via_label(loc: Locator) -> str:
    if loc.attr == "loose":
        return loc.by + "~"
    return f"attr:{loc.attr}" if loc.by == "attr" and loc.attr else loc.by


def pattern_regex(pattern: str) -> re.Pattern[str]:
    """A ``url_pattern`` as a regular expression for ``expect(page).to_have_url``."""
    parts = [("[^/?#]+" if seg == "*" else re.escape(seg)) for seg in pattern.split("/")]
    return re.compile("^" + "/".join(parts) + r"/?(?:[?#].*)?$")


def _locator(root: Page | Frame, loc: Locator) -> PwLocator:
    by, exact = loc.by, loc.attr != "loose"
    if by == "test_id":
        v = json.dumps(loc.value)
        return root.locator(", ".join(f"[{a}={v}]" for a in ("data-testid", "data-test-id",
                                                             "data-test", "data-qa")))
    if by == "role":
        return root.get_by_role(loc.role, name=loc.name, exact=exact)  # type: ignore[arg-type]
    if by == "label":
        return root.get_by_label(str(loc.value), exact=exact)
    if by == "placeholder":
        return root.get_by_placeholder(str(loc.value), exact=True)
    if by == "text":
        return root.get_by_text(str(loc.value), exact=True)
    if by == "id":
        return root.locator(f"[id={json.dumps(loc.value)}]")
    if by == "attr":
        return root.locator(str(loc.css))
    if by == "css":
        return root.locator(str(loc.value))
    if by == "xpath":
        return root.locator("xpath=" + str(loc.value))
    raise InvalidSkill(f"unknown locator kind {by!r}")


def type_like_a_person(target: PwLocator, value: str, editable: bool, timeout_ms: float) -> None:
    """Clear with keys, then one key event per character, so widgets that
    listen to keystrokes see them; then check the field holds the value."""
    current = target.input_value(timeout=timeout_ms) if editable else target.inner_text(timeout=timeout_ms)
    if current:
        target.press("ControlOrMeta+a")
        target.press("Backspace")
    if value:
        target.press_sequentially(value, timeout=timeout_ms)
    else:
        target.focus(timeout=timeout_ms)
    if editable:
        expect(target).to_have_value(value, timeout=2000)
    else:
        expect(target).to_have_text(value, timeout=2000)


def agreed(found: list[tuple[Any, Choice]]) -> tuple[Choice, Any]:
    """One choice from each evidence version of an anchor (the taught one,
    then each repair's): the element they point to when they all that point
    anywhere point to the same one and none is ambiguous; else why not."""
    picked = {(id(root), c.candidate.identity): (c, root) for root, c in found if c.candidate is not None}
    torn = [c for _root, c in found if c.reason.startswith("ambiguous")]
    if len(picked) == 1 and not torn:
        return next(iter(picked.values()))
    if len(picked) > 1:
        why = "ambiguous: the taught and the repaired evidence point to different elements"
        return Choice(None, why), None
    if torn and picked:
        return Choice(None, torn[0].reason), None
    return found[0][1], None


class Replayer:
    def __init__(self, context: BrowserContext, page: Page, proc: Procedure, gate: Gate,
                 params: Mapping[str, str], secret: Callable[[str], str],
                 start_url: str | None = None, progress: Callable[[str], None] | None = None,
                 step_timeout: float = STEP_TIMEOUT) -> None:
        self.context, self.page, self.proc, self.gate = context, page, proc, gate
        self.scrubber = Scrubber()  # the secrets this replay typed: never in its results or errors
        self.params, self.secret = dict(params), lambda name: self.scrubber.remember(secret(name))
        self.start_url = start_url
        self.progress = progress or (lambda _msg: None)
        self.step_timeout = step_timeout
        self._step: int | None = None  # the step under way (named in a navigation's question)
        self.results: list[StepResult] = []
        self.notes: list[str] = []

    # -- finding the target ------------------------------------------------
    def _root(self, anchor: Anchor) -> Page | Frame | None:
        if not anchor.frame_url:
            return self.page
        pattern = url_pattern(anchor.frame_url)
        for frame in self.page.frames:
            if frame != self.page.main_frame and matches_pattern(frame.url, pattern):
                return frame
        return None

    def _candidates(self, root: Page | Frame,
                    anchor: Anchor) -> tuple[list[Candidate], list[str], int | None]:
        """Every visible element any locator finds, with the evidence to judge
        it; and the page's mutation count before the first look."""
        by_identity: dict[int, Candidate] = {}
        ambiguous: list[str] = []
        mark: int | None = None
        for loc in self._ladder(anchor):
            label = via_label(loc)
            try:
                found = _locator(root, loc)
                count, infos = found.evaluate_all(_EVIDENCE)
            except PlaywrightError:
                continue  # a selector this page cannot parse, or a navigation under way
            mark = count if mark is None else mark
            shown = [(i, info) for i, info in enumerate(infos) if info and info.get("visible")]
            if len(shown) > 1:
                ambiguous.append(label)
            for i, info in shown[:MAX_MATCHES]:
                ident = int(info["ident"])
                cand = by_identity.get(ident)
                if cand is None:
                    cand = by_identity[ident] = Candidate(ident, set(), info)
                cand.via.add(label)
                if len(shown) == 1 and cand.handle is None:
                    cand.handle = found.filter(visible=True)  # re-resolves if the page re-renders
                elif cand.handle is None and cand.where is None:
                    cand.where = (found, i)
        return list(by_identity.values()), ambiguous, mark

    @staticmethod
    def _ladder(anchor: Anchor) -> list[Locator]:
        """The anchor's locators, then looser twins of its name locators
        (a name that gained words: "Total amount", "🚕 Taxi Paris"): they only
        bring candidates; the evidence still decides."""
        loose = [Locator(loc.by, value=loc.value, role=loc.role, name=loc.name, attr="loose")
                 for loc in anchor.locators if loc.by in ("role", "label")]
        return [*anchor.locators, *loose]

    def _act_on(self, root: Page | Frame, cand: Candidate) -> PwLocator:
        if cand.handle is not None or cand.where is None:
            return cand.handle
        # Found only among several matches (told apart by its evidence): pin
        # that very element, so acting cannot slip to one of its look-alikes.
        found, i = cand.where
        found.nth(i).evaluate(
            f"(e, id) => e.setAttribute('data-{_MARK}', String(id))", cand.identity)
        return root.locator(f"[data-{_MARK}='{cand.identity}']")

    def resolve(self, n: int, anchor: Anchor) -> tuple[PwLocator, Choice]:
        """Exactly one agreeing element, waiting for the page to change while
        there is none, up to the step timeout. A repaired anchor's evidence
        versions are each asked; they must not disagree (see ``agreed``)."""
        deadline = time.monotonic() + self.step_timeout
        choice = Choice(None, "its frame is not on the page")
        while True:
            remaining = deadline - time.monotonic()
            try:
                looks = [(root, v) for v in anchor.versions() if (root := self._root(v)) is not None]
                if not looks:
                    if remaining <= 0:
                        break
                    self.page.wait_for_event("framenavigated", timeout=remaining * 1000)
                    continue
                found = []
                mark: int | None = None
                for root, version in looks:
                    candidates, ambiguous, seen = self._candidates(root, version)
                    mark = seen if mark is None else mark
                    found.append((root, choose(version.expect, candidates, ambiguous)))
                choice, root = agreed(found)
                if choice.candidate is not None and root is not None:
                    return self._act_on(root, choice.candidate), choice
                if remaining <= 0:
                    break
                if mark is None:  # nothing could be asked: the page is between documents
                    self.page.wait_for_load_state("domcontentloaded", timeout=remaining * 1000)
                    continue
                looks[0][0].wait_for_function(_CHANGED, arg=mark, timeout=remaining * 1000)
            except PlaywrightTimeout:
                continue  # the deadline is checked at the top
            except PlaywrightError:
                self.page.wait_for_load_state("domcontentloaded")  # it navigated meanwhile
        raise Halt(plain(f"step {n}: {anchor.describe} — {choice.reason}; stopping rather than guessing"))

    # -- guards -------------------------------------------------------------
    def _guard(self, n: int, what: str, url: str) -> None:
        outside = None
        if self.proc.scope and not in_scope(url, self.proc.scope):
            outside = f"{url} is outside the skill's allowed scope ({' '.join(self.proc.scope)})"
        self.gate.guard(Action("computer_act", what, url, n), outside)

    def navigation_outside(self, url: str) -> str | None:
        """A page or frame of any tab going outside the scope (the guard's judge;
        data:, about: and blob: documents reach no server)."""
        if in_scope(url, self.proc.scope) or not url.lower().startswith(("http:", "https:")):
            return None
        return f"{url} is outside the skill's allowed scope ({' '.join(self.proc.scope)})"

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
        try:
            self.page.wait_for_url(lambda u: matches_pattern(u, pattern) and (not moved or u != before),
                                   wait_until="domcontentloaded", timeout=NAV_TIMEOUT * 1000)
        except PlaywrightTimeout:
            raise Halt(f"step {n}: expected the page {pattern}, but it is {self.page.url}") from None

    def _value(self, step: PlanStep) -> str:
        if step.secret:
            return self.secret(step.secret)
        name = step.param or ""
        if name in self.params:
            return self.params[name]
        return str((self.proc.parameters.get(name) or {}).get("default", ""))

    # -- steps --------------------------------------------------------------
    def run(self, until: int | None = None) -> None:
        """Every step and the success check; with ``until``, only the steps
        before that one (a repair's lead-in: the person takes over there).
        While it runs, every page and frame of every tab is held to the
        skill's scope before a request leaves (teachd.runner.guard)."""
        guard = guard_for(self.context)
        scoped = Layer(self.navigation_outside, ask=self._ask_navigation)
        layer = guard.add(scoped) if self.proc.scope else None
        guard.take()  # what an earlier act stopped is not this replay's
        try:
            self._steps(until)
        finally:
            if layer is not None:
                guard.drop(layer)

    def _steps(self, until: int | None) -> None:
        for step in self.proc.steps:
            n, action = step.n, step.action
            if until is not None and n >= until:
                return
            self.progress(plain(f"step {n}: {action} {step.describe or step.url or ''}"))
            try:
                via = self._do(step)
            except (Halt, PolicyStop) as exc:
                clean = self.scrubber.scrub(str(exc))
                self.results.append(StepResult(n, action, "halted", clean))
                if clean != str(exc):
                    raise type(exc)(clean) from None
                raise
            except PlaywrightError as exc:  # Playwright's own errors: a halt, named
                msg = self.scrubber.scrub(f"step {n}: {str(exc).splitlines()[0]}")
                self.results.append(StepResult(n, action, "halted", msg))
                raise Halt(msg) from None
            self.results.append(StepResult(n, action, "ok", step.describe or "", via))
        try:
            self.check_success()
        except Halt as exc:  # the final page's address or title could show a typed secret
            clean = self.scrubber.scrub(str(exc))
            if clean != str(exc):
                raise Halt(clean) from None
            raise
        self.notes = [self.scrubber.scrub(note) for note in self.notes]

    def _do(self, step: PlanStep) -> list[str]:
        """Act, then, where the demonstration went to another page, wait for it."""
        before = self.page.url
        self._step = step.n
        guard = guard_for(self.context)
        try:
            via = self._perform(step)
            if (step.expect or {}).get("url_pattern") and not (step.action == "goto" and step.n == 1):
                self._wait_url(step.n, step, before)
        except (Halt, PlaywrightError):
            self._raise_stops(step.n, guard.take())  # a stopped navigation is why, whatever the symptom
            raise
        self._raise_stops(step.n, guard.take())
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
            self._guard(n, f"open {url}", url)
            guard_for(self.context).permit(url)  # asked just now (if outside): not asked twice
            self.page.goto(url, wait_until="domcontentloaded")
            return []
        if action in ("os_click", "os_key"):
            raise Halt(f"step {n}: a desktop step outside the browser; a person must do it")
        if action == "press" and not step.anchor:
            self._guard(n, f"press {step.key}", focused_location(self.page))  # the frame the keys go to
            self.page.keyboard.press(self._keys(step))
            return []
        anchor = self.proc.anchors.get(step.anchor or "")
        if anchor is None:
            raise Halt(f"step {n}: no anchor for its target")
        target, choice = self.resolve(n, anchor)
        # judged by the element's own frame: a cross-origin iframe on an in-scope page is not in scope
        self._guard(n, plain(f"{action} {step.describe or ''}".strip()), element_location(target))
        self._act(step, target, anchor)
        return list(choice.via)

    @staticmethod
    def _keys(step: PlanStep) -> str:
        return "+".join([*step.modifiers, step.key or "Enter"])

    def _act(self, step: PlanStep, target: PwLocator, anchor: Anchor) -> None:
        n, action, what = step.n, step.action, plain(step.describe or "the target")
        timeout = self.step_timeout * 1000
        expect_ = step.expect or {}
        new_tab = expect_.get("tab") is not None and expect_.get("tab") != step.tab
        try:
            if action in ("click", "dblclick") and new_tab:
                with self.context.expect_page(timeout=NAV_TIMEOUT * 1000) as info:
                    target.click(timeout=timeout)
                self.page = info.value
                self.page.wait_for_load_state("domcontentloaded")
            elif action == "click":
                target.click(timeout=timeout)
            elif action == "dblclick":
                target.dblclick(timeout=timeout)
            elif action == "type":
                editable = anchor.expect.get("tag") in ("input", "textarea")
                if step.secret:  # masked in an agent's screenshots, scrubbed from its snapshots
                    target.evaluate("(e, mark) => e.setAttribute(mark, '')", MARK)
                type_like_a_person(target, self._value(step), editable, timeout)
            elif action == "select":
                self._select(step, target, timeout)
            elif action == "check":
                want = bool(step.checked if step.checked is not None else True)
                target.set_checked(want, timeout=timeout)
                (expect(target).to_be_checked if want else expect(target).not_to_be_checked)(timeout=2000)
            elif action == "press":
                target.press(self._keys(step), timeout=timeout)
            else:
                raise Halt(f"step {n}: unknown action {action!r}")
        except AssertionError:
            raise Halt(f"step {n}: {what} does not show the effect it should "
                       f"(value or state differs after the {action})") from None

    def _select(self, step: PlanStep, target: PwLocator, timeout: float) -> None:
        """By value; when no option has it any more, by the label that was
        chosen (values are often database ids that differ between installs),
        only for the demonstrated choice, and only when exactly one label fits."""
        value = self._value(step)
        listed = target.evaluate("s => Array.from(s.options).map(o => [o.value, o.label])")
        options: list[tuple[str, str]] = [(str(v), str(lab)) for v, lab in listed]
        chosen = [v for v, _ in options if v == value]
        demonstrated = step.param is not None and step.param not in self.params
        if not chosen and demonstrated and step.option:
            chosen = [v for v, lab in options if name_score(step.option, lab) == EXACT]
            if not chosen:
                chosen = [v for v, lab in options if name_score(step.option, lab) == GAINED]
        if not chosen:
            chosen = [v for v, lab in options if lab == value]
        if len(chosen) != 1:
            what = "has no option" if not chosen else "has several options that fit"
            raise Halt(f"step {step.n}: {plain(step.describe or 'the menu')} {what} {value!r}")
        target.select_option(value=chosen[0], timeout=timeout)
        expect(target).to_have_value(chosen[0], timeout=2000)

    def check_success(self) -> None:
        """The last page's address must match; its title too where the address
        alone does not tell the end from the page the last step acted on."""
        success = self.proc.success
        pattern = success.get("url_pattern")
        if pattern:
            try:
                expect(self.page).to_have_url(pattern_regex(pattern), timeout=NAV_TIMEOUT * 1000)
            except AssertionError:
                raise Halt(f"success check: the final page is {self.page.url}, expected {pattern}") from None
        title = success.get("title")
        if not title:
            return
        last_page = next((s.page for s in reversed(self.proc.steps) if s.page), "")
        decisive = not pattern or url_pattern(last_page or "") == pattern
        try:
            expect(self.page).to_have_title(title, timeout=2000 if decisive else 500)
        except AssertionError:
            shown = self.page.title()
            if decisive:
                raise Halt(f"success check: the final title is {shown!r}, expected {title!r}") from None
            self.notes.append(f"the final page's title is now {shown!r} (was {title!r})")
