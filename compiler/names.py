"""Names derived from what the person saw: slugs, parameter names, and the
plain-language description of a target ("the **Submit report** button")."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Any

from compiler.generated import looks_generated
from compiler.secrets import mask_text


def words(text: str | None) -> list[str]:
    """A name's words, lower case, punctuation and spacing aside: how two
    names are compared everywhere (the compiler's and the runner's)."""
    return re.findall(r"[^\W_]+", (text or "").lower())

SLUG_PREFIX = "taught-"
SLUG_MAX = 64
_ROLE_NOUN = {
    "button": "button", "link": "link", "textbox": "field", "searchbox": "search field",
    "checkbox": "checkbox", "radio": "option", "combobox": "menu", "listbox": "list",
    "option": "option", "tab": "tab", "menuitem": "menu item", "switch": "switch",
    "spinbutton": "field", "slider": "slider", "heading": "heading", "img": "image",
}
_TAG_NOUN = {"a": "link", "button": "button", "input": "field", "textarea": "field",
             "select": "menu", "img": "image", "label": "label"}


def ascii_words(text: str) -> list[str]:
    norm = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    norm = re.sub(r"([a-z])([A-Z])", r"\1 \2", norm)
    return re.findall(r"[a-z0-9]+", norm.lower())


def slugify(name: str) -> str:
    """``taught-<words>``, at most 64 chars; a cut name gets a hash so two long
    names that share a beginning stay apart."""
    words = "-".join(ascii_words(name)) or "task"
    slug = SLUG_PREFIX + words
    if len(slug) <= SLUG_MAX:
        return slug
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    head = slug[: SLUG_MAX - len(digest) - 1].rstrip("-")
    return f"{head}-{digest}"


def target_label(target: dict[str, Any] | None) -> str:
    """What a person would call the element, secrets masked."""
    if not target:
        return ""
    attrs = target.get("attrs") or {}
    text = None if is_editable(target) else target.get("text")  # an editor's text is what was typed
    for value in (
        target.get("label"), target.get("name"), attrs.get("aria-label"), text,
        *_placeholders(attrs), attrs.get("title"), attrs.get("alt"), *_authored(target),
    ):
        if value and str(value).strip():
            text = " ".join(str(value).split())
            text = text if len(text) <= 60 else text[:57].rstrip() + "…"
            return mask_text(text)[0]
    return ""


def _authored(target: dict[str, Any]) -> tuple[Any, ...]:
    """What names an element that has no label of its own, in this order: its
    form ``name`` and ``id`` (unless a framework made them up: ``:r1:``,
    ``react-select-2-input``), then the heading above it, then the container
    it is in ("Description" over a bare markdown editor) — those two only
    for a field, typed into."""
    attrs = target.get("attrs") or {}
    own = tuple(v for v in (attrs.get("name"), target.get("id")) if v and not looks_generated(str(v)))
    if not (is_editable(target) or str(target.get("tag") or "").lower() in ("input", "textarea", "select")):
        return own  # a button is not named after the section it is in
    container = target.get("container") if isinstance(target.get("container"), dict) else None
    return (*own, target.get("heading"), (container or {}).get("name"))


def is_editable(target: dict[str, Any] | None) -> bool:
    """A rich-text editor (a contenteditable host), by the recorder's mark,
    its attribute, or the compiler's (a non-field that was typed into)."""
    if not target:
        return False
    ce = (target.get("attrs") or {}).get("contenteditable")
    return bool(target.get("editable")) or (
        isinstance(ce, str) and ce.lower() in ("", "true", "plaintext-only"))


def _placeholders(attrs: dict[str, Any]) -> tuple[Any, ...]:
    return attrs.get("placeholder"), attrs.get("aria-placeholder"), attrs.get("data-placeholder")


def target_noun(target: dict[str, Any] | None) -> str:
    if not target:
        return "element"
    if is_editable(target):
        return "field"
    role = str(target.get("role") or "").lower()
    tag = str(target.get("tag") or "").lower()
    if role == "combobox" and tag in ("input", "textarea"):
        return "field"  # a type-ahead: typed into, not opened
    if role in _ROLE_NOUN:
        return _ROLE_NOUN[role]
    itype = str((target.get("attrs") or {}).get("type") or "").lower()
    if tag == "input" and itype in ("submit", "button", "reset"):
        return "button"
    if tag == "input" and itype in ("checkbox", "radio"):
        return "checkbox" if itype == "checkbox" else "option"
    return _TAG_NOUN.get(tag, "element")


def md_escape(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>|{}])", r"\\\1", text)


def item_noun(tag: Any) -> str:
    """What a person calls the record a repeated control is on: a table's
    row, a list's item, else a card."""
    return {"tr": "row", "li": "item"}.get(str(tag or "").lower(), "card")


def describe(target: dict[str, Any] | None) -> str:
    label = target_label(target)
    noun = target_noun(target)
    return f"the **{md_escape(label)}** {noun}" if label else f"the unnamed {noun}"


PROMPT_ARGS = "args"  # the /skill:<slug> [args] prompt's own free-form argument (teachd.mcp)
RESERVED_PARAMS = frozenset({PROMPT_ARGS})


def param_name(target: dict[str, Any] | None, taken: set[str]) -> str:
    """A snake_case name from the field's label/name/placeholder, unique among
    ``taken``; never from what it held (``value`` only when nothing names it),
    never a reserved name (an "Args" field is ``args_2``)."""
    attrs = (target or {}).get("attrs") or {}
    base = ""
    for value in ((target or {}).get("label"), attrs.get("aria-label"), (target or {}).get("name"),
                  *_placeholders(attrs), *_authored(target or {})):
        parts = ascii_words(str(value or ""))
        if parts:
            base = "_".join(parts)[:40].strip("_")
            break
    base = base or "value"
    if base[0].isdigit():
        base = "v_" + base
    name, n = base, 2
    while name in taken or name in RESERVED_PARAMS:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name
