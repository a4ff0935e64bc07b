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
from tests.compiler_helpers import EXPENSE


def test_a_reviewed_demonstration_is_discarded_with_its_recording_or_saved_without_the_steps_left_out(
        tmp_path: Path, store: Any) -> None:
    """The Teach page's review, under the API: Save leaves out the steps
    named (by the seq the review lists), and no other; Discard deletes the
    recording and saves nothing; either only while a review waits."""
    folder = tmp_path / "rec"
    shutil.copytree(EXPENSE, folder)
    events = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    teaching = Teaching({}, tmp_path / "control")
    teaching.owner = "alice"
    teaching.process = SimpleNamespace(proc=SimpleNamespace(poll=lambda: 0), events=lambda: events,  # type: ignore[assignment]
                                       cdp_port=None)
    with pytest.raises(NotFound):  # nothing waits for a review yet
        teaching.save(store, "alice", [])
    teaching.result = {"ok": True, "review": True, "recording_dir": str(folder)}
    rows = teaching.status("alice")["steps"]
    # a typed field left out (a click that led to a page would stay as opening that page, as Undo does)
    typed = next(r for r in rows if r["action"] == "type" and not r["undone"] and not r["masked"])
    with pytest.raises(BadInput):
        teaching.save(store, "alice", [10_000])  # no step of this demonstration
    with pytest.raises(NotFound):
        teaching.save(store, "bob", [])  # not theirs
    saved = teaching.save(store, "alice", [typed["seq"]])["result"]
    plan = json.loads(store.get(saved["slug"]).current.files["references/steps.json"])
    described = [s.get("describe", "") for s in plan["steps"]]
    assert len(plan["steps"]) == sum(1 for r in rows if not r["undone"]) - 1
    assert typed["target"] not in [d.replace("**", "") for d in described]
    teaching.result = {"ok": True, "review": True, "recording_dir": str(folder)}
    assert teaching.discard("alice")["result"] == {"ok": False, "discarded": True}
    assert not folder.exists()
    with pytest.raises(NotFound):
        teaching.discard("alice")
