"""Ids, names and classes a framework or component library made up: they
change between builds, sessions and records, so they are never a locator's
identity, a step's name or a parameter's name."""

from __future__ import annotations

import re

_GENERATED = [
    re.compile(p)
    for p in (
        r":r[0-9a-z]+:",  # React useId (alone, or inside a library's id: radix-:r1:)
        r":R[0-9a-zA-Z]+:",  # ... rendered on the server (React 18: :R1:, :Rlmm:)
        r"«r[0-9a-z]+»",  # React 19.1
        r"^_r_[0-9a-z]+_$",  # React 19.2
        r"^[0-9a-f]{8}-[0-9a-f]{4}-",  # GUID
        r"[0-9a-f]{8,}",  # long hex
        r"\d{3,}",  # long digit runs (ember123, item-4711)
        r"^(ember|react|mui|css|sc|jsx|emotion|chakra|radix|headlessui|svelte|ng|v)-?[a-z0-9]*\d",
        r"^(css|sc|jss|emotion)-[a-z0-9]{4,}",
        # a component library's counter: a widget's word and a number it drew
        # (react-select-2-input, downshift-0-item, xyz-select-1, headlessui-menu-button-3)
        r"(^|[-_:])(select|listbox|combobox|menu|popover|popper|dialog|tooltip|autocomplete|downshift|"
        r"headlessui|radix|mantine|chakra)[-_:]?\d+([-_:]|$)",
        r"^(headlessui|radix|mantine|chakra|downshift|react-aria|mui|rc)-[-a-z0-9]*\d",
    )
]


def looks_generated(value: str) -> bool:
    """Ids and classes a framework made up: they change between builds."""
    if not value:
        return True
    if any(p.search(value) for p in _GENERATED):
        return True
    # Like Playwright's guid check: too many switches between letter case and digits.
    transitions = 0
    for a, b in zip(value, value[1:], strict=False):
        ka = "d" if a.isdigit() else ("u" if a.isupper() else ("l" if a.islower() else "o"))
        kb = "d" if b.isdigit() else ("u" if b.isupper() else ("l" if b.islower() else "o"))
        transitions += ka != kb and "o" not in (ka, kb)
    return transitions >= max(3, len(value) // 4)
