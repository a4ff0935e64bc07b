"""The crash-safe, append-only Recording on disk.

Producers (browser binding, OS listeners) never block: they ``put`` and go.
One writer thread numbers the events, appends each as a JSON line and flushes
it at once (a killed recorder loses only what is still in the queue); it
fsyncs at most every 100 ms so a power cut costs no more than that either.
A disk that fills up stops the writing at the last whole line (``failure``
says why): what was written stays a Recording the compiler reads.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import threading
import time
from pathlib import Path
from typing import Any

FORMAT_VERSION = 1
INCOMPLETE_MARKER = ".incomplete"
FSYNC_INTERVAL = 0.1


class Ticket:
    """An event's number, known once the writer has written it (an ``undo``
    names the event it takes back by that number)."""

    def __init__(self) -> None:
        self.seq: int | None = None
        self._done = threading.Event()

    def settle(self, seq: int | None) -> None:
        self.seq = seq
        self._done.set()

    def wait(self, timeout: float = 2.0) -> int | None:
        self._done.wait(timeout)
        return self.seq


class Slot:
    """A place in the event order taken now, filled a moment later (a click
    holds its place while its crop is taken)."""

    def __init__(self, type_: str, t: int) -> None:
        self.type, self.t = type_, t
        self.fields: dict[str, Any] | None = None
        self.ready = threading.Event()
        self.ticket = Ticket()

    def fill(self, **fields: Any) -> None:
        self.fields = fields
        self.ready.set()

    def drop(self) -> None:
        """No event after all: its place is given up at once."""
        self.ready.set()


SLOT_WAIT = 3.0


class EventWriter:
    def __init__(self, folder: Path, clock: Any = time.monotonic) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        (folder / "frames").mkdir(exist_ok=True, mode=0o700)
        (folder / INCOMPLETE_MARKER).touch(mode=0o600)
        fd = os.open(folder / "events.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._fh = os.fdopen(fd, "a", encoding="utf-8")
        self._clock = clock
        self._t0 = clock()
        self._queue: queue.Queue[dict[str, Any] | Slot | None] = queue.Queue()
        self._seq = 0
        self.written = 0
        self.failure: OSError | None = None  # the write that failed (a full disk): nothing more is written
        self._whole = os.fstat(fd).st_size  # bytes up to the last whole line
        self._thread = threading.Thread(target=self._run, name="teachd-writer", daemon=True)
        self._thread.start()

    def now_ms(self) -> int:
        return int((self._clock() - self._t0) * 1000)

    def put(self, type_: str, **fields: Any) -> Ticket:
        """Queue one event; ``t`` is taken now, ``seq`` when it is written."""
        ticket = Ticket()
        self._queue.put({"type": type_, "t": self.now_ms(), **fields, "_ticket": ticket})
        return ticket

    def reserve(self, type_: str) -> Slot:
        """Hold this event's place; the writer waits (briefly) for ``fill``."""
        slot = Slot(type_, self.now_ms())
        self._queue.put(slot)
        return slot

    def write_frame(self, name: str, png: bytes) -> str | None:
        """The crop's path in the recording; None when the disk could not take
        it (no half picture is left, and ``failure`` says why)."""
        rel = f"frames/{name}"
        try:
            fd = os.open(self.folder / rel, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(png)
        except OSError as exc:
            with contextlib.suppress(OSError):
                (self.folder / rel).unlink(missing_ok=True)
            self.failure = self.failure or exc
            return None
        return rel

    def _run(self) -> None:
        last_sync = time.monotonic()
        while True:
            item = self._queue.get()
            if item is None:
                break
            if isinstance(item, Slot):
                if not item.ready.wait(SLOT_WAIT) or item.fields is None:
                    item.ticket.settle(None)
                    continue  # the producer failed: the event is dropped, order kept
                item = {"type": item.type, "t": item.t, **item.fields, "_ticket": item.ticket}
            ticket: Ticket = item.pop("_ticket")
            if self.failure is not None:  # the disk is full: the rest is dropped, said by ``failure``
                ticket.settle(None)
                continue
            line = {"v": FORMAT_VERSION, "seq": self._seq, **item}
            text = json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"
            try:
                self._fh.write(text)
                self._fh.flush()
                now = time.monotonic()
                if now - last_sync >= FSYNC_INTERVAL or self._queue.empty():
                    os.fsync(self._fh.fileno())
                    last_sync = now
            except OSError as exc:
                self._fail(exc)
                ticket.settle(None)
                continue
            self._seq += 1
            self._whole += len(text.encode("utf-8"))
            ticket.settle(line["seq"])
            self.written += 1
        if self.failure is None:
            try:
                self._fh.flush()
                os.fsync(self._fh.fileno())
            except OSError as exc:
                self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        """Stop writing, the file cut back to its last whole line."""
        self.failure = self.failure or exc
        with contextlib.suppress(OSError):
            os.ftruncate(self._fh.fileno(), self._whole)

    def close(self, complete: bool = True) -> None:
        """Drain the queue and close; an incomplete recording keeps its marker."""
        self._queue.put(None)
        self._thread.join(timeout=10)
        with contextlib.suppress(OSError):  # a full disk: the text buffer may still hold a part line
            self._fh.close()
        if self.failure is not None:
            with contextlib.suppress(OSError):
                os.truncate(self.folder / "events.jsonl", self._whole)
        if complete:
            (self.folder / INCOMPLETE_MARKER).unlink(missing_ok=True)
