"""``teachd mcp``: the owner's skills, and a browser to act in, for any MCP client (stdio)."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import click

from teachd.cli.app import App, json_option, pass_app, root_option


@click.command("mcp")
@click.option("--profile", help="Load exactly the skills this profile (config.yaml) binds.")
@click.option("--headless/--headed", default=None,
              help="The session's browser: visible on DISPLAY (the default when there is one) or not.")
@click.option("--step-timeout", type=click.FloatRange(min=0.1, max=600), default=10.0, show_default=True,
              metavar="SECONDS", help="How long an action looks for its target.")
@click.option("--approval-timeout", type=click.FloatRange(min=1, max=3600), default=300.0,
              show_default=True, metavar="SECONDS",
              help="How long a question waits for the person; no answer is a deny.")
@root_option
@json_option
@pass_app
def mcp(app: App, profile: str | None, headless: bool | None, step_timeout: float,
        approval_timeout: float, roots: tuple[Path, ...], as_json: bool) -> None:
    """Serve MCP on stdin/stdout for an agent (Claude Code, Codex, any client).

    The session is a run: it loads the owner's enabled taught skills (or the
    profile's), records itself on the Runs page, and every computer_act asks
    the person while a loaded skill requires approval — through the client,
    or on the Approvals page of `teachd serve`. Secrets come from
    TEACHD_SECRET_<NAME> in this command's environment, or are typed by the
    person on the secret page of `teachd serve` (never through the chat).
    The skills on disk (.teachd, .claude, .agents, .codex skills folders of
    this directory and of your home, config.yaml's skill_dirs, --root) are
    served too, read-only, after the store's; a store skill of the same name
    wins. Nothing but the protocol is written to stdout; its start and end
    are reported on stderr (as JSON lines with --json).
    """
    import anyio

    from teachd.mcp.secrets import DaemonSource
    from teachd.mcp.server import TeachdMCP
    from teachd.mcp.session import services_for
    from teachd.skills.disk import shelf_for
    from teachd.store.profiles import resolve_profile
    from teachd.store.runs import RunStore

    bound = resolve_profile(app.settings, app.store, profile)
    daemon = DaemonSource(app.settings.home)
    services = services_for(RunStore(app.store), app.settings, profile=bound, headless=headless,
                            step_timeout=step_timeout, approval_timeout=approval_timeout,
                            where="in the environment of teachd mcp (the client's server config)",
                            secrets=daemon, disk=shelf_for(app.settings, Path.cwd(), Path.home(), roots))
    services.approvals_page = daemon.approvals_page  # a client that cannot be asked: the daemon's page, if up
    server = TeachdMCP(services)
    skills = [s.slug for s in server.visible()]
    on_disk = [d.name for d in services.disk_skills()]
    _report(as_json, {"event": "serving", "transport": "stdio", "skills": skills, "disk_skills": on_disk},
            f"teachd mcp: serving {len(skills)} skill(s)"
            + (f" and {len(on_disk)} from disk" if on_disk else "") + " on stdio")
    signal.signal(signal.SIGTERM, _stop)  # a client that ends us: the session still ends cleanly
    try:
        anyio.run(server.run_stdio_async)
    finally:
        runs = server.close()
        _report(as_json, {"event": "stopped", "runs": runs}, f"teachd mcp: stopped (runs: {', '.join(runs)})")


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _report(as_json: bool, data: dict[str, object], text: str) -> None:
    """On stderr: stdout belongs to the protocol."""
    print(json.dumps(data) if as_json else text, file=sys.stderr, flush=True)
