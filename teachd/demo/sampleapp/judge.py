"""How the sample task is judged: by the app's own records — what it saved
and what was clicked — never by what teachd says it did. ``teachd demo``
judges its replay with it; the drift suite and the benchmarks
(``tests/drift_suite.py``) judge every variant with it too."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from teachd.demo.sampleapp.script import FIELDS, FORM, GROUP, NOTE, TASK_CLICKS
from teachd.demo.sampleapp.server import State

RIGHT, HALTED, WRONG = "right", "halted", "wrong"


@dataclass
class Judgement:
    verdict: str  # right | halted | wrong
    wrong: list[str]  # every wrong action or effect, as the app recorded it


def wrong_actions(state: State) -> list[str]:
    """Clicks and effects the task never asked for."""
    wrong = [f"clicked {k}" for k in state.clicked() if k not in TASK_CLICKS | FIELDS]
    with state.lock:
        reports, groups = list(state.reports), list(state.groups)
        notes, drafts = list(state.notes), state.drafts
    for r in reports:
        got = {k: r[k] for k in FORM}
        if got != FORM:
            wrong.append(f"saved report {got}")
    for g in groups:
        got = {"name": g["name"], "permissions": g["permissions"]}
        if got != GROUP or g.get("draft"):
            wrong.append(f"saved group {got}")
    wrong += [f"saved note {n!r}" for n in notes if n != NOTE]
    if drafts:
        wrong.append(f"saved {drafts} draft(s)")
    if len(reports) > 1 or len(groups) > 1:
        wrong.append(f"saved {len(reports)} reports and {len(groups)} groups")
    return wrong


def judge(status: str, state: State) -> Judgement:
    wrong = wrong_actions(state)
    if wrong:
        return Judgement(WRONG, wrong)
    done = len(state.reports) == 1 and len(state.groups) == 1 and state.notes == [NOTE]
    if status == "success" and done:
        return Judgement(RIGHT, [])
    if status == "success":  # claimed success without the effects: as bad as a wrong click
        return Judgement(WRONG, ["reported success, but the app holds no complete effect"])
    return Judgement(HALTED, [])


def teachd_env(home: Path, user_home: Path | None = None,
               base: Mapping[str, str] | None = None, owner: str = "alice") -> dict[str, str]:
    """The environment of a teachd command line working in ``home``: ``base``
    (for the tests and benchmarks that call this: their own environment)
    without its TEACHD_ settings."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith("TEACHD_")}
    env.update(TEACHD_HOME=str(home), TEACHD_OWNER=owner, PYTHONUTF8="1")
    if user_home is not None:
        env["HOME"] = str(user_home)
    return env
