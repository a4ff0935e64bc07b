"""``teachd run`` (replay a taught skill) and ``teachd feedback`` (one click after a run)."""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from teachd.cli.app import App, emit, json_option, parse_params, pass_app
from teachd.core.errors import BadInput, PolicyStop

if TYPE_CHECKING:
    from teachd.config import Settings
    from teachd.store.runs import RunStore


def _runs(app: App) -> RunStore:
    from teachd.store.runs import RunStore

    return RunStore(app.store)


def secrets_from_user(settings: Settings) -> Callable[[str], str]:
    """``TEACHD_SECRET_<NAME>``, else a hidden prompt; never argv, never stored."""

    def secret(name: str) -> str:
        var, value = settings.secret_from_env(name)
        if value:
            return value
        if sys.stdin.isatty():
            value = getpass.getpass(f"teachd: {name} (hidden, not stored): ")
            if value:
                return value
        raise PolicyStop(f"the secret {name!r} is needed: type it when asked, or set {var}")

    return secret


@click.command()
@click.argument("slug")
@click.option("--start-url", help="Open this instead of the recorded start page.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A parameter's value (default: what was demonstrated).")
@click.option("--headless", is_flag=True, help="No visible window.")
@click.option("--profile", help="Load only the skills this profile (config.yaml) binds.")
@click.option("--step-timeout", type=click.FloatRange(min=0.1, max=600), default=10.0, show_default=True,
              metavar="SECONDS", help="How long one step may look for its target, or wait on a page "
                   "loaded at another address than the demonstration's, before it halts.")
@click.option("--approval", type=click.Choice(["auto", "ask"]), default="auto", show_default=True,
              help="ask: every action asks unless a saved rule allows its tool; skills that "
                   "require approval always ask.")
@click.option("--pictures", is_flag=True,
              help="Keep a picture of each step's target and page (secrets painted over) for the run's page "
                   "on teachd serve; about 0.1 s a step.")
@json_option
@pass_app
def run(app: App, slug: str, start_url: str | None, params: tuple[str, ...], headless: bool,
        profile: str | None, step_timeout: float, approval: str, pictures: bool, as_json: bool) -> int:
    """Replay a taught skill in Chromium, with its approvals and scope; exit 0 only on success.

    The first gated step shows the whole plan and asks once: `run` (every step of
    this plan, in order, within scope, this run only), `once` (this step) or
    `deny`. A step that drifted from the plan, or leaves the scope, asks again.
    Each question reads one line; end of input is deny.
    Secrets come from a hidden prompt or TEACHD_SECRET_<NAME>.
    """
    from teachd.runner.gate import TerminalApprover
    from teachd.runner.policy import Who
    from teachd.runner.run import RunOptions, run_skill
    from teachd.store.rules import RuleStore

    values = parse_params(params)
    if start_url is not None:
        start_url = _web_url(start_url)
    from teachd.store.profiles import resolve_profile

    bound = resolve_profile(app.settings, app.store, profile)
    settings = app.settings
    opts = RunOptions(params=values, start_url=start_url, headless=headless, chromium=settings.chromium,
                      display=settings.display, environ=settings.environ, profile=bound,
                      run_setting=approval, step_timeout=step_timeout, pictures=pictures,
                      recordings=settings.recordings_dir)
    rules = RuleStore(app.store.db, app.store.owner).tools()
    outcome = run_skill(_runs(app), rules, slug, TerminalApprover(), secrets_from_user(settings), opts,
                        Who.of(settings, app.store.owner),
                        progress=None if as_json else (lambda msg: click.echo(f"teachd: {msg}", err=True)))
    emit(as_json, outcome.as_dict(),
         f"run {outcome.run_id}: {outcome.status} — {outcome.message}\n"
         f"tell teachd how it went: teachd feedback {outcome.run_id} --skill {slug} success|failure")
    return 0 if outcome.status == "success" else 1


def _web_url(given: str) -> str:
    """``--start-url`` as the browser will read it (WHATWG, compiler.urls): the
    scope guard judges exactly the place Chromium goes."""
    from compiler.urls import parse_web

    web = parse_web(given)
    if web is None:
        raise BadInput(f"--start-url must be an http(s) URL, not {given!r}")
    return web.href


@click.command()
@click.argument("run_id")
@click.option("--skill", "slug", required=True, help="The skill the feedback is about.")
@click.argument("outcome", type=click.Choice(["success", "failure"]))
@click.option("--note", help="A short note, kept in the History line.")
@json_option
@pass_app
def feedback(app: App, run_id: str, slug: str, outcome: str, note: str | None, as_json: bool) -> None:
    """After a run: append a dated success/failure line to the skill's History, as a new version.

    RUN_ID is a teachd run id, or an external agent's own run reference.
    """
    from teachd.runner.feedback import give_feedback

    given = give_feedback(_runs(app), run_id, slug, outcome, note)
    skill = given.skill
    said = (f"recorded {outcome} for run {run_id}" if given.recorded
            else f"run {run_id} already has its feedback ({given.outcome}): nothing more recorded")
    emit(as_json, {**skill.summary(), "run_id": run_id, "recorded": given.recorded, "outcome": given.outcome},
         f"{slug} v{skill.current_version}: {said}")
