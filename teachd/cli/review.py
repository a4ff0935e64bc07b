"""The review before a demonstration is saved, in the terminal (``teachd
teach`` on a terminal): the steps as the compiler will save them, with their
values, and one command a line — leave a step out, name it, keep its value
fixed or mark it secret, add a check — then save or discard. The same edits
and the same checks as the Teach page's review (teach.edits); ``ask`` and
``say`` are the terminal, passed in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from teachd.core.errors import BadInput
from teachd.teach.edits import Edits, check_edits

HELP = """Commands (N is a step's number):
  drop N          leave step N out          keep N       take it back
  name N TEXT     give step N your own name
  fixed N         type step N's value as shown on every run (no parameter)
  secret N        treat step N's value as a secret: asked each run, removed from the recording
  ask N           ask for step N's value each run (the default)
  check TEXT      the final page must show TEXT for a run to succeed     uncheck TEXT
  list · save · discard · help"""


class Discarded(Exception):
    """The person chose to throw the demonstration away."""


def table(rows: list[dict[str, Any]], edits: Edits) -> str:
    """The steps as they will be saved, each marked with what the review changed."""
    lines = []
    for r in rows:
        if r["undone"]:
            continue
        seq = r.get("seq")
        value = "" if r.get("value") is None else f" “{r['value']}”"
        marks = [m for m, on in (("left out", seq in edits.drop), ("always this value", seq in edits.fixed),
                                 ("secret", seq in edits.secret)) if on]
        if r.get("masked"):
            value, marks = "", ["masked", *marks]
        if seq in edits.secret:
            value = ""  # no longer said, as a masked field's
        if seq is not None and seq in edits.names:
            marks.append(f"named “{edits.names[seq]}”")
        said = f"  [{', '.join(marks)}]" if marks else ""
        lines.append(f"  {r['n']:>3}  {r['action']:<12} {r['target']}{value}{said}")
    lines += [f"       check: the final page shows “{c}”" for c in edits.checks]
    return "\n".join(lines)


def review_in_terminal(rows: list[dict[str, Any]], final_text: str, ask: Callable[[str], str],
                       say: Callable[[str], None]) -> Edits:
    """The person's edits, once they say ``save`` (and the edits fit the
    steps); raises Discarded on ``discard``, and EOFError when the terminal
    closes (the recording is then kept, unsaved)."""
    by_n = {r["n"]: r for r in rows if not r["undone"] and r.get("seq") is not None}
    edits = Edits()
    say(table(rows, edits))
    say("Review the steps, one command a line (help lists them); save when done.")
    while True:
        words = ask("review> ").strip().split(maxsplit=1)
        if not words:
            continue
        command, rest = words[0].lower(), (words[1] if len(words) > 1 else "")
        try:
            if command == "save":
                check_edits(edits, rows, final_text)
                return edits
            if command == "discard":
                sure = ask("Discard this demonstration? Its recording is deleted [y/N] ")
                if sure.strip().lower() in ("y", "yes"):
                    raise Discarded
                continue
            edited = _edited(edits, command, rest, by_n)
            check_edits(edited, rows, "")  # each edit fits its step as soon as it is made, or is not made
            edits = edited
        except BadInput as exc:
            say(f"teachd: {exc}")
            continue
        say(HELP if command == "help" else table(rows, edits))


def _edited(edits: Edits, command: str, rest: str, by_n: dict[int, dict[str, Any]]) -> Edits:
    """``edits`` with one command applied (a new value: a refused command changes nothing)."""
    if command in ("list", "help"):
        return edits
    if command == "check":
        if not rest.strip():
            raise BadInput("check needs the words the final page shows: check Report submitted")
        return replace(edits, checks=(*edits.checks, " ".join(rest.split())))
    if command == "uncheck":
        return replace(edits, checks=tuple(c for c in edits.checks if c != " ".join(rest.split())))
    number, _, text = rest.partition(" ")
    if not number.isdigit() or int(number) not in by_n:
        raise BadInput(f"{command} needs a step's number from the list ({min(by_n)}–{max(by_n)})"
                       if by_n else "no step can be changed")
    seq = int(by_n[int(number)]["seq"])
    without = {k: frozenset(getattr(edits, k) - {seq}) for k in ("drop", "fixed", "secret")}
    if command in ("drop", "fixed", "secret"):
        other = {"fixed": "secret", "secret": "fixed"}.get(command)
        return replace(edits, **{command: getattr(edits, command) | {seq},
                                 **({other: without[other]} if other else {})})
    if command == "keep":
        return replace(edits, drop=without["drop"])
    if command == "ask":
        return replace(edits, fixed=without["fixed"], secret=without["secret"])
    if command == "name":
        names = {k: v for k, v in edits.names.items() if k != seq}
        return replace(edits, names={**names, **({seq: " ".join(text.split())} if text.strip() else {})})
    raise BadInput(f"no command {command!r}: help lists them")
