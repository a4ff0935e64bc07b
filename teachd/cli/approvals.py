"""``teachd approvals``: saved "always allow" rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from teachd.cli.app import App, emit, json_option, pass_app
from teachd.core.errors import BadInput

if TYPE_CHECKING:
    from teachd.store.rules import RuleStore


def _rules(app: App) -> RuleStore:
    from teachd.store.rules import RuleStore

    return RuleStore(app.store.db, app.store.owner)


@click.group()
def approvals() -> None:
    """Saved "always allow" rules (they never satisfy a skill that requires approval)."""


@approvals.command("list")
@json_option
@pass_app
def approvals_list(app: App, as_json: bool) -> None:
    """List the saved rules."""
    rules = _rules(app).all()
    emit(as_json, rules, lambda: "\n".join(f"{r['id']}  {r['tool']}  since {r['created_at']}"
                                            for r in rules) or "no saved rules")


@approvals.command("allow")
@click.argument("tool")
@click.option("--always", is_flag=True, help="Save it as a standing rule (required).")
@json_option
@pass_app
def approvals_allow(app: App, tool: str, always: bool, as_json: bool) -> None:
    """Always allow TOOL in runs that ask — except where a loaded skill requires approval."""
    if not always:
        raise BadInput("say --always to save a standing rule")
    rule_id = _rules(app).allow_always(tool)
    emit(as_json, {"id": rule_id, "tool": tool}, f"rule {rule_id}: always allow {tool}")


@approvals.command("revoke")
@click.argument("rule_id", type=int)
@json_option
@pass_app
def approvals_revoke(app: App, rule_id: int, as_json: bool) -> None:
    """Remove a saved rule."""
    _rules(app).revoke(rule_id)
    emit(as_json, {"id": rule_id, "revoked": True}, f"revoked rule {rule_id}")
