"""A skill's view (the API's and its page) lists its newest versions, not
every one: a skill gains a version at each feedback click, and a view that
listed them all grew with every run it was ever used in (the soak's GET of a
skill read and sent thousands). The ✓/✗ totals still count every version."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from teachd.config import Settings
from teachd.server.api.skills import VERSIONS_SHOWN
from teachd.store import SkillContent, open_store

CLICKS = VERSIONS_SHOWN + 5


def test_a_skills_view_lists_its_newest_versions_and_counts_the_runs_of_all(home: Path) -> None:
    from teachd.server.app import create_app

    settings = Settings(home=home, owner="alice")
    open_store(settings).create("expenses", SkillContent(name="Expenses", description="File them. Use when.",
                                                         instructions="# Expenses\n"))
    app = create_app(settings, "127.0.0.1", 8765)
    auth = {"Authorization": f"Bearer {(home / 'token').read_text().strip()}"}
    with TestClient(app, base_url="http://127.0.0.1:8765", headers=auth) as client:
        for n in range(CLICKS):  # the first 5 failed, the rest worked: one version each
            r = client.post(f"/api/runs/click-{n:03d}/feedback",
                            json={"slug": "expenses", "outcome": "failure" if n < 5 else "success"})
            assert r.status_code == 200 and r.json()["recorded"], r.text
        view = client.get("/api/skills/expenses").json()
        every = client.get("/api/skills/expenses?versions=all").json()
        page = client.get("/skills/expenses").text
        whole_page = client.get("/skills/expenses?versions=all").text

    assert view["versions_total"] == CLICKS + 1 == view["version"]
    assert [v["version"] for v in view["versions"]] == list(range(CLICKS + 2 - VERSIONS_SHOWN, CLICKS + 2))
    assert [v["version"] for v in every["versions"]] == list(range(1, CLICKS + 2))
    assert view["versions"] == every["versions"][-VERSIONS_SHOWN:]  # the same rows, notes and counts
    assert view["outcomes"] == every["outcomes"] == {"success": CLICKS - 5, "failure": 5}
    assert sum(v["failure"] for v in view["versions"]) == 0  # the failures are on versions not listed
    assert f"Show all {CLICKS + 1}" in page and "Show all" not in whole_page
    assert ">v1<" not in page and ">v1<" in whole_page
    assert f"{CLICKS - 5} of {CLICKS} worked" in page  # the page's rate counts all of them
