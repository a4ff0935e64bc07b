"""Running the documentation's console samples (tests/test_docs_samples.py):
a block's commands one by one — in-process through click's CliRunner, or as
the processes a page starts (``teachd teach``, ``teachd serve``, curl) — and
each output compared with the page (tests/docsamples.py)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teachd.teach.process import TeachProcess
from tests.conftest import ROOT
from tests.docsamples import Block, Command, Invocation, differences, ids_shown, substitute, teachd_invocation
from tests.ports import free_port

TRANSCRIPTS = os.environ.get("TEACHD_SAMPLES_OUT")  # a file: every command's real output is appended

# The pages' places: each command here gets this run's.
DOC_APP = "127.0.0.1:8712"  # the sample app
DOC_CDP = "9444"  # teach's --cdp-port
DOC_DAEMON = "127.0.0.1:8765"  # teachd serve's default


@dataclass
class Output:
    code: int
    shown: str  # what a terminal shows: stdout and stderr interleaved (stdout only with 2>/dev/null)


Runner = Callable[[Command, Invocation | None], Output]  # the invocation: None for a line not teachd's


def check_block(block: Block, run: Runner) -> None:
    """Run each command of ``block`` in turn and compare; every difference is
    reported at once (page line, diff). A recording or run id the page shows
    is replaced in the later command lines by the one this run printed."""
    ids: dict[str, str] = {}
    problems = []
    for c in block.commands:
        line = substitute(c.line, ids)
        got = run(c, teachd_invocation(line))
        if TRANSCRIPTS:  # what teachd printed, as a page shows it: for rewriting a page
            with open(TRANSCRIPTS, "a", encoding="utf-8") as f:
                f.write(f"{block.key}:{c.lineno}\n$ {c.line}\n{got.shown}"
                        + ("" if got.shown.endswith("\n") or not got.shown else "\n")
                        + (f"(exit {got.code})\n" if got.code else "") + "\n")
        ids.update(ids_shown(c.expected, got.shown))
        diff = differences(c.expected, got.shown)
        if diff:
            problems.append(f"{block.page}:{c.lineno}: $ {c.line}\n{diff}")
        if got.code != c.exit:
            problems.append(f"{block.page}:{c.lineno}: $ {c.line}\nexit {got.code}, the page says {c.exit}:\n"
                            f"{got.shown}")
    assert not problems, "\n\n".join(problems)


def invoke(env: dict[str, str], inv: Invocation | None, cwd: Path) -> Output:
    """``teachd`` in-process (as conftest's ``cli``), showing what a terminal shows:
    stdout and stderr interleaved in the order written, each a line at a time."""
    from click.testing import CliRunner

    from teachd.cli import main

    assert inv is not None, "not a teachd command"
    full = env | inv.env
    overrides: dict[str, str | None] = {**full, **{k: None for k in os.environ if k not in full}}
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with CliRunner().isolation(input=inv.stdin or "", env=overrides) as (out, _err, both):
            for stream in (sys.stdout, sys.stderr):  # line-buffered, as Python's are on a terminal or a pipe
                stream.reconfigure(line_buffering=True)  # type: ignore[union-attr]
            try:
                main(list(inv.argv))
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            return Output(code, (both if inv.stderr_shown else out).getvalue().decode())
    finally:
        os.chdir(here)


def in_process(env: dict[str, str], cwd: Path) -> Runner:
    return lambda c, inv: invoke(env, inv, cwd)


def localised(argv: list[str], app_port: int, **more: str) -> list[str]:
    """The page's ports → this run's."""
    swaps = {DOC_APP: f"127.0.0.1:{app_port}", **more}
    out = []
    for a in argv:
        for theirs, ours in swaps.items():
            a = a.replace(theirs, ours) if ":" in theirs else (ours if a == theirs else a)
        out.append(a)
    return out


# -- the sample task, taught as docs/cli.md shows it ---------------------------------------------------

@dataclass
class TaughtHere:
    home: Path
    port: int  # the sample app's: the skill's scope is this origin
    teach: Output  # what `teachd teach` printed: its stderr lines, then its stdout line


class TextTeach(TeachProcess):
    """``teachd teach`` as the page writes it — text, not the ``--json`` the
    suite's TeachProcess asks for — ready once it says where it records. The
    demo's script plays the person over its DevTools port (TeachProcess's
    ``events``, ``wait_for`` and ``finish``)."""

    def __init__(self, env: dict[str, str], argv: list[str], cdp_port: int,
                 timeout: float = 60) -> None:
        self.cdp_port = cdp_port
        self.proc = subprocess.Popen([sys.executable, "-m", "teachd", *argv], env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                     start_new_session=True)
        self.err_lines: list[str] = []
        deadline = time.monotonic() + timeout
        assert self.proc.stderr is not None
        while True:
            line = self.proc.stderr.readline()
            self.err_lines.append(line)
            said = re.match(r"teachd: recording .* into (/\S+?)(?:; DevTools|\. Close)", line)
            if said:
                self.recording_dir = Path(said.group(1))
                return
            if (not line and self.proc.poll() is not None) or time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError("teachd teach did not start: " + "".join(self.err_lines)[-1500:])


def teach_as_written(line: str, base: Path) -> TaughtHere:
    """``line`` (docs/cli.md's teach command), run in a new home under ``base``
    against the sample app, the person played by the demo's script."""
    from teachd.demo.sampleapp import SampleApp
    from teachd.demo.sampleapp.judge import teachd_env
    from teachd.demo.sampleapp.script import demonstrate
    from tests.sample_task import PASSWORD

    home, user = base / "home", base / "user"
    home.mkdir(mode=0o700)
    user.mkdir()
    inv = teachd_invocation(line)
    assert inv is not None and inv.argv[0] == "teach", line
    port, cdp = free_port(), free_port()
    with SampleApp(password=PASSWORD, port=port):
        teach = TextTeach(teachd_env(home, user), localised(inv.argv, port, **{DOC_CDP: str(cdp)}), cdp)
        try:
            demonstrate(teach, PASSWORD)
        except BaseException:
            os.killpg(teach.proc.pid, signal.SIGKILL)  # the recorder and its Chromium: its own session
            raise
        code, out, err = teach.finish()
    assert code == 0, err + out
    return TaughtHere(home, port, Output(code, err + out))


def home_copy(taught: TaughtHere, dest: Path) -> dict[str, str]:
    """A fresh copy of the taught home, and the environment of a command line working in it."""
    from teachd.demo.sampleapp.judge import teachd_env

    shutil.copytree(taught.home, dest / "home")
    (dest / "user").mkdir()
    return teachd_env(dest / "home", dest / "user")


# The app a run meets, named by the comment the page gives its command line.
APP_CHANGED: dict[str, dict[str, bool]] = {
    "": {},
    "the app's labels reworded since": {"changed_labels": True},
    "the app lost its Submit button": {"submit_removed": True},
    "nobody to approve": {},
}


def taught_runner(taught: TaughtHere, env: dict[str, str], cwd: Path) -> Runner:
    """The commands of a page that starts from the taught skill: the teach line is the one
    ``taught`` ran; a run meets the sample app (as its comment says it changed); the secret
    the page shows as … is the one the demonstration typed."""
    from teachd.demo.sampleapp import SampleApp, Variant
    from tests.sample_task import PASSWORD

    def run(c: Command, inv: Invocation | None) -> Output:
        assert inv is not None, f"not a teachd command: {c.line}"
        if inv.argv[0] == "teach":
            return taught.teach
        inv.argv = localised(inv.argv, taught.port)
        if "TEACHD_SECRET_PASSWORD" in inv.env:
            inv.env["TEACHD_SECRET_PASSWORD"] = PASSWORD
        if inv.argv[0] != "run":
            where = ROOT if inv.argv[:2] == ["skills", "validate"] else cwd  # its paths are the repository's
            return invoke(env, inv, where)
        assert inv.comment in APP_CHANGED, f"which app does this run meet? {c.line}"
        with SampleApp(password=PASSWORD, port=taught.port, variant=Variant(**APP_CHANGED[inv.comment])):
            return invoke(env, inv, cwd)

    return run


# -- the daemon ---------------------------------------------------------------------------------------

@contextlib.contextmanager
def schedulers_lead(env: dict[str, str]) -> Iterator[Any]:
    """The scheduler as ``teachd serve`` holds it (ScheduleService, as tests/test_schedule.py's
    Daemonish), in this process: it leads, and its jobs — with their next run times — are in the
    store. (A scheduled *run* would wait on the daemon's Approvals page: not wanted here.)"""
    from teachd.config import settings_from_env
    from teachd.runner.secret_desk import SecretDesk
    from teachd.schedule.service import ScheduleService
    from teachd.store import open_store
    from teachd.store.approvals import ApprovalQueue

    def no_runs(*args: object, **kwargs: object) -> Any:
        raise AssertionError("only health checks are fired here")

    settings = settings_from_env(env)
    store = open_store(settings)
    service = ScheduleService(store, settings, ApprovalQueue(store), SecretDesk(), no_runs)
    service.start()
    try:
        deadline = time.monotonic() + 30
        while not service.leading:
            assert time.monotonic() < deadline, "the scheduler did not take the lead"
            time.sleep(0.05)
        yield service
    finally:
        service.stop()


def health_check_on_a_changed_signin(taught: TaughtHere, env: dict[str, str], schedule_id: int) -> None:
    """With the daemon's scheduler leading, the health check ``schedule_id`` fires (as its job
    does) at the sample app whose sign-in page lost its button."""
    from teachd.demo.sampleapp import SampleApp, Variant
    from tests.sample_task import PASSWORD

    with SampleApp(password=PASSWORD, port=taught.port, variant=Variant(signin_removed=True)) as app, \
            schedulers_lead(env) as service:
        service.fire("schedule", schedule_id)
        assert app.state.clicked() == [] and not app.state.sessions  # a check never acts


@contextlib.contextmanager
def daemon_as_written(env: dict[str, str], inv: Invocation) -> Iterator[tuple[Output, int]]:
    """``teachd serve`` as the page starts it, on a free port rather than its default (8765 may
    be taken on a shared machine): (its first line, the port), until it is stopped by SIGTERM."""
    import httpx

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "teachd", *inv.argv, "--port", str(port)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        for _ in range(200):  # the line comes before uvicorn binds: wait until it answers
            with contextlib.suppress(httpx.TransportError):
                httpx.get(f"http://127.0.0.1:{port}/logged-out", timeout=1)
                break
            time.sleep(0.05)
        yield Output(0, first), port
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(60)
        assert code == 0, proc.stderr.read() if proc.stderr else code


def bash(line: str, env: dict[str, str]) -> Output:
    """A line of the page that is not teachd's (curl …), as a shell runs it."""
    p = subprocess.run(["bash", "-c", line], env=env, capture_output=True, text=True, timeout=60)
    return Output(p.returncode, p.stdout + p.stderr)
