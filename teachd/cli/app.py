"""What every command shares: settings, the store (opened lazily so that
``--help`` and pure commands never touch disk), and output in text or JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from teachd.config import Settings
    from teachd.remote.egress import Egress
    from teachd.store import SkillStore

F = TypeVar("F", bound=Callable[..., Any])


class App:
    def __init__(self, settings: Settings | None = None) -> None:
        self._settings = settings

    @cached_property
    def settings(self) -> Settings:
        from teachd.config import settings_from_env

        return self._settings or settings_from_env()

    @cached_property
    def store(self) -> SkillStore:
        from teachd.store import open_store  # on first use: --help and pure commands never load it

        return open_store(self.settings)

    @cached_property
    def egress(self) -> Egress:
        """The one way out to the network (public addresses only)."""
        from teachd.remote.egress import Egress

        return Egress()


pass_app = click.make_pass_decorator(App, ensure=True)


root_option = click.option(
    "--root",
    "roots",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Also look for skills in DIR (<DIR>/<name>/SKILL.md), after the providers' folders "
         "(a skill of the same name there wins).",
)


def json_option(func: F) -> F:
    return click.option(
        "--json", "as_json", is_flag=True, help="Print machine-readable JSON instead of text."
    )(func)


def emit(as_json: bool, data: Any, text: str | Callable[[], str]) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, sort_keys=True, default=str))
    else:
        out = text() if callable(text) else text
        click.echo(out, nl=not out.endswith("\n"))


def parse_params(items: tuple[str, ...]) -> dict[str, str]:
    """``--param NAME=VALUE``, repeated."""
    values: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise click.UsageError(f"--param takes NAME=VALUE, not {item!r}")
        values[name] = value
    return values
