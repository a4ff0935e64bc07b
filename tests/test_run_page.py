"""The run page in real Chromium, driven by a person's clicks on the real
sample app: the form's parameters, one answer for a 28-step run (judged by
the app's own record), each step appearing live with its pictures, and Run
again asking again. Every click and key the person makes is counted."""

from __future__ import annotations

from typing import Any

from teachd.demo.sampleapp import SampleApp
from tests.sample_task import PASSWORD
from tests.test_server import logged_in, serve, shot


class Counted:
    """The person's clicks and keys, as they make them."""

    def __init__(self, page: Any) -> None:
        self.page, self.clicks, self.keys = page, 0, 0

    def click(self, locator: Any) -> None:
        self.clicks += 1
        locator.click()

    def type(self, locator: Any, text: str) -> None:
        locator.click()
        self.clicks += 1
        locator.fill("")
        self.keys += len(text)
        locator.press_sequentially(text)


def test_a_28_step_run_from_its_form_finishes_after_one_answer_with_live_pictures(taught, browser) -> None:
    env, port = taught
    s = serve({**env, "TEACHD_SECRET_PASSWORD": PASSWORD})
    try:
        with SampleApp(password=PASSWORD, port=port) as app:
            page = logged_in(browser, s)
            person = Counted(page)
            page.goto(s.url + "/runs")
            person.click(page.get_by_text("Parameters and start address"))  # folded: defaults as demonstrated
            amount = page.get_by_label("amount", exact=True)
            amount.wait_for()  # the chosen skill's parameters, from its declared defaults
            assert amount.input_value() == "42.50"
            assert page.get_by_label("password", exact=False).count() == 0  # a secret is never a field
            person.type(amount, "63.20")
            person.type(page.get_by_label("name", exact=True), "Form approvers")
            person.click(page.get_by_role("button", name="Run", exact=True))
            page.wait_for_url("**/runs/run-*")
            run_id = page.url.rsplit("/", 1)[1]
            allow = page.get_by_role("button", name="Allow this run")
            allow.wait_for(timeout=60_000)  # asked right here, with the plan in view
            assert "Open audit log link" in page.inner_text("main") and "63.20" in page.inner_text("main")
            shot(page, "run-asks")
            person.click(allow)
            # steps appear one by one while it runs, each with its pictures, without a reload
            page.wait_for_function("() => document.querySelectorAll('.plan .pictures img[src]').length >= 3",
                                   timeout=60_000)
            assert page.evaluate("() => document.body.innerText").count("Cancel") >= 1  # still running
            page.get_by_text("worked", exact=False).or_(page.get_by_text("success", exact=False)).first.wait_for(
                timeout=120_000)
            page.wait_for_function("() => !document.querySelector('#cancel')", timeout=120_000)
            shot(page, "run-done")
            with s.api() as api:
                run = api.get(f"/api/runs/{run_id}").json()
            assert run["status"] == "success", run["message"]
            loaded = page.evaluate("() => [...document.querySelectorAll('.plan .pictures img')]"
                                   ".filter(i => i.complete && i.naturalWidth > 0).length")
            assert loaded >= 2 * 27  # before and after of every step on the page (the first opens it)
            reports, groups = list(app.state.reports), [g["name"] for g in app.state.groups]
            assert len(reports) == 1 and reports[0]["amount"] == "63.20" and groups == ["Form approvers"]
            # unfold, 2 fields, Run, Allow this run
            assert (person.clicks, person.keys) == (5, len("63.20") + len("Form approvers"))
            # Run again: the same values, asked again (never saved)
            person.click(page.get_by_role("button", name="Run again"))
            page.wait_for_url(lambda u: "/runs/run-" in u and run_id not in u)
            page.get_by_role("button", name="Allow this run").wait_for(timeout=60_000)
            person.click(page.get_by_role("button", name="Deny"))
            page.wait_for_function("() => !document.querySelector('#cancel')", timeout=60_000)
            assert len(app.state.reports) == 1  # the denied run did nothing
    finally:
        s.stop()
