"""``teachd schedule``: what the daemon runs on its own — replays and health checks.

The schedules live in the store; ``teachd serve`` (the one daemon that holds
the scheduler's lock) runs them. These commands only edit the list.
"""

from __future__ import annotations

from typing import Any

import click

from teachd.cli.app import App, emit, json_option, parse_params, pass_app
from teachd.core.schedules import DEFAULT_TIMEOUT  # light: apscheduler loads when a trigger is built


def _store(app: App) -> Any:
    from teachd.store.schedules import ScheduleStore

    return ScheduleStore(app.store)


def _profiles(app: App) -> set[str]:
    from teachd.store.profiles import profile_names

    return profile_names(app.settings, app.store)


def _line(v: dict[str, Any]) -> str:
    what = "check" if v["kind"] == "check" else "run  "
    nxt = "paused" if v["paused"] else (v.get("next_run") or "when teachd serve picks it up")
    last = f"; last: {v['last_outcome']} {v['last_at']}" if v["last_outcome"] else ""
    params = "".join(f" {k}={val}" for k, val in sorted(v["params"].items()))
    return f"{v['id']:>3}  {what} {v['slug']}{params}  {v['when']}  next: {nxt}{last}"


@click.group()
def schedule() -> None:
    """Scheduled runs and health checks, run by `teachd serve`."""


@schedule.command("add")
@click.argument("slug")
@click.option("--cron", metavar='"MIN HOUR DOM MON DOW"',
              help='A crontab time, e.g. "0 9 * * 1" (Mondays 9:00, the daemon\'s local time).')
@click.option("--every", metavar="N[smhdw]", help="An interval, e.g. 6h or 1d.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A parameter's value for the run.")
@click.option("--profile", help="Load only the skills this profile (config.yaml) binds.")
@click.option("--check", is_flag=True,
              help="A health check instead of a run: open the pages and look for every target, never act.")
@click.option("--timeout", type=click.FloatRange(min=1), default=DEFAULT_TIMEOUT, show_default=True,
              metavar="SECONDS", help="How long the run waits on the Approvals page (approvals and secrets).")
@json_option
@pass_app
def add(app: App, slug: str, cron: str | None, every: str | None, params: tuple[str, ...],
        profile: str | None, check: bool, timeout: float, as_json: bool) -> None:
    """Add a schedule for a skill: a run (--cron or --every), or a health check (--check)."""
    from teachd.core.schedules import spec_from

    spec = spec_from(slug, cron=cron, every=every, params=parse_params(params), profile=profile, check=check,
                     timeout=timeout, profiles=_profiles(app))
    sid = _store(app).add(spec)
    emit(as_json, {"id": sid, "slug": slug, "kind": spec.kind, "when": spec.when},
         f"schedule {sid}: {spec.kind} {slug} {spec.when} (teachd serve runs it)")


@schedule.command("list")
@json_option
@pass_app
def list_(app: App, as_json: bool) -> None:
    """The schedules, with their next run time and last outcome."""
    views = _store(app).listed()
    emit(as_json, views, lambda: "\n".join(_line(v) for v in views) if views else "no schedules")


def _toggle(app: App, sid: int, paused: bool, as_json: bool) -> None:
    view = _store(app).set_paused(sid, paused)
    emit(as_json, view, f"schedule {sid}: {'paused' if paused else 'resumed'}")


@schedule.command()
@click.argument("schedule_id", type=int)
@json_option
@pass_app
def pause(app: App, schedule_id: int, as_json: bool) -> None:
    """Stop a schedule from firing until it is resumed."""
    _toggle(app, schedule_id, True, as_json)


@schedule.command()
@click.argument("schedule_id", type=int)
@json_option
@pass_app
def resume(app: App, schedule_id: int, as_json: bool) -> None:
    """Let a paused schedule fire again (a missed time runs once)."""
    _toggle(app, schedule_id, False, as_json)


@schedule.command()
@click.argument("schedule_id", type=int)
@json_option
@pass_app
def remove(app: App, schedule_id: int, as_json: bool) -> None:
    """Remove a schedule (its past runs stay on the Runs page)."""
    _store(app).remove(schedule_id)
    emit(as_json, {"removed": schedule_id}, f"schedule {schedule_id}: removed")
