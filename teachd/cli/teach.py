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

import click

from teachd.cli.app import App, emit, json_option, pass_app
from teachd.errors import Conflict, NotFound, TeachdError
from teachd.teach.compile import compile_dir, save_compiled
from teachd.teach.retention import purge_recordings


def _pid_file(app: App) -> Path:
    return app.settings.home / "teach.pid"


def _stop_running(app: App, as_json: bool) -> None:
    pid_file = _pid_file(app)
    try:
        info = json.loads(pid_file.read_text())
        pid = int(info["pid"])
    except (OSError, ValueError, KeyError):
        raise NotFound("no recording is running") from None
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pid_file.unlink(missing_ok=True)
        raise NotFound("no recording is running (stale pid file removed)") from None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and pid_file.exists():
        time.sleep(0.1)
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

    Recording stops when the browser is closed, on Ctrl+C / SIGTERM, or on
    `teachd teach stop`. Press Ctrl+Alt+S in a field before typing to mark it
    secret: its value is never written. `teachd teach stop` stops a running one.
    """
    if name == "stop" and url is None:
        return _stop_running(app, as_json)
    if not url:
        raise click.UsageError("--url is required")
    if not url.startswith(("http://", "https://")):
        raise TeachdError(f"--url must be an http(s) URL, not {url!r}")
    from recorder.browser import BrowserMissing
    from recorder.record import RecorderError, TeachOptions, new_recording_id, record

    settings = app.settings
    pid_file = _pid_file(app)
    if pid_file.exists():
        with contextlib.suppress(OSError, ValueError, KeyError):
            os.kill(int(json.loads(pid_file.read_text())["pid"]), 0)
            raise Conflict("a recording is already running; stop it with `teachd teach stop`")
        pid_file.unlink(missing_ok=True)
    settings.recordings_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    purge_recordings(settings.recordings_dir)
    folder = settings.recordings_dir / new_recording_id()

    def ready(info: dict[str, object]) -> None:
        pid_file.write_text(json.dumps({"pid": os.getpid(), "recording_dir": str(folder)}))
        port = f"; DevTools on 127.0.0.1:{cdp_port}" if cdp_port else ""
        click.echo(f"teachd: recording {name!r} into {folder}{port}. Close the browser, press "
                   "Ctrl+C or run `teachd teach stop` to finish.", err=True)

    opts = TeachOptions(name=name, url=url, folder=folder,
                        chromium=os.environ.get("TEACHD_CHROMIUM"), cdp_port=cdp_port,
                        headless=headless, os_input=not no_os_input, on_ready=ready)
    try:
        outcome = record(opts)
    except (BrowserMissing, RecorderError) as exc:
        shutil.rmtree(folder, ignore_errors=True)  # nothing was demonstrated yet
        raise TeachdError(str(exc)) from None
    finally:
        pid_file.unlink(missing_ok=True)
    click.echo(f"teachd: stopped ({outcome.reason}); {outcome.events} events, "
               f"{outcome.frames} crops. Compiling…", err=True)
    try:
        compiled = compile_dir(folder)
        skill = save_compiled(app.store, compiled, note=f"taught from {folder.name}")
    except TeachdError as exc:
        raise type(exc)(f"{exc} (the recording is kept in {folder}; after fixing this, run "
                        f"`teachd compile {folder} --save`)") from None
    data = {"recording_dir": str(folder), "slug": skill.slug, "version": skill.current_version}
    emit(as_json, data, f"recording {folder.name}: saved {skill.slug} v{skill.current_version}")
    sys.stdout.flush()
