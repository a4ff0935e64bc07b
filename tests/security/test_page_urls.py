"""Row 7, the page half: the skill page builds its fetch URLs from stored
file names. Each path segment is encoded, so a name holding '?', '#', ' ',
'%' or a non-ASCII letter reaches the API as itself — Save changes that
file, Remove removes that file, and never a neighbour or another skill's.
'.' and '..' (which every URL parser folds, encoded or not) are never sent."""

from __future__ import annotations

from pathlib import Path

from tests.security.web_surface import SKILL, VICTIM, chromium, daemon
from tests.test_server import browser_login

FILES = {
    "references/a?b.md": "query\n",  # unencoded, '?' cut the path at references/a
    "references/a": "the neighbour a\n",
    "references/x#y.md": "fragment\n",  # unencoded, '#' cut it at references/x
    "references/x": "the neighbour x\n",
    "references/a b;c=d&e.md": "spaces and separators\n",
    "references/été.md": "accents\n",
}


def test_save_and_remove_on_the_skill_page_touch_exactly_the_named_file(tmp_path: Path) -> None:
    with daemon(tmp_path, files=FILES) as server, chromium() as browser, server.api() as api:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        browser_login(page, server.login_url)
        page.goto(f"{server.url}/skills/{SKILL}")
        page.locator("details#files summary").click()  # the raw editors start collapsed (and stay open)
        for path in ("references/a?b.md", "references/a b;c=d&e.md", "references/été.md"):
            page.get_by_label(f"File {path}").fill(f"saved {path}\n")
            with page.expect_navigation():  # a saved file reloads the page
                page.get_by_role("button", name=f"Save {path}").click()
        page.once("dialog", lambda d: d.accept())
        card = page.locator(".card").filter(has=page.get_by_label("File references/x#y.md"))
        with page.expect_navigation():
            card.get_by_role("button", name="Remove").click()
        files = api.get(f"/api/skills/{SKILL}").json()["files"]
        assert files["references/a?b.md"] == "saved references/a?b.md\n"
        assert files["references/a b;c=d&e.md"] == "saved references/a b;c=d&e.md\n"
        assert files["references/été.md"] == "saved references/été.md\n"
        assert files["references/a"] == "the neighbour a\n"  # not the file a cut URL named
        assert "references/x#y.md" not in files and files["references/x"] == "the neighbour x\n"
        assert api.get(f"/api/skills/{VICTIM}").json()["files"] == {"references/keep.md": "victim's file\n"}


def test_a_typed_path_that_climbs_or_is_encoded_never_reaches_another_skill(tmp_path: Path) -> None:
    with daemon(tmp_path) as server, chromium() as browser, server.api() as api:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        browser_login(page, server.login_url)
        page.goto(f"{server.url}/skills/{SKILL}")
        before = api.get(f"/api/skills/{VICTIM}").json()
        page.locator("details#files summary").click()
        for path in ("../victim-skill/references/keep.md", f"references/../../{VICTIM}/references/keep.md",
                     f"references/%2e%2e/%2e%2e/{VICTIM}/references/keep.md",
                     f"references/%2E%2e/.%2e/{VICTIM}/SKILL.md", f"references/%2f..%2f..%2f{VICTIM}/x.md",
                     f"references/..%5c..%5c{VICTIM}/x.md", f"./../{VICTIM}/x.md"):
            page.get_by_label("New file path").fill(path)
            page.get_by_label("New file text").fill("owned")
            page.get_by_role("button", name="Add file").click()
            page.locator(".flash.err").wait_for()  # refused, with the reason, before or at the server
            page.evaluate("() => document.querySelectorAll('.flash.err').forEach((f) => { f.className = 'flash'; })")
        after = api.get(f"/api/skills/{VICTIM}").json()
        assert after["version"] == before["version"] and after["files"] == before["files"]
        assert "owned" not in str(api.get(f"/api/skills/{SKILL}").json()["files"])
        # What the page's own encoder makes of such names (the URL the browser then sends).
        assert page.evaluate("() => segs('references/%2e%2e/x?y#z')") == "references/%252e%252e/x%3Fy%23z"
        for bad in ("..", ".", "a/../b", "a//b"):
            assert "not a name" in page.evaluate(f"() => {{ try {{ segs({bad!r}); }} catch (e) {{ return e.message; }} }}")
