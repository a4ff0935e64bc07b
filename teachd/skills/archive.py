"""A skill's files from a folder or an archive (zip, tar, tar.gz), checked
entry by entry before anything is read: no absolute path, no ``..``, no link
or device, no two names that differ only by case (one would overwrite the
other on a case-insensitive disk), and within the skill's limits."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from teachd.core.errors import InvalidSkill, LimitExceeded, UnsafePath
from teachd.core.limits import MAX_FILE_BYTES, MAX_FILES, MAX_TOTAL_BYTES, BinaryFile, as_text, looks_binary
from teachd.core.paths import check_relpath

BINARY = b"\0binary"  # an entry known binary by its name: never read

ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")
SKIP_PARTS = frozenset({".git", "node_modules", ".venv", "__pycache__", "__MACOSX"})


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith(ARCHIVE_SUFFIXES)


def check_entry(name: str) -> str:
    """An archive entry's name as a relative path, or UnsafePath."""
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise UnsafePath(f"archive entry {name!r} is an absolute path")
    if ".." in PurePosixPath(name.replace("\\", "/")).parts:
        raise UnsafePath(f"archive entry {name!r} leaves its folder")
    return check_relpath(name)


def check_names(names: Iterable[str], where: str) -> None:
    seen: dict[str, str] = {}
    for name in names:
        key = name.casefold()
        if key in seen:  # the same name twice: the last would win, unseen by whoever checked the first
            same = "appear twice" if seen[key] == name else "differ only by case"
            raise UnsafePath(f"{where}: {seen[key]!r} and {name!r} {same}")
        seen[key] = name


def read_archive(path: Path, data: bytes | None = None) -> tuple[str, str, dict[str, str], list[str]]:
    """(folder name, SKILL.md text, the other text files, the binary files
    left out) of the one skill in an archive: the file at ``path``, or
    ``data`` under that name (an archive a browser sent, never written to
    disk), with the same checks."""
    entries: dict[str, bytes] = {}
    source: Path | io.BytesIO = path if data is None else io.BytesIO(data)
    if path.name.lower().endswith(".zip"):
        try:
            zf = zipfile.ZipFile(source)
        except zipfile.BadZipFile as exc:
            raise InvalidSkill(f"{path.name} is not a readable archive: {exc}") from None
        with zf:
            for info in zf.infolist():
                name = check_entry(info.filename.rstrip("/")) if info.filename.strip("/") else ""
                kind = stat.S_IFMT(info.external_attr >> 16)  # 0: written without a Unix file type
                if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
                    raise UnsafePath(f"archive entry {info.filename!r} is a link or a device")
                if info.is_dir() or not name:
                    continue
                _room(entries, name, 0 if looks_binary(name) else info.file_size, path)
                if looks_binary(name):
                    entries[name] = BINARY
                    continue
                entries[name] = _read_at_most(zf.open(info), MAX_FILE_BYTES, name)
    else:
        try:
            tf = tarfile.open(path) if data is None else tarfile.open(fileobj=io.BytesIO(data))
        except tarfile.TarError as exc:
            raise InvalidSkill(f"{path.name} is not a readable archive: {exc}") from None
        with tf:
            for member in tf.getmembers():
                name = check_entry(member.name.rstrip("/")) if member.name.strip("/.") else ""
                if member.issym() or member.islnk() or member.isdev() or member.isfifo():
                    raise UnsafePath(f"archive entry {member.name!r} is a link or a device")
                if member.isdir() or not name:
                    continue
                if not member.isfile():
                    raise UnsafePath(f"archive entry {member.name!r} is not a plain file")
                _room(entries, name, 0 if looks_binary(name) else member.size, path)
                if looks_binary(name):
                    entries[name] = BINARY
                    continue
                fh = tf.extractfile(member)
                entries[name] = _read_at_most(fh, MAX_FILE_BYTES, name) if fh else b""
    check_names(entries, path.name)
    return _one_skill(entries, path)


def _room(entries: dict[str, bytes], name: str, size: int, path: Path) -> None:
    if name in entries:  # two entries of one name: the last would silently win over the one checked
        raise UnsafePath(f"{path.name}: the entry {name!r} appears twice")
    if len(entries) > MAX_FILES + 1:
        raise LimitExceeded(f"{path.name} holds more than {MAX_FILES} files besides SKILL.md")
    if size > MAX_FILE_BYTES:
        raise LimitExceeded(f"{name} is {size} bytes, over the {MAX_FILE_BYTES}-byte limit")
    if sum(len(v) for v in entries.values() if v is not BINARY) + size > MAX_TOTAL_BYTES:
        raise LimitExceeded(f"{path.name} is over the {MAX_TOTAL_BYTES}-byte limit of a skill")


def _read_at_most(fh: object, limit: int, name: str) -> bytes:
    data = fh.read(limit + 1)  # type: ignore[attr-defined]
    if len(data) > limit:
        raise LimitExceeded(f"{name} is over the {limit}-byte limit")
    return bytes(data)


def _one_skill(entries: dict[str, bytes], path: Path) -> tuple[str, str, dict[str, str], list[str]]:
    """SKILL.md at the archive's root, or in its one top folder."""
    kept = {n: d for n, d in entries.items() if not set(n.split("/")[:-1]) & SKIP_PARTS}
    if "SKILL.md" in kept:
        prefix, folder = "", path.name.split(".")[0]
    else:
        tops = {n.split("/", 1)[0] for n in kept}
        if len(tops) != 1 or f"{next(iter(tops))}/SKILL.md" not in kept:
            raise InvalidSkill(f"{path.name} holds no SKILL.md at its root or in one top folder")
        folder = next(iter(tops))
        prefix = folder + "/"
    files, skipped = text_files({n[len(prefix):]: d for n, d in kept.items() if n.startswith(prefix)})
    if "SKILL.md" not in files:
        raise InvalidSkill(f"{path.name}: its SKILL.md is not text")
    return folder, files.pop("SKILL.md"), files, skipped


def text_files(entries: dict[str, bytes]) -> tuple[dict[str, str], list[str]]:
    """The entries that are text, and the names of those left out as binary."""
    files: dict[str, str] = {}
    skipped: list[str] = []
    for name, data in entries.items():
        try:
            if data is BINARY:
                raise BinaryFile(name)
            files[name] = as_text(name, data)
        except BinaryFile:
            skipped.append(name)
    return files, skipped
