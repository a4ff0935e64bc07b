"""Recording format v1 (DESIGN §3.2), parsed from text already read.

Tolerant of what a crash leaves: a torn last line is dropped, events are put
in ``seq`` order, a missing ``stop`` is noted. Anything else malformed is an
error naming the line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FORMAT_VERSION = 1
EVENT_TYPES = frozenset(
    {"start", "page", "click", "input", "key", "scroll", "os_click", "os_key", "pause", "resume", "undo",
     "stop"}
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
    )
