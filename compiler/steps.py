"""Raw events → steps a person would name: one "type" per field with its final
value, double-clicks folded, focus clicks before typing dropped, navigations
attached to the action that caused them, ``goto`` only for the start and for
typed-URL navigations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compiler.recording import Recording

DOUBLE_CLICK_MS = 500
REDIRECT_MS = 1500  # page events this close to the last one are its redirects (when the browser cannot tell)
# Keys worth a step of their own; Tab only moves focus, which locators make moot.
# (The recorder leaves out editing keys in a field that holds text: the typed
# value covers them.)
STEP_KEYS = frozenset({"Enter", "Escape", "ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight", "Space",
                       " ", "Delete", "Backspace", "Home", "End", "PageUp", "PageDown"})
SHORTCUT_MODIFIERS = frozenset({"Control", "Meta", "Alt"})
EDIT_KEYS = frozenset({"Backspace", "Delete", "ArrowLeft", "ArrowRight", "Home", "End"})
_ACTIONS = frozenset({"click", "input", "key", "os_click", "os_key", "os_input"})
DESKTOP_ACTIONS = frozenset({"os_click", "os_key", "os_type"})


@dataclass
class Step:
    action: str  # goto | click | dblclick | type | select | check | press | os_click | os_key | os_type
    url: str
    t: int
    target: dict[str, Any] | None = None
    value: str | None = None
    masked: bool = False
    checked: bool | None = None
    key: str | None = None
    modifiers: tuple[str, ...] = ()
    tab: int = 0
    frame: str | None = None
    frame_fp: dict[str, Any] | None = None
    window: str | None = None
    expect_url: str | None = None
    expect_title: str | None = None
    expect_tab: int | None = None
    title: str | None = None  # the page's title when the step happens
    doc: int = 0  # which document (navigation) of the recording the step acted in
    extra: dict[str, Any] = field(default_factory=dict)
    seqs: set[int] = field(default_factory=set)  # the events folded into this step
    name: str | None = None  # the person's own name for it, given at the review
    fixed: bool = False  # its value stays as demonstrated on every run (the review said so)


def _norm(value: Any) -> str:
    return " ".join(str(value or "").split()).lower()


def target_key(target: dict[str, Any] | None) -> tuple[str, ...] | None:
    """Identity of an element within one document: its frame, its path *and*
    its evidence (role, name, container). A path alone is not an identity:
    two different options can each be the first of a filtered list."""
    if not target:
        return None
    path = target.get("xpath") or target.get("css") or target.get("id") or ""
    box = target.get("container") or {}
    return (str(target.get("frame_url") or ""), str(path), _norm(target.get("role")),
            _norm(target.get("name")), _norm(box.get("role")), _norm(box.get("name")),
            str(box.get("id") or ""))


def is_step_key(key: str, modifiers: tuple[str, ...]) -> bool:
    return key in STEP_KEYS or bool(SHORTCUT_MODIFIERS & set(modifiers))


def editable_target(target: dict[str, Any]) -> dict[str, Any]:
    """A field typed into that is no form field is a rich-text editor: what it
    held (its text) is what the person typed, never what it is called. Older
    recordings described it after the typing, so its text goes here too."""
    return {**target, "editable": True, "text": None}


def _input_step(event: dict[str, Any], url: str, tab: int, title: str | None, doc: int) -> Step:
    target = event.get("target") or {}
    tag = str(target.get("tag", "")).lower()
    if target and tag not in ("input", "textarea", "select") and "checked" not in event:
        target = editable_target(target)
    itype = str((target.get("attrs") or {}).get("type", "")).lower()
    if "checked" in event or itype in ("checkbox", "radio"):
        action = "check"
    elif tag == "select":
        action = "select"
    else:
        action = "type"
    option = event.get("option_text") if action == "select" else None
    return Step(
        action=action,
        url=url,
        doc=doc,
        extra={"option": str(option)} if option else {},
        t=int(event["t"]),
        target=target,
        value=None if event.get("masked") else str(event.get("value", "")),
        masked=bool(event.get("masked")),
        checked=event.get("checked") if "checked" in event else None,
        tab=tab,
        title=title,
    )


def to_steps(rec: Recording) -> list[Step]:
    tab = int(rec.events[0].get("tab") or 0)  # a repair may begin in a tab its lead-in opened
    steps: list[Step] = [Step(action="goto", url=rec.start_url, t=0, tab=tab)]
    url, title, doc = rec.start_url, None, 0
    cause: Step | None = steps[0]  # the step the next navigation belongs to
    last_page_t = 0
    undone: set[int] = set()
    reviewed: dict[str, Any] = {}
    for e in rec.events:
        kind = e["type"]
        if kind == "review":  # what the person changed before saving: applied once the steps are known
            reviewed = e
            continue
        if kind == "undo":
            if isinstance(e.get("undoes"), int):
                undone.add(int(e["undoes"]))
            continue
        if kind == "pause":
            cause = None  # whatever the person does while paused is not a step's doing
            continue
        if kind == "page":
            # Every committed navigation, reload or client-side route change is
            # a new document: an element seen before it is not the same element.
            doc += 1
            new_url, new_tab = str(e.get("url", "")), int(e.get("tab", 0) or 0)
            new_title, t = e.get("title"), int(e["t"])
            # A navigation the page made itself (a history entry replaced or
            # pushed by script: the browser says so, ``by: page``) belongs to
            # the step before it however late it lands — never the person
            # typing an address; without the browser's word, one soon after
            # the last is its redirect.
            redirect = cause is not None and cause.expect_url is not None and (
                e.get("by") == "page" or t - last_page_t <= REDIRECT_MS
            )
            if cause is not None and (cause.expect_url is None or redirect):
                cause.expect_url, cause.expect_title = new_url, new_title
                if new_tab != tab:
                    cause.expect_tab = new_tab
            else:  # nobody acted: the person typed a URL
                cause = Step(action="goto", url=new_url, t=t, tab=new_tab, doc=doc,
                             expect_url=new_url, expect_title=new_title)
                steps.append(cause)
            url, tab, title, last_page_t = new_url, new_tab, new_title, t
            continue
        if kind == "os_window":  # its app's focused window after a desktop step: what it did there
            last = steps[-1]
            if last.action in DESKTOP_ACTIONS and e.get("window_class") == last.extra.get("window_class"):
                seen = {"window": e.get("window"), "class": e.get("window_class")}
                last.extra.setdefault("after", []).append(seen)
            continue
        if kind in _ACTIONS and _apply_action(steps, e, url, tab, title, doc):
            cause = steps[-1]
            cause.seqs.add(int(e["seq"]))
    steps = _without_undone(steps, undone) if undone else steps
    return _as_reviewed(_editors_known_everywhere(steps), reviewed)


def review_seqs(values: Any) -> set[int]:
    """The steps a review event names, by the seq of an event folded into
    each (JSON keys are text: "12"); anything else is not a step."""
    items = values.keys() if isinstance(values, dict) else values if isinstance(values, list) else []
    return {int(v) for v in items if isinstance(v, int | str) and str(v).lstrip("-").isdigit()}


def _as_reviewed(steps: list[Step], reviewed: dict[str, Any]) -> list[Step]:
    """The person's names and fixed values (a ``review`` event) on the steps they name."""
    names: dict[Any, Any] = reviewed["names"] if isinstance(reviewed.get("names"), dict) else {}
    named = {n: str(names.get(str(n), names.get(n))) for n in review_seqs(names)}
    fixed = review_seqs(reviewed.get("fixed"))
    for step in steps:
        given = [named[s] for s in sorted(step.seqs) if s in named]
        step.name = " ".join(given[0].split())[:80] or None if given else None
        step.fixed = bool(step.seqs & fixed)
    return steps


def review_checks(rec: Recording) -> list[str]:
    """The texts the person asked the final page to show (a ``review`` event's ``checks``)."""
    reviewed: dict[str, Any] = next((e for e in reversed(rec.events) if e["type"] == "review"), {})
    checks: list[Any] = reviewed["checks"] if isinstance(reviewed.get("checks"), list) else []
    return [t for t in (" ".join(str(c).split())[:200] for c in checks) if t]


def _editors_known_everywhere(steps: list[Step]) -> list[Step]:
    """Every step on an element typed into as a rich-text editor sees it as
    one: a click on it before (or after) the typing never names it by what it held."""
    editors = {(s.tab, s.doc, target_key(s.target)) for s in steps
               if s.action == "type" and s.target and s.target.get("editable")}
    for step in steps:
        if step.target and not step.target.get("editable") and (
                step.tab, step.doc, target_key(step.target)) in editors:
            step.target = editable_target(step.target)
    return steps


def _without_undone(steps: list[Step], undone: set[int]) -> list[Step]:
    """The steps the person took back, gone. Where one had led to another
    page, the replay still has to get there: it becomes a plain ``goto``."""
    out: list[Step] = []
    for step in steps:
        if not step.seqs & undone:
            out.append(step)
        elif step.expect_url is not None:
            out.append(Step(action="goto", url=step.expect_url, t=step.t, tab=step.expect_tab or step.tab,
                            doc=step.doc, expect_url=step.expect_url, expect_title=step.expect_title))
    return out


def same_element(a: Step, b: Step) -> bool:
    """Demonstrably the same element: same tab, same document, same identity."""
    key = target_key(a.target)
    return key is not None and (a.tab, a.doc) == (b.tab, b.doc) and key == target_key(b.target)


def _edits(last: Step, typed: Step) -> bool:
    """A key that only edited the field the person then typed into."""
    return (last.action == "press" and typed.action == "type" and same_element(last, typed)
            and (last.key in EDIT_KEYS or bool(SHORTCUT_MODIFIERS & set(last.modifiers))))


def _chose_option(last: Step, select: dict[str, Any] | None) -> bool:
    """A click on an option of a list box already made the change that the
    list's change event reports."""
    if last.action != "click" or not last.target or not select:
        return False
    if str(last.target.get("tag", "")).lower() != "option":
        return False
    box = last.target.get("container") or {}
    return bool(box.get("css")) and box.get("css") == select.get("css")


def _apply_action(
    steps: list[Step], e: dict[str, Any], url: str, tab: int, title: str | None, doc: int
) -> bool:
    """Fold one action event into the steps; False when it is not a step at all."""
    kind, last = e["type"], steps[-1]
    if kind == "click":
        step = Step(action="click", url=url, t=int(e["t"]), target=e.get("target"), tab=tab, doc=doc,
                    frame=e.get("frame"), frame_fp=e.get("frame_fp"), title=title,
                    extra={"button": e.get("button", "left")})
        if last.action == "click" and same_element(last, step) and step.t - last.t <= DOUBLE_CLICK_MS:
            last.action = "dblclick"
            return True
        steps.append(step)
        return True
    if kind == "input":
        step = _input_step(e, url, tab, title, doc)
        if _chose_option(last, step.target):
            return False
        while _edits(last, step):  # the value, typed again after a clear, covers these keys
            steps.pop()
            last = steps[-1]
        same = same_element(step, last)
        if same and last.action in ("type", "select") and step.action == last.action:
            last.value, last.masked, last.t = step.value, step.masked or last.masked, step.t
            last.extra.update(step.extra)
        elif same and last.action == "click" and step.action in ("type", "select"):
            step.frame, step.frame_fp, step.seqs = last.frame, last.frame_fp, set(last.seqs)
            steps[-1] = step  # the click only focused the field
        elif same and last.action == "click" and step.action == "check":
            last.action, last.checked = "check", step.checked
        else:
            steps.append(step)
        return True
    if kind == "key":
        key, modifiers = str(e.get("key", "")), tuple(e.get("modifiers") or ())
        if not is_step_key(key, modifiers):
            return False
        steps.append(Step(action="press", url=url, t=int(e["t"]), target=e.get("target"), key=key,
                          modifiers=modifiers, tab=tab, doc=doc, title=title))
        return True
    # desktop events outside the browser: a widget's typed text (os_input) is typing
    action = "os_type" if kind == "os_input" else kind
    step = Step(action=action, url=url, t=int(e["t"]), tab=tab, doc=doc, window=e.get("window"),
                frame=e.get("frame"), key=e.get("key"), target=e.get("target"), value=e.get("value"),
                masked=bool(e.get("masked")), modifiers=tuple(e.get("modifiers") or ()),
                extra={k: e[k] for k in ("x", "y", "button", "window_class") if e.get(k) is not None})
    if action == "os_type" and last.action == "os_type" and last.target == step.target:
        last.value, last.masked, last.t = step.value, step.masked or last.masked, step.t
        return True  # the same widget's text, read again: the latest is its final text
    steps.append(step)
    return True
