"""Looks at the page that cost as few round trips as they can.

A replay step's overhead over a hand-written script is mostly round trips to
the browser (each a few milliseconds on a busy machine), not work: finding a
target asks several locators, and settling after typing looks at the field a
few times. Two helpers cut them without changing what is asked:

- ``evaluate_each`` sends one evaluation per locator *together* and waits for
  all answers, instead of one after another. The sync API has no public way
  to do that, so it uses Playwright's own async objects behind the sync ones
  (``_impl_obj``, ``_sync``), and falls back to one at a time when a
  Playwright release no longer has them.
- ``look`` evaluates on the one element a locator names in a single trip
  (``Locator.evaluate`` takes three: find, evaluate, release); when the
  element is not there alone, it asks as ``Locator.evaluate`` does, waiting.
  Given a CSS selector naming the target, it first asks the document itself
  (``evaluate``), which needs none of Playwright's injected scripts in the
  page's world: on a page just reached that saves their start-up (tens of
  milliseconds), which the action on the target pays once already in its
  own world.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Error as PlaywrightError

if TYPE_CHECKING:
    from playwright.sync_api import Frame, Locator, Page


def evaluate_each(locators: Sequence[Locator], js: str, arg: Any = None) -> list[Any]:
    """``[loc.evaluate_all(js, arg) for loc in locators]``, sent at once; a
    locator that fails gives its ``PlaywrightError`` in its place."""
    if len(locators) > 1:
        try:
            impls = [loc._impl_obj for loc in locators]
            run = locators[0]._sync
        except AttributeError:
            pass
        else:
            async def together() -> list[Any]:
                return await asyncio.gather(*(i.evaluate_all(js, arg) for i in impls), return_exceptions=True)

            answers: list[Any] = run(together())
            for answer in answers:  # anything but a page's own error is the caller's problem
                if isinstance(answer, BaseException) and not isinstance(answer, PlaywrightError):
                    raise answer
            return answers
    out: list[Any] = []
    for loc in locators:
        try:
            out.append(loc.evaluate_all(js, arg))
        except PlaywrightError as exc:
            out.append(exc)
    return out


# The elements a CSS selector names in the document and its open shadow
# roots (as Playwright's CSS does), asked without a selector engine; throws
# on a selector the page cannot parse.
BY_CSS = """(css) => {
  const roots = [document];
  for (let i = 0; i < roots.length; i++)
    for (const el of roots[i].querySelectorAll("*")) if (el.shadowRoot) roots.push(el.shadowRoot);
  return roots.flatMap((r) => Array.from(r.querySelectorAll(css)));
}"""
SHOWN_BY_CSS = """(css) => (""" + BY_CSS + """)(css).filter((el) => {
  const r = el.getBoundingClientRect(), s = getComputedStyle(el);
  return (r.width > 0 || r.height > 0) && s.visibility !== "hidden" && s.display !== "none";
})"""


def look(target: Locator, js: str, arg: Any = None, timeout: float | None = None,
         by_css: tuple[Page | Frame, str] | None = None) -> Any:
    """``target.evaluate(js, arg)`` in one round trip when exactly one element
    answers. ``by_css``: where the target is and a CSS selector naming it
    alone, asked first as a plain evaluation: a document reached since the
    last look then needs no selector engine of its own for it."""
    if by_css is not None:
        root, css = by_css
        try:
            one = root.evaluate(f"([css, arg]) => {{ const els = ({SHOWN_BY_CSS})(css);"
                                f" return els.length === 1 ? [({js})(els[0], arg)] : null; }}", [css, arg])
        except PlaywrightError:
            one = None
        if one is not None:
            return one[0]
    one = target.evaluate_all(f"(els, arg) => els.length === 1 ? [({js})(els[0], arg)] : null", arg)
    if one is None:
        return target.evaluate(js, arg, timeout=timeout)
    return one[0]
