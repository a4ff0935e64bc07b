"""How a replay stops on purpose: ``Halt``, its message naming the step, and
``plain`` for the step's words in it.

Its own module so that every part of the replay (teachd.runner.replay and
the locate, perform and desktop_step modules it is split into) raises the
same error without importing the executor, and without Playwright.
"""

from __future__ import annotations

from teachd.core.errors import TeachdError


def plain(text: str) -> str:
    """Markdown emphasis off, for a terminal line."""
    return text.replace("**", "").replace("\\", "")


class Halt(TeachdError):
    """The replay stopped on purpose; the message names the step."""

