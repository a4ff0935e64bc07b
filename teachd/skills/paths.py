"""Paths that come from users, URLs or imported skills never leave their folder.

``check_relpath`` is the pure rule (no decoding, no disk); ``resolve_inside``
adds the disk check with symlinks followed.
"""

from __future__ import annotations

import re
from pathlib import Path

from teachd.errors import UnsafePath

_DRIVE = re.compile(r"^[A-Za-z]:")


def check_relpath(raw: str) -> str:
    """Normalize a relative path to ``a/b/c`` or raise ``UnsafePath``."""
    if not isinstance(raw, str) or not raw:
        raise UnsafePath("empty path")
    if "\x00" in raw or any(ord(c) < 32 for c in raw):
        raise UnsafePath(f"path {raw!r} holds control characters")
    path = raw.replace("\\", "/")
    if path.startswith("/") or _DRIVE.match(path):
        raise UnsafePath(f"absolute path {raw!r} is not allowed")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UnsafePath(f"path {raw!r} leaves its folder")
    if not parts:
        raise UnsafePath(f"path {raw!r} names no file")
    return "/".join(parts)


def resolve_inside(root: Path, rel: str) -> Path:
    """The real path of ``root/rel``; raises if it (or a symlink in it) escapes."""
    clean = check_relpath(rel)
    base = root.resolve()
    target = (base / clean).resolve()
    if target != base and not target.is_relative_to(base):
        raise UnsafePath(f"path {rel!r} resolves outside the skill folder")
    return target
