"""A skill folder on disk: read a file of it without following a link
swapped in, and write one so a crash never leaves half of it (the files go
to a temporary sibling, each fsynced, which then replaces the folder)."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from teachd.core.errors import LimitExceeded, UnsafePath
from teachd.core.limits import MAX_FILE_BYTES, as_text
from teachd.core.paths import check_relpath


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_skill_folder(parent: Path, slug: str, files: Mapping[str, bytes]) -> Path:
    check_relpath(slug)
    parent.mkdir(parents=True, exist_ok=True)
    final = parent / slug
    tmp = Path(tempfile.mkdtemp(prefix=f".{slug}.", suffix=".tmp", dir=parent))
    try:
        for rel, data in sorted(files.items()):
            path = tmp / check_relpath(rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        tmp.chmod(0o755)
        old = None
        if final.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{slug}.", suffix=".old", dir=parent))
            os.replace(final, old / slug)
        os.replace(tmp, final)
        _fsync_dir(parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def read_plain_text(path: Path, limit: int = MAX_FILE_BYTES, follow: bool = True) -> str:
    """A file's text, within the limit. ``follow=False`` for a folder's own
    files: opened without following a link (a link swapped in after the check
    is refused by the open itself), and only a regular file is read."""
    try:
        fd = os.open(path, os.O_RDONLY | (0 if follow else os.O_NOFOLLOW))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath(f"{path} is a link; a skill holds plain files") from None
        raise
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(f"{path} is not a plain file")
        if info.st_size > limit:
            raise LimitExceeded(f"{path} is {info.st_size} bytes, over the {limit}-byte limit")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise LimitExceeded(f"{path} is over the {limit}-byte limit")
    return as_text(str(path), data)
