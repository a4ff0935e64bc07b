"""A small single-page app for the tests of hash routes and record links:
one HTML shell whose script routes on the fragment (``#/items``,
``#/items/new``, ``#/items/<uuid>``, ``#/cards``, and ``#/start``, which
redirects itself to ``#/cards`` 2.5 s after it loads) and writes through a
JSON API. On ``#/cards`` each record is a card with no ARIA role and the same
two icons (rename, delete), each opening a dialog that hides the page from
the accessibility tree until a moment after it closes. Its
records are known to a person by their names; their ids are UUIDs drawn at
each seeding, so the same names under new ids (another workspace, a store
re-created) is one call (``reseed``). What it saved is its own record
(``state``), the judge of every replay.

(Written here as a stand-in until the fixture built with a real framework
from npm that issue 43 asks for; it has the behaviour that fixture needs.)"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

NAMES = ("Alpha", "Bravo", "Charlie")

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Items</title></head>
<body>
<nav><a href="#/items">Items</a> <a href="#/cards">Cards</a></nav>
<svg style="display:none"><symbol id="pen" viewBox="0 0 16 16"><path d="M2 14l3-1 8-8-2-2-8 8z"/></symbol>
<symbol id="bin" viewBox="0 0 16 16"><path d="M3 4h10l-1 10H4zM6 2h4v2H6z"/></symbol></svg>
<main id="view"></main>
<script>
const MOVED = __MOVED__;
const view = document.getElementById("view");
const api = (path, body) => fetch(path, body === undefined ? {} : {
  method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)}).then(r => r.json());
function esc(s) { const d = document.createElement("div"); d.textContent = s; return d.innerHTML; }
async function route() {
  const hash = location.hash;
  if (hash === "" || hash === "#/") { location.replace("#/items"); return; }
  if (MOVED && hash === "#/items") { location.replace("#/records"); return; }
  if (hash === "#/records") { document.title = "Records"; view.innerHTML = "<h1>Records</h1><p>Nothing here yet.</p>"; return; }
  if (hash === "#/items") {
    const items = await api("/api/items");
    document.title = "Items";
    view.innerHTML = "<h1>Items</h1><button id='new'>New item</button><table><tbody>" +
      items.map(i => `<tr><td><a href="#/items/${i.id}">${esc(i.name)}</a></td></tr>`).join("") + "</tbody></table>";
    document.getElementById("new").onclick = () => { location.hash = "#/items/new"; };
    return;
  }
  if (hash === "#/items/new") {
    document.title = "New item";
    view.innerHTML = "<h1>New item</h1><label for='name'>Name</label> <input id='name'>" +
      " <button id='create'>Create</button>";
    document.getElementById("create").onclick = async () => {
      const made = await api("/api/items", {name: document.getElementById("name").value});
      location.hash = "#/items/" + made.id;
    };
    return;
  }
  if (hash === "#/cards") { cards(); return; }
  if (hash === "#/start") {  // a slow client-side redirect: the app's own doing, 2.5 s after it loads
    document.title = "Loading"; view.innerHTML = "<p>Loading…</p>";
    setTimeout(() => location.replace("#/cards"), 2500);
    return;
  }
  const m = hash.match(/^#\\/items\\/([0-9a-f-]+)$/);
  if (m) {
    const item = await api("/api/items/" + m[1]);
    document.title = item.name;
    view.innerHTML = `<h1>${esc(item.name)}</h1><label for='description'>Description</label> ` +
      `<input id='description' value='${esc(item.description)}'>` +
      // an unlabelled editor with a framework's generated id: known by the heading above it
      `<h2>Notes</h2><textarea id=':r3:'>${esc(item.notes)}</textarea> <button id='save'>Save</button><p id='said'></p>`;
    document.getElementById("save").onclick = async () => {
      await api("/api/items/" + m[1], {description: document.getElementById("description").value,
                                        notes: document.getElementById(":r3:").value});
      document.getElementById("said").textContent = "Saved";
    };
  }
}
// Cards, each with the same two icons (rename, delete) and no ARIA role; each icon opens a
// dialog. While a dialog is open the page behind it is hidden from the accessibility tree, and
// it stays hidden a moment after the dialog closes, as a component library's transition does.
const PEN = "<svg width='16' height='16'><use href='#pen'/></svg>";
const BIN = "<svg width='16' height='16'><use href='#bin'/></svg>";
async function cards() {
  const items = await api("/api/items");
  document.title = "Cards";
  view.innerHTML = "<h1>Cards</h1><div class='grid'>" + items.map(i =>
    `<div class='card' data-id='${i.id}'><span class='title'>${esc(i.name)}</span>` +
    `<button class='rename'>${PEN}</button><button class='delete'>${BIN}</button></div>`).join("") + "</div>";
  for (const card of view.querySelectorAll(".card")) {
    const id = card.dataset.id;
    card.querySelector(".rename").onclick = () => dialog("Rename", "<label for='new-name'>New name</label> " +
      "<input id='new-name'> <button id='ok'>Save</button>", async (box) => {
        await api(`/api/items/${id}/rename`, {name: box.querySelector("#new-name").value}); });
    card.querySelector(".delete").onclick = () => dialog("Delete this card?", "<button id='ok'>Delete</button>",
      async () => { await api(`/api/items/${id}/delete`, {}); });
  }
}
function dialog(title, body, done) {
  const box = document.createElement("div");
  box.setAttribute("role", "dialog"); box.setAttribute("aria-modal", "true"); box.setAttribute("aria-label", title);
  box.innerHTML = `<h2>${esc(title)}</h2>` + body;
  view.setAttribute("aria-hidden", "true");
  document.body.appendChild(box);
  box.querySelector("#ok").onclick = async () => {
    await done(box);
    box.remove();
    await cards();
    setTimeout(() => view.removeAttribute("aria-hidden"), 400);
  };
}
window.addEventListener("hashchange", route);
route();
</script>
</body></html>
"""


BUILT = Path(__file__).parent / "fixtures" / "spa_react" / "built"  # React + React Router + MUI, vendored
TAGS = ("urgent", "later")
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css"}


class SpaApp:
    """The app on a port of 127.0.0.1, in a thread; ``moved``: the items'
    list has moved to another route (the entry point a skill was shown
    on is gone). ``built``: serve that built single-page app (the React
    one, ``BUILT``) instead of the hand-written page, told its ``variant``
    (``window.__VARIANT``: ``redesign``, ``section``, ``moved``)."""

    def __init__(self, port: int = 0, moved: bool = False, built: Path | None = None) -> None:
        self.moved = moved
        self.built = built
        self.variant: dict[str, bool] = {}
        self.lock = threading.Lock()
        self.items: list[dict[str, Any]] = []
        self.writes: list[tuple[str, str]] = []  # (method, path) of every write, in order
        self.reseed()
        self.server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    def reseed(self, names: tuple[str, ...] = NAMES) -> None:
        """The same records under new ids (and nothing written yet)."""
        with self.lock:
            self.items = [{"id": str(uuid.uuid4()), "name": n, "description": "", "notes": "", "tags": []}
                          for n in names]
            self.writes = []

    def names(self) -> list[str]:
        with self.lock:
            return [i["name"] for i in self.items]

    def named(self, name: str) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(i) for i in self.items if i["name"] == name]

    def __enter__(self) -> SpaApp:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _page(self, path: str) -> tuple[bytes, str] | None:
        """The page, or one of the built app's files (never outside its folder)."""
        if self.built is None:
            return (PAGE.replace("__MOVED__", "true" if self.moved else "false").encode(), _TYPES[".html"]) \
                if path == "/" else None
        if path == "/variant.js":
            return f"window.__VARIANT = {json.dumps(self.variant)};".encode(), _TYPES[".js"]
        file = (self.built / ("index.html" if path == "/" else path.lstrip("/"))).resolve()
        if not file.is_relative_to(self.built.resolve()) or not file.is_file():
            return None
        return file.read_bytes(), _TYPES.get(file.suffix, "application/octet-stream")

    def read(self, path: str) -> Any:
        """The JSON API's answer to a GET, or None (not found)."""
        with self.lock:
            if path == "/api/items":
                return self.items
            if path == "/api/tags":
                return sorted({*TAGS, *(t for i in self.items for t in i["tags"])})
            return next((i for i in self.items if path == f"/api/items/{i['id']}"), None)

    def write(self, path: str, body: dict[str, Any]) -> Any:
        """A POST: kept in ``writes`` (the judge's record), then done; None when nothing is there."""
        with self.lock:
            self.writes.append(("POST", path))
            if path == "/api/items":
                item = {"id": str(uuid.uuid4()), "name": str(body.get("name", "")), "description": "",
                        "notes": "", "tags": [str(t) for t in body.get("tags") or []]}
                self.items.append(item)
                return item
            for item in list(self.items):
                if path == f"/api/items/{item['id']}/rename":
                    item["name"] = str(body.get("name", ""))
                    return item
                if path == f"/api/items/{item['id']}/delete":
                    self.items.remove(item)
                    return {}
                if path == f"/api/items/{item['id']}":
                    item.update({k: str(body[k]) for k in ("description", "notes") if k in body})
                    return item
            return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        app = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _json(self, data: Any, status: int = 200) -> None:
                self._send(status, json.dumps(data).encode(), "application/json")

            def do_GET(self) -> None:  # noqa: N802 — http.server's name
                if (page := app._page(self.path.split("?")[0])) is not None:
                    return self._send(200, *page)
                found = app.read(self.path)
                return self._json(found) if found is not None else self._json({"error": "not found"}, 404)

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                done = app.write(self.path, body)
                return self._json(done) if done is not None else self._json({"error": "not found"}, 404)

        return Handler


@contextlib.contextmanager
def taught_on(base: Path, task: str, start: str, show: Callable[[Any], None],
              built: Path | None = None) -> Iterator[tuple[dict[str, str], SpaApp]]:
    """``task`` taught through ``teachd teach`` on an app started at
    ``start`` (a route), the person's part played by ``show`` over the
    recording browser's DevTools port; then (teachd's environment, the app)
    while the app runs. ``base``: a folder of the test's own."""
    from teachd.demo.sampleapp.judge import teachd_env
    from tests.desktop import Teach
    from tests.programs import need

    need("chromium")
    (base / "home").mkdir(mode=0o700)
    (base / "user").mkdir(exist_ok=True)
    env = teachd_env(base / "home", base / "user")
    with SpaApp(built=built) as app:
        teach = Teach(env, task, app.url + start, "--headless", "--no-os-input")
        try:
            show(teach)
        except BaseException:  # a demonstration that failed leaves no recorder (or its Chromium) behind
            teach.proc.kill()
            teach.proc.wait()
            raise
        code, _out, err = teach.finish()
        assert code == 0, err[-1500:]
        yield env, app


def exported(env: dict[str, str], slug: str) -> dict[str, Any]:
    """The skill's files as ``teachd skills export --format json`` gives
    them, its JSON ones read: ``steps`` and ``anchors``."""
    shown = subprocess.run([sys.executable, "-m", "teachd", "skills", "export", slug, "--format", "json"],
                           env=env, capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    files = json.loads(shown.stdout)["files"]
    return {"steps": json.loads(files["references/steps.json"])["steps"],
            "anchors": json.loads(files["references/anchors.json"])["anchors"]}


def replay(env: dict[str, str], slug: str, *args: str) -> tuple[int, dict[str, Any], str]:
    """``teachd run`` of ``slug`` as a person runs it: (exit, result, stderr)."""
    from tests.drift_suite import replay_cli

    return replay_cli(env, "--step-timeout", "4", *args, password=None, slug=slug)


def check_cards_told_by_name(env: dict[str, str], app: SpaApp, slug: str) -> None:
    """The cards task ("rename Bravo's card to Bravissimo, delete Charlie's")
    on the same names under new ids, Bravo now second and Charlie first: a
    position recorded for either icon points at another card. Judged by the
    app's record of what was written."""
    app.reseed(("Charlie", "Bravo", "Alpha"))
    bravo, charlie = app.named("Bravo")[0]["id"], app.named("Charlie")[0]["id"]
    code, out, err = replay(env, slug)
    assert code == 0 and out["status"] == "success", (out.get("message"), err[-1500:])
    assert app.names() == ["Bravissimo", "Alpha"]
    assert app.writes == [("POST", f"/api/items/{bravo}/rename"), ("POST", f"/api/items/{charlie}/delete")]


def check_cards_halt_without_bravo(env: dict[str, str], app: SpaApp, slug: str) -> None:
    """The same task with no Bravo: halted before anything is written, naming the card."""
    app.reseed(("Alpha", "Charlie", "Delta"))
    code, out, err = replay(env, slug)
    assert code == 1 and out["status"] == "failure", (out.get("message"), err[-1500:])
    assert app.writes == [] and app.names() == ["Alpha", "Charlie", "Delta"]
    assert "expected on the card 'Bravo'" in out["message"], out["message"]


@contextlib.contextmanager
def person_at(teach: Any, clicks: int) -> Iterator[Any]:
    """The person at ``teach``'s recording browser (over its DevTools port),
    a ``Person`` of the sample's script; when they are done, the recorder
    has written their ``clicks`` clicks (a person waits to see each land),
    and every tab is closed — which ends the demonstration."""
    from playwright.sync_api import sync_playwright

    from teachd.demo.sampleapp.script import Person

    with sync_playwright() as pw:
        context = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{teach.cdp_port}").contexts[0]
        yield Person(context.pages[0], 0.0)
        teach.wait_for(lambda evs: sum(e["type"] == "click" for e in evs) >= clicks)
        for page in context.pages:
            page.close()
