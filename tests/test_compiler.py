from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compiler.anchors import ladder, looks_generated
from compiler.names import slugify
from compiler.recording import RecordingError, parse_recording
from compiler.scope import in_scope, scope_of
from compiler.skill import compile_recording
from compiler.steps import to_steps
from teachd.skills.skillmd import render_skill_md
from tests.compiler_helpers import EXPENSE, FIXTURES, digests_everywhere, load_fixture, recording, target
from tests.conftest import ROOT


@pytest.mark.parametrize("fixture, slug", [
    ("expense-report", "taught-submit-an-expense-report"),
    ("help-and-desktop", "taught-find-the-travel-policy"),
])
def test_golden_recordings(fixture: str, slug: str) -> None:
    files = compile_recording(load_fixture(FIXTURES / "recordings" / fixture)).files(render_skill_md)
    golden = FIXTURES / "golden" / slug
    if os.environ.get("TEACHD_UPDATE_GOLDEN"):
        for rel, data in files.items():
            (golden / rel).parent.mkdir(parents=True, exist_ok=True)
            (golden / rel).write_bytes(data)
    expected = {p.relative_to(golden).as_posix(): p.read_bytes()
                for p in sorted(golden.rglob("*")) if p.is_file()}
    assert sorted(files) == sorted(expected)
    for rel in files:
        assert files[rel] == expected[rel], f"{rel} differs from the golden copy"


_DETERMINISM_SCRIPT = """
import hashlib, sys
sys.path.insert(0, {root!r})
from tests.compiler_helpers import load_fixture
from compiler.skill import compile_recording
from teachd.skills.skillmd import render_skill_md
files = compile_recording(load_fixture()).files(render_skill_md)
h = hashlib.sha256()
for k, v in sorted(files.items()):
    h.update(k.encode() + b"\\0" + v + b"\\0")
print(h.hexdigest())
"""


def test_same_bytes_under_any_timezone_locale_and_hash_seed() -> None:
    digests = digests_everywhere(_DETERMINISM_SCRIPT.format(root=str(ROOT)))
    assert len(digests) == 1, digests


def test_compiled_skill_passes_reference_validator(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "teachd", "compile", str(EXPENSE), "--out",
                          str(tmp_path), "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    folder = Path(json.loads(out.stdout)["path"])
    assert folder.name.startswith("taught-")
    agentskills = Path(sys.executable).parent / "agentskills"
    check = subprocess.run([str(agentskills), "validate", str(folder)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_help_fixture_tabs_typed_url_desktop_and_secrets() -> None:
    c = compile_recording(load_fixture(FIXTURES / "recordings" / "help-and-desktop"))
    steps = json.loads(c.references["references/steps.json"])["steps"]
    assert [s["action"] for s in steps] == ["goto", "type", "press", "click", "goto", "type",
                                            "os_click", "os_key"]
    assert steps[3]["expect"]["tab"] == 1 and steps[4]["url"].endswith("/policies/travel")
    assert steps[5]["secret"] == "notes"  # an AWS key typed into a plain field
    everything = b"".join(c.files(render_skill_md).values())
    assert b"abc123def456" not in everything and b"AKIAIOSFODNN7EXAMPLQ" not in everything
    assert c.frontmatter["metadata"]["teachd-scope"] == (
        "https://help.example.com https://intranet.example.com")
    assert "Outside the browser, click in the window “Files — Downloads”" in c.body


def desktop_recording(crop: bytes | None = None) -> Any:
    """The help fixture whose desktop part named its widgets (AT-SPI), with a
    line typed into an editor and a passphrase into a password dialog."""
    folder = FIXTURES / "recordings" / "help-and-desktop"
    events = [json.loads(line) for line in (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    editor = {"role": "text", "name": "", "path": [["frame", "*Notes - Mousepad"], ["page tab list", ""]],
              "app": "mousepad", "window": "*Notes - Mousepad", "box": {"x": 1, "y": 52, "w": 638, "h": 425}}
    password = {"role": "password text", "name": "", "path": [["dialog", "Unlock"]], "app": "zenity",
                "window": "Unlock"}
    at = next(i for i, e in enumerate(events) if e["type"] == "os_click")
    events[at].update(target=editor, window="*Notes - Mousepad", window_class="mousepad mousepad",
                      frame="frames/os-1.png" if crop else None)
    t = events[at]["t"]
    events[at + 1:at + 1] = [
        {"v": 1, "seq": 0, "t": t + 1, "type": "os_input", "value": "Call the bank on Monday", "target": editor,
         "window": "*Notes - Mousepad"},
        {"v": 1, "seq": 0, "t": t + 2, "type": "os_input", "masked": True, "target": password, "window": "Unlock"}]
    for n, e in enumerate(events, 1):
        e["seq"] = n
    return parse_recording("\n".join(json.dumps(e) for e in events) + "\n",
                           {"frames/os-1.png": crop} if crop else {})


def test_desktop_steps_compile_to_desktop_anchors_a_parameter_and_a_secret() -> None:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (80, 40), (200, 30, 30)).save(buf, format="PNG")
    c = compile_recording(desktop_recording(buf.getvalue()))
    steps = json.loads(c.references["references/steps.json"])
    plan = json.loads(c.references["references/anchors.json"])
    assert steps["format_version"] == plan["format_version"] == 4  # only a skill with desktop anchors
    assert steps["apps"] == ["mousepad mousepad"]
    click, typed, secret, key = steps["steps"][-4:]
    assert [s["action"] for s in (click, typed, secret, key)] == ["os_click", "os_type", "os_type", "os_key"]
    assert click["desktop"] == typed["desktop"] == "d1"  # the click focused the field it typed into
    d1 = plan["desktop"]["d1"]
    assert d1["window"] == {"class": "mousepad mousepad", "title": "*Notes - Mousepad",
                            "title_pattern": "* - Mousepad", "app": "mousepad"}
    assert d1["widget"] == {"role": "text", "name": "", "path": [["page tab list", ""]]}
    assert d1["picture"]["dhash"] and d1["picture"]["png"] and d1["at"]["in"] == {"x": 899, "y": 648}
    assert steps["parameters"][typed["param"]]["default"] == "Call the bank on Monday"
    assert secret["secret"] in steps["secrets"] and "param" not in secret
    assert c.approval_tools == ("computer_act",)  # a masked secret forces approval, on the desktop too
    assert "Outside the browser, click the text field in the *Mousepad* window." in c.body
    assert f"Outside the browser, type {{{{{typed['param']}}}}} into the text field in the *Mousepad* window." in c.body
    assert f"type {{{{secret:{secret['secret']}}}}} into the password field in the *Zenity* window" in c.body


def test_desktop_steps_compile_to_the_same_bytes_every_time_and_the_old_format_stays_2() -> None:
    first = compile_recording(desktop_recording()).files(render_skill_md)
    assert all(compile_recording(desktop_recording()).files(render_skill_md) == first for _ in range(3))
    old = compile_recording(load_fixture(FIXTURES / "recordings" / "help-and-desktop"))
    assert json.loads(old.references["references/steps.json"])["format_version"] == 2


def test_a_desktop_steps_effect_is_the_window_title_it_left_with_this_runs_file_name() -> None:
    """Ctrl+S opened "Save As"; Enter left "notes.txt - Mousepad", the name
    being a parameter; typing only marked the title modified, which no
    pattern tells ("* - Mousepad" either way): no check there. The focus
    flicking back to the editor after "Save As" showed does not hide it."""
    cls, pad = "mousepad mousepad", "Untitled 1 - Mousepad"
    editor = {"role": "text", "name": "", "path": [["frame", pad]], "app": "mousepad", "window": pad}
    name = {"role": "text", "name": "Name", "path": [["dialog", "Save As"]], "app": "mousepad", "window": "Save As"}
    c = compile_recording(recording([
        {"type": "page", "url": "https://app.example.com/", "title": "Home"},
        {"type": "os_click", "x": 5, "y": 60, "button": "left", "window": pad, "window_class": cls, "target": editor},
        {"type": "os_window", "window": "*" + pad, "window_class": cls},
        {"type": "os_input", "value": "Call the bank", "target": editor, "window": "*" + pad, "window_class": cls},
        {"type": "os_key", "key": "s", "modifiers": ["ctrl"], "window": "*" + pad, "window_class": cls},
        {"type": "os_window", "window": "Save As", "window_class": cls},
        # the focus flicks back to the editor while the dialog is placed, then returns: not Ctrl+S's doing
        {"type": "os_window", "window": "*" + pad, "window_class": cls},
        {"type": "os_click", "x": 9, "y": 9, "button": "left", "window": "Save As", "window_class": cls,
         "target": name},
        {"type": "os_input", "value": "notes.txt", "target": name, "window": "Save As", "window_class": cls},
        {"type": "os_key", "key": "enter", "modifiers": [], "window": "Save As", "window_class": cls},
        {"type": "os_window", "window": "Save As", "window_class": cls},
        {"type": "os_window", "window": "notes.txt - Mousepad", "window_class": cls},
        {"type": "os_window", "window": "Other", "window_class": "xterm xterm"},  # another app: not its effect
    ]))
    steps = json.loads(c.references["references/steps.json"])["steps"]
    by_action = [(s["action"], s.get("expect")) for s in steps if s["action"].startswith("os_")]
    param = next(s["param"] for s in steps if s["action"] == "os_type" and s["window"] == "Save As")
    assert by_action == [
        ("os_click", None), ("os_type", None),
        ("os_key", {"window": {"class": cls, "title_pattern": "*Save As"}}),
        ("os_click", None), ("os_type", None),
        ("os_key", {"window": {"class": cls, "title_pattern": "* - Mousepad", "shows": [f"{{{{{param}}}}}"]}}),
    ], by_action
    assert f"a *Mousepad* window titled like `* - Mousepad` showing {{{{{param}}}}}" in c.body


def test_what_a_desktop_app_showed_at_the_end_is_the_success_check_with_this_runs_values() -> None:
    """The recorder's ``os_text``: the texts an app's window showed at the
    end that it did not before. The typed note becomes ``{{name}}`` there
    (another run types another note); the display's "9" stays as it is."""
    cls, pad = "mousepad mousepad", "Untitled 1 - Mousepad"
    editor = {"role": "text", "name": "", "path": [["frame", pad]], "app": "mousepad", "window": pad}
    c = compile_recording(recording([
        {"type": "page", "url": "https://app.example.com/", "title": "Home"},
        {"type": "os_click", "x": 5, "y": 60, "button": "left", "window": pad, "window_class": cls, "target": editor},
        {"type": "os_input", "value": "Call the bank", "target": editor, "window": pad, "window_class": cls},
        {"type": "os_text", "window_class": cls, "texts": [
            {"role": "text", "path": [["page tab list", ""]], "n": 0, "text": "Call the bank"},
            {"role": "label", "path": [], "n": 2, "text": "Total: 9"}]},
    ]))
    steps = json.loads(c.references["references/steps.json"])
    param = next(s["param"] for s in steps["steps"] if s["action"] == "os_type")
    assert steps["success"]["desktop"] == [{"class": cls, "shows": [
        {"role": "text", "path": [["page tab list", ""]], "n": 0, "text": f"{{{{{param}}}}}"},
        {"role": "label", "path": [], "n": 2, "text": "Total: 9"}]}]
    assert (f"- The *Mousepad* window shows “`{{{{{param}}}}}`” (text field); “Total: 9” (label): where the "
            "demonstration ended, its own display of the effect.") in c.body
    # a recording that read no app compiles as it always did: no such key
    plain = compile_recording(recording([{"type": "page", "url": "https://app.example.com/", "title": "Home"}]))
    assert "desktop" not in json.loads(plain.references["references/steps.json"])["success"]


def test_masked_secret_forces_approval_and_never_appears() -> None:
    c = compile_recording(load_fixture())
    assert c.approval_tools == ("computer_act",)
    meta = c.frontmatter["metadata"]
    assert meta["teachd-approval"] == "always-ask computer_act"
    assert meta["teachd-secrets"] == "password"
    everything = b"".join(c.files(render_skill_md).values())
    assert b"9f8e7d6c5b4a39281706f5e4d3c2b1a0" not in everything  # session token in a URL
    assert b"session=[masked]" in everything
    assert "{{secret:password}}" in c.body and "ask the user" in c.body


def test_typed_secret_detected_by_shape_is_masked_everywhere() -> None:
    field = target("Notes", tag="input", role="textbox", label="Notes")
    token = "ghp_1A2b3C4d5E6f7G8h9I0jK1l2M3n4O5p6Q7r8"
    rec = recording([
        {"type": "page", "url": "https://app.example.com/", "title": "Home"},
        {"type": "input", "target": field, "value": token},
        {"type": "page", "url": f"https://app.example.com/x#access_token={token}", "title": token},
    ])
    c = compile_recording(rec)
    everything = b"".join(c.files(render_skill_md).values()).decode()
    assert token not in everything and token[:8] not in everything[everything.find("Notes"):]
    assert c.approval_tools == ("computer_act",)
    assert "{{secret:notes}}" in c.body


def test_no_secret_means_no_forced_approval() -> None:
    field = target("Amount", tag="input", role="textbox", label="Amount")
    rec = recording([
        {"type": "page", "url": "https://app.example.com/", "title": "Home"},
        {"type": "input", "target": field, "value": "42.50"},
    ])
    c = compile_recording(rec)
    assert c.approval_tools == ()
    assert c.frontmatter["metadata"]["teachd-approval"] == "none"
    assert "{{amount}}" in c.body and "`42.50`" in c.body


def test_steps_coalesce_fold_drop_and_merge() -> None:
    btn, field = target("Go"), target("Name", tag="input", role="textbox", label="Name")
    rec = recording([
        {"type": "page", "url": "https://app.example.com/", "title": "Home", "t": 100},
        {"type": "click", "target": field, "url": "https://app.example.com/", "t": 1000},
        {"type": "input", "target": field, "value": "A", "t": 1100},
        {"type": "input", "target": field, "value": "Al", "t": 1200},
        {"type": "key", "key": "Tab", "target": field, "t": 1250},
        {"type": "click", "target": btn, "url": "https://app.example.com/", "t": 2000},
        {"type": "click", "target": btn, "url": "https://app.example.com/", "t": 2200},
        {"type": "page", "url": "https://app.example.com/login-redirect", "title": "R", "t": 2500},
        {"type": "page", "url": "https://app.example.com/done", "title": "Done", "t": 2900},
        {"type": "page", "url": "https://other.example.com/typed", "title": "Typed", "t": 9000},
        {"type": "key", "key": "Enter", "target": field, "t": 9500},
    ])
    steps = to_steps(rec)
    assert [s.action for s in steps] == ["goto", "type", "dblclick", "goto", "press"]
    assert steps[0].expect_url == "https://app.example.com/"
    assert steps[1].value == "Al"
    assert steps[2].expect_url == "https://app.example.com/done"
    assert steps[3].url == "https://other.example.com/typed"


def test_new_tab_is_expected_of_the_click_that_opened_it() -> None:
    link = target("Open help", tag="a", role="link")
    rec = recording([
        {"type": "page", "url": "https://app.example.com/", "title": "Home", "tab": 0},
        {"type": "click", "target": link, "url": "https://app.example.com/"},
        {"type": "page", "url": "https://help.example.com/", "title": "Help", "tab": 1},
    ])
    steps = to_steps(rec)
    assert steps[-1].expect_tab == 1
    assert scope_of([rec.start_url, "https://help.example.com/"]) == [
        "https://app.example.com", "https://help.example.com"]


def test_scope_is_exact_origins_not_domains() -> None:
    scope = scope_of(["https://a.example.com/x", "https://a.example.com:443/y",
                      "http://127.0.0.1:8711/", "about:blank", "data:text/html,hi"])
    assert scope == ["http://127.0.0.1:8711", "https://a.example.com"]
    assert in_scope("https://a.example.com/other", scope)
    assert not in_scope("https://b.example.com/", scope)
    assert not in_scope("http://a.example.com/", scope)
    assert not in_scope("http://127.0.0.1:8712/", scope)


def test_anchor_ladder_order_uniqueness_and_generated_ids() -> None:
    t = {"tag": "button", "role": "button", "name": "Save", "text": "Save", "test_id": "save-btn",
         "id": "btn-3f9a1c2b7d", "label": None, "attrs": {"name": "save", "type": "submit"},
         "css": "form > button", "xpath": "/html/body/form/button",
         "matches": {"test_id": 1, "role": 2, "text": 2, "attr": 1, "css": 1, "xpath": 1}}
    locs = ladder(t)
    assert [loc.by for loc in locs] == ["test_id", "role", "text", "attr", "css", "xpath"]
    assert [loc.unique for loc in locs] == [True, False, False, True, True, True]
    for generated in ("btn-3f9a1c2b7d", ":r1:", "ember1234", "css-1x2y3z", "a1B2c3D4e5"):
        assert looks_generated(generated), generated
    for stable in ("submit", "amount", "login-btn", "has-receipt", "submitBtn"):
        assert not looks_generated(stable), stable


def test_anchors_json_has_fingerprints_and_geometry() -> None:
    c = compile_recording(load_fixture())
    anchors = json.loads(c.references["references/anchors.json"])["anchors"]
    a5 = anchors["a5"]  # the Amount field: generated id skipped, ancestor offset kept
    assert not any(loc.get("by") == "id" for loc in a5["locators"])
    assert a5["geometry"]["ancestor"] == {"name": "Expense", "dx": 20.0, "dy": 40.0}
    assert a5["geometry"]["viewport_rel"]["x"] == round(100 / 1280, 4)
    assert len(a5["fingerprint"]["thumb"]) == 128 and len(a5["fingerprint"]["dhash"]) == 16


def test_slugs() -> None:
    assert slugify("Submit an Expense Report!") == "taught-submit-an-expense-report"
    assert slugify("Café déjà vu") == "taught-cafe-deja-vu"
    long_a, long_b = "x" * 80 + " one", "x" * 80 + " two"
    assert len(slugify(long_a)) <= 64 and slugify(long_a) != slugify(long_b)
    assert slugify("???") == "taught-task"


def test_torn_last_line_is_dropped_and_noted() -> None:
    text = (EXPENSE / "events.jsonl").read_text()
    cut = text[: text.rfind('{"v"') + 25]  # the stop event half-written
    rec = parse_recording(cut)
    assert rec.torn_tail and rec.stop_reason is None
    c = compile_recording(rec)
    assert "cut off by a crash" in c.references["references/recording.md"]


@pytest.mark.parametrize("text, message", [
    ("", "start event"),
    ('{"v":1,"seq":0,"t":0,"type":"page","url":"x"}\n', "start event"),
    ('{"v":2,"seq":0,"t":0,"type":"start"}\n', "unsupported format"),
    ('{"v":1,"seq":0,"t":0,"type":"start","name":"a","url":"u"}\nnot json\n{}\n', "line 2"),
])
def test_bad_recordings_are_refused(text: str, message: str) -> None:
    with pytest.raises(RecordingError, match=message):
        parse_recording(text)


def test_compile_cli_bad_input_is_one_line(cli, tmp_path: Path) -> None:
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / "events.jsonl").write_text("garbage\nmore\n")
    for args in (["compile", str(tmp_path / "nope")], ["compile", str(tmp_path / "rec")]):
        r = cli(*args, "--out", str(tmp_path / "out"))
        assert r.code != 0 and len(r.err.strip().splitlines()) == 1, r.err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_compile_save_creates_then_versions_the_same_slug(cli, tmp_path: Path) -> None:
    for expected in (1, 2):
        r = cli("compile", str(EXPENSE), "--out", str(tmp_path), "--save", "--json")
        assert json.loads(r.out)["version"] == expected
    shown = json.loads(cli("skills", "show", "taught-submit-an-expense-report", "--json").out)
    assert shown["approval"] == {"always_ask": True, "tools": ["computer_act"]}
    assert shown["name"] == "Submit an expense report"
    md = cli("skills", "export", "taught-submit-an-expense-report").out
    assert md == (tmp_path / "taught-submit-an-expense-report" / "SKILL.md").read_text()


def test_a_field_named_args_never_takes_the_prompts_own_argument_name() -> None:
    """Seed 000 ``/skill:<name> [args]``: ``args`` is the prompt's free-form
    argument, so a demonstrated field labelled "Args" becomes ``args_2``."""
    from compiler.names import PROMPT_ARGS, param_name

    taken: set[str] = set()
    assert param_name({"label": "Args"}, taken) == f"{PROMPT_ARGS}_2"
    assert param_name({"label": "Args"}, taken) == f"{PROMPT_ARGS}_3"
    assert param_name({"label": "Amount"}, taken) == "amount"


def test_a_component_librarys_generated_ids_are_never_names_and_an_unlabelled_field_takes_its_heading() -> None:
    from compiler.names import describe, param_name

    for generated in ("xyz-select-1", "react-select-2-input", "downshift-0-item", "headlessui-menu-button-3",
                      "radix-:r1:", "mantine-r1-dropdown", ":R1:", ":Rlmm:", "radix-:R1:", "«r1»", "_r_1_"):
        assert looks_generated(generated), generated
    for stable in ("address-line-1", "step-2", "item-7", "select-country", "menu-main"):
        assert not looks_generated(stable), stable
    assert param_name({"tag": "input", "id": "xyz-select-1", "attrs": {"name": ":r2:"}}, set()) == "value"
    assert param_name({"tag": "input", "id": "xyz-select-1", "attrs": {}, "heading": "Tags"}, set()) == "tags"
    editor = {"tag": "div", "attrs": {"contenteditable": "true"}, "container": {"role": "region", "name": "Body"}}
    assert param_name(editor, set()) == "body" and describe(editor) == "the **Body** field"
    # a button is not named after its section: it stays unnamed rather than borrow a name
    assert describe({"tag": "button", "attrs": {}, "container": {"role": "toolbar", "name": "Items"}}) \
        == "the unnamed button"


def test_a_window_title_with_no_app_part_keeps_its_name_not_what_varies_around_it() -> None:
    """"Untitled" is still the window once the editor marks it modified
    ("*Untitled"); a path's folder says whose home it is, not which window;
    whatever is kept is matched as it is written ("[1]" is no glob)."""
    import fnmatch

    from compiler.desktop import title_pattern

    def fits(title: str, taught: str) -> bool:
        return fnmatch.fnmatchcase(title, title_pattern(taught))

    assert fits("*Untitled", "Untitled") and fits("Untitled", "*Untitled") and fits("• Untitled", "Untitled")
    assert not fits("Untitled 2", "Untitled")
    assert fits("/home/bob/work/notes.txt", "/home/alice/notes.txt")
    assert not fits("/home/bob/other.txt", "/home/alice/notes.txt")
    assert "alice" not in title_pattern("/home/alice/notes.txt")
    assert fits("notes[1].txt - Mousepad", "draft - Mousepad") and fits("report[1]", "report[1]")
    assert not fits("report1", "report[1]")
