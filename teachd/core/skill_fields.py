"""Field names and bounds of the Agent Skills specification, in one place."""

from __future__ import annotations

import re

SPEC_FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
# Keys hosts read at the top level (Claude Code and others): not the spec's, yet
# a skill that uses them is not broken — strict validation warns, never fails.
HOST_FIELDS = ("when_to_use", "argument-hint", "disable-model-invocation", "user-invocable", "effort",
               "version", "requires", "type", "model", "context", "agent", "hooks")
NAME_MAX = 64
DESCRIPTION_MAX = 1024
DISPLAY_NAME_MAX = 200  # a person's title for a skill (teachd's, not the spec's)
COMPATIBILITY_MAX = 500
SKILL_MD_LINES_WARN = 300  # the seed's advice: keep SKILL.md short, detail in references/
BODY_TOKENS_WARN = 5000
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def name_problems(name: object) -> list[str]:
    """Why ``name`` is not a spec-valid skill name (empty when it is)."""
    if not isinstance(name, str) or not name:
        return ["name must be a non-empty string"]
    problems = []
    if len(name) > NAME_MAX:
        problems.append(f"name is {len(name)} chars, over the {NAME_MAX} limit")
    if not NAME_RE.match(name):
        problems.append(
            f"name {name!r} must be lowercase a-z, 0-9 and single inner hyphens"
        )
    return problems


def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters a token), enough for a size warning."""
    return (len(text) + 3) // 4
