"""Recorder under load, through the real pipeline (page → capture script →
binding → writer → events.jsonl), headless Chromium, no display needed.

    .venv/bin/python bench/recorder_load.py [--burst-seconds 30] [--rate 200] [--minutes 10]

Phase 1: RATE synthetic events a second for BURST seconds (95% keys, 5% clicks
with crops): events dropped, and input-to-disk latency p50/p99 (from the
page's own clock when it fired the event to the moment the line is on disk).
Phase 2: a MINUTES-long recording at a human pace (a click or a keystroke
every 500 ms): the recorder process's CPU and RSS over time (RSS must stay
flat), and disk used per minute. Prints one table per phase.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from teachd.demo.sampleapp import SampleApp  # noqa: E402
from tests.desktop import Teach  # noqa: E402

GENERATOR = """([rate, seconds, clickEvery]) => new Promise((done) => {
  const box = document.createElement('div');
  box.innerHTML = "<button id='k'>0</button><button id='c'>0</button>";
  document.body.appendChild(box);
  const k = document.getElementById('k'), c = document.getElementById('c');
  let sent = 0; const total = Math.round(rate * seconds);
  const perTick = Math.max(1, Math.round(rate / 100)); const start = performance.now();
  const tick = () => {
    const due = Math.min(total, Math.round((performance.now() - start) / 1000 * rate));
    while (sent < due) {
      sent += 1;
      const stamp = String(Date.now());
      if (clickEvery && sent % clickEvery === 0) {
        c.textContent = stamp;
        c.dispatchEvent(new PointerEvent('pointerdown', {bubbles: true, clientX: 5, clientY: 5}));
      } else {
        k.textContent = stamp;
        k.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
      }
    }
    if (sent >= total) done(sent); else setTimeout(tick, 10);
  };
  tick();
})"""


def recorder_pids(pid: int) -> list[int]:
    """The recorder: the Python process and its Playwright driver (not Chromium)."""
    pids = [pid]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            comm, rest = stat.read_text().split("(", 1)[1].rsplit(")", 1)
        except OSError:
            continue
        if int(rest.split()[1]) == pid and "chrom" not in comm:
            pids.append(int(stat.parent.name))
    return pids


def rss_kb(pid: int, only: int | None = None) -> int:
    total = 0
    for p in ([only] if only else recorder_pids(pid)):
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total


def cpu_seconds(pid: int) -> float:
    total = 0
    for p in recorder_pids(pid):
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


class Tail:
    """Reads new lines of events.jsonl as they land, noting when."""

    def __init__(self, path: Path) -> None:
        self.path, self.pos, self.buf = path, 0, b""
        self.latencies: list[float] = []
        self.count = {"key": 0, "click": 0}

    def poll(self) -> None:
        with open(self.path, "rb") as fh:
            fh.seek(self.pos)
            data = fh.read()
        now = time.time() * 1000
        self.pos += len(data)
        self.buf += data
        *lines, self.buf = self.buf.split(b"\n")
        for line in lines:
            e = json.loads(line)
            if e["type"] in self.count:
                self.count[e["type"]] += 1
                text = (e.get("target") or {}).get("text") or ""
                if text.isdigit():
                    self.latencies.append(now - int(text))


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(len(s) * q))] if s else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--burst-seconds", type=float, default=30)
    ap.add_argument("--rate", type=float, default=200)
    ap.add_argument("--minutes", type=float, default=10)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    home = Path(tempfile.mkdtemp(prefix="teachd-bench-"))
    env = {**os.environ, "TEACHD_HOME": str(home), "TEACHD_OWNER": "bench"}
    with SampleApp(password="bench-pw") as app, sync_playwright() as pw:
        teach = Teach(env, "Load bench", app.url + "/login", "--headless", "--no-os-input")
        pid = teach.proc.pid
        browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{teach.cdp_port}")
        page = browser.contexts[0].pages[0]
        page.wait_for_selector("#email")
        tail = Tail(teach.recording_dir / "events.jsonl")
        # phase 1: burst
        page.evaluate(f"() => {{ window.__sent = null; ({GENERATOR})"
                      f"([{args.rate}, {args.burst_seconds}, 20]).then(n => window.__sent = n); }}")
        sent = None
        while sent is None:
            for _ in range(20):
                tail.poll()
                time.sleep(0.005)
            sent = page.evaluate("() => window.__sent")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            tail.poll()
            time.sleep(0.005)
        got = tail.count["key"] + tail.count["click"]
        print(f"\n### burst: {args.rate:.0f} events/s for {args.burst_seconds:.0f} s\n")
        print("| events sent | written | dropped | latency p50 ms | latency p99 ms | max ms |")
        print("|---|---|---|---|---|---|")
        print(f"| {sent} | {got} | {sent - got} | {statistics.median(tail.latencies):.1f} | "
              f"{pct(tail.latencies, 0.99):.1f} | {max(tail.latencies):.1f} |")
        if args.minutes <= 0:
            browser.close()
            subprocess.run([sys.executable, "-m", "teachd", "teach", "stop"], env=env, capture_output=True)
            teach.finish()
            return
        # phase 2: a long recording at a human pace
        base_disk = sum(p.stat().st_size for p in teach.recording_dir.rglob("*") if p.is_file())
        samples = []
        start, cpu0 = time.monotonic(), cpu_seconds(pid)
        total = args.minutes * 60
        page.evaluate("() => { window.__slow = setInterval(() => { const k = document.getElementById('k');"
                      " k.textContent = String(Date.now()); k.dispatchEvent(new KeyboardEvent('keydown',"
                      " {key: 'Enter', bubbles: true})); }, 500); }")
        clicks = 0
        while time.monotonic() - start < total:
            time.sleep(min(10, total / 20))
            page.click("#c")  # a real click, with its crop
            clicks += 1
            tail.poll()
            samples.append((time.monotonic() - start, rss_kb(pid), cpu_seconds(pid), rss_kb(pid, pid)))
        page.evaluate("() => clearInterval(window.__slow)")
        disk = sum(p.stat().st_size for p in teach.recording_dir.rglob("*") if p.is_file()) - base_disk
        browser.close()
        subprocess.run([sys.executable, "-m", "teachd", "teach", "stop"], env=env, capture_output=True)
        teach.finish()
        minutes = (time.monotonic() - start) / 60
        print(f"\n### long recording: {minutes:.1f} min at 2 keys/s plus a click with crop every "
              f"{min(10, total / 20):.0f} s\n")
        print("| elapsed s | RSS MB (Python + Playwright driver) | of which Python | CPU % (since last) |")
        print("|---|---|---|---|")
        prev_t, prev_cpu = 0.0, cpu0
        for when, rss, cpu, py in samples[:: max(1, len(samples) // 10)] + samples[-1:]:
            share = (cpu - prev_cpu) / max(1e-9, when - prev_t) * 100
            print(f"| {when:.0f} | {rss / 1024:.1f} | {py / 1024:.1f} | {share:.1f} |")
            prev_t, prev_cpu = when, cpu
        first, last = samples[0][1] / 1024, samples[-1][1] / 1024
        print(f"\nRSS first → last sample: {first:.1f} → {last:.1f} MB ({last - first:+.1f} MB); "
              f"disk {disk / 1024 / minutes:.1f} KB per minute ({clicks} crops); "
              f"average CPU {(samples[-1][2] - cpu0) / (minutes * 60) * 100:.1f}%")


if __name__ == "__main__":
    main()
