"""What the daemon runs in the background: replays (each in its own thread,
its approval requests waiting on the Approvals page, through the store's queue) and teaching (``teachd
teach`` as a child process, its steps read live from the recording)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from compiler.plan import has_steps
from teachd.config import Settings
from teachd.core.errors import BadInput, Conflict, Failed, NotFound, PolicyStop, TooMany
from teachd.queue.app import RunQueue
from teachd.queue.execute import end_on_schedule
from teachd.queue.submit import queue_run
from teachd.runner.on_page import run_on_the_page
from teachd.runner.run import BROWSERS_PER_PERSON
from teachd.runner.secret_desk import SecretDesk, without_secrets
from teachd.store.approvals import ApprovalQueue
from teachd.store.runs import QUEUED, RunStore
from teachd.store.skills import SkillStore
from teachd.teach.edits import Edits
from teachd.teach.process import TeachProcess

COMMAND_WAIT = 10.0  # seconds the Teach page waits for the recorder to apply a bar command


class Runs:
    """Replays started from the daemon: an ordinary run (recorded like one
    from the CLI), in a thread, asking on the Approvals page."""

    def __init__(self, runs: RunStore, settings: Settings, approvals: ApprovalQueue,
                 desk: SecretDesk, threads: dict[str, tuple[str, threading.Thread]] | None = None,
                 per_person: int = BROWSERS_PER_PERSON, queue: RunQueue | None = None) -> None:
        self.runs, self.settings, self.approvals, self.desk = runs, settings, approvals, desk
        self.per_person = per_person
        self._threads: dict[str, tuple[str, threading.Thread]] = {} if threads is None else threads
        self.queue = queue  # the team store's run queue: its workers run what it can take

    def for_person(self, runs: RunStore, approvals: ApprovalQueue, desk: SecretDesk,
                   settings: Settings) -> Runs:
        """One person's replays, in this daemon's threads (stopped together),
        with that person's settings (another person's hold none of the
        owner's ``TEACHD_SECRET_*``: their secrets are asked on their page)."""
        return Runs(runs, settings, approvals, desk, self._threads, self.per_person, self.queue)

    def start(self, slug: str, params: dict[str, str], start_url: str | None = None, *,
              origin: str = "web UI", followed: bool = True) -> str:
        """The run's id at once (its page shows it starting); the replay on the
        run queue where there is one and it can take it, else in a thread.
        ``origin``: who started it (the web UI, an agent's MCP session);
        ``followed``: a person watches its page (where a step not found may be shown)."""
        if self.queue is not None:
            skill = self.runs.skills.load(slug)
            if not has_steps(skill.current.files):
                raise BadInput(f"{slug} has no taught steps to replay: it is instructions an agent follows")
            for run in self.runs.recent(50):  # a second click, or a client's retry, is not a second run
                asked = (run.get("slug"), run.get("params") or {}, run.get("start_url"))
                if asked == (slug, params, start_url) and run["status"] == "running" \
                        and (run["queued"] or not run["steps"]):
                    raise Conflict(f"this run of {slug} is starting already ({run['run_id']}): follow it on "
                                   "its page, or cancel it there")
            run_id = queue_run(self.queue, self.runs, slug, params, origin=origin,
                               timeout=self.approvals.timeout, start_url=start_url, followed=followed)
            if run_id is None:  # no queueing lock is given: never None here
                raise Conflict(f"a run of {slug} waits in the queue already")
            return run_id
        person = self.runs.owner
        live = sum(1 for who, t in self._threads.values() if who == person and t.is_alive())
        if live >= self.per_person:  # each replay is a Chromium on the daemon's machine
            raise TooMany(f"you already have {live} replays running on this daemon "
                          f"(at most {self.per_person}): let one finish, "
                          "or answer what it waits for on the Approvals page")
        skill = self.runs.skills.load(slug)  # a missing or disabled skill is refused now, not in the thread
        if not has_steps(skill.current.files):
            raise BadInput(f"{slug} has no taught steps to replay: it is instructions an agent follows")
        for run_id, (who, thread) in self._threads.items():
            if who == person and thread.is_alive() and self._starting(run_id, slug):
                raise Conflict(f"a run of {slug} is starting already ({run_id}): follow it on its page, "
                               "or cancel it there")
        run_id = self.runs.new_run_id()
        self.runs.start(run_id, {})
        self.runs.progress(run_id, {"slug": slug, "origin": origin, "used": [slug], "params": params,
                                    "start_url": start_url, "message": "starting the browser"})

        def work() -> None:
            try:
                run_on_the_page(self.runs, self.settings, self.approvals, self.desk, slug, params,
                                label=run_id, origin=origin, timeout=self.approvals.timeout,
                                start_url=start_url, run_id=run_id, followed=followed)
            except Exception as exc:  # noqa: BLE001 — its record says what went wrong
                if self.runs.one(run_id)["status"] != "running":
                    return  # the replay recorded its own end
                self.runs.finish(run_id, "failure", {"slug": slug, "origin": origin, "used": [slug],
                                                     "params": params, "start_url": start_url,
                                                     "message": f"the run could not start: {exc}"})

        thread = threading.Thread(target=work, name=run_id, daemon=True)
        self._threads[run_id] = (person, thread)
        thread.start()
        return run_id

    def _starting(self, run_id: str, slug: str) -> bool:
        """Started, and not at its first step yet: a second Run click is a duplicate."""
        try:
            run = self.runs.one(run_id)
        except NotFound:
            return False
        return run["slug"] == slug and run["status"] == "running" and not run["steps"]

    def again(self, run_id: str) -> str:
        """The same skill with the same parameters and start address."""
        run = self.runs.one(run_id)
        if run["status"] == "running":
            raise Conflict("this run has not ended yet: cancel it first, or wait")
        if not run.get("slug"):
            raise BadInput("this run replayed no skill (an agent's session): start the agent again")
        return self.start(str(run["slug"]), dict(run.get("params") or {}), run.get("start_url"))

    def cancel(self, run_id: str, by: str) -> dict[str, Any]:
        """Stop a running run between steps, whichever process runs it; what it
        waits for (an approval) is withdrawn and counts as a no. One still
        waiting in the run queue is taken off it and ends at once."""
        if not self.runs.cancel(run_id, by):
            self.runs.one(run_id)  # 404 for no such run
            raise Conflict("this run has ended already")
        if self.queue is not None and self.runs.runner_of(run_id) == QUEUED:
            job = self.queue.job_of(run_id)
            if job is not None and self.queue.cancel(job["job"]):
                message = f"cancelled by {by} while it waited in the run queue"
                self.runs.end(run_id, "aborted", message)
                end_on_schedule(self.runs.skills, run_id, "aborted", message)
        withdrawn = self.approvals.withdraw(run_id) + self.desk.withdraw(run_id)
        return {"run_id": run_id, "cancelled": True, "withdrawn": withdrawn}

    def stop_all(self, timeout: float = 20) -> None:
        self.approvals.close()  # a waiting step is denied: the run ends with no effect
        for _person, thread in list(self._threads.values()):
            thread.join(timeout)


class Teaching:
    """One demonstration at a time, recorded by ``teachd teach`` (a child
    process, as from a terminal), its steps read live from its events. A
    repair (*Show me* on a halted run) is one too: its child first replays
    the steps before the one to show, asking on the Approvals page, so it is
    started in the background and the Teach page shows it getting there."""

    def __init__(self, environ: dict[str, str], control: Path, daemon_owner: str = "") -> None:
        self.environ, self.control = environ, control
        self.daemon_owner = daemon_owner  # whose environment ``environ`` is
        self.process: TeachProcess | None = None
        self.name = ""
        self.owner = ""  # whose demonstration: the skill is saved as theirs
        self.result: dict[str, Any] | None = None
        self.repairing: dict[str, Any] | None = None  # run, step and what the bar asks to show
        self._starting: threading.Thread | None = None
        self._stopping = False  # Stop asked: the recorder is compiling and saving
        self._collecting = threading.Lock()

    def child_environ(self, owner: str) -> dict[str, str]:
        """The environment of a child started for ``owner``: the daemon's own
        for its owner; for anyone else, none of the owner's ``TEACHD_SECRET_*``
        (a repair's lead-in then asks that person on their secret page)."""
        if self.daemon_owner and owner == self.daemon_owner:
            return dict(self.environ)
        return without_secrets(self.environ)

    def _busy(self) -> bool:
        starting = self._starting is not None and self._starting.is_alive()
        return starting or (self.process is not None and self.process.proc.poll() is None)

    def _claim(self, owner: str) -> None:
        """The slot, for the daemon's owner only: a demonstration (or a
        repair, which is one) opens Chromium on the display of the person
        who runs the daemon, and takes its one slot; another person teaches
        on their own machine (``teachd teach``), where the browser is theirs
        to see. A headless one is refused too: nobody could show it anything."""
        if self.daemon_owner and owner != self.daemon_owner:
            raise PolicyStop(f"only {self.daemon_owner}, who runs this daemon, may start a demonstration on "
                             "its display: teach on your own machine with teachd teach")
        if self._busy():
            who = "" if owner == self.owner else f" (by {self.owner})"
            raise Conflict(f"a demonstration is already being recorded{who}; one at a time on this daemon")

    def start(self, name: str, url: str, headless: bool, owner: str) -> dict[str, Any]:
        self._claim(owner)
        flags = ["--no-os-input", "--no-save"] + (["--headless"] if headless else [])  # reviewed first
        environ = {**self.child_environ(owner), "TEACHD_OWNER": owner}
        self.repairing = None
        self.process, self.name, self.result = TeachProcess(environ, name, url, *flags), name, None
        self.owner = owner
        return self.status(owner)

    def repair(self, run_id: str, name: str, step: int, banner: str, headless: bool,
               owner: str) -> dict[str, Any]:
        """``teachd teach --repair RUN_ID`` for the person, in the background."""
        self._claim(owner)
        flags = ["--no-os-input", "--ask-on", "page"] + (["--headless"] if headless else [])
        environ = {**self.child_environ(owner), "TEACHD_OWNER": owner}
        self.process, self.name, self.result, self.owner = None, name, None, owner
        self.repairing = {"run_id": run_id, "step": step, "banner": banner}

        def spawn() -> None:
            try:
                self.process = TeachProcess.repairing(environ, run_id, *flags, timeout=900)
            except Failed as exc:
                self.result = {"ok": False, "error": str(exc)}

        self._starting = threading.Thread(target=spawn, name="teachd-repair-start", daemon=True)
        self._starting.start()
        return self.status(owner)

    def apply_repair(self, store: SkillStore, owner: str) -> dict[str, Any]:
        """The last repair, refused because it left the skill's scope, saved
        now that the person allowed it there (the recording is the one this
        daemon's child kept, never a path from the request)."""
        self.mine(owner)
        folder = (self.result or {}).get("recording_dir")
        if not self.repairing or not folder or (self.result or {}).get("ok"):
            raise NotFound("no repair is waiting for its scope to be allowed")
        from teachd.teach.repair import apply_repair, summary_of

        skill, repaired = apply_repair(store, Path(folder), lambda _origins: True)
        self.result = {"ok": True, **summary_of(skill, repaired, Path(folder))}
        return self.status(owner)

    def save(self, store: SkillStore, owner: str, edits: Edits) -> dict[str, Any]:
        """The reviewed demonstration saved as the person changed it (steps
        left out or named, values fixed or marked secret, checks added: each
        by the ``seq`` the review lists), checked before anything is written."""
        folder = self._reviewed(owner)
        from teachd.core.errors import component_errors
        from teachd.teach.compile import compile_dir, save_compiled
        from teachd.teach.edits import apply_edits, check_edits, final_text_of


        with component_errors():
            check_edits(edits, self.steps(), final_text_of(folder))
            apply_edits(folder, edits)
            compiled = compile_dir(folder)
            skill = save_compiled(store, compiled, note=f"taught from {folder.name}")
        self.result = {"ok": True, "recording_dir": str(folder), "slug": skill.slug,
                       "version": skill.current_version, "dropped": len(edits.drop)}
        return self.status(owner)

    def discard(self, owner: str) -> dict[str, Any]:
        """The reviewed demonstration thrown away, its recording with it."""
        import shutil

        folder = self._reviewed(owner)
        shutil.rmtree(folder, ignore_errors=True)
        self.process, self.result = None, {"ok": False, "discarded": True}
        return self.status(owner)

    def _reviewed(self, owner: str) -> Path:
        self.mine(owner)
        result = self.result or {}
        if not result.get("review") or not result.get("recording_dir"):
            raise NotFound("no demonstration is waiting for its review")
        return Path(str(result["recording_dir"]))

    def steps(self) -> list[dict[str, Any]]:
        """The demonstration so far as the compiler will save it (teach.review),
        each step taken back still listed, marked ``undone``."""
        if self.process is None:
            return []
        from teachd.teach.review import review

        return review(self.process.events())

    def paused(self) -> bool:
        if self.process is None:
            return False
        marks = [e["type"] for e in self.process.events() if e["type"] in ("pause", "resume")]
        return bool(marks) and marks[-1] == "pause"

    def _theirs(self, owner: str) -> bool:
        """The demonstration on this daemon is another person's."""
        starting = self._starting is not None and self._starting.is_alive()
        return (self.process is not None or starting) and self.owner != owner

    def mine(self, owner: str) -> None:
        if self._theirs(owner):
            raise NotFound("you are not recording a demonstration on this daemon")

    def status(self, owner: str) -> dict[str, Any]:
        """The person's own demonstration; another person's shows only that one is running."""
        running = self.process is not None and self.process.proc.poll() is None
        if self._theirs(owner):
            return {"recording": False, "busy": self._busy(), "name": "", "steps": [], "result": None,
                    "cdp_port": None, "repair": None, "starting": False}
        starting = self._starting is not None and self._starting.is_alive()
        if not running and self.process is not None and self.result is None and not starting \
                and not self._stopping:
            self._collect()  # the recording browser was closed: the recorder saved, and says what
        return {"recording": running and not self._stopping, "stopping": running and self._stopping,
                "name": self.name, "steps": self.steps(), "paused": self.paused(), "result": self.result,
                "cdp_port": self.process.cdp_port if self.process else None, "repair": self.repairing,
                "starting": starting}

    def command(self, kind: str, owner: str) -> dict[str, Any]:
        """Pause, resume, undo or mark — as the bar in the taught browser does."""
        if kind not in ("pause", "resume", "undo", "mark"):
            raise BadInput("a command is pause, resume, undo or mark")
        self.mine(owner)
        if self.process is None or self.process.proc.poll() is not None:
            raise NotFound("no demonstration is being recorded")
        with self.control.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"kind": kind}) + "\n")
        sent = len(self.control.read_text(encoding="utf-8").splitlines())
        return {**self.status(owner), "applied": self._applied(sent)}

    def _applied(self, sent: int, wait: float = COMMAND_WAIT) -> bool:
        """Whether the recorder has applied the first ``sent`` commands, within
        ``wait`` seconds: the page says "armed" only once it is."""
        from recorder.record import ack_path

        deadline = time.monotonic() + wait
        while True:
            try:
                if int(ack_path(self.control).read_text() or 0) >= sent:
                    return True
            except (OSError, ValueError):
                pass  # not written yet, or being replaced
            if time.monotonic() > deadline or self.process is None or self.process.proc.poll() is not None:
                return False
            time.sleep(0.05)

    def stop(self, owner: str) -> dict[str, Any]:
        self.mine(owner)
        if self.process is None:
            raise NotFound("no demonstration is being recorded")
        if self.process.proc.poll() is None:
            self._stopping = True  # the page says it is compiling, not recording, until it is saved
            self.process.proc.terminate()  # SIGTERM: the recorder stops, compiles and saves
        self._collect()
        return self.status(owner)

    def _collect(self) -> None:
        """The ended recorder's result: the skill it saved, or why not (once:
        Stop and a look at the status may both ask for it)."""
        with self._collecting:
            if self.process is None or self.result is not None:
                return
            code, out, err = self.process.finish(timeout=120)
            result: dict[str, Any]
            try:
                result = {"ok": code == 0, **(json.loads(out) if code == 0 else {})}
            except ValueError:
                result = {"ok": False}
            if result.get("saved") is False:  # kept for the person's review: nothing saved yet
                result = {"ok": True, "review": True, "recording_dir": result.get("recording_dir")}
            if code != 0:
                lines = [ln for ln in err.splitlines() if ln.startswith("teachd: error:")]
                why = lines[-1].removeprefix("teachd: error: ") if lines else "the recording failed"
                result.update(error=why, recording_dir=str(self.process.recording_dir))
            self.result, self._stopping = result, False
