"""Write SKILL.md so the reference validator accepts it.

The reference parser (strictyaml) refuses flow style and splits on the first
``---``; so: block style only, no empty mappings, every metadata value a string.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from teachd.core.errors import InvalidSkill
from teachd.core.skill_fields import SPEC_FIELDS


class _BlockDumper(yaml.SafeDumper):
    """A dumper that never emits anchors/aliases (strictyaml refuses them)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str_presenter)


def render_frontmatter(fields: dict[str, Any]) -> str:
    """Spec fields in spec order, ``metadata`` as a flat map of strings."""
    unknown = set(fields) - set(SPEC_FIELDS)
    if unknown:
        raise InvalidSkill(f"not a spec field: {', '.join(sorted(unknown))}")
    ordered: dict[str, Any] = {}
    for key in SPEC_FIELDS:
        value = fields.get(key)
        if value is None or value == {} or value == "":
            continue
        if key == "metadata":
            value = {str(k): _flat(v) for k, v in value.items()}
        elif not isinstance(value, str):
            value = _flat(value)
        if "---" in str(value):
            raise InvalidSkill(f"{key} may not contain '---' (it would end the frontmatter)")
        ordered[key] = value
    return yaml.dump(
        ordered,
        Dumper=_BlockDumper,
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        width=1_000_000,
    )


def render_skill_md(fields: dict[str, Any], body: str) -> str:
    body = body.strip("\n")
    return f"---\n{render_frontmatter(fields)}---\n\n{body}\n"


def _flat(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return str(value)
