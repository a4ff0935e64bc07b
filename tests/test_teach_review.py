"""The Teach page's review before a demonstration is saved, under the API
(teachd.server.jobs.Teaching): its steps as the recording holds them, Save
without the steps left out, Discard with the recording."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from teachd.core.errors import BadInput, NotFound
from teachd.server.jobs import Teaching
from teachd.teach.compile import compile_dir, skill_files
from teachd.teach.edits import Edits, edits_from
from tests.compiler_helpers import EXPENSE
from tests.conftest import all_bytes_under


def reviewing(tmp_path: Path, owner: str = "alice") -> tuple[Teaching, Path]:
    """A Teaching whose demonstration (a copy of the expense-report recording) waits for its review."""
    folder = tmp_path / "rec"
    shutil.copytree(EXPENSE, folder)
    teaching = Teaching({}, tmp_path / "control")
    teaching.owner = owner

    def events() -> list[dict[str, Any]]:  # read as the recorder's child is: the file as it is now
        return [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]

    teaching.process = SimpleNamespace(proc=SimpleNamespace(poll=lambda: 0), events=events,  # type: ignore[assignment]
                                       cdp_port=None)
    teaching.result = {"ok": True, "review": True, "recording_dir": str(folder)}
    return teaching, folder


def row(teaching: Teaching, target: str) -> dict[str, Any]:
    return next(r for r in teaching.status("alice")["steps"] if r["target"] == target)


def test_a_reviewed_demonstration_is_discarded_with_its_recording_or_saved_without_the_steps_left_out(
        tmp_path: Path, store: Any) -> None:
    """The Teach page's review, under the API: Save leaves out the steps
    named (by the seq the review lists), and no other; Discard deletes the
    recording and saves nothing; either only while a review waits."""
    teaching, folder = reviewing(tmp_path)
    teaching.result = None
    with pytest.raises(NotFound):  # nothing waits for a review yet
        teaching.save(store, "alice", Edits())
    teaching.result = {"ok": True, "review": True, "recording_dir": str(folder)}
    rows = teaching.status("alice")["steps"]
    # a typed field left out (a click that led to a page would stay as opening that page, as Undo does)
    typed = next(r for r in rows if r["action"] == "type" and not r["undone"] and not r["masked"])
    with pytest.raises(BadInput):
        teaching.save(store, "alice", Edits(drop=frozenset({10_000})))  # no step of this demonstration
    with pytest.raises(NotFound):
        teaching.save(store, "bob", Edits())  # not theirs
    saved = teaching.save(store, "alice", Edits(drop=frozenset({typed["seq"]})))["result"]
    plan = json.loads(store.get(saved["slug"]).current.files["references/steps.json"])
    described = [s.get("describe", "") for s in plan["steps"]]
    assert len(plan["steps"]) == sum(1 for r in rows if not r["undone"]) - 1
    assert typed["target"] not in [d.replace("**", "") for d in described]
    teaching.result = {"ok": True, "review": True, "recording_dir": str(folder)}
    assert teaching.discard("alice")["result"] == {"ok": False, "discarded": True}
    assert not folder.exists()
    with pytest.raises(NotFound):
        teaching.discard("alice")


def test_a_review_names_a_step_keeps_a_value_fixed_and_adds_a_check_and_the_recording_compiles_to_the_skill_saved(
        tmp_path: Path, store: Any) -> None:
    """Rename, fixed value and a check of the person's own reach the plan and
    SKILL.md; the review is written into the recording, so compiling it again
    gives the bytes that were saved."""
    teaching, folder = reviewing(tmp_path)
    submit, category = row(teaching, "the Submit report button"), row(teaching, "the Category menu")
    edits = edits_from({"names": {str(submit["seq"]): "Send it  for approval"},
                        "fixed": [category["seq"]], "checks": ["Report  submitted"]})
    saved = teaching.save(store, "alice", edits)["result"]
    files = store.get(saved["slug"]).current.files
    plan = json.loads(files["references/steps.json"])
    by_describe = {s.get("describe", "").replace("**", ""): s for s in plan["steps"]}
    assert by_describe["the Submit report button"]["name"] == "Send it for approval"
    assert by_describe["the Category menu"]["value"] == "travel" and "param" not in by_describe["the Category menu"]
    assert "category" not in plan["parameters"] and "description" in plan["parameters"]
    assert plan["success"]["shows"] == ["Report submitted"] and plan["format_version"] == 5
    body = store.get(saved["slug"]).current.instructions
    assert "**Send it for approval** — Click" in body and "Choose “travel” (always) in" in body
    assert "It shows “Report submitted” (a check added at the review)" in body
    assert skill_files(compile_dir(folder))["references/steps.json"] == files["references/steps.json"].encode()


def test_a_value_marked_secret_after_the_fact_leaves_the_recording_and_its_pictures(
        tmp_path: Path, store: Any) -> None:
    """Marked secret at the review, the typed description is gone from every
    byte of the recording (its events masked as the recorder masks a field,
    the pictures from that step on deleted), and the skill asks for it as a
    secret, with the forced approval a secret brings."""
    teaching, folder = reviewing(tmp_path)
    described = row(teaching, "the Description field")
    assert described["value"] == "Taxi from the airport"
    before = sorted(p.name for p in (folder / "frames").iterdir())
    saved = teaching.save(store, "alice", edits_from({"secret": [described["seq"]]}))["result"]
    assert b"Taxi from the airport" not in all_bytes_under(folder)
    kept = sorted(p.name for p in (folder / "frames").iterdir())
    assert kept and kept == [n for n in before if int(n.split(".")[0]) < described["seq"]]
    skill = store.get(saved["slug"]).current
    plan = json.loads(skill.files["references/steps.json"])
    assert "description" in plan["secrets"] and "description" not in plan["parameters"]
    assert "computer_act" in skill.approval.tools
    assert b"Taxi from the airport" not in json.dumps(plan).encode() + skill.instructions.encode()


@pytest.mark.parametrize(("edit", "says"), [
    ({"fixed": ["click"]}, "has no value to mark fixed"),
    ({"secret": ["password"]}, "has no value to mark secret"),
    ({"fixed": ["category"], "secret": ["category"]}, "either fixed or secret"),
    ({"names": {"submit": "token sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0"}}, "shaped like a secret"),
    ({"checks": ["x" * 201]}, "longer than 200 characters"),
    ({"checks": ["a", "b", "c", "d", "e", "f"]}, "at most 5 checks"),
    ({"secret": ["description"], "checks": ["Taxi from the airport"]}, "holds a value marked secret"),
])
def test_a_review_that_does_not_fit_its_steps_is_refused_whole_and_writes_nothing(
        tmp_path: Path, store: Any, edit: dict[str, Any], says: str) -> None:
    teaching, folder = reviewing(tmp_path)
    seq = {"click": row(teaching, "the Sign in button")["seq"], "password": row(teaching, "the Password field")["seq"],
           "category": row(teaching, "the Category menu")["seq"],
           "submit": row(teaching, "the Submit report button")["seq"],
           "description": row(teaching, "the Description field")["seq"]}
    named = {k: ({seq[s]: v for s, v in val.items()} if isinstance(val, dict) else
                 [seq.get(x, x) if k != "checks" else x for x in val]) for k, val in edit.items()}
    before = all_bytes_under(folder)
    with pytest.raises(BadInput, match=says) as refused:
        teaching.save(store, "alice", edits_from(named))
    assert "Taxi from the airport" not in str(refused.value)  # a value marked secret is never said back
    assert all_bytes_under(folder) == before and store.all() == []


def test_a_check_the_final_page_never_showed_is_refused(tmp_path: Path, store: Any) -> None:
    """A check must be words the demonstration's final page showed: any
    other would fail every run."""
    teaching, folder = reviewing(tmp_path)
    events = (folder / "events.jsonl").read_text().splitlines()
    final = {"v": 1, "seq": 999, "t": 18950, "type": "page_text", "url": "http://127.0.0.1:8711/reports/17",
             "title": "Report submitted", "text": "Report #17 submitted. Thank you!", "tab": 0}
    (folder / "events.jsonl").write_text("\n".join([*events[:-1], json.dumps(final), events[-1]]) + "\n")
    with pytest.raises(BadInput, match="did not show 'Saved'"):
        teaching.save(store, "alice", edits_from({"checks": ["Saved"]}))
    saved = teaching.save(store, "alice", edits_from({"checks": ["Report #17 submitted"]}))["result"]
    plan = json.loads(store.get(saved["slug"]).current.files["references/steps.json"])
    assert "Report #17 submitted" in plan["success"]["shows"]
