from __future__ import annotations

import io

import pytest

from teachd.errors import PolicyStop
from teachd.runner.gate import Action, Answer, Gate, Request, TerminalApprover
from teachd.skills.approval import Approval


class Scripted:
    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.requests: list[Request] = []

    def ask(self, request: Request) -> Answer:
        self.requests.append(request)
        return Answer(request.id, self.answers.pop(0) == "once")


ACT = Action("computer_act", "click the Save button", "https://app.example.com/x", 3)


def test_skill_gate_asks_whatever_the_run_setting_and_names_the_skill() -> None:
    approver = Scripted("once")
    gate = Gate(approver, run_setting="auto", saved_rules=frozenset({"computer_act"}))
    gate.load("taught-pay", Approval(True, ("computer_act",)))
    gate.check(ACT)
    assert approver.requests[0].skills == ("taught-pay",)
    assert "taught-pay" in approver.requests[0].describe() and "Save" in approver.requests[0].describe()


def test_deny_stops_and_empty_tool_list_gates_all_six() -> None:
    gate = Gate(Scripted("deny"))
    gate.load("s", Approval(True, ()))
    with pytest.raises(PolicyStop):
        gate.check(Action("delete_file", "x"))
    assert gate.requiring("message_agent") == ("s",)


def test_saved_rule_works_only_where_no_skill_gates() -> None:
    approver = Scripted()
    gate = Gate(approver, run_setting="ask", saved_rules=frozenset({"run_command"}))
    gate.check(Action("run_command", "ls"))  # no request: the saved rule allows it
    assert approver.requests == []
    approver.answers.append("deny")
    gate.load("s", Approval(True, ("run_command",)))  # the same gate, now with a skill that gates it
    with pytest.raises(PolicyStop):
        gate.check(Action("run_command", "ls"))
    assert [r.skills for r in approver.requests] == [("s",)]  # it asked, naming the skill


def test_an_answer_for_another_request_is_not_reused() -> None:
    class Replaying:
        first: Answer | None = None

        def ask(self, request: Request) -> Answer:
            if self.first is None:
                self.first = Answer(request.id, True)
            return self.first  # tries to spend action A's approval on action B

    gate = Gate(Replaying())
    gate.load("s", Approval(True, ("computer_act",)))
    gate.check(ACT)
    with pytest.raises(PolicyStop):
        gate.check(Action("computer_act", "click Delete", None, 4))


def test_unload_then_load_brings_the_gate_back() -> None:
    gate = Gate(Scripted("deny"))
    gate.load("s", Approval(True, ("computer_act",)))
    gate.unload("s")
    gate.check(ACT)  # nothing gates it now
    gate.load("s", Approval(True, ("computer_act",)))
    with pytest.raises(PolicyStop):
        gate.check(ACT)


def test_terminal_approver_reads_one_line_per_request_and_eof_denies() -> None:
    stdin, stderr = io.StringIO("once\ndeny\n"), io.StringIO()
    t = TerminalApprover(stdin, stderr)
    reqs = [Request(i, ACT, ("s",), "r") for i in (1, 2, 3)]
    assert [t.ask(r).allow for r in reqs] == [True, False, False]
    assert "no answer" in stderr.getvalue()
