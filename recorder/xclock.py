"""The X server's clock: the one time both a click and a look at the screen
can be put on.

A click's handler runs when its listener thread gets to it, which on a busy
machine can be after the click's own effect (a dialog closed, a title
changed) — and after the window watch has looked at the screen again. Which
look showed what the click was on is told by the X server's timestamps: the
press carries one (its input event), and each look is stamped with the
server's time once it has seen what it saw. Neither comes from the handler's
own timing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

WRAP = 1 << 32  # X timestamps are 32-bit milliseconds


def not_after(earlier: int, later: int) -> bool:
    """``earlier`` came at or before ``later`` on the X server's clock (which wraps every ~49 days)."""
    return (later - earlier) % WRAP < WRAP // 2


class ServerClock:
    """The X server's time now (ms): an empty append to a property of a
    window of our own, whose PropertyNotify the server stamps — the way
    ICCCM §2.1 tells a client to get a timestamp."""

    def __init__(self) -> None:
        from Xlib import X, display

        self._d = display.Display()
        root = self._d.screen().root
        self._win = root.create_window(-1, -1, 1, 1, 0, 0, window_class=X.InputOnly,
                                       event_mask=X.PropertyChangeMask)
        self._atom = self._d.intern_atom("TEACHD_NOW")
        self._lock = threading.Lock()

    def now(self) -> int:
        from Xlib import X, Xatom

        with self._lock:
            self._win.change_property(self._atom, Xatom.STRING, 8, b"", mode=X.PropModeAppend)
            self._d.sync()  # the server has handled the change, so its event is queued here
            while self._d.pending_events():
                event = self._d.next_event()
                if event.type == X.PropertyNotify and event.window.id == self._win.id:
                    return int(event.time)
        raise RuntimeError("the X server stamped no PropertyNotify")


def _stamped(base: type) -> type:
    """pynput's X listener ``base``, keeping each recorded event's X server
    time as ``event_time`` while its callbacks run (None where the backend
    does not carry one). pynput passes no time to its callbacks; its X
    backend hands each recorded event to ``_handle_message`` before calling
    them, which is where it is read."""

    class Timed(base):
        event_time: int | None = None

        def _handle_message(self, display: Any, event: Any, injected: bool) -> None:
            stamp = getattr(event, "time", None)
            self.event_time = int(stamp) if isinstance(stamp, int) else None
            try:
                super()._handle_message(display, event, injected)
            finally:
                self.event_time = None  # an event handed over some other way has no time of its own

    return Timed


def timed_mouse_listener(on_click: Callable[[int, int, Any, bool, int | None], None]) -> Any:
    """pynput's mouse listener, calling ``on_click`` with each button event's X server time as well."""
    from pynput import mouse

    def clicked(x: int, y: int, button: Any, pressed: bool) -> None:
        on_click(x, y, button, pressed, listener.event_time)

    listener = _stamped(mouse.Listener)(on_click=clicked)
    return listener


def timed_keyboard_listener(on_press: Callable[[Any, int | None], None],
                            on_release: Callable[[Any], None]) -> Any:
    """pynput's keyboard listener, calling ``on_press`` with each key's X server time as well."""
    from pynput import keyboard

    def pressed(key: Any) -> None:
        on_press(key, listener.event_time)

    listener = _stamped(keyboard.Listener)(on_press=pressed, on_release=on_release)
    return listener
