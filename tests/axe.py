"""axe-core (Deque's accessibility engine, from npm) for the browser tests:
installed once into ``build/axe/`` on first use — an install that fails
fails the test, nothing is skipped — and run inside a page. The source is
injected with ``page.evaluate`` (which the pages' CSP does not govern), so
the pages need no script of their own for it."""

from __future__ import annotations

import fcntl
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

from tests.programs import need

ROOT = Path(__file__).resolve().parent.parent
AXE_DIR = ROOT / "build" / "axe"
AXE_JS = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")  # the impacts a page may not have


def axe_path() -> Path:
    """``axe.min.js``, installed with npm on first use (one installer at a time)."""
    AXE_DIR.mkdir(parents=True, exist_ok=True)
    with open(AXE_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not AXE_JS.exists():
            done = subprocess.run([need("npm"), "install", "--prefix", str(AXE_DIR), "axe-core@4", "--no-audit",
                                   "--no-fund"], capture_output=True, text=True, timeout=600)
            assert done.returncode == 0 and AXE_JS.exists(), f"npm could not install axe-core:\n{done.stderr}"
    return AXE_JS


@cache
def axe_source() -> str:
    return axe_path().read_text(encoding="utf-8")


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """Every violation axe finds on the page as it is now (WCAG 2.x A/AA and best practices)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source())
    return page.evaluate("""async () => {
      const r = await axe.run(document, {resultTypes: ['violations']});
      return r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map((n) => ({target: n.target.join(' '), html: n.html.slice(0, 200),
                                    summary: n.failureSummary}))}));
    }""")


def blocking(violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [v for v in violations if v["impact"] in BLOCKING]
