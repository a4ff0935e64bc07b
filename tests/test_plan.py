"""Anchors belong to one action's target, and the replay plan is one typed
format that both the compiler and the runner use."""

from __future__ import annotations

import json

import pytest

from compiler.plan import ANCHORS_FILE, BASE_FORMAT, FORMAT_VERSION, STEPS_FILE, PlanError, Procedure
from compiler.skill import compile_recording
from tests.compiler_helpers import load_fixture, recording, target

PATH = "/html/body/main/form/input[1]"


def field(name: str, xpath: str = PATH, **kw) -> dict:
    return target(name, tag="input", role="textbox", label=name, xpath=xpath, css="main > form > input", **kw)


def plan_of(events: list[dict]) -> tuple[list[dict], dict]:
    c = compile_recording(recording(events))
    return json.loads(c.references[STEPS_FILE])["steps"], json.loads(c.references[ANCHORS_FILE])["anchors"]


def page(url: str, title: str = "Page") -> dict:
    return {"type": "page", "url": url, "title": title, "tab": 0}


def test_two_pages_sharing_a_markup_path_get_two_anchors() -> None:
    steps, anchors = plan_of([
        page("https://app.example.com/login"),
        {"type": "input", "target": field("Email"), "value": "a@example.com"},
        {"type": "click", "target": target("Sign in"), "url": "https://app.example.com/login"},
        page("https://app.example.com/form"),
        {"type": "input", "target": field("Amount"), "value": "42"},
    ])
    email, amount = (s["anchor"] for s in steps if s["action"] == "type")
    assert email != amount
    assert anchors[amount]["expect"]["name"] == "Amount" and anchors[email]["expect"]["name"] == "Email"


def test_two_options_each_first_in_a_filtered_list_get_two_anchors() -> None:
    box = {"role": "listbox", "name": "Available", "id": "from", "css": "#from"}
    opt = dict(tag="option", role="option", css="#from > option", xpath="//*[@id='from']/option", container=box)
    steps, anchors = plan_of([
        page("https://app.example.com/groups/add"),
        {"type": "click", "target": target("Can approve", **opt), "url": "https://app.example.com/groups/add"},
        {"type": "click", "target": target("Choose"), "url": "https://app.example.com/groups/add"},
        {"type": "click", "target": target("Can export", **opt), "url": "https://app.example.com/groups/add"},
        {"type": "click", "target": target("Choose"), "url": "https://app.example.com/groups/add"},
    ])
    ids = [s["anchor"] for s in steps if s["action"] == "click"]
    assert ids[0] != ids[2]  # different options, one path
    assert ids[1] == ids[3]  # the same button, the same document: one anchor
    assert anchors[ids[0]]["expect"]["container"] == {"role": "listbox", "name": "Available", "id": "from"}


def test_the_same_element_after_a_reload_is_a_new_anchor() -> None:
    url = "https://app.example.com/list"
    steps, _ = plan_of([page(url), {"type": "click", "target": target("Refresh"), "url": url},
                        page(url), {"type": "click", "target": target("Refresh"), "url": url, "t": 9000}])
    clicks = [s["anchor"] for s in steps if s["action"] == "click"]
    assert len(clicks) == 2 and clicks[0] != clicks[1]


def test_editing_keys_fold_into_the_typing_and_enter_stays_a_key() -> None:
    url = "https://app.example.com/search"
    box = field("Search")
    steps, _ = plan_of([
        page(url), {"type": "click", "target": box, "url": url},
        {"type": "key", "key": "a", "modifiers": ["Control"], "target": box, "url": url},
        {"type": "key", "key": "Backspace", "modifiers": [], "target": box, "url": url},
        {"type": "input", "target": box, "value": "taxi"},
        {"type": "key", "key": "Enter", "modifiers": [], "target": box, "url": url},
    ])
    assert [s["action"] for s in steps] == ["goto", "type", "press"]
    assert steps[2]["key"] == "Enter"


def test_choosing_an_option_by_click_is_one_step_not_two() -> None:
    url = "https://app.example.com/groups/add"
    box = {"role": "listbox", "name": "Available", "id": "from", "css": "#from"}
    opt = target("Can approve", tag="option", role="option", css="#from > option", container=box)
    select = target("Available", tag="select", role="listbox", css="#from")
    steps, _ = plan_of([page(url), {"type": "click", "target": opt, "url": url},
                        {"type": "input", "target": select, "value": "approve"}])
    assert [s["action"] for s in steps] == ["goto", "click"]


def test_plan_round_trips_and_carries_its_format_version() -> None:
    c = compile_recording(load_fixture())
    files = {k: v for k, v in c.references.items()}
    plan = Procedure.from_files(files)
    assert json.loads(files[STEPS_FILE])["format_version"] == BASE_FORMAT  # no repair: no alternates
    assert plan.steps_doc() == json.loads(files[STEPS_FILE])
    assert plan.anchors_doc() == json.loads(files[ANCHORS_FILE])


def test_a_newer_plan_is_refused_with_a_clear_message() -> None:
    files = dict(compile_recording(load_fixture()).references)
    doc = json.loads(files[STEPS_FILE])
    doc["format_version"] = FORMAT_VERSION + 1
    files[STEPS_FILE] = json.dumps(doc)
    with pytest.raises(PlanError, match="newer than this teachd reads"):
        Procedure.from_files(files)


def test_a_version_one_plan_still_loads() -> None:
    files = dict(compile_recording(load_fixture()).references)
    for path in (STEPS_FILE, ANCHORS_FILE):
        doc = json.loads(files[path])
        doc.pop("format_version")
        doc["version"] = 1
        files[path] = json.dumps(doc)
    plan = Procedure.from_files(files)
    assert plan.steps[0].action == "goto" and plan.anchors


@pytest.mark.parametrize("broken", [{}, {STEPS_FILE: "{", ANCHORS_FILE: "{}"},
                                    {STEPS_FILE: "[]", ANCHORS_FILE: "{}"},
                                    {STEPS_FILE: '{"steps": [{"action": "goto"}]}', ANCHORS_FILE: '{"anchors": {}}'}])
def test_broken_plans_are_refused_not_crashed_on(broken: dict) -> None:
    with pytest.raises(PlanError):
        Procedure.from_files(broken)


def test_a_choice_keeps_its_label_for_when_the_values_change() -> None:
    url = "https://app.example.com/form"
    menu = target("Category", tag="select", role="combobox", label="Category")
    steps, _ = plan_of([page(url), {"type": "input", "target": menu, "value": "17", "option_text": "Travel"}])
    choice = next(s for s in steps if s["action"] == "select")
    assert choice["option"] == "Travel" and choice["param"] == "category"


def success_of(events: list[dict]) -> tuple[dict, str]:
    c = compile_recording(recording(events))
    return json.loads(c.references[STEPS_FILE])["success"], c.body


def post_events(final_text: str | None) -> list[dict]:
    url = "https://cms.example.com/posts/new"
    events = [
        page(url, "Add post"),
        {"type": "input", "target": field("Title"), "value": "Open  day"},
        {"type": "input", "target": field("Body", xpath="/html/body/main/form/div"),
         "value": "Join us on Saturday"},
        {"type": "input", "target": field("Password", xpath="/html/body/main/form/input[3]",
                                          attrs={"type": "password"}), "masked": True},
        {"type": "input", "target": field("Tag", xpath="/html/body/main/form/input[4]"), "value": "Tax"},
        {"type": "input", "target": field("Count", xpath="/html/body/main/form/input[5]"), "value": "42"},
        {"type": "click", "target": target("Publish"), "url": url},
        page("https://cms.example.com/posts/7", "Open day"),
    ]
    if final_text is not None:
        events.append({"type": "page_text", "url": "https://cms.example.com/posts/7", "title": "Open day",
                       "text": final_text, "tab": 0})
    return events


def test_the_success_check_asks_for_the_values_the_final_page_showed() -> None:
    text = "Published.\n OPEN DAY\n Join us on   Saturday — see you!\n Taxis welcome. 42 seats"
    success, body = success_of(post_events(text))
    assert "It shows this run's {{title}}, {{body}}" in body
    # title and body were shown (case and spacing aside); "Tax" only inside "Taxis", "42" too short,
    # the password is a secret, never a shown value
    assert success["shows"] == ["{{title}}", "{{body}}"]
    assert "Join us" not in json.dumps(success)  # placeholders, never the text itself


def test_without_the_final_text_the_success_check_is_what_it_was() -> None:
    success, body = success_of(post_events(None))
    assert "It shows this run's" not in body
    assert "shows" not in success and success["url_pattern"] == "https://cms.example.com/posts/*"
    success, _ = success_of(post_events("Published. Nothing you typed is here."))
    assert "shows" not in success


def test_the_shown_values_compile_to_the_same_bytes_every_time() -> None:
    text = "Open day Join us on Saturday"
    first = compile_recording(recording(post_events(text))).references[STEPS_FILE]
    assert all(compile_recording(recording(post_events(text))).references[STEPS_FILE] == first for _ in range(3))


def test_a_demonstrations_crop_is_referenced_by_plain_names_that_never_leave_the_recordings(tmp_path) -> None:
    """``Anchor.crop`` (a recording's id, a frame's name) as a skill may hold
    it: anything else is none, and a crop is read only from inside the
    recordings' folder."""
    from PIL import Image

    from compiler.plan import crop_ref
    from teachd.runner.observe import demonstrated_crop

    good = {"recording": "rec-20261130-expense", "frame": "frames/0003.png"}
    assert crop_ref(good) == good
    for bad in ({"recording": "..", "frame": "frames/0003.png"}, {"recording": "r", "frame": "../../key"},
                {"recording": "r/../../x", "frame": "frames/a.png"}, {"recording": "r", "frame": "frames/a.jpg"},
                {"recording": "r", "frame": "frames/../a.png"}, {"recording": "r"}, "frames/a.png", None):
        assert crop_ref(bad) is None, bad
    recordings = tmp_path / "recordings"
    (recordings / "rec-1" / "frames").mkdir(parents=True)
    Image.new("RGB", (40, 20), (10, 200, 30)).save(recordings / "rec-1" / "frames" / "0001.png")
    jpeg = demonstrated_crop(recordings, {"recording": "rec-1", "frame": "frames/0001.png"})
    assert jpeg is not None and jpeg[:2] == b"\xff\xd8"  # a JPEG
    assert demonstrated_crop(recordings, {"recording": "rec-2", "frame": "frames/0001.png"}) is None  # purged
