from __future__ import annotations

import pytest

from teachd.core.approval import Approval
from teachd.core.errors import Conflict, NotFound, PolicyStop, UnsafePath
from teachd.runner.gate import Action, DenyAll, Gate
from teachd.runner.session import RunSession
from teachd.store import SkillContent, SkillStore


def _add(store: SkillStore, slug: str, gated: bool = False, origin: str = "taught") -> None:
    store.create(slug, SkillContent(
        name=slug, description=f"{slug} does things.", instructions=f"# {slug}\n",
        files={"references/a.md": "A"},
        approval=Approval(True, ("computer_act",)) if gated else Approval()), origin=origin)


@pytest.fixture
def session(store: SkillStore) -> RunSession:
    _add(store, "taught-pay", gated=True)
    _add(store, "taught-off")
    _add(store, "plain-notes", origin="created")
    _add(store, "taught-lookalike", origin="imported")  # named taught-, but not compiled here
    store.set_enabled("taught-off", False)
    return RunSession(store, Gate(DenyAll()))


def test_auto_load_takes_enabled_taught_skills_only(session: RunSession) -> None:
    assert session.auto_load() == ["taught-pay"]
    assert [m["slug"] for m in session.manifest()] == ["plain-notes", "taught-lookalike", "taught-pay"]
    with pytest.raises(PolicyStop, match="taught-pay"):
        session.gate.check(Action("computer_act", "click"))


def test_load_skill_read_file_and_disabled_refusal(session: RunSession) -> None:
    loaded = session.load_skill("plain-notes")
    assert loaded["instructions"] == "# plain-notes\n" and loaded["files"] == ["references/a.md"]
    assert session.read_skill_file("plain-notes", "references/a.md") == "A"
    with pytest.raises(UnsafePath):
        session.read_skill_file("plain-notes", "../../key")
    with pytest.raises(NotFound, match="File not found"):
        session.read_skill_file("plain-notes", "references/b.md")
    with pytest.raises(Conflict, match="disabled"):
        session.load_skill("taught-off")


def test_profile_binds_skills_and_their_gates(store: SkillStore, session: RunSession) -> None:
    bound = RunSession(store, Gate(DenyAll()), profile=["plain-notes", "taught-pay"])
    assert bound.auto_load() == ["plain-notes", "taught-pay"]
    assert [m["slug"] for m in bound.manifest()] == ["plain-notes", "taught-pay"]
    only_notes = RunSession(store, Gate(DenyAll()), profile=["plain-notes"])
    only_notes.auto_load()
    only_notes.gate.check(Action("computer_act", "click"))  # nothing loaded gates it
    with pytest.raises(NotFound, match="not bound"):
        only_notes.load_skill("taught-pay")


def test_unloading_and_reloading_brings_the_gate_back(session: RunSession) -> None:
    session.load_skill("taught-pay")
    session.unload("taught-pay")
    session.gate.check(Action("computer_act", "click"))
    session.load_skill("taught-pay")
    with pytest.raises(PolicyStop):
        session.gate.check(Action("computer_act", "click"))
    assert session.versions() == {"taught-pay": 1}

