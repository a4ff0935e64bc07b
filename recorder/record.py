"""One recording from start to stop: launch, capture, and stop cleanly on
SIGINT/SIGTERM, on the browser being closed, or on ``teachd teach stop``."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler.secrets import mask_url
from recorder import __version__
from recorder.bar import COMMANDS, Bar
from recorder.browser import BINDING, CAPTURE_JS, BrowserCapture, chromium_path, launch_args
from recorder.errors import NoDisplay, RecorderError, first_line
from recorder.writer import EventWriter

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, Playwright

POLL_MS = 50
log = logging.getLogger("teachd.recorder")


@dataclass
class TeachOptions:
    name: str
    url: str
    folder: Path
    chromium: str | None = None
    display: str | None = None  # the X display (None: none); Chromium, mss and pynput use it
    cdp_port: int | None = None
    headless: bool = False
    os_input: bool = True
    viewport: dict[str, int] = field(default_factory=lambda: {"w": 1280, "h": 800})
    control: Path | None = None  # JSON lines of bar commands from elsewhere (the daemon's Teach page)
    on_ready: Callable[[dict[str, Any]], None] | None = None
    lead_in: Callable[[BrowserContext, Page], LeadIn] | None = None  # a repair: replay up to the step


@dataclass
class LeadIn:
    """What a repair's lead-in leaves: the tab the person goes on in, what
    the bar asks them to show, and what the start event says is repaired."""

    page: Page
    banner: str
    start: dict[str, Any]


@dataclass
class Outcome:
    folder: Path
    reason: str
    events: int
    frames: int
    disk_full: str | None = None  # the write that failed: the recording stopped there, whole up to it


def new_recording_id(now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    return f"rec-{now:%Y%m%d-%H%M%S}-{os.urandom(3).hex()}"


def record(opts: TeachOptions, stop_event: threading.Event | None = None) -> Outcome:
    """Record until a stop condition; the Recording is complete when this returns."""
    return _Recording(opts, stop_event).run()


@dataclass
class _Live:
    """The browser once it is up, with what turns its reports into events."""

    ctx: BrowserContext
    writer: EventWriter
    capture: BrowserCapture


class _Recording:
    """One run of ``record``.

    Its state is what the cleanup needs to know about however the run ends (a
    signal, the bar's Stop, the browser closing, a full disk, an error midway):
    the writer and the capture exist only once the browser is up, the desktop
    capture only if it started. ``_finish`` relies on that to close exactly
    what was opened, and to write the stop event only for a run that got to
    its end, so a recording is always whole up to where it stopped.
    """

    started: datetime  # set once Playwright is imported, just before the browser starts

    def __init__(self, opts: TeachOptions, stop_event: threading.Event | None) -> None:
        self.opts = opts
        self.stop = stop_event or threading.Event()
        self.reason = "stopped"  # what the stop event and the Outcome say ended it
        self.previous: dict[signal.Signals, Any] = {}  # signal handlers to put back
        self.profile = opts.folder.parent / f".profile-{opts.folder.name}"
        self.writer: EventWriter | None = None
        self.capture: BrowserCapture | None = None
        self.desktop: Any = None
        self.frames = 0
        self.ok = False  # the run reached its end: the recording gets its stop event

    def run(self) -> Outcome:
        """Refuse early (no Chromium, no display) before anything is changed;
        from then on, whatever happens, the signals are given back, the
        profile is removed and the events file is closed."""
        exe = chromium_path(self.opts.chromium, self.opts.headless)
        if not self.opts.headless and not self.opts.display:
            raise NoDisplay("no display to show the browser on: run on a desktop, or pass --headless")
        self._trap_signals()

        from playwright.sync_api import sync_playwright

        self.started = datetime.now(UTC)
        try:
            with sync_playwright() as pw:
                self._in_browser(self._launch(pw, exe))
            self.ok = True
        finally:
            self._finish()
        return self._outcome()

    # -- stopping: every way a recording ends says why ---------------------

    def _trap_signals(self) -> None:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.previous[sig] = signal.signal(sig, self._on_signal)

    def _restore_signals(self) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self.reason = signal.Signals(signum).name
        self.stop.set()

    def _stop_from_bar(self) -> None:
        self.reason = "stopped from the recording bar"
        self.stop.set()

    def _on_close(self, *_: Any) -> None:
        if not self.stop.is_set():
            self.reason = "browser closed"
        self.stop.set()

    # -- the browser and its pages -----------------------------------------

    def _launch(self, pw: Playwright, exe: str) -> BrowserContext:
        from playwright.sync_api import Error as PlaywrightError

        opts = self.opts
        try:
            # A person's window is real, not emulated: the page reflows when
            # they resize it, and screen crops line up with the page.
            size = {"width": opts.viewport["w"], "height": opts.viewport["h"]}
            _without_password_manager(self.profile)
            return pw.chromium.launch_persistent_context(
                str(self.profile), executable_path=exe, headless=opts.headless,
                args=launch_args(opts.cdp_port)
                + ([] if opts.headless else [f"--window-size={size['width']},{size['height']}"]),
                **({"viewport": size} if opts.headless else {"no_viewport": True}),
            )
        except PlaywrightError as exc:
            raise RecorderError(f"Chromium did not start: {first_line(exc)}") from None

    def _in_browser(self, ctx: BrowserContext) -> None:
        live = self._wire(ctx)
        page = ctx.pages[0] if ctx.pages else ctx.new_page()
        live.capture.tab_of(page)
        self._begin(live, page)
        if self.opts.os_input and self.opts.display:
            self.desktop = _start_desktop(live.writer)
        if self.opts.on_ready:
            self.opts.on_ready({"recording_dir": str(self.opts.folder), "cdp_port": self.opts.cdp_port})
        self._poll(live)
        self._wind_down(live)

    def _wire(self, ctx: BrowserContext) -> _Live:
        """The writer is kept as soon as it exists (t = 0 once the browser is
        up), so that a failure from here on still closes the events file."""
        writer = self.writer = EventWriter(self.opts.folder)
        bar = Bar(self.opts.name, writer, on_stop=self._stop_from_bar)
        capture = self.capture = BrowserCapture(
            writer=writer, headless=self.opts.headless, pages=[], bar=bar,
            display=self.opts.display, muted=self.opts.lead_in is not None)
        ctx.on("close", self._on_close)
        ctx.on("page", capture.add_tab)
        return _Live(ctx, writer, capture)

    def _write_start(self, live: _Live, url: str, **extra: Any) -> None:
        opts = self.opts
        live.writer.put("start", name=opts.name, url=mask_url(url)[0],
                        screen={"w": opts.viewport["w"], "h": opts.viewport["h"]},
                        recorder=f"teachd-recorder {__version__}", id=opts.folder.name,
                        started_at=self.started.isoformat(timespec="seconds"), **extra)

    def _begin(self, live: _Live, page: Page) -> None:
        """The start event comes first in the recording: a plain recording
        writes it before any page can report, a repair only once its lead-in
        has replayed (what the replay did is not the person's)."""
        if self.opts.lead_in is None:
            self._write_start(live, self.opts.url)
        live.ctx.expose_binding(BINDING, live.capture.on_emit)
        live.ctx.add_init_script(path=str(CAPTURE_JS))
        if self.opts.lead_in is not None:
            self._lead_in(live, page, self.opts.lead_in)
        else:
            self._open(page)

    def _lead_in(self, live: _Live, page: Page, lead_in: Callable[[BrowserContext, Page], LeadIn]) -> None:
        capture = live.capture
        capture.bar.banner = "Replaying the steps before the one to show you…"
        lead = lead_in(live.ctx, page)
        page = lead.page
        capture.drain()  # what the replay typed is the replay's, not the person's
        capture.muted, capture.bar.banner = False, lead.banner
        tab = capture.tab_of(page)  # the lead-in may have gone on in a new tab
        self._write_start(live, page.url, **lead.start, **({"tab": tab} if tab else {}))
        capture.show()

    def _open(self, page: Page) -> None:
        from playwright.sync_api import Error as PlaywrightError

        try:
            page.goto(self.opts.url, wait_until="domcontentloaded", timeout=20_000)
        except PlaywrightError as exc:
            raise RecorderError(f"cannot open {self.opts.url}: {first_line(exc)}") from None

    # -- recording until a stop condition ----------------------------------

    def _poll(self, live: _Live) -> None:
        """Runs until a stop condition, and leaves its reason: the stop event
        (signal, bar, browser's own close), a full disk (what was written is
        whole), or no tab left. Crops and outside commands are taken between
        waits; a Playwright error only ends it if the browser has gone."""
        from playwright.sync_api import Error as PlaywrightError

        commands = Commands(self.opts.control)
        while not self.stop.is_set():
            if live.writer.failure is not None:  # the disk is full: stop here, what was written is whole
                self.reason = "the disk is full"
                break
            pages = _live_pages(live.ctx)
            if not pages:
                self.reason = "browser closed"
                break
            try:
                pages[-1].wait_for_timeout(POLL_MS)
                live.capture.process_pending()
                for command in commands.new():
                    _apply(command, live.capture, pages)
                    commands.done()
            except PlaywrightError:
                if not _live_pages(live.ctx):
                    self.reason = "browser closed"
                    break

    def _wind_down(self, live: _Live) -> None:
        """Whatever the pages still hold is taken before the browser closes:
        pending crops, typing not yet handed over, the final page's visible
        text (the skill's success check). The browser may already be gone,
        so all but the crops are best effort."""
        live.capture.process_pending()
        self.frames = live.capture.frames_written
        with contextlib.suppress(Exception):
            pages = _live_pages(live.ctx)
            if pages:  # let the page hand over typing it still holds
                pages[-1].evaluate("window.dispatchEvent(new Event('beforeunload'))")
                pages[-1].wait_for_timeout(POLL_MS)
        try:  # the final page's visible text, for the skill's success check
            pages = _live_pages(live.ctx)
        except Exception:
            pages = []
        with contextlib.suppress(Exception):
            live.capture.write_page_text(pages)
        with contextlib.suppress(Exception):
            live.ctx.close()

    # -- after the browser -------------------------------------------------

    def _finish(self) -> None:
        """Runs however the run ended. Only a run that reached its end gets a
        stop event (with what was lost on the way); the events file is closed
        either way, marked complete or not."""
        if self.desktop is not None:
            self.desktop.stop()
        self._restore_signals()
        if self.writer is not None:
            if self.ok:
                self.writer.put("stop", reason=self.reason, **self._losses())
            self.writer.close(complete=self.ok)
        _rmtree_quiet(self.profile)

    def _losses(self) -> dict[str, Any]:
        wanted = self.opts.os_input and self.opts.display
        return {"browser_reports_dropped": self.capture.failures if self.capture else 0,
                "desktop_capture": "on" if self.desktop is not None else (
                    "off" if not wanted else "failed")}

    def _outcome(self) -> Outcome:
        failure = self.writer.failure if self.writer else None
        return Outcome(self.opts.folder, self.reason, self.writer.written if self.writer else 0,
                       self.frames, disk_full=(failure.strerror or str(failure)) if failure else None)


def ack_path(control: Path) -> Path:
    """Where a recording says how many of ``control``'s commands it applied."""
    return control.with_name(control.name + ".done")


def _live_pages(ctx: BrowserContext) -> list[Page]:
    return [p for p in ctx.pages if not p.is_closed()]


class Commands:
    """Bar commands appended to a file by another process (one JSON object a
    line); each is read once, and once applied, counted in ``PATH.done``
    (``ack_path``), so the sender can tell the person it holds — a field
    marked secret from the daemon's Teach page is armed before they type."""

    def __init__(self, path: Path | None) -> None:
        self.path, self.offset, self.applied = path, 0, 0
        if path is not None:
            path.write_text("")  # a new recording starts with no commands
            path.chmod(0o600)
            self._ack()

    def _ack(self) -> None:
        assert self.path is not None
        done = ack_path(self.path)
        tmp = done.with_name(done.name + ".tmp")
        tmp.write_text(str(self.applied))
        os.replace(tmp, done)

    def done(self) -> None:
        """One more command applied."""
        self.applied += 1
        if self.path is not None:
            self._ack()

    def new(self) -> list[dict[str, Any]]:
        if self.path is None or not self.path.exists():
            return []
        with self.path.open("rb") as fh:
            fh.seek(self.offset)
            data = fh.read()
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        out = []
        for line in complete.splitlines():
            with contextlib.suppress(ValueError):
                item = json.loads(line)
                if isinstance(item, dict) and item.get("kind") in COMMANDS:
                    out.append(item)
        return out


def _apply(command: dict[str, Any], capture: BrowserCapture, pages: list[Page]) -> None:
    """A command from outside acts as the same button in the page's bar would."""
    kind = str(command["kind"])
    if kind == "mark":  # the field typed into next, in whichever tab or frame, is masked
        for page in pages:
            for frame in page.frames:
                with contextlib.suppress(Exception):
                    frame.evaluate("() => window.__teachdArm && window.__teachdArm()")
    state = capture.bar.command(kind, {})
    for page in pages:  # every tab's bar shows the new state and the toast
        with contextlib.suppress(Exception):
            page.evaluate("s => window.__teachdBarAnswer && window.__teachdBarAnswer(s)", state)


def _start_desktop(writer: EventWriter) -> Any:
    """Desktop input (pynput); None, logged, when the X server will not give
    it: the browser capture still works."""
    try:
        from recorder.a11y import NoAccessibility, open_desktop
        from recorder.desktop import DesktopCapture

        try:
            tree = open_desktop()
        except NoAccessibility as exc:  # clicks (crop, window) and shortcuts still; typing not
            log.warning("desktop widgets are not named and typing there is not recorded: %s", exc)
            tree = None
        desktop = DesktopCapture(writer, tree)
        desktop.start()
        return desktop
    except Exception as exc:
        log.warning("desktop clicks and keys are not recorded: %s", " ".join(str(exc).split())[:200])
        return None


def _rmtree_quiet(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _without_password_manager(profile: Path) -> None:
    """The recorder's Chromium never offers to save a password the person
    typed: kept, it would be on disk in the profile (and the bubble covers
    the page while they demonstrate)."""
    prefs = profile / "Default" / "Preferences"
    if prefs.exists():
        return
    prefs.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    prefs.write_text(json.dumps({"credentials_enable_service": False,
                                 "profile": {"password_manager_enabled": False}}), encoding="utf-8")
