"""Anchors: for each target an ordered ladder of locators, most robust first,
each marked unique or not by what the recording saw; plus geometry and a text
fingerprint of its crop, so a replay can check it found the same thing."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from compiler.fingerprint import fingerprint
from compiler.generated import looks_generated
from compiler.names import describe, is_editable, item_noun, md_escape, words
from compiler.plan import Anchor, Locator, crop_ref
from compiler.secrets import MARK, mask_text, mask_url


def _css_str(value: str) -> str:
    return json.dumps(value)


def _clean(value: Any) -> str | None:
    if value is None or not str(value).strip():
        return None
    text = " ".join(str(value).split())
    masked, n = mask_text(text)
    return None if n else masked


def _href(target: Mapping[str, Any]) -> str | None:
    href = (target.get("attrs") or {}).get("href")
    if str(target.get("tag") or "").lower() != "a" or not href:
        return None
    masked, n = mask_url(str(href))
    return None if n or MARK in masked else masked


# Getting from an icon to its control, as the recorder did: the nearest
# ancestor that looks clickable or has the control's tag (recorder/capture.js
# CONTROL_MARKS, the same marks as XPath).
_CONTROL_ROLES = ("button", "link", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "switch",
                  "checkbox", "radio", "option", "combobox", "treeitem")
_CONTROL_XPATH = " or ".join(
    ["self::button", "self::a", "self::summary", *(f"@role='{r}'" for r in _CONTROL_ROLES),
     "(@tabindex and not(starts-with(@tabindex, '-')))", "@onclick", "@aria-haspopup", "@aria-expanded"])
_ICON_CSS = re.compile(r'^(use\[\*\|href\$="#[^"\\]{1,120}"\]|\.[A-Za-z_][A-Za-z0-9_-]{0,80})$')
_TAG = re.compile(r"^[a-z][a-z0-9-]{0,30}$")
_EDITOR_CSS = re.compile(r'^\[contenteditable\][^\\<>{};]{0,300}$')
_ASSOCIATED = ("labelledby", "aria-label")  # labels getByLabel finds on an editor


def icon_locator(target: Mapping[str, Any]) -> Locator | None:
    """The control found by its icon: the sprite symbol (or icon class) the
    recorder saw, then up to the nearest clickable ancestor, so the same icon
    in a <div> then in a <button> is found both times."""
    css, tag = target.get("icon_css"), str(target.get("tag") or "").lower()
    if not isinstance(css, str) or not _ICON_CSS.match(css) or not _TAG.match(tag) or mask_text(css)[1]:
        return None
    up = f"xpath=ancestor::*[{_CONTROL_XPATH} or self::{tag}][1]"
    return Locator("attr", attr="icon", css=f"css={css} >> {up}")


def _attr_locators(target: Mapping[str, Any], tag: str, editor: bool) -> list[Locator]:
    """The target found by an attribute its page gave it, in this order: its
    ``name``, an option's ``value`` (within its list when that has a stable
    id), a link's ``href``, a rich-text editor's own CSS; none that a secret
    was masked in."""
    attrs = target.get("attrs") or {}
    out: list[Locator] = []
    if v := _clean(attrs.get("name")):
        out.append(Locator("attr", attr="name", css=f"{tag}[name={_css_str(v)}]"))
    value = attrs.get("value")
    if tag == "option" and value is not None and not mask_text(str(value))[1]:
        box = target.get("container") or {}
        scope = f"[id={_css_str(box['id'])}] " if box.get("id") and not looks_generated(box["id"]) else ""
        out.append(Locator("attr", attr="value", css=f"{scope}option[value={_css_str(str(value))}]"))
    if href := _href(target):
        out.append(Locator("attr", attr="href", css=f"a[href={_css_str(href)}]"))
    css_editor = target.get("editor_css")
    if editor and isinstance(css_editor, str) and _EDITOR_CSS.match(css_editor) \
            and not mask_text(css_editor)[1]:
        out.append(Locator("attr", attr="editor", css=css_editor))
    return out


def ladder(target: Mapping[str, Any]) -> list[Locator]:
    """The target's locators, most robust first: test id, role and name,
    label, placeholder, the heading above a field nothing names, text, id,
    the attributes of ``_attr_locators``, its icon (only when nothing names
    it), CSS, XPath. Generated ids and anything
    a secret was masked in are left out; each is marked unique, not unique,
    or None (unknown) by the count of matches the recorder saw."""
    attrs = target.get("attrs") or {}
    tag = str(target.get("tag") or "*").lower()
    editor = is_editable(dict(target))
    out: list[Locator] = []

    if (v := _clean(target.get("test_id"))) and not looks_generated(v):
        out.append(Locator("test_id", value=v))
    role, name = _clean(target.get("role")), _clean(target.get("name"))
    if role and name:
        out.append(Locator("role", role=role, name=name))
    label = _clean(target.get("label"))
    if label and (not editor or target.get("label_source") in _ASSOCIATED):
        out.append(Locator("label", value=label))
    if v := _clean(attrs.get("placeholder")):
        out.append(Locator("placeholder", value=v))
    if (heading := _clean(target.get("heading"))) and not label:
        out.append(Locator("heading", value=heading))  # a field nothing names: the first after its heading
    text = None if editor else _clean(target.get("text"))  # an editor's text is what was typed
    if text and len(text) <= 80 and tag not in ("input", "textarea", "select"):
        out.append(Locator("text", value=text))
    ident = target.get("id")
    if ident and (v := _clean(ident)) and not looks_generated(v):
        out.append(Locator("id", value=v))
    out += _attr_locators(target, tag, editor)
    if not (role and name) and not label and not any(loc.by == "test_id" for loc in out):
        if icon := icon_locator(target):
            out.append(icon)
    if (css := target.get("css")) and not mask_text(str(css))[1]:
        out.append(Locator("css", value=str(css)))
    if (xpath := target.get("xpath")) and not mask_text(str(xpath))[1]:
        out.append(Locator("xpath", value=str(xpath)))
    matches = target.get("matches") or {}
    for loc in out:
        count = matches.get(loc.attr if loc.by == "attr" and loc.attr != "name" else loc.by)
        loc.unique = None if count is None else int(count) == 1
    return out


def mark_shared_locators(anchors: Mapping[str, Anchor]) -> None:
    """A locator two different targets of one page share is not unique."""
    seen: dict[tuple[str, tuple[Any, ...]], set[str]] = {}
    for aid, anchor in anchors.items():
        for loc in anchor.locators:
            seen.setdefault((anchor.page, loc.key()), set()).add(aid)
    for anchor in anchors.values():
        for loc in anchor.locators:
            if len(seen[(anchor.page, loc.key())]) > 1:
                loc.unique = False


def _rounded(box: Mapping[str, Any] | None) -> dict[str, float] | None:
    if not box:
        return None
    return {k: round(float(box.get(k, 0)), 1) for k in ("x", "y", "w", "h")}


def geometry(target: Mapping[str, Any], viewport: Mapping[str, Any]) -> dict[str, Any]:
    """Where the target was: its box (rounded to 0.1 px; None when unknown),
    that box relative to the viewport (4 places) when both are known, and its
    offset from its named ancestor when that has a box."""
    box = _rounded(target.get("bbox"))
    geo: dict[str, Any] = {"bbox": box}
    vw, vh = float(viewport.get("w") or 0), float(viewport.get("h") or 0)
    if box and vw and vh:
        geo["viewport_rel"] = {
            "x": round(box["x"] / vw, 4), "y": round(box["y"] / vh, 4),
            "w": round(box["w"] / vw, 4), "h": round(box["h"] / vh, 4),
        }
    ancestor = target.get("ancestor") or {}
    abox = _rounded(ancestor.get("bbox"))
    if box and abox:
        geo["ancestor"] = {
            "name": _clean(ancestor.get("name")) or "",
            "dx": round(box["x"] - abox["x"], 1), "dy": round(box["y"] - abox["y"], 1),
        }
    return geo


def item_evidence(target: Mapping[str, Any],
                  values: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """The record a control repeated in every row or card belongs to (its
    row's or card's own name: what tells "Delete" on Bravo from "Delete" on
    Charlie). A record the person named by typing earlier in the
    demonstration is the parameter's (``{{name}}``): a run with another value
    looks for the record it made."""
    box = target.get("item")
    if not isinstance(box, Mapping) or not (name := _clean(box.get("name"))):
        return None
    return {"tag": str(box.get("tag") or "div").lower(), "name": tied(name, values)[:80]}


def tied(name: str, values: Mapping[str, str] | None) -> str:
    """``{{param}}`` when ``name`` is, word for word, a value typed earlier
    (at least two letters or digits, not a number alone: "1" is no one's
    name); else the name as recorded."""
    for param, value in reversed(list((values or {}).items())):
        said = words(value)
        if said and said == words(name) and len("".join(said)) >= 2 and not "".join(said).isdigit():
            return "{{" + param + "}}"
    return name


TYPE_TO_CREATE = frozenset({"option", "menuitem", "menuitemcheckbox", "menuitemradio"})


def tie_typed(target: Mapping[str, Any], values: Mapping[str, str]) -> Mapping[str, Any]:
    """An option whose name holds, as whole words, a value typed just before
    (a type-to-create select's `Add "stage"`, or the option typed in full):
    its name is the parameter's (`Add "{{tags}}"`), so a run with another
    value picks the option that value made instead of halting half way.
    The most recent value wins; anything else is left as recorded."""
    if str(target.get("role") or "") not in TYPE_TO_CREATE or not values:
        return target
    param, value = list(values.items())[-1]  # the value typed last: into the list this option is of
    if len(value.strip()) < 3:
        return target
    typed = re.compile(r"(?<!\w)" + re.escape(value.strip()) + r"(?!\w)")
    if typed.search(str(target.get("name") or "")):
        out = dict(target)
        for key in ("name", "text"):
            if isinstance(out.get(key), str):
                out[key] = typed.sub("{{" + param + "}}", out[key])  # a parameter name is a word: no escapes
        return out
    return target


def with_item_locator(locators: list[Locator], expect: Mapping[str, Any]) -> list[Locator]:
    """An icon-only control on a record (nothing names it but its drawing):
    found through its record — the text of the record's name, then up to
    the nearest element holding such a control — before any path, so it is
    never known by its place alone. The evidence picks among the record's
    icons (the pen, not the bin)."""
    item, tag = expect.get("item"), str(expect.get("tag") or "")
    if not item or not _TAG.match(tag) or any(loc.by in ("role", "test_id", "label") for loc in locators):
        return locators
    at = next((i for i, loc in enumerate(locators) if loc.by in ("css", "xpath")), len(locators))
    return [*locators[:at], Locator("item", value=str(item["name"]), role=tag), *locators[at:]]


def on_item(expect: Mapping[str, Any]) -> str:
    """Which record's "Delete" a step acts on, in its words (the plan a
    person approves says so): `` on the card **Bravo**``, or nothing."""
    item = expect.get("item")
    return f" on the {item_noun(item['tag'])} **{md_escape(item['name'])}**" if item else ""


def container_evidence(target: Mapping[str, Any]) -> dict[str, str] | None:
    """Where the element lives: which list, form, dialog or landmark."""
    box = target.get("container")
    if not isinstance(box, Mapping) or not box.get("role"):
        return None
    out = {"role": str(box["role"])}
    if name := _clean(box.get("name")):
        out["name"] = name[:200]
    if (ident := _clean(box.get("id"))) and not looks_generated(ident):
        out["id"] = ident
    return out


def icon_evidence(target: Mapping[str, Any]) -> dict[str, Any] | None:
    """The icon a control shows, as capture.js's iconOf() reports it: sprite
    symbol (or an inline drawing's hash, ``svg:…``), title, icon classes
    (sorted, generated ones left out)."""
    icon = target.get("icon")
    if not isinstance(icon, Mapping):
        return None
    out: dict[str, Any] = {}
    symbol = icon.get("symbol")
    if isinstance(symbol, str) and symbol.startswith(("#", "svg:")) and (v := _clean(symbol)):
        out["symbol"] = v[:120]
    if v := _clean(icon.get("title")):
        out["title"] = v[:120]
    if kept := _tokens(icon.get("classes")):
        out["classes"] = kept[:8]
    return out or None


def _tokens(classes: Any) -> list[str]:
    """Class tokens, sorted, without ones a build made up."""
    if not isinstance(classes, list):
        return []
    cleaned = (_clean(x) for x in classes if isinstance(x, str))
    return sorted({c for c in cleaned if c and not looks_generated(c)})


def class_evidence(target: Mapping[str, Any]) -> list[str] | None:
    """The element's own class tokens a page author chose (an editor's
    ql-editor, Django's selector-add): a tie between look-alikes is broken
    by them, never by position."""
    return _tokens(target.get("classes"))[:6] or None


def evidence(target: Mapping[str, Any], values: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What else must agree when a locator matches: role, names, where it lives,
    for a link where it leads, for an icon-only control its icon, and for a
    rich-text editor that it is one (its class tokens) — never its content."""
    attrs = target.get("attrs") or {}
    editor = is_editable(dict(target))
    ev = {
        "tag": str(target.get("tag") or "").lower() or None,
        "role": _clean(target.get("role")),
        "name": _clean(target.get("name")),
        "text": None if editor else _clean(target.get("text")),
        "label": _clean(target.get("label")),
        "type": _clean(attrs.get("type")),
        "href": _href(target),
        "container": container_evidence(target),
        "item": item_evidence(target, values),
        "heading": tied(h, values) if (h := _clean(target.get("heading"))) else None,  # a field nothing names
        "editable": True if editor else None,
        "classes": class_evidence(target),
        "icon": icon_evidence(target),
    }
    return {k: v for k, v in ev.items() if v is not None}


def build_anchor(
    target: Mapping[str, Any],
    page: str,
    frame_png: bytes | None,
    viewport: Mapping[str, Any],
    frame_fp: Mapping[str, Any] | None = None,
    values: Mapping[str, str] | None = None,
    crop: Mapping[str, str] | None = None,
) -> Anchor:
    """``frame_fp`` is the recorder's fingerprint of the crop, taken while it
    still held the pixels; without it the crop is decoded here. ``values``:
    the parameters typed so far (name → value), which a record's name may be."""
    fp = _valid_fp(frame_fp) or (fingerprint(frame_png) if frame_png else None)
    expect = evidence(target, values)
    # the heading above a field nothing names may be the record's own name, typed earlier: the parameter's
    locators = [Locator("heading", value=tied(str(loc.value), values)) if loc.by == "heading" else loc
                for loc in ladder(target)]
    return Anchor(
        page=page,
        frame_url=mask_url(str(target.get("frame_url") or ""))[0] or None,
        describe=describe(dict(target)) + on_item(expect),
        locators=with_item_locator(locators, expect),
        expect=expect,
        geometry=geometry(target, viewport),
        fingerprint=fp,
        crop=crop_ref(crop),
    )


def _valid_fp(fp: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The recorder's crop fingerprint when well formed (a 128-hex thumb, a
    16-hex dhash, a two-number size), as plain data; else None."""
    if not isinstance(fp, Mapping):
        return None
    thumb, dhash, size = fp.get("thumb"), fp.get("dhash"), fp.get("size")
    if not (isinstance(thumb, str) and len(thumb) == 128 and isinstance(dhash, str)
            and len(dhash) == 16 and isinstance(size, list) and len(size) == 2):
        return None
    try:
        int(thumb, 16), int(dhash, 16)
    except ValueError:
        return None
    return {"thumb": thumb, "dhash": dhash, "size": [int(size[0]), int(size[1])]}
