"""Skills in and out as files, as ``skills import``, ``update`` and
``export`` do on the command line: a SKILL.md (with its folder's files), a
JSON envelope, a zipped folder, or a skill fetched from a public URL.
Everything parsed here is a stranger's text: it is parsed off the event loop
and sealed by the store like any other version."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from teachd.core.errors import BadInput, Conflict
from teachd.server.api.common import body, daemon, text_field
from teachd.server.api.skills import skill_view
from teachd.server.responses import JSONResponse
from teachd.skills.exchange import (
    Imported,
    export_envelope,
    export_md,
    from_archive,
    from_envelope,
    from_skill_md,
)
from teachd.store.origins import IMPORTED


def _imported(data: dict[str, Any]) -> Imported:
    if isinstance(data.get("envelope"), str):
        return from_envelope(data["envelope"])
    if isinstance(data.get("archive"), str):  # an exported folder (zip, tar.gz), as base64
        try:
            raw = base64.b64decode(data["archive"], validate=True)
        except (binascii.Error, ValueError):
            raise BadInput("`archive` is the archive's bytes as base64") from None
        return from_archive(text_field(data, "name") or "skill.zip", raw)
    if isinstance(data.get("skill_md"), str):
        files = data.get("files")  # absent: the SKILL.md alone, the skill's files are kept
        if files is not None and (not isinstance(files, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in files.items())):
            raise BadInput("`files` maps relative paths to text")
        return from_skill_md(data["skill_md"], str(data.get("folder") or ""), files)
    raise BadInput("send `skill_md` (with `folder`, and the folder's other `files`, which an update "
                   "keeps when absent), `envelope`, or `archive` (base64, with its file `name`)")


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
    summary: Import a SKILL.md (`skill_md`, with a `folder` name), a JSON envelope (`envelope`) or an exported
      folder (`archive`, a zip or tar.gz as base64, with its file `name`)
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
    out = await run_in_threadpool(import_url, d.store, d.egress, text_field(data, "url") or "",
                                  resolve_only=bool(data.get("resolve_only")),
                                  update=bool(data.get("update")))
    return JSONResponse(out.as_dict())
