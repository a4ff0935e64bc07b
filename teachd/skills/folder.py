"""Writing a skill folder so a crash never leaves half of one: the files go
to a temporary sibling (each fsynced), which then replaces the folder."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from teachd.skills.paths import check_relpath


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
