"""Every response of the daemon — page, login page, shell, API JSON, plain
errors from the guard (401, 403, 404, 405, 411, 413, 421), the proof, /mcp's
401 — says nosniff, a same-origin referrer policy, no framing, and a CSP
whose only script source is that response's nonce: no 'unsafe-inline', so
a script that got into a page without the nonce does not run (measured in
Chromium)."""

from __future__ import annotations

import http.client
import re
from pathlib import Path

import httpx

from tests.security.web_surface import SKILL, chromium, daemon
from tests.test_server import browser_login, web_login


def _check(r: httpx.Response, what: str) -> str:
    h = r.headers
    assert h.get("x-content-type-options") == "nosniff", what
    assert h.get("referrer-policy") in ("no-referrer", "same-origin"), what
    assert h.get("x-frame-options") == "DENY", what
    policy = h.get("content-security-policy", "")
    script = re.search(r"script-src ([^;]*)", policy)
    assert script is not None and "unsafe-inline" not in script.group(1) and "*" not in script.group(1), what
    assert "frame-ancestors 'none'" in policy, what
    nonce = re.fullmatch(r"'nonce-([A-Za-z0-9_-]{16,})'", script.group(1).strip())
    assert nonce is not None, (what, policy)
    for tag in re.findall(r"<script[^>]*>", r.text):  # every script of a page carries this response's nonce
        assert f"nonce='{nonce.group(1)}'" in tag or f'nonce="{nonce.group(1)}"' in tag, (what, tag)
    return nonce.group(1)


def _announced(base: str, token: str, length: int) -> httpx.Response:
    """A PUT that announces a body too large and sends none (the guard answers first)."""
    host = base.removeprefix("http://")
    conn = http.client.HTTPConnection(host, timeout=10)
    conn.putrequest("PUT", f"/api/skills/{SKILL}/enabled")
    conn.putheader("Authorization", f"Bearer {token}")
    conn.putheader("Content-Length", str(length))
    conn.endheaders()
    r = conn.getresponse()
    out = httpx.Response(r.status, headers=r.getheaders(), content=r.read())
    conn.close()
    return out


def test_every_kind_of_response_carries_the_headers(tmp_path: Path) -> None:
    with daemon(tmp_path) as server, server.api() as api, httpx.Client(base_url=server.url) as anon:
        web = web_login(server.url, f"{server.url}/login?token={server.token}")
        key = web.headers.pop("X-CSRF-Token")
        cases = {
            "page": web.get(f"/skills/{SKILL}", headers={"X-CSRF-Token": key}),
            "shell": web.get("/skills"),
            "login page": anon.get(server.login_url.removeprefix(server.url)),
            "logged out": anon.get("/logged-out"),
            "api json": api.get("/api/skills"),
            "api 404": api.get("/api/skills/nope"),
            "api 405": api.delete("/api/skills"),
            "401": anon.get("/api/skills"),
            "303": anon.get("/skills"),
            "403 csrf": web.put(f"/api/skills/{SKILL}/enabled", json={"on": False}),
            "411": httpx.put(f"{server.url}/api/skills/{SKILL}/enabled", content=iter([b"{}"]),
                             headers={"Authorization": f"Bearer {server.token}"}),  # its own connection
            "413": _announced(server.url, server.token, 10**9),
            "421": api.get("/api/skills", headers={"Host": "evil.example"}),
            "mcp 401": anon.post("/mcp", json={}),
            "proof": anon.get("/teachd-proof", params={"challenge": "a" * 40}),
            "openapi": api.get("/openapi.json"),
            "export": api.get(f"/api/skills/{SKILL}/export?format=md"),
        }
        for what, r in cases.items():
            _check(r, what)
        assert [cases[w].status_code for w in ("401", "303", "403 csrf", "411", "413", "421")] == \
            [401, 303, 403, 411, 413, 421]
        assert cases["openapi"].status_code == 200 and cases["page"].status_code == 200
        nonces = {_check(web.get(f"/skills/{SKILL}", headers={"X-CSRF-Token": key}), "again") for _ in range(3)}
        assert len(nonces) == 3  # one per response
        web.close()


def test_a_script_without_the_nonce_does_not_run_on_a_page(tmp_path: Path) -> None:
    with daemon(tmp_path) as server, chromium() as browser:
        page = browser.new_page()
        browser_login(page, server.login_url)
        page.goto(f"{server.url}/skills/{SKILL}")
        blocked: list[str] = []
        page.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)
        page.evaluate("""() => {
          const s = document.createElement('script'); s.textContent = 'window.pwned = 1'; document.body.append(s);
          const d = document.createElement('div'); d.innerHTML = '<img src=x onerror="window.pwned2 = 1">';
          document.body.append(d);
          document.body.insertAdjacentHTML('beforeend', '<a id=js href="javascript:window.pwned3=1">x</a>');
        }""")
        page.click("#js")
        page.wait_for_timeout(300)
        assert page.evaluate("() => [window.pwned, window.pwned2, window.pwned3]") == [None, None, None]
        assert blocked  # Chromium says the policy refused them
        assert page.evaluate("() => typeof api") == "function"  # while the page's own nonce'd script runs
