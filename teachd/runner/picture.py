"""A demonstrated crop found again on a fresh screenshot, for the apps that
name nothing to accessibility (xcalc): the last evidence, so the strictest.

Matched on edges, not colours: a new theme repaints a button but leaves its
outline and its label's strokes where they were (a dark theme inverts the
colours, which plain correlation would read as the opposite picture). The
crop is tried at a few scales (a larger font, a HiDPI screen), scored by
normalized cross-correlation, and accepted only when the best place clearly
beats every other place — a look-alike elsewhere (a second window of the
same app, a decoy button) is a halt, never a coin toss. Pure: images in,
a place or why not out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

SCALES = (0.8, 0.9, 1.0, 1.1, 1.25, 1.5)
MIN_SCORE = 0.6  # below this nothing on the screen looks like the crop
MARGIN = 0.12  # the best must beat the best elsewhere by this much (a keypad's neighbour keys: 0.14+;
# an identical look-alike: 0)


@dataclass(frozen=True)
class PictureMatch:
    x: int  # centre of the match, in the screenshot's pixels
    y: int
    score: float
    runner_up: float
    scale: float


@dataclass(frozen=True)
class NoMatch:
    why: str
    ambiguous: bool = False  # two places look alike (not: nothing looks like it)


def edges(img: Image.Image) -> np.ndarray:
    """Gradient magnitude of the grey image: outlines and strokes, whatever their colours."""
    g = np.asarray(img.convert("L"), dtype=np.float64)
    dx = np.zeros_like(g)
    dy = np.zeros_like(g)
    dx[:, 1:-1] = g[:, 2:] - g[:, :-2]
    dy[1:-1, :] = g[2:, :] - g[:-2, :]
    return np.hypot(dx, dy)


def ncc(image: np.ndarray, template: np.ndarray) -> np.ndarray:
    """Normalized cross-correlation of ``template`` at every place it fits in ``image``."""
    th, tw = template.shape
    ih, iw = image.shape
    if th > ih or tw > iw:
        return np.zeros((0, 0))
    t = template - template.mean()
    tnorm = float(np.sqrt((t * t).sum()))
    if tnorm == 0:
        return np.zeros((ih - th + 1, iw - tw + 1))
    shape = (ih + th - 1, iw + tw - 1)
    corr = np.fft.irfft2(np.fft.rfft2(image, shape) * np.fft.rfft2(t[::-1, ::-1], shape), shape)
    corr = corr[th - 1:ih, tw - 1:iw]
    s1 = _window_sums(image, th, tw)
    s2 = _window_sums(image * image, th, tw)
    var = np.maximum(s2 - s1 * s1 / (th * tw), 0.0)
    denom = np.sqrt(var) * tnorm
    out = np.zeros_like(corr)
    np.divide(corr, denom, out=out, where=denom > 1e-6 * tnorm)
    return np.clip(out, -1.0, 1.0)


def _window_sums(a: np.ndarray, h: int, w: int) -> np.ndarray:
    c = np.pad(a, ((1, 0), (1, 0))).cumsum(0).cumsum(1)
    return c[h:, w:] - c[:-h, w:] - c[h:, :-w] + c[:-h, :-w]


def _inner(a: np.ndarray) -> np.ndarray:
    """The middle of a crop: the clicked widget's own face (its label, its icon),
    not the neighbours' outlines that every key of a keypad shares."""
    h, w = a.shape
    return a[h // 4:h - h // 4, w // 5:w - w // 5]


def find(screen: Image.Image, crop: Image.Image, scales: Sequence[float] = SCALES,
         min_score: float = MIN_SCORE, margin: float = MARGIN) -> PictureMatch | NoMatch:
    """The one place on ``screen`` that shows ``crop``, or why there is none.
    Places are found by the whole crop, then told apart by its middle."""
    target = edges(screen)
    found: list[tuple[float, float, int, int, float, int, int]] = []  # face, whole, x, y, scale, w, h
    for scale in scales:
        w, h = max(8, round(crop.width * scale)), max(8, round(crop.height * scale))
        tpl = edges(crop.resize((w, h), Image.Resampling.BILINEAR))
        scores = ncc(target, tpl)
        if scores.size == 0:
            continue
        face = _inner(tpl)
        fy, fx = h // 4, w // 5
        for _ in range(6):  # this scale's best places, each with its surroundings taken out
            i = int(np.argmax(scores))
            y, x = divmod(i, scores.shape[1])
            whole = float(scores[y, x])
            if whole < min_score / 2:
                break
            window = target[max(0, y + fy - 2):y + fy + face.shape[0] + 2,
                            max(0, x + fx - 2):x + fx + face.shape[1] + 2]
            local = ncc(window, face)
            found.append((float(local.max()) if local.size else 0.0, whole, x, y, scale, w, h))
            scores[max(0, y - h // 2):y + h // 2 + 1, max(0, x - w // 2):x + w // 2 + 1] = -1.0
    if not found:
        return NoMatch("nothing on the screen looks like the demonstrated picture")
    found.sort(key=lambda f: min(f[0], f[1]), reverse=True)
    best = found[0]
    score = min(best[0], best[1])
    if score < min_score:
        return NoMatch(f"nothing looks like the demonstrated picture (best {score:.2f})")
    bx, by = best[2] + best[5] // 2, best[3] + best[6] // 2
    elsewhere = [min(f[0], f[1]) for f in found[1:] if abs(f[2] + f[5] // 2 - bx) > best[5] // 4
                 or abs(f[3] + f[6] // 2 - by) > best[6] // 4]
    runner_up = max(elsewhere, default=0.0)
    if score - runner_up < margin:
        return NoMatch(f"two places look like the demonstrated picture ({score:.2f} and "
                       f"{runner_up:.2f}); stopping rather than guessing", ambiguous=True)
    return PictureMatch(bx, by, score, runner_up, best[4])
