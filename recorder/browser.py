"""The browser side of a recording: Debian's Chromium driven by Playwright,
the capture script in every page and frame, and each report turned into a
Recording event (secrets masked before anything is queued)."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler.fingerprint import fingerprint_image
from compiler.secrets import field_hint, looks_secret, mask_text, mask_url
from compiler.steps import is_step_key
from recorder.bar import COMMANDS, Bar, step_toast
from recorder.crops import black_out, crop_box, grab_screen, to_png
from recorder.errors import BrowserMissing
from recorder.writer import EventWriter, Slot, Ticket

if TYPE_CHECKING:
    from playwright.sync_api import Page

log = logging.getLogger("teachd.recorder")
CAPTURE_JS = Path(__file__).with_name("capture.js")
BINDING = "__teachdEmit"
QUIET_FLAGS = [
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-default-apps",
    "--disable-quic",
    "--disable-features=Translate,MediaRouter,OptimizationHints",
    "--password-store=basic",
]


# Debian's old headless shell: Chromium's engine without the desktop browser around it. Playwright
# itself runs headless Chromium in it; it takes a third of the full browser's CPU
# (bench/headless_shell.py).
HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"


def chromium_path(override: str | None, headless: bool = False) -> str:
    """The Chromium to start: the person's (TEACHD_CHROMIUM) as given; else,
    for a headless browser, Debian's headless shell when it is installed, and
    Debian's Chromium otherwise."""
    if override is None and headless and os.access(HEADLESS_SHELL, os.X_OK):
        return HEADLESS_SHELL
    path = override or "/usr/bin/chromium"
    found = shutil.which(path) if not os.path.isabs(path) else path
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise BrowserMissing(
            f"Chromium not found at {path}: install Debian's chromium or set TEACHD_CHROMIUM"
        )
    return found


def launch_args(cdp_port: int | None) -> list[str]:
    args = list(QUIET_FLAGS)
    if cdp_port:
        args += [f"--remote-debugging-port={cdp_port}", "--remote-debugging-address=127.0.0.1"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to run its sandbox as root
    return args


def _scrub_target(target: dict[str, Any] | None) -> dict[str, Any] | None:
    """Secrets out of a target descriptor: URLs, texts and names masked."""
    if not target:
        return target
    t = dict(target)
    for key in ("name", "text", "label", "heading"):
        if isinstance(t.get(key), str):
            t[key] = mask_text(t[key])[0]
    if t.get("frame_url"):
        t["frame_url"] = mask_url(t["frame_url"])[0]
    attrs = dict(t.get("attrs") or {})
    if attrs.get("href"):
        attrs["href"] = mask_url(attrs["href"])[0]
    for key in ("title", "aria-label", "placeholder", "aria-placeholder", "data-placeholder", "alt"):
        if isinstance(attrs.get(key), str):
            attrs[key] = mask_text(attrs[key])[0]
    t["attrs"] = attrs
    for key in ("ancestor", "item", "container"):  # a row's or card's name can be what was typed
        if isinstance(t.get(key), dict) and isinstance(t[key].get("name"), str):
            t[key] = {**t[key], "name": mask_text(t[key]["name"])[0]}
    if isinstance(t.get("icon"), dict):
        icon = dict(t["icon"])
        if isinstance(icon.get("title"), str):
            icon["title"] = mask_text(icon["title"])[0]
        t["icon"] = icon
    if isinstance(t.get("editor_css"), str) and mask_text(t["editor_css"])[1]:
        t.pop("editor_css")  # a selector with a secret in it finds nothing worth keeping
    return t


def _viewport(data: Any) -> dict[str, float] | None:
    """The page's own viewport as it reported it (CSS px; dpr), or None."""
    if not isinstance(data, dict):
        return None
    try:
        w, h, dpr = float(data.get("w") or 0), float(data.get("h") or 0), float(data.get("dpr") or 1)
    except (TypeError, ValueError):
        return None
    if not (0 < w <= 100_000 and 0 < h <= 100_000 and 0 < dpr <= 16):
        return None
    return {"w": int(w), "h": int(h), "dpr": round(dpr, 3)}


@dataclass
class BrowserCapture:
    """Turns the capture script's reports into events; one per recording."""

    writer: EventWriter
    headless: bool
    pages: list[Page]
    bar: Bar
    on_secret_mark: Callable[[], None] | None = None
    display: str | None = None
    muted: bool = False  # a repair's lead-in: the replay's own clicks and typing are not the person's
    failures: int = 0  # reports that could not be turned into events (logged; in the stop event)
    frames_written: int = 0
    pending: list[tuple[Slot, Page | None, dict[str, Any]]] = field(default_factory=list)
    active: Page | None = None  # the tab the person last acted in (or that last loaded)
    # The last visible text each tab reported, held in memory until the recording
    # ends (only the final page's is written, as one page_text event).
    page_texts: dict[int, dict[str, Any]] = field(default_factory=dict)
    typed_secrets: set[str] = field(default_factory=set)  # in memory only: kept out of page texts

    def add_tab(self, page: Page) -> None:
        self.tab_of(page)

    def tab_of(self, page: Page) -> int:
        if page not in self.pages:
            self.pages.append(page)
        return self.pages.index(page)

    def on_emit(self, source: dict[str, Any], data: dict[str, Any]) -> dict[str, Any] | None:
        """One report from a page; what it returns goes back to the page's bar."""
        try:
            return self._handle(source.get("page"), data)
        except Exception as exc:  # one bad report must not stop the recording: say so, count it
            self.failures += 1
            log.warning("a %s report from the page was dropped: %s", data.get("kind", "?"),
                        " ".join(str(exc).split())[:200])
            return None

    def _handle(self, page: Page | None, data: dict[str, Any]) -> dict[str, Any] | None:
        kind = str(data.get("kind"))
        if self.muted:  # nothing is recorded yet: the bar only shows what is going on
            return self.bar.state() if kind in ("hello", "bar") else None
        if kind in COMMANDS:
            return self._command(kind, data)
        if kind in ("click", "input", "key") and self.bar.paused:
            return {"toast": "Paused: not recorded", "paused": True}
        if kind == "page_text":
            if page is not None:
                self.page_texts[self.tab_of(page)] = self._page_text(data)
            return None
        if kind in ("click", "input", "key", "page") and page is not None:
            self.active = page
        target = _scrub_target(data.get("target"))
        if kind == "page":
            viewport = _viewport(data.get("viewport"))
            self.writer.put(
                "page",
                url=mask_url(str(data.get("url", "")))[0],
                title=mask_text(str(data.get("title") or ""))[0],
                tab=self.tab_of(page) if page is not None else 0,
                **({"viewport": viewport} if viewport else {}),
                **({"by": "page"} if data.get("by") == "page" else {}),  # the page's own doing
            )
        elif kind == "click":
            slot = self.writer.reserve("click")
            if self._screen_crops():
                box = self._box(data)
                self._fill_click(slot, data, self._screen_crop(data, box), box)
            else:  # Playwright calls cannot run inside a binding callback
                self.pending.append((slot, page, data))
            return self.bar.captured(slot.ticket, step_toast("click", target))
        elif kind == "input":
            return self._typed(data, target)
        elif kind == "key":
            key, modifiers = str(data.get("key", "")), list(data.get("modifiers") or [])
            ticket = self.writer.put("key", key=key, modifiers=modifiers,
                                     url=mask_url(str(data.get("url", "")))[0], target=target)
            if is_step_key(key, tuple(modifiers)):
                return self.bar.captured(ticket, step_toast("key", target, keys="+".join([*modifiers, key])))
        return None

    def _command(self, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        if kind == "marked" and data.get("armed") and not self.bar.armed:
            # a page's arm that came late: the recorder gave the mark to a field typed into first
            return {**self.bar.state(), "unmark": True}
        if kind in ("mark", "marked") and self.on_secret_mark:
            self.on_secret_mark()
        return self.bar.command(kind, data)

    def _typed(self, data: dict[str, Any], target: dict[str, Any] | None) -> dict[str, Any]:
        """An input event. "Mark next field secret" is the recorder's to keep:
        a field typed into while it is armed is that field, even where the page
        had not heard of it yet (a new document's bar learns its state a round
        trip after load, and a person may type first) — masked, and the page
        told to mark it and disarm."""
        arming = self.bar.armed and not data.get("masked") and "checked" not in data \
            and not data.get("option_text")
        ticket, masked = self._input({**data, "masked": True} if arming else data)
        checked = bool(data["checked"]) if "checked" in data else None
        said = self.bar.captured(ticket, step_toast("input", target, masked=masked, checked=checked))
        if not arming:
            return said
        self._command("marked", {})
        return {**self.bar.state(), **said, "masked_field": True}

    def _input(self, data: dict[str, Any]) -> tuple[Ticket, bool]:
        target = data.get("target") or {}
        value = data.get("value")
        sensitive = bool(data.get("masked") or target.get("sensitive") or field_hint(target))
        if not sensitive and isinstance(value, str) and looks_secret(value):
            sensitive = True  # a token pasted into an ordinary field
        if sensitive and isinstance(value, str) and value.strip():
            self.typed_secrets.add(value.strip())
        fields: dict[str, Any] = {"target": _scrub_target(target)}
        if sensitive:
            fields["masked"] = True
        else:
            fields["value"] = "" if value is None else str(value)
            if data.get("option_text"):
                fields["option_text"] = mask_text(str(data["option_text"]))[0]
        if "checked" in data:
            fields["checked"] = bool(data["checked"])
        return self.writer.put("input", **fields), sensitive

    def _page_text(self, data: dict[str, Any]) -> dict[str, Any]:
        """A page's visible text as a page_text event's fields: secrets masked,
        and anything the person typed into a masked field blanked out."""
        text = str(data.get("text") or "")[:20_000]
        for secret in sorted(self.typed_secrets, key=len, reverse=True):
            text = text.replace(secret, " ")
        return {"url": mask_url(str(data.get("url", "")))[0],
                "title": mask_text(str(data.get("title") or ""))[0],
                "text": mask_text(text)[0]}

    def write_page_text(self, live: list[Page]) -> None:
        """The final page's visible text, once, as the recording ends: read
        now from the tab the person was in, else the last text that tab sent
        (the browser may already be closed)."""
        page = self.active if self.active is not None and not self.active.is_closed() else (
            live[-1] if live else None)
        tab = self.tab_of(page) if page is not None else (
            self.pages.index(self.active) if self.active in self.pages else None)
        fields: dict[str, Any] | None = None
        if page is not None:
            try:
                data = page.evaluate("() => window.__teachdPageText ? window.__teachdPageText() : null")
                if isinstance(data, dict):
                    fields = self._page_text(data)
            except Exception:  # the page is going away: what it last sent stands
                fields = None
        if fields is None and tab is not None:
            fields = self.page_texts.get(tab)
        if fields is not None:
            self.writer.put("page_text", **fields, tab=tab or 0)

    def _screen_crops(self) -> bool:
        return not self.headless and bool(self.display)

    @staticmethod
    def _box(data: dict[str, Any]) -> dict[str, int]:
        """The crop's region, in viewport CSS px, around the clicked target."""
        return crop_box((data.get("target") or {}).get("bbox") or {}, data.get("viewport") or {})

    def _fill_click(self, slot: Slot, data: dict[str, Any], crop: Any, box: dict[str, int]) -> None:
        frame, fp = self._store_crop(data, crop, box) if crop is not None else (None, None)
        slot.fill(
            x=data.get("x"), y=data.get("y"), screen_x=data.get("screen_x"),
            screen_y=data.get("screen_y"), button=data.get("button", "left"),
            url=mask_url(str(data.get("url", "")))[0], target=_scrub_target(data.get("target")),
            frame=frame, **({"frame_fp": fp} if fp else {}),
        )

    def drain(self) -> None:
        """Every report a page still holds (typing not yet handed over) taken
        now: the binding answers in order, so once a last hello comes back,
        everything before it has been handled."""
        for page in list(self.pages):
            for frame in [] if page.is_closed() else page.frames:
                try:
                    frame.evaluate("async () => { if (window.__teachdFlushAll) window.__teachdFlushAll();"
                                   " if (window.__teachdEmit) await window.__teachdEmit({kind: 'hello'}); }")
                except Exception:  # a frame going away has nothing left to hand over
                    continue
        self.process_pending()

    def show(self) -> None:
        """Every tab's bar shows the recorder's state now."""
        state = self.bar.state()
        for page in self.pages:
            try:
                page.evaluate("s => window.__teachdBarAnswer && window.__teachdBarAnswer(s)", state)
            except Exception:
                continue

    def process_pending(self) -> None:
        """Take the crops the callbacks asked for (headless: page screenshots),
        skipping any page that has moved on: no crop beats a wrong one."""
        while self.pending:
            slot, page, data = self.pending.pop(0)
            box = self._box(data)
            crop = None
            try:
                if page is not None and not page.is_closed() and page.url == data.get("url"):
                    crop = self._page_crop(page, box)
                    if page.url != data.get("url"):
                        crop = None  # it navigated while the shot was taken
            except Exception:
                crop = None
            self._fill_click(slot, data, crop, box)

    def _screen_crop(self, data: dict[str, Any], box: dict[str, int]) -> Any:
        shift = data.get("screen_shift") or {}
        return grab_screen({"x": box["x"] + int(shift.get("x", 0)),
                            "y": box["y"] + int(shift.get("y", 0)), "w": box["w"], "h": box["h"]})

    def _page_crop(self, page: Page, box: dict[str, int]) -> Any:
        import io

        from PIL import Image

        png = page.screenshot(clip={"x": box["x"], "y": box["y"], "width": box["w"],
                                    "height": box["h"]}, timeout=2000, animations="disabled")
        return Image.open(io.BytesIO(png)).convert("RGB")

    def _store_crop(self, data: dict[str, Any], img: Any,
                    box: dict[str, int]) -> tuple[str | None, dict[str, Any]]:
        """Black out every sensitive field, then write the crop and its fingerprint."""
        target = data.get("target") or {}
        boxes = list(data.get("sensitive_boxes") or [])
        if target.get("sensitive") and target.get("bbox"):
            boxes.append(target["bbox"])
        scale = img.width / box["w"] if box["w"] else 1.0
        img = black_out(img, box, boxes, scale)
        self.frames_written += 1
        name = f"{self.writer.now_ms():09d}-{self.frames_written:04d}.png"
        rel = self.writer.write_frame(name, to_png(img))
        return rel, fingerprint_image(img)
