"""``teachd key rotate``: the store's key replaced, every sealed value re-encrypted."""

from __future__ import annotations

import click

from teachd.cli.app import App, emit, json_option, pass_app
from teachd.core.errors import BadInput


@click.group()
def key() -> None:
    """The store's encryption key (TEACHD_HOME/key, or TEACHD_KEY)."""


@key.command()
@json_option
@pass_app
def rotate(app: App, as_json: bool) -> None:
    """Re-encrypt every sealed value under a new key, in one transaction.

    The new key is written to TEACHD_HOME/key.new first and takes the key
    file's place once the transaction commits; interrupted, run it again
    (or just open the store: a committed rotation finishes itself). Every
    daemon on a team store needs the new key file afterwards.
    """
    from teachd.store.rotation import rotate as rotate_key

    if app.settings.key_env:
        raise BadInput("the key comes from TEACHD_KEY: rotate with a key file in TEACHD_HOME")
    store = app.store  # opens (and checks) with the current key

    def progress(done: int, total: int) -> None:
        if not as_json:
            click.echo(f"teachd: re-encrypted {done}/{total} value(s)", err=True)

    n = rotate_key(store.db, app.settings.key_path, progress)
    emit(as_json, {"rotated": n, "key": str(app.settings.key_path)},
         f"rotated: {n} sealed row(s) under the new key in {app.settings.key_path}")
