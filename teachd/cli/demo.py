"""``teachd demo``: the whole loop on the bundled sample app."""

from __future__ import annotations

from pathlib import Path

import click

from teachd.cli.app import App, emit, json_option, pass_app


@click.command()
@click.option("--home", type=click.Path(path_type=Path),
              help="Keep the demo's state here (default: a new temporary folder).")
@json_option
@pass_app
def demo(app: App, home: Path | None, as_json: bool) -> None:
    """The whole loop on the bundled sample app: teach, compile, store, replay on a changed app, feedback."""
    from teachd.demo.loop import run_demo

    summary = run_demo((lambda _m: None) if as_json else click.echo, app.settings, home)
    emit(as_json, summary, f"demo complete: state kept in {summary['home']}")
