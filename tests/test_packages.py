"""`make test` and `make demo` install every Debian package the code starts a
program from — checked against the code and the machine, so a machine that
once had a package installed by hand cannot hide a missing one (the desktop
apps were left out of the Makefile's list, and CI stayed green on a machine
that had them)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.programs import BASE, BOOTSTRAP, PACKAGES, missing, need, where

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("teachd", "recorder", "compiler", "tests", "bench", "scripts")
# calls whose first argument is an argv (a list or tuple whose first item names the program)
STARTERS = {"run", "Popen", "check_output", "check_call", "call", "start", "_run", "create_subprocess_exec",
            "Editor"}  # tests.desktop.Editor: a desktop app's argv, started by DesktopSession.editor
# calls whose first argument names a program to find
FINDERS = {"which", "_bin", "need", "where"}


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _programs_in(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        # a program named by its full path (Chromium's default, /usr/bin/chromium)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if m := re.fullmatch(r"/usr/s?bin/([\w.+-]+)", node.value):
                found.add(m[1])
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name, first = _name(node.func), node.args[0]
        if name in STARTERS and isinstance(first, ast.List | ast.Tuple) and first.elts:
            first = first.elts[0]
        elif name not in FINDERS and name != "create_subprocess_exec":
            continue
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and re.fullmatch(r"[\w.+-]+", first.value):
            found.add(first.value)
    return found


def started_programs() -> dict[str, set[str]]:
    """Every program named where the code starts or looks for one → the files that name it."""
    out: dict[str, set[str]] = {}
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            for program in _programs_in(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                out.setdefault(program, set()).add(str(path.relative_to(ROOT)))
    return out


def print_debs(*overrides: str) -> set[str]:
    done = subprocess.run(["make", "-s", "--no-print-directory", "print-debs", *overrides], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def unlisted(listed: set[str]) -> list[str]:
    """The programs whose package the Makefile's list does not hold."""
    return sorted(p for p, packages in PACKAGES.items() if packages[0] not in listed)


def _dpkg(*args: str) -> str:
    return subprocess.run(["dpkg-query", *args], capture_output=True, text=True, timeout=60).stdout


def package_of(path: str) -> str:
    """The Debian package that installed ``path`` (``dpkg -S``), across merged /usr."""
    real = os.path.realpath(path)
    tries = [real]
    if m := re.fullmatch(r"/usr/(s?bin)/(.+)", real):
        tries.append(f"/{m[1]}/{m[2]}")
    for attempt in tries:
        if said := _dpkg("-S", attempt).strip():
            return said.split(":", 1)[0].split(",")[0].strip()
    return ""


def depends_of(package: str) -> set[str]:
    said = _dpkg("-W", "-f=${Depends}", package)
    return {re.split(r"[\s(:]", alt.strip())[0] for dep in said.split(",") for alt in dep.split("|") if alt.strip()}


def test_every_program_the_code_starts_has_a_package_listed() -> None:
    started = started_programs()
    unknown = {p: sorted(files) for p, files in started.items() if p not in PACKAGES and p not in BASE | BOOTSTRAP}
    assert not unknown, f"programs started with no Debian package listed in tests/programs.py: {unknown}"
    stale = set(PACKAGES) - set(started)
    assert not stale, f"listed in tests/programs.py but started nowhere: {sorted(stale)}"
    # the scan sees what it must: the desktop apps the missing packages once broke
    assert {"mousepad", "featherpad", "xcalc", "zenity", "openbox", "xdotool", "Xvfb", "chromium", "pg_ctl",
            "npm"} <= set(started)


def test_make_print_debs_lists_every_package_the_programs_come_from() -> None:
    listed = print_debs()
    assert unlisted(listed) == []


def test_the_check_fails_when_a_package_is_dropped_from_the_makefile() -> None:
    """Dropping the desktop list (as the misordered `:=` did) is caught, program by program."""
    assert unlisted(print_debs("DESKTOP_DEBS=")) == ["dbus-launch", "featherpad", "galculator", "mousepad", "openbox",
                                                     "xcalc", "xprop", "zenity"]
    assert "postgresql" not in print_debs("TEST_DEBS=chromium xvfb")
    assert unlisted(print_debs("NPM_DEB=")) == ["npm"]


@pytest.mark.parametrize("program", sorted(PACKAGES))
def test_each_program_comes_from_the_package_the_makefile_installs(program: str) -> None:
    path = need(program)
    package = package_of(path)
    allowed = set(PACKAGES[program]) | depends_of(PACKAGES[program][0])
    assert package in allowed, f"{path} comes from {package or 'no Debian package'}, expected one of {sorted(allowed)}"


@pytest.mark.parametrize("program", sorted(BASE))
def test_base_programs_come_with_every_debian_system(program: str) -> None:
    package = package_of(where(program) or "")
    assert package, f"{program} is not from a Debian package"
    essential, priority = _dpkg("-W", "-f=${Essential} ${Priority}", package).split()
    assert essential == "yes" or priority == "required", f"{program} ({package}) is not on every Debian system"


def test_a_missing_program_is_one_line_naming_its_package() -> None:
    line = missing("xcalc")
    assert "\n" not in line and "x11-apps" in line and "apt-get install x11-apps" in line


def test_a_test_needing_a_missing_program_fails_in_that_one_line_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(pytest.fail.Exception) as failed:
        need("mousepad")
    assert str(failed.value) == missing("mousepad") and not failed.value.pytrace
