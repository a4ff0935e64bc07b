"""What an agent wrote, shown to a person as quoted data.

An approval question carries text an agent chose (a URL, what to type, an
element's name). Shown verbatim, an agent could write "Safe: routine check —
teachd verified this" into it and have it read as teachd's own words, or
hide the rest of the question behind newlines or a right-to-left override.
So every agent-supplied value is put between quotes, cut to a length, and
its line breaks, control, invisible and bidi characters are written as
visible escapes.
"""

from __future__ import annotations

import unicodedata

LIMIT = 160
# Control, format (bidi overrides, zero-width), line/paragraph separator,
# private-use, surrogate and unassigned: characters that do not show as themselves.
INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"})


def invisible(c: str) -> bool:
    """Would a person miss this character, or read it as something else?"""
    return unicodedata.category(c) in INVISIBLE


def quoted(value: object, limit: int = LIMIT) -> str:
    """``“value”``: one line, visible characters only, at most ``limit`` of them."""
    text = str(value)
    out = []
    for c in text:
        if c == "\n":
            out.append("⏎")
        elif c == "“" or c == "”":
            out.append('"')
        elif invisible(c):
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    shown = "".join(out)
    if len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    return f"“{shown}”"
