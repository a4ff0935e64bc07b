"""Row 9 and the sessions: a login link another site makes alice's browser
open (or a form it posts) never switches her to bob; only a POST from the
daemon's own login page logs in; sessions end when idle, at their absolute
lifetime and at Log out — and an ended one opens nothing."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from teachd.config import Settings
from teachd.store import open_store
from teachd.store.users import UserStore
from tests.security.web_surface import SKILL, chromium, cookie_only, daemon, me, other_server
from tests.test_server import Server, browser_login, web_login

CSRF_PAGES = {
    # a top-level navigation to the GET link (the old attack)
    "/navigate": "<script>location = %(daemon)r + '/login?token=' + %(bob)r;</script>",
    # a form that posts bob's token, submitted by script
    "/form": "<form method=post action=%(daemon)s/login><input name=token value=%(bob)s></form>"
             "<script>document.forms[0].submit();</script>",
    # the same form, as text/plain with a crafted name=value
    "/plain": "<form method=post enctype=text/plain action=%(daemon)s/login><input name=token value=%(bob)s></form>"
              "<script>document.forms[0].submit();</script>",
    # a no-cors fetch POST: the response is opaque, but the Set-Cookie would still land
    "/fetch": "<script>fetch(%(daemon)r + '/login', {method: 'POST', mode: 'no-cors', credentials: 'include',"
              " headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: 'token=' + %(bob)r})"
              ".finally(() => fetch('/report', {method: 'POST', body: '1'}));</script>",
}


def _bob(server: Server) -> str:
    return UserStore(open_store(Settings(home=server.home, owner="alice")).db).add("bob")


def test_a_cross_site_login_with_bobs_token_leaves_alice_logged_in_as_alice(tmp_path: Path) -> None:
    with daemon(tmp_path) as server:
        bob = _bob(server)
        with chromium() as browser:
            page = browser.new_page()
            browser_login(page, server.login_url)
            assert me(page) == "alice"
            for host in ("127.0.0.1", "localhost"):  # another port (same site), and another site
                with other_server(host) as other:
                    for path, html in CSRF_PAGES.items():
                        other.pages[path] = html % {"daemon": server.url, "bob": bob}
                        page.goto(f"http://{host}:{other.port}{path}")
                        if path == "/fetch":  # sent (and its answer unreadable): the page reports it
                            for _ in range(50):
                                if other.reports:
                                    break
                                page.wait_for_timeout(50)
                            assert other.reports
                            other.reports.clear()
                        else:  # the browser went to the daemon: the login page, or the POST's refusal
                            page.wait_for_url(f"{server.url}/login**")
                        if path == "/navigate":  # the link opened: it shows a button, and says who is who
                            page.get_by_role("button", name="Log in").wait_for()
                            if host == "127.0.0.1":  # same site: the Strict cookie came along
                                assert "logged in as alice" in page.inner_text("body")
                        page.goto(server.url + "/skills")
                        assert me(page) == "alice", (host, path)
                        assert page.locator("header .who").inner_text() == "alice"
            # Clicking the button herself is her choice: then she is bob.
            browser_login(page, f"{server.url}/login?token={bob}")
            assert me(page) == "bob"


def test_only_a_post_from_the_daemons_own_origin_logs_in(tmp_path: Path) -> None:
    with daemon(tmp_path) as server, httpx.Client(base_url=server.url, timeout=30) as web:
        code = server.login_url.split("token=", 1)[1]
        assert "set-cookie" not in web.get(f"/login?token={code}").headers  # the GET logs nobody in
        port = server.url.rsplit(":", 1)[1]
        for origin in (None, "null", f"http://127.0.0.1:{int(port) + 1}", f"http://localhost:{port}",
                       "http://evil.example", server.url + ".evil.example", server.url.replace("http:", "https:")):
            headers = {} if origin is None else {"Origin": origin}
            r = web.post("/login", data={"token": code}, headers=headers)
            assert r.status_code == 403 and "set-cookie" not in r.headers, origin
        r = web.post("/login", data={"token": code}, headers={"Origin": server.url, "Sec-Fetch-Site": "same-site"})
        assert r.status_code == 403 and "set-cookie" not in r.headers
        # The code was not spent by the refused tries: the owner's own POST works once.
        assert web.post("/login", data={"token": code}, headers={"Origin": server.url}).status_code == 200
        r = web.post("/login", data={"token": code}, headers={"Origin": server.url})
        assert r.status_code == 303 and r.headers["location"] == "/logged-out"


def test_sessions_end_when_idle_and_at_their_lifetime(tmp_path: Path) -> None:
    with daemon(tmp_path, "--session-idle", "1.5", "--session-lifetime", "4") as server:
        busy = web_login(server.url, f"{server.url}/login?token={server.token}")
        idle = web_login(server.url, f"{server.url}/login?token={server.token}")
        start = time.monotonic()
        while time.monotonic() - start < 3.2:  # used every half second: alive past the idle limit
            assert busy.get("/api/skills").status_code == 200
            time.sleep(0.5)
        assert idle.get("/api/skills").status_code == 401  # unused for > 1.5 s
        assert idle.get("/skills").status_code == 303  # a page: to the logged-out page
        while time.monotonic() - start < 4.3:
            time.sleep(0.2)
        r = busy.get(f"/api/skills/{SKILL}")
        assert r.status_code == 401 and SKILL not in r.text  # 4 s after login, used or not
        for c in (busy, idle):
            c.close()


def test_logout_ends_the_session_and_a_replayed_logout_cannot(tmp_path: Path) -> None:
    with daemon(tmp_path) as server:
        web = web_login(server.url, f"{server.url}/login?token={server.token}")
        cookie = "; ".join(f"{k}={v}" for k, v in web.cookies.items())
        with cookie_only(server, cookie) as thief:  # the cookie without the key: no logout, no CSRF
            assert thief.post("/logout").status_code == 403
        assert web.get("/api/skills").status_code == 200
        assert web.get("/logout").status_code == 405  # a link or <img> cannot log out
        assert web.get("/api/skills").status_code == 200
        r = web.post("/logout")
        assert r.status_code == 200 and "max-age=0" in r.headers["set-cookie"].lower()
        with cookie_only(server, cookie, **{"X-CSRF-Token": web.headers["X-CSRF-Token"]}) as kept:
            assert kept.get("/api/skills").status_code == 401  # the kept cookie and key: dead
            assert kept.get(f"/skills/{SKILL}").status_code == 303
        web.close()


def test_the_log_out_button_in_the_header_ends_the_browser_session(tmp_path: Path) -> None:
    with daemon(tmp_path) as server, chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 700})
        browser_login(page, server.login_url)
        cookie = page.context.cookies()[0]
        page.get_by_role("button", name="Log out").click()
        page.wait_for_url("**/logged-out")
        assert page.evaluate("() => localStorage.getItem('teachd-key')") is None
        page.goto(server.url + "/skills")
        assert page.url.endswith("/logged-out") and SKILL not in page.content()
        with cookie_only(server, f"{cookie['name']}={cookie['value']}") as old:
            assert old.get("/api/skills").status_code == 401
