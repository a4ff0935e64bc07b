"""Real third-party web applications for the tests, each version in its own
virtual environment: Django's admin, Wagtail and optuna-dashboard, installed
from PyPI with pip, run on loopback with their own SQLite database.

The virtual environments are cached under ``build/real-apps/NAME`` (build/
is ignored by git) and reused while their requirements are unchanged, so
only a cold machine pays for the installs (about 50 s for all four, pip's
own cache cold); ``python -m tests.realapps`` installs them ahead of pytest. The project's own
.venv keeps its own Django for the other tests.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from teachd.demo.sampleapp.judge import teachd_env
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "build" / "real-apps"

# name -> pip requirements. The LTS and the newest release this Python
# installs (Django 6 needs Python 3.12: on 3.11 the newest is 5.2.x).
VENVS: dict[str, tuple[str, ...]] = {
    "django-4.2": ("django>=4.2,<4.3",),
    "django-new": ("django>=5.2",),
    # Wagtail's LTS whose page editor has the icon-only footer toggle, and
    # the newest this Python installs (each brings the Django it supports).
    "wagtail-old": ("wagtail>=5.2,<5.3",),
    "wagtail-new": ("wagtail>=7.0",),
    # A React + MUI single-page app: an older release (with the optuna and
    # bottle it was made against) and the newest (tests/test_real_spa.py).
    "optuna-dashboard-old": ("optuna-dashboard==0.13.0", "optuna==3.4.0", "bottle==0.12.25"),
    "optuna-dashboard-new": ("optuna-dashboard>=0.21", "optuna>=4"),
}


def venv_python(name: str) -> Path:
    """The interpreter of the cached virtual environment NAME, created
    (``python -m venv`` + pip from PyPI) when absent or stale. A lock keeps
    two test processes from installing into the same folder at once."""
    requirements = VENVS[name]
    folder = CACHE / name
    python = folder / "bin" / "python"
    stamp = folder / ".requirements"
    want = f"python {sys.version_info[0]}.{sys.version_info[1]}\n" + "\n".join(requirements) + "\n"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.exists() and stamp.exists() and stamp.read_text() == want:
            return python
        shutil.rmtree(folder, ignore_errors=True)
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", str(folder)], check=True, capture_output=True, timeout=120)
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-compile", "--disable-pip-version-check",
                               *requirements], capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise RuntimeError(f"installing {' '.join(requirements)} failed: {done.stderr[-800:]}")
        stamp.write_text(want)
    return python


def cached_site(name: str, key: str, make: Callable[[Path], None], into: Path) -> Path:
    """A copy in ``into`` of the project ``make`` builds (made and migrated
    once, cached as ``build/real-apps/NAME`` while ``key`` is unchanged):
    a fresh site's migrations cost more than the test that uses it."""
    folder = CACHE / name
    stamp = folder / ".made-from"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (stamp.exists() and stamp.read_text() == key):
            shutil.rmtree(folder, ignore_errors=True)
            building = CACHE / f"{name}.new"
            shutil.rmtree(building, ignore_errors=True)
            building.mkdir()
            make(building)
            (building / ".made-from").write_text(key)
            building.rename(folder)
        shutil.copytree(folder, into, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    return into


def version_of(python: Path, module: str) -> str:
    """The installed version of ``module`` in that environment."""
    out = subprocess.run([str(python), "-c", f"import {module}; print({module}.__version__)"],
                         check=True, capture_output=True, text=True, timeout=60)
    return out.stdout.strip()


def manage(python: Path, folder: Path, *args: str, **env: str) -> str:
    """``manage.py ARGS`` of the project in ``folder`` with that interpreter."""
    done = subprocess.run([str(python), "manage.py", *args], cwd=folder, capture_output=True, text=True,
                          env={**teachd_env(folder, folder), **env}, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed: {done.stderr[-1500:]}")
    return done.stdout


@dataclass
class Served:
    """A project served by ``manage.py runserver`` on loopback."""

    folder: Path
    url: str
    port: int

    def query(self, sql: str, *params: object) -> list[tuple[object, ...]]:
        """Rows from the app's own database: the judge of every test here."""
        with sqlite3.connect(self.folder / "db.sqlite3") as db:
            return db.execute(sql, params).fetchall()


@contextmanager
def serve(python: Path, folder: Path, port: int | None = None,
          ready_path: str = "/admin/login/") -> Iterator[Served]:
    """Run the project with that interpreter until the block ends; on the
    same ``port`` as before an upgrade (a taught skill's scope is the origin)."""
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    server = _runserver(python, folder, port)
    while True:
        try:
            with urllib.request.urlopen(url + ready_path, timeout=5) as r:
                if r.status == 200:
                    break
        except OSError:
            if server.poll() is not None and time.monotonic() < deadline and _port_taken(folder):
                # the port the skill's scope names, free when asked, taken meanwhile by another test's
                # server on a busy machine: asked again until that one is done with it
                time.sleep(1)
                server = _runserver(python, folder, port)
                continue
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise RuntimeError(f"runserver did not start in {folder}: "
                                   + (folder / "runserver.log").read_text(errors="replace")[-600:]) from None
            time.sleep(0.2)
    try:
        yield Served(folder, url, port)
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)


def _runserver(python: Path, folder: Path, port: int) -> subprocess.Popen[bytes]:
    # The app's own log beside its project: when a replay halts, what the server answered is there.
    with (folder / "runserver.log").open("a") as log:
        log.write(f"-- runserver on {port}\n")
        log.flush()
        return subprocess.Popen([str(python), "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
                                cwd=folder, stdout=log, stderr=subprocess.STDOUT, env=teachd_env(folder, folder))


def _port_taken(folder: Path) -> bool:
    """Whether the last runserver in ``folder`` stopped because its port was in use."""
    said = (folder / "runserver.log").read_text(errors="replace")
    return said.rsplit("-- runserver on", 1)[-1].rstrip().endswith("That port is already in use.")


def main() -> None:
    """Install every real app's environment ahead of the tests, timed."""
    for name in sys.argv[1:] or VENVS:
        started = time.monotonic()
        python = venv_python(name)
        print(f"{name}: {python} ({time.monotonic() - started:.1f} s)", flush=True)


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
