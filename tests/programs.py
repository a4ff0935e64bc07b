"""The programs the product and its tests start, and the Debian package
that brings each — so a test that needs one fails with one line naming the
package (never a ``FileNotFoundError`` traceback), and
``tests/test_packages.py`` can hold the Makefile to installing them all.

The list is checked against the code (every program a ``subprocess`` call,
``shutil.which`` or a desktop ``start`` names must be here) and against the
machine (``dpkg -S`` on each program must name its package, or a package
its package depends on), so neither the list nor the Makefile can drift."""

from __future__ import annotations

import glob
import os
import shutil

import pytest

# program → the Debian package the Makefile installs for it (first), and any other package
# that may already carry it where the Makefile then installs nothing (a Node.js with its own npm)
PACKAGES: dict[str, tuple[str, ...]] = {
    "Xvfb": ("xvfb",),
    "chromium": ("chromium",),
    "chromium-headless-shell": ("chromium-headless-shell",),
    "xdotool": ("xdotool",),
    "initdb": ("postgresql",),
    "pg_ctl": ("postgresql",),
    "dbus-launch": ("dbus-x11",),
    "openbox": ("openbox",),
    "xprop": ("x11-utils",),
    "mousepad": ("mousepad",),
    "zenity": ("zenity",),
    "galculator": ("galculator",),
    "featherpad": ("featherpad",),
    "xcalc": ("x11-apps",),
    "npm": ("npm", "nodejs"),
}

# programs every Debian system has (packages of priority "required"): nothing to install
BASE = frozenset({"sleep", "true", "mount", "umount", "dpkg-query", "bash", "nice", "setpriv"})
# what runs `make test` itself: a machine without it cannot start the suite that would check it
BOOTSTRAP = frozenset({"make"})


def where(program: str) -> str | None:
    """The program's path as the code that starts it finds it: PostgreSQL's
    binaries in Debian's versioned folder (not on the PATH), the rest on the PATH."""
    if program in ("initdb", "pg_ctl"):
        found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{program}"))
        if found:
            return found[-1]
    return shutil.which(program)


def missing(program: str) -> str:
    """The one line a test fails with when ``program`` is not installed."""
    package = PACKAGES[program][0] if program in PACKAGES else "?"
    return (f"{program} is not installed: it comes with Debian's {package} "
            f"(`make test` installs it; by hand: apt-get install {package})")


def need(program: str) -> str:
    """The program's path, or the test fails with one line naming its package."""
    found = where(program)
    if not found or not os.access(found, os.X_OK):
        pytest.fail(missing(program), pytrace=False)
    return found
