"""Where the browser may go, judged for every frame and every request —
not only the top page's URL.

A :class:`RequestGuard` is Chromium's own request interception (the DevTools
``Fetch`` domain, on the *browser* target): every page, tab, frame
(out-of-process cross-origin iframes included), service worker and redirect
hop is paused before a byte is sent, and judged by the guard's layers — the
scope of a replay or of an MCP session's taught skills (documents only), the
network rule of a non-owner's session (every request). A refused request
fails as ``Aborted`` (no error page commits; the frame stays where it was),
so the server behind it receives nothing. Where a person can be asked, the
layer asks first (``ask``) and a yes lets that one request through; the
refusals are kept, and the caller turns them into a
:class:`~teachd.core.errors.PolicyStop` that says what was stopped.

Why not Playwright's ``route``: it shows a handler only a request's first
hop (Chromium follows a redirect on its own), and answering a page from
``route.fetch`` + ``fulfill`` makes Chromium treat it as a public page (its
Local Network Access checks then block a local app's own requests).

Callbacks run on the Playwright thread while a Playwright call waits (the
sync API's rule), so asking from here blocks that thread until the person
answers — which is what a question should do.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Error as PlaywrightError

from compiler import urls
from teachd.core.errors import PolicyStop, Unavailable

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, CDPSession, Frame, Page, WebSocketRoute

Judge = Callable[[str], "str | None"]  # URL → why it may not be reached, or None
Ask = Callable[[str, str, str], bool]  # (URL, where: "the page" | "a frame" | …, why) → allowed?

# The element's own frame, as its document reads it: its URL, or (about:srcdoc,
# about:blank inheriting an origin) its origin; "null" for an opaque origin.
_LOCATION = "e => { const u = e.ownerDocument.URL; return /^https?:/i.test(u) ? u : String(self.origin); }"
_FOCUSED = ("() => document.hasFocus() && !['IFRAME', 'FRAME'].includes("
            "(document.activeElement || {}).tagName)")


@dataclass(frozen=True)
class Stopped:
    url: str
    where: str  # "the page", "a frame", "a request", "a WebSocket"
    why: str
    sent: bool = False  # True only for the backstop: a frame that committed without being judged

    def describe(self) -> str:
        tail = ("the request had been sent, the page was not kept" if self.sent
                else "it was not loaded and nothing was sent to it")
        return f"{self.where} would have opened {self.url} — {self.why}; {tail}"


@dataclass(frozen=True, eq=False)
class Layer:
    """One rule of a guard: ``judge`` decides; ``navigations_only`` leaves
    subresources (images, scripts, fetches) alone — the scope guard judges
    where pages and frames go, the network guard every request; ``ask`` (if
    any) is asked before a refusal."""

    judge: Judge
    navigations_only: bool = True
    ask: Ask | None = None

    def applies(self, navigation: bool) -> bool:
        return navigation or not self.navigations_only


# The guard rides on the browser object itself, so it lives and dies with it.
# A table keyed weakly by browser would never let go: the guard's DevTools
# session reaches back to its browser, so every session's whole Playwright
# (about 300 kB) stayed in a long-lived daemon.
_GUARD = "_teachd_request_guard"


def guard_for(context: BrowserContext) -> RequestGuard:
    """The one guard of a browser (installed on first use): the scope of a
    replay and the network rule of an MCP session are layers of the same
    interception, so neither can wave a request past the other."""
    browser = context.browser
    if browser is None:  # a persistent context (the recorder's): nothing here drives one
        raise Unavailable("this browser cannot be guarded (no browser-level session)")
    guard: RequestGuard | None = getattr(browser, _GUARD, None)
    if guard is None:
        guard = RequestGuard(browser.new_browser_cdp_session())
        setattr(browser, _GUARD, guard)
    guard.watch(context)
    return guard


class RequestGuard:
    """Chromium's own request interception (the DevTools ``Fetch`` domain) on
    the browser target: it pauses every request of every page, frame
    (out-of-process iframes included), tab and service worker — and every
    redirect hop, which Playwright's ``route`` never shows — before it is
    sent. The page is never answered from here (no ``fulfill``), so what the
    browser knows about the response (its address space, its cookies) is
    Chromium's own."""

    def __init__(self, cdp: CDPSession) -> None:
        self.cdp = cdp
        self.layers: list[Layer] = []
        self.stopped: list[Stopped] = []
        self._permits: set[str] = set()  # approved for the call under way
        self._approved: set[str] = set()  # ever approved: their frames' commits are no stop
        self._mode = "none"
        self._pages: set[str] = set()  # target ids of top-level pages (= their main frames' ids)
        self._contexts: list[BrowserContext] = []
        self._sockets = False  # WebSockets routed (Playwright's own; Fetch does not see them)
        cdp.on("Fetch.requestPaused", self._paused)

    # -- wiring ------------------------------------------------------------
    def watch(self, context: BrowserContext) -> None:
        if any(c is context for c in self._contexts):
            return
        self._contexts.append(context)
        if self._sockets:
            context.route_web_socket("**/*", self._websocket)
        for page in context.pages:
            self._watch(page)
        context.on("page", self._watch)

    def add(self, layer: Layer) -> Layer:
        self.layers.append(layer)
        self._sync()
        return layer

    def drop(self, layer: Layer) -> None:
        self.layers = [x for x in self.layers if x is not layer]
        self._sync()

    def _sync(self) -> None:
        """Pause only what some layer judges: documents for the scope, every
        request for the network rule, nothing when no rule holds."""
        mode = ("all" if any(not x.navigations_only for x in self.layers)
                else "documents" if self.layers else "none")
        if mode == self._mode:
            return
        if mode == "none":
            self.cdp.send("Fetch.disable")
        else:
            pattern: dict[str, str] = {"urlPattern": "*", "requestStage": "Request"}
            if mode == "documents":
                pattern["resourceType"] = "Document"
            self.cdp.send("Fetch.enable", {"patterns": [pattern]})
        if mode == "all" and not self._sockets:  # only a rule on every request judges WebSockets
            self._sockets = True
            for context in self._contexts:
                context.route_web_socket("**/*", self._websocket)
        self._mode = mode

    def permit(self, url: str) -> None:
        """One navigation to exactly ``url`` was already approved (an
        explicit ``goto`` the gate asked about): it is not asked again."""
        web = urls.parse_web(url)
        self._permits.add(web.href if web else url)
        self._approved.add(web.href if web else url)

    def take(self) -> list[Stopped]:
        out, self.stopped = self.stopped, []
        self._permits.clear()
        return out

    def raise_stops(self) -> None:
        """What was stopped since the last look, as the one error that says so."""
        stops = self.take()
        if stops:
            raise PolicyStop("stopped: " + "; ".join(s.describe() for s in stops))

    # -- judging -------------------------------------------------------------
    def _verdict(self, url: str, where: str, navigation: bool) -> str | None:
        """None when ``url`` may be reached (judged, permitted, or approved now)."""
        web = urls.parse_web(url)
        for layer in list(self.layers):
            if not layer.applies(navigation):
                continue
            if navigation and web is not None and web.href in self._permits and layer.ask is not None:
                continue  # approved already (only a layer that could ask can be answered)
            why = layer.judge(url)
            if why is None:
                continue
            if layer.ask is not None and layer.ask(url, where, why):
                if web is not None:
                    self._permits.add(web.href)
                    self._approved.add(web.href)  # its frame's commit (maybe after this call) is no stop
                continue
            return why
        return None

    def _where(self, event: dict[str, Any]) -> str:
        kind = str(event.get("resourceType") or "Other")
        if kind != "Document":
            return f"a request ({kind.lower()})"
        frame = str(event.get("frameId") or "")
        if frame and frame not in self._pages:
            with contextlib.suppress(PlaywrightError):
                infos = self.cdp.send("Target.getTargets").get("targetInfos", [])
                self._pages = {str(t["targetId"]) for t in infos if t.get("type") == "page"}
        where = "the page" if frame in self._pages else "a frame"
        return where + (" (redirected)" if event.get("redirectedRequestId") else "")

    def _paused(self, event: dict[str, Any]) -> None:
        request_id, url = event["requestId"], str(event["request"]["url"])
        navigation = event.get("resourceType") == "Document"
        why = None
        if any(layer.applies(navigation) for layer in self.layers):
            where = self._where(event)
            why = self._verdict(url, where, navigation)
            if why is not None:
                self.stopped.append(Stopped(url, where, why))
        with contextlib.suppress(PlaywrightError):  # the request may be gone (its page closed)
            if why is None:
                self.cdp.send("Fetch.continueRequest", {"requestId": request_id})
            else:  # Aborted: no error page commits; the frame stays where it was
                self.cdp.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "Aborted"})

    def _websocket(self, ws: WebSocketRoute) -> None:
        why = self._verdict(ws.url, "a WebSocket", False)
        if why is not None:
            self.stopped.append(Stopped(ws.url, "a WebSocket", why))
            ws.close(code=1008, reason="refused by teachd")
            return
        ws.connect_to_server()

    def _watch(self, page: Page) -> None:
        page.on("framenavigated", self._committed)

    def _committed(self, frame: Frame) -> None:
        """A backstop: a frame that committed somewhere a layer refuses, without
        having been asked (should the interception ever miss a request)."""
        url = frame.url
        web = urls.parse_web(url)
        if web is None or web.href in self._approved or any(s.url == url for s in self.stopped):
            return
        judged = (layer.judge(url) for layer in self.layers if layer.applies(True))
        why = next((w for w in judged if w is not None), None)
        if why is not None:
            where = "the page" if frame.parent_frame is None else "a frame"
            self.stopped.append(Stopped(url, where, why, sent=True))


# One turn of a frame's event loop: the task an action queued (a form's submission, a click's
# navigation) has run by the time it answers.
_TURN = "() => new Promise(done => setTimeout(done, 0))"


def frames_turned(page: Page) -> None:
    """Every frame of ``page`` has run past what the action just done queued,
    so a navigation it started has already reached the browser (and this
    guard) — on a loaded machine the frame may take far longer to get there
    than any fixed pause. A frame that goes away meanwhile is passed over."""
    for frame in list(page.frames):
        with contextlib.suppress(PlaywrightError):
            frame.evaluate(_TURN)


def element_location(target: object) -> str:
    """The URL an element's own frame is judged by (a Playwright Locator)."""
    return str(target.evaluate(_LOCATION))  # type: ignore[attr-defined]


def focused_location(page: Page) -> str:
    """Where keys pressed on the page go: the innermost focused frame's URL
    (its origin for about:srcdoc), else the page's."""
    for frame in reversed(page.frames):
        with contextlib.suppress(PlaywrightError):
            if frame.evaluate(_FOCUSED):
                return str(frame.evaluate("() => /^https?:/i.test(document.URL) ? document.URL "
                                          ": String(self.origin)"))
    return page.url
