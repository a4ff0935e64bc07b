"""The MCP tools: one function each, listed once in ``TOOLS``.

A tool function's first parameter is the server's sessions (``Sessions``:
the calling session's run and its browser); the rest is its signature as the
client sees it — the MCP SDK derives the tool's input schema from those
parameters and their annotations, and its output schema from the return
annotation. ``Tool.bound`` hands the SDK the function with the sessions
given, under the function's own name.

Tool names and arguments are the contract of DESIGN §3.7. A refused or
failed call is a tool error (``isError``) whose text says why; nothing
else on the page happened.
"""

from __future__ import annotations

import base64
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ImageContent,
    InputRequiredResult,
    TextContent,
    ToolAnnotations,
)
from pydantic import Field

from teachd.core.errors import BadInput, TeachdError, as_teachd_error
from teachd.mcp.acts import Act
from teachd.mcp.approver import APPROVAL, schema_of
from teachd.mcp.session import Sessions
from teachd.runner.gate import Asking

LOAD_SKILL = """\
Load a skill into this session: returns its instructions, then the list of its
bundled files (read them with read_skill_file). A user message naming $slug asks
for that skill; loading it is the client's job. Skills this session may load:
"""

ACT = """\
One action in the browser this session owns. action: goto (url), click, type (text;
a secret as exactly {{secret:NAME}}, only into the field its taught skill masked —
skill + the anchor of the step that types it — filled by teachd, never shown), select (value: the
option's value or label), check (value "false" unchecks), press (key), scroll,
snapshot (the page's accessibility tree with element refs), screenshot.
The target: ref (from the last snapshot), or role + name, or skill + anchor (a
loaded taught skill's anchor id, found as teachd run finds it). Exactly one
visible element must answer, or nothing is done and the error says why.
While a loaded skill requires approval, each call asks the person first
(through the client, or on the teachd Approvals page); so does a page outside
the loaded taught skills' allowed sites."""

READ_SKILL_FILE = ("One bundled file of a skill, by its path inside the skill "
                   "(SKILL.md included, with its frontmatter, as the skill:// resource).")
RUN_SKILL = ("Replay a taught skill end to end (as teachd run does) in this session's "
             "browser, with parameters (params: NAME → value; the demonstrated values "
             "otherwise). Progress comes as notifications; the result is the run's "
             "outcome and the step that halted, if any. Its approvals ask as "
             "computer_act's do: one question for the whole plan. On a teachd serve "
             "with a run queue (a team's store) it goes on the queue as a Runs-page "
             "click does: a worker replays it (not this session's browser), and its "
             "questions and secrets wait on the daemon's Approvals and secret pages.")
FEEDBACK = ("How the task went, one click: outcome success or failure for a skill, in "
            "this session's run (or run_id, e.g. a run_skill run). It appends a dated "
            "line to the skill's History, as a new version.")


# Every tool argument says what it is (a client shows it, a model reads it).
def _arg(description: str) -> Any:
    return Field(description=description)


Slug = Annotated[str, _arg("The skill's slug, as load_skill's list names it (taught-file-a-report…).")]
Path_ = Annotated[str, _arg("A file's path inside the skill: SKILL.md, references/steps.json, …")]
ActionArg = Annotated[Literal["goto", "click", "type", "select", "check", "press", "scroll", "snapshot",
                              "screenshot"], _arg("What to do (see the tool's description).")]
UrlArg = Annotated[str | None, _arg("goto: the address to open.")]
RefArg = Annotated[str | None, _arg("The target: an element ref from the last snapshot.")]
RoleArg = Annotated[str | None, _arg("The target: its ARIA role (with name).")]
NameArg = Annotated[str | None, _arg("The target: its accessible name (with role).")]
SkillArg = Annotated[str | None, _arg("The target: a loaded taught skill (with anchor).")]
AnchorArg = Annotated[str | None, _arg("The target: that skill's anchor id (a1, a2, …).")]
TextArg = Annotated[str | None, _arg("type: the text; a secret as exactly {{secret:NAME}}.")]
ValueArg = Annotated[str | None, _arg('select: the option\'s value or label; check: "false" unchecks.')]
KeyArg = Annotated[str | None, _arg("press: the key (Enter, Tab, Escape, Control+A…).")]
ParamsArg = Annotated[dict[str, str] | None, _arg("Parameter NAME → value, the skill's declared ones "
                                                  "(steps.json); the demonstrated values when left out.")]
OutcomeArg = Annotated[Literal["success", "failure"], _arg("Did the task work?")]
RunIdArg = Annotated[str | None, _arg("The run it is about: this session's, or a run_skill run's id.")]
NoteArg = Annotated[str | None, _arg("A few words for the History line.")]
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
ACTS = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                       open_world_hint=True)
RECORDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                          open_world_hint=False)


def _said(exc: Exception) -> ToolError | None:
    """A teachd error — or a component's (a skill whose plan cannot be read) —
    as the tool's error, its message for the agent to read; None for a bug,
    which the SDK reports without its details."""
    mapped = exc if isinstance(exc, TeachdError) else as_teachd_error(exc)
    return None if mapped is None else ToolError(str(mapped))


def _round(question: Asking) -> InputRequiredResult:
    """The question as an input-required round (2026-07-28): the client shows
    it and calls again with the answer; ``request_state`` names the question."""
    ask = ElicitRequest(params=ElicitRequestFormParams(message=question.message,
                                                       requested_schema=schema_of(question.boxes)))
    return InputRequiredResult(input_requests={APPROVAL: ask}, request_state=question.key)


# -- the tools ----------------------------------------------------------------
def load_skill(sessions: Sessions, slug: Slug, ctx: Context) -> str:
    loaded = sessions.run_for(ctx).load_skill(slug)
    files = "\n".join(f"- {f}" for f in loaded["files"]) or "- (none)"
    which = (f"v{loaded['version']}" if loaded["version"] is not None
             else f"({loaded['source']}, read-only)")
    return (f"{loaded['instructions'].rstrip()}\n\n---\nskill {slug} {which} is loaded. "
            f"Bundled files (read_skill_file):\n{files}\n")


def read_skill_file(sessions: Sessions, slug: Slug, path: Path_, ctx: Context) -> str:
    return sessions.run_for(ctx).read_skill_file(slug, path)


async def computer_act(
    sessions: Sessions, action: ActionArg, ctx: Context, url: UrlArg = None, ref: RefArg = None,
    role: RoleArg = None, name: NameArg = None, skill: SkillArg = None, anchor: AnchorArg = None,
    text: TextArg = None, value: ValueArg = None, key: KeyArg = None,
) -> list[TextContent | ImageContent] | InputRequiredResult:
    act = Act(action, url, ref, role, name, skill, anchor, text, value, key)
    try:
        result = await sessions.on_browser(ctx, lambda run, b: run.act(b, act))
    except Asking as question:
        return _round(question)
    out: list[TextContent | ImageContent] = [TextContent(type="text", text=result["text"])]
    if result.get("image"):
        out.append(ImageContent(type="image", data=base64.b64encode(result["image"]).decode(),
                                mime_type="image/png"))
    return out


def expect_params(params: Any) -> dict[str, str]:
    if params is None:
        return {}
    if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
        raise BadInput("params is an object of NAME: value")
    return {k: str(v) for k, v in params.items()}


async def run_skill(sessions: Sessions, slug: Slug, ctx: Context,
                    params: ParamsArg = None) -> str | InputRequiredResult:
    try:
        values = expect_params(params)
        result = await sessions.replay(ctx, slug, values)
    except Asking as question:
        return _round(question)
    text = _outcome_text(result)
    if result["status"] != "success":
        raise ToolError(text)
    return text


def feedback(sessions: Sessions, slug: Slug, outcome: OutcomeArg, ctx: Context, run_id: RunIdArg = None,
             note: NoteArg = None) -> str:
    done = sessions.run_for(ctx).feedback(slug, outcome, run_id, note)
    if not done["recorded"]:
        return (f"{slug}: run {done['run_id']} already has its feedback ({done['outcome']}); "
                "nothing changed")
    return f"{slug} v{done['version']}: recorded {outcome} for run {done['run_id']}"


def _outcome_text(result: dict[str, Any]) -> str:
    lines = [f"run {result['run_id']}: {result['status']} — {result['message']}"]
    for s in result["steps"]:
        lines.append(f"  step {s['n']} {s['action']}: {s['status']}"
                     + (f" ({s['detail']})" if s["status"] != "ok" else ""))
    if result.get("halted_step"):
        lines.append(f"halted at step {result['halted_step']['n']}: {result['halted_step']['detail']}")
    lines.append(f"feedback: feedback(slug, outcome, run_id=\"{result['run_id']}\")")
    return "\n".join(lines)


# -- the list the server registers ----------------------------------------------
@dataclass(frozen=True)
class Tool:
    name: str
    fn: Callable[..., Any]  # its first parameter takes the Sessions; the others are the tool's arguments
    description: str
    annotations: ToolAnnotations

    def bound(self, sessions: Sessions) -> Callable[..., Any]:
        """``fn`` with its sessions given: named as ``fn`` is, its signature and
        annotations ``fn``'s without the first parameter — what the SDK reads
        for the input and output schemas (and for where the Context goes)."""
        fn = self.fn
        signature = inspect.signature(fn, eval_str=True)
        first, *rest = signature.parameters.values()

        async def awaited(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(sessions, *args, **kwargs)
            except Exception as exc:
                raise _said(exc) or exc from None

        def called(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(sessions, *args, **kwargs)
            except Exception as exc:
                raise _said(exc) or exc from None

        call = awaited if inspect.iscoroutinefunction(fn) else called
        hints = typing.get_type_hints(fn, include_extras=True)
        for attr, value in (("__name__", fn.__name__), ("__qualname__", fn.__name__),
                            ("__module__", fn.__module__), ("__doc__", fn.__doc__),
                            ("__signature__", signature.replace(parameters=rest)),
                            ("__annotations__", {k: v for k, v in hints.items() if k != first.name})):
            setattr(call, attr, value)
        return call


TOOLS = [
    Tool("load_skill", load_skill, LOAD_SKILL, READ_ONLY),
    Tool("read_skill_file", read_skill_file, READ_SKILL_FILE, READ_ONLY),
    Tool("computer_act", computer_act, ACT, ACTS),
    Tool("run_skill", run_skill, RUN_SKILL, ACTS),
    Tool("feedback", feedback, FEEDBACK, RECORDS),
]
