"""``teachd profiles``: assistant profiles — a name binding a subset of skills.

A run, an MCP session or a schedule with ``--profile NAME`` sees exactly the
profile's skills in its manifest, and auto-loads only those.
"""

from __future__ import annotations

from typing import Any

import click

from teachd.cli.app import App, emit, json_option, pass_app


def _store(app: App) -> Any:
    from teachd.store.profiles import ProfileStore

    return ProfileStore(app.store)


def _skill_option(required: bool) -> Any:
    return click.option("--skill", "slugs", multiple=True, required=required, metavar="SLUG",
                        help="A skill the profile binds (repeat).")


@click.group()
def profiles() -> None:
    """Assistant profiles: which skills a run with --profile may see."""


@profiles.command()
@click.argument("name")
@_skill_option(True)
@json_option
@pass_app
def create(app: App, name: str, slugs: tuple[str, ...], as_json: bool) -> None:
    """Create profile NAME binding the given skills."""
    bound = _store(app).create(name, slugs)
    emit(as_json, {"name": name, "skills": bound}, f"profile {name}: {', '.join(bound)}")


@profiles.command("list")
@json_option
@pass_app
def list_(app: App, as_json: bool) -> None:
    """Every stored profile and the profiles config.yaml names."""
    stored = _store(app).all()
    configured = {k: list(v) for k, v in app.settings.profiles.items() if k not in stored}
    data = [{"name": n, "skills": s, "from": "store"} for n, s in sorted(stored.items())] + \
           [{"name": n, "skills": s, "from": "config.yaml"} for n, s in sorted(configured.items())]
    emit(as_json, data, lambda: "\n".join(f"{d['name']}: {', '.join(d['skills'])}"
                                          + (" (config.yaml)" if d["from"] != "store" else "")
                                          for d in data) or "no profiles")


@profiles.command()
@click.argument("name")
@json_option
@pass_app
def show(app: App, name: str, as_json: bool) -> None:
    """The skills profile NAME binds."""
    from teachd.store.profiles import resolve_profile

    bound = resolve_profile(app.settings, app.store, name) or []
    emit(as_json, {"name": name, "skills": bound}, "\n".join(bound))


@profiles.command()
@click.argument("name")
@_skill_option(True)
@json_option
@pass_app
def add(app: App, name: str, slugs: tuple[str, ...], as_json: bool) -> None:
    """Add skills to profile NAME."""
    bound = _store(app).add(name, slugs)
    emit(as_json, {"name": name, "skills": bound}, f"profile {name}: {', '.join(bound)}")


@profiles.command()
@click.argument("name")
@_skill_option(False)
@json_option
@pass_app
def remove(app: App, name: str, slugs: tuple[str, ...], as_json: bool) -> None:
    """Remove skills from profile NAME; with no --skill, remove the profile."""
    left = _store(app).remove(name, slugs)
    emit(as_json, {"name": name, "skills": left},
         f"profile {name}: {', '.join(left)}" if slugs else f"profile {name}: removed")
