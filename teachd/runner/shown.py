"""A step shown during its own run: the replay could not find a step's
target, the person clicked where it is now on the picture of the page (the
run page asks, ``Gate.point``), and the same run goes on from there — no
restart, nothing the run already wrote written again — while the skill
keeps the fix as its next version, like a repair shown in the recorder
(teachd.teach.repair), merged by the same pure function
(``compiler.repair.repair_skill``).

What the person pointed at is read off the live page (the element at the
point, retargeted to its control as the recorder does, described by the
recorder's own describer) and must be a control that can take the step's
action (a field to type into, a menu to choose in...). That description
becomes a one-step repair recording, merged into the skill's plan; the step
is then found again by that evidence alone (the taught evidence beside it
found nothing, or too much), and acted on only when it finds exactly the
element the person pointed at. Only a step done so is kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from compiler.plan import STEPS_FILE, Anchor, PlanStep, Procedure
from compiler.recording import FORMAT_VERSION, Recording, parse_recording
from compiler.repair import RepairedSkill, RepairError, repair_skill
from teachd.core.approval import Approval
from teachd.core.errors import TeachdError
from teachd.core.history import append_history
from teachd.core.models import SkillContent
from teachd.runner.halt import Halt

if TYPE_CHECKING:
    from playwright.sync_api import ElementHandle, Page

    from teachd.store.skills import SkillStore

SHOWABLE = ("click", "dblclick", "type", "select", "check", "press")  # steps with a target on the page

# The element at a point given as fractions of the viewport, retargeted to its
# control as the recorder retargets a click (capture.js): null in a frame or off the page.
_AT_POINT = """([fx, fy]) => {
  let el = document.elementFromPoint(fx * window.innerWidth, fy * window.innerHeight);
  if (!el || !window.__teachdDescribe || el.tagName === "IFRAME" || el.tagName === "FRAME") return null;
  el = window.__teachdRetarget ? window.__teachdRetarget(el) : el;
  return el && el.nodeType === 1 ? el : null;
}"""
_FILLABLE_TYPES = ("", "text", "email", "search", "tel", "url", "number", "password", "date", "time",
                   "datetime-local", "month", "week")


def repaired_content(content: SkillContent, repaired: RepairedSkill) -> SkillContent:
    """The next version's content (pure): the merge, the History line, the
    approval the repair forces, the frontmatter facts."""
    facts = dict(content.metadata.get("metadata") or {})
    facts.update(repaired.metadata)
    approval = content.approval
    if repaired.approval_tools:
        approval = approval.union(Approval(True, repaired.approval_tools))
    return replace(content, description=repaired.description,
                   instructions=append_history(repaired.body, repaired.history),
                   files=dict(repaired.references), approval=approval,
                   metadata={**content.metadata, "metadata": facts})


# What a person may show for a step that clicked a control: a control too, never a heading or a box.
_CONTROL_ROLES = frozenset({"button", "link", "menuitem", "menuitemcheckbox", "menuitemradio", "tab",
                            "switch", "checkbox", "radio", "option", "combobox", "treeitem", "textbox",
                            "searchbox"})
_CONTROL_TAGS = frozenset({"a", "button", "input", "select", "textarea", "summary", "option", "label"})
# ... and for one that pressed a button, a link, a tab: one of those (not a checkbox, not a field)
_PRESSABLE = frozenset({"button", "link", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "option",
                        "treeitem"})
CHANGED_AT = 12.0  # mean grey difference (0–255) around the point: above it, the page changed
_AROUND = (60, 30)  # half the width and height, in picture pixels, of what is compared around the point


def unfit(step: PlanStep, target: Mapping[str, Any], taught: Mapping[str, Any]) -> str:
    """Why the element a person showed cannot take the step's action, as the
    step was taught (``taught``: its anchor's evidence) — '' when it can.
    A click on a control wants a control; a secret goes only into a field of
    the kind it was taught in (a password field's secret never into an email
    field)."""
    tag = str(target.get("tag") or "")
    kind = str((target.get("attrs") or {}).get("type") or "").lower()
    role = str(target.get("role") or "")
    if step.action == "type" and not (tag == "textarea" or target.get("editable")
                                      or (tag == "input" and kind in _FILLABLE_TYPES)):
        return "not a field to type into"
    if step.action == "type" and step.secret and kind != str(taught.get("type") or "").lower():
        return f"not a field of the kind the secret was taught in ({taught.get('type') or 'text'})"
    if step.action == "select" and tag != "select":
        return "not a menu to choose in"
    ticks = kind in ("checkbox", "radio") or role in ("checkbox", "radio", "switch")
    if step.action == "check" and not ticks:
        return "not a checkbox"
    was = str(taught.get("role") or "")
    if step.action in ("click", "dblclick") and was in _PRESSABLE and not (
            role in _PRESSABLE or tag in ("a", "button", "summary")
            or (tag == "input" and kind in ("submit", "button", "image", "reset"))):
        return f"not a {was} like the one taught"
    control = role in _CONTROL_ROLES or tag in _CONTROL_TAGS
    if step.action in ("click", "dblclick") and was in _CONTROL_ROLES and not control:
        return f"not a control like the {was} taught"
    return ""


def changed_at(before: bytes, after: bytes, point: tuple[float, float]) -> bool:
    """Whether the page looks different around ``point`` (fractions) in
    ``after`` than in ``before``, its picture the person pointed on: a
    banner pushed it down, a list reordered while they looked."""
    import io

    from PIL import Image, ImageChops, ImageStat

    a, b = (Image.open(io.BytesIO(x)).convert("L") for x in (before, after))
    if a.size != b.size:
        return True
    x, y = round(point[0] * a.width), round(point[1] * a.height)
    box = (max(0, x - _AROUND[0]), max(0, y - _AROUND[1]), min(a.width, x + _AROUND[0]),
           min(a.height, y + _AROUND[1]))
    if box[2] <= box[0] or box[3] <= box[1]:
        return True
    return float(ImageStat.Stat(ImageChops.difference(a.crop(box), b.crop(box))).mean[0]) > CHANGED_AT


def segment_events(step: PlanStep, target: Mapping[str, Any], url: str) -> list[dict[str, Any]]:
    """The step as the recorder would have written it, on ``target`` (pure)."""
    at = {"target": dict(target), "url": url, "t": 1000}
    if step.action in ("click", "dblclick"):
        click = {"type": "click", "button": "left", **at}
        return [click, {**click, "t": 1100}] if step.action == "dblclick" else [click]
    if step.action == "press":
        return [{"type": "key", "key": step.key or "", "modifiers": list(step.modifiers), **at}]
    if step.action == "check":
        return [{"type": "input", "checked": step.checked is not False, **at}]
    if step.secret:
        return [{"type": "input", "masked": True, **at}]
    return [{"type": "input", "value": "", **at}]  # the old step keeps its own value or parameter


def segment(name: str, run_id: str, slug: str, version: int, step: PlanStep, target: Mapping[str, Any],
            url: str, started_at: str) -> Recording:
    """A one-step repair recording of what the person showed (pure)."""
    start = {"type": "start", "name": name, "url": url, "screen": {"w": 1280, "h": 800},
             "recorder": "teachd run (shown on the run page)", "id": f"shown-{run_id}-{step.n}",
             "started_at": started_at,
             "repair": {"run": run_id, "slug": slug, "version": version, "step": step.n}}
    lines = [{"v": FORMAT_VERSION, "seq": seq, "t": 0, **event}
             for seq, event in enumerate([start, *segment_events(step, target, url)])]
    return parse_recording("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))


@dataclass
class ShownSteps:
    """The steps a person showed during one run of ``slug`` (version
    ``version``, whose content is ``began``): merged one after another into
    ``content`` for the rest of the run, and kept by :meth:`keep` as one new
    version when the run ends — merged again onto the skill as it is then."""

    run_id: str
    slug: str
    version: int
    began: SkillContent
    content: SkillContent = field(init=False)
    steps: list[int] = field(default_factory=list)
    segments: list[Recording] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.content = self.began

    @staticmethod
    def element_at(page: Page, point: tuple[float, float]) -> tuple[ElementHandle, dict[str, Any]] | None:
        """The element a person pointed at on the page, and its description."""
        handle = page.evaluate_handle(_AT_POINT, list(point)).as_element()
        if handle is None:
            return None
        return handle, dict(handle.evaluate("el => window.__teachdDescribe(el)"))

    def merge(self, step: PlanStep, target: Mapping[str, Any],
              url: str) -> tuple[Anchor, tuple[Recording, SkillContent]]:
        """Step ``step.n`` with what was shown beside its old evidence: the
        evidence shown, which this step is found by now, and what
        :meth:`took` keeps once the step held (its recording, the content)."""
        started = datetime.now(UTC).isoformat(timespec="seconds")
        rec = segment(self.content.name, self.run_id, self.slug, self.version, step, target, url, started)
        content = _merged(self.content, rec, step.n)
        merged = Procedure.from_files(content.files)
        return replace(merged.anchors[str(merged.steps[step.n - 1].anchor)].versions()[-1],
                       alternates=[]), (rec, content)

    def took(self, n: int, shown: tuple[Recording, SkillContent]) -> None:
        """Step ``n`` held, done on what was shown: the skill keeps it."""
        rec, self.content = shown
        self.segments.append(rec)
        self.steps.append(n)

    def keep(self, store: SkillStore) -> str:
        """What was shown, merged onto the skill as it is now (its other
        edits meanwhile kept: a new approval, words, History), as its next
        version — when its plan is still the one this run began on. What
        became of it, in words for the run's message."""
        if not self.steps:
            return ""
        shown = ", ".join(map(str, self.steps))
        began = self.began.files.get(STEPS_FILE, "")

        def edit(current: SkillContent) -> SkillContent:
            if current.files.get(STEPS_FILE, "") != began:
                raise Halt(f"{self.slug} changed while the run went on")
            for rec, n in zip(self.segments, self.steps, strict=True):
                current = _merged(current, rec, n)
            return current

        what = f"step {shown}" if len(self.steps) == 1 else f"steps {shown}"
        try:
            skill = store.update(self.slug, edit, note=f"repaired {what} shown during run {self.run_id}")
        except TeachdError as exc:
            return f"{what}, as you showed it, went on in this run, but the skill was not changed: {exc}"
        return f"{what}, as you showed it, kept in the skill as v{skill.current_version}"


def _merged(content: SkillContent, rec: Recording, n: int) -> SkillContent:
    """``content`` with the one-step repair ``rec`` merged in (compiler.repair)."""
    try:
        repaired = repair_skill(content.name, content.instructions, content.files,
                                bool(content.approval.gated), rec)
    except RepairError as exc:
        raise Halt(f"step {n}: what you showed could not stand for it ({exc})") from None
    if repaired.new_origins:
        raise Halt(f"step {n}: what you showed is on {', '.join(repaired.new_origins)}, outside the skill's "
                   "allowed scope")
    return repaired_content(content, repaired)
