"""A whole skill out of the store, as the seeds carry skills: a folder named
for the skill — its SKILL.md (frontmatter included) and every bundled file
beside it — or that folder in a zip. Both are whole or absent (the folder by
``skills.folder``'s atomic write, the zip by a temporary file linked into
place), and an existing target is never overwritten. The zip is
deterministic (sorted entries, fixed times): one version, one set of bytes."""

from __future__ import annotations

import io
import os
import tempfile
import zipfile
from pathlib import Path

from teachd.core.errors import Conflict
from teachd.core.models import Skill
from teachd.core.paths import check_relpath
from teachd.skills.exchange import export_md
from teachd.skills.folder import write_skill_folder

_EPOCH = (1980, 1, 1, 0, 0, 0)  # zip's earliest time: every entry the same, whenever it is exported


def skill_files(skill: Skill) -> dict[str, str]:
    """Every file of the skill's folder by its path inside it: SKILL.md and
    each bundled file (each path checked again: nothing leaves the folder)."""
    out = {"SKILL.md": export_md(skill)}
    for path, text in sorted(skill.current.files.items()):
        out[check_relpath(path)] = text
    return out


def _free(target: Path) -> None:
    if target.exists() or target.is_symlink():
        raise Conflict(f"{target} exists already: export somewhere else, or remove it first")


def write_folder(skill: Skill, parent: Path) -> Path:
    """``parent/<slug>/`` with the whole skill."""
    _free(parent / skill.slug)
    files = {rel: text.encode("utf-8") for rel, text in skill_files(skill).items()}
    return write_skill_folder(parent, skill.slug, files)


def zip_bytes(skill: Skill) -> bytes:
    """The folder as a zip: ``<slug>/SKILL.md``, ``<slug>/references/…``."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for rel, text in skill_files(skill).items():
            info = zipfile.ZipInfo(f"{skill.slug}/{rel}", date_time=_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, text.encode("utf-8"))
    return buf.getvalue()


def write_zip(skill: Skill, out: Path) -> Path:
    """``out`` when it names a ``.zip`` file, else ``out/<slug>.zip``."""
    target = out if out.suffix.lower() == ".zip" else out / f"{skill.slug}.zip"
    target.parent.mkdir(parents=True, exist_ok=True)
    _free(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{skill.slug}.", suffix=".zip.tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(zip_bytes(skill))
            fh.flush()
            os.fsync(fh.fileno())
        os.link(tmp, target)  # refuses an existing name: a race cannot overwrite one either
    except FileExistsError:
        raise Conflict(f"{target} exists already: export somewhere else, or remove it first") from None
    finally:
        os.unlink(tmp)
    return target
