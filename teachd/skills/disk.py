"""Disk skills as agents get them: what discovery finds under ``.teachd``,
``.claude``, ``.agents``, ``.codex`` and the custom folders, served read-only
beside the person's store (seed 000).

The store's skills come first: a disk skill whose name a visible store skill
already has is shadowed, and said so once (the seed's collision rule: the
first of a name wins). So is one named as any other store skill of the
person's — a disabled one too (``keep_out``): a file dropped in a project
folder never answers to the name of a skill its owner switched off. A disk
skill is read from its folder when asked — its body with the frontmatter
stripped, any file inside the folder by a path that stays inside (``..``,
absolute paths and links out are refused), text only — and never written:
it has no versions, so no feedback and no replay.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teachd.config import Settings
from teachd.core.approval import Approval
from teachd.core.errors import InvalidSkill, NotFound, TeachdError
from teachd.core.limits import MAX_FILES, looks_binary
from teachd.core.paths import check_relpath, resolve_inside
from teachd.skills.discovery import Discovery, Found, discover_for
from teachd.skills.folder import read_plain_text
from teachd.skills.skillmd import parse_skill_md
from teachd.skills.skillmd.validate import SKIP_DIRS

log = logging.getLogger("teachd.skills.disk")
RESCAN_AFTER = 5.0  # seconds: a skill added on disk reaches the next listing after this long at most


@dataclass(frozen=True)
class DiskSkill:
    name: str
    description: str
    provider: str
    scope: str  # project | user | custom
    folder: Path
    approval: Approval  # metadata.teachd-approval, when a disk copy of a taught skill carries it

    @classmethod
    def of(cls, found: Found) -> DiskSkill:
        approval = Approval.from_metadata(found.doc.metadata.get("teachd-approval"))
        return cls(found.name, found.doc.description, found.root.provider, found.root.scope, found.folder,
                   approval)

    @property
    def skill_md(self) -> Path:
        return self.folder / "SKILL.md"

    @property
    def source(self) -> str:
        """Where it comes from, as the manifest marks it."""
        return f"{self.provider}/{self.scope}: {self.skill_md}"

    def body(self) -> str:
        """Its instructions as they are on disk now, the frontmatter stripped."""
        text = self.read("SKILL.md")
        try:
            return parse_skill_md(text, self.folder.name, need_description=False).body.lstrip("\r\n")
        except InvalidSkill as exc:
            raise InvalidSkill(f"{self.skill_md}: {exc}") from None

    def files(self) -> list[str]:
        """Its bundled text files (SKILL.md aside), as paths inside it: no
        link (a linked folder is not entered), no device, nothing under .git
        or node_modules, no binary; at most the store's limit of them."""
        out: list[str] = []
        for top, dirs, names in os.walk(self.folder):  # links to folders are not followed
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            for name in sorted(names):
                path = Path(top) / name
                rel = path.relative_to(self.folder).as_posix()
                if rel == "SKILL.md" or looks_binary(rel) or not _plain(path):
                    continue
                try:
                    out.append(check_relpath(rel))
                except TeachdError:
                    continue
                if len(out) >= MAX_FILES:
                    return sorted(out)
        return sorted(out)

    def read(self, raw: str) -> str:
        """One file of it, by a path that stays inside its folder (links
        followed only while they stay inside); text only, within the limit."""
        rel = check_relpath(raw)
        target = resolve_inside(self.folder, rel)
        if not target.is_file():
            raise NotFound(f"File not found: {rel} in skill {self.name}")
        return read_plain_text(target)

    def loaded(self) -> dict[str, Any]:
        return {"slug": self.name, "version": None, "instructions": self.body(), "files": self.files(),
                "source": self.source}


class DiskShelf:
    """The disk skills one process serves to agents, looked for again at most
    every ``RESCAN_AFTER`` seconds (a listing does not walk the disk each time)."""

    def __init__(self, scan: Callable[[], Discovery], rescan_after: float = RESCAN_AFTER,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._scan, self._rescan_after, self._clock = scan, rescan_after, clock
        self._skills: dict[str, DiskSkill] = {}
        self._at: float | None = None
        self._said: set[str] = set()  # collisions already warned of
        self._lock = threading.Lock()
        self._kept_out: Callable[[], Iterable[str]] = lambda: ()

    def keep_out(self, names: Callable[[], Iterable[str]]) -> None:
        """Names no disk skill is served under, whatever the caller's list of
        store skills says: every skill of the store's person, enabled or not
        (``SkillStore.slugs``), asked when the disk has a skill to serve."""
        self._kept_out = names

    def skills(self) -> dict[str, DiskSkill]:
        with self._lock:
            now = self._clock()
            if self._at is None or now - self._at >= self._rescan_after:
                self._skills = {f.name: DiskSkill.of(f) for f in self._scan().skills}
                self._at = now
            return dict(self._skills)

    def beside(self, store_names: Iterable[str]) -> list[DiskSkill]:
        """The disk skills served after the store's (named ``store_names``):
        a name the store already has is the store's (warned once)."""
        found = self.skills()
        taken = set(store_names) | (set(self._kept_out()) if found else set())
        out = []
        for name, skill in found.items():  # in discovery's precedence order
            if name in taken:
                with self._lock:
                    first = name not in self._said
                    self._said.add(name)
                if first:
                    log.warning("collision: the disk skill %r at %s is shadowed by the store's skill %r",
                                name, skill.skill_md, name)
                continue
            out.append(skill)
        return out


def _plain(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def shelf_for(settings: Settings, project: Path, home: Path, extra: Iterable[Path] = ()) -> DiskShelf:
    roots = tuple(extra)
    return DiskShelf(lambda: discover_for(settings, project, home, roots))
