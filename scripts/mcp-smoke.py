"""The installed wheel's ``teachd mcp``, spoken to by the MCP SDK's own client
over stdio: it starts from the wheel, answers the handshake and lists the
contract's tools (CI runs this after the wheel's demo)."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile

from mcp import Client
from mcp.client.stdio import StdioServerParameters

TOOLS = ["computer_act", "feedback", "load_skill", "read_skill_file", "run_skill"]


async def main() -> int:
    home = tempfile.mkdtemp(prefix="teachd-mcp-smoke-")
    teachd = os.path.join(os.path.dirname(sys.executable), "teachd")
    env = {**os.environ, "TEACHD_HOME": home}
    server = StdioServerParameters(command=teachd, args=["mcp", "--headless"], env=env)
    async with Client(server, mode="legacy") as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
    print("wheel mcp: tools", ", ".join(names))
    return 0 if names == TOOLS else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
