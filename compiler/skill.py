"""The compiler's entry point: a Recording in, a taught skill's files out.

Pure: the same Recording gives the same bytes on any machine, timezone,
locale or hash seed (no clock, no environment, sorted JSON, no sets in output).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compiler.names import slugify
from compiler.plan import ANCHORS_FILE, STEPS_FILE, Procedure
from compiler.procedure import Built, build_procedure
from compiler.recording import Recording
from compiler.render import COMPILER_ID, description, recording_md, skill_body, taught_on, to_json
from compiler.secrets import mask_text


@dataclass(frozen=True)
class CompiledSkill:
    slug: str
    display_name: str
    description: str
    body: str
    frontmatter: dict[str, Any]
    references: dict[str, str]
    approval_tools: tuple[str, ...]  # always_ask tools; empty: no approval forced

    def files(self, render_skill_md: Any) -> dict[str, bytes]:
        """All files, SKILL.md rendered by the given (teachd) serializer."""
        out = {"SKILL.md": render_skill_md(self.frontmatter, self.body).encode("utf-8")}
        out.update({path: text.encode("utf-8") for path, text in self.references.items()})
        return dict(sorted(out.items()))


APPROVAL_TOOLS = ("computer_act",)  # forced to ask when the demonstration held a secret


def plan_metadata(plan: Procedure, any_secret: bool) -> dict[str, str]:
    """The frontmatter's ``teachd-*`` facts that follow from the plan."""
    return {
        "teachd-approval": "always-ask " + " ".join(APPROVAL_TOOLS) if any_secret else "none",
        "teachd-compiler": COMPILER_ID,
        "teachd-parameters": " ".join(plan.parameters) or "none",
        "teachd-scope": " ".join(plan.scope),
        "teachd-secrets": " ".join(plan.secrets) or "none",
    }


def compile_recording(rec: Recording) -> CompiledSkill:
    display = mask_text(" ".join(rec.name.split()) or "Taught task")[0]
    slug = slugify(rec.name)
    proc: Built = build_procedure(rec)
    any_secret = bool(proc.plan.secrets) or proc.masked_elsewhere > 0
    approval = APPROVAL_TOOLS if any_secret else ()
    metadata = {"display-name": display, "teachd-kind": "taught", "teachd-recording": rec.id,
                **plan_metadata(proc.plan, any_secret)}
    desc = description(display, proc)
    frontmatter = {
        "name": slug,
        "description": desc,
        "compatibility": "Needs a browser (Chromium) that an agent can drive; "
        "replay with `teachd run " + slug + "`.",
        "metadata": dict(sorted(metadata.items())),
    }
    references = {
        ANCHORS_FILE: to_json(proc.plan.anchors_doc()),
        "references/recording.md": recording_md(rec, proc),
        STEPS_FILE: to_json(proc.plan.steps_doc()),
    }
    return CompiledSkill(
        slug=slug,
        display_name=display,
        description=desc,
        body=skill_body(display, taught_on(rec), proc),
        frontmatter=frontmatter,
        references=references,
        approval_tools=approval,
    )
