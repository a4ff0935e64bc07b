"""Assistant profiles, stored (on both engines), resolved the same way by
every command that takes --profile."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from teachd.config import Settings
from teachd.core.errors import BadInput, NotFound
from teachd.store import SkillContent, SkillStore
from teachd.store.profiles import ProfileStore, resolve_profile


def skill(store: SkillStore, slug: str) -> None:
    store.create(slug, SkillContent(name=slug, description=f"{slug}. Use when {slug}.", instructions="# x\n"))


def test_profiles_are_stored_and_win_over_config(store: SkillStore, settings: Settings) -> None:
    for slug in ("notes", "expenses", "travel"):
        skill(store, slug)
    profiles = ProfileStore(store)
    assert profiles.create("work", ["notes", "expenses"]) == ["expenses", "notes"]
    assert profiles.add("work", ["travel"]) == ["expenses", "notes", "travel"]
    assert profiles.remove("work", ["notes"]) == ["expenses", "travel"]
    with pytest.raises(NotFound):
        profiles.add("work", ["no-such-skill"])
    with pytest.raises(BadInput, match="exists"):
        profiles.create("work", ["notes"])
    configured = replace(settings, profiles={"work": ("notes",), "home": ("travel",)})
    assert resolve_profile(configured, store, "work") == ["expenses", "travel"]  # the stored one wins
    assert resolve_profile(configured, store, "home") == ["travel"]
    assert resolve_profile(configured, store, None) is None
    with pytest.raises(NotFound, match="no profile 'gone'"):
        resolve_profile(configured, store, "gone")
    assert profiles.remove("work") == [] and "work" not in profiles.all()


def test_the_cli_manages_profiles_and_the_manifest_follows_one(cli, tmp_path: Path) -> None:
    from tests.conftest import write_skill

    for name in ("notes", "expenses"):
        assert cli("skills", "import", str(write_skill(tmp_path / "src", name, f"{name}. Use when x."))).code == 0
    assert cli("profiles", "create", "work", "--skill", "notes").code == 0
    assert cli("profiles", "create", "bad", "--skill", "nope").code == 3
    shown = json.loads(cli("profiles", "list", "--json").out)
    assert shown == [{"name": "work", "skills": ["notes"], "from": "store"}]
    manifest = json.loads(cli("skills", "manifest", "--profile", "work", "--json").out)
    assert [m["slug"] for m in manifest] == ["notes"]
    assert len(json.loads(cli("skills", "manifest", "--json").out)) == 2
    assert cli("profiles", "add", "work", "--skill", "expenses").code == 0
    assert cli("profiles", "show", "work").out.split() == ["expenses", "notes"]
    assert cli("skills", "manifest", "--profile", "nope").code == 3


def test_an_mcp_session_with_a_stored_profile_sees_exactly_its_skills(store: SkillStore,
                                                                       settings: Settings) -> None:
    from mcp import Client

    from teachd.mcp.server import TeachdMCP
    from teachd.mcp.session import services_for
    from teachd.store.runs import RunStore

    for slug in ("notes", "expenses"):
        skill(store, slug)
    ProfileStore(store).create("work", ["notes"])
    bound = resolve_profile(settings, store, "work")

    async def go() -> tuple[str, bool, bool]:
        server = TeachdMCP(services_for(RunStore(store), settings, profile=bound, headless=True))
        try:
            async with Client(server, mode="legacy") as client:
                [load] = [t for t in (await client.list_tools()).tools if t.name == "load_skill"]
                outside = await client.call_tool("load_skill", {"slug": "expenses"})
                inside = await client.call_tool("load_skill", {"slug": "notes"})
                return load.description or "", outside.is_error, inside.is_error
        finally:
            server.close()

    description, outside_refused, inside_refused = asyncio.run(go())
    assert "- notes:" in description and "expenses" not in description
    assert outside_refused and not inside_refused
