"""One click after a run: a dated line in the skill's ``## History`` (and the
validation line after a success), saved as a new version together with the
feedback row, in one transaction."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from teachd.core.errors import BadInput, Conflict, NotFound
from teachd.core.history import RUN_REF, append_history, history_line, mark_validated
from teachd.core.models import Skill, SkillContent
from teachd.core.outcomes import feedback_refused
from teachd.store.runs import RunStore

OUTCOMES = ("success", "failure")


def with_feedback(content: SkillContent, date: str, outcome: str, run_ref: str,
                  note: str | None) -> SkillContent:
    """The content after one piece of feedback (pure)."""
    body = append_history(content.instructions, history_line(date, outcome, run_ref, note))
    if outcome == "success":
        body = mark_validated(body, date, run_ref)
    return replace(content, instructions=body, files=dict(content.files), metadata=dict(content.metadata))


class AlreadyGiven(Exception):
    """This run's feedback on this skill is recorded already (a second click)."""


@dataclass(frozen=True)
class Given:
    """What one piece of feedback did: the skill as it is now, whether this
    call recorded it (False: the run's feedback on it was there already),
    and the outcome the run now holds for it (and for each of its skills)."""

    skill: Skill
    recorded: bool
    outcome: str
    run_holds: dict[str, str]  # slug → outcome: all the run's feedback now, this one's included


def give_feedback(runs: RunStore, run_ref: str, slug: str, outcome: str, note: str | None = None,
                  own_session: bool = False) -> Given:
    """Feedback on a teachd run, or on an external agent's run reference —
    the one rule for the command line, the run page and MCP: a teachd run
    is judged once it got to act (core.outcomes.feedback_refused; an MCP
    session by the agent in it, ``own_session``, while it runs), and takes
    one piece of feedback per skill — a double click, a click from another
    tab or the same command twice records nothing more (checked inside the
    write transaction)."""
    if outcome not in OUTCOMES:
        raise BadInput(f"feedback is success or failure, not {outcome!r}")
    if not RUN_REF.match(run_ref):
        raise BadInput(f"run reference {run_ref!r} is not a valid id")
    if run_ref.startswith("run-") and (why := feedback_refused(runs.one(run_ref), own_session=own_session)):
        raise Conflict(why)
    loaded = runs.loaded_versions(run_ref)
    ran_version = loaded.get(slug) if loaded is not None else None
    if loaded is not None and ran_version is None:
        raise NotFound(f"run {run_ref} did not load skill {slug!r}")
    now = runs.clock()
    date = now.strftime("%Y-%m-%d")
    owner, can = runs.skills.access(slug)  # a shared skill: the click goes on its owner's versions
    skills = runs.skills.knowing(slug, owner, can)  # the write and the read after it need not ask again
    if can == "use":  # no words of someone who may not edit go into instructions the owner's agents read
        note = None

    def record(tx: Any, new_version: int) -> None:
        runs.record_feedback(tx, slug, ran_version or new_version - 1, run_ref, outcome, now, owner)

    def edit(current: SkillContent) -> SkillContent:
        if slug in runs.feedback_given(run_ref):
            raise AlreadyGiven(slug)
        return with_feedback(current, date, outcome, run_ref, note)

    try:
        skill = skills.update(slug, edit, note=f"feedback: {outcome} (run {run_ref})", also=record,
                              feedback=True)
        recorded = True
    except AlreadyGiven:
        skill, recorded = skills.get(slug), False
    given = runs.feedback_given(run_ref)
    return Given(skill, recorded, given.get(slug, outcome), given)


UNDO_SECONDS = 60  # a chip's click can be taken back this long


def undo_feedback(runs: RunStore, run_ref: str, slug: str) -> Skill:
    """Take back a chip's click within a minute: a new version whose content is
    the one before the click (the History line gone), and the feedback row
    removed, in one transaction. Refused once anything else changed the skill
    since, or the minute is over: then a person edits the History instead."""
    rows = runs.db.query("SELECT id, created_at FROM feedback WHERE owner = ? AND run_ref = ? AND slug = ?"
                         " ORDER BY id DESC", (runs.owner, run_ref, slug))
    if not rows:
        raise NotFound(f"no feedback on {slug} for run {run_ref} to undo")
    given = datetime.fromisoformat(str(rows[0]["created_at"]))
    if (runs.clock() - given).total_seconds() > UNDO_SECONDS:
        raise Conflict(f"that feedback is older than {UNDO_SECONDS} seconds: edit the History instead")
    current = runs.skills.version(slug)
    if not current.note.startswith("feedback: ") or f"(run {run_ref})" not in current.note:
        raise Conflict(f"{slug} changed after that feedback (v{current.version}): edit its History instead")
    before = runs.skills.version(slug, current.version - 1).content

    def forget(tx: Any, _new_version: int) -> None:
        tx.execute("DELETE FROM feedback WHERE id = ?", (rows[0]["id"],))

    def edit(now: SkillContent) -> SkillContent:
        if now != current.content:  # inside the write: another change came first
            raise Conflict(f"{slug} changed meanwhile: edit its History instead")
        return before

    return runs.skills.update(slug, edit, note=f"feedback undone (run {run_ref})", also=forget, feedback=True)
