"""The daemon's ``/mcp`` is made when an MCP client first comes, not at every
start: importing the MCP SDK (its protocol types are pydantic models built on
import) was more than half of a daemon's start-up CPU, paid by every daemon
that only served its pages, its runs and its schedules."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from teachd.config import Settings

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "lazy", "version": "1"}}}


def test_the_daemon_makes_its_mcp_server_once_on_the_first_mcp_request(home: Path) -> None:
    from teachd.server.app import create_app

    app = create_app(Settings(home=home, owner="alice"), "127.0.0.1", 8765)
    auth = {"Authorization": f"Bearer {(home / 'token').read_text().strip()}",
            "Accept": "application/json, text/event-stream"}
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        assert client.get("/api/skills", headers=auth).status_code == 200
        assert app.state.mcp.server is None  # pages and the API answered without it

        first = client.post("/mcp", json=INITIALIZE, headers=auth)
        assert first.status_code == 200, first.text
        assert first.headers["mcp-session-id"]
        made = app.state.mcp.server
        assert made is not None and "teachd" in first.text  # the server's own answer: its name

        again = client.post("/mcp", json=INITIALIZE, headers=auth)
        assert again.status_code == 200 and again.headers["mcp-session-id"] != first.headers["mcp-session-id"]
        assert app.state.mcp.server is made  # made once, kept

        refused = client.post("/mcp", json=INITIALIZE, headers={"Accept": auth["Accept"]})
        assert refused.status_code == 401  # the guard still answers first, made or not


def test_the_daemons_heap_once_up_is_kept_out_of_every_later_collection(home: Path) -> None:
    """``teachd serve`` freezes what is alive once it is up, and again once
    its MCP server is made: a full collection then walks only what requests
    made since (it walked all of it, GIL held, ~120 ms every ~8 s under the
    soak). An app hosted in-process without ``settle`` leaves the heap alone."""
    import gc

    from teachd.server.app import create_app

    auth = {"Accept": "application/json, text/event-stream"}
    try:
        gc.unfreeze()
        plain = create_app(Settings(home=home, owner="alice"), "127.0.0.1", 8765)
        with TestClient(plain, base_url="http://127.0.0.1:8765"):
            assert gc.get_freeze_count() == 0
        app = create_app(Settings(home=home, owner="alice"), "127.0.0.1", 8765, settle=True)
        headers = {**auth, "Authorization": f"Bearer {(home / 'token').read_text().strip()}"}
        with TestClient(app, base_url="http://127.0.0.1:8765") as client:
            up = gc.get_freeze_count()
            assert up > 20_000, up  # the modules, classes and functions of a daemon that is up
            assert client.post("/mcp", json=INITIALIZE, headers=headers).status_code == 200
            assert gc.get_freeze_count() > up  # and the MCP SDK's, once made
            assert len(gc.get_objects()) < gc.get_freeze_count() / 2  # what a collection walks now
    finally:
        gc.unfreeze()
