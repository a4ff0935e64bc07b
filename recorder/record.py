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
    from playwright.sync_api import BrowserContext, Page

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
    exe = chromium_path(opts.chromium)
    if not opts.headless and not opts.display:
        raise NoDisplay("no display to show the browser on: run on a desktop, or pass --headless")
    stop = stop_event or threading.Event()
    reason = {"value": "stopped"}

    def on_signal(signum: int, _frame: Any) -> None:
        reason["value"] = signal.Signals(signum).name
        stop.set()

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, on_signal)

    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    started = datetime.now(UTC)
    writer: EventWriter | None = None
    profile = opts.folder.parent / f".profile-{opts.folder.name}"
    desktop = None
    capture: BrowserCapture | None = None
    frames = 0
    ok = False
    try:
        with sync_playwright() as pw:
            try:
                # A person's window is real, not emulated: the page reflows when
                # they resize it, and screen crops line up with the page.
                size = {"width": opts.viewport["w"], "height": opts.viewport["h"]}
                ctx = pw.chromium.launch_persistent_context(
                    str(profile), executable_path=exe, headless=opts.headless,
                    args=launch_args(opts.cdp_port)
                    + ([] if opts.headless else [f"--window-size={size['width']},{size['height']}"]),
                    **({"viewport": size} if opts.headless else {"no_viewport": True}),
                )
            except PlaywrightError as exc:
                raise RecorderError(f"Chromium did not start: {first_line(exc)}") from None
            writer = EventWriter(opts.folder)  # t = 0 once the browser is up
            pages: list[Page] = []
            def stop_from_bar() -> None:
                reason["value"] = "stopped from the recording bar"
                stop.set()

            bar = Bar(opts.name, writer, on_stop=stop_from_bar)
            capture = BrowserCapture(writer=writer, headless=opts.headless, pages=pages, bar=bar,
                                     display=opts.display, muted=opts.lead_in is not None)
            def on_close(*_: Any) -> None:
                if not stop.is_set():
                    reason["value"] = "browser closed"
                stop.set()

            ctx.on("close", on_close)
            ctx.on("page", capture.add_tab)
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            capture.tab_of(page)

            def start(url: str, **extra: Any) -> None:
                writer.put("start", name=opts.name, url=mask_url(url)[0],
                           screen={"w": opts.viewport["w"], "h": opts.viewport["h"]},
                           recorder=f"teachd-recorder {__version__}", id=opts.folder.name,
                           started_at=started.isoformat(timespec="seconds"), **extra)

            if opts.lead_in is None:
                start(opts.url)
            ctx.expose_binding(BINDING, capture.on_emit)
            ctx.add_init_script(path=str(CAPTURE_JS))
            if opts.lead_in is not None:
                bar.banner = "Replaying the steps before the one to show you…"
                lead = opts.lead_in(ctx, page)
                page = lead.page
                capture.drain()  # what the replay typed is the replay's, not the person's
                capture.muted, bar.banner = False, lead.banner
                tab = capture.tab_of(page)  # the lead-in may have gone on in a new tab
                start(page.url, **lead.start, **({"tab": tab} if tab else {}))
                capture.show()
            else:
                try:
                    page.goto(opts.url, wait_until="domcontentloaded", timeout=20_000)
                except PlaywrightError as exc:
                    raise RecorderError(f"cannot open {opts.url}: {first_line(exc)}") from None
            if opts.os_input and opts.display:
                desktop = _start_desktop(writer)
            if opts.on_ready:
                opts.on_ready({"recording_dir": str(opts.folder), "cdp_port": opts.cdp_port})
            commands = Commands(opts.control)
            while not stop.is_set():
                if writer.failure is not None:  # the disk is full: stop here, what was written is whole
                    reason["value"] = "the disk is full"
                    break
                live = [p for p in ctx.pages if not p.is_closed()]
                if not live:
                    reason["value"] = "browser closed"
                    break
                try:
                    live[-1].wait_for_timeout(POLL_MS)
                    capture.process_pending()
                    for command in commands.new():
                        _apply(command, capture, live)
                except PlaywrightError:
                    if not [p for p in ctx.pages if not p.is_closed()]:
                        reason["value"] = "browser closed"
                        break
            capture.process_pending()
            frames = capture.frames_written
            with contextlib.suppress(Exception):
                live = [p for p in ctx.pages if not p.is_closed()]
                if live:  # let the page hand over typing it still holds
                    live[-1].evaluate("window.dispatchEvent(new Event('beforeunload'))")
                    live[-1].wait_for_timeout(POLL_MS)
            try:  # the final page's visible text, for the skill's success check
                live = [p for p in ctx.pages if not p.is_closed()]
            except Exception:
                live = []
            with contextlib.suppress(Exception):
                capture.write_page_text(live)
            with contextlib.suppress(Exception):
                ctx.close()
        ok = True
    finally:
        if desktop is not None:
            desktop.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if writer is not None:
            if ok:
                lost = {"browser_reports_dropped": capture.failures if capture else 0,
                        "desktop_capture": "on" if desktop is not None else (
                            "off" if not (opts.os_input and opts.display) else "failed")}
                writer.put("stop", reason=reason["value"], **lost)
            writer.close(complete=ok)
        _rmtree_quiet(profile)
    failure = writer.failure if writer else None
    return Outcome(opts.folder, reason["value"], writer.written if writer else 0, frames,
                   disk_full=(failure.strerror or str(failure)) if failure else None)


class Commands:
    """Bar commands appended to a file by another process (one JSON object a
    line); each is read once."""

    def __init__(self, path: Path | None) -> None:
        self.path, self.offset = path, 0
        if path is not None:
            path.write_text("")  # a new recording starts with no commands
            path.chmod(0o600)

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
