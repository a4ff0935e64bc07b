"""The MCP server: tools, resources and prompts over the owner's skills.

One server per process (``teachd mcp`` on stdio, or ``/mcp`` on the
daemon); one ``McpRun`` per MCP session. On stdio the process is the
session, and its person the CLI's owner. Over HTTP a session is the
transport's ``Mcp-Session-Id`` *and* the person whose bearer token came with
the request (the daemon's guard says who): each person sees their own
skills and those shared with them, and asks on their own Approvals page. A
client of the sessionless 2026 protocol shares one run per person.

Tool names and arguments are the contract of DESIGN §3.7. A refused or
failed call is a tool error (``isError``) whose text says why; nothing
else on the page happened.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import unquote

import anyio.to_thread
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    GetPromptResult,
    ImageContent,
    InputRequiredResult,
    PromptMessage,
    TextContent,
    ToolAnnotations,
)
from mcp_types import Prompt as MCPPrompt
from mcp_types import PromptArgument as MCPPromptArgument
from mcp_types import Resource as MCPResource
from mcp_types import Tool as MCPTool
from pydantic import Field

from compiler.names import PROMPT_ARGS
from compiler.plan import PlanError, Procedure
from teachd import __version__
from teachd.core.errors import TeachdError
from teachd.core.models import Skill
from teachd.core.paths import check_relpath
from teachd.mcp.acts import Act
from teachd.mcp.approver import ALLOW_ONCE_SCHEMA, APPROVAL
from teachd.mcp.presence import Presence
from teachd.mcp.session import McpRun, Services, expect_params
from teachd.runner.gate import Asking
from teachd.runner.run import BROWSERS_PER_PERSON
from teachd.runner.session import manifest, visible_skills
from teachd.skills.disk import DiskSkill
from teachd.skills.urls import content_type_for

INSTRUCTIONS = """\
teachd serves the owner's skills, taught by demonstration, and a browser to act in.
Start with load_skill (its description lists the skills). A taught skill's steps
name their targets as anchors: act on them with computer_act(skill=..., anchor=...),
or replay the whole skill with run_skill. A skill that requires approval makes
every computer_act and replay step ask the person first; a denied or unanswered
request does nothing on the page. When the task is done, call feedback."""

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

SKILL_URI = "skill://"
ARGS = PROMPT_ARGS  # /skill:<slug> [args]: what the person typed after the command (no parameter's name)
ARGS_SAY = "what you typed after /skill:<name>, passed to the skill as User: <args>"
T = TypeVar("T")
IDLE_AFTER = 1800.0  # seconds: the SDK's own idle timeout for a streamable HTTP session
SESSIONLESS = "default"  # the run of a person's calls that name no session (the 2026-07-28 protocol)
BROWSERS_IN_ALL = 12  # session browsers on the daemon's machine, all people together
SESSIONLESS_IDLE = 300.0  # seconds: nothing can end such a run but time, so its browser goes sooner

_PERSON: ContextVar[str | None] = ContextVar("teachd_mcp_person", default=None)  # the request's, over HTTP


def _error(exc: Exception) -> ToolError:
    return ToolError(str(exc))


def _round(question: Asking) -> InputRequiredResult:
    """The question as an input-required round (2026-07-28): the client shows
    it and calls again with the answer; ``request_state`` names the question."""
    ask = ElicitRequest(params=ElicitRequestFormParams(message=question.message,
                                                       requested_schema=ALLOW_ONCE_SCHEMA))
    return InputRequiredResult(input_requests={APPROVAL: ask}, request_state=question.key)


def _invalid(message: str) -> MCPError:
    """A request naming what does not exist (a prompt, an argument): JSON-RPC's -32602."""
    return MCPError(INVALID_PARAMS, message)


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


class TeachdMCP(MCPServer):
    def __init__(self, services: Services, for_person: Callable[[str], Services] | None = None,
                 idle_after: float | None = None, browsers_per_person: int = BROWSERS_PER_PERSON,
                 browsers_in_all: int = BROWSERS_IN_ALL) -> None:
        """``services`` are the owner's; ``for_person`` makes another person's
        (the daemon's ``/mcp``, where each request's token says who).
        ``idle_after``: seconds after which a session with no call in flight
        is closed (over HTTP; on stdio the session ends with the process)."""
        super().__init__(name="teachd", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
        self.services, self.for_person = services, for_person
        self.idle_after, self.browsers_per_person = idle_after, browsers_per_person
        self.browsers_in_all = browsers_in_all  # the daemon's machine, whoever asks
        self.streamable_http_asgi: Any = None  # set where it is served over HTTP (the daemon)
        self._seen: dict[tuple[str, str], float] = {}  # when each session was last used
        self._busy: dict[int, int] = {}  # calls in flight per run
        self._reaper: threading.Thread | None = None
        self._closing = threading.Event()
        self._runs: dict[tuple[str, str], McpRun] = {}
        self._people: dict[str, Services] = {}
        self._lock = threading.Lock()
        self.presence = Presence(self.end)  # over HTTP: a client that left without DELETE
        self.middleware.append(self._start_on_initialize)
        self._register_tools()
        if services.disk is not None:  # the disk is the owner's: none of their store's names, enabled or not
            services.disk.keep_out(services.runs.skills.slugs)

    # -- sessions -----------------------------------------------------------
    def services_of(self, person: str | None) -> Services:
        if person is None or self.for_person is None or person == self.services.runs.owner:
            return self.services
        with self._lock:
            if person not in self._people:
                self._people[person] = self.for_person(person)
            return self._people[person]

    def current(self) -> Services:
        """The services of the person this request is from."""
        return self.services_of(_PERSON.get())

    def run_for(self, ctx: Any) -> McpRun:
        person = _person(ctx)
        key = (person or "", _session_key(ctx))  # a session id is one person's: another's token gets its own
        services = self.services_of(person)
        self._start_reaper()
        with self._lock:
            run = self._runs.get(key)
            if run is None or run.closed:
                run = self._runs[key] = McpRun(services, _client_name(ctx))
            self._seen[key] = time.monotonic()
            return run

    async def on_browser(self, ctx: Any, job: Callable[[McpRun, Any], T]) -> T:
        """A job on the session's browser. A person has at most
        ``browsers_per_person`` session browsers open at once (each is a
        Chromium on the daemon's machine); the session stays busy — never
        reaped as idle — while a job of it runs."""
        run = await anyio.to_thread.run_sync(self.run_for, ctx)  # its first call loads (decrypts) its skills
        person = _person(ctx) or ""
        with self._lock:
            if not run.worker.started:
                theirs = [r for (who, _s), r in self._runs.items()
                          if who == person and r is not run and r.worker.started and not r.closed]
                if len(theirs) >= self.browsers_per_person:
                    raise ToolError(f"you already have {len(theirs)} browsers open in other MCP sessions "
                                    f"(at most {self.browsers_per_person}): end one of those sessions first")
                everyone = sum(1 for r in self._runs.values() if r.worker.started and not r.closed)
                if everyone >= self.browsers_in_all:
                    raise ToolError(f"this teachd has {everyone} MCP session browsers open, its most: "
                                    "try again when a session ends")
            self._busy[id(run)] = self._busy.get(id(run), 0) + 1
        try:
            return await run.on_browser(ctx, lambda b: job(run, b))
        finally:
            with self._lock:
                self._busy[id(run)] -= 1
                if not self._busy[id(run)]:
                    del self._busy[id(run)]
                if (key := (person, _session_key(ctx))) in self._runs:  # not one that ended meanwhile
                    self._seen[key] = time.monotonic()

    def end(self, person: str, session: str) -> str | None:
        """The session ``person`` ended (DELETE /mcp, or its client left: see
        presence): what it started is cancelled, its run is recorded as ended
        and its browser closed now, not when the daemon stops."""
        with self._lock:
            run = self._runs.pop((person, session), None)
            self._seen.pop((person, session), None)
        self.presence.forget((person, session))
        if run is None:
            return None
        run.close()
        return run.run_id

    def reap(self, now: float | None = None) -> list[str]:
        """Close the sessions idle (no call in flight) for longer than
        ``idle_after`` seconds, as the SDK forgets their transports (the
        sessionless run, which nothing else ends: after SESSIONLESS_IDLE)."""
        if self.idle_after is None:
            return []
        now = time.monotonic() if now is None else now
        limit = self.idle_after
        with self._lock:
            idle = [key for key, seen in self._seen.items()
                    if now - seen > (min(limit, SESSIONLESS_IDLE) if key[1] == SESSIONLESS else limit)
                    and key in self._runs and not self._busy.get(id(self._runs[key]))]
        return [rid for person, session in idle if (rid := self.end(person, session))]

    def _start_reaper(self) -> None:
        if self.idle_after is None or self._reaper is not None:
            return
        with self._lock:
            if self._reaper is not None:
                return

            def sweep() -> None:
                assert self.idle_after is not None
                while not self._closing.wait(min(60.0, self.idle_after / 4, SESSIONLESS_IDLE / 4)):
                    self.reap()

            self._reaper = threading.Thread(target=sweep, name="teachd-mcp-reaper", daemon=True)
            self._reaper.start()

    async def _start_on_initialize(self, ctx: Any, call_next: Any) -> Any:
        """Every request answers as its person, and a teachd error as a
        JSON-RPC error that says it. At initialize the session's
        run starts: its skills load, their approvals hold from the first call.
        (Over HTTP the session id comes with the answer, so there the first
        call starts it.)"""
        token = _PERSON.set(_person(ctx))
        try:
            result = await call_next(ctx)
        except TeachdError as exc:  # a listing or read that failed (the store away): said, never a traceback
            raise MCPError(INTERNAL_ERROR, str(exc)) from None
        finally:
            _PERSON.reset(token)
        if ctx.method == "initialize" and ctx.request is None:
            await anyio.to_thread.run_sync(self.run_for, ctx)  # off the event loop: it decrypts
        return result

    def close(self) -> list[str]:
        """End every session's run; returns their ids."""
        self._closing.set()
        with self._lock:
            everyone = [self.services, *self._people.values()]
            runs, self._runs = list(self._runs.values()), {}
        for services in everyone:
            services.stop()
        for run in runs:
            run.close()
        return [run.run_id for run in runs]

    def visible(self) -> list[Skill]:
        """What this request's person may see (the manifest, resources, prompts)."""
        services = self.current()
        return visible_skills(services.runs.skills, services.opts.profile)

    # -- tools --------------------------------------------------------------
    def on_disk(self, store_slugs: list[str] | None = None) -> list[DiskSkill]:
        """The disk skills this request's person is served, after the store's."""
        return self.current().disk_skills(store_slugs)

    # Every listing and read below decrypts a person's skills (or walks the
    # disk): it runs in a worker thread, never on the event loop, so one
    # person's thousands of skills hold up no one else's request. The
    # request's person goes with it (contextvars are copied to the thread).
    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        listed = await anyio.to_thread.run_sync(self._listed)
        return [t.model_copy(update={"description": LOAD_SKILL + listed}) if t.name == "load_skill" else t
                for t in tools]

    def _listed(self) -> str:
        services = self.current()
        listing = manifest(services.runs.skills, services.opts.profile)
        stored = [f"- {m['slug']}: {m['name']} — {m['description']}" for m in listing]
        on_disk = [f"- {d.name}: {d.description or '(no description)'} [disk skill, read-only: {d.source}]"
                   for d in self.on_disk([m["slug"] for m in listing])]
        return "\n".join(stored + on_disk) or "- (none: teach one with teachd teach)"

    def _register_tools(self) -> None:
        @self.tool(name="load_skill", description=LOAD_SKILL, annotations=READ_ONLY)
        def load_skill(slug: Slug, ctx: Context) -> str:
            try:
                loaded = self.run_for(ctx).load_skill(slug)
            except TeachdError as exc:
                raise _error(exc) from None
            files = "\n".join(f"- {f}" for f in loaded["files"]) or "- (none)"
            which = (f"v{loaded['version']}" if loaded["version"] is not None
                     else f"({loaded['source']}, read-only)")
            return (f"{loaded['instructions'].rstrip()}\n\n---\nskill {slug} {which} is loaded. "
                    f"Bundled files (read_skill_file):\n{files}\n")

        @self.tool(name="read_skill_file",
                   description="One bundled file of a skill, by its path inside the skill "
                               "(SKILL.md included, with its frontmatter, as the skill:// resource).",
                   annotations=READ_ONLY)
        def read_skill_file(slug: Slug, path: Path_, ctx: Context) -> str:
            try:
                return self.run_for(ctx).read_skill_file(slug, path)
            except TeachdError as exc:
                raise _error(exc) from None

        @self.tool(name="computer_act", description=ACT, annotations=ACTS)
        async def computer_act(
            action: ActionArg, ctx: Context, url: UrlArg = None, ref: RefArg = None, role: RoleArg = None,
            name: NameArg = None, skill: SkillArg = None, anchor: AnchorArg = None, text: TextArg = None,
            value: ValueArg = None, key: KeyArg = None,
        ) -> list[TextContent | ImageContent] | InputRequiredResult:
            act = Act(action, url, ref, role, name, skill, anchor, text, value, key)
            try:
                result = await self.on_browser(ctx, lambda run, b: run.act(b, act))
            except Asking as question:
                return _round(question)
            except TeachdError as exc:
                raise _error(exc) from None
            out: list[TextContent | ImageContent] = [TextContent(type="text", text=result["text"])]
            if result.get("image"):
                import base64

                out.append(ImageContent(type="image", data=base64.b64encode(result["image"]).decode(),
                                        mime_type="image/png"))
            return out

        @self.tool(name="run_skill",
                   description="Replay a taught skill end to end (as teachd run does) in this session's "
                               "browser, with parameters (params: NAME → value; the demonstrated values "
                               "otherwise). Progress comes as notifications; the result is the run's "
                               "outcome and the step that halted, if any. Its approvals ask as "
                               "computer_act's do: one question for the whole plan.",
                   annotations=ACTS)
        async def run_skill(slug: Slug, ctx: Context, params: ParamsArg = None) -> str | InputRequiredResult:
            try:
                values = expect_params(params)
                result = await self.on_browser(ctx, lambda run, b: run.run_skill(b, slug, values))
            except Asking as question:
                return _round(question)
            except TeachdError as exc:
                raise _error(exc) from None
            text = _outcome_text(result)
            if result["status"] != "success":
                raise ToolError(text)
            return text

        @self.tool(name="feedback",
                   description="How the task went, one click: outcome success or failure for a skill, in "
                               "this session's run (or run_id, e.g. a run_skill run). It appends a dated "
                               "line to the skill's History, as a new version.",
                   annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                               idempotent_hint=True, open_world_hint=False))
        def feedback(slug: Slug, outcome: OutcomeArg, ctx: Context, run_id: RunIdArg = None,
                     note: NoteArg = None) -> str:
            try:
                done = self.run_for(ctx).feedback(slug, outcome, run_id, note)
            except TeachdError as exc:
                raise _error(exc) from None
            if not done["recorded"]:
                return (f"{slug}: run {done['run_id']} already has its feedback ({done['outcome']}); "
                        "nothing changed")
            return f"{slug} v{done['version']}: recorded {outcome} for run {done['run_id']}"

    # -- resources ----------------------------------------------------------
    async def list_resources(self) -> list[MCPResource]:
        return await anyio.to_thread.run_sync(self._resources)

    def _resources(self) -> list[MCPResource]:
        out = []
        for s in self.visible():
            out.append(MCPResource(uri=f"{SKILL_URI}{s.slug}", name=f"{s.slug}/SKILL.md",
                                   description=s.current.description, mime_type="text/markdown"))
            out += [MCPResource(uri=f"{SKILL_URI}{s.slug}/{path}", name=f"{s.slug}/{path}",
                                mime_type=content_type_for(path)) for path in sorted(s.current.files)]
        for d in self.on_disk():
            out.append(MCPResource(uri=f"{SKILL_URI}{d.name}", name=f"{d.name}/SKILL.md",
                                   description=d.description or None, mime_type="text/markdown"))
            out += [MCPResource(uri=f"{SKILL_URI}{d.name}/{path}", name=f"{d.name}/{path}",
                                mime_type=content_type_for(path)) for path in d.files()]
        return out

    async def read_resource(self, uri: Any, context: Any = None) -> list[ReadResourceContents]:
        text = str(uri)
        if not text.startswith(SKILL_URI):
            raise ResourceNotFoundError(f"unknown resource {text}: teachd serves skill://slug[/path]")
        slug, _, raw = unquote(text[len(SKILL_URI):]).partition("/")
        return await anyio.to_thread.run_sync(self._read, context, slug, raw)

    def _read(self, context: Any, slug: str, raw: str) -> list[ReadResourceContents]:
        """The resource is the tool ``read_skill_file``: the same call, which
        loads the skill into the session (its gate armed) before a word of it
        is handed out."""
        try:
            path = check_relpath(raw) if raw else "SKILL.md"
            text = self.run_for(context).read_skill_file(slug, path)
            kind = "text/markdown" if path == "SKILL.md" else content_type_for(path)
            return [ReadResourceContents(text, kind)]
        except TeachdError as exc:
            raise ResourceNotFoundError(str(exc)) from None

    # -- prompts ------------------------------------------------------------
    async def list_prompts(self) -> list[MCPPrompt]:
        return await anyio.to_thread.run_sync(self._prompts)

    def _prompts(self) -> list[MCPPrompt]:
        if not self.current().settings.skill_commands:
            return []
        return [MCPPrompt(name=f"skill:{s.slug}", description=s.current.description,
                          arguments=[MCPPromptArgument(name=ARGS, description=ARGS_SAY, required=False),
                                     *(MCPPromptArgument(name=p, description=_described(d), required=False)
                                       for p, d in sorted(_parameters(s).items()))])
                for s in self.visible()] + [
                MCPPrompt(name=f"skill:{d.name}", description=d.description or None,
                          arguments=[MCPPromptArgument(name=ARGS, description=ARGS_SAY, required=False)])
                for d in self.on_disk()]

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None,
                         context: Any = None) -> GetPromptResult:
        """``/skill:<slug> [args]`` as seed 000 says: the skill's body (its
        frontmatter stripped), then ``Skill: <path>`` and, when given,
        ``User: <args>`` — a taught skill's declared parameters after them.

        Getting the prompt loads the skill into the session exactly as
        ``load_skill`` does (``McpRun.load_skill``): the body is in the
        agent's hands from now on, so the skill's approval holds for every
        later call of the session, and its run lists it."""
        if not self.current().settings.skill_commands:
            raise _invalid("skill commands are off (config.yaml skills.enableSkillCommands: false)")
        slug = name.removeprefix("skill:")
        skill, disk = await anyio.to_thread.run_sync(self._prompt_of, name, slug)
        if skill is None and disk is None:
            raise _invalid(f"no prompt {name!r}: prompts are skill:<slug> for the enabled skills")
        params = _parameters(skill) if skill is not None else {}
        unknown = sorted(set(arguments or {}) - set(params) - {ARGS})
        if unknown:
            raise _invalid(f"unknown argument(s) {', '.join(unknown)}; this skill takes: "
                           f"{', '.join([ARGS, *sorted(params)])}")
        given = {k: str(v) for k, v in (arguments or {}).items() if k in params and str(v)}
        said = str((arguments or {}).get(ARGS) or "").strip()
        try:  # armed before a word of the body is handed out; a skill that cannot load gives none
            run = await anyio.to_thread.run_sync(self.run_for, context)
            await anyio.to_thread.run_sync(run.load_skill, slug)
        except TeachdError as exc:
            raise _invalid(f"{name}: {exc}") from None
        if skill is not None:
            skill = run.session.loaded.get(slug, skill)  # the version just loaded (and recorded)
        if disk is not None:  # read from its file now, as seed 000 does: the path is the file's
            try:
                body = await anyio.to_thread.run_sync(disk.body)
                where, description = str(disk.skill_md), disk.description
            except TeachdError as exc:
                raise _invalid(f"{name}: {exc}") from None
        else:
            assert skill is not None
            body, where = skill.current.instructions, f"{SKILL_URI}{slug}/SKILL.md"
            description = skill.current.description
        text = (body.rstrip("\n") + f"\n\nSkill: {where}" + (f"\nUser: {said}" if said else "")
                + "".join(f"\nParameter {k}: {v}" for k, v in sorted(given.items())))
        message = PromptMessage(role="user", content=TextContent(type="text", text=text))
        return GetPromptResult(description=description or None, messages=[message])

    def _prompt_of(self, name: str, slug: str) -> tuple[Skill | None, DiskSkill | None]:
        """The store skill, else the disk skill, a prompt's name gives (None, None: neither)."""
        if not name.startswith("skill:"):
            return None, None
        skill = next((s for s in self.visible() if s.slug == slug), None)
        return skill, None if skill is not None else self.current().disk_skill(slug)


def _parameters(skill: Skill) -> dict[str, dict[str, Any]]:
    try:
        return Procedure.from_files(skill.current.files).parameters if skill.is_taught else {}
    except PlanError:
        return {}


def _described(spec: dict[str, Any]) -> str:
    """A parameter as a person reads it: what it fills, and its demonstrated value."""
    what = str(spec.get("description") or spec.get("describe") or "").replace("**", "")
    default = spec.get("default")
    shown = f"{what} (demonstrated: {default})" if what and default not in (None, "") else what
    return shown or "a value to type"


def _outcome_text(result: dict[str, Any]) -> str:
    lines = [f"run {result['run_id']}: {result['status']} — {result['message']}"]
    for s in result["steps"]:
        lines.append(f"  step {s['n']} {s['action']}: {s['status']}"
                     + (f" ({s['detail']})" if s["status"] != "ok" else ""))
    if result.get("halted_step"):
        lines.append(f"halted at step {result['halted_step']['n']}: {result['halted_step']['detail']}")
    lines.append(f"feedback: feedback(slug, outcome, run_id=\"{result['run_id']}\")")
    return "\n".join(lines)


def _session_key(ctx: Any) -> str:
    headers = _headers(ctx)
    return (headers or {}).get("mcp-session-id") or SESSIONLESS


def _request(ctx: Any) -> Any:
    request = getattr(ctx, "request", None)
    if request is None and hasattr(ctx, "request_context"):
        request = getattr(ctx.request_context, "request", None)
    return request


def _headers(ctx: Any) -> Any:
    return getattr(_request(ctx), "headers", None)


def _person(ctx: Any) -> str | None:
    """Over HTTP, the person the daemon's guard found for the bearer token; None on stdio."""
    scope = getattr(_request(ctx), "scope", None) or {}
    person = (scope.get("state") or {}).get("user")
    return str(person) if person else None


def _client_name(ctx: Any) -> str:
    """The client's own name and version, for the run's record: from the
    session, or at ``initialize`` from the request's own ``clientInfo``."""
    session = getattr(ctx, "session", None)
    info = getattr(getattr(session, "client_params", None), "client_info", None)
    if info is not None:
        return f"{info.name} {info.version}".strip()
    given = (getattr(ctx, "params", None) or {}).get("clientInfo")
    if isinstance(given, dict) and given.get("name"):
        return f"{given['name']} {given.get('version') or ''}".strip()[:120]
    return "an MCP client"
