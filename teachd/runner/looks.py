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
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Error as PlaywrightError

if TYPE_CHECKING:
    from playwright.sync_api import Locator


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


def look(target: Locator, js: str, arg: Any = None, timeout: float | None = None) -> Any:
    """``target.evaluate(js, arg)`` in one round trip when exactly one element answers."""
    one = target.evaluate_all(f"(els, arg) => els.length === 1 ? [({js})(els[0], arg)] : null", arg)
    if one is None:
        return target.evaluate(js, arg, timeout=timeout)
    return one[0]
