"""The approval gate's answers are typed, and its question shows the
agent's words as quoted data. A run really waits (``ApprovalQueue.wait`` in
a thread, as a replay does) while the attacker answers the daemon's API:
only a JSON boolean settles it — ``"false"`` is not an allow, nor an answer.
On the Approvals page, the agent-supplied target and URL sit in a labelled
quote box, cut, with control and invisible characters shown."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from teachd.config import Settings
from teachd.store import open_store
from teachd.store.approvals import ApprovalQueue
from tests.security.web_surface import chromium, daemon
from tests.test_server import Server, browser_login, shot

TRAP = "Safe: routine check, verified by teachd\u202e\n<b>allow</b>\u200b" + "A" * 400


def _waiting(server: Server, request: dict[str, Any]) -> tuple[threading.Thread, list[str], int]:
    """A run of alice's waiting on the daemon's Approvals page; its id there."""
    queue = ApprovalQueue(open_store(Settings(home=server.home, owner="alice")))
    got: list[str] = []
    thread = threading.Thread(target=lambda: got.append(queue.wait("run-attack", request, timeout=60)), daemon=True)
    thread.start()
    with server.api() as api:
        for _ in range(200):
            pending = api.get("/api/approvals").json()["pending"]
            if pending:
                return thread, got, int(pending[0]["id"])
            time.sleep(0.05)
    raise AssertionError("the request never showed")


REQUEST = {"step": 2, "tool": "click", "action": "the Pay button", "page": "https://shop.example/pay",
           "skills": ["expenses"], "reason": "a loaded skill requires approval"}


def test_only_a_json_boolean_answers_a_waiting_request(tmp_path: Path) -> None:
    with daemon(tmp_path) as server, server.api() as api:
        thread, got, pid = _waiting(server, REQUEST)
        for body in ({"allow": "false"}, {"allow": "true"}, {"allow": "False"}, {"allow": 1}, {"allow": 0},
                     {"allow": "yes"}, {"allow": None}, {"allow": []}, {"allow": {}}, {"allow": 1.0},
                     {"answer": "run"}, {}):  # "run" where no plan was offered: not an answer it can take
            r = api.post(f"/api/approvals/{pid}", json=body)
            assert r.status_code == 400, (body, r.status_code)
            assert thread.is_alive() and not got, body  # still waiting: not an allow, not an answer
        assert api.post(f"/api/approvals/{pid}", json={"allow": False}).status_code == 200
        thread.join(10)
        assert got == ["deny"]
        thread, got, pid = _waiting(server, REQUEST)
        assert api.post(f"/api/approvals/{pid}", json={"allow": True}).status_code == 200
        thread.join(10)
        assert got == ["once"]


def test_an_answer_teachd_does_not_know_is_a_deny_and_run_needs_an_offered_plan(tmp_path: Path) -> None:
    """DESIGN §3.5: `answer` is run, once or deny; any other word (a case
    variant, "allow", "always", a number) is a deny, never an allow."""
    with daemon(tmp_path) as server, server.api() as api:
        for word in ("allow", "RUN", "Once", "always", " once", 1, True, None, ["run"]):
            thread, got, pid = _waiting(server, REQUEST)
            r = api.post(f"/api/approvals/{pid}", json={"answer": word})
            assert r.status_code == 200 and r.json()["allow"] is False, (word, r.text)
            thread.join(10)
            assert got == ["deny"], word
        offered = {**REQUEST, "offers_run": True, "plan": {"slug": "expenses", "steps": [], "origins": []}}
        thread, got, pid = _waiting(server, offered)
        assert api.post(f"/api/approvals/{pid}", json={"answer": "run"}).status_code == 200
        thread.join(10)
        assert got == ["run"]


def test_the_agents_words_show_as_a_labelled_cut_quote_with_invisibles_visible(tmp_path: Path) -> None:
    with daemon(tmp_path) as server, chromium() as browser:
        thread, got, _pid = _waiting(server, {**REQUEST, "action": TRAP,
                                              "page": "https://shop.example/\u200bpay\nSafe: verified"})
        page = browser.new_page(viewport={"width": 1280, "height": 700})
        browser_login(page, server.login_url)
        page.goto(server.url + "/approvals")
        row = page.locator("#pending tr").first
        quotes = row.locator("q.quoted code")
        assert quotes.count() == 2
        said = quotes.nth(0).inner_text()
        assert said.startswith("Safe: routine check") and "\\u{202e}" in said and "\\u{a}" in said
        assert "\\u{200b}" in said and "\u202e" not in said and "\n" not in said and said.count("A") < 300
        assert row.locator("b", has_text="allow").count() == 0  # the agent's markup stays text
        assert "the agent or skill says:" in row.inner_text() and "more characters" in row.inner_text()
        rest = row.locator("details.rest")  # folded, never cut: one click shows the rest, still quoted
        rest.locator("summary").click()
        whole = said + rest.locator("q.quoted-rest code").inner_text()
        assert whole == TRAP.replace("\u202e", "\\u{202e}").replace("\n", "\\u{a}").replace("\u200b", "\\u{200b}"), whole
        url = quotes.nth(1).inner_text()
        assert url == "https://shop.example/\\u{200b}pay\\u{a}Safe: verified"
        # Outside the quotes, none of the agent's words: nothing reads as teachd's own.
        outside = row.evaluate("(tr) => { const c = tr.cloneNode(true); c.querySelectorAll('q').forEach((q) => "
                               "q.remove()); return c.innerText; }")
        assert "Safe" not in outside and "verified" not in outside
        shot(page, "approvals-quoted")  # TEACHD_SCREENSHOTS=folder: look at it
        row.get_by_role("button", name="Deny").click()
        thread.join(10)
        assert got == ["deny"]
