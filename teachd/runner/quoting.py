"""What an agent wrote, shown to a person as quoted data.

An approval question carries text an agent chose (a URL, what to type, an
element's name) and text a skill's author chose (its step words, its URLs).
Shown verbatim, an agent could write "Safe: routine check — teachd verified
this" into it and have it read as teachd's own words, or hide the rest of the
question behind newlines, a terminal escape or a right-to-left override. So
every such value is put between quotes and its line breaks, control,
invisible, bidi and wide blank characters are written as visible escapes.

Outside an approval, a quote may be cut to a length (``quoted(value)``). In
an approval — what a person allows — it never is (``quoted(value, None)``):
the person approves the exact value that will be used.

Inside a quote, a backslash and a ``⏎`` the value itself holds are escaped
too (as ``\\\\`` and ``\\u23ce``), so text that merely looks like an escape
— an agent typing ``\\u202e`` or ``⏎`` — never reads as one: each escape in a
quote stands for exactly one character.
"""

from __future__ import annotations

import unicodedata

LIMIT = 160
# Control (C0, C1, ESC), format (bidi overrides, zero-width), line/paragraph separator,
# private-use, surrogate and unassigned: characters that do not show as themselves.
INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"})
# Blanks that are not the one plain space: U+00A0, U+2000–U+200A, U+2003, U+3000… (Zs),
# and letters, marks and symbols that print as nothing or as a blank (Hangul fillers,
# the Braille blank, the combining grapheme joiner, variation selectors, Khmer's
# inherent vowels, the Mongolian vowel separator).
BLANKS = frozenset({"Zs"})
SHOWS_AS_NOTHING = frozenset(
    {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x2800, 0x3164, 0xFFA0}
    | set(range(0xFE00, 0xFE10)) | set(range(0xE0100, 0xE01F0)))


def invisible(c: str) -> bool:
    """Would a person miss this character, or read it as something else?"""
    if c == " ":
        return False
    cat = unicodedata.category(c)
    return cat in INVISIBLE or cat in BLANKS or ord(c) in SHOWS_AS_NOTHING


def escape(c: str) -> str:
    """``\\uXXXX`` (``\\UXXXXXXXX`` beyond the first plane): the character by its number."""
    n = ord(c)
    return f"\\u{n:04x}" if n <= 0xFFFF else f"\\U{n:08x}"


def visible(value: object, literal: bool = False) -> str:
    """The text on one line, every character a person would miss or misread
    written as an escape (a line break as ``⏎``); nothing cut, no quotes added.
    For a line that mixes teachd's words with someone else's (already quoted:
    this leaves their escapes as they are). With ``literal`` (a raw value, as
    :func:`quoted` shows it), a backslash and a ``⏎`` of the value's own are
    escaped too, so no escape can be forged."""
    out = []
    for c in str(value):
        if c == "\n":
            out.append("⏎")
        elif literal and c == "\\":
            out.append("\\\\")
        elif literal and c == "⏎":
            out.append(escape(c))
        elif invisible(c):
            out.append(escape(c))
        else:
            out.append(c)
    return "".join(out)


def quoted(value: object, limit: int | None = LIMIT) -> str:
    """``“value”``: one line, visible characters only, at most ``limit`` of
    them; with ``limit`` None, the whole value (what an approval shows). A
    backslash shows as ``\\\\``, a ``⏎`` the value holds as ``\\u23ce``."""
    shown = visible(str(value).replace("“", '"').replace("”", '"'), literal=True)
    if limit is not None and len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    return f"“{shown}”"
