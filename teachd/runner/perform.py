"""The acts on a step's found target: click, type, choose, check, press —
each as a person makes it, each checked where Playwright can check it.

Split from the replay executor (teachd.runner.replay), which finds the
target (teachd.runner.locate) and passes the gate first; an ``Actor`` then
acts and makes sure the act landed. Typing must land in the app, not only in
the DOM: after a ``type`` the page is let settle (what it changes after each
key was handled, and the requests the step started, quiet for ``QUIET_MS``,
never longer than ``SETTLE_MAX``; a page that answered each key at once costs
one look), the field is left as a person leaves it (blur: focusout, change)
when that cannot close what the next step needs, and the page settles again.
An editor (``contenteditable``) is verified where the app will read it: the
form's input that carries its content; one that never receives the text
halts the step. A submitting click waits for the page to settle first, and
for a save the page has under way (teachd.runner.traffic).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from compiler.plan import Anchor, PlanStep, Procedure
from teachd.runner.guard import frames_turned
from teachd.runner.halt import Halt, plain
from teachd.runner.locate import Found
from teachd.runner.match import EXACT, GAINED, name_score
from teachd.runner.secrecy import MARK
from teachd.runner.traffic import CLOCK, QUIET_MS, RECENT, Traffic

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page
    from playwright.sync_api import Locator as PwLocator

NAV_TIMEOUT = 15.0  # seconds a navigation (or the tab a click opens) may take
LOOK_MS = 1000  # a field gone after typing (a re-render, a navigation) is not looked for longer
TOOK_MAX = 2000  # ms an editor's form input may take, after the settle, to receive the text
KEY_MS = 250  # ms each typed character may take, beyond the step's timeout, on a loaded machine
# ms a found target's click, check, key or choice may take at least: the step's timeout bounds the
# looking (--step-timeout), not the page's moment of being busy (an overlay, a loaded machine)
ACT_MIN_MS = 5000
_QUIET = "e => {" + CLOCK + " return quiet(); }"
# Once the page is quiet (or the field was left already): leave the field as
# a person does (focusout, blur, change); returns [ms quiet, left yet, holds
# ``want``] (``want``: the value typed, checked before leaving; null: not asked).
_LEAVE = "(e, [enough, left, want]) => {" + CLOCK + """
  if (want !== null && e.value !== want) return [quiet(), left, false];
  if (left) return [quiet(), true, true];
  if (quiet() < enough) return [quiet(), false, true];
  const a = e.ownerDocument.activeElement;
  const mine = a && a !== e.ownerDocument.body && (a === e || e.contains(a) || a.contains(e) ||
    (!e.isConnected && (a.isContentEditable || ["INPUT", "TEXTAREA"].includes(a.tagName))));
  if (mine) a.blur();
  return [quiet(), true, true];
}"""
# Did the app take what was typed into an editor? "took": a field of its form
# (or the document) that is not on screen holds the text, tags and spacing
# aside; "tied": none yet, and one of them is the editor's own (referenced by
# it, changed while it was typed into, a hidden textarea, or named like it);
# "wait": none yet, some could still; "none": nothing to check.
_TOOK = r"""(e, [typed, verdict]) => {
  const squash = (s) => String(s || "").replace(/[\s\u00a0\u200b\ufeff]+/g, "");
  const want = squash(typed);
  if (!want) return "took";
  const doc = e.ownerDocument, scope = e.closest("form") || doc;
  const shown = (f) => { const r = f.getBoundingClientRect(); const s = getComputedStyle(f);
    return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none"; };
  const machinery = (f) => /csrf|token|nonce|authenticity|^_method$|^utf8$/i.test(f.name || f.id || "");
  const fields = Array.from(scope.querySelectorAll("input, textarea")).filter((f) => f !== e && !e.contains(f)
    && (f.type || "").toLowerCase() !== "password" && !machinery(f)
    && ((f.type || "").toLowerCase() === "hidden" || !shown(f)));
  const text = (v) => { try { return new DOMParser().parseFromString(v, "text/html").body.textContent; }
                        catch (x) { return v; } };
  const holds = (f) => { const v = String(f.value || "");
    return squash(v).includes(want) || squash(text(v)).includes(want)
      || squash(v).includes(squash(JSON.stringify(String(typed)).slice(1, -1))); };
  if (fields.some(holds)) return "took";
  if (!verdict) return fields.length ? "wait" : "none";
  const words = (s) => (String(s || "").toLowerCase().match(/[a-z0-9]+/g) || [])
    .filter((x) => !["editor", "ql", "container", "wrapper", "root", "field", "input", "rich", "text",
                     "area", "div", "form", "content", "value", "hidden"].includes(x));
  const mine = new Set();
  const ids = [];
  const named = ["aria-label", "id", "name", "data-name", "data-field", "aria-placeholder",
                 "data-placeholder"];
  for (let n = e, depth = 0; n && n.nodeType === 1 && n !== scope && depth < 5;
       n = n.parentElement, depth++) {
    for (const a of named) words(n.getAttribute(a)).forEach((x) => mine.add(x));
    for (const id of (n.getAttribute("aria-labelledby") || "").split(/\s+/).filter(Boolean)) {
      const l = doc.getElementById(id);
      if (l) words(l.textContent).forEach((x) => mine.add(x));
    }
    for (const a of ["input", "data-input", "data-target", "aria-controls", "data-field-id"]) {
      const v = n.getAttribute(a); if (v) ids.push(v.replace(/^#/, ""));
    }
  }
  const before = e.__teachdBefore || new Map();
  const tied = fields.some((f) => ids.includes(f.id) || (before.has(f) && before.get(f) !== f.value)
    || f.tagName === "TEXTAREA" || words(f.name).concat(words(f.id)).some((x) => mine.has(x)));
  return tied ? "tied" : "none";
}"""


def submits(found: Mapping[str, Any]) -> bool:
    """Does clicking this element (as its evidence describes it) submit a form?"""
    tag, kind = found.get("tag"), str((found.get("attrs") or {}).get("type") or "").lower()
    return (tag == "input" and kind in ("submit", "image")) or (tag == "button" and kind in ("", "submit"))


def keys(step: PlanStep) -> str:
    return "+".join([*step.modifiers, step.key or "Enter"])


def type_like_a_person(target: PwLocator, value: str, editable: bool, timeout_ms: float,
                       empty: bool | None = None, verify: bool = True) -> None:
    """Clear with keys, then one key event per character, so widgets that
    listen to keystrokes see them; then check the field holds the value.
    A field that holds text is selected whole and typed over, as a person
    does (Backspace only when nothing is typed after). ``empty``: what the
    field's evidence just said (None: not seen), so it is not read again
    (were it changed meanwhile, the check at the end halts).
    ``verify=False``: the caller checks the value in its next look."""
    if empty is None:
        read = target.input_value if editable else target.inner_text
        empty = not read(timeout=timeout_ms)
    if not empty:
        target.press("ControlOrMeta+a")
        if not value:
            target.press("Backspace")
    if value:  # the timeout waits for the field; the keys take the time they take (a busy machine)
        target.press_sequentially(value, timeout=timeout_ms + KEY_MS * len(value))
    else:
        target.focus(timeout=timeout_ms)
    if not verify:
        return
    if editable:
        expect(target).to_have_value(value, timeout=2000)
    else:
        expect(target).to_have_text(value, timeout=2000)


class Actor:
    """The hands of one replay: it makes a step's act on the target it was
    given (found, in scope, approved), waits first where the act could race
    the page (a click after a field was filled, or one that submits), and
    checks the act took. It remembers what it last did (``acted_at``,
    ``filled``: what the next act waits on) and how often a settle after
    typing waited (``waited``, by step); ``opened`` is told of a tab a click
    opened, where the replay goes on."""

    def __init__(self, context: BrowserContext, proc: Procedure, params: Mapping[str, str],
                 value: Callable[[PlanStep], str], traffic: Traffic, step_timeout: float,
                 opened: Callable[[Page], None]) -> None:
        self.context, self.proc, self.params, self.value = context, proc, params, value
        self.traffic, self.step_timeout, self.opened = traffic, step_timeout, opened
        self.acted_at = time.monotonic()  # when the last action began: the traffic a settle waits on
        self.filled = ""  # the last action filled a field: "typed", or "choice" (a select or check)
        self.waited: dict[int, int] = {}  # step → times a settle after its typing waited

    def act(self, page: Page, step: PlanStep, anchor: Anchor, hit: Found, nxt: PlanStep | None) -> None:
        """Act on ``hit`` as the step says, on ``page`` (``nxt``: the step
        after it, which leaving a field must not spoil); a halt naming the
        step when the act cannot be made or does not show."""
        action = step.action
        found = hit.choice.candidate.found if hit.choice.candidate is not None else {}
        # A click right after a field was filled, or one that submits, waits
        # for the fields to have settled: after a choice the page may still be
        # answering, its mutations and requests; otherwise (typing settled the
        # page itself) the requests of the last few seconds (an autosave
        # leaving a field started) — no look at the page at all.
        if action in ("click", "dblclick") and (self.filled or submits(found)):
            since = min(self.acted_at, time.monotonic() - RECENT)
            saved = self.traffic.await_saves(page)
            if self.filled == "choice":
                self.traffic.settle(page, lambda: page.evaluate("() => { const e = document.documentElement;"
                                                                + CLOCK + " return quiet(); }"), since)
            else:  # after a save, until what its answer started is quiet too
                self.traffic.settle(page, lambda: 1e9, since, answered=not saved)
        self.acted_at = time.monotonic()
        self.filled = "choice" if action in ("select", "check") else "typed" if action == "type" else ""
        # What is written from now on is this step's doing; a write the last
        # step's click sent while this one was still being looked for is not.
        self.traffic.step = step.n
        self._act(page, step, hit, anchor, found, nxt)

    def _act(self, page: Page, step: PlanStep, hit: Found, anchor: Anchor, found: Mapping[str, Any],
             nxt: PlanStep | None) -> None:
        """The step's act on its target, and the check that it took: a field
        holds what was typed (and the app has it: ``_land``), a box is checked
        or not as taught, a menu shows the option chosen. A click that opens a
        tab moves the replay there (``opened``). An effect that does not show
        halts the step, named; an unknown action halts before anything."""
        n, action, what = step.n, step.action, plain(step.describe or "the target")
        target = hit.target
        timeout = self.step_timeout * 1000
        act = max(timeout, ACT_MIN_MS)
        expect_ = step.expect or {}
        new_tab = expect_.get("tab") is not None and expect_.get("tab") != step.tab
        try:
            if action in ("click", "dblclick") and new_tab:
                with self.context.expect_page(timeout=NAV_TIMEOUT * 1000) as info:
                    target.click(timeout=act)
                tab = info.value
                self.opened(tab)
                tab.wait_for_load_state("domcontentloaded")
            elif action == "click":
                target.click(timeout=act)
                frames_turned(page)  # what the click started (a form's post) has left, as this step's
            elif action == "dblclick":
                target.dblclick(timeout=act)
            elif action == "type":
                editable = anchor.expect.get("tag") in ("input", "textarea")
                if step.secret:  # masked in an agent's screenshots, scrubbed from its snapshots
                    hit.look("(e, mark) => e.setAttribute(mark, '')", MARK)
                value = self.value(step)
                # a field that will be left is checked in the look that leaves it (one round trip)
                checked = editable and self._may_leave(step, found, nxt)
                type_like_a_person(target, value, editable, timeout, empty=found.get("empty"),
                                   verify=not checked)
                self._land(page, step, hit, value, found, nxt, checked)
            elif action == "select":
                self._select(step, hit, act)
            elif action == "check":
                want = bool(step.checked if step.checked is not None else True)
                target.set_checked(want, timeout=act)
                (expect(target).to_be_checked if want else expect(target).not_to_be_checked)(timeout=2000)
            elif action == "press":
                target.press(keys(step), timeout=act)
            else:
                raise Halt(f"step {n}: unknown action {action!r}")
        except AssertionError:
            raise Halt(f"step {n}: {what} does not show the effect it should "
                       f"(value or state differs after the {action})") from None

    def _may_leave(self, step: PlanStep, field_is: Mapping[str, Any], nxt: PlanStep | None) -> bool:
        """Leaving the field (blur) is what a person does next, unless the
        next step needs it focused (keys sent to it) or picks from what it
        opened (an option of its list): leaving would close that."""
        if field_is.get("popup"):
            return False
        if nxt is None:
            return True
        if nxt.action == "press" and not nxt.anchor:
            return False
        if nxt.anchor and nxt.anchor == step.anchor:
            return False
        role = (self.proc.anchors.get(nxt.anchor or "") or Anchor("", "", [], {})).expect.get("role")
        return role not in ("option", "menuitem", "menuitemcheckbox", "menuitemradio", "treeitem", "gridcell")

    def _land(self, page: Page, step: PlanStep, hit: Found, value: str, field_is: Mapping[str, Any],
              nxt: PlanStep | None, check: bool = False) -> None:
        """After typing: settle, leave the field, settle; an editor's text must
        reach the form field the app submits (when it has one). ``check``:
        the field must hold ``value`` before it is left (the typing's own
        check, made by the first look)."""
        since, target = self.acted_at, hit.target
        if not self._may_leave(step, field_is, nxt) and not field_is.get("rich"):
            # The next step picks from what the typing opened (or sends it keys):
            # it waits for its own target as the page draws it; only requests
            # the typing started are waited on here, and the field is kept.
            self.waited[step.n] = self.traffic.settle(page, lambda: 1e9, since, documents=False)
            return
        if self._may_leave(step, field_is, nxt):
            # One look settles and leaves at once when the page is quiet already
            # (the usual case); a second one hears of what leaving started.
            left, want = [False], [value if check else None]

            def look_and_leave() -> float | None:
                # leave once requests are quiet too, and the page: QUIET_MS, or nothing
                # changed since the step acted (as ``settle`` counts it)
                ready = self.traffic.quiet_ms(since, False) >= QUIET_MS
                enough = min(QUIET_MS, (time.monotonic() - since) * 1000) if ready else 1e12
                was = left[0]
                try:
                    quiet, left[0], holds = hit.look(_LEAVE, [enough, was, want[0]], LOOK_MS)
                except PlaywrightError:
                    if want[0] is None:
                        raise  # the document went away: the settle ends
                    holds = False
                if not holds and want[0] is not None:  # the typing's own check, which may take its time
                    expect(target).to_have_value(want[0], timeout=2000)
                    want[0] = None
                    return None  # look again at once (or the field is gone: the settle ends)
                want[0] = None
                return None if left[0] and not was else float(quiet)  # just left: look again at once

            self.waited[step.n] = self.traffic.settle(page, look_and_leave, since, documents=False)
        else:
            self.waited[step.n] = self.traffic.settle(page, lambda: hit.look(_QUIET, None, LOOK_MS), since,
                                                      documents=False)
        if not field_is.get("rich"):
            return
        try:
            handle = target.element_handle(timeout=LOOK_MS)
            state = handle.evaluate(_TOOK, [value, False])
            if state == "wait":
                try:
                    frame = handle.owner_frame()
                    assert frame is not None
                    frame.wait_for_function(
                        f"([e, typed]) => ({_TOOK})(e, [typed, false]) === 'took'", arg=[handle, value],
                        polling=50, timeout=TOOK_MAX)
                    return
                except PlaywrightTimeout:
                    state = handle.evaluate(_TOOK, [value, True])
        except PlaywrightError:
            return  # the editor's document went away (the app navigated): the next step judges
        if state == "tied":
            raise Halt(f"step {step.n}: the app did not take what was typed into "
                       f"{plain(step.describe or 'the editor')}: the form field it submits never received it")

    def _select(self, step: PlanStep, hit: Found, timeout: float) -> None:
        """By value; when no option has it any more, by the label that was
        chosen (values are often database ids that differ between installs),
        only for the demonstrated choice, and only when exactly one label fits."""
        value = self.value(step)
        listed = hit.look("s => Array.from(s.options).map(o => [o.value, o.label])")
        options: list[tuple[str, str]] = [(str(v), str(lab)) for v, lab in listed]
        chosen = [v for v, _ in options if v == value]
        demonstrated = step.value is not None or (step.param is not None and step.param not in self.params)
        if not chosen and demonstrated and step.option:
            chosen = [v for v, lab in options if name_score(step.option, lab) == EXACT]
            if not chosen:
                chosen = [v for v, lab in options if name_score(step.option, lab) == GAINED]
        if not chosen:
            chosen = [v for v, lab in options if lab == value]
        if len(chosen) != 1:
            what = "has no option" if not chosen else "has several options that fit"
            raise Halt(f"step {step.n}: {plain(step.describe or 'the menu')} {what} {value!r}")
        hit.target.select_option(value=chosen[0], timeout=timeout)
        expect(hit.target).to_have_value(chosen[0], timeout=2000)
