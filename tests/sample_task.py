"""The sample app's task, taught once per test session through the real
recorder, and a fresh copy of that teachd home for each test (so no test
depends on another's runs, rules or versions)."""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from teachd.demo.sampleapp.judge import teachd_env
from tests.drift_suite import SLUG, Taught, replay_cli, teach_task

PASSWORD = "Rr9-replay-Secret"
APPROVE_ALL = "once\n" * 80
__all__ = ["PASSWORD", "SLUG", "copy_home", "held_at", "replay", "sign_in", "teach_sample"]


def teach_sample(base: Path, teach: Callable[[Path, str, dict[str, str]], Taught] = teach_task) -> Taught:
    """``teach`` (the sample task, or another of the sample app's) in a new home under ``base``."""
    home, user = base / "home", base / "user"
    home.mkdir(mode=0o700)
    user.mkdir()
    return teach(home, PASSWORD, teachd_env(home, user))


def copy_home(taught: Taught, dest: Path) -> dict[str, str]:
    shutil.copytree(taught.home, dest / "home")
    (dest / "user").mkdir(exist_ok=True)
    return teachd_env(dest / "home", dest / "user")


def replay(env: dict[str, str], *args: str, stdin: str = APPROVE_ALL,
           secret: bool = True) -> tuple[int, dict, str]:
    return replay_cli(env, *args, password=PASSWORD if secret else None, approvals=stdin)


@contextlib.contextmanager
def held_at(app: Any, prefix: str) -> Iterator[tuple[threading.Event, threading.Event]]:
    """The sample app holds its answer to a GET of ``prefix`` until released
    (a replay stopped mid-step, for as long as a test needs): yields
    (reached, release); leaving releases it."""
    reached, release = threading.Event(), threading.Event()
    answer = app._get

    def held(handler: Any) -> None:
        if handler.path.startswith(prefix):
            reached.set()
            release.wait(60)
        with contextlib.suppress(BrokenPipeError):  # the browser that asked may be gone by now
            answer(handler)

    app._get = held
    try:
        yield reached, release
    finally:
        release.set()


def sign_in(page: Any, password: str = PASSWORD) -> None:
    """A person signs in to the sample app, field by field, as a recorder sees it."""
    page.click("#email")
    page.keyboard.type("alice@example.com")
    page.click("#password")
    page.keyboard.type(password)
    page.click("button[type=submit]")
    page.wait_for_url("**/dashboard")
