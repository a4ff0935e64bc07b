"""What a desktop app showed before the demonstration touched it, and at its
end: the texts that changed are the effect a replay must show again.

Why: a calculator's "7 + 2 =" changes no window title and no page; its
display is the only record of the result, and a run that pressed other keys
would otherwise end "unverified" at best. So the app's window is read as
text by place (recorder.a11y ``Desktop.texts``) once when it is first seen
(before the person acts in it), and again after each of the person's
events there, once two reads 0.1 s apart agree (the app has caught up). At
the end, the places whose text differs between the two are written as one
``os_text`` event per app (compiler.procedure makes them the success
check). Reading is done on a thread of its own, so the listeners that
record clicks and keys are never held up by a walk of a big window; a read
after the app went away, or one that never settled, leaves that app
unknown: no check is better than a check on a stale state.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from compiler.desktop import below_window
from compiler.secrets import looks_secret, mask_text
from recorder.a11y import MAX_TEXT

SETTLE_READS = 10  # reads of a window 0.1 s apart, until two agree
MAX_SHOWN = 12  # changed texts kept per app: more is a window redrawn, not one effect
DRAIN_S = 8.0  # at the end, how long the reads still queued may take

Texts = dict[Any, str]  # recorder.a11y.TextPlace → text
Reader = Callable[[int, "str | None"], "tuple[str, Texts] | None"]


class AppTexts:
    """One recording's reads of its apps' windows (``read``: pid, title →
    (title, texts) or None; the caller serialises it with its other
    accessibility calls)."""

    def __init__(self, read: Reader) -> None:
        self._read = read
        self._queue: queue.Queue[tuple[str, int, str] | threading.Event] = queue.Queue()
        self._before: dict[int, Texts] = {}  # pid → its window's texts when first seen
        self._after: dict[int, tuple[int, Texts]] = {}  # pid → (how many events it was read after, texts)
        self._klass: dict[int, str] = {}  # pid → its window class (X's WM_CLASS, as the events have it)
        self._hidden: set[tuple[int, str, tuple[tuple[str, str], ...]]] = set()  # (pid, role, path): secret
        self._asked: dict[int, int] = {}  # pid → how many events asked for a read after them
        self._lock = threading.Lock()
        threading.Thread(target=self._work, name="teachd-app-texts", daemon=True).start()

    def first(self, pid: int | None, title: str) -> None:
        """The app is in sight: what it shows before it is acted on (once per app)."""
        if pid is not None and pid not in self._before:
            self._queue.put(("first", pid, title))

    def hide(self, pid: int, role: str, path: tuple[tuple[str, str], ...]) -> None:
        """A widget the person marked secret (its path from its window down):
        whatever a widget of its role shows there is never kept."""
        self._hidden.add((pid, role, tuple((r, n) for r, n in below_window(path))))

    def after(self, pid: int | None, title: str, klass: str) -> None:
        """The person acted in the app's window ``title``: read it once it settles."""
        if pid is None:
            return
        with self._lock:
            self._asked[pid] = self._asked.get(pid, 0) + 1
            self._klass[pid] = klass
        self._queue.put(("after", pid, title))

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if isinstance(item, threading.Event):
                item.set()
                continue
            kind, pid, title = item
            if kind == "first":
                if pid not in self._before and (got := self._read(pid, title)) is not None:
                    self._before[pid] = got[1]
                continue
            with self._lock:
                asked = self._asked.get(pid, 0)
            if self._after.get(pid, (-1,))[0] == asked:
                continue  # already read after the latest event
            settled = self._settled(pid, title)
            with self._lock:
                if self._asked.get(pid, 0) == asked:
                    if settled is None:
                        self._after.pop(pid, None)  # the end is unknown: no stale state as the effect
                    else:
                        self._after[pid] = (asked, settled)

    def _settled(self, pid: int, title: str | None) -> Texts | None:
        """The window's texts once two reads agree (None: gone, or never settled)."""
        last = None
        for i in range(SETTLE_READS):
            now = self._read(pid, title)  # a dialog that closed: the app's active window (Desktop.texts)
            if now is not None and now == last:
                return now[1]
            if now is None and last is None and i:
                return None  # twice nothing to read: the app is gone
            last = now
            time.sleep(0.1)
        return None

    def drain(self, timeout: float = DRAIN_S) -> None:
        """Until the reads asked for so far are done (or ``timeout``)."""
        done = threading.Event()
        self._queue.put(done)
        done.wait(timeout)

    def changed(self) -> list[dict[str, Any]]:
        """Per app the person acted in, the texts that differ between its
        first and its last read (masked; none that looks like a secret), as
        ``os_text`` event fields; after the reads still queued are done."""
        self.drain()
        out = []
        with self._lock:
            ends = {pid: texts for pid, (n, texts) in self._after.items() if n == self._asked.get(pid)}
            klasses = dict(self._klass)
        for pid, klass in sorted(klasses.items()):
            before = self._before.get(pid)
            # the app as it is now, where it is still up (the last the person saw of it); else as
            # read after the last event, where that read settled; else nothing is known of its end
            texts = self._settled(pid, None) if before is not None else None
            texts = texts if texts is not None else ends.get(pid)
            if before is None or texts is None:
                continue
            shown = [{"role": place[0], "path": [list(p) for p in place[1]], "n": place[2], "text": text}
                     for place, text in texts.items()
                     if place in before and before[place] != text and _keepable(text)
                     and (pid, place[0], place[1]) not in self._hidden]
            if shown and len(shown) <= MAX_SHOWN:
                out.append({"window_class": klass, "texts": shown})
        return out


def _keepable(text: str) -> bool:
    """A text a skill may hold as it is: short, and nothing in it masked or shaped like a secret."""
    return len(text) <= MAX_TEXT and not looks_secret(text) and mask_text(text)[0] == text
