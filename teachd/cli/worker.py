"""``teachd worker`` (take runs from the team store's queue) and ``teachd
workers`` (who takes them)."""

from __future__ import annotations

import json
from typing import Any

import click

from teachd.cli.app import App, emit, json_option, pass_app
from teachd.core.errors import BadInput


@click.command("worker")
@click.option("--slots", type=int, default=None,
              help="Replays at a time, each a Chromium (default: one per core, as the memory allows).")
@click.option("--can", "can", multiple=True, metavar="WHAT",
              help="What this machine can run besides web pages: 'desktop' (needs DISPLAY) or 'tag:NAME' "
                   "(a network or app only it reaches). Repeat for several.")
@click.option("--name", default=None, help="How the Runs page names this worker (default: HOST-PID).")
@json_option
@pass_app
def worker(app: App, slots: int | None, can: tuple[str, ...], name: str | None, as_json: bool) -> None:
    """Take runs from the team store's queue until stopped.

    Needs TEACHD_DB_URL (the team's PostgreSQL) and TEACHD_KEY, as the
    daemon has them; nothing else. What it does goes to stderr, one line
    each (with --json, one JSON object a line on stdout: {"worker",
    "said"}). SIGTERM or Ctrl+C drains it: no new run, the runs under way
    finish, then it stops. A worker killed mid-run leaves its run
    "interrupted at step N" with what it wrote: never run again by itself,
    unless its skill's owner marked it safe to repeat (teachd skills repeatable).
    """
    from teachd.cli.process import few_malloc_arenas
    from teachd.queue.execute import Executor
    from teachd.queue.worker import QueueWorker, default_slots

    few_malloc_arenas()  # before its slots' threads
    store = app.store
    slots = slots if slots is not None else default_slots()
    def say(line: str) -> None:
        if as_json:
            click.echo(json.dumps({"worker": name, "said": line}))
        else:
            click.echo(line, err=True)

    # whose runs get this machine's settings (secrets, network): the person it was started as, named
    own = app.settings.owner if app.settings.environ.get("TEACHD_OWNER") else None
    made = QueueWorker(app.settings, store.db, Executor(store, app.settings, own=own), slots, list(can), name,
                       say=say)
    name = made.name
    made.serve()


@click.command("workers")
@json_option
@pass_app
def workers(app: App, as_json: bool) -> None:
    """The workers taking runs from the team store's queue, and the queue."""
    if not app.settings.db_url:
        raise BadInput("workers take runs from the team store's queue: set TEACHD_DB_URL (postgresql://…); "
                       "on the embedded store runs run where teachd serve runs")
    from teachd.queue.app import RunQueue
    from teachd.store.workers import WorkerStore

    queue = RunQueue(app.settings.db_url, app.store.db)
    try:
        data = {"workers": WorkerStore(app.store.db).all(), "queue": queue.depth()}
    finally:
        queue.close()
    emit(as_json, data, lambda: _text(data))


def _text(data: dict[str, Any]) -> str:
    q = data["queue"]
    lines = [f"queue: {q['waiting']} waiting, {q['running']} running"]
    if not data["workers"]:
        lines.append("no worker: start one with teachd worker (TEACHD_DB_URL and TEACHD_KEY set)")
    for w in data["workers"]:
        can = ", ".join(w["can"]) or "web pages"
        lines.append(f"{w['name']}  {w['state']}  {len(w['running'])} of {w['slots']} slots in use  "
                     f"can: {can}  heartbeat {w['silent_s']} s ago")
    return "\n".join(lines)
