"""A step that differs from the approved plan asks again (DESIGN §3.5, issue
41): before a gated replay step acts, what it will do — action, target words,
page, value (a secret by its name only) — is held against the plan line the
``run`` answer approved; a step that is not that line is not covered, and the
question (once or deny) says what differs. No browser: the gate, and the
replayer's guard, driven directly."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.plan import PlanStep as CompiledStep
from compiler.plan import Procedure
from teachd.core.approval import Approval
from teachd.core.errors import PolicyStop
from teachd.runner.gate import Action, Answer, Gate, Plan, PlanStep, Request
from teachd.runner.plan_view import plan_of, value_of
from teachd.runner.replay import Replayer

APP = "https://shop.example"
FORM = f"{APP}/form"
PASSWORD = "hunter2-never-shown"


class Words:
    def __init__(self, *answers: str) -> None:
        self.answers, self.requests = list(answers), []  # type: ignore[var-annotated]

    def ask(self, request: Request) -> Answer:
        self.requests.append(request)
        return Answer.said(request.id, self.answers.pop(0))


def gated(plan: Plan, *answers: str) -> tuple[Gate, Words]:
    approver = Words(*answers)
    gate = Gate(approver)
    gate.load(plan.slug, Approval(True, ("computer_act",)))
    gate.offer(plan)
    return gate, approver


PLAN = Plan("taught-pay", (
    PlanStep(1, "open", FORM),
    PlanStep(2, "type into", "the Amount field", FORM, "10.00"),
    PlanStep(3, "click", "the Pay button", FORM),
), (APP,))


def step(line: PlanStep) -> Action:
    return Action("computer_act", f"{line.action} {line.target}", FORM, line.n, planned=True, shown=line)


def test_a_run_answer_does_not_cover_a_step_whose_value_differs_from_the_one_shown() -> None:
    gate, approver = gated(PLAN, "run", "deny")
    gate.check(step(PLAN.steps[0]))
    with pytest.raises(PolicyStop, match="not approved"):
        gate.check(step(PlanStep(2, "type into", "the Amount field", FORM, "10000.00")))
    assert len(approver.requests) == 2
    again = approver.requests[1]
    assert not again.offers_run and again.answers == "once/deny"
    assert "the value is “10000.00”, the plan showed “10.00”" in again.describe()
    assert again.key() != Request(2, step(PLAN.steps[1]), (), again.reason).key()


def test_each_part_that_differs_is_named_and_once_lets_only_that_step_through() -> None:
    gate, approver = gated(PLAN, "run", "once")
    gate.check(step(PLAN.steps[0]))
    gate.check(step(PlanStep(2, "type into", "the Tip field", f"{APP}/other", "10.00")))
    gate.check(step(PLAN.steps[2]))  # back on the plan: covered by the run answer
    assert len(approver.requests) == 2
    said = approver.requests[1].describe()
    assert "the target is “the Tip field”, the plan showed “the Amount field”" in said
    assert f"the page is “{APP}/other”, the plan showed “{FORM}”" in said
    assert "the value is" not in said and "the action is" not in said


def test_the_steps_shown_as_planned_are_covered_after_one_question() -> None:
    gate, approver = gated(PLAN, "run")
    for line in PLAN.steps:
        gate.check(step(line))
    assert len(approver.requests) == 1 and approver.requests[0].offers_run


def test_a_first_step_that_is_not_its_plan_line_is_not_offered_the_plan() -> None:
    gate, approver = gated(PLAN, "once")
    gate.check(step(PlanStep(1, "open", f"{APP}/elsewhere")))
    assert not approver.requests[0].offers_run
    assert "the target is “https://shop.example/elsewhere”" in approver.requests[0].describe()


# -- the replayer: one rule for the value, and its guard holds it to the plan ------------------


def procedure() -> Procedure:
    return Procedure(FORM, [
        CompiledStep(1, "goto", None, url=FORM),
        CompiledStep(2, "type", FORM, anchor="a1", describe="the **Amount** field", param="amount"),
        CompiledStep(3, "type", FORM, anchor="a2", describe="the Password field", secret="password"),
        CompiledStep(4, "select", FORM, anchor="a3", describe="the Country menu", option="France"),
    ], {}, [APP], {}, parameters={"amount": {"default": "10.00"}}, secrets={"password": {}})


def replayer(gate: Gate, params: dict[str, str], plan: Plan | None = None) -> Replayer:
    none: Any = None  # no browser: only the guard and the values are driven
    return Replayer(none, none, procedure(), gate, params, lambda _name: PASSWORD, slug="taught-pay", plan=plan)


def test_the_plan_and_the_replay_take_a_steps_value_from_one_rule() -> None:
    proc = procedure()
    r = replayer(Gate(Words()), {"amount": "12.50"})
    plan = {s.n: s.value for s in r.plan.steps}
    assert plan == {1: None, 2: "12.50", 3: "[secret password]", 4: "France"}
    assert [r._value(s) for s in proc.steps[1:]] == ["12.50", PASSWORD, "France"]
    assert value_of(proc.steps[2], proc, {}) == "[secret password]"  # the plan: its name only


def test_a_replay_whose_value_is_not_the_approved_one_asks_again_and_never_shows_a_secret() -> None:
    proc = procedure()
    shown = plan_of("taught-pay", proc, {"amount": "10.00"})  # what the person approved with `run`
    gate, approver = gated(shown, "run", "deny")
    r = replayer(gate, {"amount": "99999.00"}, plan=shown)  # ... and what the replay would type
    r._guard(1, f"open {FORM}", FORM, step=proc.steps[0], target=FORM)
    with pytest.raises(PolicyStop):
        r._guard(2, "type the Amount field", FORM, step=proc.steps[1])
    said = approver.requests[1].describe()
    assert "“99999.00”, the plan showed “10.00”" in said and not approver.requests[1].offers_run
    assert PASSWORD not in said and all(PASSWORD not in str(e) for e in gate.log)


def test_a_replay_as_approved_runs_under_one_answer() -> None:
    proc = procedure()
    gate, approver = gated(plan_of("taught-pay", proc, {"amount": "10.00"}), "run")
    r = replayer(gate, {"amount": "10.00"}, plan=gate._plan)
    r._guard(1, f"open {FORM}", FORM, step=proc.steps[0], target=FORM)
    for s in proc.steps[1:]:
        r._guard(s.n, f"type {s.describe}", FORM, step=s)
    assert len(approver.requests) == 1
    assert [e["decision"] for e in gate.log][1:] == ["allowed by this run's approval"] * 3
    assert all("shown" not in e["action"] for e in gate.log)  # the log stays plain data


def test_a_secret_that_differs_is_named_never_typed_out() -> None:
    proc = procedure()
    approved = plan_of("taught-pay", proc, {})
    swapped = Procedure(FORM, [*proc.steps[:2],
                               CompiledStep(3, "type", FORM, anchor="a2", describe="the Password field",
                                            secret="bank_pin"), proc.steps[3]],
                        {}, [APP], {}, parameters=proc.parameters)
    gate, approver = gated(approved, "run", "once")
    r = Replayer(None, None, swapped, gate, {}, lambda _n: PASSWORD, slug="taught-pay",  # type: ignore[arg-type]
                 plan=approved)
    for s in swapped.steps[:3]:
        r._guard(s.n, "act", FORM, step=s, target=FORM if s.action == "goto" else None)
    said = approver.requests[1].describe()
    assert "the value is [secret bank_pin], the plan showed [secret password]" in said
    assert PASSWORD not in said
