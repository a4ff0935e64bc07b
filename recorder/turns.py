"""Turns at the desktop's accessibility layer: one caller at a time, and a
long background read gives way to a short urgent one.

Why: libatspi is asked from several threads (the click and key listeners,
the window watch, the reads of an app's texts), so calls are serialised.
A read of a big window's texts (a file dialog: hundreds of widgets, each a
few D-Bus round trips) takes seconds on a busy machine. Held whole, it kept
the window watch from looking at what the pointer rested on, and a click on
a dialog's Save button — which closes the dialog before the click's own
handler can look — was recorded on the editor behind it. So a background
read calls :meth:`Turns.give_way` between widgets, and waits there while
an urgent caller (a look at the pointer, a click, a key) takes its turn.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

GIVE_WAY_S = 10.0  # a background read waits at most this long for the urgent callers to be done


class Turns:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # held by whoever is asking libatspi now
        self._state = threading.Condition()
        self._urgent = 0  # urgent callers waiting for, or holding, the lock

    @contextlib.contextmanager
    def urgent(self) -> Iterator[None]:
        """A short call that must not wait behind a background read."""
        with self._state:
            self._urgent += 1
        try:
            with self._lock:
                yield
        finally:
            with self._state:
                self._urgent -= 1
                self._state.notify_all()

    @contextlib.contextmanager
    def background(self) -> Iterator[None]:
        """A long call; it calls :meth:`give_way` at points where it may pause."""
        with self._state:
            self._state.wait_for(lambda: self._urgent == 0, GIVE_WAY_S)
        with self._lock:
            yield

    def give_way(self) -> None:
        """Inside :meth:`background`: let the urgent callers waiting now go first."""
        if not self._urgent:
            return
        self._lock.release()
        try:
            with self._state:
                self._state.wait_for(lambda: self._urgent == 0, GIVE_WAY_S)
        finally:
            self._lock.acquire()
