"""A small single-page app for the tests of hash routes and record links:
one HTML shell whose script routes on the fragment (``#/items``,
``#/items/new``, ``#/items/<uuid>``) and writes through a JSON API. Its
records are known to a person by their names; their ids are UUIDs drawn at
each seeding, so the same names under new ids (another workspace, a store
re-created) is one call (``reseed``). What it saved is its own record
(``state``), the judge of every replay.

(Written here as a stand-in until the fixture built with a real framework
from npm that issue 43 asks for; it has the behaviour that fixture needs.)"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

NAMES = ("Alpha", "Bravo", "Charlie")

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Items</title></head>
<body>
<nav><a href="#/items">Items</a></nav>
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
window.addEventListener("hashchange", route);
route();
</script>
</body></html>
"""


class SpaApp:
    """The app on a port of 127.0.0.1, in a thread; ``moved``: the items'
    list has moved to another route (the entry point a skill was shown
    on is gone)."""

    def __init__(self, port: int = 0, moved: bool = False) -> None:
        self.moved = moved
        self.lock = threading.Lock()
        self.items: list[dict[str, str]] = []
        self.writes: list[tuple[str, str]] = []  # (method, path) of every write, in order
        self.reseed()
        self.server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    def reseed(self, names: tuple[str, ...] = NAMES) -> None:
        """The same records under new ids (and nothing written yet)."""
        with self.lock:
            self.items = [{"id": str(uuid.uuid4()), "name": n, "description": "", "notes": ""} for n in names]
            self.writes = []

    def named(self, name: str) -> list[dict[str, str]]:
        with self.lock:
            return [dict(i) for i in self.items if i["name"] == name]

    def __enter__(self) -> SpaApp:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

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
                if self.path == "/":
                    page = PAGE.replace("__MOVED__", "true" if app.moved else "false")
                    return self._send(200, page.encode(), "text/html; charset=utf-8")
                with app.lock:
                    if self.path == "/api/items":
                        return self._json(app.items)
                    for item in app.items:
                        if self.path == f"/api/items/{item['id']}":
                            return self._json(item)
                return self._json({"error": "not found"}, 404)

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with app.lock:
                    app.writes.append(("POST", self.path))
                    if self.path == "/api/items":
                        item = {"id": str(uuid.uuid4()), "name": str(body.get("name", "")), "description": "",
                                "notes": ""}
                        app.items.append(item)
                        return self._json(item)
                    for item in app.items:
                        if self.path == f"/api/items/{item['id']}":
                            item["description"] = str(body.get("description", ""))
                            item["notes"] = str(body.get("notes", ""))
                            return self._json(item)
                return self._json({"error": "not found"}, 404)

        return Handler
