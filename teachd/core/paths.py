"""Paths that come from users, URLs or imported skills never leave their folder.

``check_relpath`` is the pure rule (no decoding, no disk); ``resolve_inside``
adds the disk check with symlinks followed.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from teachd.core.errors import UnsafePath

_DRIVE = re.compile(r"^[A-Za-z]:")


def check_relpath(raw: str) -> str:
    """Normalize a relative path to ``a/b/c`` or raise ``UnsafePath``.

    A stored path is later put into URLs (the skill page's fetches, skill://)
    and onto disks, where another reader may decode what this one kept
    literal: so ``%`` (``%2e%2e``, ``%2f``), ``\\`` and characters that a
    Unicode normalization turns into others (fullwidth ``．．／``, the one-dot
    leader, the fraction slash) are refused, never decoded, as are invisible
    format characters (zero-width, bidi overrides) that make two names look alike:
    beyond ASCII a path holds letters, marks and digits only."""
    if not isinstance(raw, str) or not raw:
        raise UnsafePath("empty path")
    if "\x00" in raw or any(ord(c) < 32 or ord(c) == 127 for c in raw):
        raise UnsafePath(f"path {raw!r} holds control characters")
    if "%" in raw or "\\" in raw:
        raise UnsafePath(f"path {raw!r} holds '%' or '\\': write the path as it is, with '/' between folders")
    if unicodedata.normalize("NFKC", raw) != unicodedata.normalize("NFC", raw):
        raise UnsafePath(f"path {raw!r} holds characters that read as others (e.g. a fullwidth '．' or '／')")
    if any(ord(c) > 127 and unicodedata.category(c)[0] not in "LMN" for c in raw):
        # beyond ASCII, letters, marks and digits only: no division or fraction slash (∕ ⁄),
        # ideographic stop (。), zero-width or bidi character to pass for another name
        raise UnsafePath(f"path {raw!r} holds a symbol, invisible or look-alike character beyond ASCII")
    path = raw
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
