"""Finding skills on disk, as the runtime loads them (tolerant).

Roots, in precedence order (seed 000/003): the providers by priority —
teachd's own ``.teachd/skills`` (native, 100), then Claude's
``.claude/skills`` (80), then ``.agents`` and ``.codex`` (70, in that
order) — each at the project level, then the user level (a project's skill
wins over the person's copy); then the folders given with ``--root`` and
``skill_dirs``. One level under each root: ``<root>/<name>/SKILL.md``. The
first skill of a name wins; the same file reached twice (symlinks) counts
once; every shadowed skill is reported with both paths. The native provider
and custom folders need a description; the other agents' skills load
without one (a warning). Switches (config.yaml ``skills:``): ``enabled:
false`` loads nothing; ``<provider>: {user: false, project: false}`` drops a
level; ``.agents`` and ``.codex`` have no switches of their own and are on
at a level while any built-in provider (teachd, claude) is; then source
toggles, ``include``, ``ignore``.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from teachd.config import Settings
from teachd.core.errors import InvalidSkill
from teachd.skills.skillmd import SkillDoc, parse_skill_md

log = logging.getLogger("teachd.skills.discovery")

PROVIDERS: tuple[tuple[str, str, int], ...] = (  # name, folder, priority (higher wins; ties: this order)
    ("teachd", ".teachd/skills", 100),
    ("claude", ".claude/skills", 80),
    ("agents", ".agents/skills", 70),
    ("codex", ".codex/skills", 70),
)
NATIVE = "teachd"
_BUILT_IN = ("teachd", "claude")  # the providers with level switches of their own
_USER_ONLY = {"codex"}


@dataclass(frozen=True)
class Root:
    provider: str
    scope: str  # project | user | custom
    path: Path


@dataclass
class Found:
    name: str
    folder: Path
    root: Root
    doc: SkillDoc


@dataclass
class Discovery:
    skills: list[Found] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    excluded: list[tuple[Path, str]] = field(default_factory=list)

    def by_name(self) -> dict[str, Found]:
        return {s.name: s for s in self.skills}


def default_roots(
    project: Path,
    user_home: Path,
    extra: Sequence[Path] = (),
    configured: Sequence[Path] = (),
    levels: Mapping[str, Mapping[str, bool]] | None = None,
    enabled: bool = True,
) -> list[Root]:
    """The roots in precedence order (see the module's docstring)."""
    if not enabled:
        return []
    levels = levels or {}
    roots: list[Root] = []
    for provider, rel, _priority in sorted(PROVIDERS, key=lambda p: -p[2]):  # stable: ties keep their order
        for scope, base in (("project", project), ("user", user_home)):
            if scope == "project" and provider in _USER_ONLY:
                continue
            if _level_on(levels, provider, scope):
                roots.append(Root(provider, scope, base / rel))
    roots.extend(Root("custom", "custom", Path(p)) for p in (*extra, *configured))
    return roots


def _level_on(levels: Mapping[str, Mapping[str, bool]], provider: str, scope: str) -> bool:
    if provider in _BUILT_IN or provider in levels:
        return levels.get(provider, {}).get(scope, True)
    return any(levels.get(p, {}).get(scope, True) for p in _BUILT_IN)


def discover(
    roots: Iterable[Root],
    sources: Mapping[str, bool] | None = None,
    include: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> Discovery:
    sources = sources or {}
    result = Discovery()
    winners: dict[str, Found] = {}
    seen_real: set[Path] = set()
    for root in roots:
        if not sources.get(root.provider, True) or not root.path.is_dir():
            continue
        for folder in sorted(p for p in root.path.iterdir() if p.is_dir()):
            skill_md = folder / "SKILL.md"
            if not skill_md.is_file():
                continue
            real = skill_md.resolve()
            if real in seen_real:
                continue
            seen_real.add(real)
            try:
                doc = parse_skill_md(skill_md.read_text(encoding="utf-8"), folder.name,
                                     need_description=root.provider in (NATIVE, "custom"))
            except (InvalidSkill, OSError, UnicodeDecodeError) as exc:
                result.excluded.append((skill_md, str(exc)))
                result.warnings.append(f"skipped {skill_md}: {exc}")
                log.warning("skipped %s: %s", skill_md, exc)
                continue
            for w in doc.warnings:
                result.warnings.append(f"{skill_md}: {w}")
                log.warning("%s: %s", skill_md, w)
            if doc.name in winners:
                msg = (
                    f"collision: {doc.name!r} at {skill_md} is shadowed by "
                    f"{winners[doc.name].folder / 'SKILL.md'}"
                )
                result.warnings.append(msg)
                log.warning(msg)
                continue
            winners[doc.name] = Found(doc.name, folder, root, doc)
    for found in winners.values():
        if include and not any(fnmatch.fnmatchcase(found.name, g) for g in include):
            continue
        if any(fnmatch.fnmatchcase(found.name, g) for g in ignore):
            continue
        result.skills.append(found)
    log.info("loaded %d skills", len(result.skills))
    return result


def discover_for(settings: Settings, project: Path, home: Path, extra: Iterable[Path] = ()) -> Discovery:
    """Discovery as the person's config.yaml sets it (``skills:``,
    ``sources``, ``include``, ``ignore``, ``skill_dirs``); ``extra``: the
    folders given with ``--root``."""
    roots = default_roots(project, home, extra=tuple(extra), configured=settings.skill_dirs,
                          levels=settings.skill_levels, enabled=settings.skills_enabled)
    return discover(roots, sources=settings.sources, include=settings.include, ignore=settings.ignore)
