"""The scripted demonstration of the sample app's task, played over
Chromium's DevTools port with real mouse and key events, as a person would
(``teachd demo``, the drift suite and the tests)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from teachd.demo.sampleapp.server import USER

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from teachd.teach.process import TeachProcess

TASK = "File a report and add approvers"
FORM: dict[str, str | bool] = {"amount": "42.50", "description": "Taxi from the airport",
                               "merchant_id": "taxi-paris", "category": "travel", "has_receipt": True}
NOTE = "Receipt attached"
GROUP: dict[str, Any] = {"name": "Approvers",
                         "permissions": ["approve_reports", "archive_reports", "export_reports"]}
# What the task clicks (data-k of the sample app); the fields a person clicks
# into before typing are fine too. Anything else clicked is a wrong action.
TASK_CLICKS = frozenset({
    "login.submit", "tab.reports", "reports.new", "merchant.taxi-paris", "report.receipt", "note.save",
    "report.submit", "nav.groups", "groups.add", "perm.approve_reports", "perm.export_reports", "perm.add",
    "perm.add-all", "group.save", "audit.open",
})
FIELDS = frozenset({"login.email", "login.password", "report.amount", "report.description",
                    "report.merchant", "report.category", "note.field", "group.name", "perm.filter"})


def demonstrate(teach: TeachProcess, password: str, pause: float = 0.0) -> None:
    """Sign in, file a report (type-ahead, select, checkbox, a note in an
    iframe), then create a group through the filter-and-choose lists and open
    the audit log in a new tab; then close the browser."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{teach.cdp_port}")
        context = browser.contexts[0]
        person = Person(context.pages[0], pause)
        person.sign_in(password, "**/dashboard")
        person.file_report()
        person.create_group()
        with context.expect_page() as new_tab:
            person.page.get_by_role("link", name="Open audit log").click()
        new_tab.value.wait_for_load_state()
        teach.wait_for(lambda evs: any(e["type"] == "page" and e.get("url", "").endswith("/audit")
                                       for e in evs))
        person.settle()
        for p in context.pages:
            p.close()


class Person:
    """The demo's person at the sample app's page, one part of the task a method."""

    def __init__(self, page: Page, pause: float) -> None:
        self.page, self.pause = page, pause

    def settle(self) -> None:
        if self.pause:  # a person's pace, for the demo's viewers; the recording needs none
            self.page.wait_for_timeout(int(self.pause * 1000))

    def type_into(self, target: Locator, text: str, replace: bool = False) -> None:
        target.click()
        if replace:
            self.page.keyboard.press("Control+a")
        self.page.keyboard.type(text, delay=15)
        self.settle()

    def sign_in(self, password: str, landing: str | re.Pattern[str]) -> None:
        page = self.page
        page.wait_for_selector("#email")
        self.type_into(page.locator("#email"), USER)
        self.type_into(page.locator("#password"), password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(landing)

    def file_report(self) -> None:
        page = self.page
        page.get_by_role("tab", name="Reports").click()  # a client-side route
        page.wait_for_url("**/dashboard/reports")
        page.get_by_role("link", name="New report").click()
        page.wait_for_url("**/reports/new")
        self.type_into(page.locator("#amount"), str(FORM["amount"]))
        self.type_into(page.locator("#description"), str(FORM["description"]))
        self.type_into(page.locator("#merchant"), "Tax")
        page.get_by_role("option", name="Taxi Paris", exact=True).click()
        self.settle()
        page.locator("#category").click()
        page.select_option("#category", str(FORM["category"]))
        self.settle()
        page.locator("#has-receipt").click()
        note = page.frame_locator("iframe[title=Note]")
        self.type_into(note.locator("#note"), NOTE)
        note.get_by_role("button", name="Save note").click()
        note.get_by_text("Note saved").wait_for()
        page.get_by_role("button", name="Submit report").click()
        page.wait_for_url(re.compile(r"/reports/\d+$"))
        self.settle()

    def create_group(self) -> None:
        page = self.page
        page.get_by_role("link", name="Groups").click()
        page.wait_for_url("**/groups")
        page.get_by_role("link", name="Add group").click()
        page.wait_for_url("**/groups/add")
        self.type_into(page.locator("#group-name"), GROUP["name"])
        for query, option in (("approve r", "Can approve reports"), ("export", "Can export reports")):
            self.type_into(page.locator("#perm-filter"), query, replace=True)
            page.get_by_role("option", name=option, exact=True).click()
            self.settle()
            page.get_by_role("button", name="Choose", exact=True).click()
            self.settle()
        self.type_into(page.locator("#perm-filter"), "archive", replace=True)
        page.get_by_role("button", name="Choose all").click()
        self.settle()
        page.get_by_role("button", name="Save", exact=True).click()
        page.wait_for_url(re.compile(r"/groups/\d+$"))
