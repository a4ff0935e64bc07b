"""The recorder's failures. Plain exceptions, cheap to import: teachd maps
them to its own tree in one place (``teachd.errors.component_errors``)."""

from __future__ import annotations


def first_line(exc: BaseException) -> str:
    """A component's failure in one line: the first line of what it said (a
    Playwright or psycopg message runs on with call logs), else its kind."""
    said = str(exc).strip()
    return said.splitlines()[0] if said else type(exc).__name__


class RecorderError(RuntimeError):
    """The recording could not be made (Chromium did not start, the page did not open)."""


class BrowserMissing(RecorderError):
    """No Chromium where it was looked for."""


class NoDisplay(RecorderError):
    """A visible browser was asked for, and there is no display to show it on."""
