"""Strict validation, as CI runs it (``teachd skills validate``).

Stricter than loading: anything the tolerant parser would only warn about that
the spec forbids is an error here, and so is a cited resource that is missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from teachd.core import yamlsafe
from teachd.core.errors import InvalidSkill
from teachd.core.skill_fields import (
    BODY_TOKENS_WARN,
    COMPATIBILITY_MAX,
    DESCRIPTION_MAX,
    HOST_FIELDS,
    SKILL_MD_LINES_WARN,
    SPEC_FIELDS,
    estimate_tokens,
    name_problems,
)
from teachd.skills.skillmd.parse import split_frontmatter

SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__"})
MAX_DEPTH = 6
_CITED = re.compile(r"(?<![\w/.-])((?:scripts|references|assets)/[A-Za-z0-9_./-]*[A-Za-z0-9_-])(?P<after>.?)")
_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]*)\)")
_GLOB = "*?[{<"


def cited_paths(text: str) -> list[str]:
    """The files a text cites: a link's target (never its text), a bare path —
    but not a pattern (``references/module-N-*.md`` names no one file)."""
    text = _LINK.sub(lambda m: f" {m.group(1)} ", text)
    found = {m.group(1) for m in _CITED.finditer(text) if (m.group("after") or " ") not in _GLOB}
    return sorted(found)


@dataclass
class ValidationReport:
    path: Path
    name: str = ""
    version: str = "-"
    body_lines: int = 0
    resources: int = 0
    description_chars: int = 0
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        if self.ok:
            return (
                f"OK  {self.name}  v{self.version}  body {self.body_lines} lines, "
                f"{self.resources} resources, description {self.description_chars} chars"
            )
        return f"ERR {self.name or self.path.name}  {self.path}"

    def as_dict(self) -> dict[str, object]:
        return {
            "path": str(self.path),
            "name": self.name,
            "version": self.version,
            "ok": self.ok,
            "body_lines": self.body_lines,
            "resources": self.resources,
            "description_chars": self.description_chars,
            "errors": self.errors,
            "warnings": self.warnings,
        }


def find_skill_dirs(path: Path, max_depth: int = MAX_DEPTH) -> list[Path]:
    """Every folder holding a SKILL.md at or under ``path``, in sorted order."""
    if path.is_file():
        return [path.parent] if path.name == "SKILL.md" else []
    found: list[Path] = []

    def walk(folder: Path, depth: int) -> None:
        if (folder / "SKILL.md").is_file():
            found.append(folder)
        if depth >= max_depth:
            return
        try:
            children = sorted(p for p in folder.iterdir() if p.is_dir())
        except OSError:
            return
        for child in children:
            if child.name not in SKIP_DIRS and not child.is_symlink():
                walk(child, depth + 1)

    if path.is_dir():
        walk(path, 0)
    return found


def validate_skill_dir(folder: Path) -> ValidationReport:
    """Everything wrong with a skill folder against the Agent Skills spec, as
    a report rather than an exception: errors make it invalid, warnings are
    advice. Reading stops at the first problem that hides the rest (no
    SKILL.md, no frontmatter, YAML that does not parse)."""
    report = ValidationReport(path=folder)
    read = _read_parts(folder, report)
    if read is None:
        return report
    text, fm, body = read
    _check_keys(fm, report)
    _check_name(fm, folder, report)
    _check_description(fm, report)
    _check_metadata(fm, report)
    _check_size(text, body, report)
    _check_citations(folder, body, report)
    report.resources = sum(
        1
        for p in folder.rglob("*")
        if p.is_file() and p.name != "SKILL.md" and not (set(p.parts) & SKIP_DIRS)
    )
    return report


def _read_parts(folder: Path, report: ValidationReport) -> tuple[str, dict, str] | None:
    """SKILL.md's text, frontmatter and body; None (said in the report) when one cannot be had."""
    try:
        text = (folder / "SKILL.md").read_text(encoding="utf-8")
    except FileNotFoundError:
        report.errors.append("missing SKILL.md")
        return None
    except (OSError, UnicodeDecodeError) as exc:
        report.errors.append(f"SKILL.md is unreadable: {exc}")
        return None
    try:
        fm_text, body = split_frontmatter(text)
    except InvalidSkill as exc:
        report.errors.append(str(exc))
        return None
    fm = _strict_yaml(fm_text, report)
    return None if fm is None else (text, fm, body)


def _check_keys(fm: dict, report: ValidationReport) -> None:
    for key in sorted(set(fm) - set(SPEC_FIELDS)):
        if key in HOST_FIELDS:
            report.warnings.append(f"top-level key {key!r} is a host's extension, not the spec's")
        else:
            report.errors.append(f"unknown top-level key {key!r} (put it under metadata)")


def _check_name(fm: dict, folder: Path, report: ValidationReport) -> None:
    name = fm.get("name")
    report.name = str(name) if name is not None else ""
    report.errors.extend(name_problems(name))
    if isinstance(name, str) and name != folder.name:
        report.errors.append(f"name {name!r} must equal its folder name {folder.name!r}")


def _check_description(fm: dict, report: ValidationReport) -> None:
    desc = fm.get("description")
    if not isinstance(desc, str) or not desc.strip():
        report.errors.append("description must be a non-empty string")
    else:
        report.description_chars = len(desc)
        if len(desc) > DESCRIPTION_MAX:
            report.errors.append(f"description is {len(desc)} chars, over {DESCRIPTION_MAX}")
    compat = fm.get("compatibility")
    if compat is not None and (not isinstance(compat, str) or len(compat) > COMPATIBILITY_MAX):
        report.errors.append(f"compatibility must be a string of at most {COMPATIBILITY_MAX} chars")


def _check_metadata(fm: dict, report: ValidationReport) -> None:
    meta = fm.get("metadata")
    if meta is None:
        return
    if not isinstance(meta, dict):
        report.errors.append("metadata must be a map of strings to strings")
        return
    for key, value in meta.items():
        if not isinstance(value, str):
            report.errors.append(f"metadata {key!r} must be a string")
    report.version = str(meta.get("version", "-"))


def _check_size(text: str, body: str, report: ValidationReport) -> None:
    report.body_lines = len(body.strip("\n").splitlines())
    whole = len(text.strip("\n").splitlines())
    if whole > SKILL_MD_LINES_WARN:
        report.warnings.append(f"SKILL.md is {whole} lines, over {SKILL_MD_LINES_WARN}: "
                               "move detail into references/ and cite it")
    tokens = estimate_tokens(body)
    if tokens > BODY_TOKENS_WARN:
        report.warnings.append(f"body is about {tokens} tokens, over {BODY_TOKENS_WARN}")


def _check_citations(folder: Path, body: str, report: ValidationReport) -> None:
    for cited in cited_paths(body):
        target = folder / cited
        if ".." in Path(cited).parts or not target.exists():
            report.errors.append(f"cites {cited} which does not exist")
            continue
        if cited.startswith("references/") and cited.count("/") > 1:
            report.warnings.append(f"{cited} is nested deeper than one level under references/")
        if cited.startswith("references/") and target.is_file():
            _check_reference(folder, cited, target, report)


def _check_reference(folder: Path, cited: str, target: Path, report: ValidationReport) -> None:
    """References stay one level deep: a reference that cites further files is
    a chain a model may not follow, and one citing a missing file is broken."""
    try:
        text = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    for inner in cited_paths(text):
        if inner == cited:
            continue
        if ".." in Path(inner).parts or not (folder / inner).exists():
            report.warnings.append(f"{cited} cites {inner} which does not exist")
        elif inner.startswith("references/"):
            report.warnings.append(f"{cited} cites {inner}: references nested deeper than one level "
                                   "(link every reference from SKILL.md)")


def _strict_yaml(fm_text: str, report: ValidationReport) -> dict | None:
    try:
        root = yamlsafe.compose(fm_text)
        data = yamlsafe.load(fm_text)
    except yaml.YAMLError as exc:
        report.errors.append(f"frontmatter YAML is invalid: {' '.join(str(exc).split())}")
        return None
    except InvalidSkill as exc:  # over the bounds: aliases, size
        report.errors.append(str(exc))
        return None
    if not isinstance(data, dict):
        report.errors.append("frontmatter must be a YAML mapping")
        return None
    for node in _nodes(root):
        if getattr(node, "flow_style", False):
            line = node.start_mark.line + 2
            report.errors.append(f"flow-style YAML at SKILL.md line {line}; use block style")
    return {str(k): v for k, v in data.items()}


def _nodes(node: yaml.Node | None) -> Iterator[yaml.Node]:
    if node is None:
        return
    yield node
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            yield from _nodes(k)
            yield from _nodes(v)
    elif isinstance(node, yaml.SequenceNode):
        for v in node.value:
            yield from _nodes(v)
