"""A run's statuses as the surfaces act on them (runner.run says when each
is given): which runs tried, so a person's "did it work?" is open, and
which halted at a step the person can show again (a repair)."""

from __future__ import annotations

TRIED = ("success", "unverified", "partial", "failure", "ended")  # "ended": an agent's MCP session
REPAIRABLE = ("failure", "partial")  # halted at a step: before any write, or after some (a half change)
