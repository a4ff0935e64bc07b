"""Which window had the keyboard at a given X server time.

A key's handler runs when pynput's listener thread gets to it, which on a
busy machine can be seconds after the key (seen: 3 s, a Qt editor's note
read as typed into the Save dialog that Ctrl+S, pressed after it, had
opened). Asking the X server for its focus when the handler runs tells
where keys go *now*. The window manager tells where they went *then*: it
sets ``_NET_ACTIVE_WINDOW`` on the root window each time it gives a window
the focus (EWMH; Openbox does so for a focus set by anyone), and the
server stamps each change's PropertyNotify with its time — the clock a
key's event carries too (recorder.xclock). Without a window manager that
keeps it, nothing is known and the recorder asks the focus as before.

The history is kept by a thread of its own; a PropertyNotify says *that*
the property changed, not to what, so a value read late may be a later
change's. Each value read is given only to the change that was the last one
before the read (the X server sends a connection's events and replies in
order: a change made before the read is queued before its reply); earlier
changes in the same batch are kept as unknown.
"""

from __future__ import annotations

import contextlib
import select
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

from recorder.xclock import not_after

KEPT = 256  # changes of the active window remembered (a recording's keys are handled within seconds)


class Active(NamedTuple):
    """From X time ``since``, the window ``wid`` was active (None: not known),
    described as it was when it became so."""

    since: int
    wid: int | None
    window: Any  # recorder.desktop.Window, or None


class Moment(NamedTuple):
    """Around an X time: the change in effect then (None before the first
    known), the first one after it (None: none yet), and the one in effect now."""

    then: Active | None
    next: Active | None
    latest: Active | None


def active_at(history: list[Active], t: int) -> Moment:
    """Where X time ``t`` falls in ``history`` (a change made in the same
    millisecond counts as before it)."""
    found, after = None, None
    for change in history:
        if not_after(change.since, t):
            found = change
        else:
            after = change
            break
    return Moment(found, after, history[-1] if history else None)


def settle(pending: list[int], value: int | None, describe: Callable[[int], Any]) -> list[Active]:
    """Changes seen at ``pending`` times, the property read once after them as
    ``value``: only the last change is known to have set it."""
    *earlier, last = pending
    out: list[Active] = [Active(t, None, None) for t in earlier]
    window = None
    if value:
        with contextlib.suppress(Exception):  # gone already: known by id only
            window = describe(value)
    out.append(Active(last, value or None, window))
    return out


class ActiveWindows:
    """The window manager's active window over time (X server clock)."""

    def __init__(self, describe: Callable[[int], Any], now: Callable[[], int]) -> None:
        from Xlib import X, display

        self._describe = describe
        self._d = display.Display()
        self._root = self._d.screen().root
        self._atom = self._d.intern_atom("_NET_ACTIVE_WINDOW")
        self._root.change_attributes(event_mask=X.PropertyChangeMask)
        self._d.sync()
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._closed = False
        start = now()  # the window active now has been so since at least this time
        value = self._read()
        # a change queued by now was made before the read: the value may be its, not the start's
        since = [t for t in self._changes() if not not_after(t, start)]
        self._history: list[Active] = [Active(start, None, None)]
        if since:
            self._record(since)
        else:
            self._history = settle([start], value, describe)

    def _read(self) -> int | None:
        from Xlib import Xatom

        prop = self._root.get_full_property(self._atom, Xatom.WINDOW)
        return int(prop.value[0]) if prop is not None and len(prop.value) else None

    def _keep(self, changes: list[Active]) -> None:
        self._history = [*self._history, *changes][-KEPT:]

    def _changes(self) -> list[int]:
        """The times of the changes queued on this connection."""
        from Xlib import X

        out = []
        while self._d.pending_events():
            event = self._d.next_event()
            if event.type == X.PropertyNotify and event.atom == self._atom:
                out.append(int(event.time))
        return out

    def _catch_up(self, sync: bool) -> None:
        """Every change queued here into the history (with ``sync``: every
        change the server made before now, after a round-trip)."""
        if sync:
            self._d.sync()
        self._record(self._changes())

    def _record(self, pending: list[int]) -> None:
        """Changes seen at ``pending`` times into the history: each value read
        goes to the last change made before the read, the others stay unknown."""
        while pending:
            value = self._read()
            later = self._changes()  # made before the read: the value may be theirs
            if later:
                self._keep([Active(t, None, None) for t in pending])
                pending = later
                continue
            self._keep(settle(pending, value, self._describe))
            pending = []

    def start(self) -> None:
        threading.Thread(target=self._run, name="teachd-active-window", daemon=True).start()

    def stop(self) -> None:
        self._stopped.set()

    def _run(self) -> None:
        """Reads the changes as they come, so that the server need not keep them for us."""
        try:
            while not self._stopped.is_set():
                select.select([self._d.fileno()], [], [], 0.5)
                with self._lock:
                    self._catch_up(sync=False)
        except Exception:  # the X server went away: the history ends
            return
        finally:
            with self._lock, contextlib.suppress(Exception):
                self._closed = True
                self._d.close()

    def at(self, t: int) -> Moment:
        """Where X time ``t`` falls among the changes — every change the
        server made before this call included, however far behind the
        thread reading them is."""
        with self._lock:
            if not self._closed:
                with contextlib.suppress(Exception):  # the X server went away: what is known
                    self._catch_up(sync=True)
            return active_at(self._history, t)
