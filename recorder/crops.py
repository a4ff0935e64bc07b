"""Screen crops around a clicked target, with every sensitive field blacked
out before a byte is written."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import Any

from PIL import Image, ImageDraw

MARGIN = 24


def crop_box(bbox: Mapping[str, Any], viewport: Mapping[str, Any], margin: int = MARGIN) -> dict[str, int]:
    """The target's box grown by a margin, clamped to the viewport (CSS px)."""
    vw, vh = int(viewport.get("w") or 0), int(viewport.get("h") or 0)
    x0 = max(0, int(float(bbox.get("x", 0))) - margin)
    y0 = max(0, int(float(bbox.get("y", 0))) - margin)
    x1 = int(float(bbox.get("x", 0)) + float(bbox.get("w", 0))) + margin
    y1 = int(float(bbox.get("y", 0)) + float(bbox.get("h", 0))) + margin
    if vw:
        x1 = min(x1, vw)
    if vh:
        y1 = min(y1, vh)
    return {"x": x0, "y": y0, "w": max(1, x1 - x0), "h": max(1, y1 - y0)}


def black_out(img: Image.Image, origin: Mapping[str, int], boxes: Iterable[Mapping[str, Any]],
              scale: float = 1.0) -> Image.Image:
    """Paint each box (viewport CSS px) black on a crop taken at ``origin``."""
    draw = ImageDraw.Draw(img)
    for b in boxes:
        x0 = (float(b.get("x", 0)) - origin["x"]) * scale
        y0 = (float(b.get("y", 0)) - origin["y"]) * scale
        x1 = x0 + float(b.get("w", 0)) * scale
        y1 = y0 + float(b.get("h", 0)) * scale
        if x1 < 0 or y1 < 0 or x0 > img.width or y0 > img.height:
            continue
        draw.rectangle([x0 - 2, y0 - 2, x1 + 2, y1 + 2], fill=0)
    return img


def to_png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False, compress_level=3)
    return buf.getvalue()


def grab_screen(region: Mapping[str, int]) -> Image.Image | None:
    """The region of the real screen (X display), or None when there is none."""
    try:
        import mss

        factory = getattr(mss, "MSS", None) or mss.mss
        with factory() as sct:
            screen = sct.monitors[0]
            left = max(int(region["x"]), screen["left"])
            top = max(int(region["y"]), screen["top"])
            right = min(int(region["x"]) + int(region["w"]), screen["left"] + screen["width"])
            bottom = min(int(region["y"]) + int(region["h"]), screen["top"] + screen["height"])
            if right <= left or bottom <= top:
                return None
            shot = sct.grab({"left": left, "top": top, "width": right - left, "height": bottom - top})
            return Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX")
    except Exception:  # no X server, or the region is gone
        return None
