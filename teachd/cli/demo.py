"""``teachd demo``: the whole loop on the bundled sample app, and with
``--serve`` the app and the daemon kept up on the demo's home after it."""

from __future__ import annotations

from pathlib import Path

import click

from teachd.cli.app import App, emit, json_option, pass_app


@click.command()
@click.option("--home", type=click.Path(path_type=Path),
              help="Keep the demo's state here (default: a new temporary folder).")
@click.option("--serve", "keep_serving", is_flag=True,
              help="Then keep the sample app and the web UI running on the demo's home (until Ctrl+C), "
                   "to run the demo's skill again from the Runs page.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True,
              help="With --serve: the web UI's port.")
@json_option
@pass_app
def demo(app: App, home: Path | None, keep_serving: bool, port: int, as_json: bool) -> None:
    """The whole loop on the bundled sample app: teach, compile, store, replay on a changed app, feedback.

    With --serve it then keeps the sample app (at the address the skill was
    taught on) and `teachd serve` running on the demo's home, and prints the
    login link and the sample app's password (its runs are given it): on
    the Runs page, Run the demo's skill and allow it.
    """
    from teachd.cli.serve import port_free
    from teachd.demo.loop import demo_password, run_demo
    from teachd.teach.process import free_port

    if keep_serving:
        port_free("127.0.0.1", port)  # a busy port is said before the demo runs, not after it
    password, app_port = demo_password(), free_port()
    summary = run_demo((lambda _m: None) if as_json else click.echo, app.settings, home,
                       password=password, port=app_port)
    emit(as_json, summary, f"demo complete: state kept in {summary['home']}")
    if not keep_serving:
        return
    from teachd.cli.serve import run_daemon
    from teachd.config import Settings
    from teachd.demo.sampleapp import SampleApp
    from teachd.demo.sampleapp.server import USER

    demo_home = Path(str(summary["home"]))
    with SampleApp(password=password, port=app_port) as sample:
        click.echo(f"the sample app is up at {sample.url}/login — sign in as {USER} with the password "
                   f"{password}; the web UI's runs of {summary['slug']} know it. Ctrl+C stops both")
        click.echo(f"the login link below works once; to log in again, open http://127.0.0.1:{port}/login?token="
                   f"… with the token in {demo_home / 'token'}")
        # the daemon on the demo's home (its own store and key), as `TEACHD_HOME=… teachd serve` runs it,
        # with the sample app's password as its runs' secret (in memory, as TEACHD_SECRET_PASSWORD would be)
        mine = app.settings
        run_daemon(Settings(home=demo_home, owner=mine.owner, chromium=mine.chromium, display=mine.display,
                            environ={**mine.environ, "TEACHD_HOME": str(demo_home),
                                     "TEACHD_SECRET_PASSWORD": password}), port=port)
