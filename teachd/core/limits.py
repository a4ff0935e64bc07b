"""Per-skill limits (DESIGN §3.4): 32 bundled files besides SKILL.md, 200 KB
each, 1 MB in all, text only, relative paths that stay inside the skill."""

from __future__ import annotations

from collections.abc import Mapping

from teachd.core.errors import LimitExceeded
from teachd.core.paths import check_relpath

MAX_FILES = 32
MAX_FILE_BYTES = 200 * 1024
MAX_TOTAL_BYTES = 1024 * 1024


BINARY_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".pdf", ".zip", ".gz", ".tar", ".woff",
                   ".woff2", ".ttf", ".mp3", ".mp4", ".wasm", ".so", ".dylib", ".exe", ".bin", ".jar")


class BinaryFile(LimitExceeded):
    """A file that is not UTF-8 text: an import leaves it out (and says so)."""


def looks_binary(path: str) -> bool:
    """Known binary by its name alone: left out without being read."""
    return path.lower().endswith(BINARY_SUFFIXES)


def left_out(skipped: list[str]) -> str:
    """The one line an import says about the binary files it left out."""
    return (f"left out {len(skipped)} binary file{'s' if len(skipped) != 1 else ''} "
            f"(skills hold text only): {', '.join(sorted(skipped))}")


def as_text(path: str, data: bytes | str) -> str:
    """Decode a file's bytes as UTF-8 text or refuse it as binary."""
    if isinstance(data, str):
        text = data
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise BinaryFile(f"{path} is a binary file; skills hold text only") from None
    if "\x00" in text:
        raise BinaryFile(f"{path} is a binary file; skills hold text only")
    return text


def check_files(instructions: str, files: Mapping[str, bytes | str]) -> dict[str, str]:
    """Validated files, keyed by normalized relative path, in sorted order."""
    bundled = [p for p in files if check_relpath(p) != "SKILL.md"]
    if len(bundled) > MAX_FILES:
        raise LimitExceeded(f"{len(bundled)} bundled files, over the limit of {MAX_FILES} besides SKILL.md")
    clean: dict[str, str] = {}
    total = len(instructions.encode("utf-8"))
    for raw_path in sorted(files):
        path = check_relpath(raw_path)
        if path == "SKILL.md":
            continue
        text = as_text(path, files[raw_path])
        size = len(text.encode("utf-8"))
        if size > MAX_FILE_BYTES:
            raise LimitExceeded(f"{path} is {size} bytes, over the {MAX_FILE_BYTES}-byte limit")
        total += size
        clean[path] = text
    if len(instructions.encode("utf-8")) > MAX_FILE_BYTES:
        raise LimitExceeded(f"SKILL.md is over the {MAX_FILE_BYTES}-byte limit")
    if total > MAX_TOTAL_BYTES:
        raise LimitExceeded(f"the skill is {total} bytes, over the {MAX_TOTAL_BYTES}-byte limit")
    return clean
