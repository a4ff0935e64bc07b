"""Skills as a whole over HTTP: list, show, create (from a starter template
or none), enable or disable, mark safe to repeat, load as a run does, delete,
and the manifest a run may load from. ``skill_view`` — one skill as the API and the skill page
show it — is here, for every module that answers with a skill."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from compiler.plan import PARAMETER, PlanError, Procedure
from teachd.core.errors import BadInput
from teachd.core.models import Skill
from teachd.server.api.common import body, daemon, text_field
from teachd.server.responses import JSONResponse
from teachd.server.state import Daemon
from teachd.store.grants import GrantStore
from teachd.store.runs import RunStore
from teachd.store.schedules import ScheduleStore

VERSIONS_SHOWN = 50  # the newest versions a skill's view lists; ?versions=all lists every one


def skill_view(d: Daemon, skill: Skill, all_versions: bool = False) -> dict[str, Any]:
    """``versions``: the newest ``VERSIONS_SHOWN`` (every one with
    ``all_versions``), oldest first, with their ✓/✗; ``outcomes``: the
    ✓/✗ of all of them. A skill gains a version at each feedback click, so
    a view of every one would grow with every run it was used in."""
    first = 1 if all_versions else max(1, skill.current_version - VERSIONS_SHOWN + 1)  # numbered 1 to current
    told = d.store.knowing(skill.slug, skill.owner, skill.access)  # just found: each part below need not ask
    counts = RunStore(told).outcome_counts(skill.slug, since=first)
    versions = [{**v, **counts.get(v["version"], {"success": 0, "failure": 0})}
                for v in told.notes(skill.slug, since=first)]
    outcomes = {k: sum(c[k] for c in counts.values()) for k in ("success", "failure")}
    c = skill.current
    shared = GrantStore(d.store).of(skill.slug) if skill.access == "own" else []
    return {**skill.summary(), "description": c.description, "instructions": c.instructions,
            "files": c.files, "approval": c.approval.to_dict(), "metadata": c.metadata, "versions": versions,
            "versions_total": skill.current_version, "outcomes": outcomes,
            "repeatable": skill.repeatable, "at_once": skill.at_once,
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
    # what a review set, said on the skill's page: values typed as shown on every run, the person's checks
    fixed = [{"step": st.n, "value": st.value, "describe": str(st.describe or "").replace("**", "")}
             for st in proc.steps if st.value is not None]
    checks = [str(t) for t in proc.success.get("shows") or [] if not PARAMETER.fullmatch(str(t))]
    return {"parameters": params, "secrets": sorted(proc.secrets), "replayable": True,
            "start_url": proc.start_url, "fixed": fixed, "checks": checks}


async def skills_list(request: Request) -> JSONResponse:
    """
    summary: List your skills, then those shared with you (`owner`, `access`)
    responses:
      200: {description: "slug, name, version, enabled, owner and access of each skill"}
    """
    d = daemon(request)

    def listed() -> list[dict[str, Any]]:  # opens every skill's name: off the event loop
        health = ScheduleStore(d.store).health()
        return [{**s, "health": health.get(s["slug"])} for s in d.store.summaries(shared=True)]

    return JSONResponse(await run_in_threadpool(listed))


async def skill_show(request: Request) -> JSONResponse:
    """
    summary: A skill with its files, approval and newest 50 versions (`?versions=all` for all) with ✓/✗ counts
    responses:
      200: {description: the skill}
      404: {description: no such skill}
    """
    d, slug = daemon(request), request.path_params["slug"]
    every = request.query_params.get("versions") == "all"
    return JSONResponse(await run_in_threadpool(lambda: skill_view(d, d.store.get(slug), every)))


async def skill_enable(request: Request) -> JSONResponse:
    """
    summary: Enable (`on` true) or disable a skill
    responses:
      200: {description: the skill}
    """
    data = await body(request)
    d, slug, on = daemon(request), request.path_params["slug"], bool(data.get("on"))
    return JSONResponse(await run_in_threadpool(lambda: d.store.set_enabled(slug, on).summary()))


async def skill_repeatable(request: Request) -> JSONResponse:
    """
    summary: Mark a skill safe to repeat (`on`), or not; its owner only
    description: A run of a skill marked safe to repeat that is interrupted (its worker died) is run
      again once by itself, on the run queue; any other interrupted run waits for a person's *Run again*.
    responses:
      200: {description: the skill}
      403: {description: not your skill}
    """
    data = await body(request)
    d, slug, on = daemon(request), request.path_params["slug"], bool(data.get("on"))
    return JSONResponse(await run_in_threadpool(lambda: skill_view(d, d.store.set_repeatable(slug, on))))


async def skill_at_once(request: Request) -> JSONResponse:
    """
    summary: Limit a skill's runs at the same time (`n`, 1–50; null for no limit of its own); its owner only
    description: On the team store's run queue, at most `n` runs of the skill go at once, whoever
      started them; the others wait their turn.
    responses:
      200: {description: the skill}
      400: {description: not a number from 1 to 50, nor null}
      403: {description: not your skill}
    """
    data = await body(request)
    d, slug, n = daemon(request), request.path_params["slug"], data.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int)):
        raise BadInput("n: a number of runs, or null")
    return JSONResponse(await run_in_threadpool(lambda: skill_view(d, d.store.set_at_once(slug, n))))


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
    slug, template = str(data.get("slug") or "").strip(), text_field(data, "template") or None
    content = new_skill(slug, text_field(data, "name") or None, text_field(data, "description") or None,
                        text_field(data, "instructions") or None, template, bool(data.get("always_ask")))
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


async def skill_load(request: Request) -> JSONResponse:
    """
    summary: Load a skill as a run does (instructions, then its files); a disabled skill is refused
    responses:
      200: {description: instructions and files}
      409: {description: disabled}
    """
    d, slug = daemon(request), request.path_params["slug"]
    return JSONResponse(await run_in_threadpool(lambda: d.store.load(slug).loaded()))


async def skill_delete(request: Request) -> JSONResponse:
    """
    summary: Delete a skill and all its versions
    responses:
      200: {description: deleted}
    """
    d, slug = daemon(request), request.path_params["slug"]
    await run_in_threadpool(d.store.delete, slug)
    return JSONResponse({"deleted": slug})


async def manifest(request: Request) -> JSONResponse:
    """
    summary: What a run may load (slug, name, description of each enabled skill, yours and shared ones)
    responses:
      200: {description: the manifest}
    """
    from teachd.runner.session import manifest as manifest_of

    return JSONResponse(await run_in_threadpool(manifest_of, daemon(request).store, None))
