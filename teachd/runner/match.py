"""Does the element a locator found agree with what was demonstrated?

Pure functions over two descriptions. A halt is always better than a wrong
click, so agreement is earned, not assumed:

- a name agrees when it is the demonstrated one (case and spacing aside) or
  when it kept every demonstrated word and gained some ("Amount" → "Total
  amount"); a name that *lost* words ("Add" for "Add group") never agrees —
  the missing words are what told the two apart;
- the element must live where it lived: the same list, form, dialog or
  landmark (an option of "Chosen" is not an option of "Available"); an
  unnamed table only laid the page out, and is no such place;
- a link must lead where it led, unless a stable id or test id vouches;
- a control may change its tag across an upgrade (``<input type=submit
  value=Create>`` → ``<button>Create</button>``) only keeping its role, its
  exact name and its container; a link that became a button (or back) may
  have gained words, in the same container, scoring below any exact match;
- an icon-only control (no name demonstrated) is known by its icon: the same
  symbol, title or icon class in the same container — it may have gained a
  name ("More actions"); another icon is another control;
- a field nothing names is known by the heading above it ("Notes");
- a control the same in every row or card ("Delete", a rename icon) is
  known by its record: the row's or card's own name must be the demonstrated
  one — a record is never told by its place in the list;
- every visible match of every locator is a candidate; the best agreement
  wins, a stable identity breaks a tie, position never does, nor does it
  stand alone: an element found only by where it sat (its CSS or XPath path)
  is not taken; a tie left is ambiguity, and ambiguity halts.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compiler.names import item_noun, words
from compiler.scope import link_shape

# Identities a page author chose on purpose: they vouch for an element whose
# visible name changed (a relabel, a translation).
STRONG = frozenset({"test_id", "id", "attr:name", "attr:value"})
AUTHORED = frozenset({"test_id", "id"})  # the strongest: they vouch even across a change of tag and role
POSITIONAL = frozenset({"css", "xpath"})  # where an element sat: never who it is
EXACT, GAINED, NONE = 3, 2, 0
# A link that became a button (or back) whose name gained words: accepted,
# below any element that agrees better (a GAINED name of the same role wins).
SWAPPED_GAINED = 1.5
_CLICKABLE = frozenset({"link", "button"})  # a link that became a button is still the target
# Icon class tokens that say "an icon" or how it is drawn, not which icon:
# sharing one of these proves nothing (every icon of the set has it).
_GENERIC_ICON_CLASS = re.compile(
    r"^(fa[srlbdt]?|fa-(solid|regular|light|thin|duotone|brands|fw|lg|sm|xs|xl|\dx)|bi|icon|icons|"
    r"svg-inline--fa|material-icons(-\w+)?|material-symbols(-\w+)?|lucide|feather|glyphicon|octicon|"
    r"ui-icon|dashicons|icon-(btn|button|sm|lg|xs|xl)|.*-(btn|button)|btn.*)$")


def name_score(expected: str | None, found: str | None) -> int:
    """EXACT, GAINED (every demonstrated word kept, some added) or NONE."""
    want, got = words(expected), words(found)
    if not want or not got:
        return NONE
    if want == got:
        return EXACT
    kept = not Counter(want) - Counter(got)
    return GAINED if kept and len(got) > len(want) else NONE


def names_of(d: Mapping[str, Any]) -> list[str]:
    return [str(d[k]) for k in ("name", "label", "text") if d.get(k)]


def best_name_score(expect: Mapping[str, Any], found: Mapping[str, Any]) -> int:
    return max((name_score(a, b) for a in names_of(expect) for b in names_of(found)), default=NONE)


_UNNAMED = {"main": "the page's main area", "navigation": "the navigation", "banner": "the page's header",
            "contentinfo": "the page's footer", "dialog": "a dialog around it"}


def _container_text(box: Mapping[str, Any]) -> str:
    """The container a person would name: by its name, else by what it is ("a form around it")."""
    name, role = box.get("name") or box.get("id") or "", str(box.get("role") or "")
    return f"the {role} {name!r}" if name else _UNNAMED.get(role, f"a {role or 'group'} around it")


AGREE, RENAMED, ELSEWHERE = "agree", "renamed", "elsewhere"
_LAYOUT = frozenset({"table"})  # containers that say how a page is laid out, not what a control is


def container_agrees(expected: Mapping[str, Any] | None,
                     found_chain: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """Is the demonstrated container among the found element's own
    containers? AGREE: same role and name (or the same id); RENAMED: a
    container of that role whose name changed (a translation — only a stable
    identity of the element itself can vouch then); ELSEWHERE: none."""
    if not expected:
        return AGREE, ""
    role = expected.get("role")
    if role in _LAYOUT and not expected.get("name") and not expected.get("id"):
        return AGREE, ""  # an unnamed table only laid the page out: a control moved to a section is the same
    renamed = None
    for box in found_chain:
        if box.get("role") != role and not {box.get("role"), role} <= {"listbox", "combobox"}:
            continue
        if expected.get("id") and expected.get("id") == box.get("id"):
            return AGREE, ""
        if not expected.get("name"):
            return AGREE, ""  # an unnamed landmark: its role is all there was to match
        if box.get("name") and name_score(expected["name"], box["name"]) != NONE:
            return AGREE, ""
        renamed = renamed or box
    where = _container_text(renamed or found_chain[0]) if (renamed or found_chain) \
        else "no list, form or landmark"
    return (RENAMED if renamed else ELSEWHERE), f"is in {where}, expected in {_container_text(expected)}"


def item_agrees(expected: Mapping[str, Any] | None, found: Mapping[str, Any] | None) -> str | None:
    """Why the found control is not on the demonstrated record (the row or
    card named ``expected["name"]``); None when it is, or when the control
    was not one repeated in every record. The record's name must be the
    same words: "Bravo" is not "Bravo copy"."""
    if not expected or not expected.get("name"):
        return None
    want = _item_text(expected)
    if not found or not found.get("name"):
        return f"is on no row or card like {want}"
    if words(_unnumbered(found["name"])) != words(_unnumbered(expected["name"])):
        return f"is on {_item_text(found)}, expected on {want}"
    return None


# A list's own numbering before a record's name ("2. bravo-study", "#14 — Invoices"): its place or id
# in this store, data like an id in an address, never part of which record it is.
_NUMBERED = re.compile(r"^\s*#?\d+\s*[.):—–-]\s+(?=\S)")


def _unnumbered(name: object) -> str:
    return _NUMBERED.sub("", str(name), count=1)


def _item_text(item: Mapping[str, Any]) -> str:
    return f"the {item_noun(item.get('tag'))} {item.get('name')!r}"


@dataclass
class Verdict:
    score: float  # 0: refused
    reason: str


def _icon_tokens(icon: Mapping[str, Any]) -> set[str]:
    return {str(c) for c in icon.get("classes") or [] if c and not _GENERIC_ICON_CLASS.match(str(c))}


def icon_agrees(expected: Mapping[str, Any] | None, found: Mapping[str, Any] | None) -> bool | None:
    """Is the found icon the demonstrated one? None when nothing was
    demonstrated to compare. A symbol decides when both have one, then a
    title, then a class token that names the icon (not one every icon has)."""
    if not expected:
        return None
    if not found:
        return False
    for key in ("symbol", "title"):
        want, got = str(expected.get(key) or "").strip(), str(found.get(key) or "").strip()
        if key == "symbol" and want.startswith("svg:") and got.startswith("svg:") and want != got:
            continue  # an inline drawing redrawn by an upgrade: its title or own class may still tell
        if want and got:
            return want == got if key == "symbol" else want.lower() == got.lower()
    return bool(_icon_tokens(expected) & _icon_tokens(found))


def _icon_only(expect: Mapping[str, Any], found: Mapping[str, Any]) -> Verdict:
    """A control demonstrated with no name at all: its icon and its place are
    the evidence; tag and type may have changed, and it may have gained a name."""
    role, frole = expect.get("role"), found.get("role")
    if role and frole and role != frole and not {role, frole} <= _CLICKABLE:
        return Verdict(NONE, f"has role {frole}, expected {role}")
    same = icon_agrees(expect.get("icon"), found.get("icon"))
    if not same:
        return Verdict(NONE, "shows another icon" if found.get("icon") else "shows no icon")
    place, why = container_agrees(expect.get("container"), found.get("containers") or [])
    if place != AGREE:
        return Verdict(NONE, why)
    return Verdict(GAINED if names_of(found) else EXACT, "agrees by its icon")


NAMED_ALONE = "named_alone"  # the runner's mark on evidence whose role and name were unique when recorded


def same_link(expect: Mapping[str, Any], href: str, fhref: str) -> bool:
    """Does a link leading to ``fhref`` lead where the demonstrated one did?
    The same address; or — where the link's name alone told it from every
    other link on its page (a record's own name, not "Edit" in every row) —
    the same kind of address, its ids, hashes and counters aside: the same
    names under new ids (another workspace, a re-created store) open the
    same record by its name. Where names repeat, only the address tells the
    rows apart, and it must be the very same."""
    return href == fhref or bool(expect.get(NAMED_ALONE)) and link_shape(href) == link_shape(fhref)


def agrees(expect: Mapping[str, Any], found: Mapping[str, Any], via: set[str]) -> Verdict:
    """How well one found element matches the demonstrated evidence."""
    if (other := item_agrees(expect.get("item"), found.get("item"))) is not None:
        return Verdict(NONE, other)
    heading, fheading = expect.get("heading"), found.get("heading")
    if heading and not names_of(expect) and words(heading) != words(fheading):
        return Verdict(NONE, f"is under the heading {fheading!r}, expected under {heading!r}" if fheading
                       else f"is under no heading, expected under {heading!r}")
    if expect.get("icon") and not names_of(expect):
        return _icon_only(expect, found)
    strong = bool(via & STRONG)
    role, frole = expect.get("role"), found.get("role")
    swapped = bool(role and frole and role != frole and {role, frole} <= _CLICKABLE)
    tag, ftag = expect.get("tag"), (found.get("tag") or "").lower()
    place, why = container_agrees(expect.get("container"), found.get("containers") or [])
    # Another tag, the same control: its role, its exact name and its
    # container kept (<input type=submit value=Create> → <button>Create</button>),
    # or its icon (a named control that kept its symbol).
    retagged = bool(tag and ftag and tag != ftag and not swapped and place == AGREE and (
        (role and role == frole and best_name_score(expect, found) == EXACT)
        or icon_agrees(expect.get("icon"), found.get("icon"))))
    # An identity the page's author chose (a test id, a stable id), unchanged
    # and in the same place, is the same control across a redesign that
    # changed its tag, role and name (an icon <span role=img> that became a
    # <button>Create</button>); anything that agrees better still wins (choose).
    # (An input's type is no redesign: a text field that became a password or
    # a checkbox is refused below, whatever vouches.)
    identified = bool(via & AUTHORED and place == AGREE)
    if tag and ftag and tag != ftag and not swapped and not retagged and not identified:
        return Verdict(NONE, f"is a <{ftag}>, expected <{tag}>")
    if role and frole and role != frole and not swapped and not retagged and not identified:
        return Verdict(NONE, f"has role {frole}, expected {role}")
    etype, ftype = expect.get("type"), (found.get("attrs") or {}).get("type")
    if identified and "input" in (tag, ftag):  # an <input> with no type is a text field
        etype = etype or (tag == "input" and "text") or tag
        ftype = ftype or (ftag == "input" and "text") or ftag
    if etype and ftype and etype.lower() != str(ftype).lower() and not swapped and not retagged:
        return Verdict(NONE, f"is type {ftype}, expected {etype}")
    href, fhref = expect.get("href"), (found.get("attrs") or {}).get("href")
    # An address vouches only when no id is in it: /items/3 on a reseeded
    # store is another record.
    vouched = strong or bool(href and fhref == href and "*" not in link_shape(href))
    if place == ELSEWHERE or (place == RENAMED and not vouched):
        return Verdict(NONE, why)
    if href and fhref and not same_link(expect, href, fhref) and not via & {"test_id", "id"}:
        return Verdict(NONE, f"leads to {fhref}, expected {href}")
    score = best_name_score(expect, found) if names_of(expect) else EXACT
    if swapped and score == GAINED and expect.get("container") and place == AGREE:
        return Verdict(SWAPPED_GAINED, "agrees (a link that became a button, or back; its name gained words)")
    if swapped and score != EXACT:
        return Verdict(NONE, f"is a {frole} named {(names_of(found) or ['nothing'])[0]!r}, "
                             f"expected the {role} {names_of(expect)[0]!r}")
    if score != NONE:
        return Verdict(score, "agrees")
    if vouched:
        return Verdict(1, "agrees by its stable identity (its name changed)")
    shown = names_of(found)[0] if names_of(found) else "no name"
    return Verdict(NONE, f"is named {shown!r}, expected {names_of(expect)[0]!r}")


@dataclass
class Candidate:
    identity: int
    via: set[str]
    found: dict[str, Any]
    handle: Any = None  # how the caller acts on it (a Locator), opaque here
    where: tuple[Any, int] | None = None  # (the locator, index) when found among several
    css: str | None = None  # a CSS selector naming it alone (the handle's), when it has one


@dataclass
class Choice:
    candidate: Candidate | None
    reason: str
    via: tuple[str, ...] = field(default_factory=tuple)


def choose(expect: Mapping[str, Any], candidates: Sequence[Candidate],
           ambiguous: Sequence[str]) -> Choice:
    """Pick the one element the evidence points to best, or explain why not."""
    scored = [(agrees(expect, c.found, c.via), c) for c in candidates]
    # Position (css, xpath) never breaks a tie; a stable identity does.
    agreeing = [((v.score, bool(c.via & STRONG)), c) for v, c in scored if v.score > NONE]
    if agreeing:
        top = max(rank for rank, _ in agreeing)
        best = [c for rank, c in agreeing if rank == top]
        # A class the page's author gave the demonstrated element (selector-add,
        # btn-publish) is a weaker identity than an id: it breaks a tie only
        # when exactly one of the tied elements still carries one of them.
        taught = set(expect.get("classes") or [])
        kept = best if len(best) == 1 else [c for c in best if taught & set(c.found.get("classes") or [])]
        if len(kept) != 1:
            return Choice(None, f"ambiguous: {len(best)} different elements match equally well")
        if kept[0].via <= POSITIONAL:
            # Nor does position name an element alone: a list in another order, a
            # page under a closing dialog's cover (no role's locator finds it there).
            return Choice(None, "found only by where it sat on the page (its "
                                f"{' and '.join(sorted(kept[0].via))} path), not by what it is")
        return Choice(kept[0], "found", tuple(sorted(kept[0].via)))
    refused = [v.reason for v, _ in scored]
    if refused:
        return Choice(None, "the element found " + "; ".join(refused[:2]))
    if ambiguous:
        return Choice(None, f"ambiguous: several elements match by {', '.join(ambiguous)}")
    return Choice(None, "not found on the page")


def as_taught(expect: Mapping[str, Any], found: Mapping[str, Any], via: set[str]) -> bool:
    """Found exactly as demonstrated: the same tag and role, the same name
    (or icon), where it lived, by the anchor's own locators (no loosened
    name). Only such a step may go ahead under a ``run`` approval: a
    drifted match is a deviation from the plan the person approved."""
    own = {label for label in via if not label.endswith("~")}
    if not own:
        return False  # found only by a loosened name
    for key in ("tag", "role"):
        want, got = expect.get(key), found.get(key)
        if want and got and str(want).lower() != str(got).lower():
            return False
    href, fhref = expect.get("href"), (found.get("attrs") or {}).get("href")
    if href and fhref and not same_link(expect, href, fhref):
        return False
    return agrees(expect, found, own).score == EXACT


_KEPT = {"test_id": "its test id", "id": "its id", "attr:name": "its field name", "attr:value": "its value"}


RELABELLED = "relabelled"  # a change kind: only its name differs, a strong identity still agrees


def change_kind(expect: Mapping[str, Any], found: Mapping[str, Any], via: set[str]) -> str:
    """What kind of change a found element shows, where one answer may cover
    the same change at later steps of a run (a relabelled app): ``relabelled``
    when only its visible name differs and an identity the page's author
    chose (a test id, an id, a field name) still agrees; else "" (each such
    step asks on its own)."""
    want, got = names_of(expect), names_of(found)
    if not (via & STRONG) or not want or not got or words(want[0]) == words(got[0]):
        return ""
    tag, ftag = str(expect.get("tag") or "").lower(), str(found.get("tag") or "").lower()
    href, fhref = expect.get("href"), (found.get("attrs") or {}).get("href")
    place, _why = container_agrees(expect.get("container"), found.get("containers") or [])
    if (tag and ftag and tag != ftag) or (expect.get("role") and found.get("role")
                                          and expect.get("role") != found.get("role")) \
            or (href and fhref and not same_link(expect, href, fhref)) or place != AGREE:
        return ""
    return RELABELLED


def what_changed(expect: Mapping[str, Any], found: Mapping[str, Any], via: set[str]) -> str:
    """How a found element differs from the demonstrated one, and what
    still agreed, in words ("its name 'Amount' is now 'Total amount' — still
    the same: its id, the form 'Report'"): the evidence a person needs to
    answer the question a changed step asks. Empty when nothing a person
    would see differs."""
    changed = []
    want, got = names_of(expect), names_of(found)
    if want and (not got or words(want[0]) != words(got[0])):
        changed.append(f"its name {want[0]!r} is now {got[0]!r}" if got else f"its name {want[0]!r} is gone")
    tag, ftag = str(expect.get("tag") or "").lower(), str(found.get("tag") or "").lower()
    if tag and ftag and tag != ftag:
        changed.append(f"it was a <{tag}>, now a <{ftag}>")
    role, frole = expect.get("role"), found.get("role")
    if role and frole and role != frole:
        changed.append(f"its role {role} is now {frole}")
    href, fhref = expect.get("href"), (found.get("attrs") or {}).get("href")
    if href and fhref and not same_link(expect, href, fhref):
        changed.append(f"it leads to {fhref}, it led to {href}")
    place, why = container_agrees(expect.get("container"), found.get("containers") or [])
    if place != AGREE:
        changed.append(f"it {why}")
    if via and all(label.endswith("~") for label in via):
        changed.append("it was found by a loosened name")
    if not changed:
        return ""
    kept = [_KEPT[label] for label in sorted(via & STRONG)]
    if place == AGREE and expect.get("container"):
        kept.append(_container_text(expect["container"]))
    return "; ".join(changed) + (f" — still the same: {', '.join(kept)}" if kept else "")
