"""The picture matcher on drawn screens: found where it is, at another scale
and in another theme; a look-alike elsewhere or nothing alike is a refusal."""

from __future__ import annotations

from PIL import Image, ImageDraw, ImageFont, ImageOps

from teachd.runner.picture import NoMatch, PictureMatch, find


def keypad(size: tuple[int, int] = (420, 300), scale: float = 1.0, dark: bool = False,
           twice: bool = False) -> Image.Image:
    """A calculator's keys: 4×4 buttons with digits and operators."""
    img = Image.new("RGB", size, (235, 235, 235))
    d = ImageDraw.Draw(img)
    font = ImageFont.load_default(size=int(18 * scale))
    labels = "789/456*123-0.=+"
    for i, label in enumerate(labels):
        x, y = 20 + (i % 4) * int(60 * scale), 20 + (i // 4) * int(40 * scale)
        d.rounded_rectangle([x, y, x + int(50 * scale), y + int(32 * scale)], 4, outline=(90, 90, 90),
                            fill=(250, 250, 250), width=2)
        d.text((x + int(18 * scale), y + int(6 * scale)), label, fill=(20, 20, 20), font=font)
    if twice:  # a second window of the same app: the same keys again
        img.paste(img.crop((0, 0, 270, 190)), (size[0] - 280, size[1] - 200))
    return ImageOps.invert(img) if dark else img


def seven(scale: float = 1.0) -> tuple[Image.Image, tuple[int, int]]:
    """The crop around the "7" key as the recorder takes it, and the key's centre."""
    img = keypad()
    cx, cy = 20 + 25, 20 + 16
    return img.crop((cx - 40, cy - 20, cx + 40, cy + 20)), (cx, cy)


def test_the_crop_is_found_where_it_is() -> None:
    crop, (cx, cy) = seven()
    m = find(keypad(), crop)
    assert isinstance(m, PictureMatch) and abs(m.x - cx) <= 2 and abs(m.y - cy) <= 2
    assert m.score > 0.95 and m.score - m.runner_up >= 0.12


def test_a_larger_font_and_a_dark_theme_still_find_it() -> None:
    crop, _ = seven()
    big = find(keypad((560, 400), scale=1.25), crop)
    assert isinstance(big, PictureMatch) and big.scale in (1.1, 1.25) and abs(big.x - (20 + 31)) <= 6
    dark = find(keypad(dark=True), crop)
    assert isinstance(dark, PictureMatch) and abs(dark.x - 45) <= 2 and abs(dark.y - 36) <= 2


def test_a_look_alike_elsewhere_is_a_refusal_never_a_pick() -> None:
    crop, _ = seven()
    m = find(keypad((700, 480), twice=True), crop)
    assert isinstance(m, NoMatch) and "two places look like" in m.why


def test_a_screen_without_it_is_a_refusal() -> None:
    crop, _ = seven()
    blank = Image.new("RGB", (420, 300), (235, 235, 235))
    ImageDraw.Draw(blank).text((100, 100), "Settings", fill=(0, 0, 0))
    m = find(blank, crop)
    assert isinstance(m, NoMatch)
