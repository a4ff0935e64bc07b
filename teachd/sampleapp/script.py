"""The scripted demonstration of the sample app's task, played over
Chromium's DevTools port as a person would (``teachd demo`` and the tests)."""

from __future__ import annotations

import time
from typing import Any

TASK = "Submit an expense report"
FORM = {"amount": "42.50", "description": "Taxi from the airport", "category": "travel"}


def demonstrate(cdp_port: int, password: str, pause: float = 0.0) -> None:
    """Sign in, open a new report, fill it in and submit it; then close the browser."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{cdp_port}")
        page: Any = browser.contexts[0].pages[0]
        page.wait_for_selector("#email")

        def type_into(selector: str, text: str) -> None:
            page.click(selector)
            page.keyboard.type(text, delay=20)
            time.sleep(pause)

        type_into("#email", "alice@example.com")
        type_into("#password", password)
        page.click("button[type=submit]")
        page.wait_for_url("**/dashboard")
        page.click("text=New report")
        page.wait_for_url("**/reports/new")
        type_into("#amount", FORM["amount"])
        type_into("#description", FORM["description"])
        page.click("#category")
        page.select_option("#category", FORM["category"])
        page.click("#has-receipt")
        page.click("button[type=submit]")
        page.wait_for_url("**/reports/*")
        time.sleep(0.3 + pause)
        for p in browser.contexts[0].pages:
            p.close()
