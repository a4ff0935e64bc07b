"""The repair merge (compiler/repair.py) on hand-made recordings: which
steps it keeps, adds and drops, what evidence step N ends up with, the
History line, masking, scope and determinism — and the runner's rule for an
anchor with alternates (``agreed``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compiler.plan import ANCHORS_FILE, STEPS_FILE, Procedure
from compiler.recording import Recording, parse_recording
from compiler.repair import RepairError, repair_skill
from compiler.skill import CompiledSkill, compile_recording
from teachd.runner.locate import agreed
from teachd.runner.match import Candidate, Choice
from tests.compiler_helpers import digests_everywhere, recording, target

ROOT = Path(__file__).resolve().parent.parent
APP = "https://app.example.com"


def _page(path: str, title: str = "") -> dict[str, Any]:
    return {"type": "page", "url": APP + path, "title": title or path}


def _click(name: str, path: str, **kw: Any) -> dict[str, Any]:
    return {"type": "click", "target": target(name, **kw), "url": APP + path}


def original() -> CompiledSkill:
    """Open, click A, B, C, D; B leads to /b."""
    return compile_recording(recording([
        _page("/", "Home"), _click("Alpha", "/"), _click("Bravo", "/"), _page("/b", "Bee"),
        _click("Charlie", "/b"), _click("Delta", "/b"), _page("/done", "Done"),
    ], url=APP + "/"))


def segment(events: list[dict[str, Any]], step: int, url: str = APP + "/",
            started: str = "2026-11-30T10:00:00+00:00") -> Recording:
    lines = [{"v": 1, "seq": 0, "t": 0, "type": "start", "name": "Test task", "url": url,
              "screen": {"w": 1280, "h": 800}, "recorder": "test", "id": "rec-repair",
              "started_at": started,
              "repair": {"run": "run-20261130-1", "slug": "taught-test-task", "version": 1, "step": step}}]
    lines += [{"v": 1, "seq": i, "t": i * 1000, **e} for i, e in enumerate(events, 1)]
    return parse_recording("".join(json.dumps(x) + "\n" for x in lines))


def repaired(seg: Recording, skill: CompiledSkill | None = None):
    skill = skill or original()
    return repair_skill(skill.display_name, skill.body, skill.references, bool(skill.approval_tools), seg)


def plan_of(files: dict[str, str]) -> Procedure:
    return Procedure.from_files(files)


def names(plan: Procedure) -> list[str]:
    return [plan.anchors[s.anchor].expect.get("name", "") if s.anchor else s.action for s in plan.steps]


def test_repaired_step_keeps_its_old_evidence_and_gains_the_new() -> None:
    r = repaired(segment([_click("Bravo now", "/", css="#b2"), _page("/b", "Bee")], step=3))
    plan = plan_of(r.references)
    assert names(plan) == ["goto", "Alpha", "Bravo", "Charlie", "Delta"]
    anchor = plan.anchors[str(plan.steps[2].anchor)]
    assert anchor.expect["name"] == "Bravo"
    assert [a.expect["name"] for a in anchor.alternates] == ["Bravo now"]
    assert plan.steps[2].expect and plan.steps[2].expect["url_pattern"] == APP + "/b"
    assert json.loads(r.references[STEPS_FILE])["format_version"] == 3
    assert r.history == "- 2026-11-30 — repaired step 3 (run run-20261130-1)"
    assert "## Repairs" in r.references["references/recording.md"]
    assert r.added == () and r.skipped == () and r.new_origins == ()


def test_the_same_evidence_shown_again_adds_no_alternate() -> None:
    r = repaired(segment([_click("Bravo", "/"), _page("/b", "Bee")], step=3))
    plan = plan_of(r.references)
    assert plan.anchors[str(plan.steps[2].anchor)].alternates == []
    assert json.loads(r.references[ANCHORS_FILE])["format_version"] == 2


def test_steps_added_are_spliced_in_and_steps_gone_past_are_dropped() -> None:
    # New: a "Confirm" click before Bravo; after it the person skipped Charlie and did Delta.
    seg = segment([_click("Confirm", "/"), _click("Bravo v2", "/"), _page("/b", "Bee"),
                   _click("Delta", "/b"), _page("/done", "Done")], step=3)
    r = repaired(seg)
    plan = plan_of(r.references)
    assert names(plan) == ["goto", "Alpha", "Confirm", "Bravo", "Delta"]
    assert r.added == (3,) and r.skipped == (4,) and r.step == 4
    assert "added step 3" in r.summary and "dropped old step 4" in r.summary
    assert [s.n for s in plan.steps] == [1, 2, 3, 4, 5]
    assert len({s.anchor for s in plan.steps if s.anchor}) == 4  # the added step has an anchor of its own


def test_old_steps_after_done_stay() -> None:
    r = repaired(segment([_click("Bravo v2", "/"), _page("/b", "Bee")], step=3))
    assert names(plan_of(r.references)) == ["goto", "Alpha", "Bravo", "Charlie", "Delta"]


def test_a_repair_that_shows_nothing_is_refused() -> None:
    with pytest.raises(RepairError, match="nothing was shown after step 3"):
        repaired(segment([], step=3))
    with pytest.raises(RepairError, match="no typing into a field to stand for step 2"):
        skill = compile_recording(recording([
            {"type": "input", "target": target("Name", tag="input", role="textbox"), "value": "x",
             "url": APP + "/"}], url=APP + "/"))
        repaired(segment([_click("Go", "/")], step=2), skill)


def test_a_secret_typed_during_the_repair_is_masked_and_forces_approval() -> None:
    skill = compile_recording(recording([
        {"type": "input", "target": target("Code", tag="input", role="textbox", css="#code"), "value": "12",
         "url": APP + "/"}], url=APP + "/"))
    assert skill.approval_tools == ()
    field = target("Passcode", tag="input", role="textbox", css="#pc", attrs={"type": "password"})
    r = repaired(segment([{"type": "input", "target": field, "masked": True, "url": APP + "/"}], step=2), skill)
    plan = plan_of(r.references)
    assert plan.steps[1].secret == "code" and plan.steps[1].param is None
    assert set(plan.secrets) == {"code"} and plan.parameters == {}
    assert "default" not in plan.secrets["code"]
    assert r.approval_tools == ("computer_act",) and r.metadata["teachd-approval"] == "always-ask computer_act"
    assert "{{secret:code}}" in r.body and "12" not in json.dumps(plan.secrets)


def test_a_site_outside_the_scope_is_named_not_added_silently() -> None:
    seg = segment([_click("Bravo v2", "/"), {"type": "page", "url": "https://sso.example.net/login",
                                             "title": "SSO"}], step=3)
    r = repaired(seg)
    assert r.new_origins == ("https://sso.example.net",)
    assert plan_of(r.references).scope == [APP, "https://sso.example.net"]


def test_history_and_other_sections_a_person_wrote_are_kept() -> None:
    skill = original()
    body = skill.body + "\n- 2026-11-01 — success — run run-1\n\n## Notes\n\nAsk Sam first.\n"
    r = repair_skill(skill.display_name, body, skill.references, False,
                     segment([_click("Bravo v2", "/"), _page("/b", "Bee")], step=3))
    assert "- 2026-11-01 — success — run run-1" in r.body and "Ask Sam first." in r.body
    assert "also shown as the **Bravo v2** button" in r.body


_DETERMINISM = """
import hashlib, sys
sys.path.insert(0, {root!r})
from tests.test_repair_compiler import original, segment, _click, _page, repaired
r = repaired(segment([_click("Confirm", "/"), _click("Bravo v2", "/"), _page("/b", "Bee"),
                      _click("Delta", "/b")], step=3))
h = hashlib.sha256((r.body + r.description + r.history).encode())
for k, v in sorted(r.references.items()):
    h.update(k.encode() + b"\\0" + v.encode() + b"\\0")
print(h.hexdigest())
"""


def test_a_repair_merges_to_the_same_bytes_under_any_timezone_locale_and_hash_seed() -> None:
    digests = digests_everywhere(_DETERMINISM.format(root=str(ROOT)))
    assert len(digests) == 1, digests


def _choice(ident: int | None, reason: str = "found") -> Choice:
    return Choice(Candidate(ident, set(), {}) if ident is not None else None, reason)


def test_alternates_act_only_when_they_point_to_one_element() -> None:
    page = object()
    assert agreed([(page, _choice(7)), (page, _choice(None, "not found"))])[0].candidate.identity == 7
    assert agreed([(page, _choice(None, "not found")), (page, _choice(7))])[0].candidate.identity == 7
    assert agreed([(page, _choice(7)), (page, _choice(7))])[0].candidate.identity == 7
    torn, _ = agreed([(page, _choice(7)), (page, _choice(8))])
    assert torn.candidate is None and "different elements" in torn.reason
    vetoed, _ = agreed([(page, _choice(7)), (page, _choice(None, "ambiguous: 2 different elements"))])
    assert vetoed.candidate is None and vetoed.reason.startswith("ambiguous")
    none, _ = agreed([(page, _choice(None, "not found")), (page, _choice(None, "named 'x'"))])
    assert none.candidate is None and none.reason == "not found"


def test_a_step_shown_during_its_run_is_a_one_step_repair_of_it_and_nothing_else() -> None:
    """What a person pointed at on a run's picture (teachd.runner.shown)
    becomes a repair recording of that one step: the step gains the shown
    evidence beside its own, no step is added or dropped, the same bytes
    each time; a control that cannot take the step's action is refused."""
    from teachd.runner.shown import segment, unfit

    skill = original()
    step = plan_of(skill.references).steps[2]
    shown = target("Bravo now", css="#b2")
    seg = segment("Test task", "run-20261130-1", "taught-test-task", 1, step, shown, APP + "/",
                  "2026-11-30T10:00:00+00:00")
    r = repaired(seg, skill)
    plan = plan_of(r.references)
    assert names(plan) == ["goto", "Alpha", "Bravo", "Charlie", "Delta"] and r.added == r.skipped == ()
    assert [a.expect["name"] for a in plan.anchors[str(plan.steps[2].anchor)].alternates] == ["Bravo now"]
    assert r.history == "- 2026-11-30 — repaired step 3 (run run-20261130-1)"
    again = segment("Test task", "run-20261130-1", "taught-test-task", 1, step, shown, APP + "/",
                    "2026-11-30T10:00:00+00:00")
    assert repaired(again, skill).references == r.references
    typing = type(step)(step.n, "type", step.anchor, param="note")
    field = {"tag": "input", "role": "textbox", "type": "text"}
    assert unfit(typing, shown, field) == "not a field to type into"
    assert unfit(typing, target("Note", tag="textarea", role="textbox"), field) == ""
    assert unfit(type(step)(step.n, "check", step.anchor), shown, field) == "not a checkbox"
    button = {"tag": "button", "role": "button", "name": "Bravo"}
    assert unfit(step, target("Bravo", tag="h2", role="heading"), button) == "not a button like the one taught"
    receipt = {"tag": "input", "role": "checkbox", "attrs": {"type": "checkbox"}}
    assert unfit(step, receipt, button) == "not a button like the one taught"
    assert unfit(step, shown, button) == ""
    # a password's secret goes only into a password field, never an email one
    secret = type(step)(step.n, "type", step.anchor, secret="password")
    email = {"tag": "input", "role": "textbox", "attrs": {"type": "email"}}
    assert unfit(secret, email, {"tag": "input", "type": "password"}).startswith("not a field of the kind")
    assert unfit(secret, {**email, "attrs": {"type": "password"}}, {"tag": "input", "type": "password"}) == ""
