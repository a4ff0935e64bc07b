"""Repair by showing one step (``teachd teach --repair RUN_ID``, the web
UI's *Show me*): what the halted run says is to be shown, the lead-in that
replays the steps before it in the recorder's own browser (under the gate,
with the same secrets prompt), and saving the merge as a new version.

Nothing is lost on the way: a repair that cannot be merged (nothing shown,
a skill changed meanwhile, a scope the person did not extend) leaves the
skill as it was and its recording where it is, to be applied later with
``teachd compile RECORDING --save``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from compiler.plan import STEPS_FILE, PlanStep, Procedure
from compiler.recording import Recording
from compiler.repair import RepairedSkill, RepairError, repair_skill
from teachd.core.errors import BadInput, Conflict, PolicyStop
from teachd.core.models import Skill, SkillContent
from teachd.core.outcomes import REPAIRABLE
from teachd.runner.shown import SHOWABLE, repaired_content
from teachd.teach.recordings import read_recording

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

    from recorder.record import LeadIn
    from teachd.runner.gate import Gate
    from teachd.store.runs import RunStore
    from teachd.store.skills import SkillStore

@dataclass(frozen=True)
class RepairTarget:
    """The step a halted run could not trust, and what it belongs to."""

    run_id: str
    slug: str
    version: int
    step: PlanStep
    name: str  # the skill's display name: the repair recording's task

    def start_fields(self) -> dict[str, object]:
        return {"repair": {"run": self.run_id, "slug": self.slug, "version": self.version,
                           "step": self.step.n}}


def banner(step: PlanStep) -> str:
    """What the bar asks the person to show ("Click the **Submit report**
    button — show me where it is now")."""
    what = step.describe or "the target"
    check = "Uncheck" if step.checked is False else "Check"
    do = {"click": f"Click {what}", "dblclick": f"Double-click {what}", "type": f"Type into {what}",
          "select": f"Choose in {what}", "check": f"{check} {what}",
          "press": f"Press **{'+'.join([*step.modifiers, step.key or ''])}** in {what}"}[step.action]
    tail = " (your typing is masked)" if step.secret else ""
    return f"Step {step.n}: {do} — show me where it is now{tail}, then press Done"


def _steps_of(content: SkillContent) -> str:
    return content.files.get(STEPS_FILE, "")


def repair_target(runs: RunStore, run_id: str) -> RepairTarget:
    """The halted step of ``run_id``; refused, with what to do instead, when
    the run did not halt at a step a person can show."""
    run = runs.one(run_id)
    slug, skills = run.get("slug"), run.get("skills") or {}
    halted = [s for s in run.get("steps") or [] if s.get("status") == "halted"]
    if run["status"] not in REPAIRABLE or not halted or not slug or slug not in skills:
        raise BadInput(f"run {run_id} did not halt at a step ({run['status']}: {run.get('message', '')}); "
                       "only a replay that halted at a step can be repaired")
    _owner, can = runs.skills.access(slug)
    if can == "use":
        raise PolicyStop(f"{slug} is shared with you to use, not to edit: ask its owner to repair it")
    version = int(skills[slug])
    ran = runs.skills.version(slug, version).content
    current = runs.skills.get(slug)
    if _steps_of(ran) != _steps_of(current.current):
        raise Conflict(f"{slug} changed since run {run_id} (v{version} → v{current.current_version}): "
                       f"replay it again with `teachd run {slug}`, then repair that run")
    proc = Procedure.from_files(current.current.files)
    n = int(halted[-1]["n"])
    step = proc.steps[n - 1] if 1 <= n <= len(proc.steps) else None
    if step is None or step.action not in SHOWABLE or not step.anchor:
        action = step.action if step else "no such step"
        raise BadInput(f"run {run_id} halted at step {n} ({action}), which has no target on the page to "
                       "show again; teach the task again with `teachd teach`")
    return RepairTarget(run_id, slug, version, step, current.current.name)


def lead_in(target: RepairTarget, proc: Procedure, gate: Gate, secret: Callable[[str], str],
            progress: Callable[[str], None] | None = None,
            step_timeout: float | None = None,
            runs: RunStore | None = None) -> Callable[[BrowserContext, Page], LeadIn]:
    """The recorder's lead-in: steps 1…N−1 replayed on its page, then the
    person takes over at step N with the banner naming it. With ``runs``,
    the lead-in is a run of its own, with its page like any replay's: its
    steps as they go, its questions, how it ended ("repair of run …")."""
    from recorder.record import LeadIn
    from teachd.runner.plan_view import plan_of
    from teachd.runner.replay import STEP_TIMEOUT, Halt, Replayer
    from teachd.runner.run import RunWatch

    def run(context: BrowserContext, page: Page) -> LeadIn:
        n = target.step.n
        run_id = runs.new_run_id() if runs is not None else ""
        watch = None
        if runs is not None:
            runs.start(run_id, {target.slug: target.version})
            plan = plan_of(target.slug, proc, {})
            # no slug, nothing "used": a lead-in is not the skill's run to judge (no Worked/Failed)
            watch = RunWatch(runs, run_id, {"origin": f"repair of {target.run_id}", "used": [], "params": {},
                                            "start_url": None, "plan": plan.as_dict()["steps"],
                                            "origins": list(plan.origins), "repairs": target.run_id}, False)
            runs.progress(run_id, watch.detail())
        replayer = Replayer(context, page, proc, gate, {}, secret, progress=progress,
                            step_timeout=step_timeout or STEP_TIMEOUT, observer=watch)
        log_from = len(gate.log)
        status, message = "failure", ""
        try:
            replayer.run(until=n)
            status = "success"
            message = (f"replayed steps 1–{n - 1}, then handed step {n} to you to show as the page is now "
                       f"(the repair of {target.run_id})" if n > 1 else
                       f"handed step 1 to you to show (the repair of {target.run_id})")
        except Halt as exc:
            message = f"the replay before step {n} halted ({exc}); nothing was recorded"
            raise Halt(f"{message}: replay the skill to see where it stops now") from None
        except PolicyStop as exc:
            status, message = "aborted", str(exc)
            raise
        finally:
            if runs is not None and watch is not None:
                runs.finish(run_id, status, {**watch.detail(), "message": message,
                                             "steps": [r.as_dict() for r in replayer.results],
                                             "gate": gate.log[log_from:]})
        return LeadIn(replayer.page, banner(target.step), target.start_fields())

    return run


def _merged(content: SkillContent, rec: Recording, folder: Path) -> RepairedSkill:
    try:
        return repair_skill(content.name, content.instructions, content.files, bool(content.approval.gated),
                            rec)
    except RepairError as exc:
        raise BadInput(f"{exc} (the repair recording is kept in {folder})") from None


def apply_repair(store: SkillStore, folder: Path,
                 extend_scope: Callable[[Sequence[str]], bool]) -> tuple[Skill, RepairedSkill]:
    """Merge a repair recording into its skill as a new version. The scope
    grows only where ``extend_scope`` agrees (asked outside the write lock);
    the version the repair began on must still be the skill's plan."""
    rec = read_recording(folder)
    if not rec.repair:
        raise BadInput(f"{folder} is not a repair recording")
    rec_info = rec.repair
    slug, version = str(rec_info["slug"]), int(rec_info["version"])
    seen = store.get(slug).current
    first = _merged(seen, rec, folder)
    if first.new_origins and not extend_scope(first.new_origins):
        raise PolicyStop(f"the repair went to {', '.join(first.new_origins)}, outside the skill's allowed "
                         f"scope; the skill is unchanged. To add it: `teachd compile {folder} --save "
                         "--extend-scope`")
    began = _steps_of(store.version(slug, version).content)
    done: dict[str, RepairedSkill] = {}

    def edit(current: SkillContent) -> SkillContent:
        if _steps_of(current) != began:
            raise Conflict(f"{slug} changed since the repair began (v{version}); the skill is unchanged "
                           f"and the repair recording is kept in {folder}")
        repaired = first if current == seen else _merged(current, rec, folder)  # merged once, unless it moved
        if not set(repaired.new_origins) <= set(first.new_origins):
            raise Conflict("the skill's scope changed while the repair was confirmed; apply it again")
        done["r"] = repaired
        return repaired_content(current, repaired)

    note = f"repaired step {rec_info['step']} (run {rec_info['run']}) from {folder.name}"
    skill = store.update(slug, edit, note=note)
    return skill, done["r"]


def summary_of(skill: Skill, repaired: RepairedSkill, folder: Path) -> Mapping[str, object]:
    return {"slug": skill.slug, "version": skill.current_version, "recording_dir": str(folder),
            "step": repaired.step, "added": list(repaired.added), "skipped": list(repaired.skipped),
            "new_origins": list(repaired.new_origins), "summary": repaired.summary}
