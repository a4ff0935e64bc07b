"""Recordings are kept for a while, then purged (default 14 days): they are
raw material, the skill is what lasts. ``teachd teach`` purges on start; the
daemon's scheduler runs the same function daily. The recording being
written (named by the teach lock's holder) is never touched, however old."""

from __future__ import annotations

import shutil
import time
from collections.abc import Collection
from pathlib import Path

RETENTION_DAYS = 14


def purge_recordings(folder: Path, days: float = RETENTION_DAYS, now: float | None = None,
                     keep: Collection[str] = ()) -> list[str]:
    """Delete recordings (and stray profiles) last written more than ``days``
    ago, except the folders named in ``keep``."""
    if not folder.is_dir():
        return []
    cutoff = (time.time() if now is None else now) - days * 86400
    removed = []
    for entry in sorted(folder.iterdir()):
        if not entry.is_dir() or entry.is_symlink() or entry.name in keep:
            continue
        newest = max((p.stat().st_mtime for p in entry.rglob("*") if p.is_file()),
                     default=entry.stat().st_mtime)
        if newest < cutoff:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
    return removed
