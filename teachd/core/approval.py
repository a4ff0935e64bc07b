"""A skill's approval requirement, as data (DESIGN §3.5).

``always_ask`` with an empty tool list means all six gated tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from teachd.core.errors import InvalidSkill

GATED_TOOLS = (
    "run_command",
    "computer_act",
    "delete_file",
    "move_file",
    "message_agent",
    "write_file",
)


@dataclass(frozen=True)
class Approval:
    always_ask: bool = False
    tools: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = set(self.tools) - set(GATED_TOOLS)
        if unknown:
            raise InvalidSkill(f"unknown approval tool(s): {', '.join(sorted(unknown))}")
        object.__setattr__(self, "tools", tuple(sorted(set(self.tools))))

    @property
    def gated(self) -> frozenset[str]:
        if not self.always_ask:
            return frozenset()
        return frozenset(self.tools or GATED_TOOLS)

    def union(self, other: Approval) -> Approval:
        """The stricter of two requirements: a gate is never dropped by merging."""
        if not (self.always_ask or other.always_ask):
            return Approval()
        gated = self.gated | other.gated
        return Approval(True, () if gated == frozenset(GATED_TOOLS) else tuple(gated))

    def to_dict(self) -> dict[str, Any]:
        return {"always_ask": self.always_ask, "tools": list(self.tools)}

    @classmethod
    def from_dict(cls, data: Any) -> Approval:
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise InvalidSkill("approval must be an object with always_ask and tools")
        tools = data.get("tools") or []
        if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
            raise InvalidSkill("approval tools must be a list of tool names")
        return cls(bool(data.get("always_ask", False)), tuple(tools))

    def to_metadata(self) -> str:
        """``metadata.teachd-approval`` as from_metadata reads it back."""
        return " ".join(["always-ask", *self.tools]) if self.always_ask else "none"

    @classmethod
    def from_metadata(cls, value: object) -> Approval:
        words = str(value or "").split()
        if not words or words[0] != "always-ask":
            return cls()
        return cls(True, tuple(w for w in words[1:] if w in GATED_TOOLS))
