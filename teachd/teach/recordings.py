"""Reading a Recording directory from disk for the (pure) compiler."""

from __future__ import annotations

from pathlib import Path

from compiler.recording import Recording, RecordingError, parse_recording
from teachd.core.errors import InvalidSkill, LimitExceeded, NotFound

MAX_EVENTS_BYTES = 256 * 1024 * 1024
MAX_FRAME_BYTES = 4 * 1024 * 1024


def read_recording(folder: Path) -> Recording:
    events = folder / "events.jsonl"
    if not folder.is_dir():
        raise NotFound(f"{folder} is not a recording directory")
    if not events.is_file():
        raise NotFound(f"{folder} has no events.jsonl")
    if events.stat().st_size > MAX_EVENTS_BYTES:
        raise LimitExceeded(f"{events} is larger than {MAX_EVENTS_BYTES} bytes")
    try:
        text = events.read_bytes().decode("utf-8", errors="replace")
        frames = {}
        frames_dir = folder / "frames"
        if frames_dir.is_dir():
            base = frames_dir.resolve()
            for p in sorted(frames_dir.glob("*.png")):
                real = p.resolve()
                if real.parent != base or not real.is_file():
                    continue  # a symlink out of the recording is not evidence
                if real.stat().st_size <= MAX_FRAME_BYTES:
                    frames[f"frames/{p.name}"] = real.read_bytes()
        return parse_recording(text, frames)
    except RecordingError as exc:
        raise InvalidSkill(f"{folder}: {exc}") from None
