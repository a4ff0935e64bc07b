"""Does the element a locator found agree with what was demonstrated?

Pure functions over two descriptions. A halt is always better than a wrong
click: several agreeing candidates is ambiguity, none is "not found".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

STRONG = frozenset({"test_id", "id"})  # identities a page author chose on purpose


def words(text: str | None) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", (text or "").lower()))


def similar(a: str | None, b: str | None) -> bool:
    """Same words, or one's words all within the other's ("Amount" ~ "Total amount")."""
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return False
    return wa <= wb or wb <= wa


def agrees(expect: Mapping[str, Any], found: Mapping[str, Any], via: set[str]) -> tuple[bool, str]:
    tag, ftag = expect.get("tag"), (found.get("tag") or "").lower()
    if tag and ftag and tag != ftag:
        return False, f"is a <{ftag}>, expected <{tag}>"
    role, frole = expect.get("role"), found.get("role")
    if role and frole and role != frole:
        return False, f"has role {frole}, expected {role}"
    etype, ftype = expect.get("type"), (found.get("attrs") or {}).get("type")
    if etype and ftype and etype.lower() != str(ftype).lower():
        return False, f"is type {ftype}, expected {etype}"
    names = [expect.get(k) for k in ("name", "label", "text") if expect.get(k)]
    found_names = [found.get(k) for k in ("name", "label", "text") if found.get(k)]
    if not names:
        return True, "agrees"
    if any(similar(a, b) for a in names for b in found_names):
        return True, "agrees"
    if via & STRONG:
        return True, "agrees by its stable id (its label changed)"
    shown = found_names[0] if found_names else "no name"
    return False, f"is named {shown!r}, expected {names[0]!r}"


@dataclass
class Candidate:
    identity: int
    via: set[str]
    found: dict[str, Any]


@dataclass
class Choice:
    identity: int | None
    reason: str
    via: tuple[str, ...] = ()


def choose(expect: Mapping[str, Any], candidates: Sequence[Candidate],
           ambiguous: Sequence[str]) -> Choice:
    """Pick the one element every piece of evidence points to, or explain why not."""
    agreeing = []
    refused = []
    for c in candidates:
        ok, why = agrees(expect, c.found, c.via)
        (agreeing if ok else refused).append((c, why))
    if len(agreeing) == 1:
        c = agreeing[0][0]
        return Choice(c.identity, "found", tuple(sorted(c.via)))
    if len(agreeing) > 1:
        return Choice(None, f"ambiguous: {len(agreeing)} different elements match")
    if refused:
        return Choice(None, "the element found " + "; ".join(why for _, why in refused[:2]))
    if ambiguous:
        return Choice(None, f"ambiguous: several elements match by {', '.join(ambiguous)}")
    return Choice(None, "not found on the page")
