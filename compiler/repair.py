"""A repair: a replay halted at step N, the person showed that one step on
the page as it is now, and the skill's plan plus the repair's recording
become the next version — pure and deterministic like the rest of the
compiler (the skill's text and the recording in, the same bytes out).

What the merge does, in order:

- the repair recording is compiled like any demonstration (so its secrets
  are masked, its scope and approval follow the same rules);
- the first of its steps that can stand for step N (a click for a click, a
  typing for a typing) *is* step N: its anchor joins the old one as an
  alternate, so the step replays on the old page and on the new one, and
  the runner acts only when the two agree on one element;
- what the person did before that step is added before it; what they did
  after it is lined up with the old steps after N (``difflib`` on what each
  step does to which named element): old steps they redid stay as they
  were, old steps they went past without doing are dropped, new ones are
  spliced in where they did them; old steps after the last one they redid
  stay (they pressed *Done* there);
- origins the repair visited that the skill's scope lacks are named in
  ``new_origins``: extending the scope is the person's call, not this
  module's.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from compiler.names import words
from compiler.plan import ANCHORS_FILE, STEPS_FILE, Anchor, PlanStep, Procedure
from compiler.procedure import Built, build_procedure
from compiler.recording import Recording
from compiler.render import description, skill_body, to_json
from compiler.scope import url_pattern
from compiler.skill import APPROVAL_TOOLS, plan_metadata

RECORDING_FILE = "references/recording.md"
REPAIRS_HEADING = "## Repairs"
# Sections of SKILL.md that follow from the plan, written anew; the rest
# (Failure policy with its validation line, History, anything a person
# added) is kept as it was.
GENERATED = ("", "## Preconditions", "## Steps", "## Success check", "## Parameters", "## Secrets",
             "## Allowed scope")
_KIND = {"click": "click", "dblclick": "click", "type": "type", "select": "select", "check": "check",
         "press": "press"}
_TAUGHT_ON = re.compile(r"Taught by demonstration on ([^:]+):")


class RepairError(ValueError):
    """The repair cannot be merged; the message says what the person should do."""


@dataclass(frozen=True)
class RepairedSkill:
    body: str  # without the History line: the caller appends ``history`` (teachd.skills.history)
    description: str
    references: dict[str, str]
    metadata: dict[str, str]  # the ``teachd-*`` facts to set
    approval_tools: tuple[str, ...]
    history: str
    new_origins: tuple[str, ...]
    step: int  # the repaired step, as numbered after the merge
    added: tuple[int, ...] = ()
    skipped: tuple[int, ...] = ()  # numbers in the old plan
    summary: str = ""


@dataclass
class _Merge:
    old: Procedure
    seg: Procedure
    anchors: dict[str, Anchor] = field(default_factory=dict)
    steps: list[PlanStep] = field(default_factory=list)
    added: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    origin: dict[int, str] = field(default_factory=dict)  # new step index → "old" | "new"
    repaired: int = 0  # the repaired step's number after the merge
    _next: int = 0

    def keep(self, step: PlanStep) -> None:
        self.origin[len(self.steps)] = "old"
        self.steps.append(replace(step))

    def add(self, step: PlanStep) -> None:
        new = replace(step)
        if step.anchor:
            new.anchor = self._anchor_id()
            self.anchors[new.anchor] = self.seg.anchors[step.anchor]
        self.origin[len(self.steps)] = "new"
        self.added.append(len(self.steps) + 1)
        self.steps.append(new)

    def _anchor_id(self) -> str:
        if not self._next:
            self._next = 1 + max((int(k[1:]) for k in self.anchors if re.fullmatch(r"a\d+", k)), default=0)
        aid = f"a{self._next}"
        self._next += 1
        return aid


def _norm(value: Any) -> str:
    return " ".join(str(value or "").split()).lower()


def _signature(step: PlanStep, anchors: Mapping[str, Anchor]) -> tuple[str, ...]:
    """What a step does, to which named element: equal for a step redone."""
    ev = anchors[step.anchor].expect if step.anchor and step.anchor in anchors else {}
    name = ev.get("name") or ev.get("label") or ev.get("text")
    where = url_pattern(step.url or "") if step.action == "goto" else ""
    return (_KIND.get(step.action, step.action), _norm(ev.get("role")), _norm(name), step.key or "", where)


def _same_evidence(a: Anchor, b: Anchor) -> bool:
    return a.expect == b.expect and [x.key() for x in a.locators] == [x.key() for x in b.locators]


def _stand_in(old: PlanStep, new: PlanStep, alternate: Anchor, anchors: dict[str, Anchor]) -> PlanStep:
    """Step N as repaired: the old step (its parameter or secret, its key or
    choice) with the new evidence beside the old; a secret either side stays
    a secret; where the page now leads elsewhere, the new place."""
    anchor = anchors[str(old.anchor)]
    if not any(_same_evidence(v, alternate) for v in anchor.versions()):
        anchors[str(old.anchor)] = replace(anchor, alternates=[*anchor.alternates,
                                                               replace(alternate, alternates=[])])
    out = replace(old)
    if new.secret and not old.secret:
        out.secret, out.param = old.param or new.secret, None
    new_pattern = (new.expect or {}).get("url_pattern")
    if new_pattern and new_pattern != (old.expect or {}).get("url_pattern"):
        out.expect = dict(new.expect or {})
    return out


def _stand_in_index(old: PlanStep, shown: list[PlanStep], old_anchor: Anchor,
                    anchors: Mapping[str, Anchor]) -> int:
    """Which shown step stands for step N: of those of its kind, the one
    that leads where it led, then the one sharing most words with its name,
    then the first (a person who adds a step usually adds it before)."""
    kind = _KIND.get(old.action)
    fits = [i for i, step in enumerate(shown) if step.anchor and _KIND.get(step.action) == kind]
    if fits:
        led = (old.expect or {}).get("url_pattern")
        want = set(_words(old_anchor.expect))

        def rank(i: int) -> tuple[bool, int, int]:
            step = shown[i]
            same_place = bool(led) and (step.expect or {}).get("url_pattern") == led
            return same_place, len(want & set(_words(anchors[str(step.anchor)].expect))), -i

        return max(fits, key=rank)
    what = {"click": "a click", "type": "typing into a field", "select": "a choice in a menu",
            "check": "a checkbox ticked", "press": "a key pressed in a field"}.get(kind or "", "an action")
    if not shown:
        raise RepairError(f"nothing was shown after step {old.n}: the skill is unchanged; "
                          "repair it again and do the step before pressing Done")
    raise RepairError(f"the repair shows no {what} to stand for step {old.n} "
                      f"({old.describe or old.action}): the skill is unchanged")


def _words(expect: Mapping[str, Any]) -> list[str]:
    return words(" ".join(str(expect.get(k) or "") for k in ("name", "label", "text")))


def merge_plans(old: Procedure, seg: Procedure, n: int) -> tuple[Procedure, _Merge]:
    """The old plan with step ``n`` repaired by the segment's steps."""
    if not 1 <= n <= len(old.steps):
        raise RepairError(f"the skill has no step {n}")
    target = old.steps[n - 1]
    if not target.anchor or target.anchor not in old.anchors or target.action not in _KIND:
        raise RepairError(f"step {n} ({target.action}) has no target on the page to show again")
    shown = list(seg.steps[1:])  # the first is the page the repair began on
    k = _stand_in_index(target, shown, old.anchors[target.anchor], seg.anchors)
    m = _Merge(old, seg, anchors={aid: replace(a) for aid, a in old.anchors.items()})
    for step in old.steps[: n - 1]:
        m.keep(step)
    for step in shown[:k]:
        m.add(step)
    repaired_at = len(m.steps)
    m.steps.append(_stand_in(target, shown[k], seg.anchors[str(shown[k].anchor)], m.anchors))
    after, rest = shown[k + 1:], old.steps[n:]
    ops = difflib.SequenceMatcher(None, [_signature(s, seg.anchors) for s in after],
                                  [_signature(s, old.anchors) for s in rest], autojunk=False).get_opcodes()
    last_redone = max((j2 for tag, _i1, _i2, _j1, j2 in ops if tag == "equal"), default=0)
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            for step in rest[j1:j2]:
                m.keep(step)
            continue
        for step in after[i1:i2]:
            m.add(step)
        for step in rest[j1:j2]:
            if j2 <= last_redone:
                m.skipped.append(step.n)  # gone past without doing it
            else:
                m.keep(step)  # after the last step redone: Done was pressed before it
    renumbered, renamed = _renumber(m)
    plan = Procedure(
        start_url=old.start_url,
        steps=renumbered,
        anchors={aid: a for aid, a in m.anchors.items() if any(s.anchor == aid for s in renumbered)},
        scope=[*old.scope, *(o for o in seg.scope if o not in old.scope)],
        success=dict(old.success if rest[last_redone:] or not _navigated(seg) else seg.success),
        parameters=_named(m, renumbered, renamed, "parameters"),
        secrets=_named(m, renumbered, renamed, "secrets"),
    )
    m.repaired = repaired_at + 1
    return plan, m


def _navigated(seg: Procedure) -> bool:
    return any((s.expect or {}).get("url_pattern") for s in seg.steps[1:])


def _renumber(m: _Merge) -> tuple[list[PlanStep], dict[int, str]]:
    """Steps numbered 1…; the names of added parameters and secrets made
    unique against the old ones (index → the name the repair gave it)."""
    taken = set(m.old.parameters) | set(m.old.secrets)
    out, renamed = [], {}
    for i, step in enumerate(m.steps):
        step = replace(step, n=i + 1)
        for attr in ("param", "secret"):
            name = getattr(step, attr)
            if name and m.origin.get(i) == "new":
                unique, k = name, 2
                while unique in taken:
                    unique, k = f"{name}_{k}", k + 1
                taken.add(unique)
                renamed[i] = name
                setattr(step, attr, unique)
        out.append(step)
    return out, renamed


def _named(m: _Merge, steps: list[PlanStep], renamed: Mapping[int, str],
           kind: str) -> dict[str, dict[str, Any]]:
    """Parameters or secrets in step order, each pointing at its step now."""
    attr = "param" if kind == "parameters" else "secret"
    out: dict[str, dict[str, Any]] = {}
    for i, step in enumerate(steps):
        name = getattr(step, attr)
        if not name:
            continue
        new = m.origin.get(i) == "new"
        known = getattr(m.seg, kind).get(renamed.get(i, name)) if new else (
            m.old.parameters.get(name) or m.old.secrets.get(name))
        entry = {k: v for k, v in (known or {}).items() if k in ("default", "describe")}
        entry.setdefault("describe", step.describe or "the field")
        if kind == "parameters":
            entry.setdefault("default", "")
        else:
            entry.pop("default", None)  # a parameter that became a secret keeps no value
        entry.update(step=step.n, anchor=step.anchor)
        out[name] = entry
    return out


def _sections(body: str) -> list[tuple[str, list[str]]]:
    """(heading, lines) in order; the text before the first heading has ``""``."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in body.split("\n"):
        if line.startswith("## "):
            out.append((line.strip(), [line]))
        else:
            out[-1][1].append(line)
    return out


def _rewrite(old_body: str, new_body: str) -> str:
    fresh = dict(_sections(new_body))
    out: list[str] = []
    seen = set()
    for heading, lines in _sections(old_body):
        seen.add(heading)
        out += fresh[heading] if heading in GENERATED and heading in fresh else lines
    for heading in GENERATED:  # a generated section the old text had lost
        if heading not in seen and heading in fresh:
            out += fresh[heading]
    return "\n".join(out)


def _signed_in(plan: Procedure) -> bool:
    typed = {s.anchor for s in plan.steps if s.action == "type"}
    return any("pass" in name for name in plan.secrets) or any(
        (plan.anchors[a].expect.get("type") or "").lower() == "password" for a in typed if a in plan.anchors)


def _repairs_note(text: str, line: str) -> str:
    text = text.rstrip("\n")
    if REPAIRS_HEADING not in text.split("\n"):
        text += f"\n\n{REPAIRS_HEADING}\n"
    return f"{text}\n{line}\n"


def repair_skill(display: str, body: str, references: Mapping[str, str], approval_forced: bool,
                 segment: Recording) -> RepairedSkill:
    """The next version's text and files, from the current ones and a repair recording."""
    info = segment.repair
    if not info:
        raise RepairError("this recording is not a repair (its start event names no run and step)")
    old = Procedure.from_files(references)
    seg: Built = build_procedure(segment)
    plan, m = merge_plans(old, seg.plan, int(info["step"]))
    new_origins = tuple(o for o in plan.scope if o not in old.scope)
    any_secret = approval_forced or bool(plan.secrets) or seg.masked_elsewhere > 0
    built = Built(plan=plan, first_title=(plan.steps[0].expect or {}).get("title"),
                  last_title=plan.success.get("title"), masked_elsewhere=seg.masked_elsewhere,
                  signed_in=_signed_in(plan))
    found = _TAUGHT_ON.search(body)
    fresh = skill_body(display, found.group(1) if found else "an unrecorded date", built)
    summary = _summary(int(info["step"]), m.repaired, m.added, m.skipped, new_origins)
    date = segment.started_at[:10] if segment.started_at else "an unrecorded date"
    references_out = dict(references)
    references_out[STEPS_FILE] = to_json(plan.steps_doc())
    references_out[ANCHORS_FILE] = to_json(plan.anchors_doc())
    references_out[RECORDING_FILE] = _repairs_note(
        references.get(RECORDING_FILE, "# Recording\n"),
        f"- {date}: step {info['step']} repaired from recording `{segment.id}` (run `{info['run']}`, "
        f"v{info['version']}): {summary}")
    return RepairedSkill(
        body=_rewrite(body, fresh),
        description=description(display, built),
        references=dict(sorted(references_out.items())),
        metadata=plan_metadata(plan, any_secret),
        approval_tools=APPROVAL_TOOLS if any_secret else (),
        history=f"- {date} — repaired step {info['step']} (run {info['run']})",
        new_origins=new_origins,
        step=m.repaired,
        added=tuple(m.added),
        skipped=tuple(m.skipped),
        summary=summary,
    )


def _summary(old_n: int, new_n: int, added: Iterable[int], skipped: Iterable[int],
             origins: Iterable[str]) -> str:
    parts = [f"step {old_n} has the new evidence beside the old" + (f" (now step {new_n})"
                                                                    if new_n != old_n else "")]
    if added := list(added):
        parts.append("added step" + ("s " if len(added) > 1 else " ") + ", ".join(map(str, added)))
    if skipped := list(skipped):
        parts.append("dropped old step" + ("s " if len(skipped) > 1 else " ") + ", ".join(map(str, skipped)))
    if origins := list(origins):
        parts.append("scope extended to " + ", ".join(origins))
    return "; ".join(parts)
