from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from teachd.core.errors import InvalidSkill
from teachd.skills.skillmd import parse_skill_md, render_skill_md, validate_skill_dir
from teachd.skills.skillmd.validate import find_skill_dirs
from tests.conftest import write_skill

FINANCE = {
    "expense-report": "Files an expense report with receipts.",
    "receipt-ocr": "Use when: the user sends receipts",  # the unquoted colon
    "invoice-chase": "Chases unpaid invoices politely.",
    "budget-review": "Reviews the monthly budget.",
    "tax-folder": "Sorts tax documents into folders.",
    "payroll-check": "Checks payroll totals against the ledger.",
}


def test_finance_case_one_unquoted_colon_all_six_load(tmp_path: Path) -> None:
    docs = []
    for name, desc in FINANCE.items():
        folder = write_skill(tmp_path, name, desc)
        docs.append(parse_skill_md((folder / "SKILL.md").read_text(), folder.name))
    assert [d.name for d in docs] == list(FINANCE)
    ocr = docs[1]
    assert ocr.description == "Use when: the user sends receipts"
    assert ocr.repaired and any("repair" in w for w in ocr.warnings)
    assert not any(d.repaired for d in docs if d is not ocr)


def test_unreadable_yaml_after_repair_excludes_skill() -> None:
    with pytest.raises(InvalidSkill, match="unreadable"):
        parse_skill_md("---\nname: x\ndescription: [unclosed\n  - : :\n---\nbody")


def test_missing_description_excludes_skill() -> None:
    """Seed 000 "SKILL.md frontmatter": the native provider requires a description."""
    with pytest.raises(InvalidSkill, match="no description"):
        parse_skill_md("---\nname: x\n---\nbody", "x")


def test_name_defaults_to_folder_and_other_faults_only_warn() -> None:
    """Seed 000 "SKILL.md frontmatter": name defaults to the folder; globs, alwaysApply and unknown keys kept as metadata."""
    doc = parse_skill_md(
        "---\ndescription: d\nglobs: ['*.py']\nalwaysApply: true\nweird: 1\n---\nbody", "My_Folder"
    )
    assert doc.name == "My_Folder"
    assert doc.metadata["globs"] == ["*.py"] and doc.metadata["alwaysApply"] is True
    assert doc.metadata["weird"] == 1
    assert any("weird" in w for w in doc.warnings)
    assert any("lowercase" in w for w in doc.warnings)
    assert not any("globs" in w for w in doc.warnings)


def test_no_frontmatter_is_invalid() -> None:
    with pytest.raises(InvalidSkill, match="must start"):
        parse_skill_md("# just markdown\n")


def test_strict_validate_reports_every_rule(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path,
        "bad--name",
        "x" * 1025,
        body="See references/missing.md and scripts/run.sh.\n" + "line\n" * 501,
        extra="compatibility: " + "c" * 501 + "\nglobs: a\n",
        files={"scripts/run.sh": "echo hi\n"},
    )
    r = validate_skill_dir(folder)
    text = "\n".join(r.errors)
    assert not r.ok
    assert "hyphen" in text
    assert "over 1024" in text
    assert "compatibility" in text
    assert "'globs'" in text
    assert "references/missing.md" in text
    assert "scripts/run.sh" not in text  # it exists
    assert any("lines" in w for w in r.warnings)


def test_strict_validate_name_must_equal_folder_and_flow_style_is_error(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "alpha", extra="metadata: {a: b}\n")
    (folder / "SKILL.md").write_text(
        (folder / "SKILL.md").read_text().replace("name: alpha", "name: beta")
    )
    r = validate_skill_dir(folder)
    assert any("folder" in e for e in r.errors)
    assert any("flow-style" in e for e in r.errors)


def test_strict_validate_ok_line(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "good-one", "Use it well.", body="# T\nSee references/a.md\n",
                         extra="metadata:\n  version: '3'\n", files={"references/a.md": "a"})
    r = validate_skill_dir(folder)
    assert r.ok, r.errors
    assert r.summary() == "OK  good-one  v3  body 2 lines, 1 resources, description 12 chars"


def test_find_skill_dirs_skips_vendor_folders_and_bounds_depth(tmp_path: Path) -> None:
    write_skill(tmp_path / "a", "one")
    write_skill(tmp_path / "node_modules", "two")
    write_skill(tmp_path / ".git", "three")
    deep = tmp_path
    for i in range(9):
        deep = deep / f"d{i}"
    write_skill(deep, "four")
    assert [p.name for p in find_skill_dirs(tmp_path)] == ["one"]


def test_rendered_skill_md_passes_reference_validator(tmp_path: Path) -> None:
    fields = {
        "name": "taught-x",
        "description": "Use when: a value holds a colon, 'quotes' and yes/no",
        "license": "MIT",
        "compatibility": "Needs Chromium",
        "allowed-tools": "computer_act",
        "metadata": {"teachd-kind": "taught", "teachd-secrets": "1", "flag": True, "n": 3},
    }
    folder = tmp_path / "taught-x"
    folder.mkdir()
    text = render_skill_md(fields, "# Body\n\n- step\n")
    assert "{" not in text.split("---")[1]
    (folder / "SKILL.md").write_text(text)
    agentskills = Path(sys.executable).parent / "agentskills"
    p = subprocess.run([str(agentskills), "validate", str(folder)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert validate_skill_dir(folder).ok
    back = parse_skill_md(text, "taught-x")
    assert back.description == fields["description"]
    assert back.metadata["flag"] == "true" and back.metadata["n"] == "3"


def test_render_refuses_non_spec_fields() -> None:
    with pytest.raises(InvalidSkill):
        render_skill_md({"name": "a", "description": "b", "globs": "x"}, "")


def test_globs_and_link_texts_are_not_references_but_missing_targets_still_are(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "coding", "Codes. Use when coding.",
                         body="# Coding\n\nModules: references/module-N-*.md, also references/part-?.md.\n"
                              "See [references/axial-coding](references/axial-coding.md) and scripts/run.sh.\n",
                         files={"references/axial-coding.md": "Axial.\n"})
    report = validate_skill_dir(folder)
    assert report.errors == ["cites scripts/run.sh which does not exist"]
    (folder / "scripts").mkdir()
    (folder / "scripts" / "run.sh").write_text("echo\n")
    assert validate_skill_dir(folder).ok


def test_references_stay_one_level_deep(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "deep", "Deep. Use when deep.",
                         body="# Deep\n\nRead references/a.md and references/sub/b.md.\n",
                         files={"references/a.md": "Then read references/c.md and references/gone.md.\n",
                                "references/c.md": "C.\n", "references/sub/b.md": "B.\n"})
    report = validate_skill_dir(folder)
    assert report.ok, report.errors  # warnings, not errors: the skill still loads
    assert "references/sub/b.md is nested deeper than one level under references/" in report.warnings
    assert "references/a.md cites references/gone.md which does not exist" in report.warnings
    assert any(w.startswith("references/a.md cites references/c.md: references nested deeper") for w in report.warnings)
