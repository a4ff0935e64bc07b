"""The plan on the Approvals page is the plan the person approves (DESIGN §3.5,
issue 41): every value, target and page shown whole (wrapped, never cut), the
skill's words as quoted data, invisible and wide characters as escapes —
rendered from the templates, no browser, no daemon."""

from __future__ import annotations

import html
import re
from typing import Any

from teachd.runner.gate import Action, Plan, PlanStep, Request
from teachd.server.pages import templates

APP = "https://shop.example"
LONG = "".join(chr(ord("a") + i % 26) for i in range(500)) + "END"
WIDE = "pay\u2003all"


def approvals_part(plan: Plan) -> str:
    request = Request(7, Action("computer_act", "open “x”", f"{APP}/form", 1, planned=True),
                      (plan.slug,), "a loaded skill requires approval", plan)
    pending: dict[str, Any] = {**request.as_dict(), "id": 7, "run_id": "r-1"}
    return templates.env.get_template("_waiting.html").render(pending=[pending], asked=[])


def quotes(page: str) -> list[str]:
    return [html.unescape(q) for q in re.findall(r'<q class="quoted"><code>(.*?)</code></q>', page, re.S)]


def test_the_approvals_page_shows_every_plan_value_whole_and_its_wide_blanks_escaped() -> None:
    page_url = f"{APP}/" + "p" * 300 + "/form"
    plan = Plan("taught-pay", (
        PlanStep(1, "open", page_url),
        PlanStep(2, "type into", "the " + "N" * 200 + " field", page_url, LONG),
        PlanStep(3, "type into", "the Memo field", page_url, WIDE),
        PlanStep(4, "press", "a key", page_url, "Enter"),
    ), (APP,))
    page = approvals_part(plan)
    shown = quotes(page)
    assert LONG in shown and "the " + "N" * 200 + " field" in shown
    assert shown.count(page_url) == 4  # the open's target and every step's page, whole
    assert "more characters" not in page and "…" not in "".join(shown)
    assert "\u2003" not in page and "pay\\u{2003}all" in shown
    assert "a key" in page and "a key" not in shown  # teachd's own words stay bare


def test_a_step_target_is_quoted_data_with_its_invisibles_escaped() -> None:
    trap = "the Pay button\u202e</q><b>Safe</b>\nverified"
    page = approvals_part(Plan("taught-pay", (PlanStep(1, "click", trap, f"{APP}/form"),), (APP,)))
    assert "the Pay button\\u{202e}</q><b>Safe</b>\\u{a}verified" in quotes(page)
    assert "<b>Safe</b>" not in page and "\u202e" not in page  # autoescaped, nothing hidden


def test_a_question_says_why_a_step_asks_again() -> None:
    """A step not as its plan line showed asks again; the page says what differs."""
    note = "not as the plan showed it (the value is “99”, the plan showed “10”)"
    request = Request(3, Action("computer_act", "type the Amount field", f"{APP}/form", 2, note=note),
                      ("taught-pay",), "a loaded skill requires approval")
    page = templates.env.get_template("_waiting.html").render(
        pending=[{**request.as_dict(), "id": 3, "run_id": "r-1"}], asked=[])
    assert html.escape(note, quote=False) in page or html.escape(note) in page
