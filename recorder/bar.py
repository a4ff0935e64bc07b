"""The recording bar's state, kept on the recorder's side so that every tab,
frame and navigation shows the same bar: paused or not, where it was dragged,
the last steps captured, and the stack that *Undo last step* takes from.

The page's bar (in ``capture.js``) sends commands through the recorder's
binding and shows what comes back: a state, or a toast naming the step just
captured. A toast never carries a value the person typed.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from compiler.names import describe
from recorder.writer import EventWriter, Ticket

COMMANDS = frozenset({"hello", "bar", "pause", "resume", "undo", "stop", "mark", "marked"})
RECENT = 3


def step_toast(kind: str, target: dict[str, Any] | None, *, masked: bool = False,
               checked: bool | None = None, keys: str = "") -> str:
    """What the person is told was captured ("Clicked the **Sign in** button")."""
    what = describe(target)
    tag = str((target or {}).get("tag") or "").lower()
    if kind == "click":
        return f"Clicked {what}"
    if kind == "key":
        return f"Pressed **{keys}**" + (f" in {what}" if target else "")
    if masked:
        return f"Typed a secret into {what} — masked"
    if checked is not None:
        return f"{'Checked' if checked else 'Unchecked'} {what}"
    if tag == "select":
        return f"Chose an option in {what}"
    return f"Typed into {what}"


@dataclass
class Bar:
    name: str
    writer: EventWriter
    on_stop: Callable[[], None] | None = None
    paused: bool = False
    armed: bool = False  # "Mark next field secret" waits for the next field, across pages
    collapsed: bool = False
    position: dict[str, float] | None = None
    banner: str | None = None  # a repair's instruction ("Click the **Submit** button — show me …")
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=RECENT))
    _undoable: list[tuple[Ticket, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def state(self, toast: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "paused": self.paused, "collapsed": self.collapsed,
                               "armed": self.armed, "position": self.position, "recent": list(self.recent)}
        if self.banner:
            out["banner"] = self.banner
        if toast:
            out["toast"] = toast
        return out

    def captured(self, ticket: Ticket, toast: str, undoable: bool = True) -> dict[str, Any]:
        with self._lock:
            self.recent.append(toast)
            if undoable:
                self._undoable.append((ticket, toast))
        return {"toast": toast}

    def command(self, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        if kind == "bar":
            self.collapsed = bool(data.get("collapsed"))
            pos = data.get("position")
            if isinstance(pos, dict) and all(isinstance(pos.get(k), int | float) for k in ("x", "y")):
                self.position = {"x": float(pos["x"]), "y": float(pos["y"])}
            return self.state()
        if kind in ("pause", "resume"):
            want = kind == "pause"
            if want != self.paused:
                self.paused = want
                self.writer.put(kind)
            return self.state("Paused: nothing is recorded until you resume" if want else "Recording again")
        if kind == "undo":
            return self.state(self._undo())
        if kind == "stop":
            if self.on_stop:
                self.on_stop()
            return self.state("Stopping…")
        if kind == "mark":
            self.armed = True
            return self.state("The field you type into next is masked: its value is never recorded")
        if kind == "marked":
            self.armed = False
            return self.state("This field is masked: its value is never recorded")
        return self.state()

    def _undo(self) -> str:
        with self._lock:
            while self._undoable:
                ticket, toast = self._undoable.pop()
                seq = ticket.wait()
                if seq is None:
                    continue  # never written: nothing to take back
                self.writer.put("undo", undoes=seq)
                with_undo = f"Undone: {toast}"
                self.recent.append(with_undo)
                return with_undo
        return "Nothing to undo"
