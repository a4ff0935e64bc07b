"""Property-based: whatever a client sends to any route of the OpenAPI
schema — odd paths, odd JSON — the daemon answers with a status it chose
(never a 500) and never with a secret or a traceback."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from teachd.config import Settings
from teachd.server.app import create_app
from tests.sample_task import PASSWORD

json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
body = st.dictionaries(st.sampled_from(["on", "text", "slug", "outcome", "version", "tools", "always_ask",
                                        "description", "instructions", "name", "url", "params", "allow",
                                        "tool", "envelope", "skill_md", "folder", "note"]) | st.text(max_size=8),
                       json_value, max_size=5)
segment = st.sampled_from(["taught-file-a-report-and-add-approvers", "nope", "..", "%2e%2e", "a/b", "1", "0",
                           "references/x.md", "SKILL.md"]) | st.text(min_size=1, max_size=12).filter(
                               lambda s: "/" not in s and "?" not in s and "#" not in s)


def routes(client: TestClient) -> list[tuple[str, str]]:
    schema = client.get("/openapi.json").json()
    return [(method.upper(), path) for path, ops in schema["paths"].items() for method in ops]


def test_no_route_answers_500_or_leaks_a_secret(taught) -> None:
    env, _port = taught
    environ = {**env, "TEACHD_SECRET_PASSWORD": PASSWORD}
    home = Path(env["TEACHD_HOME"])
    app = create_app(Settings(home=home, owner="alice", environ=environ), "127.0.0.1", 8765)
    token = (home / "token").read_text().strip()
    with TestClient(app, base_url="http://127.0.0.1:8765", raise_server_exceptions=False,
                    headers={"Authorization": f"Bearer {token}"}) as client:
        table = [r for r in routes(client) if not r[1].startswith(("/api/teach", "/api/runs"))]  # no browsers

        @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
        @given(st.sampled_from(table), st.lists(segment, min_size=3, max_size=3), body)
        def probe(route: tuple[str, str], parts: list[str], data: dict[str, Any]) -> None:
            method, path = route
            it = iter(parts)
            url = re.sub(r"\{[^}]+\}", lambda _m: quote(next(it), safe="/%"), path)
            r = client.request(method, url, json=data)
            assert r.status_code < 500, (method, url, data, r.text[:300])
            assert PASSWORD not in r.text and "Traceback" not in r.text

        probe()
