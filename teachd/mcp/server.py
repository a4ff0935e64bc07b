"""The MCP server: tools, resources and prompts over the owner's skills.

One server per process (``teachd mcp`` on stdio, or ``/mcp`` on the
daemon); one ``McpRun`` per MCP session. On stdio the process is the
session, and its person the CLI's owner. Over HTTP a session is the
transport's ``Mcp-Session-Id`` *and* the person whose bearer token came with
the request (the daemon's guard says who): each person sees their own
skills and those shared with them, and asks on their own Approvals page. A
client of the sessionless 2026 protocol shares one run per person.

The tools are ``teachd.mcp.tools.TOOLS``, registered here, each given this
server as its ``Sessions``; the resources and prompts are listed per person,
so the handlers here hand them to ``teachd.mcp.resources`` and
``teachd.mcp.prompts``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

import anyio.to_thread
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR
from mcp_types import GetPromptResult
from mcp_types import Prompt as MCPPrompt
from mcp_types import Resource as MCPResource
from mcp_types import Tool as MCPTool

from teachd import __version__
from teachd.core.errors import TeachdError
from teachd.core.models import Skill
from teachd.mcp import prompts, resources
from teachd.mcp.presence import Presence
from teachd.mcp.session import McpRun, Services
from teachd.mcp.tools import LOAD_SKILL, TOOLS
from teachd.runner.run import BROWSERS_PER_PERSON
from teachd.runner.session import manifest, visible_skills
from teachd.skills.disk import DiskSkill

INSTRUCTIONS = """\
teachd serves the owner's skills, taught by demonstration, and a browser to act in.
Start with load_skill (its description lists the skills). A taught skill's steps
name their targets as anchors: act on them with computer_act(skill=..., anchor=...),
or replay the whole skill with run_skill. A skill that requires approval makes
every computer_act and replay step ask the person first; a denied or unanswered
request does nothing on the page. When the task is done, call feedback."""

T = TypeVar("T")
IDLE_AFTER = 1800.0  # seconds: the SDK's own idle timeout for a streamable HTTP session
SESSIONLESS = "default"  # the run of a person's calls that name no session (the 2026-07-28 protocol)
BROWSERS_IN_ALL = 12  # session browsers on the daemon's machine, all people together
SESSIONLESS_IDLE = 300.0  # seconds: nothing can end such a run but time, so its browser goes sooner

_PERSON: ContextVar[str | None] = ContextVar("teachd_mcp_person", default=None)  # the request's, over HTTP


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
        with self._busy_while(run, person, ctx):
            return await run.on_browser(ctx, lambda b: job(run, b))

    async def replay(self, ctx: Any, slug: str, params: dict[str, str]) -> dict[str, Any]:
        """run_skill: on the daemon's run queue where it has one (a worker
        replays it, as a Runs-page click; no browser opens here), else on the
        session's own browser."""
        run = await anyio.to_thread.run_sync(self.run_for, ctx)  # a person's first call opens their view
        if (door := run.services.run_door) is None:
            return await self.on_browser(ctx, lambda r, b: r.run_skill(b, slug, params))
        with self._busy_while(run, _person(ctx) or "", ctx):
            return await run.queue_skill(ctx, door, slug, params)

    @contextlib.contextmanager
    def _busy_while(self, run: McpRun, person: str, ctx: Any) -> Iterator[None]:
        """The session is busy — never reaped as idle — while a job of it runs."""
        with self._lock:
            self._busy[id(run)] = self._busy.get(id(run), 0) + 1
        try:
            yield
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
        """Every tool of ``TOOLS``, its sessions this server's."""
        for tool in TOOLS:
            self.add_tool(tool.bound(self), name=tool.name, description=tool.description,
                          annotations=tool.annotations)

    # -- resources ----------------------------------------------------------
    async def list_resources(self) -> list[MCPResource]:
        return await anyio.to_thread.run_sync(self._resources)

    def _resources(self) -> list[MCPResource]:
        return resources.listed(self.current())

    async def read_resource(self, uri: Any, context: Any = None) -> list[ReadResourceContents]:
        slug, raw = resources.named(uri)
        return await anyio.to_thread.run_sync(resources.read, self, context, slug, raw)

    # -- prompts ------------------------------------------------------------
    async def list_prompts(self) -> list[MCPPrompt]:
        return await anyio.to_thread.run_sync(self._prompts)

    def _prompts(self) -> list[MCPPrompt]:
        return prompts.listed(self.current())

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None,
                         context: Any = None) -> GetPromptResult:
        return await prompts.prompt(self, self.current(), name, arguments, context)


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
