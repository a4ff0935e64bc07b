"""``teachd users`` and ``teachd groups``: the people of a team store.

Each person added gets a token of their own — their bearer for the daemon
(pages, API, ``/mcp``), printed once. The daemon answers as the token's owner:
their skills, runs, approvals, and what was shared with them. Groups let a
skill be shared once with ``@team``.
"""

from __future__ import annotations

from typing import Any

import click

from teachd.cli.app import App, emit, json_option, pass_app


def _users(app: App) -> Any:
    from teachd.store.users import UserStore

    return UserStore(app.store.db)


def _groups(app: App) -> Any:
    from teachd.store.groups import GroupStore

    return GroupStore(app.store.db)


@click.group()
def users() -> None:
    """People of this store, each with their own daemon token."""


@users.command("add")
@click.argument("name")
@json_option
@pass_app
def user_add(app: App, name: str, as_json: bool) -> None:
    """Add NAME (or give a revoked one a new token) and print their token, once.

    The token is NAME's bearer for `teachd serve` and MCP over HTTP:
    `Authorization: Bearer TOKEN`, or /login?token=TOKEN in a browser.
    Only its SHA-256 is stored; lost, it is revoked and added again.
    """
    token = _users(app).add(name)
    emit(as_json, {"name": name, "token": token},
         f"{name}'s token (shown once; their bearer for teachd serve and /mcp):\n{token}")


@users.command("list")
@json_option
@pass_app
def user_list(app: App, as_json: bool) -> None:
    """Every person of the store: with a token, without one (the CLI's owner), or revoked."""
    people = _users(app).all()

    def line(p: dict[str, Any]) -> str:
        state = f"revoked {p['revoked_at']}" if p["revoked_at"] else "token" if p["token"] else \
            "no token (uses the daemon's token file)"
        return f"{p['name']}: {state}"

    emit(as_json, people, lambda: "\n".join(line(p) for p in people) or "no users")


@users.command("revoke")
@click.argument("name")
@json_option
@pass_app
def user_revoke(app: App, name: str, as_json: bool) -> None:
    """Stop NAME's token at once (their skills and grants stay; `users add` gives a new one)."""
    _users(app).revoke(name)
    emit(as_json, {"name": name, "revoked": True}, f"{name}: token revoked")


def _members(required: bool) -> Any:
    return click.option("--member", "members", multiple=True, required=required, metavar="USER",
                        help="A person in the group (repeat).")


def _members_said(as_json: bool, name: str, members: list[str]) -> None:
    short = name.removeprefix("@")
    emit(as_json, {"name": short, "members": members}, f"@{short}: {', '.join(members) or '(no members)'}")


@click.group()
def groups() -> None:
    """Groups of people, to share a skill once with @GROUP."""


@groups.command("create")
@click.argument("name")
@_members(False)
@json_option
@pass_app
def group_create(app: App, name: str, members: tuple[str, ...], as_json: bool) -> None:
    """Create group NAME (share with it as @NAME)."""
    _members_said(as_json, name, _groups(app).create(name, members))


@groups.command("list")
@json_option
@pass_app
def group_list(app: App, as_json: bool) -> None:
    """Every group and its members."""
    found = _groups(app).all()
    emit(as_json, [{"name": n, "members": m} for n, m in found.items()],
         lambda: "\n".join(f"@{n}: {', '.join(m) or '(no members)'}" for n, m in found.items())
         or "no groups")


@groups.command("add")
@click.argument("name")
@_members(True)
@json_option
@pass_app
def group_add(app: App, name: str, members: tuple[str, ...], as_json: bool) -> None:
    """Add people to group NAME: they get its grants at once."""
    _members_said(as_json, name, _groups(app).add(name, members))


@groups.command("remove")
@click.argument("name")
@_members(False)
@json_option
@pass_app
def group_remove(app: App, name: str, members: tuple[str, ...], as_json: bool) -> None:
    """Take people out of group NAME (its grants leave them at once); with no
    --member, delete the group."""
    left = _groups(app).remove(name, members)
    short = name.removeprefix("@")
    emit(as_json, {"name": short, "members": left},
         f"@{short}: {', '.join(left) or '(no members)'}" if members
         else f"@{short}: removed, with its grants")
