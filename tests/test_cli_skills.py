from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest

from teachd.cli import cli as root_group
from tests.conftest import ROOT, all_bytes_under, write_skill


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, cmd in sorted(group.commands.items()):
        path = (*prefix, name)
        yield path, cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, path)


def test_every_command_has_help_json_and_appears_in_the_command_reference() -> None:
    readme = (ROOT / "docs" / "cli.md").read_text()  # the command reference (once in the README)
    for path, cmd in _commands(root_group):
        assert cmd.help, f"teachd {' '.join(path)} has no help"
        if not isinstance(cmd, click.Group):
            opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
            assert "--json" in opts, f"teachd {' '.join(path)} lacks --json"
            assert f"teachd {' '.join(path)}" in readme, f"docs/cli.md lacks teachd {' '.join(path)}"


@pytest.fixture
def skill_dir(tmp_path: Path) -> Path:
    return write_skill(tmp_path / "src", "receipts", "Use when: the user sends receipts",
                       body="# Receipts\nRead references/how.md.\n",
                       files={"references/how.md": "How to file."})


def test_import_list_show_load_export_roundtrip(cli, skill_dir: Path, tmp_path: Path) -> None:
    r = cli("skills", "import", str(skill_dir), "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["slug"] == "receipts"
    listed = json.loads(cli("skills", "list", "--json").out)
    assert [s["slug"] for s in listed] == ["receipts"]
    load = cli("skills", "load", "receipts")
    assert load.out.startswith("# Receipts") and "skill://receipts/references/how.md" in load.out
    exported = cli("skills", "export", "receipts").out
    out = tmp_path / "exp" / "receipts"
    out.mkdir(parents=True)
    (out / "SKILL.md").write_text(exported)
    (out / "references").mkdir()
    (out / "references/how.md").write_text("How to file.")
    v = cli("skills", "validate", str(out))
    assert v.code == 0, v.out
    assert v.out.startswith("OK  receipts")
    env = json.loads(cli("skills", "export", "receipts", "--format", "json").out)
    assert env["files"] == {"references/how.md": "How to file."}
    assert env["approval"] == {"always_ask": False, "tools": []}


def test_json_envelope_carries_approval_and_plain_md_inherits_it(cli, tmp_path: Path) -> None:
    envelope = {
        "format": "teachd-skill", "slug": "gated", "name": "Gated Skill",
        "description": "Needs approval.", "instructions": "# Gated\n",
        "files": {}, "approval": {"always_ask": True, "tools": ["computer_act"]},
    }
    (tmp_path / "gated.json").write_text(json.dumps(envelope))
    assert cli("skills", "import", str(tmp_path / "gated.json")).code == 0
    shown = json.loads(cli("skills", "show", "gated", "--json").out)
    assert shown["approval"] == {"always_ask": True, "tools": ["computer_act"]}
    assert shown["name"] == "Gated Skill"
    plain = write_skill(tmp_path / "p", "gated", "Changed text, no approval declared.",
                        extra="allowed-tools: computer_act run_command\n")
    r = cli("skills", "update", "gated", "--from", str(plain / "SKILL.md"))
    assert r.code == 0, r.err
    shown = json.loads(cli("skills", "show", "gated", "--json").out)
    assert shown["version"] == 2
    assert shown["approval"] == {"always_ask": True, "tools": ["computer_act"]}
    md = cli("skills", "export", "gated").out
    assert "display-name: Gated Skill" in md and "name: gated" in md


def test_an_exported_disabled_skill_imports_disabled(cli, tmp_path: Path) -> None:
    envelope = {"format": "teachd-skill", "slug": "quiet", "name": "quiet", "description": "Quiet. Use when x.",
                "instructions": "# Quiet\n", "files": {}, "approval": {"always_ask": False, "tools": []},
                "enabled": False}
    (tmp_path / "quiet.json").write_text(json.dumps(envelope))
    assert cli("skills", "import", str(tmp_path / "quiet.json")).code == 0
    assert json.loads(cli("skills", "show", "quiet", "--json").out)["enabled"] is False
    again = cli("skills", "export", "quiet", "--format", "json").out
    assert json.loads(again)["enabled"] is False
    envelope["enabled"] = "yes"
    (tmp_path / "bad.json").write_text(json.dumps({**envelope, "slug": "bad"}))
    assert cli("skills", "import", str(tmp_path / "bad.json")).code == 4


def test_file_and_approval_edits_are_new_versions(cli, skill_dir: Path, tmp_path: Path) -> None:
    assert cli("skills", "import", str(skill_dir)).code == 0
    (tmp_path / "tpl.md").write_text("A template.\n")
    r = cli("skills", "file", "receipts", "put", "templates/t.md", "--from", str(tmp_path / "tpl.md"), "--json")
    assert r.code == 0 and json.loads(r.out)["version"] == 2
    assert cli("skills", "read", "skill://receipts/templates/t.md").out == "A template.\n"
    assert cli("skills", "file", "receipts", "put", "../x.md", "--from", str(tmp_path / "tpl.md")).code == 4
    assert cli("skills", "file", "receipts", "rm", "references/how.md").code == 0
    assert cli("skills", "file", "receipts", "rm", "references/how.md").code == 3
    shown = json.loads(cli("skills", "show", "receipts", "--json").out)
    assert shown["files"] == ["templates/t.md"] and shown["version"] == 3
    r = cli("skills", "approval", "receipts", "--always-ask", "--tool", "computer_act", "--tool", "write_file",
            "--json")
    assert json.loads(r.out)["approval"] == {"always_ask": True, "tools": ["computer_act", "write_file"]}
    assert cli("skills", "approval", "receipts", "--tool", "rm_rf").code == 2
    off = json.loads(cli("skills", "approval", "receipts", "--no-always-ask", "--json").out)
    assert off["approval"]["always_ask"] is False and off["version"] == 5


def test_a_skill_within_the_limits_round_trips_however_large_its_envelope(cli, tmp_path: Path) -> None:
    quoted = '"\\\t<>&' * 25_000  # 150,000 characters that JSON escapes
    files = {f"references/r{i}.md": quoted for i in range(4)}  # 600 KB of content, within 1 MB
    envelope = {"format": "teachd-skill", "slug": "big", "name": "big", "description": "Big. Use when big.",
                "instructions": "# Big\n", "files": files, "approval": {"always_ask": False, "tools": []}}
    (tmp_path / "big.json").write_text(json.dumps(envelope))
    assert (tmp_path / "big.json").stat().st_size > 640_000
    r = cli("skills", "import", str(tmp_path / "big.json"))
    assert r.code == 0, r.err
    exported = cli("skills", "export", "big", "--format", "json").out
    assert json.loads(exported)["files"] == files
    over = {**envelope, "slug": "over", "files": {f"references/r{i}.md": "x" * 150_000 for i in range(8)}}
    (tmp_path / "over.json").write_text(json.dumps(over))
    refused = cli("skills", "import", str(tmp_path / "over.json"))
    assert refused.code == 4 and "over the 1048576-byte limit" in refused.err


def test_older_exchange_form_with_slug_and_display_name(cli, tmp_path: Path) -> None:
    """The older name + slug form imports under its slug with its display name, and exports spec-valid (Agent Skills spec: name = folder)."""
    f = tmp_path / "old.md"
    f.write_text("---\nname: Pay The Rent\nslug: pay-rent\ndescription: Pays rent.\n---\n# Rent\n")
    assert cli("skills", "import", str(f)).code == 0
    shown = json.loads(cli("skills", "show", "pay-rent", "--json").out)
    assert (shown["slug"], shown["name"]) == ("pay-rent", "Pay The Rent")
    out = tmp_path / "out"
    assert cli("skills", "export", "pay-rent", "--format", "folder", "--out", str(out)).code == 0
    exported = (out / "pay-rent" / "SKILL.md").read_text()
    assert exported.startswith("---\nname: pay-rent\n") and "\nslug:" not in exported  # the spec's form
    assert "display-name: Pay The Rent" in exported and exported.endswith("---\n# Rent\n")
    assert cli("skills", "validate", str(out / "pay-rent")).code == 0


def test_the_exported_approval_is_the_current_one(cli, skill_dir: Path) -> None:
    """Seed: the approval travels with the skill — as it is now, after an edit."""
    assert cli("skills", "import", str(skill_dir)).code == 0
    assert cli("skills", "approval", "receipts", "--always-ask", "--tool", "computer_act").code == 0
    assert "teachd-approval: always-ask computer_act" in cli("skills", "export", "receipts").out
    assert cli("skills", "approval", "receipts", "--no-always-ask").code == 0
    exported = cli("skills", "export", "receipts").out
    assert "always-ask" not in exported  # gone with the edit (the author's header again)


def test_versions_restore_disable_enable_delete(cli, skill_dir: Path) -> None:
    cli("skills", "import", str(skill_dir))
    cli("skills", "update", "receipts", "--from", str(skill_dir), "--note", "second")
    vs = json.loads(cli("skills", "versions", "receipts", "--json").out)
    assert [(v["version"], v["current"]) for v in vs] == [(1, False), (2, True)]
    assert vs[1]["note"] == "second"
    assert json.loads(cli("skills", "restore", "receipts", "1", "--json").out)["version"] == 3
    assert cli("skills", "disable", "receipts").code == 0
    assert json.loads(cli("skills", "manifest", "--json").out) == []
    r = cli("skills", "load", "receipts")
    assert r.code == 5 and "disabled" in r.err  # Conflict
    cli("skills", "enable", "receipts")
    manifest = json.loads(cli("skills", "manifest", "--json").out)
    assert manifest == [{"slug": "receipts", "name": "receipts",
                         "description": "Use when: the user sends receipts"}]
    assert cli("skills", "delete", "receipts").code == 0
    assert json.loads(cli("skills", "list", "--json").out) == []


def _one_line_error(r) -> None:
    assert r.code != 0
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1, r.err
    assert "Traceback" not in r.err
    assert lines[0].startswith(("teachd: error:", "Error:")), lines[0]


def test_bad_input_gives_one_line_and_leaves_store_unchanged(cli, skill_dir, tmp_path, home) -> None:
    assert cli("skills", "import", str(skill_dir)).code == 0
    before = json.loads(cli("skills", "export", "receipts", "--format", "json").out)
    bad = tmp_path / "bad"
    write_skill(bad, "big", files={"references/huge.md": "x" * 300_000})
    write_skill(bad, "binary")
    (bad / "binary/SKILL.md").write_bytes(b"---\nname: binary\n---\n\xff\xfe\x00")  # SKILL.md itself: no skill
    (bad / "malformed").mkdir()
    (bad / "malformed/SKILL.md").write_text("no frontmatter here\n")
    (bad / "env.json").write_text("{not json")
    cases = [
        ("skills", "show", "nope"),
        ("skills", "load", "nope"),
        ("skills", "restore", "receipts", "7"),
        ("skills", "import", str(bad / "big")),
        ("skills", "import", str(bad / "binary")),
        ("skills", "import", str(bad / "malformed")),
        ("skills", "import", str(bad / "env.json")),
        ("skills", "import", str(tmp_path / "missing")),
        ("skills", "import", str(skill_dir)),  # already exists
        ("skills", "update", "receipts", "--from", str(bad / "big")),
        ("skills", "update", "receipts", "--from", str(bad / "binary")),
        ("skills", "read", "skill://receipts/../../key"),
        ("skills", "read", "http://example.com/x"),
        ("skills", "export", "receipts", "--format", "xml"),
    ]
    for args in cases:
        _one_line_error(cli(*args))
    after = json.loads(cli("skills", "export", "receipts", "--format", "json").out)
    assert after == before
    assert [s["slug"] for s in json.loads(cli("skills", "list", "--json").out)] == ["receipts"]


def test_wrong_key_is_one_line_error(cli, skill_dir, home: Path) -> None:
    cli("skills", "import", str(skill_dir))
    (home / "key").write_bytes(b"k" * 32)
    r = cli("skills", "list")
    _one_line_error(r)
    assert "wrong key" in r.err
    (home / "key").chmod(0o644)
    assert "chmod 600" in cli("skills", "list").err


def test_validate_exit_codes_and_lines(cli, tmp_path: Path) -> None:
    good = write_skill(tmp_path / "v", "good", "Fine.")
    write_skill(tmp_path / "v", "bad", "Fine.", extra="globs: x\n")
    r = cli("skills", "validate", str(tmp_path / "v"))
    assert r.code == 1
    assert re.search(r"^OK  good  v-  body 1 lines, 0 resources, description 5 chars$", r.out, re.M)
    assert "unknown top-level key 'globs'" in r.out
    assert cli("skills", "validate", str(good)).code == 0
    assert cli("skills", "validate", str(tmp_path / "empty-nothing")).code == 1


def test_validate_warns_of_a_skill_md_over_300_lines_and_still_passes_it(cli, tmp_path: Path) -> None:
    """Seed: keep SKILL.md under 300 lines, detail in references/ — a warning, not an error."""
    short = write_skill(tmp_path / "s", "short", "Fine.", body="line\n" * 290)  # 295 lines with its header
    long = write_skill(tmp_path / "l", "long", "Fine.", body="line\n" * 300)
    assert "over 300" not in cli("skills", "validate", str(short)).out
    r = cli("skills", "validate", str(long))
    assert r.code == 0 and "SKILL.md is 305 lines, over 300: move detail into references/" in r.out, r.out


def test_discover_and_read_from_project_root(cli, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    write_skill(project / ".agents/skills", "local", "Local skill.", files={"a.txt": "A"})
    r = cli("skills", "discover", "--json", cwd=project)
    data = json.loads(r.out)
    assert [s["name"] for s in data["skills"]] == ["local"]
    assert data["skills"][0]["scope"] == "project"
    r = cli("skills", "read", "skill://local/a.txt", "--json", cwd=project)
    assert json.loads(r.out) == {"url": "skill://local/a.txt", "content_type": "text/plain",
                                 "text": "A"}


def test_store_skill_readable_by_url_and_db_has_no_clear_text(cli, skill_dir, home) -> None:
    cli("skills", "import", str(skill_dir))
    r = cli("skills", "read", "skill://receipts/references/how.md")
    assert r.out.strip() == "How to file."
    raw = all_bytes_under(home)
    for text in (b"How to file.", b"the user sends receipts", b"# Receipts"):
        assert text not in raw


def test_the_command_runs_as_a_process_with_its_exit_codes(cli_process) -> None:
    assert cli_process("skills", "list", "--json").code == 0
    missing = cli_process("skills", "show", "taught-nope")
    assert missing.code == 3 and missing.err.startswith("teachd: error:") and "Traceback" not in missing.err
    bad = cli_process("teach", "x", "--url", "ftp://example.com/")
    assert bad.code == 2 and "http(s)" in bad.err


def test_a_taught_skill_exports_whole_as_a_folder_and_a_zip_that_validate(taught, cli_env_runner,
                                                                          tmp_path: Path) -> None:
    """`skills export --format folder|zip`: SKILL.md (frontmatter included) and
    every bundled file, so the references SKILL.md cites are there; the
    folder passes skills-ref's validator and teachd's own; the zip is the
    same bytes twice and imports back as the same skill; nothing is ever
    overwritten."""
    import subprocess
    import sys
    import zipfile

    env, _port = taught
    slug = json.loads(cli_env_runner(env, "skills", "list", "--json").stdout)[0]["slug"]
    done = cli_env_runner(env, "skills", "export", slug, "--format", "folder", "--out", str(tmp_path / "out"),
                          "--json")
    assert done.returncode == 0, done.stderr
    folder = Path(json.loads(done.stdout)["path"])
    assert folder == tmp_path / "out" / slug
    names = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert names == ["SKILL.md", "references/anchors.json", "references/recording.md", "references/steps.json"]
    skill_md = (folder / "SKILL.md").read_text()
    assert skill_md.startswith(f"---\nname: {slug}\n") and "references/anchors.json" in skill_md
    agentskills = Path(sys.executable).parent / "agentskills"
    checked = subprocess.run([str(agentskills), "validate", str(folder)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert cli_env_runner(env, "skills", "validate", str(folder)).returncode == 0
    again = cli_env_runner(env, "skills", "export", slug, "--format", "folder", "--out", str(tmp_path / "out"))
    assert again.returncode != 0 and "exists already" in again.stderr and "Traceback" not in again.stderr
    no_out = cli_env_runner(env, "skills", "export", slug, "--format", "zip")
    assert no_out.returncode != 0 and "--out" in no_out.stderr
    first = cli_env_runner(env, "skills", "export", slug, "--format", "zip", "--out", str(tmp_path / "a.zip"))
    second = cli_env_runner(env, "skills", "export", slug, "--format", "zip", "--out", str(tmp_path / "z"))
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    one, two = (tmp_path / "a.zip").read_bytes(), (tmp_path / "z" / f"{slug}.zip").read_bytes()
    assert one == two  # deterministic
    with zipfile.ZipFile(tmp_path / "a.zip") as zf:
        assert sorted(zf.namelist()) == sorted(f"{slug}/{n}" for n in names)
        assert zf.read(f"{slug}/SKILL.md").decode() == skill_md
    elsewhere = {**env, "TEACHD_HOME": str(tmp_path / "other-home")}
    (tmp_path / "other-home").mkdir(mode=0o700)
    imported = cli_env_runner(elsewhere, "skills", "import", str(tmp_path / "a.zip"), "--json")
    assert imported.returncode == 0, imported.stderr
    shown = json.loads(cli_env_runner(elsewhere, "skills", "show", slug, "--json").stdout)
    original = json.loads(cli_env_runner(env, "skills", "show", slug, "--json").stdout)
    assert shown["files"] == original["files"] and shown["description"] == original["description"]


@pytest.mark.parametrize("form", ["folder", "zip"])
def test_import_leaves_binary_files_out_and_says_which_in_one_line(cli, tmp_path: Path, form: str) -> None:
    """Seed: a skill holds text; a public skill's ``assets/logo.png`` is left
    out — by its name, or by its bytes when the name does not say — as URL
    import does, in one warning line, and the rest is imported whole."""
    import zipfile

    folder = write_skill(tmp_path / "src", "with-assets", files={"references/guide.md": "# Guide\n"})
    (folder / "assets").mkdir()
    (folder / "assets/logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (folder / "assets/blob.dat").write_bytes(b"\x00\xff\xfe binary")
    source = folder
    if form == "zip":
        source = tmp_path / "with-assets.zip"
        with zipfile.ZipFile(source, "w") as zf:
            for f in sorted(folder.rglob("*")):
                if f.is_file():
                    zf.write(f, f"with-assets/{f.relative_to(folder).as_posix()}")
    done = cli("skills", "import", str(source))
    assert done.code == 0, done.err
    [line] = [x for x in done.err.splitlines() if "binary" in x]
    assert line == "teachd: warning: left out 2 binary files (skills hold text only): assets/blob.dat, assets/logo.png"
    shown = json.loads(cli("skills", "show", "with-assets", "--json").out)
    assert shown["files"] == ["references/guide.md"]


def test_skills_are_created_by_hand_or_from_a_starter_template_and_each_template_is_spec_valid(cli, tmp_path) -> None:
    """Authoring: `skills create` (the description required: it is what a
    model reads), the shipped templates listed and each one spec-valid."""
    listed = json.loads(cli("skills", "templates", "--json").out)
    names = [t["name"] for t in listed]
    assert {"cite-sources", "meeting-notes", "review-pull-request"} <= set(names)
    out = tmp_path / "out"
    for name in names:
        done = cli("skills", "create", f"my-{name}", "--from-template", name)
        assert done.code == 0, done.err
        assert cli("skills", "export", f"my-{name}", "--format", "folder", "--out", str(out)).code == 0
        checked = cli("skills", "validate", str(out / f"my-{name}"))
        assert checked.code == 0 and "warning" not in checked.out, checked.out
    shown = json.loads(cli("skills", "show", "my-review-pull-request", "--json").out)
    assert shown["name"] == "Review a pull request" and shown["version"] == 1

    made = cli("skills", "create", "pay-rent", "--name", "Pay the rent", "--always-ask",
               "--description", "Use when the rent is due.", "--instructions", "# Rent\n\nPay it.\n")
    assert made.code == 0, made.err
    assert "teachd-approval: always-ask" in cli("skills", "export", "pay-rent").out
    before = cli("skills", "list", "--json").out
    for args in (("nodesc",), ("Bad-Slug", "--description", "x"), ("pay-rent", "--description", "again"),
                 ("x", "--from-template", "no-such-template"), ("long", "--description", "x" * 1025),
                 ("named", "--description", "x", "--name", "n" * 201)):
        _one_line_error(cli("skills", "create", *args))
    assert cli("skills", "list", "--json").out == before  # nothing half-made


def test_the_same_feedback_command_twice_records_once_as_the_run_page_and_mcp_do(cli) -> None:
    """One rule for every surface (teachd.runner.feedback): a run takes one
    piece of feedback per skill; the second command says so and records nothing."""
    assert cli("skills", "create", "pay-rent", "--name", "Pay the rent", "--description", "Pays it.").code == 0
    first = cli("feedback", "ext-agent:41", "--skill", "pay-rent", "success", "--json")
    again = cli("feedback", "ext-agent:41", "--skill", "pay-rent", "failure", "--json")
    said = cli("feedback", "ext-agent:41", "--skill", "pay-rent", "failure")
    assert first.code == again.code == said.code == 0, (first.err, again.err)
    one, two = json.loads(first.out), json.loads(again.out)
    assert (one["recorded"], two["recorded"]) == (True, False) and two["outcome"] == "success"
    assert one["version"] == two["version"] == 2
    assert "already has its feedback (success)" in said.out
    body = cli("skills", "load", "pay-rent").out
    assert body.count("ext-agent:41") == 1 and "failure" not in body.split("## History", 1)[1]
