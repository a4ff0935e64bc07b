"""``teachd compile``: a recording directory → a taught skill folder."""

from __future__ import annotations

from pathlib import Path

import click

from teachd.cli.app import App, emit, json_option, pass_app
from teachd.core.errors import BadInput
from teachd.skills.folder import write_skill_folder


@click.command("compile")
@click.argument("recording_dir", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("."),
              show_default=True, help="Write the skill folder <OUT>/<slug>/ here.")
@click.option("--save", is_flag=True, help="Also save it in the store (new skill or new version).")
@click.option("--extend-scope", is_flag=True,
              help="A repair recording: add the sites it visited to the skill's allowed scope.")
@json_option
@pass_app
def compile_(app: App, recording_dir: Path, out_dir: Path, save: bool, extend_scope: bool,
             as_json: bool) -> None:
    """Compile a recording into a taught skill folder; same recording, same bytes.

    A repair's recording (from `teachd teach --repair`) is merged into the
    skill it repairs instead: `--save` applies it as the next version.
    """
    from teachd.teach.compile import (  # the compiler: only when compiling
        compile_dir,
        save_compiled,
        skill_files,
    )
    from teachd.teach.recordings import read_recording

    repair = read_recording(recording_dir).repair
    if repair:
        if not save:
            raise BadInput(f"{recording_dir} repairs step {repair['step']} of {repair['slug']}: apply it "
                           f"with `teachd compile {recording_dir} --save`")
        from teachd.cli.teach import save_repair

        return save_repair(app, recording_dir, extend_scope, as_json)
    compiled = compile_dir(recording_dir)
    files = skill_files(compiled)
    folder = write_skill_folder(out_dir, compiled.slug, files)
    data: dict[str, object] = {"slug": compiled.slug, "path": str(folder), "files": sorted(files)}
    if save:
        skill = save_compiled(app.store, compiled, note=f"compiled from {recording_dir.name}")
        data["version"] = skill.current_version
    emit(as_json, data, f"wrote {folder}" + (f" (saved as v{data['version']})" if save else ""))
