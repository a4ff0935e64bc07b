"""Import and export of skills: a folder, a SKILL.md (also the older exchange
form with top-level display ``name`` and ``slug``), or a JSON envelope.

Reading is pure over text + a file map; only ``read_import_source`` touches disk.
"""

from __future__ import annotations

import json
import re
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from teachd.core.approval import Approval
from teachd.core.errors import BadInput, InvalidSkill, LimitExceeded, NotFound, UnsafePath
from teachd.core.limits import MAX_FILES, BinaryFile, left_out, looks_binary
from teachd.core.models import Skill, SkillContent
from teachd.core.paths import resolve_inside
from teachd.core.skill_fields import name_problems
from teachd.skills.archive import ARCHIVE_SUFFIXES, check_names, is_archive, read_archive
from teachd.skills.folder import read_plain_text
from teachd.skills.skillmd import parse_skill_md, render_skill_md
from teachd.skills.skillmd.parse import load_frontmatter, split_header
from teachd.skills.skillmd.validate import SKIP_DIRS

# A skill is at most 1 MB of text; as JSON each character may take up to 6
# bytes (\uXXXX). The envelope file may be that large; its content is then
# held to the skill's own limits when it is saved.
ENVELOPE_MAX_BYTES = 8 * 1024 * 1024
ENVELOPE_FORMAT = "teachd-skill"
AUTHORED_HEADER = "authored-header"  # in a version's metadata (teachd's own, never exported as a key)
# 2: teachd's own fields travel under "teachd", apart from the skill's "metadata" (1 mixed them;
# a version-1 envelope is still read).
ENVELOPE_VERSION = 2
ENVELOPE_OWN = "teachd"  # the envelope's namespace for what teachd keeps about a version
_INTERNAL = (AUTHORED_HEADER,)  # metadata keys of teachd's own, not the skill's
# Frontmatter fields kept per version besides name and description.
_KEPT_FIELDS = ("license", "compatibility", "allowed-tools")


@dataclass
class Imported:
    slug: str
    content: SkillContent
    approval_declared: bool  # False: a plain SKILL.md, the approval is inherited
    name_declared: bool = True  # False: no display name given, keep the previous one
    enabled: bool | None = None  # an envelope says whether the skill is enabled
    warnings: list[str] = field(default_factory=list)  # said in one line each, never a refusal
    files_declared: bool = True  # False: a SKILL.md alone, the skill's bundled files stay

    def onto(self, previous: SkillContent | None) -> SkillContent:
        """The content to save over ``previous`` (None: a new skill). A plain
        SKILL.md carries no approval, so it keeps — and may only add to — the
        approval of the version it replaces; a missing display name is kept;
        and a SKILL.md that came alone keeps the files bundled with it (a
        taught skill's plan among them): files travel with their skill."""
        if previous is None:
            return self.content
        new = self.content if self.name_declared else replace(self.content, name=previous.name)
        if not self.files_declared:
            new = replace(new, files=dict(previous.files))
        if self.approval_declared:
            return new
        return replace(new, approval=previous.approval.union(self.content.approval))


def from_archive(name: str, data: bytes) -> Imported:
    """A skill from an archive's bytes (the web UI's Import of an exported
    zip): read as ``teachd skills import FILE.zip`` reads the file."""
    plain = Path(name).name
    if not plain.lower().endswith(ARCHIVE_SUFFIXES):
        raise BadInput(f"{plain!r} is not an archive: a .zip, .tar, .tar.gz, .tgz, .tar.bz2 or .tar.xz")
    folder, text, files, skipped = read_archive(Path(plain), data)
    return _leaving_out(from_skill_md(text, folder, files), skipped)


def read_import_source(path: Path) -> Imported:
    if not path.exists():
        raise NotFound(f"{path} does not exist")
    if is_archive(path):
        folder, text, files, skipped = read_archive(path)
        return _leaving_out(from_skill_md(text, folder, files), skipped)
    if path.is_dir():
        skill_md = path / "SKILL.md"
        if skill_md.is_symlink():  # what it points at is not the folder's to give
            raise UnsafePath(f"{skill_md} is a link; a skill holds plain files")
        if not skill_md.is_file():
            raise InvalidSkill(f"{path} has no SKILL.md")
        files, skipped = _read_folder(path)
        return _leaving_out(from_skill_md(read_plain_text(skill_md, follow=False), path.name, files), skipped)
    if path.suffix.lower() == ".json":  # the limits apply to the skill inside, not to its JSON escaping
        return from_envelope(read_plain_text(path, ENVELOPE_MAX_BYTES))
    return from_skill_md(read_plain_text(path), None, None)


def _leaving_out(imported: Imported, skipped: list[str]) -> Imported:
    if skipped:
        imported.warnings.append(left_out(skipped))
    return imported


def from_skill_md(text: str, folder_name: str | None, files: dict[str, str] | None) -> Imported:
    """``files`` None: the SKILL.md came alone (an update keeps the skill's files)."""
    doc = parse_skill_md(text, folder_name)
    fm = doc.frontmatter
    metadata = dict(doc.metadata)
    if fm.get("slug"):  # older exchange form: name is the display name
        slug = str(fm["slug"]).strip()
        display = str(fm.get("name") or slug)
        metadata.pop("slug", None)
    else:
        slug = doc.name
        display = str(metadata.get("display-name") or "")
    metadata.pop("display-name", None)
    warnings: list[str] = []
    if name_problems(slug):  # as discovery loads it: tolerated, under a name that is valid
        valid = derive_slug(slug)
        warnings.append(f"name {slug!r} is not a valid skill name: imported as {valid!r}, "
                        f"the author's name kept as its display name")
        display, slug = display or slug, valid
    stored_meta: dict[str, Any] = {k: fm[k] for k in _KEPT_FIELDS if fm.get(k) is not None}
    if metadata:
        stored_meta["metadata"] = metadata
    stored_meta[AUTHORED_HEADER] = doc.header  # exported again as written
    declared = Approval.from_metadata(metadata.get("teachd-approval"))
    content = SkillContent(
        name=display or slug,
        description=doc.description,
        instructions=doc.body,
        files=files or {},
        approval=declared,
        metadata=stored_meta,
    )
    return Imported(slug, content, approval_declared=False, name_declared=bool(display), warnings=warnings,
                    files_declared=files is not None)


def from_envelope(text: str) -> Imported:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidSkill(f"not a JSON envelope: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, dict) or data.get("format") != ENVELOPE_FORMAT:
        raise InvalidSkill(f"not a {ENVELOPE_FORMAT} JSON envelope")
    for key in ("slug", "description", "instructions"):
        if not isinstance(data.get(key), str):
            raise InvalidSkill(f"envelope field {key!r} must be a string")
    files = data.get("files") or {}
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise InvalidSkill("envelope files must map paths to text")
    metadata = _envelope_metadata(data)
    slug = data["slug"]
    _check_slug(slug)
    content = SkillContent(
        name=str(data.get("name") or slug),
        description=data["description"],
        instructions=data["instructions"],
        files=dict(files),
        approval=Approval.from_dict(data.get("approval")),
        metadata=metadata,
    )
    enabled = data.get("enabled")
    if enabled is not None and not isinstance(enabled, bool):
        raise InvalidSkill("envelope field 'enabled' must be true or false")
    return Imported(slug=slug, content=content, approval_declared=True, enabled=enabled)


def _envelope_metadata(data: dict[str, Any]) -> dict[str, Any]:
    """A version's metadata from an envelope: the skill's own ``metadata``,
    and teachd's fields from their namespace (version 2). A version-1
    envelope kept both in ``metadata`` and is read as it was written."""
    version = data.get("format_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= ENVELOPE_VERSION:
        raise InvalidSkill(f"envelope format_version {version!r} is not one this teachd reads "
                           f"(1 to {ENVELOPE_VERSION}): upgrade teachd to read it")
    metadata = data.get("metadata") or {}
    own = data.get(ENVELOPE_OWN) or {}
    if not isinstance(metadata, dict) or not isinstance(own, dict):
        raise InvalidSkill(f"envelope metadata and {ENVELOPE_OWN} must be objects")
    if version == 1:
        return dict(metadata)
    kept = {k: v for k, v in metadata.items() if k not in _INTERNAL}
    kept.update({k: v for k, v in own.items() if k in _INTERNAL and isinstance(v, str)})
    return kept


def frontmatter_fields(slug: str, content: SkillContent) -> dict[str, Any]:
    fields: dict[str, Any] = {"name": slug, "description": content.description}
    for key in _KEPT_FIELDS:
        if content.metadata.get(key) is not None:
            fields[key] = content.metadata[key]
    meta = _with_current_approval(dict(content.metadata.get("metadata") or {}), content)
    if content.name and content.name != slug:
        meta["display-name"] = content.name
    if meta:
        fields["metadata"] = dict(sorted(meta.items()))
    return fields


def _with_current_approval(meta: dict[str, Any], content: SkillContent) -> dict[str, Any]:
    """``teachd-approval`` as the approval stands now, not as it was imported
    or compiled (an edit of the approval changes what is exported)."""
    if "teachd-approval" in meta or content.approval.always_ask:
        meta["teachd-approval"] = content.approval.to_metadata()
    return meta


def export_md(skill: Skill) -> str:
    """A SKILL.md: an imported one as its author wrote it (header and body byte
    for byte, teachd's own data added under ``metadata`` only when there is
    some); a taught or envelope-made one rendered to the spec."""
    c = skill.current
    header = c.metadata.get(AUTHORED_HEADER)
    if isinstance(header, str) and header:
        return authored_header(header, skill.slug, c) + c.instructions
    return render_skill_md(frontmatter_fields(skill.slug, c), c.instructions)


def authored_header(header: str, slug: str, content: SkillContent) -> str:
    """The author's header, verbatim while teachd has nothing to change in it;
    else the same keys, in the same order, with the same YAML types, and only
    what teachd owns changed (the name, the description, teachd's metadata)."""
    _, fm_text, _ = split_header(header + "\n")
    fm, _repaired = load_frontmatter(fm_text)
    raw_meta = fm.get("metadata")
    authored_meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    current = _with_current_approval(dict(content.metadata.get("metadata") or {}), content)
    ours = {k: v for k, v in current.items()
            if (k.startswith("teachd-") or k == "display-name") and authored_meta.get(k) != v}
    if content.name and content.name != slug and authored_meta.get("display-name") != content.name \
            and (fm.get("name") != content.name or "slug" in fm):
        ours["display-name"] = content.name
    same = fm.get("name") == slug and "slug" not in fm \
        and str(fm.get("description") or "").strip() == content.description.strip()
    if same and not ours:
        return header
    new = {k: v for k, v in fm.items() if k != "slug"}  # the older exchange form's key: not the spec's
    new["name"] = slug
    new["description"] = content.description
    if ours:
        new["metadata"] = {**authored_meta, **{k: str(v) for k, v in ours.items()}}
    newline = "\r\n" if "\r\n" in header else "\n"
    text = yaml.safe_dump(new, default_flow_style=False, sort_keys=False, allow_unicode=True, width=1_000_000)
    bom = "\ufeff" if header.startswith("\ufeff") else ""
    return bom + "---" + newline + text.replace("\n", newline) + "---" + newline


def export_envelope(skill: Skill) -> dict[str, Any]:
    c = skill.current
    return {
        "format": ENVELOPE_FORMAT,
        "format_version": ENVELOPE_VERSION,
        "slug": skill.slug,
        "name": c.name,
        "description": c.description,
        "instructions": c.instructions,
        "files": dict(sorted(c.files.items())),
        "approval": c.approval.to_dict(),
        "metadata": {k: v for k, v in c.metadata.items() if k not in _INTERNAL},
        ENVELOPE_OWN: {k: c.metadata[k] for k in _INTERNAL if k in c.metadata},
        "enabled": skill.enabled,
        "version": skill.current_version,
    }


def derive_slug(name: str) -> str:
    """A valid slug from an author's name: ``MailerLite Automation`` → ``mailerlite-automation``."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:64].strip("-")
    return slug or "skill"


def _check_slug(slug: str) -> None:
    problems = name_problems(slug)
    if problems:
        raise InvalidSkill(f"bad skill name {slug!r}: {problems[0]}")


def _read_folder(folder: Path) -> tuple[dict[str, str], list[str]]:
    """Every text file of a skill folder but SKILL.md, and the binary files
    left out (as URL import leaves them). A link or a device is refused (an
    import copies text, never what a link points at), and so are two names
    that differ only by case."""
    files: dict[str, str] = {}
    skipped: list[str] = []
    entries = sorted(folder.rglob("*"))
    check_names((p.relative_to(folder).as_posix() for p in entries), str(folder))
    for p in entries:
        rel = p.relative_to(folder).as_posix()
        if set(p.relative_to(folder).parts) & SKIP_DIRS or rel == "SKILL.md":
            continue
        mode = p.lstat().st_mode
        if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise UnsafePath(f"{rel} in {folder} is a link or a device; a skill holds plain files")
        real = resolve_inside(folder, rel)
        if not real.is_file():
            continue
        if len(files) + len(skipped) >= MAX_FILES:
            raise LimitExceeded(f"{folder} has more than {MAX_FILES} bundled files besides SKILL.md")
        if looks_binary(rel):
            skipped.append(rel)
            continue
        try:
            files[rel] = read_plain_text(real, follow=False)
        except BinaryFile:
            skipped.append(rel)
    return files, skipped
