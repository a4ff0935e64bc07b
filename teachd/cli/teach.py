"""``teachd teach``: record a demonstration, then compile and save it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from teachd.cli.app import App, emit, json_option, pass_app
from teachd.core.errors import BadInput, Conflict, NotFound, TeachdError, Unavailable, component_errors
from teachd.teach.process import CONTROL_FILE, TEACH_LOCK

if TYPE_CHECKING:
    from teachd.store.locks import FileLock


def teach_lock(home: Path) -> FileLock:
    """One recording per TEACHD_HOME, with the recorder's pid and folder
    written inside for `teachd teach stop` (and for retention, which never
    touches the recording being written)."""
    from teachd.store.locks import FileLock

    return FileLock(home / TEACH_LOCK)


def _stop_running(app: App, as_json: bool) -> None:
    lock = teach_lock(app.settings.home)
    info = lock.holder()
    pid = info.get("pid") if info is not None else None
    if info is None or not isinstance(pid, int):
        raise NotFound("no recording is running")
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while lock.holder() is not None and time.monotonic() < deadline:
        time.sleep(0.1)  # the recorder finishes writing and compiling first
    emit(as_json, {"stopped": pid, "recording_dir": info.get("recording_dir")},
         f"stopped the recording in {info.get('recording_dir')}")


@click.command()
@click.argument("name", required=False)
@click.option("--url", help="Where the demonstration starts.")
@click.option("--repair", "repair_run", metavar="RUN_ID",
              help="Repair a skill by showing one step: replay the halted run's steps before the one "
                   "it could not trust, then record what you do there (see below).")
@click.option("--extend-scope", is_flag=True,
              help="With --repair: add sites the repair visited to the skill's allowed scope "
                   "without asking.")
@click.option("--ask-on", type=click.Choice(["terminal", "page"]), default="terminal", show_default=True,
              help="With --repair: where the replay before the step asks for approvals and secrets — "
                   "this terminal, or the running daemon's Approvals page.")
@click.option("--cdp-port", type=click.IntRange(1024, 65535),
              help="Expose Chromium's DevTools on 127.0.0.1:N so automation can drive it.")
@click.option("--headless", is_flag=True, help="No visible window (for tests and CI).")
@click.option("--no-os-input", is_flag=True, help="Do not record desktop clicks and keys.")
@click.option("--yes", "-y", "no_review", is_flag=True,
              help="Save at once, without the review (as when the input is not a terminal).")
@click.option("--no-save", is_flag=True,
              help="Record only: keep the recording for a review (the daemon's Teach page shows it); "
                   "`teachd compile DIR --save` saves it later.")
@json_option
@pass_app
def teach(app: App, name: str | None, url: str | None, repair_run: str | None, extend_scope: bool,
          ask_on: str, cdp_port: int | None, headless: bool, no_os_input: bool, no_review: bool,
          no_save: bool, as_json: bool) -> None:
    """Record a demonstration of task NAME starting at --url, review it, then compile and save it.

    A bar in the page says it is recording and shows each step as it is
    captured, with Pause/Resume, Mark next field secret (also Ctrl+Alt+S in a
    field), Undo last step and Stop. Recording also stops when the browser is
    closed, on Ctrl+C / SIGTERM, or on `teachd teach stop`. A masked field's
    value is never written anywhere.

    On a terminal, the steps are then listed with their values for a review
    before anything is saved: leave a step out (drop N), name it (name N
    TEXT), type its value as shown on every run (fixed N) or treat it as a
    secret (secret N: it leaves the recording), add a check the final page
    must pass (check TEXT) — then save or discard. --yes (or input that is
    not a terminal) saves at once.

    With --repair RUN_ID (a run that halted at step N): the browser replays
    steps 1…N−1 under the skill's approvals, the bar names step N ("Click the
    Submit report button — show me where it is now"), and what you do until
    Done (or closing the browser) becomes the skill's next version: step N
    keeps its old evidence and gains the new, steps you add or skip are
    spliced in, and the History says "repaired step N (run …)". A site
    outside the skill's scope is added only if you agree (or --extend-scope).
    """
    if name == "stop" and url is None and repair_run is None:
        return _stop_running(app, as_json)
    _check_arguments(name, url, repair_run)
    from recorder.record import TeachOptions, new_recording_id, record
    from teachd.teach.retention import purge_recordings

    settings = app.settings
    repairing = _repairing(app, repair_run, ask_on, as_json) if repair_run else None
    lock = teach_lock(settings.home)
    if not lock.try_acquire():
        raise Conflict("a recording is already running; stop it with `teachd teach stop`")
    settings.recordings_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    purge_recordings(settings.recordings_dir, settings.retention_days)
    folder = settings.recordings_dir / new_recording_id()
    task = repairing.name if repairing else str(name)

    def ready(info: dict[str, object]) -> None:
        lock.describe({"pid": os.getpid(), "recording_dir": str(folder)})
        if as_json:  # machine-readable progress: one JSON object a line on stderr
            click.echo(json.dumps({"event": "recording", "recording_dir": str(folder),
                                   "cdp_port": cdp_port}), err=True)
            return
        port = f"; DevTools on 127.0.0.1:{cdp_port}" if cdp_port else ""
        what = (f"your part of step {repairing.step} of {task!r}" if repairing else repr(task))
        click.echo(f"teachd: recording {what} into {folder}{port}. Close the browser, press "
                   "Ctrl+C or run `teachd teach stop` to finish.", err=True)

    opts = TeachOptions(name=task, url=url or (repairing.start_url if repairing else ""), folder=folder,
                        chromium=settings.chromium, display=settings.display, cdp_port=cdp_port,
                        headless=headless, os_input=not no_os_input, on_ready=ready,
                        control=settings.home / CONTROL_FILE,
                        lead_in=repairing.lead_in if repairing else None)
    try:
        outcome = record(opts)
    except Exception:
        shutil.rmtree(folder, ignore_errors=True)  # nothing was demonstrated yet
        raise
    finally:
        lock.release()
    reviewing = not (repairing or no_save or no_review or as_json) and sys.stdin.isatty()
    _say_stopped(outcome, folder, as_json, "Your review…" if reviewing else "" if no_save else "Compiling…")
    if repairing:
        return save_repair(app, folder, extend_scope, as_json)
    if no_save:
        emit(as_json, {"recording_dir": str(folder), "saved": False},
             f"recording {folder.name}: kept for review, not saved "
             f"(`teachd compile {folder} --save` saves it)")
        return None
    if reviewing:
        _review(app, folder)
        click.echo("teachd: compiling…", err=True)
    _save_taught(app, folder, as_json)


def _review(app: App, folder: Path) -> None:
    """The review in the terminal, its edits written into the recording; a
    discard deletes the recording, a closed terminal keeps it unsaved."""
    from teachd.cli.review import Discarded, review_in_terminal
    from teachd.teach.edits import apply_edits, final_text_of
    from teachd.teach.process import read_events
    from teachd.teach.review import review

    rows = review(read_events(folder))
    try:
        edits = review_in_terminal(rows, final_text_of(folder), _ask, lambda text: click.echo(text, err=True))
    except Discarded:
        shutil.rmtree(folder, ignore_errors=True)
        click.echo("teachd: discarded: nothing was saved, and the recording is deleted", err=True)
        raise click.exceptions.Exit(0) from None
    except (EOFError, KeyboardInterrupt):
        raise Unavailable(f"the review was left: nothing was saved; the recording is kept in {folder} "
                          f"(`teachd compile {folder} --save` saves it as it is)") from None
    with component_errors():
        apply_edits(folder, edits)


def _ask(prompt: str) -> str:
    """One line from the terminal, its prompt on stderr (stdout carries only the result)."""
    click.echo(prompt, err=True, nl=False)
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line


def _check_arguments(name: str | None, url: str | None, repair_run: str | None) -> None:
    if repair_run is None and not name:
        raise click.UsageError("NAME is required (or --repair RUN_ID)")
    if repair_run is None and not url:
        raise click.UsageError("--url is required")
    if url and not url.startswith(("http://", "https://")):
        raise BadInput(f"--url must be an http(s) URL, not {url!r}")


def _say_stopped(outcome: Any, folder: Path, as_json: bool, then: str) -> None:
    """How the recording ended; a full disk is an error that says where the whole recording is kept."""
    if outcome.disk_full:
        raise Unavailable(f"the disk holding {folder.parent} is full ({outcome.disk_full}): the recording "
                          f"stopped after {outcome.events} events, kept whole in {folder}; free some space, "
                          f"then `teachd compile {folder} --save`")
    if as_json:
        click.echo(json.dumps({"event": "stopped", "reason": outcome.reason, "events": outcome.events,
                               "crops": outcome.frames}), err=True)
    else:
        click.echo(f"teachd: stopped ({outcome.reason}); {outcome.events} events, "
                   f"{outcome.frames} crops. {then}".rstrip(), err=True)


def _save_taught(app: App, folder: Path, as_json: bool) -> None:
    """Compile the recording and save it as the skill's next version; on failure the
    recording stays, and the error says how to compile it again."""
    from teachd.teach.compile import compile_dir, save_compiled

    try:
        with component_errors():
            compiled = compile_dir(folder)
            skill = save_compiled(app.store, compiled, note=f"taught from {folder.name}")
    except TeachdError as exc:
        raise type(exc)(f"{exc} (the recording is kept in {folder}; after fixing this, run "
                        f"`teachd compile {folder} --save`)") from None
    data = {"recording_dir": str(folder), "slug": skill.slug, "version": skill.current_version}
    emit(as_json, data, f"recording {folder.name}: saved {skill.slug} v{skill.current_version}")
    sys.stdout.flush()


@dataclass
class _Repairing:
    name: str
    step: int
    start_url: str
    lead_in: Callable[..., Any]


def _repairing(app: App, run_id: str, ask_on: str, as_json: bool) -> _Repairing:
    """The halted run's step, and the lead-in that replays up to it with the
    skill's approvals and secrets asked where the person is."""
    from teachd.cli.run import secrets_from_user
    from teachd.runner.gate import Gate, PageApprover, TerminalApprover
    from teachd.runner.run import prepare
    from teachd.runner.session import RunSession
    from teachd.store.rules import RuleStore
    from teachd.store.runs import RunStore
    from teachd.teach.repair import lead_in, repair_target

    target = repair_target(RunStore(app.store), run_id)
    secret = secrets_from_user(app.settings)
    approver: Any = TerminalApprover()
    if ask_on == "page":
        from teachd.mcp.secrets import DaemonSource
        from teachd.runner.secret_desk import page_secret
        from teachd.store.approvals import ApprovalQueue

        approver = PageApprover(ApprovalQueue(app.store), run_id)
        secret = page_secret(app.settings.secret_from_env, DaemonSource(app.settings.home),
                             lambda: run_id, [target.slug], timeout=300)
    gate = Gate(approver, saved_rules=RuleStore(app.store.db, app.store.owner).tools())
    proc = prepare(RunSession(app.store, gate, None), target.slug, {})
    say = None if as_json else (lambda msg: click.echo(f"teachd: {msg}", err=True))
    return _Repairing(target.name, target.step.n, proc.start_url,
                      lead_in(target, proc, gate, secret, say, runs=RunStore(app.store)))


def save_repair(app: App, folder: Path, extend_scope: bool, as_json: bool) -> None:
    """Merge a repair recording into its skill; the scope grows only if the person agrees."""
    from teachd.teach.repair import apply_repair, summary_of

    def agree(origins: Sequence[str]) -> bool:
        if extend_scope:
            return True
        if as_json or not sys.stdin.isatty():
            return False
        return click.confirm(f"teachd: the repair went to {', '.join(origins)}, outside the skill's "
                             "allowed scope. Allow the skill to act there?", default=False, err=True)

    try:
        with component_errors():
            skill, repaired = apply_repair(app.store, folder, agree)
    except TeachdError as exc:
        kept = "" if str(folder) in str(exc) else f" (the repair recording is kept in {folder})"
        raise type(exc)(f"{exc}{kept}") from None
    data = summary_of(skill, repaired, folder)
    emit(as_json, dict(data), f"repair {folder.name}: saved {skill.slug} v{skill.current_version} — "
                              f"{repaired.summary}")
    sys.stdout.flush()
