"""The approval gate: a checkpoint in code, not a line of prose.

While a loaded skill requires approval for a tool, every call of that tool
waits for the user, whatever the run's own setting; a saved "always allow"
rule does not satisfy it (it still works for tools no loaded skill gates).
Each request has its own id and an answer is bound to it, so an approval for
one action can never be spent on another. Deny, or no answer, stops the run.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Protocol

from teachd.errors import PolicyStop
from teachd.runner.quoting import quoted
from teachd.skills.approval import Approval


@dataclass(frozen=True)
class Action:
    tool: str
    target: str
    page: str | None = None
    step: int | None = None


@dataclass(frozen=True)
class Request:
    id: int
    action: Action
    skills: tuple[str, ...]
    reason: str

    def as_dict(self) -> dict[str, object]:
        a = self.action
        return {"step": a.step, "tool": a.tool, "action": a.target, "page": a.page,
                "skills": list(self.skills), "reason": self.reason}

    def describe(self) -> str:
        # a page's URL is anyone's text: quoted, like what an agent wrote
        where = f" on {quoted(self.action.page, 300)}" if self.action.page else ""
        step = f"step {self.action.step}: " if self.action.step is not None else ""
        who = f" (required by skill {', '.join(self.skills)})" if self.skills else ""
        return f"{step}{self.action.tool} {self.action.target}{where} — {self.reason}{who}"


@dataclass(frozen=True)
class Answer:
    request_id: int
    allow: bool
    why: str = ""  # a deny's reason when it is not the person's plain "no" (e.g. an answer not understood)


class Approver(Protocol):
    def ask(self, request: Request) -> Answer: ...


class Asks(Protocol):
    """Somewhere a person answers: the store's queue of pending approvals."""

    def wait(self, run_id: str, request: Mapping[str, object], timeout: float | None = None) -> bool: ...


@dataclass
class PageApprover:
    """Asks on the daemon's Approvals page (through the store, so the asking
    process may be another one); ``run_id`` names the run once it has one."""

    queue: Asks
    run_id: str
    timeout: float | None = None

    def ask(self, request: Request) -> Answer:
        return Answer(request.id, self.queue.wait(self.run_id, request.as_dict(), self.timeout))


class DenyAll:
    """For runs nobody can answer: every request is refused."""

    def ask(self, request: Request) -> Answer:
        return Answer(request.id, False)


class TerminalApprover:
    """One answer per request: ``once`` or ``deny``. On a terminal it prompts;
    otherwise it reads one line per request; end of input means deny."""

    def __init__(self, stdin: IO[str] | None = None, stderr: IO[str] | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.stderr = stderr or sys.stderr

    def ask(self, request: Request) -> Answer:
        self.stderr.write(f"teachd: approve? {request.describe()} [once/deny]: ")
        self.stderr.flush()
        line = self.stdin.readline()
        answer = line.strip().lower()
        if not line:
            self.stderr.write("(no answer: deny)\n")
        elif not self.stdin.isatty():
            self.stderr.write(f"{answer}\n")
        return Answer(request.id, answer == "once")


@dataclass
class Gate:
    approver: Approver
    run_setting: str = "auto"  # auto: ungated tools run freely; ask: every tool asks
    saved_rules: frozenset[str] = frozenset()
    loaded: dict[str, Approval] = field(default_factory=dict)
    log: list[dict[str, object]] = field(default_factory=list)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def load(self, slug: str, approval: Approval) -> None:
        self.loaded[slug] = approval

    def unload(self, slug: str) -> None:
        self.loaded.pop(slug, None)

    def requiring(self, tool: str) -> tuple[str, ...]:
        return tuple(sorted(s for s, a in self.loaded.items() if tool in a.gated))

    def guard(self, action: Action, outside: str | None = None) -> None:
        """An action on a page: outside the allowed scope (``outside`` says
        why) it asks first, whatever else holds; then the skills' own gate."""
        if outside:
            self.check(action, reason=outside)
        self.check(action)

    def check(self, action: Action, reason: str | None = None) -> None:
        """Return when the action may go ahead; raise PolicyStop otherwise."""
        skills = self.requiring(action.tool)
        if reason is None:
            if skills:
                reason = "a loaded skill requires approval"
            elif self.run_setting == "ask" and action.tool not in self.saved_rules:
                reason = "this run asks before every action"
            else:
                self.log.append({"action": action.__dict__, "decision": "allowed without asking"})
                return
        request = Request(next(self._ids), action, skills, reason)
        answer = self.approver.ask(request)
        granted = answer.request_id == request.id and answer.allow
        self.log.append({"action": action.__dict__, "skills": list(skills), "reason": reason,
                         "decision": "allowed once" if granted else "denied"})
        if not granted:
            why = f" ({answer.why})" if answer.why else ""
            raise PolicyStop(f"not approved{why}: {request.describe()}")
