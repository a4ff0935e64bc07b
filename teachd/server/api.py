"""The HTTP API under ``/api/``: what the CLI does, through the same
functions (store, exchange, runner); JSON in and out. Every docstring's YAML
is the route's part of the OpenAPI schema at ``/openapi.json``."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from compiler.plan import PlanError, Procedure
from teachd.core.approval import GATED_TOOLS
from teachd.core.errors import BadInput, Conflict, NotFound, PolicyStop
from teachd.core.models import Skill
from teachd.core.schedules import DEFAULT_TIMEOUT, spec_from
from teachd.runner.gate import ANSWERS
from teachd.server.state import Daemon
from teachd.skills.edits import put_file, remove_file, set_approval
from teachd.skills.exchange import Imported, export_envelope, export_md, from_envelope, from_skill_md
from teachd.store.grants import GrantStore
from teachd.store.groups import GroupStore
from teachd.store.origins import IMPORTED
from teachd.store.profiles import profile_names
from teachd.store.schedules import ScheduleStore
from teachd.store.users import UserStore


def daemon(request: Request) -> Daemon:
    """The daemon as the request's person sees it (the guard says who)."""
    d: Daemon = request.app.state.daemon
    return d.as_user(request.scope.get("state", {}).get("user"))


async def body(request: Request) -> dict[str, Any]:
    try:
        data = json.loads(await request.body() or b"{}")
    except ValueError:
        raise BadInput("the body is not JSON") from None
    if not isinstance(data, dict):
        raise BadInput("the body must be a JSON object")
    return data


def skill_view(d: Daemon, skill: Skill) -> dict[str, Any]:
    counts = d.runs.outcome_counts(skill.slug)
    versions = [{**v, **counts.get(v["version"], {"success": 0, "failure": 0})}
                for v in d.store.notes(skill.slug)]
    c = skill.current
    shared = GrantStore(d.store).of(skill.slug) if skill.access == "own" else []
    return {**skill.summary(), "description": c.description, "instructions": c.instructions,
            "files": c.files, "approval": c.approval.to_dict(), "metadata": c.metadata, "versions": versions,
            "health": ScheduleStore(d.store).health().get(skill.slug), "shared_with": shared,
            **run_form(c.files)}


def run_form(files: dict[str, str]) -> dict[str, Any]:
    """What a run form asks for: the skill's declared parameters (name,
    description, default) — and the names of the secrets it types, which are
    never in a form: they are asked when the run needs them."""
    try:
        proc = Procedure.from_files(files)
    except PlanError:
        return {"parameters": [], "secrets": [], "replayable": False}
    def described(spec: dict[str, Any]) -> str:
        what = str(spec.get("description") or spec.get("describe") or "").replace("**", "")
        return f"{what} (step {spec['step']})" if what and spec.get("step") else what

    params = [{"name": name, "description": described(spec), "default": str(spec.get("default") or ""),
               "step": spec.get("step")} for name, spec in proc.parameters.items()]
    return {"parameters": params, "secrets": sorted(proc.secrets), "replayable": True,
            "start_url": proc.start_url}


async def skills_list(request: Request) -> JSONResponse:
    """
    summary: List your skills, then those shared with you (`owner`, `access`)
    responses:
      200: {description: "slug, name, version, enabled, owner and access of each skill"}
    """
    d = daemon(request)

    def listed() -> list[dict[str, Any]]:  # decrypts every skill of theirs: off the event loop
        health = ScheduleStore(d.store).health()
        return [{**s.summary(), "health": health.get(s.slug)} for s in d.store.all(shared=True)]

    return JSONResponse(await run_in_threadpool(listed))


async def skill_show(request: Request) -> JSONResponse:
    """
    summary: A skill with its files, approval and versions (with ✓/✗ counts)
    responses:
      200: {description: the skill}
      404: {description: no such skill}
    """
    d, slug = daemon(request), request.path_params["slug"]
    return JSONResponse(await run_in_threadpool(lambda: skill_view(d, d.store.get(slug))))


async def skill_enable(request: Request) -> JSONResponse:
    """
    summary: Enable (`on` true) or disable a skill
    responses:
      200: {description: the skill}
    """
    data = await body(request)
    d, slug, on = daemon(request), request.path_params["slug"], bool(data.get("on"))
    return JSONResponse(await run_in_threadpool(lambda: d.store.set_enabled(slug, on).summary()))


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadInput(f"{key} must be text")
    return value


async def skill_content(request: Request) -> JSONResponse:
    """
    summary: Save a new version with another display name (`name`), description and/or instructions
    responses:
      200: {description: the skill}
      422: {description: not a valid skill}
    """
    data = await body(request)
    description, instructions = _text(data, "description"), _text(data, "instructions")
    name = _text(data, "name")
    if name is not None:
        from teachd.skills.templates import checked_display_name

        name = checked_display_name(name)
    d = daemon(request)

    def edit(current: Any) -> Any:
        return replace(current, description=description if description is not None else current.description,
                       instructions=instructions if instructions is not None else current.instructions,
                       name=name if name is not None else current.name)

    slug = request.path_params["slug"]
    return JSONResponse(await run_in_threadpool(
        lambda: skill_view(d, d.store.update(slug, edit, note="edited in the web UI"))))


async def skill_create(request: Request) -> JSONResponse:
    """
    summary: Create a skill (`slug`, `description`, `name`, `instructions`, `always_ask`, `template`)
    responses:
      200: {description: the new skill}
      400: {description: a bad slug, no description, no such template}
      409: {description: the slug is taken}
    """
    from teachd.skills.templates import new_skill

    data, d = await body(request), daemon(request)
    slug, template = str(data.get("slug") or "").strip(), _text(data, "template") or None
    content = new_skill(slug, _text(data, "name") or None, _text(data, "description") or None,
                        _text(data, "instructions") or None, template, bool(data.get("always_ask")))
    note = f"created from template {template}" if template else "created"
    return JSONResponse(await run_in_threadpool(
        lambda: skill_view(d, d.store.create(slug, content, note=note))))


async def skill_templates(request: Request) -> JSONResponse:
    """
    summary: The starter templates a new skill can start from, as `skills templates`
    responses:
      200: {description: name, title, description and instructions of each}
    """
    from teachd.skills.templates import templates

    return JSONResponse([vars(t) for t in templates()])


async def skill_file(request: Request) -> JSONResponse:
    """
    summary: Put (PUT, with `text`) or remove (DELETE) one bundled file, as a new version
    responses:
      200: {description: the skill}
      400: {description: a path that leaves the skill}
      413: {description: over a limit}
    """
    path = request.path_params["path"]
    d = daemon(request)
    text = _text(await body(request), "text") if request.method == "PUT" else None
    if request.method == "PUT" and text is None:
        raise BadInput("a file needs its text")

    edit = remove_file(path) if text is None else put_file(path, text)
    verb = "removed" if text is None else "edited"
    slug = request.path_params["slug"]
    return JSONResponse(await run_in_threadpool(
        lambda: skill_view(d, d.store.update(slug, edit, note=f"{verb} {path} in the web UI"))))


async def skill_approval(request: Request) -> JSONResponse:
    """
    summary: Set the approval (`always_ask`, `tools` — none meaning all six), as a new version
    responses:
      200: {description: the skill}
    """
    data = await body(request)
    tools = data.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        raise BadInput(f"tools are among: {', '.join(GATED_TOOLS)}")
    d, slug = daemon(request), request.path_params["slug"]
    edit = set_approval(bool(data.get("always_ask")), tools)
    return JSONResponse(await run_in_threadpool(
        lambda: skill_view(d, d.store.update(slug, edit, note="approval edited in the web UI"))))


async def skill_restore(request: Request) -> JSONResponse:
    """
    summary: Make revision `version` current again, as a new version
    responses:
      200: {description: the skill}
    """
    data = await body(request)
    version = data.get("version")
    if not isinstance(version, int) or version < 1:
        raise BadInput("version must be a whole number from 1")
    d, slug = daemon(request), request.path_params["slug"]
    return JSONResponse(await run_in_threadpool(lambda: skill_view(d, d.store.restore(slug, version))))


async def skill_load(request: Request) -> JSONResponse:
    """
    summary: Load a skill as a run does (instructions, then its files); a disabled skill is refused
    responses:
      200: {description: instructions and files}
      409: {description: disabled}
    """
    d, slug = daemon(request), request.path_params["slug"]
    return JSONResponse(await run_in_threadpool(lambda: d.store.load(slug).loaded()))


def _imported(data: dict[str, Any]) -> Imported:
    if isinstance(data.get("envelope"), str):
        return from_envelope(data["envelope"])
    if isinstance(data.get("skill_md"), str):
        files = data.get("files")  # absent: the SKILL.md alone, the skill's files are kept
        if files is not None and (not isinstance(files, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in files.items())):
            raise BadInput("`files` maps relative paths to text")
        return from_skill_md(data["skill_md"], str(data.get("folder") or ""), files)
    raise BadInput("send `skill_md` (with `folder`, and the folder's other `files`, which an update "
                   "keeps when absent) or `envelope`")


async def skill_update(request: Request) -> JSONResponse:
    """
    summary: A new version from a SKILL.md (`skill_md`) or a JSON envelope (`envelope`), as `skills update`
    responses:
      200: {description: the skill}
      404: {description: no such skill}
    """
    slug = request.path_params["slug"]
    d, data = daemon(request), await body(request)

    def work() -> dict[str, Any]:  # parsing a stranger's YAML and sealing it: off the event loop
        d.store.get(slug)
        imported = _imported(data)
        return skill_view(d, d.store.update(slug, imported.onto, note="updated in the web UI"))

    return JSONResponse(await run_in_threadpool(work))


async def skill_delete(request: Request) -> JSONResponse:
    """
    summary: Delete a skill and all its versions
    responses:
      200: {description: deleted}
    """
    d, slug = daemon(request), request.path_params["slug"]
    await run_in_threadpool(d.store.delete, slug)
    return JSONResponse({"deleted": slug})


async def skill_export(request: Request) -> Response:
    """
    summary: "Export: a SKILL.md (`format=md`), a JSON envelope (`json`), or the whole folder zipped (`zip`)"
    responses:
      200: {description: the export}
    """
    d, slug, form = daemon(request), request.path_params["slug"], request.query_params.get("format", "md")

    def export() -> Response:  # decrypts the skill (and zips it): off the event loop
        skill = d.store.get(slug)
        if form == "json":
            return JSONResponse(export_envelope(skill))
        if form == "zip":
            from teachd.skills.export import zip_bytes

            return Response(zip_bytes(skill), media_type="application/zip", headers={
                "Content-Disposition": f'attachment; filename="{skill.slug}.zip"'})
        return PlainTextResponse(export_md(skill), media_type="text/markdown; charset=utf-8")

    return await run_in_threadpool(export)


async def skill_import(request: Request) -> JSONResponse:
    """
    summary: Import a SKILL.md (`skill_md`, with a `folder` name) or a JSON envelope (`envelope`)
    responses:
      200: {description: the new skill}
      409: {description: the slug exists}
    """
    d, data = daemon(request), await body(request)

    def work() -> dict[str, Any]:  # parsing a stranger's YAML and sealing it: off the event loop
        imported = _imported(data)
        if d.store.exists(imported.slug):
            raise Conflict(f"skill {imported.slug!r} already exists; update it instead")
        return skill_view(d, d.store.save(imported.slug, imported.onto, note="imported in the web UI",
                                          origin=IMPORTED))

    return JSONResponse(await run_in_threadpool(work))


async def skill_import_url(request: Request) -> JSONResponse:
    """
    summary: Import from a URL (`url`; `resolve_only` for the plan; `update` to take a changed remote)
    responses:
      200: {description: "the plan, and the skill when one was imported or updated"}
      403: {description: an address that is not public}
      409: {description: the stored skill differs; the diff is in the message}
    """
    from teachd.remote.importer import import_url

    data = await body(request)
    d = daemon(request)
    out = await run_in_threadpool(import_url, d.store, d.egress, _text(data, "url") or "",
                                  resolve_only=bool(data.get("resolve_only")),
                                  update=bool(data.get("update")))
    return JSONResponse(out.as_dict())


async def teach_status(request: Request) -> JSONResponse:
    """
    summary: The demonstration being recorded (live steps), or the last one's result
    responses:
      200: {description: status}
    """
    d = daemon(request)
    return JSONResponse(d.teaching.status(d.user))


async def teach_start(request: Request) -> JSONResponse:
    """
    summary: Start recording a demonstration (`name`, `url`; `headless` for machines with no display)
    responses:
      200: {description: status}
      409: {description: one is being recorded}
    """
    data = await body(request)
    name, url = _text(data, "name"), _text(data, "url")
    if not name or not name.strip():
        raise BadInput("the task needs a name")
    if not url or not url.startswith(("http://", "https://")):
        raise BadInput("the start URL must be http(s)")
    d = daemon(request)
    headless = bool(data.get("headless")) or not d.settings.display
    return JSONResponse(d.teaching.start(name.strip(), url, headless, d.user))


async def run_repair(request: Request) -> JSONResponse:
    """
    summary: Show me — repair the skill of a run that halted at a step (`headless` for no display)
    description: The Teach page follows it. Steps before the halted one are replayed first, asking on
      the Approvals page; then the browser waits for the person to show the step, until Done.
    responses:
      200: {description: status}
      400: {description: the run did not halt at a step}
      403: {description: the skill is shared with you to use only}
      409: {description: a demonstration is being recorded, or the skill changed since the run}
    """
    from teachd.teach.repair import banner, repair_target

    data = await body(request)
    d = daemon(request)
    target = await run_in_threadpool(repair_target, d.runs, request.path_params["run_id"])
    headless = bool(data.get("headless")) or not d.settings.display
    return JSONResponse(d.teaching.repair(target.run_id, target.name, target.step.n, banner(target.step),
                                          headless, d.user))


async def teach_apply(request: Request) -> JSONResponse:
    """
    summary: Save the last repair, refused for leaving the skill's scope, with that site allowed
    responses:
      200: {description: status with the result}
      404: {description: no repair waits for that}
    """
    d = daemon(request)
    return JSONResponse(await run_in_threadpool(d.teaching.apply_repair, d.store, d.user))


async def teach_command(request: Request) -> JSONResponse:
    """
    summary: Pause, resume, undo the last step, or mark the next field secret (`kind`), as the page's bar does
    responses:
      200: {description: status}
      404: {description: nothing is being recorded}
    """
    kind = _text(await body(request), "kind") or ""
    d = daemon(request)
    return JSONResponse(d.teaching.command(kind, d.user))


async def teach_stop(request: Request) -> JSONResponse:
    """
    summary: Stop recording, compile and save; the result names the new skill
    responses:
      200: {description: status with the result}
    """
    d = daemon(request)
    return JSONResponse(await run_in_threadpool(d.teaching.stop, d.user))


async def approvals_list(request: Request) -> JSONResponse:
    """
    summary: Requests waiting for a person, and the saved "always allow" rules
    responses:
      200: {description: pending and rules}
    """
    d = daemon(request)
    return JSONResponse(await run_in_threadpool(
        lambda: {"pending": d.approvals.pending(), "rules": d.rules.all()}))


async def approval_answer(request: Request) -> JSONResponse:
    """
    summary: "Answer a waiting request: `answer` run (its whole plan), once (this step) or deny"
    description: '`{"allow": true}` is once and false is deny (a JSON boolean); an unknown answer is deny.'
    responses:
      200: {description: answered}
      400: {description: "`allow` not a JSON boolean, or `run` where no plan was offered: nothing answered"}
      404: {description: answered already or timed out}
    """
    data = await body(request)
    pid = request.path_params["pid"]
    word = data.get("answer")
    if "answer" not in data:
        allow = data.get("allow")
        if not isinstance(allow, bool):  # typed: "false", 1, [] or a missing answer is no answer at all
            raise BadInput("send `answer`: run, once or deny (or `allow` as a JSON boolean: true is once)")
        word = "once" if allow else "deny"
    elif word not in ANSWERS:
        word = "deny"  # an answer teachd does not know is a no
    daemon(request).approvals.answer(pid, str(word))
    return JSONResponse({"id": pid, "answer": word, "allow": word != "deny"})


def _bearer_only(request: Request) -> None:
    """What only an asking process may do (never a page's cookie): read a secret back."""
    if not request.app.state.sessions.bearer_ok(request.headers.get("authorization")):
        raise PolicyStop("this call takes the bearer token, not a login cookie")


async def secrets_list(request: Request) -> JSONResponse:
    """
    summary: Secrets runs are waiting for (names and pages, never values)
    responses:
      200: {description: pending}
    """
    return JSONResponse({"pending": daemon(request).secrets.pending()})


async def secret_ask(request: Request) -> JSONResponse:
    """
    summary: Ask the person for a secret (`name`, `run_id`, `skills`); bearer token only
    responses:
      200: {description: the request's id and the page where it is typed}
    """
    _bearer_only(request)
    data = await body(request)
    skills = data.get("skills") or []
    if not isinstance(skills, list) or not all(isinstance(x, str) for x in skills):
        raise BadInput("skills is a list of slugs")
    asked = daemon(request).secrets.ask(_text(data, "name") or "", _text(data, "run_id") or "", skills)
    return JSONResponse({"id": asked.id, "url": f"/secrets/{asked.id}"})


async def secret_give(request: Request) -> JSONResponse:
    """
    summary: Type the secret (`value`) for a waiting request; kept in memory until its run takes it
    responses:
      200: {description: given}
      404: {description: no such request, or given already}
    """
    data = await body(request)
    daemon(request).secrets.give(request.path_params["sid"], _text(data, "value") or "")
    return JSONResponse({"given": True})


async def secret_value(request: Request) -> Response:
    """
    summary: The typed secret, once (waits up to `wait` seconds); bearer token only
    responses:
      200: {description: the value, handed over once}
      204: {description: not typed yet}
      404: {description: no such request}
    """
    _bearer_only(request)
    try:
        wait = min(max(float(request.query_params.get("wait", "0")), 0.0), 30.0)
    except ValueError:
        raise BadInput("wait is a number of seconds") from None
    value = await run_in_threadpool(daemon(request).secrets.take, request.path_params["sid"], wait)
    if value is None:
        return Response(status_code=204)
    return JSONResponse({"value": value}, headers={"Cache-Control": "no-store"})


async def secret_forget(request: Request) -> JSONResponse:
    """
    summary: The asker no longer waits for this secret; bearer token only
    responses:
      200: {description: forgotten}
    """
    _bearer_only(request)
    daemon(request).secrets.forget(request.path_params["sid"])
    return JSONResponse({"forgotten": True})


def schedule_views(d: Daemon) -> list[dict[str, Any]]:
    return ScheduleStore(d.store).listed()


async def schedules_list(request: Request) -> JSONResponse:
    """
    summary: The schedules, each with its next run time and last outcome
    responses:
      200: {description: schedules}
    """
    return JSONResponse(await run_in_threadpool(schedule_views, daemon(request)))


async def scheduler_state(request: Request) -> JSONResponse:
    """
    summary: Whether this daemon runs the scheduled jobs (one daemon per store does)
    responses:
      200: {description: "leading: true here; false when another daemon on the store runs them"}
    """
    return JSONResponse({"leading": daemon(request).schedules.leading})


async def schedule_add(request: Request) -> JSONResponse:
    """
    summary: Add a schedule (`slug`, `cron` or `every`, `params`, `start_url`, `profile`, `check`, `timeout`)
    responses:
      200: {description: the schedule's id}
      400: {description: a bad cron expression, interval or parameter}
    """
    data = await body(request)
    params = data.get("params") or {}
    if not isinstance(params, dict) or not all(isinstance(v, str) for v in params.values()):
        raise BadInput("params is an object of NAME: text")
    timeout = data.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise BadInput("timeout is a number of seconds")
    d = daemon(request)
    spec = spec_from(_text(data, "slug") or "", cron=_text(data, "cron"), every=_text(data, "every"),
                     params=params, profile=_text(data, "profile"), check=bool(data.get("check")),
                     timeout=timeout, profiles=profile_names(d.settings, d.store),
                     start_url=_text(data, "start_url") or None)
    sid = ScheduleStore(d.store).add(spec)
    d.schedules.sync_soon()
    return JSONResponse({"id": sid})


async def schedule_change(request: Request) -> JSONResponse:
    """
    summary: pause, resume or run now (`action` in the path) one schedule
    responses:
      200: {description: done}
      404: {description: no such schedule}
    """
    d = daemon(request)
    sid, action = request.path_params["sid"], request.path_params["action"]
    store = ScheduleStore(d.store)
    if action in ("pause", "resume"):
        store.set_paused(sid, action == "pause")
        d.schedules.sync_soon()
    elif action == "run":
        store.get(sid)
        d.schedules.run_now(sid)
    else:
        raise NotFound(f"no action {action!r}: pause, resume or run")
    return JSONResponse({"id": sid, "done": action})


async def schedule_remove(request: Request) -> JSONResponse:
    """
    summary: Remove a schedule (its past runs stay)
    responses:
      200: {description: removed}
    """
    d = daemon(request)
    ScheduleStore(d.store).remove(request.path_params["sid"])
    d.schedules.sync_soon()
    return JSONResponse({"removed": True})


async def rule_add(request: Request) -> JSONResponse:
    """
    summary: Save an "always allow" rule for a tool (never satisfies a skill that requires approval)
    responses:
      200: {description: the rule id}
    """
    tool = _text(await body(request), "tool") or ""
    return JSONResponse({"id": daemon(request).rules.allow_always(tool), "tool": tool})


async def rule_revoke(request: Request) -> JSONResponse:
    """
    summary: Revoke a saved rule
    responses:
      200: {description: revoked}
    """
    daemon(request).rules.revoke(request.path_params["rid"])
    return JSONResponse({"revoked": request.path_params["rid"]})


async def manifest(request: Request) -> JSONResponse:
    """
    summary: What a run may load (slug, name, description of each enabled skill, yours and shared ones)
    responses:
      200: {description: the manifest}
    """
    from teachd.runner.session import manifest as manifest_of

    return JSONResponse(await run_in_threadpool(manifest_of, daemon(request).store, None))


async def grants_list(request: Request) -> JSONResponse:
    """
    summary: Who your skill is shared with (`with`, `can`)
    responses:
      200: {description: the grants}
      403: {description: not your skill}
    """
    d, slug = daemon(request), request.path_params["slug"]

    def grants() -> list[dict[str, Any]]:
        d.store.own(slug)
        return GrantStore(d.store).of(slug)

    return JSONResponse(await run_in_threadpool(grants))


async def grant_add(request: Request) -> JSONResponse:
    """
    summary: Share your skill (`with` a user or `@group`, `can` use or edit), as `skills share`
    responses:
      200: {description: the grants after it}
      400: {description: no such user or group}
      403: {description: not your skill}
    """
    data = await body(request)
    d = daemon(request)
    grants = GrantStore(d.store).share(request.path_params["slug"], _text(data, "with") or "",
                                       _text(data, "can") or "use")
    return JSONResponse(grants)


async def grant_remove(request: Request) -> JSONResponse:
    """
    summary: Take a grant back, as `skills unshare` (the skill leaves their manifests at once)
    responses:
      200: {description: the grants after it}
    """
    d = daemon(request)
    slug, grantee = request.path_params["slug"], request.path_params["grantee"]
    return JSONResponse(GrantStore(d.store).unshare(slug, grantee))


async def people(request: Request) -> JSONResponse:
    """
    summary: Who you are, and the people and groups a skill can be shared with
    responses:
      200: {description: "`me`, `users` (active names) and `groups`"}
    """
    d = daemon(request)
    users = [u["name"] for u in UserStore(d.store.db).all() if not u["revoked_at"]]
    return JSONResponse({"me": d.user, "users": users, "groups": sorted(GroupStore(d.store.db).all())})


ROUTES = [
    Route("/api/people", people, methods=["GET"]),
    Route("/api/skills/{slug}/grants", grants_list, methods=["GET"]),
    Route("/api/skills/{slug}/grants", grant_add, methods=["POST"]),
    Route("/api/skills/{slug}/grants/{grantee}", grant_remove, methods=["DELETE"]),
    Route("/api/skills", skills_list, methods=["GET"]),
    Route("/api/skills", skill_create, methods=["POST"]),
    Route("/api/skill-templates", skill_templates, methods=["GET"]),
    Route("/api/skills/import", skill_import, methods=["POST"]),
    Route("/api/skills/{slug}", skill_show, methods=["GET"]),
    Route("/api/skills/{slug}", skill_delete, methods=["DELETE"]),
    Route("/api/skills/{slug}", skill_update, methods=["PUT"]),
    Route("/api/skills/{slug}/load", skill_load, methods=["GET"]),
    Route("/api/skills/{slug}/enabled", skill_enable, methods=["PUT"]),
    Route("/api/skills/{slug}/content", skill_content, methods=["PUT"]),
    Route("/api/skills/{slug}/files/{path:path}", skill_file, methods=["PUT", "DELETE"]),
    Route("/api/skills/{slug}/approval", skill_approval, methods=["PUT"]),
    Route("/api/skills/{slug}/restore", skill_restore, methods=["POST"]),
    Route("/api/skills/{slug}/export", skill_export, methods=["GET"]),
    Route("/api/manifest", manifest, methods=["GET"]),
    Route("/api/teach", teach_status, methods=["GET"]),
    Route("/api/teach", teach_start, methods=["POST"]),
    Route("/api/teach/stop", teach_stop, methods=["POST"]),
    Route("/api/teach/command", teach_command, methods=["POST"]),
    Route("/api/teach/apply", teach_apply, methods=["POST"]),
    Route("/api/runs/{run_id}/repair", run_repair, methods=["POST"]),
    Route("/api/skills-from-url", skill_import_url, methods=["POST"]),
    Route("/api/approvals", approvals_list, methods=["GET"]),
    Route("/api/schedules", schedules_list, methods=["GET"]),
    Route("/api/scheduler", scheduler_state, methods=["GET"]),
    Route("/api/schedules", schedule_add, methods=["POST"]),
    Route("/api/schedules/{sid:int}/{action}", schedule_change, methods=["POST"]),
    Route("/api/schedules/{sid:int}", schedule_remove, methods=["DELETE"]),
    Route("/api/secrets", secrets_list, methods=["GET"]),
    Route("/api/secrets", secret_ask, methods=["POST"]),
    Route("/api/secrets/{sid}", secret_give, methods=["POST"]),
    Route("/api/secrets/{sid}", secret_forget, methods=["DELETE"]),
    Route("/api/secrets/{sid}/value", secret_value, methods=["GET"]),
    Route("/api/approvals/{pid:int}", approval_answer, methods=["POST"]),
    Route("/api/rules", rule_add, methods=["POST"]),
    Route("/api/rules/{rid:int}", rule_revoke, methods=["DELETE"]),
]
