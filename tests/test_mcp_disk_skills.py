"""Disk skills reach agents (seed 000, "Discovery pipeline" and
"Collision and duplicate handling"): what ``skills discover`` finds is
served by ``teachd mcp`` and the daemon's ``/mcp`` after the person's store
skills, read-only, marked by provider and path; ``load_skill``,
``read_skill_file``, ``skill://`` and ``/skill:`` work on them; a name the
store has is the store's."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from teachd.config import settings_from_env
from teachd.store import open_store
from teachd.store.runs import RunStore
from tests.conftest import write_skill

NOTES_BODY = "# Meeting notes\n\nWrite the decisions first.\nSee references/format.md.\n"


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


def lay_out(project: Path, user: Path) -> None:
    """A project and a home holding skills of three providers, one binary
    file, one link out, and one name the store also has."""
    notes = write_skill(project / ".claude/skills", "meeting-notes", "Turn a meeting into notes.",
                        NOTES_BODY, files={"references/format.md": "# Format\n"})
    (notes / "assets").mkdir()
    (notes / "assets/logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (project / "outside.txt").write_text("not the skill's", encoding="utf-8")
    (notes / "references/escape.md").symlink_to(project / "outside.txt")
    # the other agents' skills may come without a description (seed 000: non-native providers)
    folder = user / ".agents/skills/no-description"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: no-description\n---\n\nJust do it.\n", encoding="utf-8")
    write_skill(project / ".claude/skills", "shadowed", "The disk's copy.", "# Disk copy\n")


@contextlib.asynccontextmanager
async def session(env: dict[str, str], project: Path, user: Path) -> AsyncIterator[Client]:
    from teachd.mcp.server import TeachdMCP
    from teachd.mcp.session import services_for
    from teachd.skills.disk import shelf_for

    settings = settings_from_env({k: v for k, v in env.items() if k != "DISPLAY"})
    server = TeachdMCP(services_for(RunStore(open_store(settings)), settings, headless=True,
                                    disk=shelf_for(settings, project, user)))
    try:
        async with Client(server, mode="legacy") as client:
            yield client
    finally:
        server.close()


@pytest.fixture
def laid_out(env: dict[str, str], cli: Any, tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
    project, user = tmp_path / "project", Path(env["HOME"])
    project.mkdir()
    lay_out(project, user)
    store_copy = write_skill(tmp_path / "store-src", "shadowed", "The store's copy.", "# Store copy\n")
    assert cli("skills", "import", str(store_copy)).code == 0
    return env, project, user


def test_disk_skills_are_listed_after_the_store_skills_marked_read_only(laid_out) -> None:
    """seed 000: "Custom-directory skills are merged after provider skills";
    "first item with a given name wins"; "non-native providers can load
    skills without description"."""
    env, project, user = laid_out

    async def go() -> None:
        async with session(env, project, user) as client:
            [load] = [t for t in (await client.list_tools()).tools if t.name == "load_skill"]
            lines = [line for line in (load.description or "").splitlines() if line.startswith("- ")]
            assert lines[0] == "- shadowed: shadowed — The store's copy."  # the store's first
            notes_md = project / ".claude/skills/meeting-notes/SKILL.md"
            assert lines[1] == ("- meeting-notes: Turn a meeting into notes. [disk skill, read-only: "
                                f"claude/project: {notes_md}]")
            assert lines[2].startswith("- no-description: (no description) [disk skill, read-only: agents/user: ")
            assert len(lines) == 3  # the disk's "shadowed" is not served
            shadowed = text(await client.call_tool("load_skill", {"slug": "shadowed"}))
            assert shadowed.startswith("# Store copy") and "Disk copy" not in shadowed

    asyncio.run(go())


def test_a_disk_skill_loads_its_body_and_files_and_nothing_outside_its_folder(laid_out) -> None:
    """seed 000 "`skill://` URL behavior": the name picks the skill, the path
    a file inside it; absolute paths, ``..`` and links out are refused; a
    missing file is "File not found"; ``.md`` is text/markdown."""
    env, project, user = laid_out

    async def go() -> None:
        async with session(env, project, user) as client:
            loaded = text(await client.call_tool("load_skill", {"slug": "meeting-notes"}))
            assert loaded.startswith(NOTES_BODY.rstrip())  # the body, its frontmatter stripped
            assert "name: meeting-notes" not in loaded and "read-only" in loaded
            assert "- references/format.md" in loaded
            assert "logo.png" not in loaded and "escape.md" not in loaded  # binary and link: not offered
            got = await client.call_tool("read_skill_file", {"slug": "meeting-notes", "path": "references/format.md"})
            assert text(got) == "# Format\n"
            for path in ("references/escape.md", "../../outside.txt", "/etc/hostname", "assets/logo.png",
                         "references/none.md"):
                refused = await client.call_tool("read_skill_file", {"slug": "meeting-notes", "path": path})
                assert refused.is_error, path
                assert "not the skill's" not in text(refused)
            assert "File not found: references/none.md" in text(
                await client.call_tool("read_skill_file", {"slug": "meeting-notes", "path": "references/none.md"}))
            uris = {str(r.uri): r.mime_type for r in (await client.list_resources()).resources}
            assert uris["skill://meeting-notes"] == "text/markdown"
            assert uris["skill://meeting-notes/references/format.md"] == "text/markdown"
            whole = (await client.read_resource("skill://meeting-notes")).contents[0]
            assert whole.text.startswith("---\nname: meeting-notes")  # type: ignore[union-attr]
            with pytest.raises(Exception, match="outside the skill folder"):
                await client.read_resource("skill://meeting-notes/references/escape.md")

    asyncio.run(go())


def test_a_disk_skill_has_no_history_and_no_replay(laid_out) -> None:
    """Read-only: feedback and run_skill refuse a disk skill and say how to keep it."""
    env, project, user = laid_out

    async def go() -> None:
        async with session(env, project, user) as client:
            fb = await client.call_tool("feedback", {"slug": "meeting-notes", "outcome": "success"})
            assert fb.is_error and "read-only" in text(fb) and "teachd skills import" in text(fb)
            run = await client.call_tool("run_skill", {"slug": "meeting-notes"})
            assert run.is_error and "no taught steps" in text(run)
            act = await client.call_tool("computer_act", {"action": "click", "skill": "meeting-notes",
                                                          "anchor": "a1"})
            assert act.is_error and "no anchors" in text(act)
        assert (project / ".claude/skills/meeting-notes/SKILL.md").read_text(encoding="utf-8").endswith(NOTES_BODY)

    asyncio.run(go())


def test_the_skill_command_of_a_disk_skill_reads_its_file(laid_out) -> None:
    """seed 000 "Interactive /skill:<name> commands": reads the skill file
    directly from filePath, strips frontmatter, appends ``Skill: <path>``
    and ``User: <args>``."""
    env, project, user = laid_out
    notes_md = project / ".claude/skills/meeting-notes/SKILL.md"

    async def go() -> None:
        async with session(env, project, user) as client:
            names = [p.name for p in (await client.list_prompts()).prompts]
            assert names == ["skill:shadowed", "skill:meeting-notes", "skill:no-description"]
            notes_md.write_text(notes_md.read_text(encoding="utf-8") + "Edited on disk.\n", encoding="utf-8")
            got = await client.get_prompt("skill:meeting-notes", {"args": "the Tuesday sync"})
            said = got.messages[0].content.text  # type: ignore[union-attr]
            assert said == (NOTES_BODY + "Edited on disk.\n\n" f"Skill: {notes_md}\nUser: the Tuesday sync")

    asyncio.run(go())


def test_config_switches_decide_which_disk_skills_reach_agents(laid_out) -> None:
    """seed 000 "Source toggles and filtering": source toggles, then ignore,
    then include; ``skills.enabled: false`` serves none."""
    env, project, user = laid_out
    config = Path(env["TEACHD_HOME"]) / "config.yaml"

    async def served() -> list[str]:
        async with session(env, project, user) as client:
            return [str(r.uri) for r in (await client.list_resources()).resources if str(r.uri).count("/") == 2]

    config.write_text("skills:\n  claude: {project: false}\n", encoding="utf-8")
    assert asyncio.run(served()) == ["skill://shadowed", "skill://no-description"]
    config.write_text("ignore: ['no-*']\n", encoding="utf-8")
    assert asyncio.run(served()) == ["skill://shadowed", "skill://meeting-notes"]
    config.write_text("skills:\n  enabled: false\n", encoding="utf-8")
    assert asyncio.run(served()) == ["skill://shadowed"]


def test_teachd_mcp_serves_the_disk_skills_of_its_directory_and_its_roots(laid_out, tmp_path: Path) -> None:
    """The real ``teachd mcp``: the project is the directory it starts in,
    ``--root`` adds a folder, and its start line counts them."""
    env, project, user = laid_out
    custom = tmp_path / "team-skills"
    write_skill(custom, "team-review", "How our team reviews.", "# Team review\n")

    async def go() -> list[str]:
        server = StdioServerParameters(command=sys.executable, cwd=project, env=env,
                                       args=["-m", "teachd", "mcp", "--headless", "--root", str(custom)])
        async with Client(server, mode="legacy") as client:
            loaded = text(await client.call_tool("load_skill", {"slug": "team-review"}))
            assert loaded.startswith("# Team review") and f"custom/custom: {custom}" in loaded
            return [p.name for p in (await client.list_prompts()).prompts]

    assert asyncio.run(go()) == ["skill:shadowed", "skill:meeting-notes", "skill:no-description",
                                 "skill:team-review"]


def test_the_daemon_serves_its_owners_disk_skills_to_the_owner_only(tmp_path: Path) -> None:
    """The disk is the person's who runs ``teachd serve``: another person's
    token gets their own store's skills, none of the owner's files."""
    from teachd.config import Settings
    from teachd.store.users import UserStore
    from tests.security.daemon import running_daemon

    home = tmp_path / "daemon-home"
    home.mkdir(mode=0o700)
    bob = UserStore(open_store(Settings(home=home, owner="alice")).db).add("bob")
    user = tmp_path / "daemon-user"
    write_skill(user / ".claude/skills", "alices-notes", "Alice's own way.", "# Private to alice\n")
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

    def listed(base: str, token: str) -> tuple[list[str], Any]:
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}", **accept}, timeout=60) as c:
            r = c.post("/mcp", json=init)
            c.headers.update({"Mcp-Session-Id": r.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"})
            c.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            res = _rpc(c, 2, "resources/list", {})
            read = _rpc(c, 3, "tools/call", {"name": "read_skill_file",
                                              "arguments": {"slug": "alices-notes", "path": "SKILL.md"}})
            c.delete("/mcp")
            return [x["uri"] for x in res["result"]["resources"]], read["result"]

    with running_daemon(tmp_path, _exists_ok=True) as (api, base):
        mine, read_mine = listed(base, api.headers["Authorization"][7:])
        theirs, read_theirs = listed(base, bob)
    assert mine == ["skill://alices-notes"] and "Private to alice" in json.dumps(read_mine)
    assert theirs == [] and read_theirs["isError"] and "Private to alice" not in json.dumps(read_theirs)


def _rpc(c: httpx.Client, n: int, method: str, params: dict[str, Any]) -> Any:
    r = c.post("/mcp", json={"jsonrpc": "2.0", "id": n, "method": method, "params": params})
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in r.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return r.json()


def test_a_disk_skill_cannot_take_the_name_of_a_disabled_store_skill(laid_out, tmp_path: Path) -> None:
    """The attacker drops a ``SKILL.md`` named as a store skill the owner
    switched off — theirs, or one shared with them and switched off by its
    owner — hoping it answers under that trusted name: it is never served."""
    from teachd.store.grants import GrantStore
    from teachd.store.users import UserStore

    env, project, user = laid_out
    settings = settings_from_env({k: v for k, v in env.items() if k != "DISPLAY"})
    store = open_store(settings)
    store.set_enabled("shadowed", False)
    UserStore(store.db).add("bob")
    bobs = store.as_person("bob")
    bobs.save("bobs-report", lambda _p: store.get("shadowed").current, note="created", origin="created")
    GrantStore(bobs).share("bobs-report", store.owner, "use")
    bobs.set_enabled("bobs-report", False)
    write_skill(project / ".claude/skills", "bobs-report", "The disk's copy.", "# Disk copy\n")

    async def go() -> None:
        async with session(env, project, user) as client:
            [load] = [t for t in (await client.list_tools()).tools if t.name == "load_skill"]
            listed = [line.split(":")[0] for line in (load.description or "").splitlines() if line.startswith("- ")]
            assert listed == ["- meeting-notes", "- no-description"]
            assert [p.name for p in (await client.list_prompts()).prompts] == ["skill:meeting-notes",
                                                                               "skill:no-description"]
            uris = [str(r.uri) for r in (await client.list_resources()).resources]
            for name in ("shadowed", "bobs-report"):
                assert not any(u.startswith(f"skill://{name}") for u in uris)
                loaded = await client.call_tool("load_skill", {"slug": name})
                assert loaded.is_error and "Disk copy" not in text(loaded)
                read = await client.call_tool("read_skill_file", {"slug": name, "path": "SKILL.md"})
                assert read.is_error and "Disk copy" not in text(read)
                with pytest.raises(Exception) as refused:
                    await client.read_resource(f"skill://{name}")
                assert "Disk copy" not in str(refused.value)
                with pytest.raises(Exception) as no_prompt:
                    await client.get_prompt(f"skill:{name}", {})
                assert "Disk copy" not in str(no_prompt.value)

    asyncio.run(go())
