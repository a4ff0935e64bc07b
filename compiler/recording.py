"""Recording format v1 (DESIGN §3.2), parsed from text already read.

Tolerant of what a crash leaves: a torn last line is dropped, events are put
in ``seq`` order, a missing ``stop`` is noted. Anything else malformed is an
error naming the line.

Optional, still v1 (older recordings lack them and read as before): a ``page``
event's ``viewport`` ({w, h, dpr}: the page's own, a headed window minus its
browser chrome), and one ``page_text`` event before ``stop`` ({url, title,
text, tab}: the visible text of the page the person ended on); and, after
``stop``, what the person changed at the review before saving: ``undo``
events for the steps left out, and one ``review`` event ({names: {seq: text},
fixed: [seq], checks: [text]}) — so the recording compiles to the skill saved.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FORMAT_VERSION = 1
EVENT_TYPES = frozenset(
    {"start", "page", "click", "input", "key", "scroll", "os_click", "os_key", "os_input", "os_window",
     "os_text", "pause", "resume", "undo", "page_text", "stop", "review"}
)


class RecordingError(ValueError):
    """The recording cannot be compiled; the message names the line."""


@dataclass(frozen=True)
class Recording:
    id: str
    name: str
    start_url: str
    started_at: str
    recorder: str
    screen: Mapping[str, int]
    events: tuple[dict[str, Any], ...]
    frames: Mapping[str, bytes] = field(default_factory=dict)
    stop_reason: str | None = None
    torn_tail: bool = False
    repair: Mapping[str, Any] | None = None  # a repair's recording: which run, skill, version and step
    viewport: Mapping[str, float] | None = None  # the page's real viewport, when the recorder saw it
    final_page: Mapping[str, Any] | None = None  # the last page_text event: url, title, text, tab


def _viewport_of(events: list[dict[str, Any]]) -> dict[str, float] | None:
    """The first viewport a page reported: the window the demonstration was
    given (a resize later is the person's business, not the skill's)."""
    for e in events:
        vp = e.get("viewport") if e["type"] == "page" else None
        if not isinstance(vp, dict):
            continue
        w, h, dpr = vp.get("w"), vp.get("h"), vp.get("dpr", 1)
        if all(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in (w, h, dpr)):
            return {"w": w, "h": h, "dpr": dpr}
    return None


def _final_page(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    last = next((e for e in reversed(events) if e["type"] == "page_text"), None)
    if last is None:
        return None
    tab = last.get("tab")
    return {"url": str(last.get("url") or ""), "title": str(last.get("title") or ""),
            "text": str(last.get("text") or "")[:20_000],
            "tab": tab if isinstance(tab, int) and not isinstance(tab, bool) else 0}


def _repair_of(start: Mapping[str, Any]) -> dict[str, Any] | None:
    """A repair recording's start event names what it repairs (DESIGN §3.2's
    start event, one optional field more)."""
    info = start.get("repair")
    if info is None:
        return None
    ok = isinstance(info, dict) and isinstance(info.get("step"), int) and info["step"] >= 1 and all(
        isinstance(info.get(k), str) and info[k] for k in ("run", "slug")) and isinstance(
        info.get("version"), int)
    if not ok:
        raise RecordingError("events.jsonl line 1: repair needs run, slug, version and step")
    return {k: info[k] for k in ("run", "slug", "version", "step")}


def parse_recording(events_text: str, frames: Mapping[str, bytes] | None = None) -> Recording:
    lines = events_text.split("\n")
    events: list[dict[str, Any]] = []
    torn = False
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            if number >= len(lines) - 1 and not events_text.endswith("\n"):
                torn = True  # the write a crash interrupted
                continue
            raise RecordingError(f"events.jsonl line {number} is not JSON") from None
        if not isinstance(event, dict):
            raise RecordingError(f"events.jsonl line {number} is not an object")
        if event.get("v") != FORMAT_VERSION:
            raise RecordingError(f"events.jsonl line {number}: unsupported format {event.get('v')!r}")
        if event.get("type") not in EVENT_TYPES:
            raise RecordingError(f"events.jsonl line {number}: unknown type {event.get('type')!r}")
        if not isinstance(event.get("seq"), int) or not isinstance(event.get("t"), int | float):
            raise RecordingError(f"events.jsonl line {number}: seq and t are required")
        events.append(event)
    if not events or events[0].get("type") != "start":
        raise RecordingError("events.jsonl must begin with a start event")
    events.sort(key=lambda e: e["seq"])
    start = events[0]
    if not isinstance(start.get("url"), str) or not isinstance(start.get("name"), str):
        raise RecordingError("the start event needs name and url")
    stop = next((e for e in reversed(events) if e["type"] == "stop"), None)
    rec_id = start.get("id") or "rec-" + hashlib.sha256(events_text.encode()).hexdigest()[:12]
    return Recording(
        id=str(rec_id),
        name=start["name"],
        start_url=start["url"],
        started_at=str(start.get("started_at", "")),
        recorder=str(start.get("recorder", "unknown")),
        screen=dict(start.get("screen") or {}),
        events=tuple(events),
        frames=dict(frames or {}),
        stop_reason=stop.get("reason") if stop else None,
        torn_tail=torn,
        repair=_repair_of(start),
        viewport=_viewport_of(events),
        final_page=_final_page(events),
    )
