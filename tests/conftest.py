from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from teachd.config import Settings
from teachd.store import SkillStore, open_store

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "teachd-home"
    h.mkdir(mode=0o700)
    return h


@pytest.fixture
def env(home: Path, tmp_path: Path) -> dict[str, str]:
    user_home = tmp_path / "user"
    user_home.mkdir()
    e = {k: v for k, v in os.environ.items() if not k.startswith("TEACHD_")}
    e.update(TEACHD_HOME=str(home), HOME=str(user_home), TEACHD_OWNER="alice", PYTHONUTF8="1")
    return e


@pytest.fixture
def cli(env: dict[str, str], tmp_path: Path) -> Callable[..., Result]:
    """The real command line — the same ``main()`` a shell runs — in-process,
    under click's isolation of stdin, stdout, stderr and the environment:
    no Python start-up per call. (Tests of processes — teach, run — spawn.)"""
    from click.testing import CliRunner

    from teachd.cli import main

    def run(*args: str, input: str | None = None, cwd: Path | None = None, **extra: str) -> Result:
        full = env | extra
        overrides: dict[str, str | None] = {**full, **{k: None for k in os.environ if k not in full}}
        here = os.getcwd()
        os.chdir(cwd or tmp_path)
        try:
            with CliRunner().isolation(input=input, env=overrides) as (out, err, _both):
                try:
                    main(list(args))
                    code = 0
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                return Result(code, out.getvalue().decode(), err.getvalue().decode())
        finally:
            os.chdir(here)

    return run


@pytest.fixture
def cli_process(env: dict[str, str], tmp_path: Path) -> Callable[..., Result]:
    """The command line as a separate process, for what only a process shows
    (start-up, signals, `python -m teachd`)."""

    def run(*args: str, input: str | None = None, **extra: str) -> Result:
        p = subprocess.run([sys.executable, "-m", "teachd", *args], capture_output=True, text=True,
                           input=input, env=env | extra, cwd=tmp_path, timeout=120)
        return Result(p.returncode, p.stdout, p.stderr)

    return run


@pytest.fixture(params=["sqlite", "postgresql"])
def settings(home: Path, request: pytest.FixtureRequest) -> Settings:
    """The store's settings — once on the embedded SQLite, once on PostgreSQL:
    every test of the store runs on both engines."""
    if request.param == "postgresql":
        return Settings(home=home, owner="alice", db_url=request.getfixturevalue("postgres_url"))
    return Settings(home=home, owner="alice")


@pytest.fixture
def store(settings: Settings) -> SkillStore:
    return open_store(settings)


def write_skill(root: Path, name: str, description: str = "Does a thing.", body: str = "# Body\n",
                extra: str = "", files: dict[str, str] | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body}", encoding="utf-8"
    )
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def display() -> Iterator[str]:
    """A virtual X display of the module's own (Xvfb), for headed Chromium and xdotool."""
    from teachd.demo.xvfb import xvfb
    from tests.programs import need

    need("Xvfb")
    with xvfb() as d:
        yield d


@pytest.fixture(scope="session")
def desk() -> Iterator[Any]:
    """A desktop session (Xvfb, session bus, AT-SPI) for the test process:
    AT-SPI binds a process to the first bus it meets (tests/desktop.py)."""
    from tests.desktop import a11y_session

    with a11y_session() as session:
        yield session


@pytest.fixture
def on_desk(desk: Any, monkeypatch: pytest.MonkeyPatch, browser: Any) -> Iterator[tuple[Any, Any]]:
    """A replay's process on the desktop session (its display and bus), and a
    browser context with a page for the replay's first step."""
    monkeypatch.setenv("DISPLAY", desk.display)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", desk.env["DBUS_SESSION_BUS_ADDRESS"])
    context = browser.new_context()
    yield context, context.new_page()
    context.close()


@pytest.fixture
def pw() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """One throwaway PostgreSQL cluster for the test session (tests/postgres.py)."""
    from tests.postgres import postgres_cluster

    with postgres_cluster() as url:
        yield url


@pytest.fixture
def postgres_url(postgres_server: str, request: pytest.FixtureRequest) -> str:
    """An empty database of the test's own."""
    import hashlib
    import re

    from tests.postgres import fresh_database

    name = re.sub(r"\W", "_", request.node.name.lower())
    return fresh_database(postgres_server, "t_" + hashlib.sha1(name.encode()).hexdigest()[:12] + "_" + name[:40])


@pytest.fixture(scope="session")
def taught_sample(tmp_path_factory: pytest.TempPathFactory):
    """The sample task, taught once through ``teachd teach`` (see sample_task)."""
    from tests.sample_task import teach_sample

    return teach_sample(tmp_path_factory.mktemp("taught"))


@pytest.fixture
def taught(taught_sample, tmp_path: Path) -> tuple[dict[str, str], int]:
    """A fresh copy of the taught home for one test: (env, app port)."""
    from tests.sample_task import copy_home

    return copy_home(taught_sample, tmp_path), taught_sample.port


def all_bytes_under(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file())


@pytest.fixture
def written(settings: Settings, request: pytest.FixtureRequest) -> Callable[[], bytes]:
    """Everything the store wrote: TEACHD_HOME, and the PostgreSQL cluster's files on that engine."""

    def read() -> bytes:
        extra = request.getfixturevalue("postgres_server").written() if settings.db_url else b""
        return all_bytes_under(settings.home) + extra

    return read


@pytest.fixture
def cli_env_runner() -> Callable[..., subprocess.CompletedProcess[str]]:
    """The CLI with a given environment (for module-scoped homes)."""

    def run(env: dict[str, str], *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "teachd", *args], env=env, input=input,
                              capture_output=True, text=True, timeout=180)

    return run


@pytest.fixture
def browser():
    """Debian's Chromium for a test that drives the web UI as a person."""
    from playwright.sync_api import sync_playwright

    from recorder.browser import chromium_path, launch_args
    from tests.programs import need

    need("chromium")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path(None, headless=True), args=launch_args(None))
        yield b
        b.close()


# -- markers: what a test needs, so `make test-fast` can leave the heavy ones out --------------------
# A test is marked by what it uses (its fixtures) and by what its module starts: e2e (a browser, a
# daemon, a child process), desktop (Xvfb, an accessibility bus, desktop apps), postgres (the
# throwaway cluster), realapps (Django, Wagtail, optuna-dashboard in their own environments). Every test still
# runs in `make test`; `make test-fast` runs those with none of them.
_E2E_FIXTURES = {"browser", "pw", "taught", "taught_sample", "display", "cli_process", "cli_env_runner"}
_E2E_SOURCE = ("sync_playwright", "serve(", "daemon(", "subprocess", "Popen", "TeachdMCP(", "two_sites",
               "teach_sample", "SampleApp", "open_chromium", "run_skill")


def _module_needs(path: Path, cache: dict[Path, set[str]] = {}) -> set[str]:  # noqa: B006 — a memo
    if path not in cache:
        text = path.read_text(encoding="utf-8")
        name = path.name
        needs = set()
        if 'scope="module"' in text:
            needs.add("together")
        if any(s in text for s in _E2E_SOURCE):
            needs.add("e2e")
        if name.startswith("test_desktop") or "a11y_session" in text or "xvfb" in text:
            needs.add("desktop")
        if name in ("test_real_app.py", "test_real_cms.py", "test_real_spa.py"):
            needs.add("realapps")
        cache[path] = needs
    return cache[path]


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the xdist_group marks set here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        needs = set(_module_needs(Path(str(item.fspath))))
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & _E2E_FIXTURES:
            needs.add("e2e")
        if fixtures & {"desk"}:
            needs.add("desktop")
        params = getattr(getattr(item, "callspec", None), "params", {})
        if fixtures & {"postgres_url", "postgres_server"} or "postgresql" in params.values():
            needs.add("postgres")
        if "together" in needs:
            needs.discard("together")
            # a module that builds its fixtures once (a taught skill, a real app, a halted run) runs on
            # one worker (`--dist loadgroup`), so they are built once, not once on each worker
            item.add_marker(pytest.mark.xdist_group(Path(str(item.fspath)).stem))
        for mark in sorted(needs):
            item.add_marker(getattr(pytest.mark, mark))
