"""``teachd compile``: a recording directory → a taught skill folder."""

from __future__ import annotations

from pathlib import Path

import click

from teachd.cli.app import App, emit, json_option, pass_app
from teachd.skills.folder import write_skill_folder


@click.command("compile")
@click.argument("recording_dir", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("."),
              show_default=True, help="Write the skill folder <OUT>/<slug>/ here.")
@click.option("--save", is_flag=True, help="Also save it in the store (new skill or new version).")
@json_option
@pass_app
def compile_(app: App, recording_dir: Path, out_dir: Path, save: bool, as_json: bool) -> None:
    """Compile a recording into a taught skill folder; same recording, same bytes."""
    from teachd.teach.compile import (  # the compiler: only when compiling
        compile_dir,
        save_compiled,
        skill_files,
    )

    compiled = compile_dir(recording_dir)
    files = skill_files(compiled)
    folder = write_skill_folder(out_dir, compiled.slug, files)
    data: dict[str, object] = {"slug": compiled.slug, "path": str(folder), "files": sorted(files)}
    if save:
        skill = save_compiled(app.store, compiled, note=f"compiled from {recording_dir.name}")
        data["version"] = skill.current_version
    emit(as_json, data, f"wrote {folder}" + (f" (saved as v{data['version']})" if save else ""))
