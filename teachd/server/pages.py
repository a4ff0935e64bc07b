"""The web UI: server-rendered pages, a little plain JavaScript that calls
``/api/`` (with the session's page key, from this origin's localStorage),
no build step. Every value shown is escaped, every path segment put in a
URL is encoded (``q`` here, ``seg``/``segs`` in the pages' script), every
script carries the response's CSP nonce; no page ever shows a secret (the
store holds none). A page reached by a plain navigation comes through the
guard's shell (see ``teachd.server.security``): the browser's cookie alone
opens nothing, because every local server gets that cookie too."""

from __future__ import annotations

import hmac
import html
import json
import urllib.parse
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from teachd.errors import NotFound
from teachd.runner.quoting import invisible
from teachd.server.api import daemon, schedule_views, skill_view
from teachd.skills.approval import GATED_TOOLS
from teachd.store.models import Skill
from teachd.store.schedules import ScheduleStore

e = html.escape


def q(segment: str) -> str:
    """One path segment for a URL built here: encoded, so a name with '/',
    '%', '?' or '#' stays one segment and names only itself."""
    return urllib.parse.quote(str(segment), safe="")

CSS = """
*{box-sizing:border-box} body{margin:0;font:15px/1.45 system-ui,sans-serif;color:#1d2330;background:#f5f6f8}
header{background:#1f2430;color:#fff;padding:10px 24px;display:flex;gap:22px;align-items:center}
header b{font-size:17px;margin-right:12px} header a{color:#cfd8ea;text-decoration:none}
header a.on{color:#fff;border-bottom:2px solid #ffd166}
header .who{margin-left:auto;color:#cfd8ea} header button.quiet{background:transparent;color:#cfd8ea;border-color:#56607a}
q.quoted{quotes:none;display:inline-block;max-width:100%} q.quoted code{background:#f1f2f6;border:1px solid #d9dde6;
  border-radius:4px;padding:1px 5px;white-space:pre-wrap;word-break:break-all;font-size:13px}
main{max-width:1100px;margin:22px auto;padding:0 24px}
h1{font-size:22px;margin:0 0 14px} h2{font-size:17px;margin:22px 0 8px}
table{border-collapse:collapse;width:100%;background:#fff;border-radius:8px;overflow:hidden}
th,td{text-align:left;padding:8px 10px;border-bottom:1px solid #e6e8ee;vertical-align:top}
th{background:#eef0f5;font-weight:600} .muted{color:#667} .card{background:#fff;border-radius:8px;padding:14px 16px;margin:10px 0}
button,.btn{font:inherit;border:1px solid #b8bfcc;background:#fff;border-radius:6px;padding:4px 10px;cursor:pointer;
  color:#1d2330;text-decoration:none;display:inline-block}
button.primary{background:#2d5bd7;border-color:#2d5bd7;color:#fff} button.danger{border-color:#c0392b;color:#c0392b}
input[type=text],input[type=url],input[type=search],textarea{font:inherit;width:100%;padding:6px 8px;border:1px solid #b8bfcc;border-radius:6px}
textarea{font-family:ui-monospace,monospace;font-size:13px;min-height:140px}
pre{white-space:pre-wrap;background:#fff;border-radius:8px;padding:12px;font-size:13px;max-height:420px;overflow:auto}
.chip{display:inline-flex;gap:6px;align-items:center;border:1px solid #c8cfdc;border-radius:16px;padding:2px 4px 2px 10px;
  margin:2px 6px 2px 0;background:#fff} .chip .done{font-weight:600;padding-right:8px}
.ok{color:#1e7e34} .bad{color:#c0392b} .warn{color:#9a6700} .flash{margin:10px 0;padding:8px 12px;border-radius:6px;display:none}
.flash.err{display:block;background:#fde8e6;color:#8a1f11} .flash.info{display:block;background:#e7f0ff;color:#1b3f91}
.row{display:flex;gap:10px;align-items:center;flex-wrap:wrap} label.check{display:inline-flex;gap:4px;margin-right:10px}
.masked{background:#ffd166;border-radius:4px;padding:0 5px;font-size:12px}
"""

JS = """
const csrf = localStorage.getItem('teachd-key') || '';  // this origin's page key: see teachd.server.security
// One path segment of a URL, encoded: a name with '/', '%2e', '?' or '#' stays one segment;
// '.' and '..' cannot be sent as a segment at all (every URL parser folds them).
function seg(s) {
  s = String(s);
  if (s === '.' || s === '..' || s === '') throw new Error('not a name that can go in a URL: ' + JSON.stringify(s));
  return encodeURIComponent(s);
}
const segs = (path) => String(path).split('/').map(seg).join('/');
async function api(method, url, body) {
  const r = await fetch(url, {method, headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf},
                              body: body === undefined ? undefined : JSON.stringify(body)});
  const text = await r.text();
  let data; try { data = JSON.parse(text); } catch (e) { data = {error: text}; }
  if (!r.ok) throw new Error(data.error || text || r.status);
  return data;
}
function flash(msg, kind) {
  const f = document.getElementById('flash'); f.textContent = msg; f.className = 'flash ' + (kind || 'info');
}
async function act(fn, done) {
  try { const r = await fn(); if (done) done(r); } catch (err) { flash(err.message, 'err'); }
}
// A download (Export) is a fetch with the key, saved from memory: a plain link would carry the cookie only.
async function download(url, name) {
  const r = await fetch(url, {headers: {'X-CSRF-Token': csrf}});
  if (!r.ok) throw new Error((await r.text()) || r.status);
  const a = document.createElement('a');
  a.href = URL.createObjectURL(await r.blob()); a.download = name; document.body.append(a); a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}
for (const a of document.querySelectorAll('a[data-download]')) a.addEventListener('click', (ev) => {
  ev.preventDefault(); act(() => download(a.href, a.getAttribute('download')));
});
const logout = document.getElementById('logout');
if (logout) logout.addEventListener('click', () => act(() => api('POST', '/logout'), () => {
  localStorage.removeItem('teachd-key'); location.replace('/logged-out'); }));
"""

NAV = (("/skills", "Skills"), ("/teach", "Teach"), ("/runs", "Runs"), ("/schedules", "Schedules"),
       ("/approvals", "Approvals"))


def nonce(request: Request) -> str:
    """This response's script nonce (the guard puts it in the CSP)."""
    return str(request.scope.get("state", {}).get("nonce", ""))


def layout(request: Request, title: str, active: str, body: str, script: str = "") -> HTMLResponse:
    state = request.scope.get("state", {})
    nav = "".join(f"<a href='{href}' class='{'on' if href == active else ''}'>{e(name)}</a>" for href, name in NAV)
    who = (f"<span class='who'>{e(state.get('user') or '')}</span><button id='logout' class='quiet'>Log out</button>"
           if state.get("sid") else "")  # a browser session (a bearer client has nothing to log out of)
    page = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{e(title)} — teachd</title>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<style>{CSS}</style></head><body><header><b>teachd</b>{nav}{who}</header><main>"
            f"<div id='flash' class='flash' role='status'></div>{body}</main>"
            f"<script nonce='{e(nonce(request))}'>{JS}{script}</script></body></html>")
    return HTMLResponse(page, headers={"Cache-Control": "no-store"})  # CSP & co: the guard, on every response


def js(value: Any) -> str:
    """A value for inline script, safe inside <script>."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


LOGIN_CSS = ("body{font:16px/1.5 system-ui,sans-serif;margin:40px;color:#1d2330} button{font:inherit;padding:6px 16px;"
             "border-radius:6px;border:1px solid #2d5bd7;background:#2d5bd7;color:#fff;cursor:pointer}")


def _small_page(request: Request, body: str, status: int = 200, script: str = "") -> HTMLResponse:
    """The pages around logging in: no data, no navigation."""
    tag = f"<script nonce='{e(nonce(request))}'>{script}</script>" if script else ""
    return HTMLResponse(f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>teachd</title>"
                        f"<style>{LOGIN_CSS}</style></head><body><h1>teachd</h1>{body}{tag}</body></html>",
                        status_code=status, headers={"Cache-Control": "no-store"})


def _login_user(request: Request, code: str) -> tuple[str | None, bool]:
    """(who ``code`` logs in, whether it is the printed one-time code)."""
    d = daemon(request)
    if code and d.login_code and hmac.compare_digest(code.encode(), d.login_code.encode()):
        return d.sessions.owner, True
    return d.sessions.user_of(code), False


async def login(request: Request) -> Response:
    """``GET /login?token=…`` only shows a button: a link another site makes
    the browser open logs nobody in (login CSRF). The button POSTs the code
    from this very page, and only a POST from this origin logs in."""
    if request.method == "POST":
        return await _login_post(request)
    code = request.query_params.get("token", "")
    user, _one_time = _login_user(request, code)
    if user is None:
        return RedirectResponse("/logged-out", status_code=303)
    now = request.scope.get("state", {}).get("cookie_user")
    switch = ("" if now is None else
              f"<p>This browser is logged in as <b>{e(now)}</b> now; this link logs it in as "
              f"<b>{e(user)}</b> instead.</p>" if now != user else
              f"<p>This browser is logged in as <b>{e(now)}</b> already.</p>")
    return _small_page(request, f"{switch}<form method='post' action='/login'>"
                                f"<input type='hidden' name='token' value='{e(code)}'>"
                                f"<p>Log this browser in to teachd as <b>{e(user)}</b>?</p>"
                                f"<button type='submit'>Log in</button></form>")


async def _login_post(request: Request) -> Response:
    d = daemon(request)
    host = request.headers.get("host", "")  # the guard allowed it: it names this daemon
    origin, site = request.headers.get("origin"), request.headers.get("sec-fetch-site")
    if origin != f"http://{host}" or site not in (None, "same-origin"):
        return PlainTextResponse("log in from this daemon's own login page (the link teachd serve printed)",
                                 status_code=403)
    raw = await request.body()
    code = (urllib.parse.parse_qs(raw.decode("utf-8", "replace")).get("token") or [""])[0]
    user, one_time = _login_user(request, code)
    if user is None:
        return RedirectResponse("/logged-out", status_code=303)
    if one_time:
        d.login_code = ""  # one-time: the printed link logs in once
    old = request.cookies.get(d.sessions.cookie)
    if old:
        d.sessions.close(old)  # the browser's previous session ends here
    sid = d.sessions.open(None if one_time else code)
    key = d.sessions.csrf(sid)
    response = _small_page(
        request, f"<meta name='teachd-key' content='{e(key)}'><p>Logged in as <b>{e(user)}</b>.</p>"
                 "<p><a href='/skills'>Go to your skills</a></p>",
        script="localStorage.setItem('teachd-key', document.querySelector('meta[name=teachd-key]').content);"
               "location.replace('/skills');")
    response.set_cookie(d.sessions.cookie, sid, httponly=True, samesite="strict", path="/")
    return response


async def logout(request: Request) -> Response:
    """``POST /logout`` (with the page key): the session ends, its cookie goes."""
    d = daemon(request)
    d.sessions.close(request.scope.get("state", {}).get("sid"))
    response = JSONResponse({"logged_out": True})
    response.delete_cookie(d.sessions.cookie, path="/", httponly=True, samesite="strict")
    return response


async def logged_out(request: Request) -> HTMLResponse:
    return _small_page(request, "<p>You are not logged in. Open the login link that <code>teachd serve</code> "
                                "printed (it works once), or <code>/login?token=…</code> with the token in "
                                "<code>TEACHD_HOME/token</code> (or your own, from <code>teachd users add</code>)."
                                "</p>", status=401, script="localStorage.removeItem('teachd-key');")


async def favicon(request: Request) -> Response:
    return Response(status_code=204)


async def home(request: Request) -> Response:
    return RedirectResponse("/skills", status_code=303)


async def skills_page(request: Request) -> HTMLResponse:
    d = daemon(request)
    rows = []
    health = ScheduleStore(d.store).health()
    for s in d.store.all(shared=True):
        taught = s.current.metadata.get("metadata", {}).get("teachd-kind") == "taught"
        h = health.get(s.slug)
        state = ("" if h is None else "<span class='ok'>healthy</span>" if h["ok"] else
                 f"<span class='bad'>needs attention</span><div class='muted'>step {h['step']}</div>")
        rows.append(
            f"<tr data-slug='{e(s.slug)}' data-text='{e((s.slug + ' ' + s.current.name).lower())}'>"
            f"<td><a href='/skills/{e(q(s.slug))}'>{e(s.slug)}</a><div class='muted'>{e(s.current.name)}</div></td>"
            f"<td>v{s.current_version}</td><td>{'taught' if taught else 'imported'}{_shared_by(s)}</td>"
            f"<td>{state}</td><td>{_enabled_switch(s)}</td></tr>")
    table = ("<table><thead><tr><th>Skill</th><th>Version</th><th>Kind</th><th>Health</th><th>In runs</th></tr></thead>"
             f"<tbody>{''.join(rows)}</tbody></table>") if rows else "<p class='muted'>No skills yet: teach one.</p>"
    body = (f"<h1>Skills</h1><div class='row' style='margin-bottom:10px'>"
            f"<input type='search' id='search' aria-label='Search skills' placeholder='Search, or $slug'>"
            f"</div>{table}<h2>Import</h2><div class='card'><div class='row'>"
            f"<input type='file' id='import-file' aria-label='A SKILL.md or a JSON envelope' accept='.md,.json'>"
            f"<span class='muted'>or a folder:</span><input type='file' id='import-folder' webkitdirectory "
            f"aria-label='A skill folder'><button id='import' class='primary'>Import</button></div>"
            f"<p class='muted'>A SKILL.md, a JSON envelope (from Export) or a skill folder (its SKILL.md and "
            f"text files).</p><div class='row'><input type='url' id='import-url' aria-label='Import from a URL' "
            f"placeholder='https://skills.sh/owner/repo/skill, a GitHub link, owner/repo/skill' style='flex:1'>"
            f"<button id='import-url-go' class='primary'>Import from URL</button></div><pre id='import-plan' "
            f"class='muted'></pre></div>")
    script = """
document.getElementById('search').addEventListener('input', (ev) => {
  const q = ev.target.value.trim().toLowerCase();
  for (const tr of document.querySelectorAll('tbody tr')) {
    const show = q.startsWith('$') ? tr.dataset.slug === q.slice(1) : tr.dataset.text.includes(q);
    tr.style.display = show ? '' : 'none';
  }
});
for (const box of document.querySelectorAll('[data-enable]')) box.addEventListener('change', () =>
  act(() => api('PUT', `/api/skills/${seg(box.dataset.enable)}/enabled`, {on: box.checked}),
      (s) => flash(`${s.slug} ${s.enabled ? 'enabled' : 'disabled'}`)));
document.getElementById('import-url-go').addEventListener('click', () => act(async () => {
  const url = document.getElementById('import-url').value.trim();
  try { return await api('POST', '/api/skills-from-url', {url}); }
  catch (err) {
    if (!String(err.message).includes('--update') || !confirm(err.message + '\\n\\nTake the remote version?')) throw err;
    return await api('POST', '/api/skills-from-url', {url, update: true});
  }
}, (r) => { document.getElementById('import-plan').textContent = r.warnings.join('\\n');
            flash(`${r.action} ${r.skill ? r.skill.slug : ''} from ${r.plan.resolved}`);
            if (r.action !== 'unchanged') setTimeout(() => location.reload(), 800); }));
document.getElementById('import').addEventListener('click', async () => {
  const folder = [...document.getElementById('import-folder').files];
  if (folder.length) {
    const top = folder[0].webkitRelativePath.split('/')[0], files = {};
    let skillMd = null;
    for (const f of folder) {
      const rel = f.webkitRelativePath.split('/').slice(1).join('/');
      if (rel === 'SKILL.md') skillMd = await f.text(); else files[rel] = await f.text();
    }
    if (skillMd === null) return flash('That folder has no SKILL.md', 'err');
    return act(() => api('POST', '/api/skills/import', {skill_md: skillMd, folder: top, files}),
               (s) => location.href = '/skills/' + seg(s.slug));
  }
  const f = document.getElementById('import-file').files[0];
  if (!f) return flash('Choose a file or a folder first', 'err');
  const text = await f.text();
  const body = f.name.endsWith('.json') ? {envelope: text} : {skill_md: text, folder: f.name.replace(/\\.md$/i, '')};
  act(() => api('POST', '/api/skills/import', body), (s) => location.href = '/skills/' + seg(s.slug));
});"""
    return layout(request, "Skills", "/skills", body, script)


def _shared_by(s: Skill) -> str:
    return "" if s.access == "own" else f"<div class='muted'>shared by {e(s.owner)} · {e(s.access)}</div>"


def _enabled_switch(s: Skill) -> str:
    """The owner's switch; a shared skill is on or off as its owner set it."""
    if s.access != "own":
        return "enabled" if s.enabled else "<span class='muted'>disabled by its owner</span>"
    return (f"<label class='check'><input type='checkbox' role='switch' aria-label='Enabled: {e(s.slug)}' "
            f"data-enable='{e(s.slug)}' {'checked' if s.enabled else ''}> enabled</label>")


def _sharing(view: dict[str, Any]) -> str:
    """Who the skill is shared with, and the form to share it (the owner's only)."""
    if view["access"] != "own":
        can = "use it (load and replay)" if view["access"] == "use" else "edit it (new versions, feedback)"
        return f"<h2>Shared with you</h2><p>{e(view['owner'])} shared this skill with you: you can {can}.</p>"
    rows = "".join(
        f"<tr><td>{e(g['with'])}</td><td>{e(g['can'])}</td><td class='muted'>{e(g['granted_at'])}</td>"
        f"<td><button class='danger' data-unshare='{e(g['with'])}' aria-label='Unshare {e(g['with'])}'>Unshare"
        f"</button></td></tr>" for g in view["shared_with"])
    table = (f"<table><thead><tr><th>With</th><th>Can</th><th>Since</th><th></th></tr></thead><tbody>{rows}"
             "</tbody></table>") if rows else "<p class='muted'>Private: only you see it.</p>"
    return (f"<h2>Sharing</h2>{table}<div class='card row'><input type='text' id='share-with' list='people' "
            "aria-label='Share with (a person, or @group)' placeholder='a person, or @group'>"
            "<datalist id='people'></datalist><select id='share-can' aria-label='They can'>"
            "<option value='use'>use</option><option value='edit'>edit</option></select>"
            "<button id='share' class='primary'>Share</button></div>")


def _health_card(h: dict[str, Any] | None) -> str:
    """The last health check: a warning before anyone runs a skill whose page changed."""
    if h is None:
        return ""
    lines = "".join(f"<li>step {st['n']}: {e(st['target'])} — <b>{e(st['status'])}</b>"
                    + (f" by {e(', '.join(st['via']))}" if st["via"] else "")
                    + (f" <span class='muted'>({e(st['detail'])})</span>" if st["detail"] else "") + "</li>"
                    for st in h["report"]["steps"])
    kind = "ok" if h["ok"] else "bad"
    title = "Healthy" if h["ok"] else "Needs attention"
    return (f"<div class='card' id='health'><b class='{kind}'>{title}</b> — {e(h['reason'])} "
            f"<span class='muted'>(checked {e(h['checked_at'])})</span><details><summary>Every step</summary>"
            f"<ul>{lines}</ul></details></div>")


async def skill_page(request: Request) -> HTMLResponse:
    d = daemon(request)
    view = skill_view(d, d.store.get(request.path_params["slug"]))
    slug = view["slug"]
    meta = view["metadata"].get("metadata", {}) if isinstance(view["metadata"].get("metadata"), dict) else {}
    approval = view["approval"]
    checks = "".join(
        f"<label class='check'><input type='checkbox' data-tool='{t}' {'checked' if t in approval['tools'] else ''}>"
        f" {t}</label>" for t in GATED_TOOLS)
    def version_row(v: dict[str, Any]) -> str:
        current = v["version"] == view["version"]
        restore = "" if current else f"<button data-restore='{v['version']}'>Restore v{v['version']}</button>"
        return (f"<tr><td>v{v['version']}{' (current)' if current else ''}</td><td>{e(v['created_at'])}</td>"
                f"<td>{e(v['note'] or '')}</td><td><span class='ok'>✓{v['success']}</span> "
                f"<span class='bad'>✗{v['failure']}</span></td><td>{restore}</td></tr>")

    versions = "".join(version_row(v) for v in reversed(view["versions"]))
    health = _health_card(view["health"])
    files = "".join(
        f"<div class='card'><div class='row'><b>{e(path)}</b><span class='muted'>{len(text)} characters</span></div>"
        f"<textarea data-file='{e(path)}' aria-label='File {e(path)}'>{e(text)}</textarea>"
        f"<div class='row'><button data-save-file='{e(path)}'>Save {e(path)}</button>"
        f"<button class='danger' data-remove-file='{e(path)}'>Remove</button></div></div>"
        for path, text in sorted(view["files"].items()))
    body = (
        f"<h1>{e(view['name'])} <span class='muted'>· {e(slug)} · v{view['version']} · "
        f"{'enabled' if view['enabled'] else 'disabled'}</span></h1>"
        f"<div class='row'><a class='btn' href='/api/skills/{e(q(slug))}/export?format=md' download='SKILL.md' data-download>"
        f"Export SKILL.md</a><a class='btn' href='/api/skills/{e(q(slug))}/export?format=json' download='{e(slug)}.json' data-download>"
        f"Export JSON</a></div>{health}"
        f"<h2>Scope</h2><p>{e(meta.get('teachd-scope') or 'not a taught skill: no scope recorded')}</p>"
        f"<h2>Approval</h2><div class='card'><label class='check'><input type='checkbox' id='always-ask' "
        f"{'checked' if approval['always_ask'] else ''}> Always ask</label><div>{checks}</div>"
        f"<p class='muted'>None checked means all six tools ask.</p>"
        f"<button id='save-approval' class='primary'>Save approval</button></div>"
        f"<h2>Description</h2><textarea id='description' aria-label='Description' style='min-height:70px'>"
        f"{e(view['description'])}</textarea>"
        f"<h2>Instructions</h2><textarea id='instructions' aria-label='Instructions' style='min-height:300px'>"
        f"{e(view['instructions'])}</textarea>"
        f"<div class='row'><button id='save-content' class='primary'>Save description and instructions</button></div>"
        f"<h2>Files</h2>{files or '<p class=muted>No bundled files.</p>'}"
        f"<div class='card'><div class='row'><input type='text' id='new-path' aria-label='New file path' "
        f"placeholder='references/notes.md'></div><textarea id='new-text' aria-label='New file text'></textarea>"
        f"<button id='add-file'>Add file</button></div>"
        f"<h2>Versions</h2><table><thead><tr><th>Version</th><th>Created</th><th>Note</th><th>Runs</th><th></th>"
        f"</tr></thead><tbody>{versions}</tbody></table>{_sharing(view)}"
        + ("<h2>Danger</h2><button class='danger' id='delete'>Delete this skill</button>"
           if view["access"] == "own" else ""))
    script = f"""
const SLUG = {js(slug)};
const reload = () => location.reload();
if ({js(view["access"])} === 'use')  // shared to use: read, export, run — no new versions
  document.querySelectorAll('main button, main textarea, main input').forEach((x) => x.disabled = true);
const on = (id, ev, fn) => {{ const el = document.getElementById(id); if (el) el.addEventListener(ev, fn); }};
if (document.getElementById('people')) api('GET', '/api/people').then((p) => {{
  document.getElementById('people').innerHTML = [...p.users.filter((u) => u !== p.me),
    ...p.groups.map((g) => '@' + g)].map((n) => `<option value="${{n}}">`).join('');
}}).catch(() => {{}});
on('share', 'click', () => act(() => api('POST', `/api/skills/${{seg(SLUG)}}/grants`,
  {{with: document.getElementById('share-with').value.trim(), can: document.getElementById('share-can').value}}),
  reload));
for (const b of document.querySelectorAll('[data-unshare]')) b.addEventListener('click', () => act(() =>
  api('DELETE', `/api/skills/${{seg(SLUG)}}/grants/${{seg(b.dataset.unshare)}}`), reload));
document.getElementById('save-approval').addEventListener('click', () => act(() => api('PUT',
  `/api/skills/${{seg(SLUG)}}/approval`, {{always_ask: document.getElementById('always-ask').checked,
  tools: [...document.querySelectorAll('[data-tool]')].filter(b => b.checked).map(b => b.dataset.tool)}}), reload));
document.getElementById('save-content').addEventListener('click', () => act(() => api('PUT',
  `/api/skills/${{seg(SLUG)}}/content`, {{description: document.getElementById('description').value,
  instructions: document.getElementById('instructions').value}}), reload));
for (const b of document.querySelectorAll('[data-save-file]')) b.addEventListener('click', () => act(() => api('PUT',
  `/api/skills/${{seg(SLUG)}}/files/${{segs(b.dataset.saveFile)}}`,
  {{text: b.closest('.card').querySelector('textarea[data-file]').value}}), reload));
for (const b of document.querySelectorAll('[data-remove-file]')) b.addEventListener('click', () => act(() =>
  api('DELETE', `/api/skills/${{seg(SLUG)}}/files/${{segs(b.dataset.removeFile)}}`), reload));
document.getElementById('add-file').addEventListener('click', () => act(() => api('PUT',
  `/api/skills/${{seg(SLUG)}}/files/${{segs(document.getElementById('new-path').value)}}`,
  {{text: document.getElementById('new-text').value}}), reload));
for (const b of document.querySelectorAll('[data-restore]')) b.addEventListener('click', () => act(() =>
  api('POST', `/api/skills/${{seg(SLUG)}}/restore`, {{version: Number(b.dataset.restore)}}), reload));
on('delete', 'click', () => {{
  if (confirm('Delete ' + SLUG + ' and all its versions?'))
    act(() => api('DELETE', `/api/skills/${{seg(SLUG)}}`), () => location.href = '/skills');
}});"""
    return layout(request, view["name"], "/skills", body, script)


async def teach_page(request: Request) -> HTMLResponse:
    body = ("<h1>Teach</h1><div class='card'><div class='row'><input type='text' id='name' aria-label='Task name' "
            "placeholder='What the task is, e.g. Submit an expense report'></div><div class='row' style='margin-top:8px'>"
            "<input type='url' id='url' aria-label='Start URL' placeholder='https://… where the task starts'></div>"
            "<div class='row' style='margin-top:8px'><button id='start' class='primary'>Start</button>"
            "<button data-command='pause'>Pause</button><button data-command='resume'>Resume</button>"
            "<button data-command='mark'>Mark next field secret</button><button data-command='undo'>Undo last step</button>"
            "<button id='stop'>Stop and save</button><span id='state' class='muted'></span></div></div>"
            "<h2>Steps captured</h2><table><thead><tr><th>#</th><th>Action</th><th>Target</th></tr></thead>"
            "<tbody id='steps'></tbody></table><div id='result'></div>")
    script = """
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => '&#' + c.charCodeAt(0) + ';');
function show(st) {
  const fix = st.repair, state = document.getElementById('state');
  state.textContent = st.starting ? `Show me: replaying the steps before step ${fix.step} — answer them on the Approvals page`
    : st.recording ? (fix ? `Show me — ${fix.banner.split('**').join('')}` : `Recording “${st.name}” — Chromium is open`) : '';
  document.getElementById('stop').textContent = fix ? 'Done' : 'Stop and save';
  document.getElementById('steps').innerHTML = st.steps.map((s, i) => `<tr><td>${i + 1}</td><td>${esc(s.action)}</td>
    <td>${esc(s.target)} ${s.masked ? '<span class="masked">masked</span>' : ''}</td></tr>`).join('');
  const r = st.result, out = document.getElementById('result');
  if (r && r.ok) out.innerHTML = `<p class="ok">Saved <a href="/skills/${esc(seg(r.slug))}">${esc(r.slug)} v${r.version}</a>.</p>`;
  else if (r) out.innerHTML = `<p class="bad">${esc(r.error)} — the recording is kept in ${esc(r.recording_dir || '')}</p>`
    + (fix && /--extend-scope/.test(r.error || '') ? '<button id="allow" class="primary">Allow it there and save</button>' : '');
  const allow = document.getElementById('allow');
  if (allow) allow.addEventListener('click', () => act(() => api('POST', '/api/teach/apply'), show));
}
async function poll() { try { show(await api('GET', '/api/teach')); } catch (e) {} }
document.getElementById('start').addEventListener('click', () => act(() => api('POST', '/api/teach',
  {name: document.getElementById('name').value, url: document.getElementById('url').value}), show));
document.getElementById('stop').addEventListener('click', () => act(() => api('POST', '/api/teach/stop'), show));
for (const b of document.querySelectorAll('[data-command]')) b.addEventListener('click', () =>
  act(() => api('POST', '/api/teach/command', {kind: b.dataset.command}), () => setTimeout(poll, 300)));
poll(); setInterval(poll, 700);"""
    return layout(request, "Teach", "/teach", body, script)


def _chips(run: dict[str, Any], use_only: set[str]) -> str:
    out = []
    for slug, version in sorted(run["skills"].items()):
        given = run["feedback"].get(slug)
        label = f"{e(slug)} · v{version}"
        if given:
            mark = "✓ worked" if given == "success" else "✗ failed"
            out.append(f"<span class='chip'>{label}<span class='done {'ok' if given == 'success' else 'bad'}'>"
                       f"{mark}</span></span>")
        elif slug in use_only:  # shared to use: its owner keeps its history
            out.append(f"<span class='chip'>{label}<span class='muted'> shared to use</span></span>")
        else:
            out.append(f"<span class='chip' data-run='{e(run['run_id'])}' data-slug='{e(slug)}'>{label}"
                       f"<button data-outcome='success'>Worked</button><button data-outcome='failure'>Failed</button>"
                       "</span>")
    return "".join(out) or "<span class='muted'>no skills loaded</span>"


def _show_me(run: dict[str, Any], use_only: set[str]) -> str:
    """A run that halted at a step offers to repair its skill by showing that step."""
    halted = [st for st in run.get("steps") or [] if st.get("status") == "halted"]
    if run["status"] != "failure" or not halted or not run.get("slug") or run["slug"] in use_only:
        return ""
    return (f"<div><button data-repair='{e(run['run_id'])}' title='Replay up to step {halted[-1]['n']} and show "
            f"teachd that step as the page is now'>Show me step {halted[-1]['n']}</button></div>")


# unverified: every step ran, but nothing on the final page confirmed the effect
_STATUS_CLASS = {"success": "ok", "unverified": "warn", "failure": "bad", "aborted": "bad"}


async def runs_page(request: Request) -> HTMLResponse:
    d = daemon(request)
    runs = [{**r, "feedback": d.runs.feedback_given(r["run_id"])} for r in d.runs.recent()]
    usable = d.store.all(enabled_only=True, shared=True)
    use_only = {s.slug for s in usable if s.access == "use"}
    rows = "".join(
        f"<tr><td><code>{e(r['run_id'])}</code><div class='muted'>{e(r['started_at'])}</div></td>"
        f"<td class='{_STATUS_CLASS.get(r['status'], '')}'>"
        f"{e(r['status'])}</td><td>{e(r['message'] or '')}"
        f"{'<div class=muted>from ' + e(r['origin']) + '</div>' if r.get('origin') else ''}</td>"
        f"{_show_me(r, use_only)}<td>{_chips(r, use_only)}</td></tr>" for r in runs)
    taught = [s.slug for s in usable]
    options = "".join(f"<option>{e(s)}</option>" for s in taught)
    body = ("<h1>Runs</h1><div class='card row'><select id='slug' aria-label='Skill to run'>" + options +
            "</select><button id='run' class='primary'>Run</button><span class='muted'>Its approvals wait on "
            "the Approvals page.</span></div><table><thead><tr><th>Run</th><th>Status</th><th>Message</th>"
            f"<th>Skills (one click: did it work?)</th></tr></thead><tbody>{rows}</tbody></table>")
    script = """
for (const chip of document.querySelectorAll('.chip[data-run]')) {
  for (const b of chip.querySelectorAll('button')) b.addEventListener('click', () => {
    chip.querySelectorAll('button').forEach((x) => x.disabled = true);
    act(() => api('POST', `/api/runs/${seg(chip.dataset.run)}/feedback`, {slug: chip.dataset.slug, outcome: b.dataset.outcome}),
        (r) => { const got = r.feedback[chip.dataset.slug];
                 chip.innerHTML = chip.firstChild.textContent + `<span class="done ${got === 'success' ? 'ok' : 'bad'}">`
                   + (got === 'success' ? '✓ worked' : '✗ failed') + ` → v${r.version}</span>`; });
  });
}
for (const b of document.querySelectorAll('[data-repair]')) b.addEventListener('click', () =>
  act(() => api('POST', `/api/runs/${seg(b.dataset.repair)}/repair`), () => { location.href = '/teach'; }));
const run = document.getElementById('run');
if (run) run.addEventListener('click', () => act(() => api('POST', '/api/runs', {slug: document.getElementById('slug').value}),
  () => { flash('Started: answer its approvals on the Approvals page'); setTimeout(() => location.reload(), 1500); }));"""
    return layout(request, "Runs", "/runs", body, script)


QUOTED_MAX = 300  # characters of an agent's text shown; the rest is cut, and says so


def quoted(text: Any, limit: int = QUOTED_MAX) -> str:
    """Someone else's words (an agent's target, a URL) as quoted data: in a
    ``<q><code>`` box under a label, cut at ``limit``, with every control,
    format (bidi overrides, zero-width) and line-breaking character shown as
    ``\\u{…}`` — so an agent cannot write text that reads as teachd's own
    ("Safe: routine check"), break out of the box or hide a part of it."""
    raw = str(text if text is not None else "")
    shown = "".join(f"\\u{{{ord(c):x}}}" if invisible(c) else c for c in raw[:limit])
    cut = f" <span class='muted'>… ({len(raw) - limit} more characters)</span>" if len(raw) > limit else ""
    return f"<q class='quoted'><code>{e(shown)}</code></q>{cut}"


async def approvals_page(request: Request) -> HTMLResponse:
    d = daemon(request)
    pending = "".join(
        f"<tr><td>{e(p['run_id'])}<div class='muted'>step {e(str(p['step']))}</div></td><td><b>{e(p['tool'])}</b>"
        f"<div><span class='muted'>the agent or skill says:</span> {quoted(p['action'])}</div>"
        + (f"<div><span class='muted'>on the page:</span> {quoted(p['page'])}</div>" if p['page'] else "")
        + f"</td><td>{e(', '.join(p['skills']))}<div class='muted'>"
        f"{e(p['reason'])}</div></td><td><button class='primary' data-answer='{e(str(p['id']))}' data-allow='1'>Allow once"
        f"</button> <button class='danger' data-answer='{e(str(p['id']))}' data-allow='0'>Deny</button></td></tr>"
        for p in d.approvals.pending())
    asked = "".join(
        f"<tr><td>{e(a['run_id'])}</td><td><b>{e(a['name'])}</b></td><td>{e(', '.join(a['skills']))}</td>"
        f"<td><form class='row' data-secret='{e(a['id'])}'><input type='password' autocomplete='off' required "
        f"aria-label='Secret {e(a['name'])} for {e(a['run_id'])}'><button class='primary' type='submit'>Give it"
        f"</button></form></td></tr>" for a in d.secrets.pending())
    rules = "".join(f"<tr><td>{e(r['tool'])}</td><td>{e(r['created_at'])}</td><td><button data-revoke='{r['id']}'>"
                    "Revoke</button></td></tr>" for r in d.rules.all())
    body = ("<h1>Approvals</h1><h2>Waiting</h2><table><thead><tr><th>Run</th><th>Action</th><th>Required by</th>"
            f"<th></th></tr></thead><tbody id='pending'>{pending or '<tr><td colspan=4 class=muted>Nothing waits.</td></tr>'}"
            "</tbody></table>"
            + (f"<h2>Secrets asked</h2><table><thead><tr><th>Run</th><th>Secret</th><th>Skills</th><th></th></tr>"
               f"</thead><tbody>{asked}</tbody></table>" if asked else "")
            + "<p class='muted'>A request nobody answers in time (5 minutes; a schedule's own timeout) is denied. "
            "A saved rule never "
            "satisfies a skill that requires approval.</p><h2>Saved rules</h2><table><thead><tr><th>Always allow"
            f"</th><th>Since</th><th></th></tr></thead><tbody>{rules or '<tr><td colspan=3 class=muted>None.</td></tr>'}"
            "</tbody></table>")
    script = """
for (const b of document.querySelectorAll('[data-answer]')) b.addEventListener('click', () => act(() =>
  api('POST', `/api/approvals/${seg(b.dataset.answer)}`, {allow: b.dataset.allow === '1'}), () => location.reload()));
for (const b of document.querySelectorAll('[data-revoke]')) b.addEventListener('click', () => act(() =>
  api('DELETE', `/api/rules/${seg(b.dataset.revoke)}`), () => location.reload()));
for (const f of document.querySelectorAll('form[data-secret]')) f.addEventListener('submit', (ev) => {
  ev.preventDefault(); const input = f.querySelector('input');
  act(() => api('POST', `/api/secrets/${seg(f.dataset.secret)}`, {value: input.value}),
      () => { input.value = ''; location.reload(); }); });
// Look for new or answered requests every second; redraw only when they changed,
// and never under the person's fingers while a secret is being typed.
const shown = [...document.querySelectorAll('[data-answer][data-allow="1"], form[data-secret]')]
  .map((x) => x.dataset.answer || x.dataset.secret).sort().join();
setInterval(async () => {
  if (document.activeElement && document.activeElement.type === 'password') return;
  try {
    const [a, s] = await Promise.all([api('GET', '/api/approvals'), api('GET', '/api/secrets')]);
    const now = [...a.pending.map((p) => String(p.id)), ...s.pending.map((p) => p.id)].sort().join();
    if (now !== shown) location.reload();
  } catch (err) { /* the daemon is stopping: keep the page as it is */ }
}, 1000);"""
    return layout(request, "Approvals", "/approvals", body, script)


async def secret_page(request: Request) -> HTMLResponse:
    d = daemon(request)
    sid = request.path_params["sid"]
    try:
        a = d.secrets.get(sid)
    except NotFound as exc:
        return layout(request, "Secret", "/approvals", f"<h1>Secret</h1><p class='muted'>{e(str(exc))}.</p>")
    body = (f"<h1>A secret for a run</h1><div class='card'><p>Run <code>{e(a['run_id'])}</code> "
            f"({e(', '.join(a['skills']) or 'no skill')}) needs <b>{e(a['name'])}</b>. Type it here: it goes to "
            "that run once, in memory, and is never stored, logged or shown to the agent.</p>"
            f"<form id='give' class='row'><label>{e(a['name'])} <input type='password' id='secret' "
            "autocomplete='off' required></label><button class='primary' type='submit'>Give it to the run</button>"
            "</form></div>")
    script = f"""
const SID = {js(sid)};
document.getElementById('give').addEventListener('submit', (ev) => {{ ev.preventDefault();
  const input = document.getElementById('secret');
  act(() => api('POST', `/api/secrets/${{seg(SID)}}`, {{value: input.value}}), () => {{
    input.value = ''; input.disabled = true; flash('Given to the run. You can close this page.'); }}); }});"""
    return layout(request, "Secret", "/approvals", body, script)


async def schedules_page(request: Request) -> HTMLResponse:
    d = daemon(request)
    views = schedule_views(d)

    def row(v: dict[str, Any]) -> str:
        params = ", ".join(f"{k}={val}" for k, val in sorted(v["params"].items()))
        last = (f"{e(v['last_outcome'])}<div class='muted'>{e(v['last_at'] or '')} "
                f"{e(v['last_run_id'] or '')}</div><div class='muted'>{e(v['last_note'] or '')}</div>"
                if v["last_outcome"] else "<span class='muted'>not run yet</span>")
        toggle = "resume" if v["paused"] else "pause"
        return (f"<tr data-schedule='{v['id']}'><td>{v['id']}</td><td><a href='/skills/{e(q(v['slug']))}'>"
                f"{e(v['slug'])}</a><div class='muted'>{'health check' if v['kind'] == 'check' else 'run'}"
                f"{' · ' + e(params) if params else ''}{' · profile ' + e(v['profile']) if v['profile'] else ''}"
                f"</div></td><td>{e(v['when'])}</td><td>{'paused' if v['paused'] else e((v['next_run'] or '…').replace('T', ' '))}</td>"
                f"<td>{last}</td><td><button data-do='run'>Run now</button> <button data-do='{toggle}'>"
                f"{toggle.title()}</button> <button class='danger' data-do='remove'>Remove</button></td></tr>")

    skills = "".join(f"<option>{e(s.slug)}</option>" for s in d.store.all(enabled_only=True))
    table = (f"<table><thead><tr><th>#</th><th>Skill</th><th>When</th><th>Next run</th><th>Last outcome</th>"
             f"<th></th></tr></thead><tbody>{''.join(row(v) for v in views)}</tbody></table>"
             if views else "<p class='muted'>No schedules yet.</p>")
    who = ("This daemon runs the schedules." if d.schedules.leading else
           "Another daemon on this store runs the schedules; this one takes over if it stops.")
    body = (f"<h1>Schedules</h1><p class='muted'>{who}</p>{table}<h2>Add</h2><div class='card'><div class='row'>"
            f"<select id='slug' aria-label='Skill'>{skills}</select>"
            f"<input id='cron' aria-label='Cron' placeholder='cron: 0 9 * * 1'>"
            f"<input id='every' aria-label='Every' placeholder='or every: 6h'>"
            f"<label class='check'><input type='checkbox' id='check'> health check only</label>"
            f"<button id='add' class='primary'>Add schedule</button></div><p class='muted'>A scheduled run is an "
            f"ordinary run: it shows on Runs, and its approvals and secrets wait on Approvals. A health check "
            f"opens the pages and looks for every target; it never clicks or types.</p></div>")
    script = """
for (const tr of document.querySelectorAll('tr[data-schedule]')) for (const b of tr.querySelectorAll('[data-do]'))
  b.addEventListener('click', () => act(() => b.dataset.do === 'remove'
      ? api('DELETE', `/api/schedules/${seg(tr.dataset.schedule)}`)
      : api('POST', `/api/schedules/${seg(tr.dataset.schedule)}/${seg(b.dataset.do)}`), () => location.reload()));
document.getElementById('add').addEventListener('click', () => act(() => api('POST', '/api/schedules', {
  slug: document.getElementById('slug').value, cron: document.getElementById('cron').value || null,
  every: document.getElementById('every').value || null, check: document.getElementById('check').checked}),
  () => location.reload()));"""
    return layout(request, "Schedules", "/schedules", body, script)


ROUTES = [  # pages, not the API: never in the OpenAPI schema (their docstrings are prose, not YAML)
    Route(path, endpoint, methods=methods, include_in_schema=False) for path, endpoint, methods in (
        ("/", home, None), ("/login", login, ["GET", "POST"]), ("/logout", logout, ["POST"]),
        ("/logged-out", logged_out, None), ("/favicon.ico", favicon, None),
        ("/skills", skills_page, None), ("/skills/{slug}", skill_page, None), ("/teach", teach_page, None),
        ("/runs", runs_page, None), ("/schedules", schedules_page, None), ("/approvals", approvals_page, None),
        ("/secrets/{sid}", secret_page, None))
]
