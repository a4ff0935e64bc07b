"""A demonstration under way, as the compiler will save it: the same fold
of events into steps (one typing step per field, a click that only focused
a field dropped, a page opened by a click belonging to that click), read by
the compiler's own ``to_steps`` — so the Teach page shows what will be
saved, not raw events — with each step the person took back still listed,
marked, where it was. Pure: events in, rows out."""

from __future__ import annotations

import json
from typing import Any

from compiler.names import describe
from compiler.recording import RecordingError, parse_recording
from compiler.steps import to_steps

_VERBS = {"goto": "open", "dblclick": "double-click", "check": "tick", "select": "choose in"}
_VALUED = ("type", "select", "os_type")  # the steps that carry a typed or chosen value
VALUED = frozenset(_VERBS.get(a, a) for a in _VALUED)  # ... as the rows name them


def review(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows ``{n, action, target, value, masked, undone, seq}``; ``n`` counts the
    kept steps as the skill will (its first: opening the start page); a
    typed value shown as typed, a masked one never (it is not in the events)."""
    undone = {int(e["undoes"]) for e in events
              if e.get("type") == "undo" and isinstance(e.get("undoes"), int)}
    kept = [e for e in events if e.get("type") != "undo"]  # fold as if nothing was taken back, then mark
    try:
        rec = parse_recording("".join(json.dumps(e) + "\n" for e in kept))
        steps = to_steps(rec)
    except (RecordingError, KeyError, ValueError, TypeError):  # no start event yet, or a line being written
        return []
    rows, n = [], 0
    for step in steps:
        gone = bool(step.seqs & undone)
        n += 0 if gone else 1
        target = describe(step.target).replace("**", "") if step.target else (step.url or step.expect_url)
        if step.action == "press":  # the key itself, and where when it went to a field
            keys = "+".join([*step.modifiers, str(step.key or "")])
            target = f"{keys} in {target}" if step.target else keys
        value = None if step.masked or step.action not in _VALUED else step.value
        rows.append({"n": None if gone else n, "action": _VERBS.get(step.action, step.action),
                     "target": target, "value": value, "masked": step.masked, "undone": gone,
                     # the event that names it, for a review that drops it (none: the start page)
                     "seq": min(step.seqs) if step.seqs else None})
    return rows
