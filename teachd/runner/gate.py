"""The approval gate: a checkpoint in code, not a line of prose.

While a loaded skill requires approval for a tool, every call of that tool
waits for the user, whatever the run's own setting; a saved "always allow"
rule does not satisfy it (it still works for tools no loaded skill gates).
Each request has its own id and an answer is bound to it, so an approval for
one action can never be spent on another. Deny, or no answer, stops the run.

A replay offers its whole plan with its first gated step (DESIGN §3.5): the
answer ``run`` covers exactly the listed steps of this replay, in order, each
acted on as taught and within scope, each doing what its plan line showed.
Anything else asks again — a step found through a repair or a drifted match
(``Action.planned`` false), a step whose action, target, page or value is not
the plan's (``Action.shown``), a question with a reason of its own (outside
the scope), a step again (a retry), an agent's own ``computer_act`` — and the
grant ends with the replay: it is never saved, and the next run asks again.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import IO, Protocol

from teachd.core.approval import Approval
from teachd.core.errors import PolicyStop
from teachd.runner.quoting import quoted, visible


@dataclass(frozen=True)
class Action:
    tool: str
    target: str
    page: str | None = None
    step: int | None = None
    planned: bool = False  # this replay's plan step, found exactly as taught (a run grant may cover it)
    note: str = ""  # why a plan step is asked again (it drifted from what the plan showed)
    # a plan step found changed in a kind later steps may share (runner.match.change_kind): its
    # question offers ``like``, which allows it and later steps changed that way, in this run
    change: str = ""
    changed: str = ""  # a plan step found changed: what changed, in words (expected vs found)
    # later steps of this page found changed too, looked up ahead (step, what changed): its question
    # offers ``these``, which allows them with it, each only as long as it is found changed just so
    ahead: tuple[tuple[int, str], ...] = ()
    # a plan step as it is about to run (its plan line, from what it will really do): a `run`
    # answer covers it only when it is the line approved; kept out of the gate's log
    shown: PlanStep | None = None


@dataclass(frozen=True)
class PlanStep:
    """One line of the plan a ``run`` answer approves, as a person reads it."""

    n: int
    action: str
    target: str
    page: str | None = None
    value: str | None = None  # what will be typed or chosen; a secret shows as [secret NAME]
    secret: bool = False
    name: str | None = None  # the person's own name for the step (their review): said, not acted on

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"n": self.n, "action": self.action, "target": self.target,
                                  "page": self.page, "value": self.value, "secret": self.secret}
        if self.name:
            out["name"] = self.name
        return out

    def line(self, page: bool = True) -> str:
        """``N. verb “target” “value” on “page”``: the skill's own words and URLs
        and every value as quoted data, whole (a person approves what will be
        used, not the start of it); a secret by its name only."""
        value = f" {_secret(self.value)}" if self.secret and self.value else \
            f" {quoted(self.value, None)}" if self.value is not None and not self.secret else ""
        where = f" on {quoted(self.page, None)}" if self.page and page else ""
        named = f"{quoted(self.name, None)}: " if self.name else ""
        return f"{self.n}. {named}{_word(self.action)} {_target(self.target)}{value}{where}"


@dataclass(frozen=True)
class Plan:
    """A replay's whole plan: its steps and the origins it may act on."""

    slug: str
    steps: tuple[PlanStep, ...]
    origins: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {"slug": self.slug, "steps": [s.as_dict() for s in self.steps], "origins": list(self.origins)}

    def describe(self) -> str:
        scope = " ".join(_origin(o) for o in self.origins) or "no scope recorded"
        head = f"the whole plan of {_slug(self.slug)} ({len(self.steps)} steps, within {scope}):"
        lines, page = [head], None
        for s in self.steps:  # grouped by the page each step acts on, as a person reads it
            if s.page and s.page != page:
                page = s.page
                lines.append(f"  on {quoted(page, None)}:")
            lines.append(("    " if page else "  ") + s.line(page=False))
        return "\n".join(lines)

    def key(self) -> str:
        """A digest of the whole plan — every field of every step, the slug,
        the origins — not of how it is shown: two plans that differ anywhere
        (past any length a screen shows, in an invisible character) differ here."""
        data = json.dumps(["teachd-plan/1", self.as_dict()], ensure_ascii=False, sort_keys=True,
                          separators=(",", ":"))
        return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


# What teachd writes itself in a plan line goes bare; anything else there came
# from the skill (an imported one is anyone's text) and goes as quoted data.
_OWN_TARGETS = frozenset({"a key", "the target"})
_WORD = re.compile(r"[a-z][a-z ()-]{0,39}", re.ASCII)
_SLUG = re.compile(r"[a-z0-9][a-z0-9-]{0,63}", re.ASCII)
_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]{0,15}://(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:[0-9]{1,5})?", re.ASCII)
_SECRET = re.compile(r"\[secret [A-Za-z0-9_.-]{1,64}\]", re.ASCII)


def _word(action: str) -> str:
    return action if _WORD.fullmatch(action) else quoted(action, None)


def _target(target: str) -> str:
    return target if target in _OWN_TARGETS else quoted(target, None)


def _slug(slug: str) -> str:
    return slug if _SLUG.fullmatch(slug) else quoted(slug, None)


def _origin(origin: str) -> str:
    return origin if _ORIGIN.fullmatch(origin) else quoted(origin, None)


def _secret(shown: str) -> str:
    return shown if _SECRET.fullmatch(shown) else quoted(shown, None)


_PARTS = (("action", "the action"), ("target", "the target"), ("page", "the page"), ("value", "the value"))


def _part(step: PlanStep, name: str) -> str:
    v = getattr(step, name)
    if v is None:
        return "none"
    if name == "value" and step.secret:
        return _secret(v)  # by its name only (``[secret NAME]``): a plan line never holds a secret's value
    return quoted(v, None)


def difference(approved: PlanStep, now: PlanStep) -> str:
    """What in a step about to run is not what its plan line showed ('' when
    it is that line): each part that differs, both sides quoted whole."""
    parts = [f"{words} is {_part(now, name)}, the plan showed {_part(approved, name)}"
             for name, words in _PARTS
             if getattr(now, name) != getattr(approved, name)
             or (name == "value" and now.secret != approved.secret)]
    if now.n != approved.n:
        parts.insert(0, f"it is step {now.n}, the plan showed step {approved.n}")
    return "; ".join(parts)


def _logged(action: Action) -> dict[str, object]:
    return {k: v for k, v in action.__dict__.items() if k != "shown"}


@dataclass(frozen=True)
class Request:
    id: int
    action: Action
    skills: tuple[str, ...]
    reason: str
    plan: Plan | None = None  # offered: the answer ``run`` approves this whole plan
    show: bool = False  # asks where the step's target is now, on its page's picture (answered with a point)

    @property
    def offers_run(self) -> bool:
        return self.plan is not None

    @property
    def offers_like(self) -> bool:
        """Whether ``like`` may answer it: a plan step found changed in a kind later steps may share."""
        return bool(self.action.change) and not self.show

    @property
    def offers_these(self) -> bool:
        """Whether ``these`` may answer it: later steps of its page were found changed too."""
        return bool(self.action.ahead) and not self.show

    def as_dict(self) -> dict[str, object]:
        a = self.action
        total = len(self.plan.steps) if self.plan else None
        return {"step": a.step, "tool": a.tool, "action": a.target, "page": a.page, "note": a.note,
                "skills": list(self.skills), "reason": self.reason, "offers_run": self.offers_run,
                "plan": self.plan.as_dict() if self.plan else None, "of": total,
                **({"show": True} if self.show else {}), **({"like": True} if self.offers_like else {}),
                **({"these": [{"step": n, "changed": words} for n, words in a.ahead]}
                   if self.offers_these else {})}

    @property
    def answers(self) -> str:
        if self.show:
            return "here/deny"
        return "/".join(["run"] * self.offers_run + ["once"] + ["these"] * self.offers_these
                        + ["like"] * self.offers_like + ["deny"])

    def key(self) -> str:
        """A digest of everything the question asks about (its plan by
        :meth:`Plan.key`), not of how it is shown."""
        if self.plan is not None:
            return self.plan.key()
        data = json.dumps(["teachd-request/1", {k: v for k, v in self.as_dict().items() if k != "plan"}],
                          ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()

    def describe(self, listed: bool = True) -> str:
        """``listed``: with the later changed steps the question lists (not in a deny's message)."""
        # a page's URL is anyone's text: quoted whole, like what an agent wrote; the action's
        # words (an agent's, quoted already, or a skill's step) and the reason (which may name
        # a URL) go on one line, nothing in them able to break it or reach a terminal
        a = self.action
        where = f" on {quoted(a.page, None)}" if a.page else ""
        step = f"step {a.step}: " if a.step is not None else ""
        who = f" (required by skill {visible(', '.join(self.skills))})" if self.skills else ""
        note = f"; {visible(a.note)}" if a.note else ""
        ahead = "".join(f"; step {n} on this page changed too: {visible(words)}" for n, words in a.ahead) \
            if self.offers_these and listed else ""
        # the act on the computer says itself ("type the Email field"); any other tool is named
        tool = "" if a.tool == "computer_act" else f"{visible(a.tool)}: "
        said = f"{step}{tool}{visible(a.target)}{where} — {visible(self.reason)}"
        return f"{said}{note}{ahead}{who}"


ANSWERS = ("run", "once", "these", "like", "deny")


class Asking(Exception):  # noqa: N818 — not an error: the question leaves by another road
    """An approver that cannot wait for its answer here (an MCP client on
    the 2026-07-28 protocol answers in a new round of the same call) ends the
    call with its question, before anything acted; the call comes again with
    the answer."""

    def __init__(self, message: str, key: str, boxes: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message, self.key = message, key
        self.boxes = boxes  # the wider answers it offers (``like``, ``these``): its form has a box each


@dataclass(frozen=True)
class Answer:
    request_id: int
    allow: bool
    why: str = ""  # a deny's reason when it is not the person's plain "no" (e.g. an answer not understood)
    run: bool = False  # allow the whole plan the request offered (only with ``allow``)
    point: tuple[float, float] | None = None  # where a request that asks where was shown (fractions)
    like: bool = False  # allow this step and later ones changed the same way, in this run
    these: bool = False  # allow this step and the later ones of its page its question listed as changed

    @classmethod
    def said(cls, request_id: int, word: str) -> Answer:
        """A person's word: ``run``, ``once``, ``these``, ``like``; anything else is a deny."""
        return cls(request_id, word in ("run", "once", "these", "like"), run=word == "run",
                   like=word == "like", these=word == "these")

    @classmethod
    def offered(cls, request: Request, word: str) -> Answer:
        """A person's word to ``request``: one it did not offer (``run``
        without a plan, ``like`` without a change to share) counts as ``once``."""
        if (word == "run" and not request.offers_run) or (word == "like" and not request.offers_like) \
                or (word == "these" and not request.offers_these):
            word = "once"
        return cls.said(request.id, word)


class Approver(Protocol):
    def ask(self, request: Request) -> Answer: ...


class Asks(Protocol):
    """Somewhere a person answers: the store's queue of pending approvals."""

    def wait(self, run_id: str, request: Mapping[str, object], timeout: float | None = None) -> str:
        """The person's answer: ``run``, ``once`` or ``deny`` (no answer in time)."""
        ...

    def wait_answer(self, run_id: str, request: Mapping[str, object],
                    timeout: float | None = None) -> tuple[str, tuple[float, float] | None]:
        """As ``wait``; a request that asks where is answered ``here`` with its point, or ``deny``."""
        ...


@dataclass
class PageApprover:
    """Asks on the daemon's Approvals page (through the store, so the asking
    process may be another one); ``run_id`` names the run once it has one."""

    queue: Asks
    run_id: str
    timeout: float | None = None
    points: bool = False  # a person follows the run on its page and may show a halted step there

    def ask(self, request: Request) -> Answer:
        if request.show:
            word, point = self.queue.wait_answer(self.run_id, request.as_dict(), self.timeout)
            return Answer(request.id, word == "here" and point is not None, point=point)
        return Answer.offered(request, self.queue.wait(self.run_id, request.as_dict(), self.timeout))


class DenyAll:
    """For runs nobody can answer: every request is refused."""

    def ask(self, request: Request) -> Answer:
        return Answer(request.id, False)


class TerminalApprover:
    """One answer per request: ``run`` (when the request offers the plan),
    ``once`` or ``deny``. On a terminal it prompts; otherwise it reads one
    line per request; end of input means deny."""

    def __init__(self, stdin: IO[str] | None = None, stderr: IO[str] | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.stderr = stderr or sys.stderr
        self._shown: Plan | None = None  # a plan offered again (after "once") is not printed again

    def ask(self, request: Request) -> Answer:
        if request.plan is not None and request.plan is not self._shown:
            self._shown = request.plan
            self.stderr.write(f"teachd: {request.plan.describe()}\n")
        self.stderr.write(f"teachd: approve? {request.describe()} [{request.answers}]: ")
        self.stderr.flush()
        line = self.stdin.readline()
        answer = line.strip().lower()
        if not line:
            self.stderr.write("(no answer: deny)\n")
        elif not self.stdin.isatty():
            self.stderr.write(f"{answer}\n")
        return Answer.offered(request, answer)  # "run" where no plan was offered means this one


@dataclass
class Gate:
    approver: Approver
    run_setting: str = "auto"  # auto: ungated tools run freely; ask: every tool asks
    saved_rules: frozenset[str] = frozenset()
    loaded: dict[str, Approval] = field(default_factory=dict)
    log: list[dict[str, object]] = field(default_factory=list)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _plan: Plan | None = None  # the replay under way: offered with its first gated step
    _granted: Plan | None = None  # ... and approved whole (``run``)
    _covered: int = 0  # the last plan step the grant let through: the next must come after it
    _like: dict[str, int] = field(default_factory=dict)  # change kind → the step whose ``like`` allowed it
    # a later step → (what changed, as its question listed it; the step whose ``these`` allowed it)
    _these: dict[int, tuple[str, int]] = field(default_factory=dict)

    def offer(self, plan: Plan | None) -> None:
        """A replay begins (``plan``) or ends (None): a grant never outlives it."""
        self._plan, self._granted, self._covered, self._like, self._these = plan, None, 0, {}, {}

    def _differs(self, action: Action, changed: bool = False) -> str:
        """A plan step that says what it will do (``Action.shown``): how that
        differs from the line of the plan approved (or offered) for it
        (``changed``: a step found changed is held to its line too)."""
        plan = self._granted or self._plan
        if plan is None or not (action.planned or changed) or action.shown is None:
            return ""
        line = next((s for s in plan.steps if s.n == action.step), None)
        if line is None:
            return f"step {visible(action.step)} is not in the plan"
        return difference(line, action.shown)

    def _like_covers(self, action: Action) -> int | None:
        """The step whose ``like`` answer covers this one: a step of this
        replay's plan found changed the same way, doing what its plan line
        shows (a step that would do anything else asks)."""
        if not action.change or action.change not in self._like or action.step is None \
                or action.shown is None or (self._granted or self._plan) is None \
                or self._differs(action, changed=True):
            return None
        return self._like[action.change]

    def _these_cover(self, action: Action) -> int | None:
        """The step whose ``these`` answer listed this one: the same plan
        step, found changed exactly as the question said, doing what its
        plan line shows (found any other way, it asks)."""
        listed = self._these.get(action.step) if action.step is not None else None
        if listed is None or not action.changed or listed[0] != action.changed or action.shown is None \
                or (self._granted or self._plan) is None or self._differs(action, changed=True):
            return None
        return listed[1]

    def _grant_covers(self, action: Action) -> bool:
        plan = self._granted
        if plan is None or not action.planned or action.step is None or action.step <= self._covered:
            return False  # not a plan step found as taught, or one again (a retry)
        return any(s.n == action.step for s in plan.steps)

    def load(self, slug: str, approval: Approval) -> None:
        self.loaded[slug] = approval

    def unload(self, slug: str) -> None:
        self.loaded.pop(slug, None)

    def requiring(self, tool: str) -> tuple[str, ...]:
        return tuple(sorted(s for s, a in self.loaded.items() if tool in a.gated))

    def _asking_for(self, tool: str) -> tuple[str, ...]:
        """The skills a question names: the one this replay uses, when it
        requires approval — not every one auto-loaded beside it."""
        skills = self.requiring(tool)
        if self._plan is not None and self._plan.slug in skills:
            return (self._plan.slug,)
        return skills

    def guard(self, action: Action, outside: str | None = None) -> None:
        """An action on a page: outside the allowed scope (``outside`` says
        why) it asks, whatever else holds — one question, naming the skills
        that require approval too, whose ``once`` allows this very action;
        inside the scope, the skills' own gate."""
        if outside:
            self.check(action, reason=outside)
            return
        self.check(action)

    @property
    def points(self) -> bool:
        """Whether a person follows this run where they can show a step on its page's picture."""
        return bool(getattr(self.approver, "points", False))

    def point(self, action: Action, reason: str) -> tuple[float, float] | None:
        """Where the person shows the target of a step that cannot be found
        (``reason``: why), on the picture of its page the run page shows —
        asked only of an approver that can show it (``points``). The point
        is also the allow for that one act, when what is there can take it;
        None: not shown, the step halts as it would have."""
        if not self.points:
            return None
        request = Request(next(self._ids), replace(action, planned=False), self._asking_for(action.tool),
                          reason, show=True)
        answer = self.approver.ask(request)
        shown = answer.point if answer.request_id == request.id and answer.allow else None
        self.log.append({"action": _logged(request.action), "skills": list(request.skills), "reason": reason,
                         "decision": "shown by the person" if shown else "not shown", "asked": True})
        if shown is not None and action.step is not None:
            self._covered = max(self._covered, action.step)
        return shown

    def check(self, action: Action, reason: str | None = None) -> None:
        """Return when the action may go ahead; raise PolicyStop otherwise."""
        if differs := self._differs(action):  # not the step approved: it asks (once or deny), saying why
            note = f"not as the plan showed it ({differs}): asked again, outside any approval of the run"
            action = replace(action, planned=False, note=f"{action.note}; {note}" if action.note else note)
        skills = self._asking_for(action.tool)
        if reason is None:
            if skills:
                reason = "a loaded skill requires approval"
            elif self.run_setting == "ask" and action.tool not in self.saved_rules:
                reason = "this run asks before every action"
            else:
                self.log.append({"action": _logged(action), "decision": "allowed without asking"})
                return
            if self._grant_covers(action):
                self._covered = int(action.step or 0)
                self.log.append({"action": _logged(action), "skills": list(skills), "reason": reason,
                                 "decision": "allowed by this run's approval"})
                return
            if (by := self._these_cover(action)) is not None:
                self.log.append({"action": _logged(action), "skills": list(skills), "reason": reason,
                                 "decision": f"allowed: listed as changed with step {by}, which the person "
                                             "allowed with these steps"})
                return
            if (by := self._like_covers(action)) is not None:
                self.log.append({"action": _logged(action), "skills": list(skills), "reason": reason,
                                 "decision": f"allowed: changed like step {by}, which the person allowed "
                                             "with later steps changed the same way, in this run"})
                return
        # The plan is offered once, with a plan step found as taught and no
        # reason of its own; a step the grant does not cover asks this one.
        offer = self._plan if (self._granted is None and action.planned and reason in (
            "a loaded skill requires approval", "this run asks before every action")) else None
        request = Request(next(self._ids), action, skills, reason, offer)
        answer = self.approver.ask(request)
        granted = answer.request_id == request.id and answer.allow
        whole = granted and answer.run and offer is not None
        these = granted and answer.these and request.offers_these
        decision = "allowed this run" if whole else "allowed with later steps changed the same way" \
            if granted and answer.like and request.offers_like else \
            f"allowed with the {len(action.ahead)} changed steps it listed" if these else \
            "allowed once" if granted else "denied"
        self.log.append({"action": _logged(action), "skills": list(skills), "reason": reason,
                         "decision": decision, "asked": True})
        if not granted:
            why = f" ({answer.why})" if answer.why else ""
            raise PolicyStop(f"not approved{why}: {request.describe(listed=False)}")
        if answer.like and request.offers_like:
            self._like.setdefault(action.change, int(action.step or 0))
        if these:
            for n, words in action.ahead:
                self._these.setdefault(n, (words, int(action.step or 0)))
        if whole:
            self._granted, self._covered = offer, int(action.step or 0)
        elif action.planned and action.step is not None:
            self._covered = max(self._covered, action.step)
