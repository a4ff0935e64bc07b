"""Desktop steps in a replay: the bridge between a plan's ``os_click``,
``os_key`` and ``os_type`` steps and the desktop's hands (teachd.runner.desktop).

Split from the replay executor (teachd.runner.replay), which hands every
desktop step here: its widget (or picture) found, exactly one, in an app the
skill was taught on, the act passed through the same gate as a page's, and
the effect awaited in its window's title; otherwise a halt naming the step.
``teachd.runner.desktop`` stays free of the gate and the plan; it and the
accessibility tree are imported only when a replay reaches a desktop step.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from compiler.plan import PlanStep, Procedure
from teachd.runner.gate import Action, Gate
from teachd.runner.gate import PlanStep as PlanLine
from teachd.runner.halt import Halt, plain
from teachd.runner.secrecy import Scrubber

PLACEHOLDER = re.compile(r"\{\{([\w-]+)\}\}")  # a parameter in a text the run must show
DESKTOP_EFFECT_TIMEOUT = 10.0  # seconds for a desktop step's window title to show what it did


class DesktopSteps:
    """One replay's desktop steps. ``line``: a step's plan line, which the
    gate holds against the one approved; ``value``: what a step types;
    ``shown``: this run's values of the parameters a demonstration showed.
    ``seen``: the last step whose effect showed in its window (the success
    check counts it as verified)."""

    def __init__(self, proc: Procedure, gate: Gate, scrubber: Scrubber, step_timeout: float,
                 line: Callable[[PlanStep], PlanLine], value: Callable[[PlanStep], str],
                 shown: Callable[[list[str]], dict[str, str]]) -> None:
        self.proc, self.gate, self.scrubber, self.step_timeout = proc, gate, scrubber, step_timeout
        self.line, self.value, self.shown = line, value, shown
        self.actor: Any = None  # the desktop's hands and eyes (teachd.runner.desktop), once needed
        self.seen: int | None = None  # the last desktop step whose effect showed in its window
        self.acted: dict[str, int] = {}  # window class → the process this run acted on there

    def do(self, step: PlanStep) -> list[str]:
        """A step outside the browser (teachd.runner.desktop): its widget
        found by accessibility, exactly one, in an app the skill was taught
        on, under the same gate as a page; otherwise a halt naming it."""
        from compiler.desktop import title_pattern
        from teachd.runner.desktop import DesktopHalt, keys_of, outside_apps

        n = step.n
        anchor = self.proc.desktop.get(step.desktop or "")
        if anchor is None and step.action != "os_key":
            raise Halt(f"step {n}: a desktop step outside the browser; a person must do it")
        actor = self._actor(n)
        app = ((anchor or {}).get("window") or {}).get("class") or ""
        where = f"the desktop ({app or step.window or 'a window'})"
        outside = outside_apps(app, self.proc.apps)
        try:
            if step.action == "os_key":
                keys = keys_of(step.key, step.modifiers)
                self.gate.guard(Action("computer_act", plain(f"press {keys} in {step.window or 'a window'}"),
                                       where, n, planned=True, shown=self.line(step)), outside)
                actor.key(keys, title_pattern(step.window) if step.window else None)
                via = ["keys"]
            elif anchor is not None and "widget" not in anchor and "picture" in anchor \
                    and step.action == "os_click":
                # an app that names nothing to accessibility: its picture, unique or a halt
                hit = actor.find_picture(anchor, self.step_timeout)
                self.gate.guard(Action("computer_act", plain(f"click {step.describe or 'a place'}"), where, n,
                                       planned=True, shown=self.line(step)), outside)
                via = ["picture", actor.click_picture(anchor, hit)]
            else:
                assert anchor is not None
                verb = "click" if step.action == "os_click" else "type into"
                widget = actor.find(anchor, self.step_timeout)
                self.acted[app] = widget.pid
                what = plain(f"{verb} {step.describe or 'a widget'}")
                self.gate.guard(Action("computer_act", what, where, n, planned=True, shown=self.line(step)),
                                outside)
                if step.action == "os_click":
                    via = ["accessibility", actor.click(widget, anchor)]
                else:
                    actor.type(widget, self.value(step), secret=bool(step.secret))
                    via = ["accessibility", "typed"]
            if want := (step.expect or {}).get("window"):
                # what the step did, as the demonstration showed it: its app's window title
                shown = actor.shows_window(want, list(self.shown(want.get("shows") or []).values()),
                                           min(self.step_timeout, DESKTOP_EFFECT_TIMEOUT))
                self.seen = n
                via.append(f"window {self.scrubber.scrub(shown)!r}")  # a title may hold what was typed
        except DesktopHalt as exc:
            raise Halt(plain(f"step {n}: {exc}")) from None
        return via

    def shows_end(self, ends: list[dict[str, Any]], timeout: float) -> list[str]:
        """What each app the run acted in shows now, against what the
        demonstration's showed at its end (``success.desktop``: compiler
        ``desktop_ends``), this run's values in place of ``{{name}}``,
        waiting up to ``timeout`` for the app to catch up. Returns what
        differs, in words (empty: the effect showed)."""
        from teachd.runner.desktop import differs

        wanted = {}
        for end in ends:
            names = PLACEHOLDER.findall(" ".join(t["text"] for t in end["shows"]))
            values = self.shown([f"{{{{{name}}}}}" for name in names])
            wanted[end["class"]] = [{**t, "text": _filled(t["text"], values)} for t in end["shows"]]
        deadline = time.monotonic() + timeout
        while True:
            off = [said for klass, shows in wanted.items()
                   for said in differs(self._texts_of(klass), shows, klass)]
            if not off or time.monotonic() >= deadline:
                return [self.scrubber.scrub(said) for said in off]
            time.sleep(0.2)

    def _texts_of(self, klass: str) -> dict[Any, str] | None:
        """The texts the app's window shows where this run acted on it (None: not known)."""
        pid = self.acted.get(klass)
        if pid is None or self.actor is None:
            return None
        got = self.actor.desktop.texts(pid)
        return None if got is None else got[1]

    def _actor(self, n: int) -> Any:
        if self.actor is None:
            from recorder.a11y import NoAccessibility, open_desktop
            from teachd.runner.desktop import DesktopActor

            try:
                self.actor = DesktopActor(open_desktop())
            except NoAccessibility as exc:
                raise Halt(f"step {n}: a desktop step, and {exc}") from None
        return self.actor


def _filled(text: str, values: dict[str, str]) -> str:
    """``text`` with this run's value in place of each ``{{name}}`` it has."""
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)
