"""Building hand-made recordings for compiler tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from compiler.recording import Recording, parse_recording

FIXTURES = Path(__file__).parent / "fixtures"
EXPENSE = FIXTURES / "recordings" / "expense-report"


def load_fixture(folder: Path = EXPENSE) -> Recording:
    frames = {f"frames/{p.name}": p.read_bytes() for p in sorted(folder.glob("frames/*.png"))}
    return parse_recording((folder / "events.jsonl").read_text(encoding="utf-8"), frames)


def target(name: str, tag: str = "button", role: str = "button", **kw: Any) -> dict[str, Any]:
    t = {"tag": tag, "role": role, "name": name, "text": name if tag == "button" else None,
         "css": f"#{name.lower().replace(' ', '-')}", "xpath": f"//*[@id='{name}']", "attrs": {}}
    t.update(kw)
    return t


def recording(events: list[dict[str, Any]], name: str = "Test task",
              url: str = "https://app.example.com/") -> Recording:
    lines = [{"v": 1, "seq": 0, "t": 0, "type": "start", "name": name, "url": url,
              "screen": {"w": 1280, "h": 800}, "recorder": "test"}]
    t = 0
    for i, e in enumerate(events, 1):
        t = e.pop("t", t + 1000)
        lines.append({"v": 1, "seq": i, "t": t, **e})
    return parse_recording("".join(json.dumps(x) + "\n" for x in lines))


ENVIRONMENTS = [("UTC", "C", "0"), ("Asia/Kolkata", "C.UTF-8", "1"), ("America/Los_Angeles", "POSIX", "4242"),
                ("Pacific/Chatham", "", "random")]


def digests_everywhere(script: str) -> set[str]:
    """What ``script`` prints, run under each timezone, locale and hash seed:
    one digest when the output is deterministic."""
    digests = set()
    for tz, lang, seed in ENVIRONMENTS:
        env = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL")}
        env.update(TZ=tz, LANG=lang, LC_ALL=lang, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                             check=True)
        digests.add(out.stdout.strip())
    return digests
