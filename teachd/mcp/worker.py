"""The session's browser, owned by one thread.

Playwright's sync API belongs to the thread that started it, and the replay
executor is sync; the MCP server is async. So every browser job of a session
runs, one at a time and in order, on this thread, and the server awaits its
future. The browser starts on the first job that needs it, starts again for
the next job when Chromium went away (killed, crashed), and is closed with
the session.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from teachd.runner.run import RunOptions, check_display, open_chromium

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

    from teachd.runner.policy import RunPolicy

T = TypeVar("T")


@dataclass
class Browser:
    context: BrowserContext
    page: Page  # the tab actions go to: the newest one, as a person's focus follows a new tab

    def follow(self, page: Page) -> None:
        self.page = page
        page.on("close", lambda _p: self._back())

    def alive(self) -> bool:
        browser = self.context.browser
        return browser is None or browser.is_connected()

    def _back(self) -> None:
        open_pages = [p for p in self.context.pages if not p.is_closed()]
        if open_pages and self.page.is_closed():
            self.page = open_pages[-1]


class BrowserWorker:
    def __init__(self, opts: RunOptions, policy: RunPolicy, name: str = "teachd-mcp-browser") -> None:
        self.opts, self.policy, self.name = opts, policy, name
        self._jobs: queue.Queue[tuple[Callable[[Browser], Any], Future[Any]] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, job: Callable[[Browser], T]) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._thread is None:
                check_display(self.opts)  # no browser, no display: said now, in one line
                self._thread = threading.Thread(target=self._serve, name=self.name, daemon=True)
                self._thread.start()
            self._jobs.put((job, future))
        return future

    @property
    def started(self) -> bool:
        """A browser is (or is being) opened for this session."""
        return self._thread is not None

    def close(self, timeout: float = 30) -> None:
        with self._lock:
            thread = self._thread
            if thread is None:
                return
            for future in self._waiting():  # jobs not yet begun never begin: their callers hear so
                future.cancel()
            self._jobs.put(None)
            self._thread = None
        thread.join(timeout)

    def _serve(self) -> None:
        try:
            pending = None  # a job taken while the browser was found gone: it runs on the next one
            while True:
                with open_chromium(self.opts, self.policy) as (context, page):
                    browser = Browser(context, page)
                    context.on("page", browser.follow)
                    while (item := pending or self._jobs.get()) is not None:
                        pending = None
                        if not browser.alive():  # Chromium was killed or crashed: a fresh one for this job
                            pending = item
                            break
                        job, future = item
                        if future.set_running_or_notify_cancel():
                            try:
                                future.set_result(job(browser))
                            except BaseException as exc:  # the caller gets it, the thread goes on
                                future.set_exception(exc)
                    else:
                        return
        except BaseException as exc:  # the browser would not start: every waiting job hears why
            with self._lock:  # no job can slip in between the last look and the thread's end
                self._thread = None
                for future in [*([pending[1]] if pending else []), *self._waiting()]:
                    with contextlib.suppress(Exception):
                        future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise

    def _waiting(self) -> list[Future[Any]]:
        """Take the jobs queued and not begun (under the lock)."""
        taken: list[Future[Any]] = []
        while True:
            try:
                item = self._jobs.get_nowait()
            except queue.Empty:
                return taken
            if item is not None:
                taken.append(item[1])
