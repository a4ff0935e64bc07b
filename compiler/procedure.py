"""Steps → the procedure a replay follows and a person reads: anchors,
parameters and secrets decided, every string masked, as the typed plan of
``compiler.plan`` plus what only the SKILL.md text needs."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compiler.anchors import build_anchor, mark_shared_locators
from compiler.desktop import TITLE_SEPARATORS, app_name, desktop_anchor, desktop_key, title_pattern
from compiler.names import describe, param_name
from compiler.plan import Anchor, PlanStep, Procedure
from compiler.recording import Recording
from compiler.scope import scope_of, url_pattern
from compiler.secrets import field_hint, looks_secret, mask_text, mask_url
from compiler.steps import DESKTOP_ACTIONS, Step, target_key, to_steps


@dataclass
class Built:
    """The plan, and the facts the SKILL.md text tells besides it."""

    plan: Procedure
    first_title: str | None
    last_title: str | None
    masked_elsewhere: int = 0  # secrets masked in URLs and titles
    signed_in: bool = False

    @property
    def steps(self) -> list[dict[str, Any]]:
        return [s.to_dict() for s in self.plan.steps]


def build_procedure(rec: Recording) -> Built:
    raw = to_steps(rec)
    masked = 0

    def url(u: str | None) -> str | None:
        nonlocal masked
        if u is None:
            return None
        out, n = mask_url(u)
        masked += n
        return out

    def _title(value: Any) -> str | None:
        nonlocal masked
        if not value or not str(value).strip():
            return None
        out, n = mask_text(" ".join(str(value).split()))
        masked += n
        return out[:120]

    anchors: dict[str, Anchor] = {}
    anchor_ids: dict[tuple[Any, ...], str] = {}
    params: dict[str, dict[str, Any]] = {}
    secrets: dict[str, dict[str, Any]] = {}
    taken_params: set[str] = set()
    taken_secrets: set[str] = set()
    viewport = rec.viewport or rec.screen or {}  # the page's own viewport when it was recorded
    steps: list[PlanStep] = []

    desktop: dict[str, dict[str, Any]] = {}
    desktop_ids: dict[tuple[Any, ...], str] = {}
    apps: list[str] = []

    def desktop_for(step: Step) -> str | None:
        """A desktop step's anchor: one per named widget (a click that focused
        a field and its typing share it), one per step where nothing is named."""
        window_class = step.extra.get("window_class")
        if window_class and window_class not in apps:
            apps.append(window_class)
        if step.target is None and step.frame is None:
            return None  # recorded before desktop anchors: a person does it
        key = desktop_key(step.target, window_class) or ("step", len(desktop_ids))
        if key not in desktop_ids:
            did = f"d{len(desktop_ids) + 1}"
            desktop_ids[key] = did
            crop = rec.frames.get(step.frame) if step.frame else None
            at = step.extra if step.action == "os_click" else None
            desktop[did] = desktop_anchor(step.target, step.window, window_class, at, crop)
        return desktop_ids[key]

    def anchor_for(step: Step) -> str | None:
        """One anchor per action's target; two steps share one only when they
        act on demonstrably the same element of the same document."""
        if step.action.startswith("os_"):
            return None  # a desktop widget: desktop_for
        ident = target_key(step.target)
        if ident is None or step.target is None:
            return None
        key = (step.tab, step.doc, *ident)
        if key not in anchor_ids:
            aid = f"a{len(anchor_ids) + 1}"
            anchor_ids[key] = aid
            frame = rec.frames.get(step.frame) if step.frame else None
            anchors[aid] = build_anchor(step.target, url(step.url) or "", frame, viewport,
                                        step.frame_fp)
        return anchor_ids[key]

    for n, step in enumerate(raw, 1):
        out = PlanStep(n=n, action=step.action, page=url(step.url), tab=step.tab)
        aid = anchor_for(step)
        if aid:
            out.anchor, out.describe = aid, describe(step.target)
        if step.action in ("type", "select"):
            secret = step.masked or field_hint(step.target) or looks_secret(step.value or "")
            if secret:
                name = param_name(step.target, taken_secrets)
                secrets[name] = {"anchor": aid, "step": n, "describe": describe(step.target)}
                out.secret = name
            else:
                name = param_name(step.target, taken_params)
                params[name] = {"default": step.value or "", "anchor": aid, "step": n,
                                "describe": describe(step.target)}
                out.param = name
                if step.action == "select" and step.extra.get("option"):
                    out.option = mask_text(str(step.extra["option"]))[0]
        elif step.action == "check":
            out.checked = bool(step.checked) if step.checked is not None else True
        elif step.action in ("press", "os_key"):
            out.key, out.modifiers = step.key, list(step.modifiers)
        elif step.action == "goto":
            out.url = url(step.url)
        if step.action in ("os_click", "os_key", "os_type"):
            out.window = _title(step.window)
            if step.action == "os_click":
                out.x, out.y, out.button = (step.extra.get(k) for k in ("x", "y", "button"))
            if (did := desktop_for(step)) is not None and step.action != "os_key":
                out.desktop, out.describe = did, desktop[did]["describe"]
        if step.action == "os_type":
            widget = {"name": (step.target or {}).get("name") or f"{desktop_place(step)} text"}
            secret = (step.masked or (step.target or {}).get("role") == "password text"
                      or looks_secret(step.value or ""))
            if secret:
                name = param_name(widget, taken_secrets)
                secrets[name] = {"desktop": out.desktop, "step": n, "describe": out.describe}
                out.secret = name
            else:
                name = param_name(widget, taken_params)
                params[name] = {"default": step.value or "", "desktop": out.desktop, "step": n,
                                "describe": out.describe}
                out.param = name
        if step.action in DESKTOP_ACTIONS and (after := desktop_after(step, out.window, _title, params)):
            out.expect = {"window": after}
        if step.expect_url is not None:
            shown = url(step.expect_url) or ""
            out.expect = {"url": shown, "url_pattern": url_pattern(shown),
                          "title": _title(step.expect_title)}
            if step.expect_tab is not None:
                out.expect["tab"] = step.expect_tab
        steps.append(out)

    mark_shared_locators(anchors)
    pages = [s for s in raw if s.expect_url]
    last = pages[-1] if pages else raw[0]
    visited = [rec.start_url] + [e.get("url", "") for e in rec.events if e["type"] in ("page", "click")]
    first_title = _title(raw[0].expect_title)
    success_url = url(last.expect_url or last.url) or ""
    success: dict[str, Any] = {"url": success_url, "url_pattern": url_pattern(success_url),
                               "title": _title(last.expect_title)}
    shows = shown_parameters(final_page_text(rec), params)
    if shows:  # only then: a recording without the final text compiles to the bytes it always did
        success["shows"] = shows
    plan = Procedure(
        start_url=url(rec.start_url) or "",
        steps=steps,
        anchors=anchors,
        parameters=params,
        secrets=secrets,
        scope=scope_of(visited),
        success=success,
        desktop=desktop,
        apps=apps,
    )
    return Built(
        plan=plan,
        first_title=first_title,
        last_title=_title(last.expect_title),
        masked_elsewhere=masked,
        signed_in=any(_is_password(st.target) for st in raw if st.action == "type")
        or any("pass" in name for name in secrets),
    )


def desktop_place(step: Step) -> str:
    """What names an unnamed field's place: a dialog's own title ("Save As"),
    else the app (a main window's title names its document, not the field)."""
    title = " ".join(str(step.window or "").split())
    if title and not any(sep in title for sep in TITLE_SEPARATORS):
        return title
    return app_name(step.target, step.extra.get("window_class"))


MIN_SHOWN = 3  # shorter values ("42", "no") appear on any page by chance


def final_page_text(rec: Recording) -> str:
    """The visible text of the demonstration's final page (the recorder's last
    ``page_text`` event), whitespace folded; "" when the recording has none.
    It is only read here, never written into the skill: it may hold anything."""
    for event in reversed(rec.events):
        if event.get("type") == "page_text" or event.get("kind") == "page_text":
            return " ".join(str(event.get("text") or "").split())
    return ""


def desktop_after(step: Step, before: str | None, title: Callable[[Any], str | None],
                  params: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """What a desktop step visibly did, for the replay to see again: the
    title its app's focused window took after it ("Save As" opening; "notes.txt
    - Mousepad" once saved, the file's name being a parameter, asked for as
    this run's value). Only a change a title pattern or a parameter can tell:
    "*Untitled 1 - Mousepad" after typing is no more than "* - Mousepad".
    Of the titles seen before the next step, the last that tells: the focus
    may flick back to the main window while a new dialog is placed, and that
    return is the window manager's doing, not the step's."""
    for after in reversed(step.extra.get("after") or []):
        klass = str(after.get("class") or "")
        if not klass or klass != step.extra.get("window_class") or not (shown := title(after.get("window"))):
            continue
        pattern, shows = title_pattern(shown), shown_parameters(shown, params)
        if shows or pattern != title_pattern(before or ""):
            return {"class": klass, "title_pattern": pattern, **({"shows": shows} if shows else {})}
    return None


def appears(value: str, text: str) -> bool:
    """``value`` as whole words of ``text``, case and spacing aside ("Tax" is
    not in "Taxi"). The replay's check (runner.replay) reads it the same way."""
    want = " ".join(value.split()).lower()
    return bool(want) and re.search(r"(?<!\w)" + re.escape(want) + r"(?!\w)", text.lower()) is not None


def shown_parameters(final_text: str, params: dict[str, dict[str, Any]]) -> list[str]:
    """The parameters whose demonstrated value the final page showed, as
    ``{{name}}``: the success check asks for this run's values there — the
    effect itself, not only the address it ended on. Secrets are never among
    them (they are not parameters); the order is the parameters' own."""
    if not final_text:
        return []
    return [f"{{{{{name}}}}}" for name, p in params.items()
            if len(" ".join(str(p.get("default") or "").split())) >= MIN_SHOWN
            and appears(str(p["default"]), final_text)]


def _is_password(target: dict[str, Any] | None) -> bool:
    attrs = (target or {}).get("attrs") or {}
    return str(attrs.get("type", "")).lower() == "password" or str(
        attrs.get("autocomplete", "")
    ).lower() in ("current-password", "new-password")
