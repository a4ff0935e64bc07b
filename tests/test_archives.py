"""Skills from archives and folders: every entry checked before anything is
read — absolute paths, ``..``, links, devices and case collisions refused."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from teachd.core.errors import InvalidSkill, LimitExceeded, UnsafePath
from teachd.skills.exchange import read_import_source

SKILL = "---\nname: packed\ndescription: Packed. Use when packed.\n---\n# Packed\n"


def make_zip(path: Path, entries: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16)
            zf.writestr(info, target)
    return path


def make_tar(path: Path, entries: dict[str, bytes], kind: bytes = tarfile.REGTYPE, special: str = "") -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        if special:
            info = tarfile.TarInfo(special)
            info.type = kind
            info.linkname = "/etc/passwd"
            tf.addfile(info)
    return path


def test_a_zip_and_a_tarball_of_a_skill_import(tmp_path: Path) -> None:
    z = make_zip(tmp_path / "packed.zip", {"packed/SKILL.md": SKILL.encode(), "packed/references/a.md": b"A"})
    imported = read_import_source(z)
    assert imported.slug == "packed" and imported.content.files == {"references/a.md": "A"}
    t = make_tar(tmp_path / "packed.tar.gz", {"SKILL.md": SKILL.encode(), "scripts/run.sh": b"echo"})
    assert read_import_source(t).content.files == {"scripts/run.sh": "echo"}


@pytest.mark.parametrize(("entries", "message"), [
    ({"/etc/SKILL.md": SKILL.encode()}, "absolute"),
    ({"packed/../../evil.md": b"x", "packed/SKILL.md": SKILL.encode()}, "leaves its folder"),
    ({"packed/SKILL.md": SKILL.encode(), "packed/Ref.md": b"a", "packed/ref.md": b"b"}, "differ only by case"),
])
def test_unsafe_zip_entries_are_refused(tmp_path: Path, entries: dict[str, bytes], message: str) -> None:
    with pytest.raises(UnsafePath, match=message):
        read_import_source(make_zip(tmp_path / "bad.zip", entries))


def test_links_and_devices_in_archives_are_refused(tmp_path: Path) -> None:
    z = make_zip(tmp_path / "link.zip", {"packed/SKILL.md": SKILL.encode()}, links={"packed/pw.md": "/etc/passwd"})
    with pytest.raises(UnsafePath, match="link or a device"):
        read_import_source(z)
    for kind, name in ((tarfile.SYMTYPE, "sym"), (tarfile.LNKTYPE, "hard"), (tarfile.CHRTYPE, "chr"),
                       (tarfile.FIFOTYPE, "fifo")):
        t = make_tar(tmp_path / f"{name}.tar.gz", {"SKILL.md": SKILL.encode()}, kind, f"references/{name}.md")
        with pytest.raises(UnsafePath, match="link or a device"):
            read_import_source(t)


def test_an_archive_over_the_limits_or_without_a_skill_is_refused(tmp_path: Path) -> None:
    big = make_zip(tmp_path / "big.zip", {"SKILL.md": SKILL.encode(), "r.md": b"x" * (200 * 1024 + 1)})
    with pytest.raises(LimitExceeded, match="over the 204800-byte limit"):
        read_import_source(big)
    none = make_zip(tmp_path / "none.zip", {"a/README.md": b"x", "b/README.md": b"y"})
    with pytest.raises(InvalidSkill, match="no SKILL.md"):
        read_import_source(none)


def test_folders_refuse_links_devices_and_case_collisions(tmp_path: Path) -> None:
    folder = tmp_path / "packed"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL)
    (folder / "references" / "a.md").write_text("A")
    assert read_import_source(folder).content.files == {"references/a.md": "A"}
    os.symlink(folder / "references" / "a.md", folder / "references" / "link.md")  # even one that stays inside
    with pytest.raises(UnsafePath, match="link or a device"):
        read_import_source(folder)
    os.unlink(folder / "references" / "link.md")
    os.mkfifo(folder / "references" / "pipe")
    with pytest.raises(UnsafePath, match="link or a device"):
        read_import_source(folder)
    os.unlink(folder / "references" / "pipe")
    (folder / "references" / "A.md").write_text("other")
    with pytest.raises(UnsafePath, match="differ only by case"):
        read_import_source(folder)


def test_the_cli_imports_an_archive(cli, tmp_path: Path) -> None:
    z = make_zip(tmp_path / "packed.zip", {"packed/SKILL.md": SKILL.encode()})
    r = cli("skills", "import", str(z))
    assert r.code == 0 and "imported packed v1" in r.out
    bad = make_zip(tmp_path / "bad.zip", {"../x/SKILL.md": SKILL.encode()})
    r = cli("skills", "import", str(bad))
    assert r.code == 4 and r.err.startswith("teachd: error:") and "Traceback" not in r.err
