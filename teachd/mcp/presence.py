"""Whether an HTTP session's client is still there.

The spec asks a client that is done with a session to send ``DELETE``; many
do not (the MCP Inspector's clients just drop their connections), and their
sessions would keep a Chromium until the idle timeout. A client that opened
the session's event stream (the standalone ``GET``) keeps it open while it
lives and reopens it at once when it drops. So a session that had such a
stream, and then has no request of any kind open for ``grace`` seconds, has
been left: ``gone`` is told, and ends it as a ``DELETE`` would. A client that
never opens the stream is ended by ``DELETE`` or the idle timeout only.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable

Key = tuple[str, str]  # (person, session id)
GRACE = 4.0  # seconds with nothing open before a session that streamed counts as left
# (a live client's stream reconnects within about a second; a replay step waits up to 10 s)


class Presence:
    def __init__(self, gone: Callable[[str, str], object], grace: float = GRACE) -> None:
        self.gone, self.grace = gone, grace
        self._open: dict[Key, int] = {}
        self._streamed: set[Key] = set()
        self._since: dict[Key, int] = {}  # which emptiness a pending check is for
        self._marks = itertools.count(1)
        self._lock = threading.Lock()

    def opened(self, key: Key, stream: bool) -> None:
        with self._lock:
            self._open[key] = self._open.get(key, 0) + 1
            self._since.pop(key, None)
            if stream:
                self._streamed.add(key)

    def closed(self, key: Key) -> None:
        with self._lock:
            left = self._open.get(key, 1) - 1
            if left > 0:
                self._open[key] = left
                return
            self._open.pop(key, None)
            if key not in self._streamed:
                return
            mark = self._since[key] = next(self._marks)
        timer = threading.Timer(self.grace, self._check, (key, mark))
        timer.daemon = True
        timer.start()

    def forget(self, key: Key) -> None:
        with self._lock:
            self._open.pop(key, None)
            self._streamed.discard(key)
            self._since.pop(key, None)

    def _check(self, key: Key, mark: int) -> None:
        with self._lock:
            if self._open.get(key) or self._since.get(key) != mark:
                return  # it came back (or another check owns this emptiness)
        self.forget(key)
        self.gone(*key)
