"""What the page is still doing after a step acted, and the waits on it.

Split from the replay executor (teachd.runner.replay) so that the one notion
of "the page has settled" lives in one place: the requests a page has under
way (``Traffic``, from Playwright's own events), the document's change clock
the capture looks install (``CLOCK``), and the two waits built on them — a
settle (quiet for ``QUIET_MS``, never longer than ``SETTLE_MAX``) and, before
a submit, the wait for a save the page has under way (``SAVE_MAX``). Locating
reads the clock's start, performing waits on both; neither decides here what
counts as the step's effect.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from playwright.sync_api import Error as PlaywrightError

from compiler.secrets import mask_url

if TYPE_CHECKING:
    from playwright.sync_api import Page

QUIET_MS = 150  # the page counts as settled once this long without mutations or requests
SETTLE_MAX = 2.0  # seconds one settle may take, however busy the page stays
RECENT = 5.0  # seconds: requests started this recently are waited on before a submit
# seconds a submit waits for a save the page has under way (a fetch or XHR that writes: POST, PUT,
# PATCH, DELETE), beyond a settle's SETTLE_MAX: submitting while the app is still saving the same
# form races it (Wagtail 8's autosave creates the page, and a Publish sent meanwhile creates it again)
SAVE_MAX = 10.0
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_TRAFFIC = frozenset({"fetch", "xhr", "document"})  # requests a step's effect can wait on
# Milliseconds since the element's document last changed (a style-only change
# is animation, not the app answering), with the clock installed on first use.
# What the page changes while it handles a key (in its handlers and the
# microtasks they queue, up to the end of the key's dispatch) is its answer to
# that key, whole once the key's events are: it does not move the clock. What
# it changes later (a frame, a timer, a response) does: the page is still
# working. (A handler that stops the event before it reaches the window: its
# key counts until the next task.) A timer a key's handlers set (up to
# ``KEYED_TIMER_MS``) is the page answering later: while one is due, the
# page is not quiet, however fast the keys came (a count drawn 300 ms after
# each key, a debounced sync); one it clears is not waited for.
KEYED_TIMER_MS = 1000
CLOCK = """
  const w = e.ownerDocument.defaultView;
  if (w.__teachdChangedAt === undefined) {
    w.__teachdChangedAt = -1e9;
    let keyed = false;
    const due = new Set(), set = w.setTimeout, clear = w.clearTimeout;
    const KEYED = """ + str(KEYED_TIMER_MS) + """;
    const off = () => { keyed = false; };
    const on = () => { if (!keyed) { keyed = true; set.call(w, off, 0); } };
    for (const t of ["keydown", "keypress", "beforeinput", "input", "keyup"]) {
      w.addEventListener(t, on, true);
      w.addEventListener(t, () => w.queueMicrotask(off));
    }
    w.setTimeout = function (fn, ms, ...rest) {
      if (!keyed || typeof fn !== "function" || !(Number(ms || 0) <= KEYED)) {
        return set.call(w, fn, ms, ...rest);
      }
      const id = set.call(w, function (...a) { due.delete(id); return fn.apply(this, a); }, ms, ...rest);
      due.add(id);
      return id;
    };
    w.clearTimeout = function (id) { due.delete(id); return clear.call(w, id); };
    w.__teachdDue = due;
    new w.MutationObserver((records) => {
      if (!keyed && records.some((r) => r.type !== "attributes" || (r.attributeName !== "style"
          && !String(r.attributeName).startsWith("data-teachd")))) w.__teachdChangedAt = w.performance.now();
    }).observe(e.ownerDocument, {subtree: true, childList: true, attributes: true, characterData: true});
  }
  const quiet = () => w.__teachdDue.size ? 0 : Math.min(1e9, w.performance.now() - w.__teachdChangedAt);
"""


@dataclass(frozen=True)
class Write:
    """A request that may have changed the app's data (POST, PUT, PATCH,
    DELETE), answered: which step sent it, where, and the app's status."""

    step: int
    method: str
    path: str  # the address's path, secrets masked: its query and fragment are data, not place
    status: int | None  # None: sent, and no answer yet (it may still change something)

    def as_dict(self) -> dict[str, Any]:
        return {"step": self.step, "method": self.method, "path": self.path, "status": self.status}


def _path(url: str) -> str:
    return mask_url(urlsplit(url).path or "/")[0]


class Traffic:
    """The requests a page has under way (fetch, XHR, documents), from
    Playwright's own events: what a settle waits on besides mutations. Only
    requests started since a step began count: a long poll opened earlier is
    not the step's effect. A settle after typing may leave documents out:
    a frame still loading with its page (heard of only once the replay next
    asks the browser anything) is not the app taking what was typed, and a
    typed key that navigates ends the settle anyway."""

    def __init__(self) -> None:
        self.pending: dict[int, tuple[float, bool, bool]] = {}  # request → (started, a document, a save)
        self.sent_at: dict[int, Write] = {}  # a write sent, not answered yet (its step, method, path)
        self.last = -1e9  # monotonic time of the last start or end
        self.last_app = -1e9  # ... of a fetch or XHR
        self.pages: list[Any] = []
        self.step = 0  # the step acting now: what it writes is its doing
        self.writes: list[Write] = []  # every write the app answered, in order

    def watch(self, page: Page) -> None:
        if any(p is page for p in self.pages):
            return
        self.pages.append(page)
        page.on("request", self._start)
        page.on("requestfinished", self._end)
        page.on("requestfailed", self._end)
        page.on("response", self._answered)

    def close(self) -> None:
        for page in self.pages:
            for event, fn in (("request", self._start), ("requestfinished", self._end),
                              ("requestfailed", self._end), ("response", self._answered)):
                try:
                    page.remove_listener(event, fn)
                except (KeyError, ValueError):
                    pass
        self.pages.clear()

    def _start(self, request: Any) -> None:
        if request.resource_type in _TRAFFIC:
            document = request.resource_type == "document"
            save = not document and request.method in _WRITES
            self.pending[id(request)] = (time.monotonic(), document, save)
            if request.method in _WRITES:
                self.sent_at[id(request)] = Write(self.step, request.method, _path(request.url), None)
            self._heard(document)

    def _answered(self, response: Any) -> None:
        """A write the app answered (whatever its status: it was received,
        and may have changed something): the evidence of a half change."""
        if (sent := self.sent_at.pop(id(response.request), None)) is not None:
            self.writes.append(Write(sent.step, sent.method, sent.path, response.status))

    def all_writes(self) -> list[Write]:
        """The writes answered, then those still waiting for their answer."""
        return [*self.writes, *self.sent_at.values()]

    def _end(self, request: Any) -> None:
        self.sent_at.pop(id(request), None)  # answered (told above, as its response came) or failed
        if (was := self.pending.pop(id(request), None)) is not None:
            self._heard(was[1])

    def _heard(self, document: bool) -> None:
        self.last = time.monotonic()
        if not document:
            self.last_app = self.last

    def quiet_ms(self, since: float, documents: bool = True) -> float:
        """Milliseconds without traffic the step started; 0 while some is under way."""
        if self.under_way(since, documents):
            return 0.0
        last = self.last if documents else self.last_app
        return 1e9 if last < since else (time.monotonic() - last) * 1000

    def under_way(self, since: float, documents: bool = True) -> bool:
        return any(t >= since and (documents or not doc) for t, doc, _save in self.pending.values())

    def loading(self) -> bool:
        """A document is under way in some frame: the page has not arrived yet."""
        return any(doc for _t, doc, _save in self.pending.values())

    def saving(self) -> bool:
        """A fetch or XHR that writes is under way, started in the last
        ``RECENT + SAVE_MAX`` (one whose end was never heard, its tab closed,
        holds nothing up for long)."""
        since = time.monotonic() - RECENT - SAVE_MAX
        return any(save and t >= since for t, _doc, save in self.pending.values())


    def settle(self, page: Page, probe: Callable[[], float | None], since: float, answered: bool = False,
               documents: bool = True) -> int:
        """Until the page has been quiet for ``QUIET_MS`` (``probe``: ms since
        its document last changed, or None to be asked again at once — it
        just acted, and the request that may have started is heard of by the
        next look; requests started since ``since`` under way or just ended
        count as change; with ``answered``, only while under way; without
        ``documents``, fetch and XHR only), at most
        ``SETTLE_MAX``. A quiet page costs a look, no wait; a page that
        navigated meanwhile is not waited on here. Returns how many times it
        waited (0: the page was quiet)."""
        deadline = time.monotonic() + SETTLE_MAX
        waits = 0
        while True:
            try:
                dom = probe()
            except PlaywrightError:
                return waits  # the document went away (a navigation): the next step waits on the new one
            if dom is None:
                continue
            if answered:
                net = 0.0 if self.under_way(since, documents) else 1e9
            else:
                net = self.quiet_ms(since, documents)
            if dom >= (time.monotonic() - since) * 1000:
                dom = 1e9  # unchanged since the step acted: what it last did answered an earlier step
            quiet = min(float(dom), net)
            if quiet >= QUIET_MS:
                return waits
            # a request under way is heard of as it ends (its event), looked at soon after
            wait = QUIET_MS - quiet if quiet > 0 else 50.0
            if time.monotonic() + wait / 1000 > deadline:
                return waits
            waits += 1
            page.wait_for_timeout(max(wait, 10.0))  # requests' events are heard meanwhile

    def await_saves(self, page: Page) -> bool:
        """Before a submit, until no save of the page's own is under way (at
        most ``SAVE_MAX``): True when it waited."""
        deadline = time.monotonic() + SAVE_MAX
        waited = False
        while self.saving() and time.monotonic() < deadline:
            waited = True
            page.wait_for_timeout(50)  # the request's end is heard meanwhile
        return waited
