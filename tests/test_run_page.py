"""The run page in real Chromium, driven by a person's clicks on the real
sample app: the form's parameters, one answer for a 28-step run (judged by
the app's own record), each step appearing live with its pictures, and Run
again asking again. Every click and key the person makes is counted."""

from __future__ import annotations

import io
import re
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
            # a trace: a filmstrip of every step, any picture enlarged, its neighbours a key away
            assert page.locator(".filmstrip button[data-enlarge]").count() >= 27
            page.locator("#step-10 .pictures button[data-enlarge]").last.click()
            dialog = page.locator("dialog#enlarged")
            dialog.wait_for()
            big = dialog.locator("img")
            page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=big.element_handle())
            assert big.evaluate("img => img.naturalWidth") >= 900  # the page after it, readable
            assert dialog.locator("figcaption").inner_text().startswith("Step 10, after (")
            page.keyboard.press("ArrowRight")
            assert dialog.locator("figcaption").inner_text().startswith("Step 11, before (")
            page.set_viewport_size({"width": 390, "height": 844})  # on a phone it fits the screen
            box = big.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
            page.keyboard.press("Escape")
            dialog.wait_for(state="hidden")
            page.set_viewport_size({"width": 1280, "height": 800})
            # a step's crop: its target outlined, the point the act lands on marked
            with s.api() as api:
                crop = api.get(f"/api/runs/{run_id}/pictures/10/before")
            assert crop.status_code == 200 and _outlined(crop.content) and _marked(crop.content)
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


def _in_first_screen(page: Any, locator: Any) -> bool:
    """On the page as it opens (not scrolled): the whole element is in view."""
    page.evaluate("() => window.scrollTo(0, 0)")
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= page.viewport_size["height"]


def _marked(jpeg: bytes) -> bool:
    """The crop's middle (where Playwright acts) holds the point's mark: the outline's red."""
    import numpy as np
    from PIL import Image

    from teachd.runner.observe import OUTLINE_COLOUR, POINT

    image = Image.open(io.BytesIO(jpeg)).convert("RGB")
    pixels = np.asarray(image, dtype=np.int16)
    cy, cx = image.height // 2, image.width // 2
    middle = pixels[cy - POINT // 2:cy + POINT // 2 + 1, cx - POINT // 2:cx + POINT // 2 + 1]
    return bool((np.abs(middle - np.array(OUTLINE_COLOUR)) < 60).all(axis=2).mean() > 0.5)


def _outlined(jpeg: bytes) -> bool:
    """The crop holds the outline's red (teachd.runner.observe.OUTLINE_COLOUR,
    give or take what JPEG does to it) on more pixels than a stray dot."""
    import numpy as np
    from PIL import Image

    from teachd.runner.observe import OUTLINE_COLOUR

    image = Image.open(io.BytesIO(jpeg)).convert("RGB")
    near = (np.abs(np.asarray(image, dtype=np.int16) - np.array(OUTLINE_COLOUR)) < 40).all(axis=2)
    return int(near.sum()) > 2 * (image.width + image.height)


def test_on_a_phone_every_question_says_what_changed_with_its_answers_in_the_first_screen(taught, browser) -> None:
    """A relabelled app (ids kept) at 390 px: the run's one question, then
    a changed step asked again — each with its buttons in the first screen,
    the changed one saying expected vs found in words; a step not found asks
    where it is now, its picture in the first screen; stopped there, the
    run leads with Show me this step, where it stopped, N of M."""
    from teachd.demo.sampleapp import Variant
    from tests.test_server import browser_login

    env, port = taught
    s = serve({**env, "TEACHD_SECRET_PASSWORD": PASSWORD})
    try:
        page = browser.new_page(viewport={"width": 390, "height": 844})
        browser_login(page, s.login_url)
        with SampleApp(password=PASSWORD, port=port, variant=Variant.named("changed_labels")), s.api() as api:
            run_id = api.post("/api/runs", json={"slug": "taught-file-a-report-and-add-approvers"}).json()["run_id"]
            page.goto(f"{s.url}/runs/{run_id}")
            allow = page.get_by_role("button", name="Allow this run")
            allow.wait_for(timeout=60_000)
            assert _in_first_screen(page, allow)  # above the 28-step plan, not under it
            page.goto(f"{s.url}/approvals")
            allow = page.locator("#pending").get_by_role("button", name="Allow this run")
            assert _in_first_screen(page, allow)
            allow.click()
            page.goto(f"{s.url}/runs/{run_id}")
            question = page.locator(".question").filter(has_text="is now")
            question.wait_for(timeout=60_000)
            said = " ".join(question.inner_text().split())
            assert "its name 'Amount' is now 'Total amount'" in said or "is now 'Merchant name'" in said, said
            assert "still the same: its field name, its id" in said, said
            assert _in_first_screen(page, question.get_by_role("button", name="Allow this step"))
            # one answer for this step and later ones changed the same way (only their names)
            assert _in_first_screen(page, question.get_by_role(
                "button", name="Allow this and later steps changed like this"))
            # ... and for the later steps of its page found changed too, looked up ahead: one answer
            assert _in_first_screen(page, question.get_by_role("button", name=re.compile(
                r"Allow these \d+ changed steps")))
            listed = question.locator("ul.ahead li")
            assert listed.count() >= 1 and "is now" in listed.first.inner_text()
            page.wait_for_function("img => img.complete && img.naturalWidth > 0",  # each with its picture
                                   arg=listed.first.locator("img").element_handle(), timeout=15_000)
            # beside the words, what was found: its crop, taken before the question, the target outlined
            found = question.locator("figure.found img")
            page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=found.element_handle(),
                                   timeout=15_000)
            n = int(re.search(r"step (\d+)", question.locator("h2").inner_text()).group(1))
            crop = api.get(f"/api/runs/{run_id}/pictures/{n}/before")
            assert crop.status_code == 200 and _outlined(crop.content), n
            # ... beside the demonstration's own picture of its target (its recording is kept)
            shown = question.locator("figure.demonstrated img")
            page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=shown.element_handle(),
                                   timeout=15_000)
            assert "As demonstrated" in question.inner_text()
            demonstrated = api.get(f"/api/runs/{run_id}/pictures/{n}/demonstrated")
            assert demonstrated.status_code == 200 and _outlined(demonstrated.content), n  # outlined there too
            assert _in_first_screen(page, question.get_by_role("button", name="Allow this step"))
            now = " ".join(page.locator(".now-card").inner_text().split())
            assert re.search(r"Waiting at step \d+ of 28", now), now
            question.get_by_role("button", name="Deny").click()
            again = page.get_by_role("button", name="Run again")
            again.wait_for(timeout=60_000)  # refused: nothing to show, and its next action is in view
            assert _in_first_screen(page, again)
            assert page.get_by_role("button", name="Show me this step").count() == 0
        with SampleApp(password=PASSWORD, port=port, variant=Variant.named("submit_removed")), s.api() as api:
            run_id = api.post("/api/runs", json={"slug": "taught-file-a-report-and-add-approvers"}).json()["run_id"]
            page.goto(f"{s.url}/runs/{run_id}")
            page.get_by_role("button", name="Allow this run").click(timeout=60_000)
            # the Submit button is gone: asked where it is now, on the page's picture, or to stop
            stop = page.get_by_role("button", name="Stop the run here")
            stop.wait_for(timeout=90_000)
            where = page.locator("img[data-where]")
            page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=where.element_handle(),
                                   timeout=15_000)
            shot(page, "phone-asks-where")
            page.evaluate("() => window.scrollTo(0, 0)")
            top = where.bounding_box()
            assert top is not None and top["y"] + 100 < 844  # it shows in the first screen, Stop above it
            assert _in_first_screen(page, stop)
            stop.click()
            show_me = page.get_by_role("button", name="Show me this step")
            show_me.wait_for(timeout=90_000)
            now = " ".join(page.locator(".now-card").inner_text().split())
            assert re.search(r"Stopped at step \d+ of 28", now), now
            assert _in_first_screen(page, show_me)
            assert page.get_by_role("button", name="Run again").count() == 1  # second, beside it
    finally:
        s.stop()


SLUG = "taught-file-a-report-and-add-approvers"


def _where(browser: Any, app: Any, name: str) -> tuple[float, float]:
    """Where a button is on the report form, as fractions of the window the
    run sees (1280×800): the person looks at the same page in their own browser."""
    from teachd.demo.sampleapp.server import USER

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(app.url + "/login")
        page.locator("#email").fill(USER)
        page.locator("#password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(re.compile(r"/dashboard"))
        page.goto(app.url + "/reports/new")
        box = page.get_by_role("button", name=name).bounding_box()
        assert box is not None
        return (box["x"] + box["width"] / 2) / 1280, (box["y"] + box["height"] / 2) / 800
    finally:
        page.close()


def test_a_step_not_found_is_shown_on_its_picture_and_the_same_run_goes_on_and_the_skill_keeps_it(
        taught, browser) -> None:
    """"Submit report" became "Send for approval" with no id left: the run,
    having signed in and filled the form, cannot find it. Its page asks the
    person to click where it is now, on the page as the run sees it; one
    click there, and this very run submits and goes on to the end — no
    restart, nothing written twice, judged by the app's own record — and the
    skill's next version keeps what was shown: the next run on the same app
    finds the button by it, with nothing to show."""
    from teachd.demo.sampleapp import Variant

    env, port = taught
    s = serve({**env, "TEACHD_SECRET_PASSWORD": PASSWORD})
    try:
        page = logged_in(browser, s)
        with SampleApp(password=PASSWORD, port=port, variant=Variant.named("submit_relabelled")) as app, \
                s.api() as api:
            version = api.get(f"/api/skills/{SLUG}").json()["version"]
            run_id = api.post("/api/runs", json={"slug": SLUG}).json()["run_id"]
            page.goto(f"{s.url}/runs/{run_id}")
            page.get_by_role("button", name="Allow this run").click(timeout=60_000)
            where = page.locator("img[data-where]")
            where.wait_for(timeout=90_000)
            page.wait_for_function("img => img.complete && img.naturalWidth === 1280",
                                   arg=where.element_handle(), timeout=15_000)
            said = " ".join(page.locator(".question").inner_text().split())
            assert "Submit report" in said and "click where it is now" in said, said
            assert page.locator(".question").get_by_role("button", name="Allow this step").count() == 0
            shot(page, "run-asks-where")
            x, y = _where(browser, app, "Send for approval")
            box = where.bounding_box()
            page.mouse.click(box["x"] + x * box["width"], box["y"] + y * box["height"])
            page.wait_for_function("() => !document.querySelector('#cancel')", timeout=120_000)
            run = api.get(f"/api/runs/{run_id}").json()
            assert run["status"] == "success", run["message"]
            submit = next(st for st in run["steps"] if "Submit report" in (st.get("detail") or ""))
            assert "shown" in submit["via"] and submit["asked"], submit
            assert f"step {submit['n']}, as you showed it, kept in the skill as v{version + 1}" in run["message"]
            gate = run["gate"]
            assert [e["decision"] for e in gate if e["decision"].startswith("shown")] == ["shown by the person"]
            # the same run went on: the form submitted once, one report, the group — nothing twice
            assert app.state.clicked().count("report.submit") == 1
            assert len(app.state.reports) == 1 and [g["name"] for g in app.state.groups] == ["Approvers"]
            skill = api.get(f"/api/skills/{SLUG}")
            assert skill.json()["version"] == version + 1
            assert f"repaired step {submit['n']} (run {run_id})" in skill.text
            # the next run on the same app finds it by what was shown: nothing to show; the plan
            # approved says "Submit report", so that one step asks again, saying what it found
            again = api.post("/api/runs", json={"slug": SLUG}).json()["run_id"]
            page.goto(f"{s.url}/runs/{again}")
            page.get_by_role("button", name="Allow this run").click(timeout=60_000)
            changed = page.locator(".question").filter(has_text="Send for approval")
            once = changed.get_by_role("button", name="Allow this step")
            once.wait_for(timeout=90_000)
            assert page.locator("img[data-where]").count() == 0
            once.click()
            page.wait_for_function("() => !document.querySelector('#cancel')", timeout=120_000)
            run = api.get(f"/api/runs/{again}").json()
            assert run["status"] == "success", run["message"]
            asked = [e["decision"] for e in run["gate"] if e["decision"] != "allowed by this run's approval"]
            assert asked == ["allowed this run", "allowed once"], asked
            assert len(app.state.reports) == 2
    finally:
        s.stop()
