"""The ``teachd`` command: one click group; errors mapped to one line in one place."""

from __future__ import annotations

import logging
import os
import sys

import click

from teachd import __version__
from teachd.cli.app import App
from teachd.core.errors import TeachdError, component_errors


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="teachd")
@click.option("-v", "--verbose", is_flag=True, help="Log progress details to stderr.")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """teachd: show the computer a task once, get a taught Agent Skill.

    State lives in TEACHD_HOME (key, database, recordings, config.yaml), in
    an embedded SQLite database, or PostgreSQL with
    TEACHD_DB_URL=postgresql://… (a team's store; the same key file in each
    TEACHD_HOME).
    """
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="teachd: %(message)s",
        stream=sys.stderr,
        force=True,  # one command, one configuration (also when called in-process)
    )
    ctx.ensure_object(App)


def _register() -> None:
    from teachd.cli import (
        approvals,
        compile,
        demo,
        key,
        mcp,
        people,
        profiles,
        run,
        schedule,
        serve,
        skills,
        teach,
        worker,
    )

    cli.add_command(teach.teach)
    cli.add_command(compile.compile_)
    cli.add_command(skills.skills)
    cli.add_command(run.run)
    cli.add_command(run.feedback)
    cli.add_command(approvals.approvals)
    cli.add_command(demo.demo)
    cli.add_command(serve.serve)
    cli.add_command(mcp.mcp)
    cli.add_command(schedule.schedule)
    cli.add_command(key.key)
    cli.add_command(profiles.profiles)
    cli.add_command(people.users)
    cli.add_command(people.groups)
    cli.add_command(worker.worker)
    cli.add_command(worker.workers)


_register()


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; a TeachdError becomes one line on stderr and its exit code."""
    try:
        with component_errors():
            rv = cli.main(args=argv, prog_name="teachd", standalone_mode=False)
    except TeachdError as exc:
        click.echo(f"teachd: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("teachd: aborted", err=True)
        sys.exit(130)
    except click.UsageError as exc:
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
        click.echo(f"teachd: error: {exc.format_message()}{hint}", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(f"teachd: error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("teachd: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # a bug: still one line, unless debugging
        if os.environ.get("TEACHD_DEBUG"):
            raise
        click.echo(f"teachd: internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(70)
    sys.exit(rv if isinstance(rv, int) else 0)
