"""A skill's ``## History``: one dated line per piece of feedback, and the
validation line kept in step with it. Pure text in, text out."""

from __future__ import annotations

import re

from compiler.secrets import mask_text

HEADING = "## History"
_VALIDATION = re.compile(r"^Validation: .*$", re.M)
RUN_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$")


def history_line(date: str, outcome: str, run_ref: str, note: str | None = None) -> str:
    line = f"- {date} — {outcome} — run {run_ref}"
    if note and note.strip():
        line += " — " + mask_text(" ".join(note.split()))[0]
    return line


def append_history(body: str, line: str) -> str:
    """Add ``line`` at the end of the History section (created if missing)."""
    text = body.rstrip("\n")
    lines = text.split("\n")
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip() == HEADING)
    except StopIteration:
        return f"{text}\n\n{HEADING}\n\n{line}\n"
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    section = [ln for ln in lines[start + 1 : end]]
    while section and not section[-1].strip():
        section.pop()
    if not section:
        section = [""]
    new = lines[:start + 1] + section + [line] + ([""] + lines[end:] if end < len(lines) else [])
    return "\n".join(new) + "\n"


def mark_validated(body: str, date: str, run_ref: str) -> str:
    """After a success, the validation line says when it last worked."""
    line = f"Validation: replayed successfully on {date} (run {run_ref})."
    if _VALIDATION.search(body):
        return _VALIDATION.sub(line, body, count=1)
    return body


_ENTRY = re.compile(r"^- (?P<date>\d{4}-\d{2}-\d{2}) — (?P<outcome>success|failure) — run (?P<run>\S+)"
                    r"(?: — (?P<note>.*))?$")


def history_entries(body: str) -> list[dict[str, str | None]]:
    """The History section's lines, newest first, for a timeline: a piece of
    feedback as its parts (date, outcome, run, note), any other line (a
    person's own words, a repair's note) as its text alone."""
    lines = body.split("\n")
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip() == HEADING)
    except StopIteration:
        return []
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    out: list[dict[str, str | None]] = []
    for line in lines[start + 1:end]:
        if not line.strip():
            continue
        m = _ENTRY.match(line.strip())
        parts = m.groupdict() if m else {"date": None, "outcome": None, "run": None, "note": None}
        out.append({**parts, "text": line.strip().removeprefix("- ")})
    return out[::-1]

