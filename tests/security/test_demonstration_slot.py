"""The daemon's one demonstration slot opens Chromium on the display of the
person who runs the daemon: only they may take it. Another person (bob,
with a token of his own) is refused with 403 and one line saying why and
where to teach instead; the slot stays free and no browser starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from teachd.config import Settings
from teachd.core.errors import PolicyStop
from teachd.server.jobs import Teaching
from teachd.store import open_store
from teachd.store.users import UserStore
from tests.security.web_surface import daemon


def test_another_person_cannot_start_a_demonstration_on_the_daemons_display(tmp_path: Path) -> None:
    with daemon(tmp_path) as server:
        bob = UserStore(open_store(Settings(home=server.home, owner="alice")).db).add("bob")
        with server.api() as as_bob:
            as_bob.headers["Authorization"] = f"Bearer {bob}"
            for body in ({"name": "Bob's task", "url": "https://example.test/"},
                         {"name": "Bob's task", "url": "https://example.test/", "headless": True},
                         {"name": "Bob's task", "url": "https://example.test/", "headless": False}):
                r = as_bob.post("/api/teach", json=body)
                assert r.status_code == 403, r.text
                why = r.json()["error"]
                assert "only alice" in why and "teachd teach" in why and "\n" not in why
            assert as_bob.get("/api/teach").json()["recording"] is False
        with server.api() as owner:  # the slot is still free, and no browser started for bob
            st = owner.get("/api/teach").json()
            assert st["recording"] is False and st["name"] == "" and st["cdp_port"] is None


def test_a_repair_by_another_person_is_refused_before_anything_starts(tmp_path: Path) -> None:
    teaching = Teaching({}, tmp_path / "control", "alice")
    with pytest.raises(PolicyStop, match="only alice"):
        teaching.repair("run-1", "Bob's task", 3, "Step 3", True, "bob")
    with pytest.raises(PolicyStop, match="only alice"):
        teaching.start("Bob's task", "https://example.test/", True, "bob")
    assert teaching.process is None and teaching._starting is None and teaching.owner == ""
