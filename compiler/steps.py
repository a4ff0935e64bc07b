"""Raw events → steps a person would name: one "type" per field with its final
value, double-clicks folded, focus clicks before typing dropped, navigations
attached to the action that caused them, ``goto`` only for the start and for
typed-URL navigations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compiler.recording import Recording

DOUBLE_CLICK_MS = 500
REDIRECT_MS = 1500  # page events this close to the last one are its redirects
# Keys worth a step of their own; Tab only moves focus, which locators make moot.
STEP_KEYS = frozenset({"Enter", "Escape", "ArrowDown", "ArrowUp", "Space", " ", "Delete"})
_ACTIONS = frozenset({"click", "input", "key", "os_click", "os_key"})


@dataclass
class Step:
    action: str  # goto | click | dblclick | type | select | check | press | os_click | os_key
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
    extra: dict[str, Any] = field(default_factory=dict)


def target_key(target: dict[str, Any] | None) -> tuple[str, str] | None:
    """Identity of an element within a recording: its frame and path."""
    if not target:
        return None
    path = target.get("xpath") or target.get("css") or target.get("id") or ""
    return (str(target.get("frame_url") or ""), str(path))


def _input_step(event: dict[str, Any], url: str, tab: int, title: str | None) -> Step:
    target = event.get("target") or {}
    tag = str(target.get("tag", "")).lower()
    itype = str((target.get("attrs") or {}).get("type", "")).lower()
    if "checked" in event or itype in ("checkbox", "radio"):
        action = "check"
    elif tag == "select":
        action = "select"
    else:
        action = "type"
    return Step(
        action=action,
        url=url,
        t=int(event["t"]),
        target=target,
        value=None if event.get("masked") else str(event.get("value", "")),
        masked=bool(event.get("masked")),
        checked=event.get("checked") if "checked" in event else None,
        tab=tab,
        title=title,
    )


def to_steps(rec: Recording) -> list[Step]:
    steps: list[Step] = [Step(action="goto", url=rec.start_url, t=0)]
    url, tab, title = rec.start_url, 0, None
    cause: Step | None = steps[0]  # the step the next navigation belongs to
    last_page_t = 0
    for e in rec.events:
        kind = e["type"]
        if kind == "page":
            new_url, new_tab = str(e.get("url", "")), int(e.get("tab", 0) or 0)
            new_title, t = e.get("title"), int(e["t"])
            redirect = cause is not None and cause.expect_url is not None and (
                t - last_page_t <= REDIRECT_MS
            )
            if cause is not None and (cause.expect_url is None or redirect):
                cause.expect_url, cause.expect_title = new_url, new_title
                if new_tab != tab:
                    cause.expect_tab = new_tab
            else:  # nobody acted: the person typed a URL
                cause = Step(action="goto", url=new_url, t=t, tab=new_tab,
                             expect_url=new_url, expect_title=new_title)
                steps.append(cause)
            url, tab, title, last_page_t = new_url, new_tab, new_title, t
            continue
        if kind in _ACTIONS and _apply_action(steps, e, url, tab, title):
            cause = steps[-1]
    return steps


def _apply_action(
    steps: list[Step], e: dict[str, Any], url: str, tab: int, title: str | None
) -> bool:
    """Fold one action event into the steps; False when it is not a step at all."""
    kind, last = e["type"], steps[-1]
    if kind == "click":
        target = e.get("target")
        same = target_key(target) is not None and target_key(target) == target_key(last.target)
        if last.action == "click" and same and int(e["t"]) - last.t <= DOUBLE_CLICK_MS:
            last.action = "dblclick"
            return True
        steps.append(Step(action="click", url=url, t=int(e["t"]), target=target, tab=tab,
                          frame=e.get("frame"), frame_fp=e.get("frame_fp"), title=title,
                          extra={"button": e.get("button", "left")}))
        return True
    if kind == "input":
        step = _input_step(e, url, tab, title)
        same = target_key(step.target) == target_key(last.target)
        if same and last.action in ("type", "select") and step.action == last.action:
            last.value, last.masked, last.t = step.value, step.masked or last.masked, step.t
        elif same and last.action == "click" and step.action in ("type", "select"):
            step.frame, step.frame_fp = last.frame, last.frame_fp
            steps[-1] = step  # the click only focused the field
        elif same and last.action == "click" and step.action == "check":
            last.action, last.checked = "check", step.checked
        else:
            steps.append(step)
        return True
    if kind == "key":
        key = str(e.get("key", ""))
        if key not in STEP_KEYS:
            return False
        steps.append(Step(action="press", url=url, t=int(e["t"]), target=e.get("target"),
                          key=key, modifiers=tuple(e.get("modifiers") or ()), tab=tab, title=title))
        return True
    # desktop events outside the browser
    steps.append(Step(action=kind, url=url, t=int(e["t"]), tab=tab, window=e.get("window"),
                      frame=e.get("frame"), key=e.get("key"),
                      extra={k: e[k] for k in ("x", "y", "button") if e.get(k) is not None}))
    return True
