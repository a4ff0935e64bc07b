"""A skill shared *to edit*: the grantee edits its words and gives feedback;
its approval, its replay plan and anchors, and its scope stay the owner's.
Written from bob's side: every way he could turn off alice's forced
approval or point her skill at another site, on both engines."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from teachd.core.approval import Approval
from teachd.core.errors import PolicyStop
from teachd.skills.edits import put_file, remove_file, set_approval
from teachd.store import SkillStore
from teachd.store.grants import GrantStore
from teachd.store.users import UserStore
from teachd.teach.compile import compile_dir, save_compiled
from tests.compiler_helpers import EXPENSE


@pytest.fixture
def shared(store: SkillStore) -> tuple[SkillStore, SkillStore, str]:
    slug = save_compiled(store, compile_dir(EXPENSE), note="taught from expense-report").slug
    UserStore(store.db).add("bob")
    GrantStore(store).share(slug, "bob", "edit")
    return store, store.as_person("bob"), slug


def _rescoped(text: str) -> str:
    plan = json.loads(text)
    plan["scope"] = ["https://bob.example"]
    return json.dumps(plan)


def attacks(slug: str, alice: SkillStore):
    current = alice.get(slug).current
    return {
        "approval off": set_approval(False, []),
        "approval narrowed": set_approval(True, ["delete_file"]),
        "approval replaced": lambda c: replace(c, approval=Approval(False, ())),
        "scope rewritten": put_file("references/steps.json", _rescoped(current.files["references/steps.json"])),
        "steps removed": remove_file("references/steps.json"),
        "anchors rewritten": put_file("references/anchors.json", "{}"),
        "metadata scope": lambda c: replace(c, metadata={**c.metadata, "metadata": {
            **c.metadata["metadata"], "teachd-scope": "https://bob.example"}}),
    }


@pytest.mark.parametrize("attack", ["approval off", "approval narrowed", "approval replaced", "scope rewritten",
                                    "steps removed", "anchors rewritten", "metadata scope"])
def test_an_edit_grant_cannot_change_approval_steps_or_scope(shared, attack: str) -> None:
    alice, bob, slug = shared
    before = alice.get(slug)
    with pytest.raises(PolicyStop, match="only its owner"):
        bob.update(slug, attacks(slug, alice)[attack], note="bob's edit")
    after = alice.get(slug)
    assert after.current_version == before.current_version
    assert after.current.approval.to_dict() == before.current.approval.to_dict()
    assert after.current.files == before.current.files


def test_an_edit_grant_still_edits_the_words_and_the_owner_still_changes_all(shared) -> None:
    alice, bob, slug = shared
    edited = bob.update(slug, lambda c: replace(c, instructions=c.instructions + "\nA note from bob.\n"), note="n")
    assert edited.current_version == 2 and "A note from bob." in edited.current.instructions
    assert alice.update(slug, set_approval(False, []), note="the owner's choice").current_version == 3
