"""Where a skill comes from, from the URL a person pastes.

Accepted forms (``parse_source`` says which one a text is):

- ``https://skills.sh/OWNER/REPO/SKILL`` — a skills.sh listing: the skill
  lives in the GitHub repository OWNER/REPO;
- ``https://github.com/OWNER/REPO`` — the repository's one skill (at its root,
  or the only one in it);
- ``https://github.com/OWNER/REPO/tree/REF/PATH`` and ``…/blob/REF/PATH/SKILL.md``;
- ``OWNER/REPO/SKILL`` — the conventional layout ``skills/SKILL/SKILL.md``;
- ``https://raw.githubusercontent.com/OWNER/REPO/REF/PATH/SKILL.md``;
- any other ``https://…/SKILL.md`` — that one file.

A GitHub source is listed with the public API (the repository's default
branch, its tree) and its files fetched raw; a plan says which files would
be fetched, and from where, before any is (``--resolve-only``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from compiler import urls
from teachd.core.errors import BadInput, InvalidSkill, LimitExceeded, NotFound
from teachd.core.limits import MAX_FILE_BYTES, MAX_FILES, MAX_TOTAL_BYTES, as_text, looks_binary
from teachd.remote.egress import Egress
from teachd.skills.skillmd.validate import SKIP_DIRS

API = "https://api.github.com"
RAW = "https://raw.githubusercontent.com"
LISTING_BYTES = 8 * 1024 * 1024  # a repository's tree, as the API lists it
_PART = r"[A-Za-z0-9_.-]+"
_SHORTHAND = re.compile(rf"^({_PART})/({_PART})/({_PART})$")
FORMS = ("https://skills.sh/OWNER/REPO/SKILL, https://github.com/OWNER/REPO[/tree/REF/PATH], "
         "…/blob/REF/PATH/SKILL.md, OWNER/REPO/SKILL, or a link to a SKILL.md")


@dataclass(frozen=True)
class Source:
    given: str
    kind: str  # github | file
    owner: str = ""
    repo: str = ""
    ref: str | None = None  # None: the repository's default branch
    path: str | None = None  # the skill's folder in the repository; None: find it
    name: str | None = None  # the skill's folder name, when that is all that is known
    url: str = ""  # kind file: the SKILL.md's address


@dataclass
class Plan:
    source: Source
    origin: str  # where it was resolved to: owner/repo@ref:path, or the file's URL
    folder: str  # the folder name the skill comes from
    files: list[tuple[str, str, int | None]] = field(default_factory=list)  # (path in skill, URL, size)
    skipped: list[str] = field(default_factory=list)  # files left behind, with why

    def as_dict(self) -> dict[str, Any]:
        files = [{"path": p, "url": u, "size": s} for p, u, s in self.files]
        return {"source": self.source.given, "resolved": self.origin, "folder": self.folder,
                "files": files, "skipped": self.skipped}

    def text(self) -> str:
        lines = [f"{self.source.given} → {self.origin}", f"would fetch {len(self.files)} file(s):"]
        lines += [f"  {p}  ←  {u}" + (f"  ({s} bytes)" if s is not None else "") for p, u, s in self.files]
        lines += [f"  left out: {s}" for s in self.skipped]
        return "\n".join(lines)


def is_url_source(text: str) -> bool:
    return text.startswith(("http://", "https://")) or bool(_SHORTHAND.match(text))


def parse_source(text: str) -> Source:
    given = text.strip()
    m = _SHORTHAND.match(given)
    if m and not given.startswith(("http://", "https://")):
        return Source(given, "github", m.group(1), m.group(2), name=m.group(3))
    web = urls.parse_web(given)  # as a browser reads it: ``https://github.com\\@evil/`` is github.com
    if web is None:
        raise BadInput(f"not a skill address: {given!r}; use {FORMS}")
    host = web.hostname
    segs = [unquote(s) for s in web.path.split("/") if s]
    if host in ("skills.sh", "www.skills.sh"):
        if len(segs) != 3:
            raise BadInput(f"a skills.sh link names OWNER/REPO/SKILL: {given!r}")
        return Source(given, "github", segs[0], segs[1], name=segs[2])
    if host in ("github.com", "www.github.com"):
        if len(segs) < 2:
            raise BadInput(f"a GitHub link names at least OWNER/REPO: {given!r}")
        owner, repo = segs[0], segs[1].removesuffix(".git")
        if len(segs) == 2:
            return Source(given, "github", owner, repo)
        if len(segs) >= 4 and segs[2] in ("tree", "blob"):
            path = "/".join(segs[4:])
            if segs[2] == "blob":
                if not path.endswith("SKILL.md"):
                    raise BadInput(f"a GitHub file link must point at a SKILL.md: {given!r}")
                path = path.rsplit("/", 1)[0] if "/" in path else ""
            return Source(given, "github", owner, repo, ref=segs[3], path=path)
        raise BadInput(f"not a GitHub repository, tree or SKILL.md link: {given!r}")
    if host == "raw.githubusercontent.com" and len(segs) >= 4 and segs[-1] == "SKILL.md":
        path = "/".join(segs[3:-1])
        return Source(given, "github", segs[0], segs[1], ref=segs[2], path=path)
    if segs and segs[-1] == "SKILL.md":
        return Source(given, "file", url=web.href)
    raise BadInput(f"not a skill address: {given!r}; use {FORMS}")


def _json(egress: Egress, url: str) -> Any:
    got = egress.get(url, LISTING_BYTES, headers={"Accept": "application/vnd.github+json"})
    try:
        return json.loads(got.body)
    except ValueError:
        raise InvalidSkill(f"{url} did not answer JSON") from None


def resolve(egress: Egress, source: Source) -> Plan:
    """Which files, from where — listing, never fetching a file's content."""
    if source.kind == "file":
        path = web.path if (web := urls.parse_web(source.url)) else ""
        parent = path.rstrip("/").split("/")[-2:-1] or ["skill"]
        return Plan(source, source.url, parent[0], [("SKILL.md", source.url, None)])
    repo = f"{API}/repos/{quote(source.owner)}/{quote(source.repo)}"
    ref = source.ref or str(_json(egress, repo).get("default_branch") or "main")
    tree = _json(egress, f"{repo}/git/trees/{quote(ref, safe='')}?recursive=1")
    entries = [e for e in tree.get("tree", []) if isinstance(e, dict) and e.get("type") == "blob"]
    if tree.get("truncated"):
        raise LimitExceeded(f"{source.owner}/{source.repo} is too large to list; link the skill's folder")
    folders = sorted({e["path"].rsplit("/", 1)[0] if "/" in e["path"] else ""
                      for e in entries if e["path"].split("/")[-1] == "SKILL.md"})
    folder = _pick(source, folders)
    prefix = f"{folder}/" if folder else ""
    plan = Plan(source, f"{source.owner}/{source.repo}@{ref}:{folder or '/'}",
                folder.rsplit("/", 1)[-1] if folder else source.repo)
    nested = [f[len(prefix):] + "/" for f in folders if f != folder and f.startswith(prefix)]
    for n in nested:
        plan.skipped.append(f"{n} (another skill)")
    total = 0
    for e in sorted(entries, key=lambda e: str(e["path"])):
        path = str(e["path"])
        if not path.startswith(prefix):
            continue
        rel = path[len(prefix):]
        if any(rel.startswith(n) for n in nested):
            continue
        if any(part in SKIP_DIRS or part.startswith(".") for part in rel.split("/")[:-1]):
            continue
        size = e.get("size") if isinstance(e.get("size"), int) else None
        if looks_binary(rel):
            plan.skipped.append(f"{rel} (binary: skills hold text only)")
            continue
        if size is not None and size > MAX_FILE_BYTES:
            raise LimitExceeded(f"{rel} is {size} bytes, over the {MAX_FILE_BYTES}-byte limit")
        total += size or 0
        plan.files.append((rel, f"{RAW}/{quote(source.owner)}/{quote(source.repo)}/{quote(ref, safe='')}/"
                                f"{quote(path)}", size))
    if not any(p == "SKILL.md" for p, _, _ in plan.files):
        raise NotFound(f"no SKILL.md in {plan.origin}")
    if len(plan.files) > MAX_FILES + 1:
        raise LimitExceeded(f"{len(plan.files) - 1} bundled files, over the limit of {MAX_FILES}")
    if total > MAX_TOTAL_BYTES:
        raise LimitExceeded(f"the skill is {total} bytes, over the {MAX_TOTAL_BYTES}-byte limit")
    return plan


def _pick(source: Source, folders: list[str]) -> str:
    where = f"{source.owner}/{source.repo}"
    if source.path is not None:
        if source.path not in folders:
            raise NotFound(f"no SKILL.md in {where} at {source.path or 'its root'}")
        return source.path
    if source.name:
        conventional = f"skills/{source.name}"
        if conventional in folders:
            return conventional
        named = [f for f in folders if f.rsplit("/", 1)[-1] == source.name]
        if len(named) == 1:
            return named[0]
        if not named:
            raise NotFound(f"no skill {source.name!r} in {where}")
        raise BadInput(f"{where} has {len(named)} skills named {source.name!r}: link one: {', '.join(named)}")
    if "" in folders:
        return ""
    if len(folders) == 1:
        return folders[0]
    if not folders:
        raise NotFound(f"{where} holds no SKILL.md")
    names = ", ".join(f"{where}/{f.rsplit('/', 1)[-1]}" for f in folders[:8])
    raise BadInput(f"{where} holds {len(folders)} skills; name one: {names}")


def fetch(egress: Egress, plan: Plan) -> tuple[str, dict[str, str]]:
    """The SKILL.md text and the bundled files' texts, each within the limits."""
    skill_md, files = "", {}
    for rel, url, _size in plan.files:
        got = egress.get(url, MAX_FILE_BYTES)
        if rel == "SKILL.md":
            skill_md = skill_md_text(got.body, got.content_type, url)
        else:
            files[rel] = as_text(rel, got.body)
    return skill_md, files


def skill_md_text(body: bytes, content_type: str, url: str) -> str:
    """What came back must be a SKILL.md: not a web page, not binary."""
    head = body[:512].lstrip().lower()
    if "html" in content_type.lower() or head.startswith((b"<!doctype html", b"<html")):
        raise InvalidSkill(f"{url} is a web page (HTML), not a SKILL.md: link the raw file")
    text = as_text("SKILL.md", body)
    if not text.lstrip("\ufeff").startswith("---"):
        raise InvalidSkill(f"{url} is not a SKILL.md (no '---' frontmatter at the top)")
    return text
