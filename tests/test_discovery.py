from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from teachd.core.errors import NotFound, UnsafePath
from teachd.skills.discovery import default_roots, discover
from teachd.skills.urls import parse_skill_url, read_skill_url
from tests.conftest import write_skill


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    project, user = tmp_path / "project", tmp_path / "user"
    write_skill(project / ".teachd/skills", "shared", "project teachd copy")
    write_skill(user / ".teachd/skills", "shared", "user teachd copy")
    write_skill(project / ".claude/skills", "shared", "project claude copy")
    write_skill(user / ".agents/skills", "agents-only", "from agents")
    write_skill(user / ".codex/skills", "codex-only", "from codex")
    write_skill(project / ".claude/skills", "claude-only", "from claude")
    return project, user


def test_the_native_provider_wins_then_claude_then_the_others(layout, caplog) -> None:
    """Seed 000/003: native (.teachd) 100 > claude 80 > agents/codex 70, and
    within one provider the project's copy before the person's."""
    project, user = layout
    with caplog.at_level(logging.INFO, logger="teachd.skills.discovery"):
        found = discover(default_roots(project, user))
    by = found.by_name()
    assert sorted(by) == ["agents-only", "claude-only", "codex-only", "shared"]
    assert by["shared"].doc.description == "project teachd copy"  # native, and project before user
    collisions = [w for w in found.warnings if w.startswith("collision")]
    assert len(collisions) == 2
    assert all(str(project / ".teachd/skills/shared/SKILL.md") in w for w in collisions)
    assert "loaded 4 skills" in caplog.text


def test_a_project_skill_wins_over_the_users_copy_within_a_provider(tmp_path) -> None:
    """Seed 003: project before user (first root wins), and claude over .agents at any level."""
    project, user = tmp_path / "p", tmp_path / "u"
    write_skill(user / ".agents/skills", "deploy", "user agents copy")
    write_skill(project / ".claude/skills", "deploy", "project claude copy")
    write_skill(project / ".agents/skills", "lint", "project agents copy")
    write_skill(user / ".agents/skills", "lint", "user agents copy")
    write_skill(user / ".claude/skills", "dup", "user claude copy")
    write_skill(project / ".claude/skills", "dup", "project claude copy")
    by = discover(default_roots(project, user)).by_name()
    assert by["deploy"].doc.description == "project claude copy"
    assert by["lint"].doc.description == "project agents copy"
    assert by["dup"].doc.description == "project claude copy"


def test_roots_come_after_the_providers_and_switches_turn_levels_off(tmp_path) -> None:
    """Seed 000: custom folders after the providers; .agents has no switch of
    its own and is on at a level while any built-in provider is."""
    project, user, extra = tmp_path / "p", tmp_path / "u", tmp_path / "extra"
    write_skill(extra, "deploy", "from --root")
    write_skill(user / ".agents/skills", "deploy", "user agents copy")
    write_skill(project / ".claude/skills", "review", "project claude copy")
    write_skill(extra, "only-root", "from --root")
    by = discover(default_roots(project, user, extra=[extra])).by_name()
    assert by["deploy"].doc.description == "user agents copy" and "only-root" in by
    one_off = discover(default_roots(project, user, extra=[extra], levels={"teachd": {"user": False}})).by_name()
    assert one_off["deploy"].doc.description == "user agents copy"  # claude's user level is still on
    off = discover(default_roots(project, user, extra=[extra], levels={"teachd": {"user": False},
                                                                       "claude": {"user": False, "project": False}})
                   ).by_name()
    assert off["deploy"].doc.description == "from --root"  # every built-in user level off: .agents' too
    assert "review" not in off
    assert discover(default_roots(project, user, extra=[extra], enabled=False)).skills == []


def test_another_agents_skill_may_lack_a_description_teachds_own_may_not(tmp_path) -> None:
    """Seed 000: the description is required by the native provider and custom
    folders; the other providers load a skill without one (with a warning)."""
    project, user, extra = tmp_path / "p", tmp_path / "u", tmp_path / "extra"
    for root, name in ((project / ".claude/skills", "bare-claude"), (project / ".agents/skills", "bare-agents"),
                       (project / ".teachd/skills", "bare-teachd"), (extra, "bare-custom")):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(f"---\nname: {name}\n---\n\nDo it.\n", encoding="utf-8")
    found = discover(default_roots(project, user, extra=[extra]))
    assert sorted(found.by_name()) == ["bare-agents", "bare-claude"]
    assert sorted(p.parent.name for p, _why in found.excluded) == ["bare-custom", "bare-teachd"]
    assert any("no description" in w for w in found.warnings)


def test_config_switches_are_read_and_bad_ones_refused(tmp_path) -> None:
    """Seed 000 "Discovery pipeline": skills.enabled and the per-provider level switches come from config.yaml."""
    from teachd.config import settings_from_env
    from teachd.core.errors import BadInput

    (tmp_path / "config.yaml").write_text("skills:\n  enabled: false\n  claude: {project: false}\n")
    s = settings_from_env({"TEACHD_HOME": str(tmp_path), "TEACHD_OWNER": "a"})
    assert s.skills_enabled is False and s.skill_levels == {"claude": {"project": False}}
    (tmp_path / "config.yaml").write_text("skills:\n  claude: {everywhere: false}\n")
    with pytest.raises(BadInput, match="skills.claude takes user: and project:"):
        settings_from_env({"TEACHD_HOME": str(tmp_path), "TEACHD_OWNER": "a"})


def test_symlinked_identical_skill_counts_once(tmp_path: Path) -> None:
    """Seed 000 "Collision and duplicate handling": identical files de-duplicated by realpath (no collision)."""
    a = tmp_path / "a"
    write_skill(a, "linked")
    b = tmp_path / "b"
    b.mkdir()
    os.symlink(a / "linked", b / "linked")
    found = discover(default_roots(tmp_path / "p", tmp_path / "u", extra=[a, b]))
    assert [s.name for s in found.skills] == ["linked"]
    assert not [w for w in found.warnings if "collision" in w]


def test_source_toggle_then_include_then_ignore(layout) -> None:
    """Seed 000 "Source toggles and filtering": source enabled, then not ignored, then included (globs on the name)."""
    project, user = layout
    roots = default_roots(project, user)
    off = discover(roots, sources={"claude": False})
    assert "claude-only" not in off.by_name()
    inc = discover(roots, include=["*-only"], ignore=["codex-*"])
    assert sorted(inc.by_name()) == ["agents-only", "claude-only"]


def test_a_root_skill_shadowed_by_a_provider_is_reported_and_a_bad_skill_excluded(layout, tmp_path) -> None:
    """Seed 000 "Collision and duplicate handling": a later name is warned of as a collision; a broken skill is excluded, not fatal."""
    project, user = layout
    extra = tmp_path / "extra"
    write_skill(extra, "shared", "from --root")
    (extra / "broken").mkdir()
    (extra / "broken" / "SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    found = discover(default_roots(project, user, extra=[extra]))
    assert found.by_name()["shared"].doc.description == "project teachd copy"
    assert any(str(extra / "shared/SKILL.md") in w and "shadowed" in w for w in found.warnings)
    assert "broken" not in found.by_name()
    assert found.excluded and "description" in found.excluded[0][1]


@pytest.mark.parametrize(
    "url",
    [
        "skill://s/../secret.txt",
        "skill://s/%2e%2e/secret.txt",
        "skill://s/%2E%2E%2Fsecret.txt",
        "skill://s/..%5csecret.txt",
        "skill://s/a\\..\\..\\secret.txt",
        "skill://s/%2Fetc%2Fpasswd",
        "skill://s/C:%5Cwindows",
        "skill://s/ok%00.md",
    ],
)
def test_traversal_attempts_are_refused(tmp_path: Path, url: str) -> None:
    """Seed 000 "skill:// URL behavior": absolute paths and ``..`` rejected; nothing outside the skill is read."""
    write_skill(tmp_path / "root", "s")
    (tmp_path / "root" / "secret.txt").write_text("top secret")
    found = discover(default_roots(tmp_path, tmp_path, extra=[tmp_path / "root"])).by_name()
    with pytest.raises(UnsafePath):
        read_skill_url(url, found, None)


def test_symlink_escaping_the_skill_is_refused(tmp_path: Path) -> None:
    """Seed 000 "skill:// URL behavior": a resolved path escaping the skill's folder is rejected."""
    folder = write_skill(tmp_path / "root", "s")
    (tmp_path / "outside.txt").write_text("outside")
    os.symlink(tmp_path / "outside.txt", folder / "link.txt")
    found = discover(default_roots(tmp_path, tmp_path, extra=[tmp_path / "root"])).by_name()
    with pytest.raises(UnsafePath, match="outside"):
        read_skill_url("skill://s/link.txt", found, None)


def test_reads_skill_md_and_files_with_content_types(tmp_path: Path) -> None:
    """Seed 000 "skill:// URL behavior": skill://name is SKILL.md, skill://name/path
    a file (URL-decoded); the name matches exactly; a missing file is "File not
    found"; .md is text/markdown, anything else text/plain."""
    write_skill(tmp_path / "root", "s", files={"references/my notes.md": "# n", "a.txt": "t"})
    found = discover(default_roots(tmp_path, tmp_path, extra=[tmp_path / "root"])).by_name()
    md = read_skill_url("skill://s", found, None)
    assert md.content_type == "text/markdown" and md.text.startswith("---")
    notes = read_skill_url("skill://s/references/my%20notes.md", found, None)
    assert (notes.content_type, notes.text) == ("text/markdown", "# n")
    assert read_skill_url("skill://s/a.txt", found, None).content_type == "text/plain"
    with pytest.raises(NotFound, match="File not found"):
        read_skill_url("skill://s/nope.md", found, None)
    with pytest.raises(NotFound):
        read_skill_url("skill://other/x.md", found, None)
    with pytest.raises(NotFound):  # the name matches exactly: no case folding, no fallback search
        read_skill_url("skill://S", found, None)


def test_parse_skill_url_shapes() -> None:
    assert parse_skill_url("skill://name") == ("name", None)
    assert parse_skill_url("skill://name/a/./b.md") == ("name", "a/b.md")


def test_only_one_level_under_a_skills_folder_is_discovered(tmp_path: Path) -> None:
    """Seed 000 "Directory layout": ``<skills-root>/<skill-name>/SKILL.md``;
    ``<skills-root>/group/<skill>/SKILL.md`` is not discovered, by a provider
    or in a custom folder (point ``--root`` at the nested parent instead)."""
    project, user, extra = tmp_path / "p", tmp_path / "u", tmp_path / "extra"
    write_skill(project / ".claude/skills/team", "internal", "nested under a group")
    write_skill(extra / "team", "nested-custom", "nested in a custom folder")
    write_skill(project / ".claude/skills", "top", "one level down")
    assert sorted(discover(default_roots(project, user, extra=[extra])).by_name()) == ["top"]
    assert "internal" in discover(default_roots(project, user, extra=[project / ".claude/skills/team"])).by_name()


def test_the_root_option_says_what_discovery_does(cli, tmp_path: Path) -> None:
    """Seed 000 "Custom-directory skills are merged after provider skills":
    ``--root``'s help says after, and a provider's skill of the same name wins."""
    for command in (("skills", "discover"), ("skills", "read"), ("mcp",)):
        said = " ".join(cli(*command, "--help").out.split())
        assert "after the providers' folders (a skill of the same name there wins)" in said, command
    write_skill(tmp_path / ".claude/skills", "same", "the provider's")
    write_skill(tmp_path / "root", "same", "the root's")
    import json

    found = json.loads(cli("skills", "discover", "--root", str(tmp_path / "root"), "--json", cwd=tmp_path).out)
    assert [(s["name"], s["description"]) for s in found["skills"]] == [("same", "the provider's")]
