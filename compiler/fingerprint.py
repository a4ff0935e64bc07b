"""A crop of the screen as text: a small grayscale thumbnail in hex and a
64-bit difference hash, so a skill stays text-only yet can compare looks."""

from __future__ import annotations

import io

from PIL import Image

THUMB = 8


def fingerprint_image(img: Image.Image) -> dict[str, object]:
    gray = img.convert("L")
    thumb = gray.resize((THUMB, THUMB), Image.Resampling.BOX)
    px = gray.resize((THUMB + 1, THUMB), Image.Resampling.BOX).tobytes()
    bits = 0
    for row in range(THUMB):
        for col in range(THUMB):
            left, right = px[row * (THUMB + 1) + col], px[row * (THUMB + 1) + col + 1]
            bits = (bits << 1) | (1 if left > right else 0)
    return {"thumb": thumb.tobytes().hex(), "dhash": f"{bits:016x}", "size": [gray.width, gray.height]}


def fingerprint(png: bytes) -> dict[str, object] | None:
    try:
        with Image.open(io.BytesIO(png)) as img:
            return fingerprint_image(img)
    except Exception:  # an unreadable crop is simply not evidence
        return None
