"""Rich-text editors and icon-only controls, recorded and compiled (issue 23):
an editor is known by its label, never by what the person typed into it; a
click on an icon is a click on the control it sits in, known by its icon; the
page's own viewport and the final page's text are in the recording."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from compiler.anchors import ladder
from compiler.skill import compile_recording
from compiler.steps import to_steps
from recorder.browser import CAPTURE_JS, chromium_path
from teachd.skills.skillmd import render_skill_md
from tests.compiler_helpers import recording, target
from tests.desktop import Teach

SENTENCE = "Join us on Saturday for the village fair at noon"

# A Quill-like editor (contenteditable with data-placeholder, its label a
# <label> of the form group, not `for` it) that copies its text to a hidden
# input on a debounce; a footer toggle that is a bare <svg> in a <div>.
EDITOR_PAGE = """<!doctype html><html><head><title>New post</title><style>
.toggle { cursor: pointer; display: inline-block; padding: 4px }
.ql-editor { min-height: 40px; border: 1px solid #999 }
#menu { display: none } body.open #menu { display: block }</style></head><body>
<h1>New post</h1>
<form id="post" aria-label="New post" method="post" action="/saved">
  <div class="group"><label for="title">Title</label><input id="title" name="title"></div>
  <div class="group"><label>Body</label>
    <div class="ql-container"><div class="ql-editor ql-blank" contenteditable="true"
      data-placeholder="Compose an epic..."><p><br></p></div></div>
    <input type="hidden" name="body" id="body-store">
  </div>
  <footer class="actions">
    <div class="toggle" id="more"><svg width="16" height="16"><title>More</title><use href="#icon-more"></use></svg></div>
    <div class="toggle" id="gear"><svg width="16" height="16"><use href="#icon-gear"></use></svg></div>
    <ul id="menu"><li>Schedule</li></ul>
  </footer>
</form>
<svg style="display:none"><symbol id="icon-more" viewBox="0 0 16 16"><circle cx="8" cy="8" r="3"/></symbol>
<symbol id="icon-gear" viewBox="0 0 16 16"><rect width="10" height="10"/></symbol></svg>
<script>
  const ed = document.querySelector('.ql-editor'), store = document.getElementById('body-store');
  let timer = null;
  ed.addEventListener('input', () => {
    ed.classList.toggle('ql-blank', !ed.textContent.trim());
    clearTimeout(timer); timer = setTimeout(() => { store.value = ed.innerText; }, 250);
  });
  document.getElementById('more').onclick = () => document.body.classList.toggle('open');
</script></body></html>"""

# The same app after an upgrade: the toggle is now a named <button>.
UPGRADED_PAGE = EDITOR_PAGE.replace(
    '<div class="toggle" id="more"><svg width="16" height="16"><title>More</title><use href="#icon-more"></use>'
    '</svg></div>',
    '<button type="button" class="btn"><span class="icon"><svg width="16" height="16"><use href="#icon-more">'
    '</use></svg></span> More actions</button>',
).replace("document.getElementById('more').onclick", "document.querySelector('.btn').onclick")


class _Pages(BaseHTTPRequestHandler):
    pages = {"/new": EDITOR_PAGE, "/upgraded": UPGRADED_PAGE}

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = self.pages.get(self.path, "").encode()
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _compiled_json(c: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    return (json.loads(c.references["references/anchors.json"]),
            json.loads(c.references["references/steps.json"]))


def _editor(**kw: Any) -> dict[str, Any]:
    """The editor as the recorder now describes it: before the first keystroke."""
    t = {"tag": "div", "role": None, "name": None, "text": None, "label": "Body", "label_source": "nearby",
         "editable": True, "classes": ["ql-editor"], "attrs": {"contenteditable": "true",
                                                                 "data-placeholder": "Compose an epic..."},
         "editor_css": '[contenteditable][data-placeholder="Compose an epic..."]',
         "css": "#post > div:nth-of-type(2) > div > div", "xpath": "/html/body/form/div[2]/div/div",
         "container": {"role": "form", "name": "New post", "id": "post"},
         "matches": {"editor": 1, "css": 1, "xpath": 1}}
    t.update(kw)
    return t


def _only_as_default(blob: str, params: dict[str, Any]) -> None:
    """The typed sentence occurs in the compiled plan once per parameter
    default that holds it, and nowhere else."""
    defaults = sum(1 for p in params.values() if p.get("default") == SENTENCE)
    assert defaults == 1 and blob.count(SENTENCE) == 1, blob


def test_sentence_typed_into_body_editor_is_the_body_parameter_and_nothing_else() -> None:
    editor = _editor()
    rec = recording([
        {"type": "page", "url": "https://cms.example.com/new", "title": "New post"},
        {"type": "click", "target": editor, "button": "left"},
        {"type": "input", "target": editor, "value": SENTENCE},
        {"type": "click", "target": target("Publish", tag="input", role="button", text=None,
                                           attrs={"type": "submit", "value": "Publish"})},
    ])
    c = compile_recording(rec)
    anchors, steps = _compiled_json(c)
    params = steps["parameters"]
    assert list(params) == ["body"] and params["body"]["default"] == SENTENCE
    assert "Type {{body}} into the **Body** field." in c.body
    _only_as_default(c.references["references/anchors.json"] + c.references["references/steps.json"], params)
    everything = b"".join(c.files(render_skill_md).values()).decode()
    assert "Join us" not in everything.replace(json.dumps(SENTENCE)[1:-1], "")  # outside the default
    a = anchors["anchors"][next(s["anchor"] for s in steps["steps"] if s["action"] == "type")]
    assert not any(loc["by"] in ("text", "label") for loc in a["locators"])  # nearby label: getByLabel misses it
    assert {"by": "attr", "attr": "editor", "css": editor["editor_css"], "unique": True} in a["locators"]
    assert a["expect"] == {"tag": "div", "label": "Body", "editable": True, "classes": ["ql-editor"],
                           "container": {"role": "form", "name": "New post", "id": "post"}}


def test_editor_described_after_typing_by_an_older_recorder_still_never_names_it_by_the_sentence() -> None:
    # what issue 23 found: the anchor was the typed sentence, the parameter `value`
    old = {"tag": "div", "role": "textbox", "name": None, "text": SENTENCE, "label": None, "attrs": {},
           "css": "#editor > div", "xpath": "/html/body/form/div[2]/div", "matches": {"text": 1, "css": 1}}
    rec = recording([
        {"type": "page", "url": "https://cms.example.com/new", "title": "New post"},
        {"type": "click", "target": {**old, "text": None}},
        {"type": "input", "target": old, "value": SENTENCE},
        {"type": "key", "key": "Enter", "modifiers": [], "target": old},
        {"type": "click", "target": old},  # back into the editor, which now holds the sentence
    ])
    c = compile_recording(rec)
    anchors, steps = _compiled_json(c)
    params = steps["parameters"]
    assert "Join" not in " ".join(params) and "join" not in " ".join(params)
    _only_as_default(c.references["references/anchors.json"] + c.references["references/steps.json"], params)
    assert "the unnamed field" in c.body


def test_icon_only_toggle_is_found_by_its_icon_and_its_icon_is_evidence() -> None:
    toggle = {"tag": "div", "role": None, "name": None, "text": "More", "id": None, "attrs": {},
              "css": "#post > footer > div:nth-of-type(1)", "xpath": "/html/body/form/footer/div[1]",
              "container": {"role": "contentinfo"},
              "icon": {"symbol": "#icon-more", "title": "More", "classes": ["icon-more", "icon", "css-1x2y3z"]},
              "icon_css": 'use[*|href$="#icon-more"]', "matches": {"icon": 1, "css": 1, "xpath": 1}}
    locs = ladder(toggle)
    icon = next(loc for loc in locs if loc.by == "attr" and loc.attr == "icon")
    assert icon.unique is True and icon.css is not None
    assert icon.css.startswith('css=use[*|href$="#icon-more"] >> xpath=ancestor::*[self::button')
    assert icon.css.endswith(" or self::div][1]")
    rec = recording([{"type": "page", "url": "https://cms.example.com/new", "title": "New post"},
                     {"type": "click", "target": toggle}])
    anchors, _ = _compiled_json(compile_recording(rec))
    assert anchors["anchors"]["a1"]["expect"]["icon"] == {
        "classes": ["icon", "icon-more"], "symbol": "#icon-more", "title": "More"}
    # a named control is found by its name; its icon is evidence only
    named = {**toggle, "role": "button", "name": "More actions", "tag": "button"}
    assert not any(loc.attr == "icon" for loc in ladder(named))
    # a selector that is not one the recorder writes is not trusted
    assert not any(loc.attr == "icon" for loc in ladder({**toggle, "icon_css": "div:has(x) , *"}))


def test_page_viewport_is_geometry_and_final_page_text_is_kept_but_no_step() -> None:
    button = target("Save", bbox={"x": 100, "y": 350, "w": 80, "h": 30})
    events: list[dict[str, Any]] = [
        {"type": "page", "url": "https://app.example.com/", "title": "Home",
         "viewport": {"w": 1280, "h": 713, "dpr": 1}},
        {"type": "click", "target": button},
    ]
    with_text = events + [{"type": "page_text", "url": "https://app.example.com/", "title": "Home",
                           "text": "Saved\nYour post is live", "tab": 0}]
    rec, rec_text = recording([dict(e) for e in events]), recording([dict(e) for e in with_text])
    assert rec.viewport == {"w": 1280, "h": 713, "dpr": 1} and rec.final_page is None
    assert rec_text.final_page == {"url": "https://app.example.com/", "title": "Home",
                                   "text": "Saved\nYour post is live", "tab": 0}
    assert [s.action for s in to_steps(rec_text)] == [s.action for s in to_steps(rec)] == ["goto", "click"]
    geo = _compiled_json(compile_recording(rec))[0]["anchors"]["a1"]["geometry"]
    assert geo["viewport_rel"]["y"] == round(350 / 713, 4)  # the page's height, not the 800 of the launch
    old = recording([{k: v for k, v in dict(e).items() if k != "viewport"} for e in events])
    assert old.viewport is None
    geo_old = _compiled_json(compile_recording(old))[0]["anchors"]["a1"]["geometry"]
    assert geo_old["viewport_rel"]["y"] == round(350 / 800, 4)


def test_headed_recording_of_editor_and_icon_toggle(env, display, pw, cli, site, tmp_path: Path) -> None:
    teach = Teach({**env, "DISPLAY": display}, "Publish a post", site + "/new", "--no-os-input")
    browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{teach.cdp_port}")
    page = browser.contexts[0].pages[0]
    page.wait_for_selector(".ql-editor")
    page.click(".ql-editor p")
    page.keyboard.type(SENTENCE)
    page.click("#more svg")
    page.wait_for_selector("#menu", state="visible")  # the app's own handler ran
    teach.wait_for(lambda evs: sum(e["type"] == "click" for e in evs) >= 2)
    browser.close()
    assert cli("teach", "stop").code == 0
    code, _, err = teach.finish()
    assert code == 0, err

    evs = teach.events()
    typed = [e for e in evs if e["type"] == "input"]
    assert [e["value"] for e in typed] == [SENTENCE]
    editor = typed[0]["target"]
    assert editor["label"] == "Body" and editor["label_source"] == "nearby" and editor["text"] is None
    assert editor["editable"] is True and editor["classes"] == ["ql-editor"]  # ql-blank is state, left out
    assert editor["attrs"]["data-placeholder"] == "Compose an epic..."
    clicks = [e for e in evs if e["type"] == "click"]
    toggle = clicks[-1]["target"]
    assert toggle["tag"] == "div" and toggle["css"] == "#more"  # the control, not the <use> clicked
    assert toggle["icon"] == {"symbol": "#icon-more", "title": "More"} and toggle["matches"]["icon"] == 1
    # the page's own viewport: the 1280x800 window minus the browser's chrome
    viewports = [e["viewport"] for e in evs if e["type"] == "page" and "viewport" in e]
    assert viewports and viewports[0]["w"] <= 1280 and 0 < viewports[0]["h"] < 800
    assert evs[-1]["type"] == "stop" and evs[-2]["type"] == "page_text"
    final = evs[-2]
    assert final["url"] == site + "/new" and final["title"] == "New post"
    assert "Body" in final["text"] and SENTENCE in final["text"] and "Schedule" in final["text"]
    everywhere = "\n".join(json.dumps(e) for e in evs if e["type"] != "page_text")
    assert everywhere.count(SENTENCE) == 1  # the input's value, and nowhere in a description

    r = cli("compile", str(teach.recording_dir), "--out", str(tmp_path / "out"), "--json")
    assert r.code == 0, r.err
    folder = Path(json.loads(r.out)["path"])
    skill_md = (folder / "SKILL.md").read_text()
    assert "Type {{body}} into the **Body** field." in skill_md
    anchors = json.loads((folder / "references" / "anchors.json").read_text())
    steps = json.loads((folder / "references" / "steps.json").read_text())
    params = steps["parameters"]
    _only_as_default((folder / "references" / "anchors.json").read_text()
                     + (folder / "references" / "steps.json").read_text(), params)
    icon_anchor = anchors["anchors"][next(s["anchor"] for s in steps["steps"] if s["action"] == "click"
                                          and s["anchor"] != next(t["anchor"] for t in steps["steps"]
                                                                  if t["action"] == "type"))]
    assert icon_anchor["expect"]["icon"] == {"symbol": "#icon-more", "title": "More"}
    assert any(loc.get("attr") == "icon" and loc["unique"] for loc in icon_anchor["locators"])
    rel = icon_anchor["geometry"]["viewport_rel"]
    bbox = icon_anchor["geometry"]["bbox"]
    assert rel["y"] == round(bbox["y"] / viewports[0]["h"], 4)


def test_replay_evidence_and_icon_locator_follow_the_toggle_into_a_button(pw, site) -> None:
    icon_css = ladder({"tag": "div", "icon_css": 'use[*|href$="#icon-more"]', "matches": {}})[0].css
    assert icon_css is not None
    browser = pw.chromium.launch(executable_path=chromium_path(None, headless=True), headless=True, args=["--no-sandbox"])
    try:
        ctx = browser.new_context()
        ctx.add_init_script(path=str(CAPTURE_JS))  # a replay: the describer, no recording binding
        page = ctx.new_page()
        seen = {}
        for path in ("/new", "/upgraded"):
            page.goto(site + path)
            found = page.locator(icon_css)
            assert found.count() == 1  # the gear icon's control is not it
            seen[path] = found.evaluate("el => window.__teachdEvidence(el)")
        assert seen["/new"]["tag"] == "div" and seen["/upgraded"]["tag"] == "button"
        assert seen["/upgraded"]["name"] == "More actions"
        assert seen["/new"]["icon"]["symbol"] == seen["/upgraded"]["icon"]["symbol"] == "#icon-more"
        assert seen["/upgraded"]["icon"]["classes"] == ["icon"]
        page.click(".ql-editor")
        page.keyboard.type(SENTENCE)
        ev = page.locator(".ql-editor").evaluate("el => window.__teachdEvidence(el)")
        assert ev["editable"] is True and ev["label"] == "Body" and ev["text"] is None
        assert SENTENCE not in json.dumps(ev)
        page.wait_for_function("() => document.getElementById('body-store').value.length > 0")
    finally:
        browser.close()


ICON_CASES = """<!doctype html><html><body>
<label class="check" style="cursor:pointer"><input type="checkbox" id="agree" style="display:none">
  <span class="icon-check"><svg width="14" height="14"><rect width="9" height="9"/></svg></span> Agree</label>
<div class="kebab" tabindex="0" id="kebab"><i class="fa fa-ellipsis-v" style="display:inline-block;width:12px;height:12px"></i></div>
<div class="kebab" tabindex="0"><i class="fa fa-ellipsis-v" style="display:inline-block;width:12px;height:12px"></i></div>
<div role="dialog" tabindex="-1" aria-label="Help"><div><p>Read me <img alt="info" width="12" height="12"
  src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" id="info"></p></div></div>
</body></html>"""


def test_icon_click_retargets_to_its_control_but_not_past_a_label_or_to_a_dialog(pw) -> None:
    reports: list[dict[str, Any]] = []
    browser = pw.chromium.launch(executable_path=chromium_path(None, headless=True), headless=True, args=["--no-sandbox"])
    try:
        ctx = browser.new_context()
        ctx.expose_binding("__teachdEmit", lambda _source, data: reports.append(data))
        ctx.add_init_script(path=str(CAPTURE_JS))
        page = ctx.new_page()
        page.route("http://icons.test/", lambda route: route.fulfill(body=ICON_CASES, content_type="text/html"))
        page.goto("http://icons.test/")
        page.click(".check svg")
        page.click("#kebab i")
        page.click("#info")
        page.evaluate("() => window.__teachdEmit({kind: 'hello'})")  # everything before it has arrived
        clicks = [r["target"] for r in reports if r.get("kind") == "click"]
        assert [c["tag"] for c in clicks] == ["input", "div", "img"]
        assert clicks[0]["id"] == "agree"  # a styled checkbox's icon is the checkbox, as before
        kebab = clicks[1]
        assert kebab["id"] == "kebab" and kebab["icon"] == {"classes": ["fa", "fa-ellipsis-v"]}
        assert kebab["icon_css"] == ".fa-ellipsis-v" and kebab["matches"]["icon"] == 2  # two alike: not unique
        loc = next(loc for loc in ladder(kebab) if loc.attr == "icon")
        assert loc.unique is False and page.locator(str(loc.css)).count() == 2
        assert clicks[2]["id"] == "info"  # a dialog that takes focus (tabindex -1) is no control
    finally:
        browser.close()


# Draftail (Wagtail) as it ships: the <label for> names the hidden input the
# editor writes to, several levels up; the editable itself has no name.
DRAFTAIL_PAGE = """<!doctype html><html><body><form method="post">
<section aria-labelledby="h"><h2 id="h"><label for="id_body" id="id_body-label">Body</label></h2>
<div class="w-field"><div class="w-field__input"><input type="hidden" name="body" id="id_body">
<div class="Draftail-Editor__wrapper"><div class="Draftail-Editor"><div class="DraftEditor-root">
<div class="DraftEditor-editorContainer"><div class="public-DraftEditor-content" contenteditable="true"
 role="textbox" aria-describedby="placeholder-x"><div><br></div></div></div></div></div></div>
</div></div></section>
<section><div><input type="hidden" id="a"><input type="hidden" id="b">
<div><div><div contenteditable="true" id="two"></div></div></div></div></section>
</form></body></html>"""


def test_an_editor_is_named_by_the_label_of_the_input_it_writes_to(pw) -> None:
    browser = pw.chromium.launch(executable_path=chromium_path(None, headless=True), headless=True, args=["--no-sandbox"])
    try:
        page = browser.new_context().new_page()
        page.set_content(DRAFTAIL_PAGE)
        page.add_script_tag(path=str(CAPTURE_JS))  # a replay's describer: no recording binding
        page.click(".public-DraftEditor-content")
        page.keyboard.type(SENTENCE)
        d = page.locator(".public-DraftEditor-content").evaluate("el => window.__teachdDescribe(el)")
        assert d["label"] == "Body" and d["label_source"] == "input-label" and SENTENCE not in json.dumps(d)
        # two hidden inputs near an editor: nothing says which is its own, so neither names it
        two = page.locator("#two").evaluate("el => window.__teachdDescribe(el)")
        assert two["label"] is None and two["label_source"] is None
    finally:
        browser.close()
