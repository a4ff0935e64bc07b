"""Watching a replay as it happens: each step as it begins and ends (with its
duration and the evidence that found its target) and, for a person following
the run page, two pictures per step — the target as it was about to be acted
on (outlined; for a step whose question says what changed, taken before it
asks, so the question shows what was found), and the page after. Secrets
stay out of every picture: every password field, and every field this
replay typed a secret into, is painted over by the browser before the
picture is taken (Playwright's ``mask``), so no pixel of a secret reaches
the store."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

THUMB_WIDTH = 960  # pixels: a page after its step, small on the run page, readable enlarged
CROP_MARGIN = 24  # pixels of the page around the target in its crop
QUALITY = 70
SHOT_TIMEOUT_MS = 2000  # a picture is never worth stalling the replay for
OUTLINE, OUTLINE_COLOUR = 3, (225, 29, 72)  # the target's outline in its crop: pixels, a strong red
POINT = 6  # the radius of the mark where the act lands, in the crop's pixels


class StepObserver(Protocol):
    pictures: bool  # take before/after pictures (a cost: two screenshots a step)

    def step(self, result: dict[str, Any]) -> None:
        """A step began (``status: running``) or ended (ok, halted)."""

    def picture(self, n: int, kind: str, jpeg: bytes) -> None:
        """``kind``: ``before`` (the target's crop), ``after`` (the page), or
        ``demonstrated`` (the demonstration's crop of a changed step's target)."""

    def demonstration(self, crop: Mapping[str, str], geometry: Mapping[str, Any]) -> bytes | None:
        """The demonstration's crop of a target, where it is kept (``demonstrated_crop``)."""


def demonstrated_crop(recordings: Path, crop: Mapping[str, str],
                      geometry: Mapping[str, Any] | None = None) -> bytes | None:
    """A recorder's crop (``Anchor.crop``: a recording's id and a frame's
    name, checked again here) as JPEG, or None where the recording is gone
    (retention) or the reference names anything outside its folder. The
    crop was taken with every secret field blacked out (recorder.crops).
    With the anchor's ``geometry`` (its box, and that box relative to the
    viewport), the target is outlined in it as in this run's crop."""
    from PIL import Image

    from compiler.plan import crop_ref

    ref = crop_ref(crop)
    if ref is None:
        return None
    path = (recordings / ref["recording"] / ref["frame"]).resolve()
    if not path.is_relative_to(recordings.resolve()) or not path.is_file():
        return None
    try:
        with Image.open(path) as img:
            out = io.BytesIO()
            img.convert("RGB").save(out, "JPEG", quality=QUALITY)
            width = img.width
    except Exception:  # noqa: BLE001 — an unreadable crop is just not shown
        return None
    box = _target_in_crop(geometry or {}, width)
    return outlined(out.getvalue(), box) if box else out.getvalue()


def _target_in_crop(geometry: Mapping[str, Any], width: int) -> tuple[float, float, float, float] | None:
    """Where the target is in the recorder's crop of it, in the crop's pixels:
    the crop is its box grown by the recorder's margin, clamped to the
    viewport (recorder.crops.crop_box), at the page's pixel ratio."""
    from recorder.crops import crop_box

    box, rel = geometry.get("bbox"), geometry.get("viewport_rel")
    if not box or not rel or not rel.get("w") or not rel.get("h"):
        return None
    viewport = {"w": round(float(box["w"]) / float(rel["w"])), "h": round(float(box["h"]) / float(rel["h"]))}
    area = crop_box(box, viewport)
    scale = width / area["w"]
    return ((float(box["x"]) - area["x"]) * scale, (float(box["y"]) - area["y"]) * scale,
            float(box["w"]) * scale, float(box["h"]) * scale)


def _masks(page: Page, secret_fields: list[Locator]) -> list[Locator]:
    return [page.locator("input[type=password]"), *secret_fields]


def crop(page: Page, target: Locator, secret_fields: list[Locator]) -> bytes | None:
    """The target with a margin of its page, or None when it cannot be seen."""
    try:
        box = target.bounding_box(timeout=SHOT_TIMEOUT_MS)
        if not box or box["width"] <= 0 or box["height"] <= 0:
            return None
        view = page.viewport_size or {"width": 1280, "height": 800}
        x, y = max(0.0, box["x"] - CROP_MARGIN), max(0.0, box["y"] - CROP_MARGIN)
        w = min(box["width"] + 2 * CROP_MARGIN, view["width"] - x)
        h = min(box["height"] + 2 * CROP_MARGIN, view["height"] - y, 400)
        if w <= 0 or h <= 0:
            return None
        clip = {"x": x, "y": y, "width": w, "height": h}
        raw = page.screenshot(type="jpeg", quality=QUALITY, clip=clip,  # type: ignore[arg-type]
                              mask=_masks(page, secret_fields), timeout=SHOT_TIMEOUT_MS,
                              animations="disabled")
    except Exception:  # noqa: BLE001 — a picture that cannot be taken is just not shown
        return None
    return outlined(raw, (box["x"] - x, box["y"] - y, box["width"], box["height"]))


def outlined(jpeg: bytes, box: tuple[float, float, float, float]) -> bytes:
    """The crop with the target outlined (``box``: x, y, width, height in the
    crop's pixels) and the point the act lands on marked, so a person sees at
    once which element it is, and where."""
    from PIL import Image, ImageDraw

    image = Image.open(io.BytesIO(jpeg)).convert("RGB")
    x, y, w, h = box
    draw = ImageDraw.Draw(image)
    draw.rectangle([x - OUTLINE, y - OUTLINE, x + w + OUTLINE - 1, y + h + OUTLINE - 1],
                   outline=OUTLINE_COLOUR, width=OUTLINE)
    cx, cy = x + w / 2, y + h / 2  # where the act lands: Playwright's point, the target's middle
    draw.ellipse([cx - POINT, cy - POINT, cx + POINT, cy + POINT], fill=OUTLINE_COLOUR,
                 outline=(255, 255, 255), width=2)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=QUALITY)
    return out.getvalue()


def thumbnail(page: Page, secret_fields: list[Locator], width: int | None = THUMB_WIDTH) -> bytes | None:
    """The visible page, scaled down to ``width`` (None: as it is, a pixel for
    each of its CSS pixels at the replay's scale)."""
    from PIL import Image

    try:
        raw = page.screenshot(type="jpeg", quality=QUALITY, mask=_masks(page, secret_fields),
                              timeout=SHOT_TIMEOUT_MS, animations="disabled")
    except Exception:  # noqa: BLE001
        return None
    image: Image.Image = Image.open(io.BytesIO(raw))
    if width is not None and image.width > width:
        image = image.resize((width, round(image.height * width / image.width)))
    out = io.BytesIO()
    image.convert("RGB").save(out, "JPEG", quality=QUALITY)
    return out.getvalue()
