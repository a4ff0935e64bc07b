"""``teachd teach`` on a terminal: the review before saving, one command a
line (teachd.cli.review) — scripted, and through a real pseudo-terminal
while the recorder runs a real Chromium."""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from teachd.cli.review import Discarded, review_in_terminal
from teachd.config import Settings
from teachd.demo.sampleapp import SampleApp
from teachd.demo.sampleapp.judge import teachd_env
from teachd.store import open_store
from teachd.teach.edits import apply_edits
from teachd.teach.process import read_events
from teachd.teach.review import review
from tests.compiler_helpers import EXPENSE
from tests.conftest import all_bytes_under
from tests.ports import free_port
from tests.sample_task import PASSWORD, sign_in


def scripted(*lines: str) -> tuple[Any, list[str]]:
    """An ``ask`` that answers ``lines`` in turn (then the terminal closes), and what was said."""
    said: list[str] = []
    answers = iter(lines)

    def ask(prompt: str) -> str:
        said.append(prompt)
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    return ask, said


def test_the_terminal_review_edits_one_command_a_line_and_refuses_what_does_not_fit(tmp_path: Path) -> None:
    folder = tmp_path / "rec"
    shutil.copytree(EXPENSE, folder)
    rows = review(read_events(folder))
    ask, said = scripted("fixed 3", "nonsense 2", "drop 99", "drop 5", "keep 5", "drop 2", "name 10 Send it in",
                         "fixed 8", "secret 7", "check Report submitted", "uncheck Report submitted",
                         "check Report submitted", "save")
    say: list[str] = []
    edits = review_in_terminal(rows, "", ask, say.append)
    seq = {r["n"]: r["seq"] for r in rows if r["seq"] is not None}
    assert edits.drop == {seq[2]} and edits.fixed == {seq[8]} and edits.secret == {seq[7]}
    assert edits.names == {seq[10]: "Send it in"} and edits.checks == ("Report submitted",)
    errors = [s for s in say if s.startswith("teachd:")]
    assert len(errors) == 3  # a masked field has no value to fix; an unknown command; no step 99
    assert "has no value to mark fixed" in errors[0] and "no command 'nonsense'" in errors[1]
    assert "a step's number from the list (2–10)" in errors[2]
    assert "[secret]" in say[-1] and "Taxi from the airport" not in say[-1]  # no longer said once secret
    apply_edits(folder, edits)
    assert b"Taxi from the airport" not in all_bytes_under(folder)


def test_the_terminal_review_discards_only_when_confirmed_and_a_closed_terminal_saves_nothing(
        tmp_path: Path) -> None:
    rows = review(read_events(EXPENSE))
    ask, _ = scripted("discard", "n", "discard", "y")
    with pytest.raises(Discarded):
        review_in_terminal(rows, "", ask, lambda _s: None)
    ask, _ = scripted("drop 2")
    with pytest.raises(EOFError):
        review_in_terminal(rows, "", ask, lambda _s: None)
    ask, _ = scripted("check Saved", "save", "uncheck Saved", "check Report #17", "save")
    say: list[str] = []
    edits = review_in_terminal(rows, "Report #17 submitted", ask, say.append)
    assert edits.checks == ("Report #17",)
    assert any("did not show 'Saved'" in s for s in say)


def _read_until(fd: int, text: str, timeout: float = 60) -> str:
    seen = ""
    deadline = time.monotonic() + timeout
    while text not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"never saw {text!r} on the terminal: {seen[-1500:]!r}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                seen += os.read(fd, 4096).decode("utf-8", "replace")
            except OSError:  # the terminal closed
                raise AssertionError(f"the terminal closed before {text!r}: {seen[-1500:]!r}") from None
    return seen


def test_teach_on_a_terminal_reviews_before_it_saves(tmp_path: Path, cli_env_runner: Any) -> None:
    """A real ``teachd teach`` on a pseudo-terminal: the person signs in in
    the recorder's Chromium, stops, and at the review marks the email a
    secret, names the sign-in click and adds a check; the saved skill has all
    three, and the email is in no byte of the recording."""
    from playwright.sync_api import sync_playwright

    home, user = tmp_path / "home", tmp_path / "user"
    home.mkdir(mode=0o700)
    user.mkdir()
    env = teachd_env(home, user)
    cdp = free_port()
    with SampleApp(password=PASSWORD) as app:
        master, slave = pty.openpty()
        proc = subprocess.Popen(
            [sys.executable, "-m", "teachd", "teach", "Sign in on a terminal", "--url", app.url + "/login",
             "--headless", "--no-os-input", "--cdp-port", str(cdp)],
            env=env, stdin=slave, stderr=slave, stdout=subprocess.PIPE, text=True, start_new_session=True)
        os.close(slave)
        try:
            _read_until(master, "to finish")
            with sync_playwright() as pw:
                page = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{cdp}").contexts[0].pages[0]
                sign_in(page)
                page.get_by_role("heading", name="Dashboard").wait_for()
                # the recorder's Chromium never offers to keep the password just typed
                (prefs,) = (home / "recordings").glob(".profile-*/Default/Preferences")
                said = json.loads(prefs.read_text())
                assert said["profile"]["password_manager_enabled"] is False
                assert said["credentials_enable_service"] is False
                stopped = cli_env_runner(env, "teach", "stop")
                assert stopped.returncode == 0, stopped.stderr
            listed = _read_until(master, "review> ")
            assert "alice@example.com" in listed and "the Password field" in listed and PASSWORD not in listed
            os.write(master, b"secret 2\nname 4 Log in\ncheck Dashboard\nsave\n")
            out, _ = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
            os.close(master)
    assert proc.returncode == 0 and "saved taught-sign-in-on-a-terminal v1" in out
    skill = open_store(Settings(home=home, owner=env["TEACHD_OWNER"])).get("taught-sign-in-on-a-terminal").current
    plan = json.loads(skill.files["references/steps.json"])
    assert "email" in plan["secrets"] and "Dashboard" in plan["success"]["shows"]
    assert [s.get("name") for s in plan["steps"] if s.get("describe") == "the **Sign in** button"] == ["Log in"]
    assert b"alice@example.com" not in all_bytes_under(home / "recordings")
    assert PASSWORD.encode() not in all_bytes_under(home)
