"""Keeping a person's secrets theirs, and out of what an agent reads.

- ``without_secrets``: an environment with none of ``TEACHD_SECRET_*``, for
  every process that is not the daemon owner's own (another person's child,
  and every browser: Chromium never needs them).
- ``Scrubber``: the secret values typed in a run or session, replaced by
  ``[secret]`` in anything handed back (a snapshot, an error, a run record).
- ``SENSITIVE_FIELDS``: the CSS of fields whose value is a secret (password
  fields, the sensitive ``autocomplete`` kinds the recorder masks, and a field
  teachd typed a secret into, marked with ``data-teachd-secret``): their values
  are scrubbed from snapshots and their boxes masked in screenshots.

Pure Python: no Playwright import here (the helpers take a page-like object).
"""

from __future__ import annotations

import html
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

SECRET_PREFIX = "TEACHD_SECRET_"
MARK = "data-teachd-secret"  # set on a field teachd typed a secret into
SHOWN = "[secret]"
_AUTOCOMPLETE = ("current-password", "new-password", "one-time-code", "cc-number", "cc-csc", "cc-exp")
SENSITIVE_FIELDS = ", ".join(["input[type=password i]", f"[{MARK}]",
                              *(f"input[autocomplete~={a} i]" for a in _AUTOCOMPLETE)])
# The values now in sensitive fields, in every frame's document (open shadow roots included).
_VALUES_JS = ("css => { const out = []; const walk = (root) => {"
              " for (const e of root.querySelectorAll(css)) if (e.value) out.push(String(e.value));"
              " for (const h of root.querySelectorAll('*')) if (h.shadowRoot) walk(h.shadowRoot); };"
              " walk(document); return out; }")


def without_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """An environment with no ``TEACHD_SECRET_*``: for anyone's process but
    the daemon owner's own, and for every browser (their secrets are theirs)."""
    return {k: v for k, v in environ.items() if not k.upper().startswith(SECRET_PREFIX)}


class Scrubber:
    """The secret values of one run or session: whatever is handed back goes
    through ``scrub`` first, so a value typed once can never be read back —
    not from the page (a snapshot, a title, an address), not from an error."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._lock = threading.Lock()

    def remember(self, value: str) -> str:
        """Keep ``value`` (and the spellings a page would give it back in: in
        an address, in HTML) to scrub; returns it."""
        if value:
            with self._lock:
                self._values.update({value, quote(value, safe=""), quote_plus(value, safe=""),
                                     html.escape(value)})
        return value

    def __bool__(self) -> bool:
        return bool(self._values)

    def scrub(self, text: str, also: Iterable[str] = ()) -> str:
        """``text`` with every known value (and ``also``'s) replaced, longest first."""
        with self._lock:
            values = self._values | {v for v in also if v}
        for value in sorted(values, key=len, reverse=True):
            text = text.replace(value, SHOWN)
        return text

    def scrub_all(self, data: Any) -> Any:
        """Every string in a JSON-like structure, scrubbed."""
        if isinstance(data, str):
            return self.scrub(data)
        if isinstance(data, dict):
            return {k: self.scrub_all(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.scrub_all(v) for v in data]
        return data


def sensitive_values(page: Any) -> list[str]:
    """The values now in the page's sensitive fields, every frame (a frame
    that cannot be asked — gone, navigating — is skipped)."""
    out: list[str] = []
    for frame in page.frames:
        try:
            out += [str(v) for v in frame.evaluate(_VALUES_JS, SENSITIVE_FIELDS)]
        except Exception:  # a detached or navigating frame has nothing to read now
            continue
    return out


def sensitive_masks(page: Any) -> list[Any]:
    """Locators of every sensitive field in every frame, for ``screenshot(mask=...)``."""
    return [frame.locator(SENSITIVE_FIELDS) for frame in page.frames]
