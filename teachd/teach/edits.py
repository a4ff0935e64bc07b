"""What a person changed at the review before a demonstration is saved —
steps left out, a step's own name, a value kept fixed instead of asked each
run, a value marked secret after the fact, a check the final page must pass
— read from a request or a terminal, checked against the steps the review
listed, and written into the recording itself: the recording then compiles
to the skill that was saved, today and on any later ``teachd compile``.

Marking a secret after the fact rewrites the recording as the recorder would
have written it had the field been masked: the value leaves every event (and
every text that showed it), and the pictures taken from that step on are
deleted, since a field's value may show in them."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.procedure import MIN_SHOWN, appears, final_page_text
from compiler.secrets import MARK, looks_secret, mask_text
from compiler.steps import to_steps
from teachd.core.errors import BadInput
from teachd.teach.recordings import read_recording
from teachd.teach.review import VALUED

MAX_NAME = 80
MAX_CHECK = 200
MAX_CHECKS = 5


@dataclass(frozen=True)
class Edits:
    """Each field names steps by the ``seq`` the review lists for them."""

    drop: frozenset[int] = frozenset()
    names: Mapping[int, str] = field(default_factory=dict)
    fixed: frozenset[int] = frozenset()
    secret: frozenset[int] = frozenset()
    checks: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.drop or self.names or self.fixed or self.secret or self.checks)


def _seqs(data: Mapping[str, Any], key: str) -> frozenset[int]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in value):
        raise BadInput(f"{key} is a list of the steps' seq numbers, as the review lists them")
    return frozenset(value)


def edits_from(data: Mapping[str, Any]) -> Edits:
    """A request's review (``drop``, ``names`` {seq: text}, ``fixed``,
    ``secret``, ``checks`` [text]) as Edits; a wrong shape is BadInput."""
    names = data.get("names", {})
    if not isinstance(names, dict) or not all(str(k).isdigit() and isinstance(v, str)
                                              for k, v in names.items()):
        raise BadInput("names maps a step's seq to the name you give it")
    checks = data.get("checks", [])
    if not isinstance(checks, list) or not all(isinstance(c, str) for c in checks):
        raise BadInput("checks is a list of texts the final page must show")
    return Edits(drop=_seqs(data, "drop"), fixed=_seqs(data, "fixed"), secret=_seqs(data, "secret"),
                 names={int(k): " ".join(v.split()) for k, v in names.items() if v.strip()},
                 checks=tuple(t for t in (" ".join(c.split()) for c in checks) if t))


def check_edits(edits: Edits, rows: Sequence[Mapping[str, Any]], final_text: str) -> None:
    """Every edit fits the steps it names, or BadInput says which does not:
    a name or check that would put a secret in the skill, a value fixed or
    marked secret on a step that has none (or is already masked), a check
    the demonstration's final page did not show (it would fail every run)."""
    kept = {int(r["seq"]): r for r in rows if r.get("seq") is not None and not r.get("undone")}
    for key, seqs in (("drop", edits.drop), ("names", set(edits.names)), ("fixed", edits.fixed),
                      ("secret", edits.secret)):
        if not set(seqs) <= set(kept):
            raise BadInput(f"{key} names steps of this demonstration, by the seq its review lists")
    for seq, name in edits.names.items():
        if len(name) > MAX_NAME or _secretive(name):
            raise BadInput(f"step {kept[seq]['n']}'s name must be at most {MAX_NAME} characters "
                           "and hold nothing shaped like a secret")
    for key, seqs in (("fixed", edits.fixed), ("secret", edits.secret)):
        for seq in seqs:
            row = kept[seq]
            if row["action"] not in VALUED or row.get("masked") or row.get("value") is None:
                raise BadInput(f"step {row['n']} ({row['action']} {row['target']}) has no value "
                               f"to mark {key}")
    if both := edits.fixed & edits.secret:
        raise BadInput(f"step {kept[min(both)]['n']}: a value is either fixed or secret, not both")
    if len(edits.checks) > MAX_CHECKS:
        raise BadInput(f"at most {MAX_CHECKS} checks")
    for i, text in enumerate(edits.checks, 1):
        if len(text) > MAX_CHECK:
            raise BadInput(f"check {i} is longer than {MAX_CHECK} characters")
        if _secretive(text) or any(appears(v, text) for v in _secret_values(edits, kept)):
            # never said back: it may be the very secret
            raise BadInput(f"check {i} holds a value marked secret, or words shaped like a secret: "
                           "a skill never keeps one")
        if final_text and not appears(text, final_text):
            raise BadInput(f"the demonstration's final page did not show {text!r}: a check of it would "
                           "fail every run (copy the words as the page shows them)")


def _secretive(text: str) -> bool:
    return looks_secret(text) or mask_text(text)[1] > 0


def _secret_values(edits: Edits, kept: Mapping[int, Mapping[str, Any]]) -> list[str]:
    return [str(kept[s]["value"]) for s in edits.secret if kept[s].get("value")]


def apply_edits(folder: Path, edits: Edits) -> None:
    """The review written into the recording: secrets first (the events
    rewritten without them, pictures from their step on deleted), then an
    ``undo`` per step left out and one ``review`` event after ``stop``."""
    if not edits:
        return
    events_file = folder / "events.jsonl"
    text = events_file.read_text(encoding="utf-8")
    events = [json.loads(line) for line in text.splitlines() if line.strip()]
    if edits.secret:
        events = _unsaid(folder, events, edits.secret)
    last = max(e["seq"] for e in events)
    t = max(e["t"] for e in events)
    added = [{"v": 1, "seq": last + i, "t": t, "type": "undo", "undoes": seq}
             for i, seq in enumerate(sorted(edits.drop), 1)]
    review: dict[str, Any] = {}
    if edits.names:
        review["names"] = {str(k): v for k, v in sorted(edits.names.items())}
    if edits.fixed:
        review["fixed"] = sorted(edits.fixed)
    if edits.checks:
        review["checks"] = list(edits.checks)
    if review:
        added.append({"v": 1, "seq": last + len(added) + 1, "t": t, "type": "review", **review})
    _write(events_file, [*events, *added])


def _unsaid(folder: Path, events: list[dict[str, Any]], seqs: frozenset[int]) -> list[dict[str, Any]]:
    """The events with each marked step's value gone: its own events masked,
    as the recorder writes a masked field's; the value scrubbed from every
    other text (a page's text, a title, a name); the pictures taken from the
    first such step on deleted."""
    steps = [s for s in to_steps(read_recording(folder)) if s.seqs and min(s.seqs) in seqs]
    own = {n for s in steps for n in s.seqs}
    values = sorted({s.value for s in steps if s.value}, key=len, reverse=True)
    first = min(own)
    out = []
    for e in events:
        if e["seq"] in own and e["type"] in ("input", "os_input"):
            e = {k: v for k, v in e.items() if k not in ("value", "option_text")} | {"masked": True}
        e = _scrubbed(e, values)
        if e["seq"] >= first and isinstance(e.get("frame"), str):
            _delete_frame(folder, e["frame"])
            e = {k: v for k, v in e.items() if k not in ("frame", "frame_fp")}
        out.append(e)
    return out


def _scrubbed(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` (an event, and all it holds) with every secret text replaced by MARK."""
    if isinstance(value, str):
        for s in secrets:
            if len(s) >= MIN_SHOWN or value == s:
                value = value.replace(s, MARK)
        return value
    if isinstance(value, dict):
        return {k: _scrubbed(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, secrets) for v in value]
    return value


def _delete_frame(folder: Path, name: str) -> None:
    frames = (folder / "frames").resolve()
    path = (folder / name).resolve()
    if path.parent == frames:  # a picture of this recording, never a path out of it
        path.unlink(missing_ok=True)


def _write(path: Path, events: list[dict[str, Any]]) -> None:
    """All at once: a crash leaves the old file or the new, never half of one."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # the person's own, as the recorder's
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.writelines(json.dumps(e, ensure_ascii=False) + "\n" for e in events)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def final_text_of(folder: Path) -> str:
    """The demonstration's final page text, for checking a check against ("" when not recorded)."""
    return final_page_text(read_recording(folder))
