"""One MCP session is one run.

It loads the owner's enabled taught skills (or exactly a profile's) when it
starts, so their approvals hold from the first call, and is recorded like a
``teachd run``: its skills and versions (the Runs page's feedback chips),
then what it did. Every ``computer_act`` goes through the same gate as a
replay step, after the same scope guard; ``run_skill`` is the replay
executor itself, on the session's own browser.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio.to_thread

from compiler.plan import PlanError, Procedure
from compiler.scope import in_scope
from recorder.errors import first_line
from teachd.config import Settings
from teachd.core.errors import BadInput, NotFound, PolicyStop, TeachdError
from teachd.mcp.acts import SECRET, Act, by_ref_or_role, masked_field, perform
from teachd.mcp.approver import Caller, ClientApprover, answers_of, anywhere, asks_in_rounds
from teachd.mcp.queued import RunDoor, replay_on_queue, with_halted_step
from teachd.mcp.worker import Browser, BrowserWorker
from teachd.runner.feedback import give_feedback
from teachd.runner.gate import Action, Asking, Gate
from teachd.runner.guard import (
    Layer,
    RequestGuard,
    element_location,
    focused_location,
    frames_turned,
    guard_for,
)
from teachd.runner.policy import RunPolicy, Who
from teachd.runner.replay import Halt, Replayer, plain
from teachd.runner.run import RunOptions, prepare, replay
from teachd.runner.secrecy import Scrubber
from teachd.runner.secret_desk import SecretSource, Ticket, wait_for_secret
from teachd.runner.session import RunSession
from teachd.store.approvals import ApprovalQueue
from teachd.store.rules import RuleStore
from teachd.store.runs import RunStore

if TYPE_CHECKING:
    from playwright.sync_api import Locator

    from teachd.remote.egress import Resolver
    from teachd.remote.proxy import Dial
    from teachd.skills.disk import DiskShelf, DiskSkill

T = TypeVar("T")
TOOL = "computer_act"
SETTLE = frozenset({"click", "press", "type", "select", "check"})  # actions that can start a navigation
SETTLE_MS = 250  # after every frame has turned: how long a started navigation may take to reach the guard


def _settle(b: Browser, act: Act) -> None:
    """After an action that can start a navigation: every frame has run past
    it (so the navigation has started, however slow the machine), then a
    moment for it to reach the guard — whose stop is then this call's answer."""
    if act.action in SETTLE:
        frames_turned(b.page)
        b.page.wait_for_timeout(SETTLE_MS)


@dataclass
class Services:
    """What sessions need from the process serving them (``teachd mcp`` or the daemon)."""

    runs: RunStore
    queue: ApprovalQueue
    settings: Settings
    opts: RunOptions  # browser, display, profile, step timeout
    where: str  # where TEACHD_SECRET_<NAME> would be read, for the error that says it is missing
    secrets: SecretSource | None = None  # the daemon's secret page
    stopping: threading.Event = field(default_factory=threading.Event)  # the server is closing: stop waiting
    # whose sessions these are: the owner's (``teachd mcp``, the daemon's owner) reach the host's
    # network; anyone else's browser reaches no loopback/private/special address (teachd.runner.policy)
    who: Who | None = None
    # where a question goes when the client cannot show it: the Approvals page, or None (no daemon runs)
    approvals_page: Callable[[], str | None] = anywhere
    disk: DiskShelf | None = None  # the disk skills served beside the store's: the local person's only
    # the daemon's run queue (team store): run_skill goes there as a Runs-page click does; None: the
    # replay runs in the session's own browser (``teachd mcp``, the embedded store)
    run_door: RunDoor | None = None

    def disk_skills(self, store_slugs: Iterable[str] | None = None) -> list[DiskSkill]:
        """The disk skills served: after the store's visible ones (``store_slugs``
        when the caller has them), none of their names; none when a profile
        binds exactly its skills."""
        if self.disk is None or self.opts.profile is not None:
            return []
        if store_slugs is None:
            store_slugs = [m["slug"] for m in self.runs.skills.manifest()]  # names only, remembered
        return self.disk.beside(store_slugs)

    def disk_skill(self, slug: str) -> DiskSkill | None:
        """The disk skill ``slug`` names, if one is served (the store is asked
        only when the disk has a skill of that name)."""
        if self.disk is None or self.opts.profile is not None or slug not in self.disk.skills():
            return None
        return next((d for d in self.disk_skills() if d.name == slug), None)

    def stop(self) -> None:
        """Every question still waiting is a deny, every secret still asked is not given."""
        self.stopping.set()
        self.queue.close()


class McpRun:
    def __init__(self, services: Services, client: str) -> None:
        self.services, self.client = services, client
        runs = services.runs
        self.approver = ClientApprover(services.queue, services.queue.timeout, services.stopping,
                                       services.approvals_page)
        self.gate = Gate(self.approver, saved_rules=RuleStore(runs.db, runs.owner).tools())
        self.session = RunSession(runs.skills, self.gate, services.opts.profile)
        self.session.auto_load()
        self.run_id = runs.new_run_id()
        runs.start(self.run_id, self.session.versions())
        self.approver.run_id = self.run_id
        who = services.who or Who.of(services.settings, runs.owner)
        self.policy = RunPolicy(who)  # on every browser it opens
        self.worker = BrowserWorker(services.opts, self.policy)
        self.actions: list[dict[str, Any]] = []
        self.replays: list[str] = []
        self.replays_under_way: set[str] = set()  # run_skill runs not ended yet: a cancel stops them
        self.used: list[str] = []  # the skills the agent loaded, replayed or acted through: their chips
        self.interrupted = threading.Event()  # the client cancelled the call under way
        self._plans: dict[tuple[str, int], Procedure | None] = {}
        self._lock = threading.Lock()
        # the session's skills change on the thread of whichever call loads one (a tool's, the
        # browser's, a prompt's): one at a time, each with the versions the run records after it
        self._skills = threading.RLock()
        self.closed = False
        self._layers: list[Layer] = []  # this session's rules on its browser's guard (runner.guard)
        self.scrubber = Scrubber()  # every secret this session typed: never handed back

    # -- skills -------------------------------------------------------------
    def load_skill(self, slug: str) -> dict[str, Any]:
        with self._skills:
            if (disk := self.services.disk_skill(slug)) is not None:
                loaded = disk.loaded()
                self.gate.load(slug, disk.approval)  # a disk copy of a taught skill asks as its original did
                return loaded
            loaded = self.session.load_skill(slug)
            self._used(slug)
            self.services.runs.set_skills(self.run_id, self.session.versions())
            return loaded

    def _to_replay(self, slug: str, params: dict[str, str]) -> Procedure:
        """A skill about to be replayed, here or on the queue: loaded (its gate
        too), its parameters checked, and the run's skills recorded."""
        with self._skills:
            self._not_on_disk(slug, "taught steps to replay")
            proc = prepare(self.session, slug, params)
            self._used(slug)
            self.services.runs.set_skills(self.run_id, self.session.versions())
            return proc

    def read_skill_file(self, slug: str, path: str) -> str:
        """A file of a skill — the tool, and the ``skill://`` resource. What the
        agent reads of a skill, it has: the skill is loaded into the session
        first, as ``load_skill`` and the ``skill:`` prompt do, so its approval
        holds for every later call (a body without its gate was the twin fault)."""
        with self._skills:
            if slug not in self.session.loaded:
                self.load_skill(slug)
        if (disk := self.services.disk_skill(slug)) is not None:
            return disk.read(path)
        return self.session.read_skill_file(slug, path)

    def _not_on_disk(self, slug: str, what: str) -> None:
        """A disk skill is read-only instructions: no versions, no replay."""
        if (disk := self.services.disk_skill(slug)) is not None:
            raise BadInput(f"{slug} is a disk skill ({disk.source}), read-only: it has no {what}. "
                           f"To keep it in teachd: teachd skills import {disk.folder}")

    def _used(self, slug: str) -> None:
        with self._lock:
            if slug not in self.used:
                self.used.append(slug)

    def feedback(self, slug: str, outcome: str, run_id: str | None, note: str | None) -> dict[str, Any]:
        self._not_on_disk(slug, "History to append to")
        ref = run_id or self.run_id
        runs = self.services.runs
        given = give_feedback(runs, ref, slug, outcome, note, own_session=ref == self.run_id)
        return {**given.skill.summary(), "run_id": ref, "recorded": given.recorded, "outcome": given.outcome}

    # -- the browser --------------------------------------------------------
    async def on_browser(self, ctx: Any, job: Callable[[Browser], T]) -> T:
        """Run a job on the session's browser thread, with this call's client
        reachable (for questions and progress) while it runs."""
        rounds = asks_in_rounds(ctx)
        caller = Caller(ctx, asyncio.get_running_loop(), self.services.stopping, cancelled=self.interrupted,
                        rounds=rounds, answered=answers_of(ctx) if rounds else {})

        def with_caller(b: Browser) -> T:
            self.interrupted.clear()  # a cancel belongs to the call it came for, not to this one
            self.approver.caller = caller
            try:
                return job(b)
            finally:
                self.approver.caller = None

        future = self.worker.submit(with_caller)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            self.interrupt()  # the client gave up on this call: stop what it started
            raise

    def interrupt(self) -> None:
        """The call under way was cancelled: its question is withdrawn (a deny:
        nothing more acts), a replay stops before its next step, and the
        browser is free for the next call."""
        self.interrupted.set()
        self.services.queue.withdraw(self.run_id)
        for run_id in list(self.replays_under_way):
            self.services.runs.cancel(run_id, "the agent's client")
            self.services.queue.withdraw(run_id)

    def act(self, b: Browser, act: Act) -> dict[str, Any]:
        """Find the target (halting rather than guessing), guard the scope, ask
        the gate, then act. A refusal at any point leaves the page untouched."""
        act.check()
        if (desktop := self._desktop_anchor(act)) is not None:
            return self._desktop_act(act, *desktop)
        record: dict[str, Any] = {"action": act.action, "target": act.describe(),
                                  "page": self.scrubber.scrub(b.page.url)}
        try:
            guard = self._guarded(b)
            earlier = guard.take()  # stopped while no call was under way (the page's own doing): told below
            names = self._secrets_in(act)  # a secret goes only into the field its skill masked
            target, found = self._target(b, act)
            if names:
                masked_field(target, act)
            page = self._where_it_acts(b, act, target)
            what = act.describe(found)
            record.update(page=self.scrubber.scrub(page), target=what)
            if act.action == "goto" and (why := self.policy.network_refusal(page)):
                raise PolicyStop(f"{why}; nothing was opened")
            outside, scrub = self._outside_scope(page), self.scrubber.scrub  # the question shows no secret
            self.gate.guard(Action(TOOL, what, scrub(page)), outside and scrub(outside))
            if act.action == "goto":
                guard.permit(page)  # asked just now (if outside): its navigation is not asked again
            values = {name: self.secret(name) for name in names}  # before typing
            try:
                result = perform(b, act, target, values.__getitem__, self.services.opts.step_timeout, what,
                                 scrubber=self.scrubber)
                _settle(b, act)  # a navigation it started reaches the guard before we answer
            except Exception:
                guard.raise_stops()  # a stopped navigation is why, whatever Playwright says
                raise
            guard.raise_stops()
            if earlier:
                result["text"] += "\nMeanwhile teachd stopped: " + "; ".join(s.describe() for s in earlier)
            record["status"] = "done"
            return result
        except Asking:
            record["status"] = "asked in the client"  # the call comes again with the answer
            raise
        except TeachdError as exc:
            detail = self.scrubber.scrub(str(exc))
            record.update(status="refused" if isinstance(exc, PolicyStop) else "failed", detail=detail)
            if detail != str(exc):
                raise type(exc)(detail) from None
            raise
        except Exception as exc:  # Playwright's own: said in one line
            first = first_line(exc)
            record.update(status="failed", detail=self.scrubber.scrub(first))
            raise BadInput(f"{act.action} failed: {record['detail']}; nothing more was done") from None
        finally:
            with self._lock:
                self.actions.append({"n": len(self.actions) + 1, **record})  # a step of the run page

    def _desktop_anchor(self, act: Act) -> tuple[Procedure, dict[str, Any]] | None:
        """A loaded taught skill's desktop anchor (``d1``…), when that is the target."""
        if not (act.skill and act.anchor) or act.skill not in self.session.loaded:
            return None
        proc = self._plan(act.skill)
        anchor = proc.desktop.get(act.anchor) if proc is not None else None
        return (proc, anchor) if proc is not None and anchor is not None else None

    def _desktop_act(self, act: Act, proc: Procedure, anchor: dict[str, Any]) -> dict[str, Any]:
        """A click on, or typing into, a taught desktop widget: found by
        accessibility, exactly one, or nothing is done; asked at the same gate
        as a page's action (its app outside the skill's ``apps`` asks first);
        a secret typed only into the widget the demonstration masked."""
        from recorder.a11y import NoAccessibility, open_desktop
        from teachd.runner.desktop import DesktopActor, DesktopHalt, outside_apps

        what = act.describe(plain(str(anchor.get("describe") or "the widget")))
        klass = str((anchor.get("window") or {}).get("class") or "")
        record: dict[str, Any] = {"action": act.action, "target": what, "page": f"the desktop ({klass})"}
        try:
            if act.action not in ("click", "type"):
                raise BadInput(f"a desktop anchor is clicked or typed into, not {act.action!r}; "
                               "nothing was done")
            names = SECRET.findall(act.text or "") if act.action == "type" else []
            masked = {s.secret for s in proc.steps
                      if s.action == "os_type" and s.desktop == act.anchor and s.secret}
            if names and (len(names) != 1 or names[0] not in masked
                          or SECRET.fullmatch((act.text or "").strip()) is None):
                raise PolicyStop(f"a secret is typed alone, into the widget its taught skill masked; anchor "
                                 f"{act.anchor} of {act.skill} is not that widget for it; nothing was typed")
            if "widget" not in anchor:
                raise BadInput(f"anchor {act.anchor} names no widget (its app has no accessibility): "
                               "run_skill replays it by its picture; nothing was done")
            try:
                actor = DesktopActor(open_desktop())
                widget = actor.find(anchor, self.services.opts.step_timeout)
            except NoAccessibility as exc:
                raise BadInput(f"{exc}; nothing was done") from None
            outside = outside_apps(klass, proc.apps)
            self.gate.guard(Action(TOOL, what, record["page"]), outside)
            if act.action == "click":
                how = actor.click(widget, anchor)
            else:
                value = self.scrubber.remember(self.secret(names[0])) if names else str(act.text or "")
                actor.type(widget, value, secret=bool(names))
                how = "typed, and read back"
            record["status"] = "done"
            return {"text": f"done: {what} (by accessibility: {how})"}
        except DesktopHalt as exc:
            record.update(status="failed", detail=self.scrubber.scrub(str(exc)))
            raise NotFound(f"{record['detail']}; nothing was done") from None
        except Asking:
            record["status"] = "asked in the client"
            raise
        except TeachdError as exc:
            record.update(status="refused" if isinstance(exc, PolicyStop) else "failed",
                          detail=self.scrubber.scrub(str(exc)))
            raise
        finally:
            with self._lock:
                self.actions.append({"n": len(self.actions) + 1, **record})  # a step of the run page

    def run_skill(self, b: Browser, slug: str, params: dict[str, str]) -> dict[str, Any]:
        """The replay executor on this session's browser: an ordinary recorded run."""
        proc = self._to_replay(slug, params)
        if (caller := self.approver.caller) is not None:  # a round re-runs the call: only before step 1
            first = proc.steps[0].n if proc.steps else 0
            caller.may_ask = lambda request: request.offers_run and request.action.step == first
        self._guarded(b)  # the session's rules hold under the replay's own scope
        total = len(proc.steps)
        steps_done = [0]

        def progress(message: str) -> None:
            steps_done[0] += 1
            caller = self.approver.caller
            # A round that may end in its plan question says nothing yet: the round with the
            # answer starts the count again, and progress must only rise for the client.
            quiet = caller is not None and caller.rounds and not caller.answered and steps_done[0] == 1
            if caller is not None and not quiet:
                caller.progress(steps_done[0], total, message)

        opts = RunOptions(params=params, step_timeout=self.services.opts.step_timeout,
                          origin=f"MCP session {self.run_id}")
        under_way = self.replays_under_way
        try:
            outcome, b.page = replay(self.services.runs, self.session, slug, proc, b.context, b.page, opts,
                                     self.secret, progress=progress, on_start=under_way.add)
        finally:
            under_way.clear()
        self.replays.append(outcome.run_id)
        return self.scrubber.scrub_all(with_halted_step(outcome.as_dict()))

    async def queue_skill(self, ctx: Any, door: RunDoor, slug: str, params: dict[str, str]) -> dict[str, Any]:
        """The replay on the daemon's run queue as a Runs-page click (``Services.run_door``), followed
        to its end on the event loop (mcp/queued.py): a worker runs it, not this session's browser."""
        await anyio.to_thread.run_sync(self._to_replay, slug, params)  # as the session's own replay
        s = self.services
        caller = Caller(ctx, asyncio.get_running_loop(), s.stopping)  # its progress only rises
        outcome = await replay_on_queue(door, s.runs, s.queue, slug, params, f"MCP session {self.run_id}",
                                        caller.progress, s.approvals_page())
        self.replays.append(outcome["run_id"])
        return self.scrubber.scrub_all(outcome)

    def _secrets_in(self, act: Act) -> list[str]:
        """The secrets a ``type`` would type, allowed only as the taught skill
        typed them: the text is exactly ``{{secret:NAME}}`` and the target is
        the anchor of that skill's step whose value is that secret (the field
        the demonstration masked). Anything else is refused before any
        question, any lookup on the page, any typing."""
        names = SECRET.findall(act.text or "") if act.action == "type" else []
        if not names:
            return []
        alone = SECRET.fullmatch((act.text or "").strip())
        if alone is None or len(names) != 1:
            raise PolicyStop("a secret is typed alone, into the field its taught skill masked: text is "
                             "exactly {{secret:NAME}}; nothing was typed")
        name = names[0]
        where = "give skill and anchor of the skill's step that types it"
        if not (act.skill and act.anchor):
            raise PolicyStop(f"the secret {name!r} is typed only into the field its taught skill masked, "
                             f"not into {act.target}: {where}; nothing was typed")
        if act.skill not in self.session.loaded:
            raise PolicyStop(f"the secret {name!r} is typed only into a field a loaded taught skill masked: "
                             f"skill {act.skill!r} is not loaded in this session; nothing was typed")
        proc = self._plan(act.skill)
        masked = {} if proc is None else {s.anchor: s.secret for s in proc.steps
                                          if s.action == "type" and s.secret and s.anchor}
        if masked.get(act.anchor) != name:
            fields = ", ".join(f"{a} ({n})" for a, n in sorted(masked.items())) or "none"
            raise PolicyStop(f"anchor {act.anchor} of {act.skill} is not the field that skill masked for the "
                             f"secret {name!r} (its masked fields: {fields}); nothing was typed")
        return [name]

    def _target(self, b: Browser, act: Act) -> tuple[Locator | None, str | None]:
        """The element, and what it is when a taught anchor says so."""
        timeout = self.services.opts.step_timeout
        if act.anchor and act.skill:
            self._not_on_disk(act.skill, "anchors")
            self._used(act.skill)
            return self._by_anchor(b, act.skill, act.anchor, timeout)
        if act.ref or act.role:
            return by_ref_or_role(b, act, timeout), None
        return None, None

    def _by_anchor(self, b: Browser, slug: str, anchor_id: str, timeout: float) -> tuple[Locator, str]:
        if slug not in self.session.loaded:
            raise NotFound(f"skill {slug!r} is not loaded in this session: load_skill it first")
        proc = self._plan(slug)
        if proc is None:
            raise BadInput(f"skill {slug!r} is not a taught skill: it has no anchors")
        anchor = proc.anchors.get(anchor_id)
        if anchor is None:
            raise NotFound(f"skill {slug!r} has no anchor {anchor_id!r} "
                           f"(its anchors: {', '.join(sorted(proc.anchors)) or 'none'})")
        n = next((s.n for s in proc.steps if s.anchor == anchor_id), 0)
        finder = Replayer(b.context, b.page, proc, self.gate, {}, self.secret, step_timeout=timeout)
        try:
            target, _choice = finder.resolve(n, anchor)
        except Halt as exc:
            raise NotFound(f"{exc}; nothing was done") from None
        return target, plain(anchor.describe)

    def _plan(self, slug: str) -> Procedure | None:
        skill = self.session.loaded[slug]
        key = (slug, skill.current_version)
        if key not in self._plans:
            try:
                self._plans[key] = Procedure.from_files(skill.current.files)
            except PlanError:
                self._plans[key] = None
        return self._plans[key]

    # -- where it acts, where it may go ----------------------------------------
    def _guarded(self, b: Browser) -> RequestGuard:
        """The session's browser under its rules, for every tab and frame: the
        loaded taught skills' scope for navigations (asking through the gate);
        the network rule of whose session it is was put on the browser when it
        opened (``self.policy``, teachd.runner.policy)."""
        guard = guard_for(b.context)
        if not self._layers:
            self._layers.append(guard.add(Layer(self._outside_scope, ask=self._ask_navigation)))
        return guard

    @staticmethod
    def _where_it_acts(b: Browser, act: Act, target: Locator | None) -> str:
        """The URL the action is judged by: the goto's, else the element's own
        frame (a cross-origin iframe is not the page), else the focused frame."""
        if act.action == "goto":
            return str(act.url)
        if target is not None:
            return element_location(target)
        if act.action == "press":
            return focused_location(b.page)
        return b.page.url

    def _ask_navigation(self, url: str, where: str, why: str) -> bool:
        """Asked by the guard, before the request leaves; a no aborts it."""
        try:
            self.gate.check(Action(TOOL, f"let {where} open {url}", url), reason=why)
        except PolicyStop:
            return False
        return True

    def _outside_scope(self, url: str) -> str | None:
        """A page outside every loaded taught skill's scope asks first."""
        if not url.startswith(("http://", "https://")) and url != "null":
            return None  # about:blank and the like: nothing to protect (null: an opaque-origin frame)
        scoped = {slug: proc.scope for slug in sorted(self.session.loaded)
                  if (proc := self._plan(slug)) is not None and proc.scope}
        if not scoped or any(in_scope(url, scope) for scope in scoped.values()):
            return None
        return (f"{url} is outside the allowed scope of {', '.join(scoped)} "
                f"({' '.join(sorted({o for s in scoped.values() for o in s}))})")

    def secret(self, name: str) -> str:
        """The person's own secret: from this process's environment when it is
        theirs (``teachd mcp``, or the daemon's owner), else typed by the person
        on their secret page of the daemon (the client is asked to open it
        when it can); never from the chat. Remembered, to be scrubbed from
        anything handed back."""
        return self.scrubber.remember(self._secret(name))

    def _secret(self, name: str) -> str:
        var, value = self.services.settings.secret_from_env(name)
        if value:
            return value
        source = self.services.secrets
        hint = (f"set {var} {self.services.where}, or type it on the secret page of teachd serve"
                if self.services.where else "type it on your secret page of teachd serve")
        if source is None:
            raise PolicyStop(f"the secret {name!r} is needed: {hint}")
        caller, timeout = self.approver.caller, self.services.queue.timeout
        message = f"teachd needs the secret {name!r}: type it on this page (it is never stored)"

        def send_there(ticket: Ticket) -> None:
            if caller is not None and caller.can_open_url():
                answer = caller.run(caller.ctx.elicit_url(message, ticket.url, ticket.id), timeout)
                if answer.action != "accept":
                    raise PolicyStop(f"the secret {name!r} was not given; nothing was typed")
            elif caller is not None:
                caller.progress(0, None, f"{message}: {ticket.url}")

        try:
            ticket, value = wait_for_secret(source, name, self.run_id, sorted(self.gate.loaded), timeout,
                                            self.services.stopping, send_there)
        except PolicyStop:
            raise
        except TeachdError as exc:  # the page could not be asked (no daemon, say)
            raise PolicyStop(f"the secret {name!r} is needed: {hint} ({exc})") from None
        if not value:
            raise PolicyStop(f"the secret {name!r} was not typed in time on {ticket.url}; nothing was typed")
        return value

    # -- the end ------------------------------------------------------------
    def close(self) -> None:
        """The session ended (DELETE, the stdio pipe closing, idle): what it
        started is cancelled as a cancelled call's is — its question withdrawn,
        a replay stopped before its next step — then the browser closes and
        the run is recorded as ended."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
        self.interrupt()
        self.worker.close()  # the job under way ends first, and records what it did
        with self._lock:
            actions = list(self.actions)
        done = sum(1 for a in actions if a.get("status") == "done")
        refused = sum(1 for a in actions if a.get("status") == "refused")
        message = (f"MCP session ({self.client}): {done} action(s) done, {refused} refused"
                   + (f", replays {', '.join(self.replays)}" if self.replays else ""))
        self.services.runs.finish(self.run_id, "ended", {"message": message, "steps": actions,
                                                         "gate": self.gate.log, "client": self.client,
                                                         "used": list(self.used),
                                                         "origin": f"MCP ({self.client})"})


class Sessions(Protocol):
    """What a tool, a prompt or a resource needs of the server (``TeachdMCP``):
    the run of the session a request comes from, and a job on its browser."""

    def run_for(self, ctx: Any) -> McpRun: ...

    async def on_browser(self, ctx: Any, job: Callable[[McpRun, Any], T]) -> T: ...

    async def replay(self, ctx: Any, slug: str, params: dict[str, str]) -> dict[str, Any]: ...


def services_for(runs: RunStore, settings: Settings, *, profile: list[str] | None = None,
                 headless: bool | None = None, step_timeout: float = 10.0,
                 approval_timeout: float = 300.0, where: str = "",
                 secrets: SecretSource | None = None, queue: ApprovalQueue | None = None,
                 owner: bool = True, resolver: Resolver | None = None, dial: Dial | None = None,
                 disk: DiskShelf | None = None) -> Services:
    """A visible browser where there is a display (the person watches the
    agent act), headless where there is none or when asked. ``owner``: the
    session is the daemon owner's (or ``teachd mcp``'s, the local user's);
    anyone else's browser is held to public destinations (``resolver``:
    how names are resolved for that check). ``disk``: the disk skills served
    beside the store's (the local person's only: another's are not on this disk)."""
    shown = bool(settings.display) if headless is None else not headless
    opts = RunOptions(headless=not shown, chromium=settings.chromium, display=settings.display,
                      environ=settings.environ, profile=profile, step_timeout=step_timeout)
    queue = queue or ApprovalQueue(runs.skills, approval_timeout)  # the daemon passes its own
    who = Who.of(settings, runs.owner, resolver, dial)
    if not owner:  # the daemon's other people (their settings say so too: person_settings)
        who = replace(who, host_network=False)
    return Services(runs, queue, settings, opts, where, secrets, who=who, disk=disk)
