from __future__ import annotations

import io
from dataclasses import replace

import pytest

from teachd.core.approval import Approval
from teachd.core.errors import PolicyStop
from teachd.runner.gate import Action, Answer, Gate, Request, TerminalApprover


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


# -- one approval per run (DESIGN §3.5) --------------------------------------

from teachd.runner.gate import Plan, PlanStep  # noqa: E402

PLAN = Plan("taught-x", tuple(PlanStep(n, "click", f"the button {n}", "https://app.example.com/")
                              for n in range(1, 6)), ("https://app.example.com",))


def planned(n: int, as_taught: bool = True) -> Action:
    return Action("computer_act", f"click the button {n}", "https://app.example.com/", n, planned=as_taught)


def gated(*answers: str) -> tuple[Gate, Scripted]:
    class Words(Scripted):
        def ask(self, request: Request) -> Answer:
            self.requests.append(request)
            return Answer.said(request.id, self.answers.pop(0))

    approver = Words(*answers)
    gate = Gate(approver)
    gate.load("taught-x", Approval(True, ("computer_act",)))
    gate.offer(PLAN)
    return gate, approver


def test_run_answer_covers_every_plan_step_after_one_question() -> None:
    gate, approver = gated("run")
    for n in range(1, 6):
        gate.check(planned(n))
    assert len(approver.requests) == 1
    first = approver.requests[0]
    assert first.offers_run and first.plan == PLAN and first.as_dict()["of"] == 5
    assert [e["decision"] for e in gate.log] == ["allowed this run"] + ["allowed by this run's approval"] * 4


def test_a_drifted_step_inside_a_run_approved_replay_asks_again_without_the_plan() -> None:
    gate, approver = gated("run", "once")
    gate.check(planned(1))
    gate.check(planned(2, as_taught=False))  # found through a repair or a drifted match
    gate.check(planned(3))  # back on the plan: covered
    assert len(approver.requests) == 2 and not approver.requests[1].offers_run
    assert approver.requests[1].action.step == 2


def test_a_retry_an_outside_question_and_an_agents_own_act_ask_again() -> None:
    gate, approver = gated("run", "once", "once", "deny")
    gate.check(planned(1))
    gate.check(planned(2))
    gate.check(planned(2))  # the same step again: a retry is not in the plan
    gate.check(planned(3), reason="https://elsewhere.example/ is outside the skill's allowed scope")
    with pytest.raises(PolicyStop):
        gate.check(Action("computer_act", "click Delete everything", None, None))  # the agent's own
    assert len(approver.requests) == 4
    assert not any(r.offers_run for r in approver.requests[1:])


def test_a_run_grant_ends_with_its_replay_and_the_next_one_asks_again() -> None:
    gate, approver = gated("run", "run")
    gate.check(planned(1))
    gate.offer(None)  # the replay ended
    gate.offer(PLAN)  # the next run of the same skill
    gate.check(planned(1))
    assert len(approver.requests) == 2 and all(r.offers_run for r in approver.requests)


def relabelled(n: int, kind: str = "relabelled", target: str | None = None) -> Action:
    """Plan step ``n`` found changed (only its name; its id agreed), doing what ``target`` says."""
    line = PlanStep(n, "click", target or f"the button {n}", "https://app.example.com/")
    return Action("computer_act", f"click the button {n}", "https://app.example.com/", n, planned=False,
                  shown=line, change=kind)


def test_like_allows_a_changed_step_and_later_steps_changed_the_same_way_in_this_run_only() -> None:
    gate, approver = gated("run", "like", "once", "once", "run", "once")
    gate.check(planned(1))
    gate.check(relabelled(2))  # asks, offering like
    gate.check(relabelled(3))  # covered
    gate.check(relabelled(4, kind="moved"))  # changed another way: asks
    gate.check(relabelled(5, target="the button Delete"))  # would do other than its plan line: asks
    assert [r.action.step for r in approver.requests] == [1, 2, 4, 5]
    assert approver.requests[1].offers_like and approver.requests[1].answers == "once/like/deny"
    decisions = [e["decision"] for e in gate.log]
    assert decisions[1:3] == ["allowed with later steps changed the same way",
                              "allowed: changed like step 2, which the person allowed with later steps changed "
                              "the same way, in this run"]
    gate.offer(None)
    gate.offer(PLAN)  # the next run: nothing carried over
    gate.check(planned(1))
    gate.check(relabelled(2))
    assert [r.action.step for r in approver.requests][-2:] == [1, 2]


def test_like_never_covers_a_step_outside_the_scope_and_is_once_where_not_offered() -> None:
    gate, approver = gated("run", "like", "once")
    gate.check(planned(1))
    gate.check(relabelled(2))
    gate.check(relabelled(3), reason="https://elsewhere.example/ is outside the skill's allowed scope")
    assert len(approver.requests) == 3
    plain = Request(9, planned(4), ("taught-x",), "a loaded skill requires approval")
    assert not plain.offers_like and Answer.offered(plain, "like") == Answer(9, True)  # like where not offered: once


def test_once_on_the_plan_question_allows_only_that_step() -> None:
    gate, approver = gated("once", "run")
    gate.check(planned(1))
    gate.check(planned(2))  # asked again, and the plan offered again
    gate.check(planned(3))
    assert len(approver.requests) == 2 and approver.requests[1].offers_run


def test_a_saved_rule_never_satisfies_a_forced_approval_even_with_a_plan() -> None:
    gate, approver = gated("deny")
    gate.saved_rules = frozenset({"computer_act"})
    with pytest.raises(PolicyStop):
        gate.check(planned(1))
    assert len(approver.requests) == 1


def test_terminal_approver_offers_run_only_with_a_plan_and_shows_it() -> None:
    stdin, stderr = io.StringIO("run\nrun\n"), io.StringIO()
    t = TerminalApprover(stdin, stderr)
    with_plan = t.ask(Request(1, planned(1), ("taught-x",), "r", PLAN))
    without = t.ask(Request(2, planned(2), ("taught-x",), "r"))
    assert with_plan.allow and with_plan.run
    assert without.allow and not without.run  # "run" where no plan was offered means this one
    text = stderr.getvalue()
    assert "[run/once/deny]" in text and "[once/deny]" in text and "5. click “the button 5”" in text


def test_unknown_words_are_a_deny() -> None:
    for word in ("yes", "RUN ", "", "allow", "always"):
        assert not Answer.said(1, word).allow


def test_the_approvals_queue_takes_like_only_where_the_request_offered_it(tmp_path) -> None:
    """Through the store (the Approvals page, the run page): ``like`` to a
    request that did not offer it is refused, nothing answered; to one that
    did, the asking run reads ``like``."""
    import threading

    from teachd.config import Settings
    from teachd.core.errors import BadInput
    from teachd.store import open_store
    from teachd.store.approvals import ApprovalQueue

    queue = ApprovalQueue(open_store(Settings(home=tmp_path, owner="alice")), timeout=20)
    plain = Request(1, planned(4), ("taught-x",), "a loaded skill requires approval").as_dict()
    changed = Request(2, relabelled(5), ("taught-x",), "a loaded skill requires approval").as_dict()
    said: dict[str, str] = {}
    for name, request in (("plain", plain), ("changed", changed)):
        t = threading.Thread(target=lambda n=name, r=request: said.__setitem__(n, queue.wait("run-1", r)))
        t.start()
        while not any(p.get("step") == request["step"] for p in queue.pending()):
            threading.Event().wait(0.05)
        pid = next(p["id"] for p in queue.pending() if p.get("step") == request["step"])
        if name == "plain":
            with pytest.raises(BadInput):
                queue.answer(pid, "like")
            with pytest.raises(BadInput):
                queue.answer(pid, "these")
            queue.answer(pid, "once")
        else:
            queue.answer(pid, "like")
        t.join(10)
    assert said == {"plain": "once", "changed": "like"}


def test_these_allows_the_listed_steps_only_as_found_when_listed_and_only_in_this_run() -> None:
    """``these`` to a changed step's question allows the later steps of its
    page it listed, each only when found changed in the very words listed
    and doing what its plan line shows; one found otherwise, or not listed,
    asks; the next run starts with nothing."""
    gate, approver = gated("run", "these", "once", "once", "once", "run", "once")
    gate.check(planned(1))
    ahead = ((3, "its name 'B' is now 'Bee'"), (4, "its name 'C' is now 'See'"), (5, "its name 'D' is now 'Dee'"))
    first = replace(relabelled(2), changed="its name 'A' is now 'Ay'", ahead=ahead)
    gate.check(first)  # asks, listing 3, 4 and 5
    gate.check(replace(relabelled(3), changed="its name 'B' is now 'Bee'"))  # as listed: covered
    gate.check(replace(relabelled(4), changed="its name 'C' is now 'Sea'"))  # found otherwise: asks
    gate.check(replace(relabelled(5, target="the button Delete"), changed="its name 'D' is now 'Dee'"))  # asks
    gate.check(replace(relabelled(6), changed="its name 'E' is now 'Eee'"))  # not listed: asks
    request = approver.requests[1]
    assert request.offers_these and request.answers == "once/these/like/deny"
    assert "; step 3 on this page changed too: its name 'B' is now 'Bee'" in request.describe()
    assert request.as_dict()["these"] == [{"step": n, "changed": w} for n, w in ahead]
    assert [r.action.step for r in approver.requests] == [1, 2, 4, 5, 6]
    assert [e["decision"] for e in gate.log][1:3] == [
        "allowed with the 3 changed steps it listed",
        "allowed: listed as changed with step 2, which the person allowed with these steps"]
    gate.offer(None)
    gate.offer(PLAN)  # the next run: nothing carried over
    gate.check(planned(1))
    gate.check(replace(relabelled(3), changed="its name 'B' is now 'Bee'"))
    assert [r.action.step for r in approver.requests][-2:] == [1, 3]
    plain = Request(9, relabelled(7), ("taught-x",), "a loaded skill requires approval")
    assert not plain.offers_these and Answer.offered(plain, "these") == Answer(9, True)  # where not offered: once


def test_the_mcp_form_offers_a_box_per_wider_answer_and_reads_nothing_else_as_a_yes() -> None:
    from teachd.mcp.approver import LIKE, THESE, boxes_of, judge, schema_of

    ahead = ((3, "its name 'B' is now 'Bee'"),)
    both = Request(2, replace(relabelled(2), ahead=ahead), ("taught-x",), "a loaded skill requires approval")
    boxes = boxes_of(both)
    assert set(schema_of(boxes)["properties"]) == {LIKE, THESE} and schema_of(())["properties"] == {}
    assert judge(2, "accept", {}, boxes) == Answer(2, True)
    assert judge(2, "accept", {THESE: True, LIKE: False}, boxes) == Answer(2, True, these=True)
    assert judge(2, "accept", {LIKE: True}, boxes) == Answer(2, True, like=True)
    assert not judge(2, "accept", {LIKE: True}, ()).allow  # a box the question did not offer
    assert not judge(2, "accept", {THESE: "yes"}, boxes).allow  # not a box's answer
    assert not judge(2, "decline", {THESE: True}, boxes).allow
