"""The console samples of the documentation (README.md, docs/*.md), read
as a person reads them, and compared with what teachd really prints
(tests/test_docs_samples.py).

A *console block* is a fenced block with lines starting with ``$ ``. The
line right before its fence names it: ``<!-- sample: NAME -->`` (an HTML
comment, invisible on the site). Inside a block:

- ``$ COMMAND`` starts a command; the lines up to the next command are what
  it prints — stdout and stderr as a terminal shows them, interleaved — less
  the one blank line that separates it from the next command;
- a last output line ``(exit N)`` is the exit code (none shown: 0);
- narration: a run of ``#`` lines at the top of the block or after a blank
  line, right before a command, is not output;
- elisions: an output line that starts with ``…`` (``…``, ``…   (steps 4–27:
  …)``, an indented ``…``) stands for any number of lines; inside a line, a
  ``…`` that does not end a word (``run-…``, ``step 7: …``) for
  any text on that line. ``Compiling…`` ends a word: it is literal.

What varies per run (times, recording and run ids, tokens, temp paths,
ports, how many crops a recording took) is normalised on both sides by the
explicit patterns in ``VARYING`` and nothing else: every other character
must match.
"""

from __future__ import annotations

import codecs
import difflib
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import ROOT

FENCE = re.compile(r"^(\s*)(```|~~~)")  # a list item's fence is indented
MARKER = re.compile(r"^<!-- sample: ([a-z0-9-]+) -->$")
EXIT = re.compile(r"^\(exit (\d+)\)$")
ELIDED_LINE = re.compile(r"^\s*…")
ELIDED_TEXT = re.compile(r"(?<!\w)…")

# What varies from run to run, and only that: (pattern, what it becomes), applied in order.
VARYING: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)"), "<time>"),
    (re.compile(r"\brec-\d{8}-\d{6}-[0-9a-f]{6}\b"), "rec-<id>"),
    (re.compile(r"\brun-\d{8}-\d{6}-[0-9a-f]{6}\b"), "run-<id>"),
    (re.compile(r"token=[A-Za-z0-9_-]{16,}"), "token=<token>"),
    (re.compile(r"(?:/[^\s/;:]+)+/recordings/"), "<TEACHD_HOME>/recordings/"),  # a temp TEACHD_HOME
    (re.compile(r"\b127\.0\.0\.1:\d{2,5}\b"), "127.0.0.1:<port>"),
    # a recording's crops: one is skipped when the page moved on before its shot (recorder/browser.py)
    (re.compile(r"\b\d+ crops\b"), "<n> crops"),
]
IDS = re.compile(r"\b(?:rec|run)-\d{8}-\d{6}-[0-9a-f]{6}\b")


def normalise(text: str) -> str:
    for pattern, said in VARYING:
        text = pattern.sub(said, text)
    return text


@dataclass
class Command:
    line: str  # as written after "$ "
    lineno: int
    expected: list[str] = field(default_factory=list)  # the output as the page shows it
    exit: int = 0


@dataclass
class Block:
    page: str  # relative to the repository
    marker: str | None
    lineno: int  # of the opening fence
    commands: list[Command]

    @property
    def key(self) -> str:
        return f"{self.page}#{self.marker}"

    def where(self) -> str:
        return f"{self.page}:{self.lineno}" + (f" (sample: {self.marker})" if self.marker else " (no marker)")


def pages(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def console_blocks(root: Path = ROOT) -> list[Block]:
    blocks = []
    for page in pages(root):
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            fence = FENCE.match(lines[i])
            if not fence:
                i += 1
                continue
            indent, mark = fence.groups()
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(mark)), len(lines))
            body = [ln[len(indent):] if ln.startswith(indent) else ln.lstrip() for ln in lines[i + 1:end]]
            if any(ln.startswith("$ ") for ln in body):
                marker = MARKER.match(lines[i - 1].strip()) if i else None
                blocks.append(Block(page.relative_to(root).as_posix(), marker.group(1) if marker else None,
                                    i + 1, parse_block(body, i + 2)))
            i = end + 1
    return blocks


def parse_block(body: list[str], first_lineno: int) -> list[Command]:
    commands: list[Command] = []
    i = 0
    while i < len(body):
        line = body[i]
        if line.startswith("#") and (i == 0 or body[i - 1] == ""):
            j = i
            while j < len(body) and body[j].startswith("#"):
                j += 1
            if j < len(body) and body[j].startswith("$ "):  # narration before a command
                i = j
                continue
        if line.startswith("$ "):
            commands.append(Command(line[2:], first_lineno + i))
        elif commands:
            commands[-1].expected.append(line)
        elif line:
            raise ValueError(f"line {first_lineno + i}: output before any command: {line!r}")
        i += 1
    for c in commands:
        if c.expected and c.expected[-1] == "":  # the one blank line before the next command
            c.expected.pop()
        if c.expected and (m := EXIT.match(c.expected[-1])):
            c.exit = int(m.group(1))
            c.expected.pop()
    return commands


# -- the command line as a shell reads it --------------------------------------------------------

@dataclass
class Invocation:
    """One ``teachd`` command of a sample line, as the shell would start it."""

    argv: list[str]  # after "teachd"
    env: dict[str, str]  # VAR=value before it
    stdin: str | None  # echo/printf piped in, "" for < /dev/null; None: nothing said
    stderr_shown: bool  # False with 2>/dev/null
    comment: str  # the shell comment at the end of the line, if any


def shell_words(line: str) -> list[str]:
    return shlex.split(line, comments=True)


def comment_of(line: str) -> str:
    m = re.search(r"\s#\s+(.*)$", line)
    return m.group(1).strip() if m else ""


def teachd_invocation(line: str) -> Invocation | None:
    """The ``teachd`` command of ``line`` (None: the line runs something else:
    curl, export, scp …)."""
    words = shell_words(line)
    stdin: str | None = None
    if "|" in words:
        k = words.index("|")
        feed, words = words[:k], words[k + 1:]
        if feed[0] == "echo":
            stdin = " ".join(feed[1:]) + "\n"
        elif feed[0] == "printf" and len(feed) == 2:
            stdin = codecs.decode(feed[1], "unicode_escape")
        else:
            raise ValueError(f"cannot feed {feed!r} to a command: {line}")
    env: dict[str, str] = {}
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    if not words or words[0] != "teachd" or "&&" in words:
        return None
    argv, stderr_shown, rest = [], True, words[1:]
    while rest:
        w = rest.pop(0)
        if w == "<" and rest:
            source = rest.pop(0)
            if source != "/dev/null":
                raise ValueError(f"cannot read {source}: {line}")
            stdin = ""
        elif w == "2>/dev/null":
            stderr_shown = False
        elif w in ("|", "<", ">", "&&", ";") or w.startswith((">", "2>", "<")):
            raise ValueError(f"a shell construct the samples do not use: {w!r} in {line}")
        else:
            argv.append(w)
    return Invocation(argv, env, stdin, stderr_shown, comment_of(line))


# -- comparing ----------------------------------------------------------------------------------

def _line_pattern(line: str) -> str:
    return "".join(re.escape(part) if k % 2 == 0 else ".*?"
                   for k, part in enumerate(_split_elisions(line)))


def _split_elisions(line: str) -> list[str]:
    """Literal text and elisions, alternating (literal first)."""
    parts: list[str] = []
    last = 0
    for m in ELIDED_TEXT.finditer(line):
        parts += [line[last:m.start()], "…"]
        last = m.end()
    return [*parts, line[last:]]


def expected_pattern(lines: list[str]) -> re.Pattern[str]:
    parts = []
    for line in lines:
        if ELIDED_LINE.match(line):
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(_line_pattern(line) + r"\n")
    return re.compile("".join(parts))


def differences(expected: list[str], actual: str) -> str | None:
    """None when ``actual`` (the whole output) is what the page shows, both normalised;
    else a diff to read."""
    want = [normalise(line) for line in expected]
    got = normalise(actual)
    if got and not got.endswith("\n"):
        got += "\n"
    if expected_pattern(want).fullmatch(got):
        return None
    return "\n".join(difflib.unified_diff(want, got.splitlines(), "the page (normalised)",
                                          "teachd now (normalised)", lineterm="", n=2))


def ids_shown(expected: list[str], actual: str) -> dict[str, str]:
    """The page's recording and run ids → the ones this run printed in the same places
    (a later command of the page names them)."""
    said = IDS.findall("\n".join(expected))
    got = IDS.findall(actual)
    return dict(zip(said, got, strict=False)) if len(said) == len(got) else {}


def substitute(line: str, ids: dict[str, str]) -> str:
    for theirs, ours in ids.items():
        line = line.replace(theirs, ours)
    return line
