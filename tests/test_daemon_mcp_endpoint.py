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
