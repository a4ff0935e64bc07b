"""Compile time for a 1,000-step recording (target: median ≤ 100 ms).

    .venv/bin/python bench/compile_1000_steps.py [--runs 20]

Builds a synthetic recording (clicks, typing, navigations, one masked
password, crops on every click) and prints a table of timings.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import time

from PIL import Image

from compiler.fingerprint import fingerprint
from compiler.recording import parse_recording
from compiler.skill import compile_recording
from teachd.skills.skillmd import render_skill_md


def synthetic(steps: int, recorder_fp: bool = True) -> tuple[str, dict[str, bytes]]:
    buf = io.BytesIO()
    Image.effect_noise((160, 60), 40).convert("RGB").save(buf, format="PNG")
    png = buf.getvalue()
    fp = fingerprint(png) if recorder_fp else None
    lines = [{"v": 1, "seq": 0, "t": 0, "type": "start", "name": "Bench task",
              "url": "https://app.example.com/", "screen": {"w": 1280, "h": 800}, "recorder": "bench"}]
    frames: dict[str, bytes] = {}
    seq = 1
    for i in range(steps):
        page = f"https://app.example.com/p{i // 10}"
        field = {"tag": "input", "role": "textbox", "name": f"Field {i}", "label": f"Field {i}",
                 "id": f"field-{i % 97}", "attrs": {"name": f"f{i}"}, "css": f"#f{i}",
                 "xpath": f"//*[@id='f{i}']", "bbox": {"x": 10, "y": i % 700, "w": 200, "h": 30},
                 "matches": {"role": 1, "label": 1, "attr": 1, "css": 1, "xpath": 1}}
        if i % 10 == 0:
            lines.append({"v": 1, "seq": seq, "t": seq * 50, "type": "page", "url": page,
                          "title": f"Page {i // 10}", "tab": 0})
            seq += 1
        if i % 2:
            name = f"frames/{seq:06d}.png"
            frames[name] = png
            lines.append({"v": 1, "seq": seq, "t": seq * 50, "type": "click", "url": page,
                          "target": {**field, "tag": "button", "role": "button"}, "frame": name,
                          **({"frame_fp": fp} if fp else {}),
                          "x": 1, "y": 1, "screen_x": 1, "screen_y": 1, "button": "left"})
        elif i == 4:
            lines.append({"v": 1, "seq": seq, "t": seq * 50, "type": "input",
                          "target": {**field, "attrs": {"type": "password"}}, "masked": True})
        else:
            lines.append({"v": 1, "seq": seq, "t": seq * 50, "type": "input", "target": field,
                          "value": f"value {i}"})
        seq += 1
    lines.append({"v": 1, "seq": seq, "t": seq * 50, "type": "stop", "reason": "bench"})
    return "".join(json.dumps(x) + "\n" for x in lines), frames


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--steps", type=int, default=1000)
    args = ap.parse_args()
    print("| recording | crop fingerprints | steps compiled | runs | median ms | p90 ms | min ms | target |")
    print("|---|---|---|---|---|---|---|---|")
    for recorder_fp in (True, False):
        text, frames = synthetic(args.steps, recorder_fp)
        times = []
        n_steps = 0
        for _ in range(args.runs):
            t0 = time.perf_counter()
            compiled = compile_recording(parse_recording(text, frames))
            compiled.files(render_skill_md)
            times.append((time.perf_counter() - t0) * 1000)
            n_steps = compiled.body.count("   - verify:")
        times.sort()
        p90 = times[min(len(times) - 1, int(len(times) * 0.9))]
        med = statistics.median(times)
        source = "from the recorder (frame_fp)" if recorder_fp else "decoded from PNG"
        verdict = "ok" if med <= 100 else "over"
        print(f"| {args.steps} actions, {len(frames)} crops | {source} | {n_steps} | {args.runs} | "
              f"{med:.1f} | {p90:.1f} | {times[0]:.1f} | ≤ 100 ms median: {verdict} |")


if __name__ == "__main__":
    main()
