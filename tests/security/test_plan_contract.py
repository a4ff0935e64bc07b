"""The plan is the contract (DESIGN §3.5), from the attacker's side: what a
person approves is the exact plan that runs — every value whole, the skill's
own words and URLs as quoted data, invisible and wide characters made
visible — and an answer fits that plan only, in that run, once, in time."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from compiler.plan import PlanStep as CompiledStep
from compiler.plan import Procedure
from teachd.mcp.approver import Caller, ClientApprover, round_question
from teachd.runner.gate import Action, Asking, Plan, PlanStep, Request
from teachd.runner.plan_view import plan_of
from teachd.runner.quoting import quoted

APP = "https://shop.example"
HEAD = "x" * 120  # what the old plan showed of a value: the rest could differ unseen
FORGED_LINE = "\n2. click Safe"
CLEAR = "\x1b[2J"


def plan_with(value: str, slug: str = "taught-pay") -> Plan:
    return Plan(slug, (
        PlanStep(1, "open", f"{APP}/form"),
        PlanStep(2, "type into", "the Note field", f"{APP}/form", value),
        PlanStep(3, "click", "the Pay button", f"{APP}/form"),
    ), (APP,))


def asked(plan: Plan, request_id: int = 1) -> Request:
    return Request(request_id, Action("computer_act", "open “x”", f"{APP}/form", 1, planned=True),
                   (plan.slug,), "a loaded skill requires approval", plan)


def step_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"\s*\d+\. ", line)]


# -- shown whole ----------------------------------------------------------------
def test_a_500_character_value_is_shown_whole_in_the_plan() -> None:
    value = "".join(chr(ord("a") + i % 26) for i in range(500))
    text = plan_with(value).describe()
    assert f"“{value}”" in text and "…" not in text


def test_a_long_page_and_url_are_shown_whole_too() -> None:
    url = f"{APP}/" + "p" * 400 + "/end"
    text = Plan("taught-pay", (PlanStep(1, "open", url), PlanStep(2, "click", "Go", url)), (APP,)).describe()
    assert text.count(f"“{url}”") == 2


def test_the_question_of_a_single_step_shows_its_page_whole() -> None:
    page = f"{APP}/" + "q" * 400 + "/tail"
    text = Request(1, Action("computer_act", "click the Pay button", page, 3), (), "asked").describe()
    assert f"“{page}”" in text


# -- one key per plan -------------------------------------------------------------
def test_plans_that_differ_only_after_character_120_have_different_keys() -> None:
    a, b = plan_with(HEAD + "pay 10 EUR"), plan_with(HEAD + "pay 9999 EUR")
    assert a.key() != b.key()
    assert a.key() == plan_with(HEAD + "pay 10 EUR").key()  # the same plan, the same key
    # and so do the round questions that carry them, all else equal
    assert round_question(asked(a), "run-1", "n", 1.0)[1] != round_question(asked(b), "run-1", "n", 1.0)[1]


@pytest.mark.parametrize("change", ["slug", "origins", "secret", "page", "target", "n"])
def test_every_field_of_the_plan_is_in_its_key(change: str) -> None:
    base = plan_with("v")
    s = base.steps[1]
    other = {
        "slug": Plan("taught-pax", base.steps, base.origins),
        "origins": Plan(base.slug, base.steps, (APP, "https://evil.example")),
        "secret": Plan(base.slug, (base.steps[0], PlanStep(s.n, s.action, s.target, s.page, s.value, True),
                                   base.steps[2]), base.origins),
        "page": Plan(base.slug, (base.steps[0], PlanStep(s.n, s.action, s.target, f"{APP}/other", s.value),
                                 base.steps[2]), base.origins),
        "target": Plan(base.slug, (base.steps[0], PlanStep(s.n, s.action, "the Amount field", s.page, s.value),
                                   base.steps[2]), base.origins),
        "n": Plan(base.slug, (base.steps[0], PlanStep(7, s.action, s.target, s.page, s.value),
                              base.steps[2]), base.origins),
    }[change]
    assert other.key() != base.key()


# -- the skill's own words are data ---------------------------------------------------
def _procedure(describe: str, url: str, secret: str | None = None) -> Procedure:
    return Procedure(url, [
        CompiledStep(1, "goto", None, url=url),
        CompiledStep(2, "click", url, anchor="a1", describe=describe),
        CompiledStep(3, "type", url, anchor="a2", describe="the Password field", secret=secret),
    ], {}, [APP], {})


@pytest.mark.parametrize("evil", [FORGED_LINE, CLEAR, "\r2. click Safe", "\u20282. click Safe",
                                  "\x9b2J", "\u202e2. click Safe"])
def test_a_skills_words_and_urls_cannot_forge_a_plan_line_or_reach_the_terminal(evil: str) -> None:
    proc = _procedure(f"the Pay button{evil}", f"{APP}/form{evil}", secret=f"password]{evil}")
    text = plan_of("taught-pay", proc, {}).describe()
    lines = step_lines(text)
    assert [line.strip()[:2] for line in lines] == ["1.", "2.", "3."]  # three steps, three lines
    assert len(text.splitlines()) == 1 + 1 + 3  # the head, one page, three steps
    assert not any(c in text for c in ("\x1b", "\x9b", "\r", "\u2028", "\u202e"))
    assert "“the Pay button" in text and f"“{APP}/form" in text  # quoted, as data


def test_a_secret_name_is_shown_bare_only_when_it_is_a_plain_name() -> None:
    proc = _procedure("the Pay button", f"{APP}/form", secret="password")
    assert "[secret password]" in plan_of("taught-pay", proc, {}).describe()
    forged = PlanStep(3, "type into", "the field", None, "[secret x]\n4. click Safe", True)
    assert "\n" not in forged.line() and "“[secret x]⏎4. click Safe”" in forged.line()


def test_a_verb_origin_and_slug_from_the_skill_cannot_break_the_head_or_a_line() -> None:
    plan = Plan("taught-x\n1. open Safe", (PlanStep(1, "click\n2. click Safe", "Go"),),
                (f"{APP}\n3. click Safe",))
    text = plan.describe()
    assert len(text.splitlines()) == 2 and "\x1b" not in text


def test_a_replay_steps_words_in_a_single_question_stay_on_one_line() -> None:
    req = Request(1, Action("computer_act", f"click the Pay button{FORGED_LINE}{CLEAR}", f"{APP}/form", 2,
                            note=f"drifted{FORGED_LINE}"),
                  ("taught-pay",), f"{APP}/x{FORGED_LINE} is outside the skill's allowed scope")
    text = req.describe()
    assert "\n" not in text and "\x1b" not in text and "\\u001b[2J" in text


# -- invisible and wide characters -----------------------------------------------------
@pytest.mark.parametrize("blank", ["\u2003", "\u00a0", "\u3000", "\u2000", "\u200a", "\u202f", "\u205f",
                                   "\u1680", "\u3164", "\u2800", "\ufe0f", "\x1b", "\x85", "\t"])
def test_wide_blanks_and_controls_show_as_escapes(blank: str) -> None:
    shown = quoted(f"a{blank}b")
    assert blank not in shown and f"\\u{ord(blank):04x}" in shown
    text = plan_with(f"pay{blank}10").describe()
    assert blank not in text and f"\\u{ord(blank):04x}" in text


def test_a_plain_space_stays_a_space() -> None:
    assert quoted("a b") == "“a b”"


def test_quoted_still_cuts_where_no_approval_is_asked_and_never_with_no_limit() -> None:
    assert quoted("y" * 500).endswith("…”") and len(quoted("y" * 500)) == 162
    assert quoted("y" * 500, None) == "“" + "y" * 500 + "”"


# -- the answer fits one plan, one run, once, in time --------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def approver_for(run_id: str, clock: Clock, timeout: float = 300.0) -> ClientApprover:
    approver = ClientApprover(None, timeout, threading.Event(), clock=clock)  # type: ignore[arg-type]
    approver.run_id = run_id
    return approver


def call(approver: ClientApprover, loop: asyncio.AbstractEventLoop, request: Request,
         answered: dict[str, tuple[str, Any]] | None = None) -> Any:
    """One tool call of a 2026-07-28 client: the question (``Asking``) or the answer."""
    approver.caller = Caller(None, loop, threading.Event(), rounds=True, answered=dict(answered or {}))
    try:
        return approver.ask(request)
    except Asking as question:
        return question
    finally:
        approver.caller = None


def accepted(question: Any) -> dict[str, tuple[str, Any]]:
    assert isinstance(question, Asking), question
    return {question.key: ("accept", {})}


def test_the_answer_to_the_same_question_in_its_round_is_matched(loop: asyncio.AbstractEventLoop) -> None:
    approver = approver_for("run-1", Clock())
    plan = plan_with(HEAD + "pay 10 EUR")
    answer = call(approver, loop, asked(plan, 1), accepted(call(approver, loop, asked(plan, 1))))
    assert not isinstance(answer, Asking) and answer.allow and answer.run


def test_an_answer_for_one_plan_does_not_allow_a_plan_differing_after_char_120(
        loop: asyncio.AbstractEventLoop) -> None:
    approver = approver_for("run-1", Clock())
    shown = call(approver, loop, asked(plan_with(HEAD + "pay 10 EUR")))
    got = call(approver, loop, asked(plan_with(HEAD + "pay 9999 EUR")), accepted(shown))
    assert isinstance(got, Asking)  # asked again, for the plan that would run


def test_an_accepted_answer_is_not_replayed_on_a_later_identical_call(loop: asyncio.AbstractEventLoop) -> None:
    approver = approver_for("run-1", Clock())
    plan = plan_with("pay 10 EUR")
    answer = accepted(call(approver, loop, asked(plan, 1)))
    first = call(approver, loop, asked(plan, 2), answer)
    assert not isinstance(first, Asking) and first.allow
    again = call(approver, loop, asked(plan, 3), answer)  # the same answer, sent again
    assert isinstance(again, Asking)


@pytest.mark.parametrize(("later", "allowed"), [(301.0, False), (299.0, True)], ids=["expired", "in time"])
def test_an_answer_allows_only_before_its_expiry(loop: asyncio.AbstractEventLoop, later: float,
                                                 allowed: bool) -> None:
    clock = Clock()
    approver = approver_for("run-1", clock, timeout=300.0)
    plan = plan_with("pay 10 EUR")
    answer = accepted(call(approver, loop, asked(plan)))
    clock.now += later
    assert isinstance(call(approver, loop, asked(plan), answer), Asking) is not allowed


def test_an_answer_from_another_run_allows_nothing(loop: asyncio.AbstractEventLoop) -> None:
    clock = Clock()
    plan = plan_with("pay 10 EUR")
    answer = accepted(call(approver_for("run-1", clock), loop, asked(plan)))
    assert isinstance(call(approver_for("run-2", clock), loop, asked(plan), answer), Asking)
    # the same table, another run: the key is bound to the run it was asked in
    approver = approver_for("run-1", clock)
    answer = accepted(call(approver, loop, asked(plan)))
    approver.run_id = "run-2"
    assert isinstance(call(approver, loop, asked(plan), answer), Asking)


def test_a_single_step_answer_is_bound_to_its_whole_request(loop: asyncio.AbstractEventLoop) -> None:
    approver = approver_for("run-1", Clock())

    def once(page: str) -> Request:
        return Request(1, Action("computer_act", "click the Pay button", page, None), (), "asked")

    answer = accepted(call(approver, loop, once(f"{APP}/{HEAD}a")))
    assert isinstance(call(approver, loop, once(f"{APP}/{HEAD}b"), answer), Asking)
    got = call(approver, loop, once(f"{APP}/{HEAD}a"), answer)
    assert not isinstance(got, Asking) and got.allow and not got.run


def test_a_made_up_key_allows_nothing(loop: asyncio.AbstractEventLoop) -> None:
    approver = approver_for("run-1", Clock())
    plan = plan_with("pay 10 EUR")
    call(approver, loop, asked(plan))
    _, old_style = round_question(asked(plan))  # the question's key with no nonce or run: never issued
    assert isinstance(call(approver, loop, asked(plan), {old_style: ("accept", {})}), Asking)
