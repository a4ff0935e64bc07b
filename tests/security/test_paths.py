"""Paths a stranger chooses — a bundled file's name in an import, an archive
entry, a web UI edit, a link in a skill folder — never leave their skill,
never decode into something else later (the skill page puts stored paths
into fetch URLs; a disk may fold look-alikes), and never name another
skill. Every spelling below is refused before anything is stored."""

from __future__ import annotations

import io
import json
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from teachd.core.errors import UnsafePath
from teachd.core.paths import check_relpath
from teachd.skills.edits import put_file
from teachd.skills.exchange import read_import_source
from teachd.store import SkillContent, SkillStore

ESCAPES = [
    "references/%2e%2e/%2e%2e/skills/victim/approval",  # the reported one: decoded by the page's fetch
    "references/%2E%2E/victim",
    "%2e%2e/victim",
    "references/..%2fvictim",
    "references%2f..%2f..%2fvictim",
    "references/%252e%252e/victim",  # double-encoded
    "references\\..\\..\\victim",
    "references\\victim.md",
    "references/．．/victim",  # fullwidth full stops
    "references/．．／victim",  # and a fullwidth solidus
    "references/\u2024\u2024/victim",  # one-dot leaders
    "references/\u2025/victim",  # a two-dot leader
    "references\u2215..\u2215victim",  # division slashes
    "references\u2044..\u2044victim",  # fraction slashes
    "references/\ufe52\ufe52/victim",  # small full stops
    "references/a\u200b.md",  # a zero-width space: two names that look alike
    "references/\u202egnp.md",  # a right-to-left override
    "../victim",
    "references/../../victim",
    "/etc/passwd",
    "C:/Windows/win.ini",
    "references/a\x00.md",
    "references/a\x7f.md",
]


@pytest.mark.parametrize("path", ESCAPES)
def test_a_stored_path_that_could_be_read_as_another_is_refused(path: str) -> None:
    with pytest.raises(UnsafePath):
        check_relpath(path)


@pytest.mark.parametrize("path", ["references/notes.md", "scripts/run.sh", "références/été.md", "a b/c-d_e.txt"])
def test_ordinary_paths_still_pass(path: str) -> None:
    assert check_relpath(path) == path


def _victim_and_attacker(store: SkillStore) -> None:
    store.create("victim", SkillContent(name="victim", description="The owner's.", instructions="# v\n",
                                        files={"references/keep.md": "keep"}))
    store.create("mine", SkillContent(name="mine", description="Mine.", instructions="# m\n"))


@pytest.mark.parametrize("path", ESCAPES[:17])
def test_a_web_ui_file_edit_with_an_escaping_name_stores_nothing(store: SkillStore, path: str) -> None:
    _victim_and_attacker(store)
    with pytest.raises(UnsafePath):
        store.update("mine", put_file(path, "x"), note="edited")
    assert store.get("mine").current_version == 1
    assert store.get("victim").current.files == {"references/keep.md": "keep"}


@pytest.mark.parametrize("path", ESCAPES[:10])
def test_an_envelope_import_with_an_escaping_file_name_stores_nothing(cli, tmp_path: Path, path: str) -> None:
    env = {"format": "teachd-skill", "format_version": 1, "slug": "innocent", "name": "Innocent",
           "description": "Looks fine.", "instructions": "# x\n", "files": {path: "gotcha"}}
    f = tmp_path / "innocent.json"
    f.write_text(json.dumps(env))
    r = cli("skills", "import", str(f))
    assert r.code != 0 and "Traceback" not in r.err
    assert "no skills" in cli("skills", "list").out


def _zip(tmp_path: Path, entries: list[tuple[str, bytes]]) -> Path:
    z = tmp_path / "s.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for name, data in entries:
            zf.writestr(name, data)
    return z


def test_an_archive_with_the_same_entry_twice_is_refused(tmp_path: Path) -> None:
    """The first copy is what a reviewer sees in a listing; the last would win."""
    md = b"---\nname: s\ndescription: d\n---\nb\n"
    z = _zip(tmp_path, [("s/SKILL.md", md), ("s/references/a.md", b"harmless"),
                        ("s/references/a.md", b"the payload")])
    with pytest.raises(UnsafePath, match="twice"):
        read_import_source(z)
    t = tmp_path / "s.tar"
    with tarfile.open(t, "w") as tf:
        for name, data in [("s/SKILL.md", md), ("s/SKILL.md", b"---\nname: s\ndescription: other\n---\n")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    with pytest.raises(UnsafePath, match="twice"):
        read_import_source(t)


def test_an_archive_entry_spelled_with_encoded_dots_is_refused(tmp_path: Path) -> None:
    md = b"---\nname: s\ndescription: d\n---\nb\n"
    for bad in ("s/references/%2e%2e/%2e%2e/victim", "s\\..\\victim", "s/references/．．/victim"):
        with pytest.raises(UnsafePath):
            read_import_source(_zip(tmp_path, [("s/SKILL.md", md), (bad, b"x")]))


def test_a_folder_whose_skill_md_is_a_link_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere.md"
    secret.write_text("---\nname: s\ndescription: the owner's private notes\n---\nprivate\n")
    folder = tmp_path / "s"
    folder.mkdir()
    os.symlink(secret, folder / "SKILL.md")
    with pytest.raises(UnsafePath, match="link"):
        read_import_source(folder)


def test_a_folder_with_a_linked_reference_is_refused(tmp_path: Path) -> None:
    (tmp_path / "private.txt").write_text("private")
    folder = tmp_path / "s"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nb\n")
    os.symlink(tmp_path / "private.txt", folder / "references" / "a.md")
    with pytest.raises(UnsafePath, match="link"):
        read_import_source(folder)
