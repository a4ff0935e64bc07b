"""Steps → the procedure a replay follows and a person reads: anchors,
parameters and secrets decided, every string masked, as the typed plan of
``compiler.plan`` plus what only the SKILL.md text needs."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compiler.anchors import build_anchor, mark_shared_locators, tie_typed
from compiler.desktop import (
    TITLE_SEPARATORS,
    WINDOW_ROLES,
    app_name,
    desktop_anchor,
    desktop_key,
    title_pattern,
    without_folders,
)
from compiler.names import describe, param_name
from compiler.plan import Anchor, PlanStep, Procedure
from compiler.recording import Recording
from compiler.scope import scope_of, url_pattern
from compiler.secrets import field_hint, looks_secret, mask_text, mask_url
from compiler.steps import DESKTOP_ACTIONS, Step, review_checks, target_key, to_steps


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
    """The plan of ``rec``'s steps, in the order they were taken: the same
    recording always gives the same plan (ids, names and masks included)."""
    return _ProcedureBuilder(rec).build()


class _ProcedureBuilder:
    """One recording made into a plan, one step at a time and in order: anchor
    ids (``a1``, ``d1``…), parameter and secret names are handed out in the
    order the steps need them, so they are the same on every compile. Every
    URL and title is masked on its way in (``url``, ``title``), and what that
    masked is counted (``masked``) for the approval the skill asks for."""

    def __init__(self, rec: Recording) -> None:
        self.rec = rec
        self.raw = to_steps(rec)
        self.masked = 0  # secrets masked in URLs and titles
        self.viewport = rec.viewport or rec.screen or {}  # the page's own viewport when it was recorded
        self.anchors: dict[str, Anchor] = {}
        self.anchor_ids: dict[tuple[Any, ...], str] = {}
        self.params: dict[str, dict[str, Any]] = {}
        self.secrets: dict[str, dict[str, Any]] = {}
        self.taken_params: set[str] = set()
        self.taken_secrets: set[str] = set()
        self.steps: list[PlanStep] = []
        self.desktop: dict[str, dict[str, Any]] = {}
        self.desktop_ids: dict[tuple[Any, ...], str] = {}
        self.apps: list[str] = []
        # what each kind of step adds to the plan besides its page, anchor and expectation
        # (a page's click and dblclick add nothing more)
        self.kinds: dict[str, Callable[[Step, PlanStep], None]] = {
            "type": self.typed,
            "select": self.selected,
            "check": self.checked,
            "press": self.pressed,
            "goto": self.navigated,
            "os_click": self.desktop_clicked,
            "os_key": self.desktop_pressed,
            "os_type": self.desktop_typed,
        }

    # -- masking ---------------------------------------------------------------

    def url(self, u: str | None) -> str | None:
        """``u`` with its secrets masked (counted); None stays None."""
        if u is None:
            return None
        out, n = mask_url(u)
        self.masked += n
        return out

    def title(self, value: Any) -> str | None:
        """A window or page title, spacing folded, masked (counted) and cut
        to 120 characters; None when there is none."""
        if not value or not str(value).strip():
            return None
        out, n = mask_text(" ".join(str(value).split()))
        self.masked += n
        return out[:120]

    # -- anchors ---------------------------------------------------------------

    def anchor_for(self, step: Step) -> str | None:
        """One anchor per action's target; two steps share one only when they
        act on demonstrably the same element of the same document."""
        if step.action.startswith("os_"):
            return None  # a desktop widget: desktop_for
        ident = target_key(step.target)
        if ident is None or step.target is None:
            return None
        key = (step.tab, step.doc, *ident)
        if key not in self.anchor_ids:
            aid = f"a{len(self.anchor_ids) + 1}"
            self.anchor_ids[key] = aid
            frame = self.rec.frames.get(step.frame) if step.frame else None
            typed = {name: str(p.get("default") or "") for name, p in self.params.items()}
            crop = {"recording": self.rec.id, "frame": str(step.frame)} if frame else None
            self.anchors[aid] = build_anchor(tie_typed(step.target, typed), self.url(step.url) or "", frame,
                                             self.viewport, step.frame_fp, typed, crop)
        return self.anchor_ids[key]

    def desktop_for(self, step: Step) -> str | None:
        """A desktop step's anchor: one per named widget (a click that focused
        a field and its typing share it), one per step where nothing is named.
        Its app is noted among the plan's apps either way."""
        window_class = step.extra.get("window_class")
        if window_class and window_class not in self.apps:
            self.apps.append(window_class)
        if step.target is None and step.frame is None:
            return None  # recorded before desktop anchors: a person does it
        key = desktop_key(step.target, window_class) or ("step", len(self.desktop_ids))
        if key not in self.desktop_ids:
            did = f"d{len(self.desktop_ids) + 1}"
            self.desktop_ids[key] = did
            crop = self.rec.frames.get(step.frame) if step.frame else None
            at = step.extra if step.action == "os_click" else None
            self.desktop[did] = desktop_anchor(step.target, step.window, window_class, at, crop)
        return self.desktop_ids[key]

    # -- values: parameters and secrets -----------------------------------------

    def secret(self, named: dict[str, Any] | None, entry: dict[str, Any], out: PlanStep) -> None:
        """The step's value is a secret, named after ``named``: never stored."""
        name = param_name(named, self.taken_secrets)
        self.secrets[name] = entry
        out.secret = name

    def param(self, named: dict[str, Any] | None, default: str, entry: dict[str, Any],
              out: PlanStep) -> None:
        """The step's value is a parameter named after ``named``, its default
        the value demonstrated."""
        name = param_name(named, self.taken_params)
        self.params[name] = {"default": default, **entry}
        out.param = name

    # -- one method per kind of step ---------------------------------------------

    def filled(self, step: Step, out: PlanStep) -> bool:
        """A field's value (typed or chosen): a secret when the recorder
        masked it, the field is one for secrets or the value looks like one;
        else the value itself where the review kept it fixed, else a
        parameter. True when it is not a secret."""
        entry = {"anchor": out.anchor, "step": out.n, "describe": describe(step.target)}
        if step.masked or field_hint(step.target) or looks_secret(step.value or ""):
            self.secret(step.target, entry, out)
            return False
        if step.fixed:
            out.value = step.value or ""
        else:
            self.param(step.target, step.value or "", entry, out)
        return True

    def typed(self, step: Step, out: PlanStep) -> None:
        """Text typed (filled) into a page's field."""
        self.filled(step, out)

    def selected(self, step: Step, out: PlanStep) -> None:
        """An option chosen in a page's list; its label (masked) kept for when
        its value changed."""
        if self.filled(step, out) and step.extra.get("option"):
            out.option = mask_text(str(step.extra["option"]))[0]

    def checked(self, step: Step, out: PlanStep) -> None:
        """A checkbox or radio set: checked unless the recording says not."""
        out.checked = bool(step.checked) if step.checked is not None else True

    def pressed(self, step: Step, out: PlanStep) -> None:
        """A key pressed, with its modifiers."""
        out.key, out.modifiers = step.key, list(step.modifiers)

    def navigated(self, step: Step, out: PlanStep) -> None:
        """A navigation: the (masked) address gone to."""
        out.url = self.url(step.url)

    def window_title(self, value: Any) -> str | None:
        """A desktop window's title as ``title`` keeps it, a path's folders left out."""
        return self.title(without_folders(str(value))) if value else None

    def on_widget(self, step: Step, out: PlanStep) -> None:
        """A desktop step's window, and the widget it acts on when one is known."""
        out.window = self.window_title(step.window)
        if (did := self.desktop_for(step)) is not None:
            out.desktop, out.describe = did, self.desktop[did]["describe"]

    def desktop_clicked(self, step: Step, out: PlanStep) -> None:
        """A click outside the browser: on what, where, with which button."""
        self.on_widget(step, out)
        out.x, out.y, out.button = (step.extra.get(k) for k in ("x", "y", "button"))

    def desktop_pressed(self, step: Step, out: PlanStep) -> None:
        """A key pressed outside the browser, in its window. The step is given
        no desktop anchor, but ``desktop_for`` still notes its app (and the
        widget it names), as every desktop step's does."""
        self.pressed(step, out)
        out.window = self.window_title(step.window)
        self.desktop_for(step)

    def desktop_typed(self, step: Step, out: PlanStep) -> None:
        """A desktop widget's typed text: a secret (masked, a password field,
        or looks like one) or a parameter, named after the widget, else after
        its place (a dialog's title or the app)."""
        self.on_widget(step, out)
        widget = {"name": (step.target or {}).get("name") or f"{desktop_place(step)} text"}
        entry = {"desktop": out.desktop, "step": out.n, "describe": out.describe}
        if (step.masked or (step.target or {}).get("role") == "password text"
                or looks_secret(step.value or "")):
            self.secret(widget, entry, out)
        elif step.fixed:
            out.value = step.value or ""
        else:
            self.param(widget, step.value or "", entry, out)

    # -- every step -----------------------------------------------------------

    def expect(self, step: Step, out: PlanStep) -> None:
        """What the step should lead to: the window a desktop step left its
        app in, unless (and then overridden by) the page it led to."""
        if step.action in DESKTOP_ACTIONS and (after := desktop_after(step, out.window, self.window_title,
                                                                       self.params)):
            out.expect = {"window": after}
        if step.expect_url is not None:
            shown = self.url(step.expect_url) or ""
            out.expect = {"url": shown, "url_pattern": url_pattern(shown),
                          "title": self.title(step.expect_title)}
            if step.expect_tab is not None:
                out.expect["tab"] = step.expect_tab

    def add(self, n: int, step: Step) -> None:
        """Step ``n`` of the plan: its page and anchor, what its kind adds,
        what it should lead to."""
        out = PlanStep(n=n, action=step.action, page=self.url(step.url), tab=step.tab,
                       name=self.title(step.name))
        if aid := self.anchor_for(step):
            out.anchor, out.describe = aid, self.anchors[aid].describe
        if kind := self.kinds.get(step.action):
            kind(step, out)
        self.expect(step, out)
        self.steps.append(out)

    def success(self, last: Step) -> dict[str, Any]:
        """Where the demonstration ended (the last page it led to, else its
        first step's), and the parameters its final page showed."""
        success_url = self.url(last.expect_url or last.url) or ""
        success: dict[str, Any] = {"url": success_url, "url_pattern": url_pattern(success_url),
                                   "title": self.title(self._final_title(last, success_url))}
        shows = shown_parameters(final_page_text(self.rec), self.params)
        # the person's own checks (the review): their words, a typed value in them asked as this run's
        checks = [_with_parameters(text, self.params) for c in review_checks(self.rec)
                  if (text := self.title(c))]
        shows += [c for c in checks if c not in shows]
        if shows:  # only then: a recording without the final text compiles to the bytes it always did
            success["shows"] = shows
        if ends := desktop_ends(self.rec, self.params):  # likewise: only a recording that read its apps
            success["desktop"] = ends
        return success

    def _final_title(self, last: Step, success_url: str) -> str | None:
        """The title the final page settled on: a single-page app names its
        page after the route has changed (once its data came), so the title
        seen at the end, on the same page, is the page's own. When it holds a
        value the person typed, no title is asked for: another run's value
        would not match it, and the title seen at the route change was the
        page before's (the final page showing this run's values is checked
        instead: ``shows``)."""
        final = self.rec.final_page
        seen_on = url_pattern(mask_url(str((final or {}).get("url") or ""))[0])
        title = str((final or {}).get("title") or "")
        typed = [str(p.get("default") or "") for p in self.params.values()]
        if title and seen_on == url_pattern(success_url):
            return None if any(len(v) >= 3 and v in title for v in typed) else title
        return last.expect_title

    def build(self) -> Built:
        """Every step added in order, then the plan: its scope is every
        address visited, its success where the demonstration ended."""
        rec, raw = self.rec, self.raw
        for n, step in enumerate(raw, 1):
            self.add(n, step)
        mark_shared_locators(self.anchors)
        pages = [s for s in raw if s.expect_url]
        last = pages[-1] if pages else raw[0]
        visited = [rec.start_url] + [e.get("url", "") for e in rec.events if e["type"] in ("page", "click")]
        first_title = self.title(raw[0].expect_title)
        success = self.success(last)
        plan = Procedure(
            start_url=self.url(rec.start_url) or "",
            steps=self.steps,
            anchors=self.anchors,
            parameters=self.params,
            secrets=self.secrets,
            scope=scope_of(visited),
            success=success,
            desktop=self.desktop,
            apps=self.apps,
        )
        last_title = self.title(last.expect_title)  # masks, so before ``masked`` is read
        return Built(
            plan=plan,
            first_title=first_title,
            last_title=last_title,
            masked_elsewhere=self.masked,
            signed_in=any(_is_password(st.target) for st in raw if st.action == "type")
            or any("pass" in name for name in self.secrets),
        )


def desktop_place(step: Step) -> str:
    """What names an unnamed field's place: a dialog's own title ("Save As"),
    else the app (a main window's title names its document, not the field:
    "Untitled", or a path in the person's home)."""
    title = " ".join(str(step.window or "").split())
    path = (step.target or {}).get("path") or []
    in_dialog = bool(path) and path[0][0] in WINDOW_ROLES - {"frame", "window"}
    if title and in_dialog and not any(sep in title for sep in TITLE_SEPARATORS):
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
        shows = shown_parameters(shown, params)
        pattern = title_pattern(shown, tuple(str(params[s[2:-2]].get("default") or "") for s in shows))
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


def desktop_ends(rec: Recording, params: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """What each desktop app showed at the demonstration's end that it did
    not before (``os_text``: recorder.app_text), as the success check asks it
    of a run: ``{"class", "shows": [{"role", "path", "n", "text"}]}``, a
    typed parameter's value in a text as ``{{name}}`` (this run's value is
    looked for there)."""
    out = []
    for e in rec.events:
        if e["type"] != "os_text":
            continue
        shows = [{"role": str(t.get("role") or ""),
                  "path": [[str(r), mask_text(str(n))[0]] for r, n in t.get("path") or []],
                  "n": int(t.get("n") or 0),
                  "text": _with_parameters(mask_text(" ".join(str(t.get("text") or "").split()))[0], params)}
                 for t in e.get("texts") or [] if isinstance(t, dict)]
        if shows:
            out.append({"class": str(e.get("window_class") or ""), "shows": shows})
    return out


def _with_parameters(text: str, params: dict[str, dict[str, Any]]) -> str:
    """``text`` with each typed parameter's demonstrated value as ``{{name}}``, longest value first."""
    values = sorted(((" ".join(str(p.get("default") or "").split()), name) for name, p in params.items()),
                    key=lambda vn: (-len(vn[0]), vn[1]))
    for value, name in values:
        if len(value) >= MIN_SHOWN:
            text = text.replace(value, f"{{{{{name}}}}}")
    return text


def _is_password(target: dict[str, Any] | None) -> bool:
    attrs = (target or {}).get("attrs") or {}
    return str(attrs.get("type", "")).lower() == "password" or str(
        attrs.get("autocomplete", "")
    ).lower() in ("current-password", "new-password")
