"""``teachd teach``: record a demonstration, then compile and save it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from teachd.cli.app import App, emit, json_option, pass_app
from teachd.errors import BadInput, Conflict, NotFound, TeachdError, component_errors
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
@click.argument("name")
@click.option("--url", help="Where the demonstration starts.")
@click.option("--cdp-port", type=click.IntRange(1024, 65535),
              help="Expose Chromium's DevTools on 127.0.0.1:N so automation can drive it.")
@click.option("--headless", is_flag=True, help="No visible window (for tests and CI).")
@click.option("--no-os-input", is_flag=True, help="Do not record desktop clicks and keys.")
@json_option
@pass_app
def teach(app: App, name: str, url: str | None, cdp_port: int | None, headless: bool,
          no_os_input: bool, as_json: bool) -> None:
    """Record a demonstration of task NAME starting at --url, then compile and save it.

    A bar in the page says it is recording and shows each step as it is
    captured, with Pause/Resume, Mark next field secret (also Ctrl+Alt+S in a
    field), Undo last step and Stop. Recording also stops when the browser is
    closed, on Ctrl+C / SIGTERM, or on `teachd teach stop`. A masked field's
    value is never written anywhere.
    """
    if name == "stop" and url is None:
        return _stop_running(app, as_json)
    if not url:
        raise click.UsageError("--url is required")
    if not url.startswith(("http://", "https://")):
        raise BadInput(f"--url must be an http(s) URL, not {url!r}")
    from recorder.record import TeachOptions, new_recording_id, record
    from teachd.teach.compile import compile_dir, save_compiled
    from teachd.teach.retention import purge_recordings

    settings = app.settings
    lock = teach_lock(settings.home)
    if not lock.try_acquire():
        raise Conflict("a recording is already running; stop it with `teachd teach stop`")
    settings.recordings_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    purge_recordings(settings.recordings_dir, settings.retention_days)
    folder = settings.recordings_dir / new_recording_id()

    def ready(info: dict[str, object]) -> None:
        lock.describe({"pid": os.getpid(), "recording_dir": str(folder)})
        if as_json:  # machine-readable progress: one JSON object a line on stderr
            click.echo(json.dumps({"event": "recording", "recording_dir": str(folder),
                                   "cdp_port": cdp_port}), err=True)
            return
        port = f"; DevTools on 127.0.0.1:{cdp_port}" if cdp_port else ""
        click.echo(f"teachd: recording {name!r} into {folder}{port}. Close the browser, press "
                   "Ctrl+C or run `teachd teach stop` to finish.", err=True)

    opts = TeachOptions(name=name, url=url, folder=folder, chromium=settings.chromium,
                        display=settings.display, cdp_port=cdp_port, headless=headless,
                        os_input=not no_os_input, on_ready=ready,
                        control=settings.home / CONTROL_FILE)
    try:
        outcome = record(opts)
    except Exception:
        shutil.rmtree(folder, ignore_errors=True)  # nothing was demonstrated yet
        raise
    finally:
        lock.release()
    if as_json:
        click.echo(json.dumps({"event": "stopped", "reason": outcome.reason, "events": outcome.events,
                               "crops": outcome.frames}), err=True)
    else:
        click.echo(f"teachd: stopped ({outcome.reason}); {outcome.events} events, "
                   f"{outcome.frames} crops. Compiling…", err=True)
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
