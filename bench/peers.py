"""Two peer replayers, for side-by-side numbers with teachd on the same taught
recording (bench/rich_apps.py prints the table):

- ``codegen-style``: what Playwright's codegen would emit from the
  demonstration — one locator per step in codegen's order of preference
  (test id, role + name, placeholder, label, text, ``#id``, then the recorded
  CSS path), ``fill()`` for what was typed, ``click()`` for clicks, and no
  waiting beyond Playwright's own auto-wait (strict: a locator that matches
  two elements is an error, as in a generated script).
- ``coordinates``: a macro recorder's replay — a mouse click at the recorded
  x, y, the recorded text typed on the keyboard, at the demonstration's pace
  (each click no sooner after the previous one than it came in the
  demonstration), waiting for the page load a click caused in the
  demonstration.

Each is judged by the same app-state judge as teachd. A peer that stops on
an error (a timeout, a strict-mode violation) counts as halted; one that
runs to its end says "success" and the judge decides whether it was.

    .venv/bin/python bench/peers.py RECORDING_DIR --peer codegen-style [--password PW]

(replays against the app the recording was taught on, which must be running).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from recorder.browser import chromium_path  # noqa: E402

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page


@dataclass(frozen=True)
class Action:
    """One thing the person did, as a generated script replays it."""

    kind: str  # click | fill | key
    target: dict[str, Any]
    x: float = 0.0
    y: float = 0.0
    value: str | None = None  # None: masked (the secret is typed from the environment)
    navigates: bool = False  # the demonstration's next page followed this click
    t: float = 0.0  # ms since the demonstration started


def load(recording_dir: Path) -> tuple[str, list[Action]]:
    """The recording's start URL and its actions, in order."""
    events = [json.loads(line) for line in (recording_dir / "events.jsonl").read_text("utf-8").splitlines()
              if line.strip()]
    start = next(e["url"] for e in events if e["type"] == "start")
    actions: list[Action] = []
    for i, e in enumerate(events):
        target = e.get("target") or {}
        if e["type"] == "click":
            nxt = next((n for n in events[i + 1:] if n["type"] in ("click", "page", "key")), None)
            navigates = bool(nxt and nxt["type"] == "page" and nxt.get("url") != e.get("url"))
            actions.append(Action("click", target, float(e["x"]), float(e["y"]), navigates=navigates,
                                  t=float(e["t"])))
        elif e["type"] == "input" and target:
            actions.append(Action("fill", target, value=None if e.get("masked") else str(e.get("value", ""))))
        elif e["type"] == "key":
            actions.append(Action("key", target, value=str(e["key"])))
    return start, actions


def codegen_locator(page: Page, t: dict[str, Any]) -> Locator:
    """The locator codegen would have written for this target, as recorded at
    the moment of the action (the first candidate that was unique then)."""
    m, attrs = t.get("matches") or {}, t.get("attrs") or {}
    field = t.get("tag") in ("input", "select", "textarea")
    if t.get("test_id"):
        return page.get_by_test_id(t["test_id"])
    if t.get("role") and t.get("name") and m.get("role") == 1:
        return page.get_by_role(t["role"], name=t["name"])
    if attrs.get("placeholder"):
        return page.get_by_placeholder(attrs["placeholder"])
    if field and t.get("label") and m.get("label") == 1:
        return page.get_by_label(t["label"])
    if not field and t.get("text") and m.get("text") == 1:
        return page.get_by_text(t["text"])
    if t.get("id"):
        return page.locator(f"#{t['id']}")
    return page.locator(t["css"])


def run_codegen(page: Page, actions: list[Action], secret: str) -> None:
    for a in actions:
        if a.kind == "click":
            codegen_locator(page, a.target).click()
        elif a.kind == "fill":
            codegen_locator(page, a.target).fill(secret if a.value is None else a.value)
        elif a.kind == "key" and a.value:
            page.keyboard.press(a.value)


def run_coordinates(page: Page, actions: list[Action], secret: str, timeout_ms: float = 3000) -> None:
    last: tuple[float, float] | None = None  # (recorded t, monotonic s) of the previous click
    for a in actions:
        if a.kind == "click":
            if last is not None:  # the demonstration's pace, as a macro recorder keeps it
                time.sleep(max(0.0, min(5.0, (a.t - last[0]) / 1000 - (time.monotonic() - last[1]))))
            last = (a.t, time.monotonic())
            sx, sy = page.evaluate("[scrollX, scrollY]")
            if a.navigates:
                with page.expect_navigation(timeout=timeout_ms):
                    page.mouse.click(a.x - sx, a.y - sy)
            else:
                page.mouse.click(a.x - sx, a.y - sy)
        elif a.kind == "fill":
            page.keyboard.type(secret if a.value is None else a.value)
        elif a.kind == "key" and a.value:
            page.keyboard.press(a.value)


PEERS: dict[str, Callable[..., None]] = {"codegen-style": run_codegen, "coordinates": run_coordinates}


def replay_peer(peer: str, recording_dir: Path, secret: str, step_timeout: float = 3.0,
                start_url: str | None = None) -> tuple[str, str]:
    """Replay the recording the way ``peer`` does, headless Chromium at the
    recorder's viewport; ("success" | "failure", message)."""
    from playwright.sync_api import Error, sync_playwright

    start, actions = load(recording_dir)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(None, headless=True), headless=True)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
            page.set_default_timeout(step_timeout * 1000)
            page.goto(start_url or start)
            try:
                if peer == "coordinates":
                    run_coordinates(page, actions, secret, step_timeout * 1000)
                else:
                    PEERS[peer](page, actions, secret)
            except Error as exc:
                return "failure", str(exc).splitlines()[0][:200]
            # A generated script ends here; let the last click's request land before the browser closes.
            page.wait_for_timeout(300)
            page.wait_for_load_state()
            return "success", "ran to its end"
        finally:
            browser.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("recording_dir", type=Path)
    ap.add_argument("--peer", choices=sorted(PEERS), required=True)
    ap.add_argument("--password", default="", help="the masked field's value")
    ap.add_argument("--step-timeout", type=float, default=3.0)
    args = ap.parse_args()
    status, message = replay_peer(args.peer, args.recording_dir, args.password, args.step_timeout)
    print(json.dumps({"status": status, "message": message}))
    return 0 if status == "success" else 1


if __name__ == "__main__":
    sys.exit(main())
