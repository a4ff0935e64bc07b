"""YAML from strangers, read with bounds.

A SKILL.md comes from anywhere (a URL, an upload, another person), and YAML
aliases let ~500 bytes name a structure of a billion nodes: parsing is cheap,
but whoever walks or dumps the result (the store keeps metadata, the writer
dumps it) pays for every expanded node. So the text is bounded before it is
parsed, aliases are counted while it is composed, and the loaded value is
measured after, with a budget that stops the walk as soon as it is exceeded
(the walk itself never pays for an expansion it refuses).
"""

from __future__ import annotations

from typing import Any

import yaml

from teachd.core.errors import InvalidSkill

FRONTMATTER_MAX = 64 * 1024  # characters of YAML text: the spec's fields fit in a few KB
ALIASES_MAX = 32  # a hand-written frontmatter may reuse a value, never needs more
NODES_MAX = 20_000  # scalars, keys and collections, counted as expanded (each alias visit counts)
CHARS_MAX = 256 * 1024  # characters of every scalar, counted as expanded


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader (plain data only) that refuses a document with too many aliases."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > ALIASES_MAX:
                raise InvalidSkill(f"frontmatter YAML uses more than {ALIASES_MAX} aliases (*name): refused")
        return super().compose_node(parent, index)


def _measure(value: Any) -> None:
    """Refuse a value whose expansion is over the bounds, stopping at the first excess."""
    nodes = chars = 0
    stack = [value]
    while stack:
        item = stack.pop()
        nodes += 1
        if nodes > NODES_MAX:
            raise InvalidSkill(f"frontmatter YAML expands to more than {NODES_MAX} values: refused")
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set):
            stack.extend(item)
        else:
            chars += len(str(item)) if isinstance(item, str | bytes) else 8
            if chars > CHARS_MAX:
                raise InvalidSkill(f"frontmatter YAML expands to more than {CHARS_MAX} characters: refused")


def load(text: str) -> Any:
    """Plain data from YAML text, within the bounds; ``InvalidSkill`` beyond
    them, ``yaml.YAMLError`` for text that is not YAML."""
    if len(text) > FRONTMATTER_MAX:
        raise InvalidSkill(f"frontmatter is {len(text)} characters, over {FRONTMATTER_MAX}: refused")
    loader = _BoundedLoader(text)
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    _measure(data)
    return data


def compose(text: str) -> yaml.Node | None:
    """The node tree (for the validator's checks of style), within the same text and alias bounds."""
    if len(text) > FRONTMATTER_MAX:
        raise InvalidSkill(f"frontmatter is {len(text)} characters, over {FRONTMATTER_MAX}: refused")
    loader = _BoundedLoader(text)
    try:
        node: yaml.Node | None = loader.get_single_node()
        return node
    finally:
        loader.dispose()
