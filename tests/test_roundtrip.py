"""Real skills as their authors wrote them: imported and exported again, they
come back byte for byte — host-extension keys where they were, lists as
lists, CRLF, block scalars, blank lines — and teachd's own data lands under
``metadata`` only. Property-based where the space is large."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from teachd.core.models import Skill
from teachd.skills.exchange import export_envelope, export_md, from_envelope, from_skill_md
from teachd.store import SkillStore

HOST_KEYS = """---
name: release-notes
description: Writes release notes from merged pull requests. Use when a release is cut.
when_to_use: After tagging a release.
argument-hint: "[version]"
disable-model-invocation: true
user-invocable: false
effort: high
version: 1.2
requires:
  - git
  - gh
type: workflow
allowed-tools:
  - Bash(git log:*)
  - Read File
metadata:
  author: someone
---

# Release notes

Read references/style.md.


"""
CRLF = ("---\r\nname: crlf-skill\r\ndescription: |\r\n  Handles CRLF files.\r\n  Use when they appear.\r\n"
        "---\r\n\r\n# CRLF\r\n\r\nBody line.\r\n")


def save(store: SkillStore, text: str, folder: str | None = None) -> Skill:
    imported = from_skill_md(text, folder, {})
    return store.save(imported.slug, imported.onto, note="test", origin="imported")


def test_host_extension_keys_lists_and_blank_lines_come_back_byte_for_byte(store: SkillStore) -> None:
    skill = save(store, HOST_KEYS, "release-notes")
    assert export_md(skill) == HOST_KEYS
    assert skill.current.metadata["allowed-tools"] == ["Bash(git log:*)", "Read File"]


def test_crlf_and_a_block_scalar_description_come_back_byte_for_byte(store: SkillStore) -> None:
    skill = save(store, CRLF, "crlf-skill")
    assert export_md(skill).encode() == CRLF.encode()
    assert skill.current.description.startswith("Handles CRLF files.")


def test_an_edit_changes_only_what_teachd_owns(store: SkillStore) -> None:
    from dataclasses import replace

    skill = save(store, HOST_KEYS, "release-notes")
    edited = store.update("release-notes", lambda c: replace(c, description="Writes notes. Use when asked."),
                          note="edited")
    text = export_md(edited)
    fm = yaml.safe_load(text.split("---\n")[1])
    assert list(fm) == list(yaml.safe_load(HOST_KEYS.split("---\n")[1]))  # same keys, same order
    assert fm["description"] == "Writes notes. Use when asked."
    assert fm["disable-model-invocation"] is True and fm["version"] == 1.2 and fm["requires"] == ["git", "gh"]
    assert fm["allowed-tools"] == ["Bash(git log:*)", "Read File"] and fm["metadata"] == {"author": "someone"}
    assert text.endswith("# Release notes\n\nRead references/style.md.\n\n\n")
    assert skill.current_version == 1 and edited.current_version == 2


def test_teachds_own_data_goes_under_metadata_only(store: SkillStore) -> None:
    from dataclasses import replace

    imported = from_skill_md(HOST_KEYS, "release-notes", {})
    meta = dict(imported.content.metadata)
    meta["metadata"] = {**meta.get("metadata", {}), "teachd-source": "https://skills.sh/a/b/release-notes"}
    imported = replace(imported, content=replace(imported.content, metadata=meta))
    skill = store.save(imported.slug, imported.onto, note="from a URL", origin="imported")
    fm = yaml.safe_load(export_md(skill).split("---\n")[1])
    assert fm["metadata"] == {"author": "someone", "teachd-source": "https://skills.sh/a/b/release-notes"}
    assert fm["when_to_use"] == "After tagging a release." and fm["effort"] == "high"


def test_the_cli_export_gives_the_authors_file_back(cli, tmp_path: Path) -> None:
    folder = tmp_path / "release-notes"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(HOST_KEYS.encode())
    assert cli("skills", "import", str(folder)).code == 0
    assert cli("skills", "export", "release-notes").out == HOST_KEYS


# -- properties ---------------------------------------------------------------

_KEY = st.from_regex(r"[a-z][a-z0-9_-]{0,14}", fullmatch=True).filter(lambda k: k not in ("name", "description",
                                                                                            "metadata", "slug"))
_SCALAR = st.one_of(st.booleans(), st.integers(-10**6, 10**6), st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=40).filter(
    lambda s: s.strip() == s and "---" not in s))
_VALUE = st.one_of(_SCALAR, st.lists(_SCALAR, min_size=1, max_size=4))
_LINE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=30).filter(
    lambda s: s.strip() not in ("---", "..."))


@settings(max_examples=120, deadline=None)
@given(extra=st.dictionaries(_KEY, _VALUE, max_size=6), body=st.lists(_LINE, max_size=8),
       newline=st.sampled_from(["\n", "\r\n"]), description=_SCALAR.filter(lambda v: isinstance(v, str)))
def test_any_authored_skill_md_round_trips_byte_for_byte(extra, body, newline, description) -> None:
    fm = {"name": "prop-skill", "description": description, **extra}
    head = yaml.safe_dump(fm, sort_keys=False, allow_unicode=True, default_flow_style=False)
    text = ("---\n" + head + "---\n" + "\n".join(body) + "\n").replace("\n", newline)
    imported = from_skill_md(text, "prop-skill", {})
    skill = Skill("prop-skill", "me", True, 1, "", "", imported.onto(None))
    assert export_md(skill) == text


@settings(max_examples=80, deadline=None)
@given(instructions=st.text(max_size=200), files=st.dictionaries(
    st.from_regex(r"references/[a-z]{1,8}\.md", fullmatch=True), st.text(max_size=100), max_size=4),
    enabled=st.booleans())
def test_any_envelope_round_trips(instructions: str, files: dict[str, str], enabled: bool) -> None:
    from teachd.core.models import SkillContent

    content = SkillContent(name="Env Skill", description="Does it. Use when asked.", instructions=instructions,
                           files=files, metadata={"metadata": {"k": "v"}})
    skill = Skill("env-skill", "me", enabled, 3, "", "", content)
    back = from_envelope(json.dumps(export_envelope(skill)))
    assert back.slug == "env-skill" and back.enabled is enabled
    assert back.content.instructions == instructions and back.content.files == files
    assert back.content.name == "Env Skill" and back.content.metadata == content.metadata


def test_an_envelope_keeps_teachds_own_fields_out_of_the_skills_metadata(store: SkillStore) -> None:
    """The author's header (kept to give their file back byte for byte) is teachd's, not the
    skill's: an envelope carries it under ``teachd``, and reading the envelope puts it back."""
    skill = save(store, HOST_KEYS)
    envelope = export_envelope(skill)
    assert envelope["format_version"] == 2
    assert "authored-header" not in envelope["metadata"] and envelope["metadata"]["metadata"]["author"] == "someone"
    assert envelope["teachd"]["authored-header"].startswith("---\nname: release-notes\n")
    back = from_envelope(json.dumps(envelope))
    assert back.content.metadata == skill.current.metadata
    assert export_md(Skill("release-notes", "me", True, 1, "", "", back.content)) == HOST_KEYS


def test_a_version_1_envelope_is_still_read_and_a_newer_one_is_refused_by_name(store: SkillStore) -> None:
    import pytest

    from teachd.core.errors import InvalidSkill

    skill = save(store, HOST_KEYS)
    v2 = export_envelope(skill)
    v1 = {**{k: v for k, v in v2.items() if k != "teachd"}, "format_version": 1,
          "metadata": {**v2["metadata"], **v2["teachd"]}}  # as teachd wrote it before
    assert from_envelope(json.dumps(v1)).content.metadata == skill.current.metadata
    # in a version-2 envelope, the skill's metadata cannot pose as teachd's own field
    posing = {**v2, "teachd": {}, "metadata": {**v2["metadata"], "authored-header": "---\nname: x\n---\n"}}
    assert "authored-header" not in from_envelope(json.dumps(posing)).content.metadata
    with pytest.raises(InvalidSkill, match="format_version 3 is not one this teachd reads"):
        from_envelope(json.dumps({**v2, "format_version": 3}))


def test_strict_validation_warns_about_host_keys_but_passes(tmp_path: Path) -> None:
    from teachd.skills.skillmd import validate_skill_dir

    folder = tmp_path / "release-notes"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(HOST_KEYS)
    (folder / "references" / "style.md").write_text("Style.\n")
    report = validate_skill_dir(folder)
    assert report.ok, report.errors
    assert "top-level key 'when_to_use' is a host's extension, not the spec's" in report.warnings
