"""The MCP set-up in docs/mcp.md (once the README's), run as written: its `mcpServers` block (the
venv's own teachd, TEACHD_HOME) started by the MCP SDK's stdio client, as
any client would start it from that config — the server answers and lists
the taught skill."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import ROOT
from tests.sample_task import SLUG


def readme_config() -> dict[str, Any]:
    text = (ROOT / "docs" / "mcp.md").read_text()
    block = re.search(r"Any client \(the common `mcpServers` JSON.*?```json\n(.*?)```", text, re.S)
    assert block, "docs/mcp.md lost its mcpServers block"
    return json.loads(block.group(1))["mcpServers"]["teachd"]


def test_the_readmes_mcp_config_starts_a_server_that_sees_the_taught_skill(taught) -> None:
    env, _port = taught
    config = readme_config()
    assert config["command"] == "/path/to/teachd/.venv/bin/teachd" and config["args"] == ["mcp"]
    command = config["command"].replace("/path/to/teachd", str(ROOT))
    home = config["env"]["TEACHD_HOME"]
    assert home == "/home/you/.local/share/teachd"
    server_env = {**{k: v for k, v in env.items() if k != "TEACHD_HOME"},
                  **config["env"], "TEACHD_HOME": env["TEACHD_HOME"]}  # the example's home → this test's

    async def go() -> tuple[list[str], str]:
        params = StdioServerParameters(command=command, args=[*config["args"], "--headless"], env=server_env)
        async with Client(params, mode="legacy") as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            load = next(t for t in (await client.list_tools()).tools if t.name == "load_skill")
            return tools, load.description or ""

    tools, listing = asyncio.run(go())
    assert {"load_skill", "read_skill_file", "computer_act", "run_skill", "feedback"} <= set(tools)
    assert SLUG in listing  # the owner's taught skill, as docs/mcp.md says
