"""The HTTP API under ``/api/``: what the CLI does, through the same
functions (store, exchange, runner); JSON in and out. Every handler's
docstring YAML is the route's part of the OpenAPI schema at ``/openapi.json``.

One module per resource, each with its handlers: ``skills`` (a skill as a
whole, the manifest), ``versions`` (edits saved as a new version),
``exchange`` (import, update, export), ``teach`` (demonstrations and
repairs), ``approvals`` (requests and rules), ``secret_desk``, ``schedules``,
``sharing`` (grants, people) and ``runs``; ``common`` holds what they share.
This file is the one table of routes, in the order they are matched: where
two patterns fit one request (``/api/skills/import`` and
``/api/skills/{slug}``), the first listed wins, and a method no route takes
is answered 405 by the first that fits its path."""

from __future__ import annotations

from starlette.routing import Route

from teachd.server.api import (
    approvals,
    exchange,
    runs,
    schedules,
    secret_desk,
    sharing,
    skills,
    teach,
    versions,
)

ROUTES = [
    Route("/api/people", sharing.people, methods=["GET"]),
    Route("/api/skills/{slug}/grants", sharing.grants_list, methods=["GET"]),
    Route("/api/skills/{slug}/grants", sharing.grant_add, methods=["POST"]),
    Route("/api/skills/{slug}/grants/{grantee}", sharing.grant_remove, methods=["DELETE"]),
    Route("/api/skills", skills.skills_list, methods=["GET"]),
    Route("/api/skills", skills.skill_create, methods=["POST"]),
    Route("/api/skill-templates", skills.skill_templates, methods=["GET"]),
    Route("/api/skills/import", exchange.skill_import, methods=["POST"]),
    Route("/api/skills/{slug}", skills.skill_show, methods=["GET"]),
    Route("/api/skills/{slug}", skills.skill_delete, methods=["DELETE"]),
    Route("/api/skills/{slug}", exchange.skill_update, methods=["PUT"]),
    Route("/api/skills/{slug}/load", skills.skill_load, methods=["GET"]),
    Route("/api/skills/{slug}/enabled", skills.skill_enable, methods=["PUT"]),
    Route("/api/skills/{slug}/repeatable", skills.skill_repeatable, methods=["PUT"]),
    Route("/api/skills/{slug}/at-once", skills.skill_at_once, methods=["PUT"]),
    Route("/api/skills/{slug}/content", versions.skill_content, methods=["PUT"]),
    Route("/api/skills/{slug}/files/{path:path}", versions.skill_file, methods=["PUT", "DELETE"]),
    Route("/api/skills/{slug}/approval", versions.skill_approval, methods=["PUT"]),
    Route("/api/skills/{slug}/restore", versions.skill_restore, methods=["POST"]),
    Route("/api/skills/{slug}/export", exchange.skill_export, methods=["GET"]),
    Route("/api/manifest", skills.manifest, methods=["GET"]),
    Route("/api/teach", teach.teach_status, methods=["GET"]),
    Route("/api/teach", teach.teach_start, methods=["POST"]),
    Route("/api/teach/stop", teach.teach_stop, methods=["POST"]),
    Route("/api/teach/save", teach.teach_save, methods=["POST"]),
    Route("/api/teach/discard", teach.teach_discard, methods=["POST"]),
    Route("/api/teach/command", teach.teach_command, methods=["POST"]),
    Route("/api/teach/apply", teach.teach_apply, methods=["POST"]),
    Route("/api/runs/{run_id}/repair", teach.run_repair, methods=["POST"]),
    Route("/api/skills-from-url", exchange.skill_import_url, methods=["POST"]),
    Route("/api/approvals", approvals.approvals_list, methods=["GET"]),
    Route("/api/schedules", schedules.schedules_list, methods=["GET"]),
    Route("/api/scheduler", schedules.scheduler_state, methods=["GET"]),
    Route("/api/schedules", schedules.schedule_add, methods=["POST"]),
    Route("/api/schedules/{sid:int}/{action}", schedules.schedule_change, methods=["POST"]),
    Route("/api/schedules/{sid:int}", schedules.schedule_remove, methods=["DELETE"]),
    Route("/api/secrets", secret_desk.secrets_list, methods=["GET"]),
    Route("/api/secrets", secret_desk.secret_ask, methods=["POST"]),
    Route("/api/secrets/{sid}", secret_desk.secret_give, methods=["POST"]),
    Route("/api/secrets/{sid}", secret_desk.secret_forget, methods=["DELETE"]),
    Route("/api/secrets/{sid}/value", secret_desk.secret_value, methods=["GET"]),
    Route("/api/approvals/{pid:int}", approvals.approval_answer, methods=["POST"]),
    Route("/api/rules", approvals.rule_add, methods=["POST"]),
    Route("/api/rules/{rid:int}", approvals.rule_revoke, methods=["DELETE"]),
    # runs: start, follow, cancel, again, the feedback click; what waits for you
    Route("/api/runs", runs.runs_list, methods=["GET"]),
    Route("/api/workers", runs.workers_list, methods=["GET"]),
    Route("/api/runs", runs.runs_start, methods=["POST"]),
    Route("/api/runs/{run_id}", runs.run_show, methods=["GET"]),
    Route("/api/runs/{run_id}/events", runs.run_events, methods=["GET"]),
    Route("/api/runs/{run_id}/pictures/{n:int}/{kind}", runs.run_picture, methods=["GET"]),
    Route("/api/runs/{run_id}/cancel", runs.run_cancel, methods=["POST"]),
    Route("/api/runs/{run_id}/again", runs.run_again, methods=["POST"]),
    Route("/api/runs/{run_id}/feedback", runs.run_feedback, methods=["POST"]),
    Route("/api/runs/{run_id}/feedback/{slug}", runs.run_feedback_undo, methods=["DELETE"]),
    Route("/api/waiting", runs.waiting, methods=["GET"]),
    Route("/api/skills/{slug}/runs", runs.skill_runs, methods=["GET"]),
]
