"""``teachd skills …``: the store, discovery, validation and skill:// reads."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from teachd.cli.app import App, emit, json_option, pass_app, root_option
from teachd.core.errors import BadInput, Conflict

if TYPE_CHECKING:  # the commands import what they use: `teachd --help` loads none of it
    from teachd.core.models import Skill
    from teachd.skills.discovery import Discovery
    from teachd.skills.exchange import Imported

slug_arg = click.argument("slug")


@click.group()
def skills() -> None:
    """Manage skills: the encrypted store, folders on disk, validation."""


def _row(skill: Skill, health: dict[str, Any] | None = None) -> str:
    state = "enabled " if skill.enabled else "disabled"
    attention = f"  NEEDS ATTENTION: {health['reason']}" if health and not health["ok"] else ""
    shared = "" if skill.access == "own" else f"  (shared by {skill.owner}: {skill.access})"
    return f"{skill.slug:<40} v{skill.current_version:<4} {state} {skill.current.name}{shared}{attention}"


@skills.command("list")
@json_option
@pass_app
def list_(app: App, as_json: bool) -> None:
    """List the owner's skills in the store, enabled or not, then those shared
    with them (and any that a health check found needing attention)."""
    from teachd.store.schedules import ScheduleStore

    items = app.store.all(shared=True)
    health = ScheduleStore(app.store).health()
    emit(
        as_json,
        [{**s.summary(), "health": _brief(health.get(s.slug))} for s in items],
        lambda: "\n".join(_row(s, health.get(s.slug)) for s in items) if items else "no skills yet",
    )


def _brief(h: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if h is None else {k: h[k] for k in ("ok", "verdict", "checked_at", "step", "reason")}


@skills.command()
@slug_arg
@json_option
@pass_app
def show(app: App, slug: str, as_json: bool) -> None:
    """Show a skill's details: version, state, approval, files."""
    from teachd.store.grants import GrantStore

    skill = app.store.get(slug)
    c = skill.current
    grants = GrantStore(app.store).of(slug) if skill.access == "own" else []
    data = skill.summary() | {
        "approval": c.approval.to_dict(),
        "files": sorted(c.files),
        "metadata": c.metadata,
        "shared_with": grants,
    }

    def text() -> str:
        gate = ", ".join(sorted(c.approval.gated)) or "none"
        lines = [
            f"slug:        {skill.slug}",
            f"name:        {c.name}",
            f"description: {c.description}",
            f"version:     {skill.current_version}",
            f"enabled:     {'yes' if skill.enabled else 'no'}",
            f"origin:      {skill.origin}",
            f"approval:    {gate}",
            f"files:       {', '.join(sorted(c.files)) or '-'}",
        ]
        if skill.access != "own":
            lines.append(f"owner:       {skill.owner} (shared with you to {skill.access})")
        elif grants:
            lines.append(f"shared with: {', '.join(g['with'] + ' (' + g['can'] + ')' for g in grants)}")
        return "\n".join(lines)

    emit(as_json, data, text)


@skills.command()
@click.option("--profile", help="Exactly the skills this profile binds (teachd profiles, or config.yaml).")
@json_option
@pass_app
def manifest(app: App, profile: str | None, as_json: bool) -> None:
    """What a run may load: slug, name and description of each enabled skill."""
    from teachd.runner.session import manifest as manifest_of
    from teachd.store.profiles import resolve_profile

    items = manifest_of(app.store, resolve_profile(app.settings, app.store, profile))
    emit(
        as_json,
        items,
        lambda: "\n".join(f"{i['slug']}: {i['description']}" for i in items) or "no enabled skills",
    )


@skills.command()
@slug_arg
@json_option
@pass_app
def load(app: App, slug: str, as_json: bool) -> None:
    """Print a skill's instructions, then the files bundled with it."""
    skill = app.store.load(slug)
    data = skill.loaded()
    files = data["files"]
    emit(
        as_json,
        data,
        lambda: data["instructions"].rstrip("\n")
        + "\n\nFiles:\n"
        + ("\n".join(f"  skill://{slug}/{f}" for f in files) or "  (none)"),
    )


@skills.command()
@click.argument("url")
@root_option
@json_option
@pass_app
def read(app: App, url: str, roots: tuple[Path, ...], as_json: bool) -> None:
    """Read skill://NAME (its SKILL.md) or skill://NAME/PATH (a file inside it)."""
    from teachd.skills.urls import read_skill_url

    found = _discover(app, roots).by_name()
    res = read_skill_url(url, found, app.store)
    emit(as_json, {"url": res.url, "content_type": res.content_type, "text": res.text}, res.text)


def _save(app: App, imported: Imported, slug: str | None = None, note: str = "") -> Skill:
    """An import is ``imported``; ``update SLUG --from`` (the owner's own edit of
    their skill) keeps the skill's origin — a trusted one only while its steps,
    scope and approval stay as trusted (the store's ``update`` decides)."""
    from teachd.store.origins import IMPORTED

    if slug:  # a new version as any edit makes one: the owner's, or an edit grant's (owner's parts kept)
        skill = app.store.update(slug, imported.onto, note=note)
    else:
        skill = app.store.save(imported.slug, imported.onto, note=note, origin=IMPORTED)
    if imported.enabled is not None and imported.enabled != skill.enabled and skill.access == "own":
        skill = app.store.set_enabled(skill.slug, imported.enabled)  # the envelope's state, as exported
    return skill


@skills.command("import")
@click.argument("source")
@click.option("--resolve-only", is_flag=True,
              help="For a URL: print which files would be fetched, and from where; fetch nothing.")
@click.option("--update", is_flag=True,
              help="For a URL: take the remote version over a stored skill that differs (a new version).")
@json_option
@pass_app
def import_(app: App, source: str, resolve_only: bool, update: bool, as_json: bool) -> None:
    """Import a skill: a folder, a SKILL.md, a JSON envelope, or a URL.

    URLs: https://skills.sh/OWNER/REPO/SKILL, https://github.com/OWNER/REPO
    (or its /tree/REF/PATH, or a /blob/…/SKILL.md), OWNER/REPO/SKILL (the
    layout skills/SKILL/SKILL.md), or a link to any SKILL.md. Only public
    addresses are fetched; a stored skill is never replaced silently.
    """
    from teachd.remote.sources import is_url_source
    from teachd.skills.exchange import read_import_source

    if is_url_source(source) and not Path(source).exists():
        return _import_url(app, source, resolve_only, update, as_json)
    if resolve_only or update:
        raise click.UsageError("--resolve-only and --update are for URLs")
    path = Path(source)
    imported = read_import_source(path)
    if app.store.exists(imported.slug):
        raise Conflict(
            f"skill {imported.slug!r} already exists; use `teachd skills update "
            f"{imported.slug} --from {path}`"
        )
    skill = _save(app, imported, note=f"imported from {path.name}")
    for warning in imported.warnings:
        click.echo(f"teachd: warning: {warning}", err=True)
    emit(as_json, skill.summary(), f"imported {skill.slug} v{skill.current_version}")


def _import_url(app: App, source: str, resolve_only: bool, update: bool, as_json: bool) -> None:
    from teachd.remote.importer import import_url

    def confirm(diff: list[str]) -> bool:
        click.echo("\n".join(diff), err=True)
        return sys.stdin.isatty() and click.confirm("teachd: take the remote version?", err=True)

    out = import_url(app.store, app.egress, source, resolve_only=resolve_only, update=update,
                     confirm=None if as_json else confirm)
    for warning in out.warnings:
        click.echo(f"teachd: warning: {warning}", err=True)
    if out.skill is None:
        return emit(as_json, out.as_dict(), out.plan.text())
    s = out.skill
    emit(as_json, out.as_dict(), f"{out.action} {s.slug} v{s.current_version} from {out.plan.origin}")


@skills.command()
@slug_arg
@click.option("--from", "source", required=True, type=click.Path(path_type=Path),
              help="A SKILL.md, a skill folder or a JSON envelope.")
@click.option("--note", default="", help="Why this revision was made.")
@json_option
@pass_app
def update(app: App, slug: str, source: Path, note: str, as_json: bool) -> None:
    """Save a new version of SLUG from a file; the previous one is kept."""
    from teachd.skills.exchange import read_import_source

    app.store.get(slug)
    imported = read_import_source(source)
    skill = _save(app, imported, slug=slug, note=note or f"updated from {source.name}")
    emit(as_json, skill.summary(), f"updated {slug} to v{skill.current_version}")


@skills.command()
@slug_arg
@click.option("--name", help="Its display name (default: the template's title, else the slug).")
@click.option("--description", help="The one line a model reads to choose the skill: say when to use it "
                                    "(default: the template's).")
@click.option("--instructions",
              help="The body of SKILL.md (default: the template's, else a stub to fill in).")
@click.option("--from-template", "from_template", metavar="T",
              help="Start from a starter template (see `teachd skills templates`).")
@click.option("--always-ask", is_flag=True,
              help="Every gated tool call of a run using it waits for the person.")
@json_option
@pass_app
def create(app: App, slug: str, name: str | None, description: str | None, instructions: str | None,
           from_template: str | None, always_ask: bool, as_json: bool) -> None:
    """Create a skill by hand (version 1), or from a starter template to edit."""
    from teachd.skills.templates import new_skill

    content = new_skill(slug, name, description, instructions, from_template, always_ask)
    skill = app.store.create(slug, content, note=f"created from template {from_template}" if from_template
                             else "created")
    emit(as_json, skill.summary(), f"created {slug} v{skill.current_version}")


@skills.command("templates")
@json_option
@pass_app
def templates_(app: App, as_json: bool) -> None:
    """List the starter templates `skills create --from-template` takes."""
    from teachd.skills.templates import templates

    found = templates()
    emit(as_json, [{"name": t.name, "title": t.title, "description": t.description} for t in found],
         "\n".join(f"{t.name:22} {t.title} — {t.description}" for t in found))


@skills.command()
@slug_arg
@click.option("--format", "fmt", type=click.Choice(["md", "json", "folder", "zip"]), default="md",
              show_default=True, help="md: a spec-valid SKILL.md; json: everything; folder or zip: the whole "
                                      "skill (SKILL.md and every bundled file) written under --out.")
@click.option("--out", type=click.Path(path_type=Path),
              help="folder: the parent folder (the skill goes in OUT/SLUG); zip: a .zip file, or a folder "
                   "for OUT/SLUG.zip. Never overwrites.")
@pass_app
@json_option
def export(app: App, slug: str, fmt: str, out: Path | None, as_json: bool) -> None:
    """Print a skill as a SKILL.md or a JSON envelope (approval included), or
    write the whole skill as a folder or a zip that other agents load."""
    from teachd.skills.exchange import export_envelope, export_md

    skill = app.store.get(slug)
    if fmt in ("folder", "zip"):
        from teachd.skills.export import write_folder, write_zip

        if out is None:
            raise BadInput(f"--format {fmt} writes files: say where with --out DIR")
        written = write_folder(skill, out) if fmt == "folder" else write_zip(skill, out)
        emit(as_json, {"slug": slug, "version": skill.current_version, "path": str(written)},
             f"exported {slug} v{skill.current_version} to {written}")
        return
    if fmt == "json" or as_json:
        envelope = export_envelope(skill)
        if as_json and fmt == "md":
            envelope = {"slug": slug, "skill_md": export_md(skill)}
        click.echo(json.dumps(envelope, indent=2, sort_keys=True))
    else:
        click.echo(export_md(skill), nl=False)


@skills.command()
@slug_arg
@json_option
@pass_app
def versions(app: App, slug: str, as_json: bool) -> None:
    """List every revision of a skill, oldest first, with run outcomes per version."""
    from teachd.store.runs import RunStore

    current = app.store.get(slug).current_version
    counts = RunStore(app.store).outcome_counts(slug)
    items = [
        {**v, "current": v["version"] == current, **counts.get(v["version"], {"success": 0, "failure": 0})}
        for v in app.store.notes(slug)
    ]
    emit(
        as_json,
        items,
        lambda: "\n".join(
            f"{'*' if i['current'] else ' '} v{i['version']:<4} {i['created_at']}  "
            f"✓{i['success']} ✗{i['failure']}  {i['note']}"
            for i in items
        ),
    )


@skills.command()
@slug_arg
@click.argument("version", type=click.IntRange(min=1))
@json_option
@pass_app
def restore(app: App, slug: str, version: int, as_json: bool) -> None:
    """Make revision VERSION current again, as a new version."""
    skill = app.store.restore(slug, version)
    emit(as_json, skill.summary(),
         f"restored {slug} v{version} as v{skill.current_version}")


def _toggle(name: str, enabled: bool, doc: str) -> None:
    @skills.command(name, help=doc)
    @slug_arg
    @json_option
    @pass_app
    def command(app: App, slug: str, as_json: bool) -> None:
        skill = app.store.set_enabled(slug, enabled)
        emit(as_json, skill.summary(), f"{name}d {slug}")


_toggle("enable", True, "Put a skill back in the manifest so runs can load it.")
_toggle("disable", False, "Hide a skill from the manifest and refuse to load it; nothing is deleted.")


@skills.command("at-once")
@slug_arg
@click.argument("runs", required=False, type=int)
@click.option("--any", "no_limit", is_flag=True,
              help="No limit of the skill's own: each person's runs, 3 at a time.")
@json_option
@pass_app
def at_once(app: App, slug: str, runs: int | None, no_limit: bool, as_json: bool) -> None:
    """Let at most RUNS runs of a skill of yours go at the same time on the
    team store's run queue, whoever starts them (the rest wait their turn):
    for a skill whose writes must not overlap. --any takes the limit away."""
    if (runs is None) == (not no_limit):
        raise BadInput("say how many runs may go at once (a number), or --any")
    skill = app.store.set_at_once(slug, None if no_limit else runs)
    emit(as_json, {"slug": slug, "at_once": skill.at_once},
         f"{slug}: " + (f"at most {skill.at_once} run(s) at once" if skill.at_once
                        else "no limit of its own (each person's runs: 3 at once)"))


@skills.command()
@slug_arg
@click.option("--off", is_flag=True, help="Take the mark away: an interrupted run waits for a person.")
@json_option
@pass_app
def repeatable(app: App, slug: str, off: bool, as_json: bool) -> None:
    """Mark a skill of yours safe to repeat: on the team store, a run of it
    interrupted because its worker died is run again once by itself. Mark
    only a skill whose writes are safe to make twice."""
    app.store.set_repeatable(slug, not off)
    emit(as_json, {"slug": slug, "repeatable": not off},
         f"{slug} is {'not ' if off else ''}safe to repeat: an interrupted run of it "
         + ("waits for a person to run it again" if off else "is run again once by itself"))


@skills.command()
@slug_arg
@json_option
@pass_app
def delete(app: App, slug: str, as_json: bool) -> None:
    """Delete a skill and all its versions (disable keeps them)."""
    app.store.delete(slug)
    emit(as_json, {"slug": slug, "deleted": True}, f"deleted {slug}")


@skills.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@json_option
@click.pass_context
def validate(ctx: click.Context, paths: tuple[Path, ...], as_json: bool) -> int:
    """Strictly validate skill folders (recursively); exit 1 on any error."""
    from teachd.skills.skillmd import find_skill_dirs, validate_skill_dir

    reports: list[Any] = []
    missing: list[str] = []
    for path in paths:
        dirs = find_skill_dirs(path)
        if not dirs:
            missing.append(str(path))
        reports.extend(validate_skill_dir(d) for d in dirs)
    failed = bool(missing) or any(not r.ok for r in reports)
    if as_json:
        click.echo(json.dumps({"ok": not failed, "skills": [r.as_dict() for r in reports],
                               "not_found": missing}, indent=2, sort_keys=True))
    else:
        for r in reports:
            click.echo(r.summary())
            for e in r.errors:
                click.echo(f"    error: {e}")
            for w in r.warnings:
                click.echo(f"    warning: {w}")
        for m in missing:
            click.echo(f"ERR no SKILL.md found under {m}")
    return 1 if failed else 0


def _discover(app: App, roots: tuple[Path, ...]) -> Discovery:
    from teachd.skills.discovery import discover_for

    return discover_for(app.settings, Path.cwd(), Path.home(), roots)


@skills.command("discover")
@root_option
@json_option
@pass_app
def discover_(app: App, roots: tuple[Path, ...], as_json: bool) -> None:
    """List skills found on disk, as the runtime loads them (tolerant)."""
    found = _discover(app, roots)
    data = {
        "skills": [
            {"name": f.name, "path": str(f.folder), "provider": f.root.provider,
             "scope": f.root.scope, "description": f.doc.description}
            for f in found.skills
        ],
        "warnings": found.warnings,
        "excluded": [{"path": str(p), "reason": r} for p, r in found.excluded],
    }
    emit(
        as_json,
        data,
        lambda: "\n".join(
            [f"{f.name:<32} {f.root.provider}/{f.root.scope:<8} {f.folder}" for f in found.skills]
            + [f"loaded {len(found.skills)} skills"]
        ),
    )



@skills.command("file")
@slug_arg
@click.argument("action", type=click.Choice(["put", "rm"]))
@click.argument("path")
@click.option("--from", "source", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="put: the text file to store at PATH.")
@json_option
@pass_app
def file_(app: App, slug: str, action: str, path: str, source: Path | None, as_json: bool) -> None:
    """Edit one bundled file, as a new version.

    `put PATH --from FILE` adds or replaces it; `rm PATH` removes it.
    """
    from teachd.core.limits import as_text
    from teachd.skills.edits import put_file, remove_file

    if action == "put":
        if source is None:
            raise click.UsageError("put takes --from FILE")
        edit, done = put_file(path, as_text(str(source), source.read_bytes())), "stored"
    else:
        edit, done = remove_file(path), "removed"
    skill = app.store.update(slug, edit, note=f"{done} {path}")
    emit(as_json, skill.summary(), f"{slug} v{skill.current_version}: {path} {done}")


@skills.command()
@slug_arg
@click.option("--always-ask/--no-always-ask", default=None,
              help="Whether each call of the gated tools waits for the person.")
@click.option("--tool", "tools", multiple=True, metavar="NAME",
              help="A gated tool (repeat; none: all six): run_command computer_act delete_file move_file "
                   "message_agent write_file.")
@json_option
@pass_app
def approval(app: App, slug: str, always_ask: bool | None, tools: tuple[str, ...], as_json: bool) -> None:
    """Set what SLUG requires approval for (a new version); with no option, show it."""
    from teachd.skills.edits import set_approval

    skill = app.store.get(slug)
    if always_ask is not None or tools:
        ask = skill.current.approval.always_ask if always_ask is None else always_ask
        chosen = tools or tuple(skill.current.approval.tools)  # the flag alone keeps the tool list
        skill = app.store.update(slug, set_approval(ask, chosen), note="approval edited")
    a = skill.current.approval
    emit(as_json, {**skill.summary(), "approval": a.to_dict()},
         f"{slug} v{skill.current_version}: always ask {'on' if a.always_ask else 'off'} for "
         f"{', '.join(sorted(a.gated)) or 'nothing'}")


def _grantee_option() -> Any:
    return click.option("--with", "grantee", required=True, metavar="USER|@GROUP",
                        help="A person (teachd users list) or a group, as @NAME (teachd groups list).")


@skills.command()
@slug_arg
@json_option
@pass_app
def trust(app: App, slug: str, as_json: bool) -> None:
    """Accept your imported skill SLUG as taught: it is then auto-loaded into
    computer runs, and the sites in its scope count as allowed.

    Only skills compiled here from a demonstration are taught by themselves;
    an imported skill named taught-… is not, whatever its name says."""
    skill = app.store.trust(slug)
    emit(as_json, skill.summary(), f"{skill.slug} is taught: auto-loaded in computer runs; its scope counts")


@skills.command()
@slug_arg
@_grantee_option()
@click.option("--can", type=click.Choice(["use", "edit"]), default="use", show_default=True,
              help="use: see it in manifests, load and replay it; "
                   "edit: also make new versions (feedback too).")
@json_option
@pass_app
def share(app: App, slug: str, grantee: str, can: str, as_json: bool) -> None:
    """Share your skill SLUG with a person or @GROUP (sharing again changes --can)."""
    from teachd.store.grants import GrantStore

    grants = GrantStore(app.store).share(slug, grantee, can)
    emit(as_json, {"slug": slug, "shared_with": grants},
         f"{slug} shared with: {', '.join(g['with'] + ' (' + g['can'] + ')' for g in grants)}")


@skills.command()
@slug_arg
@_grantee_option()
@json_option
@pass_app
def unshare(app: App, slug: str, grantee: str, as_json: bool) -> None:
    """Take a grant back: SLUG leaves the person's (or group's) manifests at once."""
    from teachd.store.grants import GrantStore

    grants = GrantStore(app.store).unshare(slug, grantee)
    emit(as_json, {"slug": slug, "shared_with": grants},
         f"{slug} shared with: {', '.join(g['with'] + ' (' + g['can'] + ')' for g in grants) or 'no one'}")
