"""The replay executor: a taught skill's steps in Chromium, each one a
``computer_act`` call through the gate, its target resolved by the anchor's
locators and checked against the demonstrated evidence, its effect verified.

Anything unexpected halts the run with the step named: no silent wrong action.
Waiting is Playwright's own: a target is looked for again when the page
changes (a mutation counter the capture script keeps), never on a clock;
navigations are awaited with ``wait_for_url``; effects with ``expect``.

Typing must land in the app, not only in the DOM: after a ``type`` the page
is let settle (what it changes after each key was handled, and the
requests the step started, quiet for ``QUIET_MS``, never longer than
``SETTLE_MAX``; a page that answered each key at once costs one look),
the field is left as a person leaves it (blur: focusout, change) when that
cannot close what the next step needs, and the page settles again. An
editor (``contenteditable``) is verified where the app will read it: the
form's input that carries its content; one that never receives the text
halts the step. A submitting click waits for the page to settle first.

The success check proves the effect where the demonstration showed it: the
values this run typed on the final page (``success.shows``). A run with
nothing checkable at its end is *unverified*, never a success.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from compiler.plan import Anchor, Locator, PlanStep, Procedure
from compiler.scope import in_scope, matches_pattern, url_pattern
from recorder.errors import first_line
from teachd.core.errors import InvalidSkill, PolicyStop, TeachdError
from teachd.runner.gate import Action, Gate, Plan
from teachd.runner.gate import PlanStep as PlanLine
from teachd.runner.guard import Layer, Stopped, element_location, focused_location, guard_for
from teachd.runner.looks import BY_CSS, evaluate_each, look
from teachd.runner.match import (
    EXACT,
    GAINED,
    STRONG,
    Candidate,
    Choice,
    agrees,
    as_taught,
    choose,
    name_score,
    names_of,
    words,
)
from teachd.runner.observe import StepObserver, crop, thumbnail
from teachd.runner.plan_view import plan_of, plan_step, value_of
from teachd.runner.secrecy import MARK, Scrubber

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Frame, Page
    from playwright.sync_api import Locator as PwLocator

STEP_TIMEOUT = 10.0  # seconds a step may look for its target (teachd run --step-timeout)
NAV_TIMEOUT = 15.0
SHOWS_TIMEOUT = 5.0  # seconds the final page may take to show this run's values once it is there
MAX_MATCHES = 20  # candidates taken from one locator; more is a list, not a target
_CHANGED = "m => (window.__teachdMutations || 0) !== m"
_MARK = "teachd-target"

QUIET_MS = 150  # the page counts as settled once this long without mutations or requests
SETTLE_MAX = 2.0  # seconds one settle may take, however busy the page stays
_POSITIONAL = frozenset({"css", "xpath"})  # where an element sat: never who it is
_CHEAP = STRONG | {"attr:href"}  # named by an attribute (CSS): no accessible names to compute
FALLBACK_AFTER = 0.3  # seconds a target is looked for by its own locators before the fallback ones
LOOK_MS = 1000  # a field gone after typing (a re-render, a navigation) is not looked for longer
RECENT = 5.0  # seconds: requests started this recently are waited on before a submit
# seconds a submit waits for a save the page has under way (a fetch or XHR that writes: POST, PUT,
# PATCH, DELETE), beyond a settle's SETTLE_MAX: submitting while the app is still saving the same
# form races it (Wagtail 8's autosave creates the page, and a Publish sent meanwhile creates it again)
SAVE_MAX = 10.0
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
TOOK_MAX = 2000  # ms an editor's form input may take, after the settle, to receive the text
KEY_MS = 250  # ms each typed character may take, beyond the step's timeout, on a loaded machine
# ms a found target's click, check, key or choice may take at least: the step's timeout bounds the
# looking (--step-timeout), not the page's moment of being busy (an overlay, a loaded machine)
ACT_MIN_MS = 5000
DESKTOP_EFFECT_TIMEOUT = 10.0  # seconds for a desktop step's window title to show what it did
_TRAFFIC = frozenset({"fetch", "xhr", "document"})  # requests a step's effect can wait on
# Milliseconds since the element's document last changed (a style-only change
# is animation, not the app answering), with the clock installed on first use.
# What the page changes while it handles a key (in its handlers and the
# microtasks they queue, up to the end of the key's dispatch) is its answer to
# that key, whole once the key's events are: it does not move the clock. What
# it changes later (a frame, a timer, a response) does: the page is still
# working. (A handler that stops the event before it reaches the window: its
# key counts until the next task.) A timer a key's handlers set (up to
# ``KEYED_TIMER_MS``) is the page answering later: while one is due, the
# page is not quiet, however fast the keys came (a count drawn 300 ms after
# each key, a debounced sync); one it clears is not waited for.
KEYED_TIMER_MS = 1000
_CLOCK = """
  const w = e.ownerDocument.defaultView;
  if (w.__teachdChangedAt === undefined) {
    w.__teachdChangedAt = -1e9;
    let keyed = false;
    const due = new Set(), set = w.setTimeout, clear = w.clearTimeout;
    const KEYED = """ + str(KEYED_TIMER_MS) + """;
    const off = () => { keyed = false; };
    const on = () => { if (!keyed) { keyed = true; set.call(w, off, 0); } };
    for (const t of ["keydown", "keypress", "beforeinput", "input", "keyup"]) {
      w.addEventListener(t, on, true);
      w.addEventListener(t, () => w.queueMicrotask(off));
    }
    w.setTimeout = function (fn, ms, ...rest) {
      if (!keyed || typeof fn !== "function" || !(Number(ms || 0) <= KEYED)) {
        return set.call(w, fn, ms, ...rest);
      }
      const id = set.call(w, function (...a) { due.delete(id); return fn.apply(this, a); }, ms, ...rest);
      due.add(id);
      return id;
    };
    w.clearTimeout = function (id) { due.delete(id); return clear.call(w, id); };
    w.__teachdDue = due;
    new w.MutationObserver((records) => {
      if (!keyed && records.some((r) => r.type !== "attributes" || (r.attributeName !== "style"
          && !String(r.attributeName).startsWith("data-teachd")))) w.__teachdChangedAt = w.performance.now();
    }).observe(e.ownerDocument, {subtree: true, childList: true, attributes: true, characterData: true});
  }
  const quiet = () => w.__teachdDue.size ? 0 : Math.min(1e9, w.performance.now() - w.__teachdChangedAt);
"""
_QUIET = "e => {" + _CLOCK + " return quiet(); }"
# One round trip per locator: the evidence of every match, and the page's
# mutation count (what a wait for the page to change starts from). It also
# starts the document's change clock before anything is typed, and tells,
# per match, what typing needs to know: an editor (``rich``; then what its
# form's fields hold now, as a field that changes as it is typed into is
# the editor's) and a field that owns a popup (leaving it could close what
# the next step picks from).
_ONE = """(el) => {
    const ev = window.__teachdEvidence ? window.__teachdEvidence(el) : null;
    if (!ev) return ev;
    ev.popup = ["aria-autocomplete", "aria-haspopup", "aria-expanded", "aria-controls", "aria-owns", "list"]
      .some((a) => el.hasAttribute(a)) || el.getAttribute("role") === "combobox";
    ev.rich = el.isContentEditable && !["INPUT", "TEXTAREA"].includes(el.tagName);
    const field = ["INPUT", "TEXTAREA"].includes(el.tagName);
    ev.empty = field ? !el.value : ev.rich ? !el.textContent.trim() : null;
    if (ev.rich) {
      const fields = Array.from((el.closest("form") || el.ownerDocument).querySelectorAll("input, textarea"));
      el.__teachdBefore = new Map(fields.map((f) => [f, f.value]));
    }
    return ev;
  }"""
_EVIDENCE = ("els => { const e = document.documentElement;" + _CLOCK
             + "return [window.__teachdMutations || 0, els.map(" + _ONE + ")]; }")
# The same for CSS selectors, asked of the document itself (and its open
# shadow roots, as Playwright's CSS does): no selector engine is needed, so
# a document the replay has just reached costs no injected script for it.
# Per selector: the evidence of its first matches, or null (a selector the
# page cannot parse). Given ``names`` (a name's words, lower case, one space
# apart), each match also counts its namesakes (``others``): the elements,
# shown or not, outside it and not holding it, whose text or naming attribute
# has those very words; any of them could be what a role's or a text's
# locator finds under that name.
_BY_CSS = "([sels, names]) => { const e = document.documentElement;" + _CLOCK + """
  const one = """ + _ONE + """, all = """ + BY_CSS + """;
  const norm = (s) => String(s || "").toLowerCase().replace(/[^\\p{L}\\p{N}]+/gu, " ").trim();
  const named = (el) => [el.textContent, ...["aria-label", "title", "alt", "value"]
    .map((a) => el.getAttribute(a))].some((s) => s && s.length < 400 && names.includes(norm(s)));
  const namesakes = names.length ? all("*").filter(named) : [];
  return [window.__teachdMutations || 0, sels.map((css) => {
    try {
      return all(css).slice(0, 50).map((el) => {
        const ev = one(el);
        if (ev) ev.others = namesakes.filter((n) => !(n === el || n.contains(el) || el.contains(n))).length;
        return ev;
      });
    } catch (err) { return null; }
  })];
}"""
# Once the page is quiet (or the field was left already): leave the field as
# a person does (focusout, blur, change); returns [ms quiet, left yet, holds
# ``want``] (``want``: the value typed, checked before leaving; null: not asked).
_LEAVE = "(e, [enough, left, want]) => {" + _CLOCK + """
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
# The final page's visible text holds each value as whole words, case and spacing aside.
_SHOWS = r"""needles => {
  const text = (document.body ? document.body.innerText : "").replace(/\s+/g, " ").toLowerCase();
  const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const word = (n) => new RegExp("(?<![\\p{L}\\p{N}_])" + esc(n) + "(?![\\p{L}\\p{N}_])", "u");
  return needles.filter((n) => !word(n).test(text));
}"""


class Traffic:
    """The requests a page has under way (fetch, XHR, documents), from
    Playwright's own events: what a settle waits on besides mutations. Only
    requests started since a step began count: a long poll opened earlier is
    not the step's effect. A settle after typing may leave documents out:
    a frame still loading with its page (heard of only once the replay next
    asks the browser anything) is not the app taking what was typed, and a
    typed key that navigates ends the settle anyway."""

    def __init__(self) -> None:
        self.pending: dict[int, tuple[float, bool, bool]] = {}  # request → (started, a document, a save)
        self.last = -1e9  # monotonic time of the last start or end
        self.last_app = -1e9  # ... of a fetch or XHR
        self.pages: list[Any] = []

    def watch(self, page: Page) -> None:
        if any(p is page for p in self.pages):
            return
        self.pages.append(page)
        page.on("request", self._start)
        page.on("requestfinished", self._end)
        page.on("requestfailed", self._end)

    def close(self) -> None:
        for page in self.pages:
            for event, fn in (("request", self._start), ("requestfinished", self._end),
                              ("requestfailed", self._end)):
                try:
                    page.remove_listener(event, fn)
                except (KeyError, ValueError):
                    pass
        self.pages.clear()

    def _start(self, request: Any) -> None:
        if request.resource_type in _TRAFFIC:
            document = request.resource_type == "document"
            save = not document and request.method in _WRITES
            self.pending[id(request)] = (time.monotonic(), document, save)
            self._heard(document)

    def _end(self, request: Any) -> None:
        if (was := self.pending.pop(id(request), None)) is not None:
            self._heard(was[1])

    def _heard(self, document: bool) -> None:
        self.last = time.monotonic()
        if not document:
            self.last_app = self.last

    def quiet_ms(self, since: float, documents: bool = True) -> float:
        """Milliseconds without traffic the step started; 0 while some is under way."""
        if self.under_way(since, documents):
            return 0.0
        last = self.last if documents else self.last_app
        return 1e9 if last < since else (time.monotonic() - last) * 1000

    def under_way(self, since: float, documents: bool = True) -> bool:
        return any(t >= since and (documents or not doc) for t, doc, _save in self.pending.values())

    def saving(self) -> bool:
        """A fetch or XHR that writes is under way, started in the last
        ``RECENT + SAVE_MAX`` (one whose end was never heard, its tab closed,
        holds nothing up for long)."""
        since = time.monotonic() - RECENT - SAVE_MAX
        return any(save and t >= since for t, _doc, save in self.pending.values())


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


def via_label(loc: Locator) -> str:
    if loc.attr in ("loose", "words"):
        return loc.by + "~"
    return f"attr:{loc.attr}" if loc.by == "attr" and loc.attr else loc.by


def submits(found: Mapping[str, Any]) -> bool:
    """Does clicking this element (as its evidence describes it) submit a form?"""
    tag, kind = found.get("tag"), str((found.get("attrs") or {}).get("type") or "").lower()
    return (tag == "input" and kind in ("submit", "image")) or (tag == "button" and kind in ("", "submit"))


def pattern_regex(pattern: str) -> re.Pattern[str]:
    """A ``url_pattern`` as a regular expression for ``expect(page).to_have_url``."""
    parts = [("[^/?#]+" if seg == "*" else re.escape(seg)) for seg in pattern.split("/")]
    return re.compile("^" + "/".join(parts) + r"/?(?:[?#].*)?$")


def _css(loc: Locator) -> str | None:
    """The CSS selector of a locator that names an element by an attribute."""
    if loc.by == "test_id":
        v = json.dumps(loc.value)
        return ", ".join(f"[{a}={v}]" for a in ("data-testid", "data-test-id", "data-test", "data-qa"))
    if loc.by == "id":
        return f"[id={json.dumps(loc.value)}]"
    if loc.by == "attr":
        return str(loc.css)
    return None


def _locator(root: Page | Frame, loc: Locator) -> PwLocator:
    by, exact = loc.by, loc.attr != "loose"
    if (css := _css(loc)) is not None:
        return root.locator(css)
    if by == "role" and loc.attr == "words":  # every word of the name, in any order, among others
        every = "".join(rf"(?=.*\b{re.escape(w)}\b)" for w in words(loc.name))
        return root.get_by_role(loc.role, name=re.compile(every, re.IGNORECASE))  # type: ignore[arg-type]
    if by == "role":
        return root.get_by_role(loc.role, name=loc.name, exact=exact)  # type: ignore[arg-type]
    if by == "label":
        return root.get_by_label(str(loc.value), exact=exact)
    if by == "placeholder":
        return root.get_by_placeholder(str(loc.value), exact=True)
    if by == "text":
        return root.get_by_text(str(loc.value), exact=True)
    if by == "css":
        return root.locator(str(loc.value))
    if by == "xpath":
        return root.locator("xpath=" + str(loc.value))
    raise InvalidSkill(f"unknown locator kind {by!r}")


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
                 step_timeout: float = STEP_TIMEOUT, slug: str = "", observer: StepObserver | None = None,
                 cancelled: Callable[[], str | None] | None = None, plan: Plan | None = None) -> None:
        self.context, self.page, self.proc, self.gate = context, page, proc, gate
        self.slug, self.observer = slug, observer
        self.plan = plan or plan_of(slug, proc, params, start_url)  # what a `run` answer approves
        self.cancelled = cancelled or (lambda: None)  # who cancelled the run, asked between steps
        self._as_taught = False  # the last target was found exactly as demonstrated
        self._asked = False  # the step under way asked a person
        self._waited = 0  # ... and waited this many ms for the answer
        self._secret_fields: list[PwLocator] = []  # painted over in every picture
        self.scrubber = Scrubber()  # the secrets this replay typed: never in its results or errors
        self.params, self.secret = dict(params), lambda name: self.scrubber.remember(secret(name))
        self.start_url = start_url
        self.progress = progress or (lambda _msg: None)
        self.step_timeout = step_timeout
        self._step: int | None = None  # the step under way (named in a navigation's question)
        self._next: PlanStep | None = None  # the step after it (may leaving a field close what it needs?)
        self._acted_at = time.monotonic()  # when the last action began: the traffic a settle waits on
        self._filled = ""  # the last action filled a field: "typed", or "choice" (a select or check)
        self._desktop: Any = None  # the desktop's hands and eyes (teachd.runner.desktop), once needed
        self._found_in: Page | Frame | None = None  # where resolve found the last target
        self._found_css: str | None = None  # ... and a CSS selector naming it alone, when it has one
        self.traffic = Traffic()
        self.results: list[StepResult] = []
        self.notes: list[str] = []
        self.waited: dict[int, int] = {}  # step → times a settle after its typing waited
        self.verified = False  # set by the success check: something on the final page confirmed the effect
        self._desktop_seen: int | None = None  # the last desktop step whose effect showed in its window

    # -- finding the target ------------------------------------------------
    def _root(self, anchor: Anchor) -> Page | Frame | None:
        if not anchor.frame_url:
            return self.page
        pattern = url_pattern(anchor.frame_url)
        for frame in self.page.frames:
            if frame != self.page.main_frame and matches_pattern(frame.url, pattern):
                return frame
        return None

    def _candidates(self, root: Page | Frame, ladder: list[Locator],
                    known: list[Candidate] | None = None) -> tuple[list[Candidate], list[str], int | None]:
        """Every visible element any locator finds (besides ``known`` ones),
        with the evidence to judge it; and the page's mutation count before
        the first look."""
        by_identity: dict[int, Candidate] = {c.identity: c for c in known or []}
        ambiguous: list[str] = []
        mark: int | None = None
        cheap: set[int] = set()  # candidates whose handle is an attribute's locator
        asked: list[tuple[Locator, PwLocator]] = []
        for loc in ladder:
            try:
                asked.append((loc, _locator(root, loc)))
            except PlaywrightError:
                continue
        answers = evaluate_each([found for _loc, found in asked], _EVIDENCE)  # all in one round trip
        for (loc, found), answer in zip(asked, answers, strict=True):
            if isinstance(answer, PlaywrightError):
                continue  # a selector this page cannot parse, or a navigation under way
            label = via_label(loc)
            count, infos = answer
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
                if len(shown) == 1 and (cand.handle is None or (label in _CHEAP and ident not in cheap)):
                    # re-resolves if the page re-renders; by an attribute when one names it alone,
                    # a cheaper query than a role's for every action and look that follows
                    cand.handle = found.filter(visible=True)
                    cand.css = _css(loc)  # None for a role's or a text's
                    if label in _CHEAP:
                        cheap.add(ident)
                elif cand.handle is None and cand.where is None:
                    cand.where = (found, i)
        return list(by_identity.values()), ambiguous, mark

    def _look(self, root: Page | Frame,
              anchor: Anchor) -> tuple[list[Candidate], list[str], int | None, Choice]:
        """The ladder's candidates and the choice among them. The locators
        that name the element (test id, role, label, placeholder, id,
        attribute) are asked first; when exactly one element answers them
        and agrees exactly, nothing the rest could bring would beat it — a
        position (css, xpath) never breaks a tie and a loose name scores
        lower — so the rest are not asked (each is a round trip to the page)."""
        if (quick := self._by_identity(root, anchor)) is not None:
            return quick
        ladder = self._ladder(anchor)
        naming = [loc for loc in ladder if loc.by not in _POSITIONAL and loc.attr != "loose"]
        if naming and len(naming) < len(ladder):
            candidates, ambiguous, mark = self._candidates(root, naming)
            picked = choose(anchor.expect, candidates, ambiguous)
            if picked.candidate is not None and not ambiguous and len(candidates) == 1 \
                    and agrees(anchor.expect, picked.candidate.found, picked.candidate.via).score == EXACT:
                return candidates, ambiguous, mark, picked
            rest = [loc for loc in ladder if loc not in naming]
            more, also, later = self._candidates(root, rest, candidates)
            ambiguous += also
            candidates, mark = more, mark if mark is not None else later
        else:
            candidates, ambiguous, mark = self._candidates(root, ladder)
        return candidates, ambiguous, mark, choose(anchor.expect, candidates, ambiguous)

    def _by_identity(self, root: Page | Frame,
                     anchor: Anchor) -> tuple[list[Candidate], list[str], int | None, Choice] | None:
        """The anchor's stable identities (test id, id, name or value
        attribute) asked first, in one plain look at the document. When they
        all point to one visible element, each to it alone, and it agrees
        exactly, the whole ladder would choose it too: any other element it
        could bring agrees at best as well and without a stable identity,
        which ranks lower (``choose``). A link's address stands in for them
        when it names one visible element that agrees exactly and nothing
        else on the page bears its name: another element the ladder could
        bring would then be one it refuses (a link elsewhere, another name)
        or ranks lower (a name that gained words). Otherwise None: the
        ladder is asked."""
        strong = [(loc, css) for loc in anchor.locators
                  if via_label(loc) in STRONG and (css := _css(loc)) is not None]
        by_href = not strong and bool(anchor.expect.get("href"))
        if by_href:
            strong = [(loc, css) for loc in anchor.locators
                      if via_label(loc) == "attr:href" and (css := _css(loc)) is not None]
        if not strong:
            return None
        names = sorted({" ".join(words(n)) for n in names_of(anchor.expect)} - {""}) if by_href else []
        if by_href and not names:
            return None
        try:
            mark, answers = root.evaluate(_BY_CSS, [[css for _loc, css in strong], names])
        except PlaywrightError:
            return None
        picked: Candidate | None = None
        for (loc, css), infos in zip(strong, answers, strict=True):
            if infos is None:
                return None
            shown = [info for info in infos if info and info.get("visible")]
            if len(shown) > 1:
                return None
            if not shown:
                continue
            ident = int(shown[0]["ident"])
            if picked is None:
                picked = Candidate(ident, set(), shown[0], css=css,
                                   handle=root.locator(css).filter(visible=True))
            elif picked.identity != ident:
                return None
            picked.via.add(via_label(loc))
        if picked is None or agrees(anchor.expect, picked.found, picked.via).score != EXACT:
            return None
        if by_href and picked.found.get("others") != 0:
            return None
        return [picked], [], int(mark), Choice(picked, "found", tuple(sorted(picked.via)))

    @staticmethod
    def _ladder(anchor: Anchor) -> list[Locator]:
        """The anchor's locators, then looser twins of its name locators
        (a name that gained words: "Total amount", "🚕 Taxi Paris"): they only
        bring candidates; the evidence still decides."""
        loose = [Locator(loc.by, value=loc.value, role=loc.role, name=loc.name, attr="loose")
                 for loc in anchor.locators if loc.by in ("role", "label")]
        return [*anchor.locators, *loose]

    @staticmethod
    def _fallback(anchor: Anchor) -> list[Locator]:
        """Asked only when nothing the ladder found agrees (a quiet page pays
        nothing for them): a link that became a button (or back) under a name
        that gained words anywhere ("Add collection" → "Add new collection"),
        and every control drawing the demonstrated icon's symbol (it may have
        become a named button). Candidates still; the evidence decides."""
        out: list[Locator] = []
        role, name = anchor.expect.get("role"), anchor.expect.get("name")
        if role in ("link", "button") and words(name):
            other = "button" if role == "link" else "link"
            out.append(Locator("role", role=other, name=str(name), attr="words"))
        icon = anchor.expect.get("icon") or {}
        symbol = str(icon.get("symbol") or "") if isinstance(icon, dict) else ""
        if symbol:
            uses = ", ".join(f"use[{a}={json.dumps(symbol)}]" for a in ("href", "*|href"))
            clickable = ("button, a[href], summary, [role=button], [role=link], [role=menuitem], [role=tab], "
                         "[tabindex], [onclick], [aria-haspopup], [aria-expanded]")
            out.append(Locator("css", value=f":is({clickable}):has({uses})", attr="loose"))
        return out

    def _act_on(self, root: Page | Frame, cand: Candidate) -> PwLocator:
        if cand.handle is not None or cand.where is None:
            return cand.handle
        # Found only among several matches (told apart by its evidence): pin
        # that very element, so acting cannot slip to one of its look-alikes.
        found, i = cand.where
        found.nth(i).evaluate(
            f"(e, id) => e.setAttribute('data-{_MARK}', String(id))", cand.identity)
        cand.css = f"[data-{_MARK}='{cand.identity}']"
        return root.locator(cand.css)

    def resolve(self, n: int, anchor: Anchor) -> tuple[PwLocator, Choice]:
        """Exactly one agreeing element, waiting for the page to change while
        there is none, up to the step timeout. A repaired anchor's evidence
        versions are each asked; they must not disagree (see ``agreed``)."""
        started = time.monotonic()
        deadline = started + self.step_timeout
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
                    candidates, ambiguous, seen, picked = self._look(root, version)
                    mark = seen if mark is None else mark
                    late = time.monotonic() - started >= FALLBACK_AFTER  # a page still loading is not asked
                    if picked.candidate is None and late and (extra := self._fallback(version)):
                        candidates, more, seen = self._candidates(root, extra, candidates)
                        mark = seen if mark is None else mark
                        picked = choose(version.expect, candidates, ambiguous + more)
                    found.append((root, picked))
                choice, root = agreed(found)
                if choice.candidate is not None and root is not None:
                    self._found_in, self._found_css = root, choice.candidate.css
                    first = found[0][1].candidate  # the taught evidence's own pick, not a repair's
                    self._as_taught = first is not None and first.identity == choice.candidate.identity \
                        and as_taught(anchor.expect, first.found, first.via)
                    return self._act_on(root, choice.candidate), choice
                if remaining <= 0:
                    break
                if mark is None:  # nothing could be asked: the page is between documents
                    self.page.wait_for_load_state("domcontentloaded", timeout=remaining * 1000)
                    continue
                # until the page changes; while the fallback is not asked yet, not past its time
                wait = min(remaining, max(0.05, started + FALLBACK_AFTER - time.monotonic())) \
                    if time.monotonic() - started < FALLBACK_AFTER else remaining
                looks[0][0].wait_for_function(_CHANGED, arg=mark, timeout=wait * 1000)
            except PlaywrightTimeout:
                continue  # the deadline is checked at the top
            except PlaywrightError:
                self.page.wait_for_load_state("domcontentloaded")  # it navigated meanwhile
        raise Halt(plain(f"step {n}: {anchor.describe} — {choice.reason}; stopping rather than guessing"))

    # -- guards -------------------------------------------------------------
    def _line(self, step: PlanStep, target: str | None = None, value: str | None = None) -> PlanLine:
        """The step's plan line from what it is about to do (``target``,
        ``value``: what this replay worked out itself — the URL it opens, the
        keys it presses): the gate holds it against the line approved."""
        line = plan_step(step, self.proc, self.params, self.start_url)
        return replace(line, target=line.target if target is None else target,
                       value=line.value if value is None else value)

    def _guard(self, n: int, what: str, url: str, planned: bool = True, step: PlanStep | None = None,
               target: str | None = None, value: str | None = None) -> None:
        """``planned``: the step is acted on as the plan lists it (a ``run``
        answer may cover it); a drifted or repaired match is not. ``step``:
        the step about to act, so the gate compares what it will do with the
        plan approved (``target``, ``value``: as this replay worked them out)."""
        outside = None if in_scope(url, self.proc.scope) else self._outside_words(url)
        asked, began = len(self.gate.log), time.monotonic()
        note = "" if planned else ("found, but not exactly as demonstrated (the page changed since): "
                                   "asked again, outside any approval of the whole run")
        line = self._line(step, target, value) if step is not None else None
        act = Action("computer_act", what, url, n, planned=planned and not outside, note=note, shown=line)
        try:
            self.gate.guard(act, outside)
        finally:
            self._asked = any("reason" in e and e.get("decision") != "allowed by this run's approval"
                              for e in self.gate.log[asked:])
            if self._asked:
                self._waited += _ms(began)

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
        try:
            self.page.wait_for_url(lambda u: matches_pattern(u, pattern) and (not moved or u != before),
                                   wait_until="domcontentloaded", timeout=NAV_TIMEOUT * 1000)
        except PlaywrightTimeout:
            raise Halt(f"step {n}: expected the page {pattern}, but it is {self.page.url}") from None

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
        for i, step in enumerate(self.proc.steps):
            n, action = step.n, step.action
            if until is not None and n >= until:
                return
            if who := self.cancelled():
                raise Cancelled(f"cancelled by {who} before step {n}")
            self._next = self.proc.steps[i + 1] if i + 1 < len(self.proc.steps) else None
            self.progress(plain(f"step {n}: {action} {step.describe or step.url or ''}"))
            self._asked, self._waited = False, 0
            began = time.monotonic()
            self._tell(StepResult(n, action, "running", plain(step.describe or step.url or "")))
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
            self._end(StepResult(n, action, "ok", step.describe or "", via, **self._timing(began)))
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
        if watching and result.action not in ("os_click", "os_key") \
                and (after := thumbnail(self.page, self._secret_fields)) is not None:
            self.observer.picture(result.n, "after", after)  # type: ignore[union-attr]
        self._tell(result)

    def _before(self, step: PlanStep, target: PwLocator) -> None:
        """The target's crop as it is about to be acted on (a secret's field painted over)."""
        if step.secret:
            self._secret_fields.append(target)
        if self.observer is not None and self.observer.pictures:
            if (jpeg := crop(self.page, target, self._secret_fields)) is not None:
                self.observer.picture(step.n, "before", jpeg)

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
            self._guard(n, f"open {url}", url, step=step, target=url)
            guard_for(self.context).permit(url)  # asked just now (if outside): not asked twice
            self.page.goto(url, wait_until="domcontentloaded")
            return []
        if action in ("os_click", "os_key", "os_type"):
            return self._desktop_step(step)
        if action == "press" and not step.anchor:
            self._guard(n, f"press {step.key}", focused_location(self.page),  # the frame the keys go to
                        step=step, value=self._keys(step))
            self.page.keyboard.press(self._keys(step))
            return []
        anchor = self.proc.anchors.get(step.anchor or "")
        if anchor is None:
            raise Halt(f"step {n}: no anchor for its target")
        target, choice = self.resolve(n, anchor)
        # judged by the element's own frame: a cross-origin iframe on an in-scope page is not in scope
        self._guard(n, plain(f"{action} {step.describe or ''}".strip()), self._location(target),
                    planned=self._as_taught, step=step)
        self._before(step, target)
        found = choice.candidate.found if choice.candidate is not None else {}
        # A click right after a field was filled, or one that submits, waits
        # for the fields to have settled: after a choice the page may still be
        # answering, its mutations and requests; otherwise (typing settled the
        # page itself) the requests of the last few seconds (an autosave
        # leaving a field started) — no look at the page at all.
        if action in ("click", "dblclick") and (self._filled or submits(found)):
            since = min(self._acted_at, time.monotonic() - RECENT)
            saved = self._await_saves()
            if self._filled == "choice":
                self.settle(lambda: self.page.evaluate("() => { const e = document.documentElement;"
                                                        + _CLOCK + " return quiet(); }"), since)
            else:  # after a save, until what its answer started is quiet too
                self.settle(lambda: 1e9, since, answered=not saved)
        self._acted_at = time.monotonic()
        self._filled = "choice" if action in ("select", "check") else "typed" if action == "type" else ""
        self._act(step, target, anchor, found)
        return list(choice.via)

    def _desktop_step(self, step: PlanStep) -> list[str]:
        """A step outside the browser (teachd.runner.desktop): its widget
        found by accessibility, exactly one, in an app the skill was taught
        on, under the same gate as a page; otherwise a halt naming it."""
        from compiler.desktop import title_pattern
        from teachd.runner.desktop import DesktopHalt, keys_of, outside_apps

        n = step.n
        anchor = self.proc.desktop.get(step.desktop or "")
        if anchor is None and step.action != "os_key":
            raise Halt(f"step {n}: a desktop step outside the browser; a person must do it")
        actor = self._desktop_actor(n)
        app = ((anchor or {}).get("window") or {}).get("class") or ""
        where = f"the desktop ({app or step.window or 'a window'})"
        outside = outside_apps(app, self.proc.apps)
        try:
            if step.action == "os_key":
                keys = keys_of(step.key, step.modifiers)
                self.gate.guard(Action("computer_act", plain(f"press {keys} in {step.window or 'a window'}"),
                                       where, n, planned=True, shown=self._line(step)), outside)
                actor.key(keys, title_pattern(step.window) if step.window else None)
                via = ["keys"]
            elif anchor is not None and "widget" not in anchor and "picture" in anchor \
                    and step.action == "os_click":
                # an app that names nothing to accessibility: its picture, unique or a halt
                hit = actor.find_picture(anchor, self.step_timeout)
                self.gate.guard(Action("computer_act", plain(f"click {step.describe or 'a place'}"), where, n,
                                       planned=True, shown=self._line(step)), outside)
                via = ["picture", actor.click_picture(anchor, hit)]
            else:
                assert anchor is not None
                verb = "click" if step.action == "os_click" else "type into"
                widget = actor.find(anchor, self.step_timeout)
                what = plain(f"{verb} {step.describe or 'a widget'}")
                self.gate.guard(Action("computer_act", what, where, n, planned=True, shown=self._line(step)),
                                outside)
                if step.action == "os_click":
                    via = ["accessibility", actor.click(widget, (anchor.get("at") or {}).get("in"))]
                else:
                    actor.type(widget, self._value(step), secret=bool(step.secret))
                    via = ["accessibility", "typed"]
            if want := (step.expect or {}).get("window"):
                # what the step did, as the demonstration showed it: its app's window title
                shown = actor.shows_window(want, list(self._shown_values(want.get("shows") or []).values()),
                                           min(self.step_timeout, DESKTOP_EFFECT_TIMEOUT))
                self._desktop_seen = n
                via.append(f"window {self.scrubber.scrub(shown)!r}")  # a title may hold what was typed
        except DesktopHalt as exc:
            raise Halt(plain(f"step {n}: {exc}")) from None
        return via

    def _desktop_actor(self, n: int) -> Any:
        if self._desktop is None:
            from recorder.a11y import NoAccessibility, open_desktop
            from teachd.runner.desktop import DesktopActor

            try:
                self._desktop = DesktopActor(open_desktop())
            except NoAccessibility as exc:
                raise Halt(f"step {n}: a desktop step, and {exc}") from None
        return self._desktop

    def _look_at(self, target: PwLocator, js: str, arg: Any = None, timeout: float | None = None) -> Any:
        """``js`` evaluated on the last target found, the cheapest way it can be (teachd.runner.looks)."""
        root, css = self._found_in, self._found_css
        return look(target, js, arg, timeout, (root, css) if root is not None and css is not None else None)

    def _location(self, target: PwLocator) -> str:
        """The URL the target's frame is judged by. A locator made on the page
        never looks into a frame, so an element found there is in the top
        document, whose http(s) address the page already knows (no round
        trip); a frame's, or an about:/data: document's, is asked of it."""
        if self._found_in is self.page and self.page.url.lower().startswith(("http:", "https:")):
            return self.page.url
        return element_location(target)

    @staticmethod
    def _keys(step: PlanStep) -> str:
        return "+".join([*step.modifiers, step.key or "Enter"])

    def _act(self, step: PlanStep, target: PwLocator, anchor: Anchor, found: Mapping[str, Any]) -> None:
        n, action, what = step.n, step.action, plain(step.describe or "the target")
        timeout = self.step_timeout * 1000
        act = max(timeout, ACT_MIN_MS)
        expect_ = step.expect or {}
        new_tab = expect_.get("tab") is not None and expect_.get("tab") != step.tab
        try:
            if action in ("click", "dblclick") and new_tab:
                with self.context.expect_page(timeout=NAV_TIMEOUT * 1000) as info:
                    target.click(timeout=act)
                self.page = info.value
                self.page.wait_for_load_state("domcontentloaded")
            elif action == "click":
                target.click(timeout=act)
            elif action == "dblclick":
                target.dblclick(timeout=act)
            elif action == "type":
                editable = anchor.expect.get("tag") in ("input", "textarea")
                if step.secret:  # masked in an agent's screenshots, scrubbed from its snapshots
                    self._look_at(target, "(e, mark) => e.setAttribute(mark, '')", MARK)
                value = self._value(step)
                # a field that will be left is checked in the look that leaves it (one round trip)
                checked = editable and self._may_leave(step, found)
                type_like_a_person(target, value, editable, timeout, empty=found.get("empty"),
                                   verify=not checked)
                self._land(step, target, value, found, checked)
            elif action == "select":
                self._select(step, target, act)
            elif action == "check":
                want = bool(step.checked if step.checked is not None else True)
                target.set_checked(want, timeout=act)
                (expect(target).to_be_checked if want else expect(target).not_to_be_checked)(timeout=2000)
            elif action == "press":
                target.press(self._keys(step), timeout=act)
            else:
                raise Halt(f"step {n}: unknown action {action!r}")
        except AssertionError:
            raise Halt(f"step {n}: {what} does not show the effect it should "
                       f"(value or state differs after the {action})") from None

    # -- typing that lands -------------------------------------------------
    def settle(self, probe: Callable[[], float | None], since: float, answered: bool = False,
               documents: bool = True) -> int:
        """Until the page has been quiet for ``QUIET_MS`` (``probe``: ms since
        its document last changed, or None to be asked again at once — it
        just acted, and the request that may have started is heard of by the
        next look; requests started since ``since`` under way or just ended
        count as change; with ``answered``, only while under way; without
        ``documents``, fetch and XHR only), at most
        ``SETTLE_MAX``. A quiet page costs a look, no wait; a page that
        navigated meanwhile is not waited on here. Returns how many times it
        waited (0: the page was quiet)."""
        deadline = time.monotonic() + SETTLE_MAX
        waits = 0
        while True:
            try:
                dom = probe()
            except PlaywrightError:
                return waits  # the document went away (a navigation): the next step waits on the new one
            if dom is None:
                continue
            if answered:
                net = 0.0 if self.traffic.under_way(since, documents) else 1e9
            else:
                net = self.traffic.quiet_ms(since, documents)
            if dom >= (time.monotonic() - since) * 1000:
                dom = 1e9  # unchanged since the step acted: what it last did answered an earlier step
            quiet = min(float(dom), net)
            if quiet >= QUIET_MS:
                return waits
            # a request under way is heard of as it ends (its event), looked at soon after
            wait = QUIET_MS - quiet if quiet > 0 else 50.0
            if time.monotonic() + wait / 1000 > deadline:
                return waits
            waits += 1
            self.page.wait_for_timeout(max(wait, 10.0))  # requests' events are heard meanwhile

    def _await_saves(self) -> bool:
        """Before a submit, until no save of the page's own is under way (at
        most ``SAVE_MAX``): True when it waited."""
        deadline = time.monotonic() + SAVE_MAX
        waited = False
        while self.traffic.saving() and time.monotonic() < deadline:
            waited = True
            self.page.wait_for_timeout(50)  # the request's end is heard meanwhile
        return waited

    def _may_leave(self, step: PlanStep, field_is: Mapping[str, Any]) -> bool:
        """Leaving the field (blur) is what a person does next, unless the
        next step needs it focused (keys sent to it) or picks from what it
        opened (an option of its list): leaving would close that."""
        nxt = self._next
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

    def _land(self, step: PlanStep, target: PwLocator, value: str, field_is: Mapping[str, Any],
              check: bool = False) -> None:
        """After typing: settle, leave the field, settle; an editor's text must
        reach the form field the app submits (when it has one). ``check``:
        the field must hold ``value`` before it is left (the typing's own
        check, made by the first look)."""
        since = self._acted_at
        if not self._may_leave(step, field_is) and not field_is.get("rich"):
            # The next step picks from what the typing opened (or sends it keys):
            # it waits for its own target as the page draws it; only requests
            # the typing started are waited on here, and the field is kept.
            self.waited[step.n] = self.settle(lambda: 1e9, since, documents=False)
            return
        if self._may_leave(step, field_is):
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
                    quiet, left[0], holds = self._look_at(target, _LEAVE, [enough, was, want[0]], LOOK_MS)
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

            self.waited[step.n] = self.settle(look_and_leave, since, documents=False)
        else:
            self.waited[step.n] = self.settle(lambda: self._look_at(target, _QUIET, None, LOOK_MS), since,
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

    def _select(self, step: PlanStep, target: PwLocator, timeout: float) -> None:
        """By value; when no option has it any more, by the label that was
        chosen (values are often database ids that differ between installs),
        only for the demonstrated choice, and only when exactly one label fits."""
        value = self._value(step)
        listed = self._look_at(target, "s => Array.from(s.options).map(o => [o.value, o.label])")
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
        alone does not tell the end from the page the last step acted on; and
        it must show this run's values where the demonstration's showed them.
        ``verified`` says whether any of that could tell the effect happened."""
        success = self.proc.success
        pattern = success.get("url_pattern")
        last_page = next((s.page for s in reversed(self.proc.steps) if s.page), "")
        if pattern:
            try:
                expect(self.page).to_have_url(pattern_regex(pattern), timeout=NAV_TIMEOUT * 1000)
            except AssertionError:
                raise Halt(f"success check: the final page is {self.page.url}, expected {pattern}") from None
        shown = self._check_shows(success.get("shows") or [])
        title = success.get("title")
        self.verified = bool(shown or title or (pattern and url_pattern(last_page or "") != pattern)
                             or self._desktop_seen == self.proc.steps[-1].n)  # a desktop save, in its title
        if not title:
            return
        decisive = not pattern or url_pattern(last_page or "") == pattern
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
        showed must show on this one (waiting for the page to render them, up
        to ``SHOWS_TIMEOUT``: its address is already the final one); a
        missing one means the effect is missing. Returns the values checked."""
        wanted = {name: " ".join(v.split()).lower() for name, v in self._shown_values(shows).items()}
        needles = [v for v in wanted.values() if v]
        if not needles:
            return []
        try:
            if self.page.evaluate(_SHOWS, needles):  # a look now; a tab in the background gets no frames
                self.page.wait_for_function(f"n => ({_SHOWS})(n).length === 0", arg=needles,
                                            polling=100, timeout=SHOWS_TIMEOUT * 1000)
        except PlaywrightTimeout:
            missing = set(self.page.evaluate(_SHOWS, needles))
            gone = [f"{{{{{name}}}}}" for name, v in wanted.items() if v in missing]
            raise Halt(f"success check: the final page does not show this run's {', '.join(gone)}: "
                       "the effect the demonstration ended on is missing") from None
        return needles
