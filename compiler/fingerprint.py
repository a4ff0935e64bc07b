"""A crop of the screen as text: a small grayscale thumbnail in hex and a
64-bit difference hash, so a skill stays text-only yet can compare looks."""

from __future__ import annotations

import io

from PIL import Image

THUMB = 8


def fingerprint(png: bytes) -> dict[str, object] | None:
    try:
        with Image.open(io.BytesIO(png)) as img:
            gray = img.convert("L")
            size = [gray.width, gray.height]
            thumb = gray.resize((THUMB, THUMB), Image.Resampling.BOX)
            wide = gray.resize((THUMB + 1, THUMB), Image.Resampling.BOX)
    except Exception:  # an unreadable crop is simply not evidence
        return None
    px = list(wide.tobytes())
    bits = 0
    for row in range(THUMB):
        for col in range(THUMB):
            left, right = px[row * (THUMB + 1) + col], px[row * (THUMB + 1) + col + 1]
            bits = (bits << 1) | (1 if left > right else 0)
    return {"thumb": thumb.tobytes().hex(), "dhash": f"{bits:016x}", "size": size}


def hamming(a: str, b: str) -> int:
    return bin(int(a, 16) ^ int(b, 16)).count("1")
