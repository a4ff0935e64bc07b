"""Single-page apps: a hash route is a page, and a record's id is never the
identity of the link that opens it — so a replay on the same names under
new ids (another workspace, a re-created store) opens the record by its
name instead of halting after it already created something (half a change)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from compiler.scope import link_shape, matches_pattern, url_pattern
from teachd.runner.match import EXACT, NAMED_ALONE, NONE, agrees, as_taught

A = "aaaaaaaa-1111-4222-8333-444455556666"
B = "bbbbbbbb-1111-4222-8333-444455556666"


def test_a_hash_route_is_part_of_the_page_with_its_ids_masked() -> None:
    assert url_pattern(f"http://h:1/app/?tab=2#/items/{A}?sort=name") == "http://h:1/app/#/items/*"
    assert url_pattern("http://h:1/app#!/items/17") == "http://h:1/app#!/items/*"
    assert url_pattern("http://h:1/app#section-2") == "http://h:1/app"  # an in-page anchor is no route


def test_a_route_pattern_admits_other_ids_not_other_routes_and_an_old_pattern_admits_any_fragment() -> None:
    pattern = url_pattern(f"http://h:1/#/items/{A}")
    assert matches_pattern(f"http://h:1/#/items/{B}", pattern)
    assert not matches_pattern("http://h:1/#/records", pattern)
    assert not matches_pattern("http://h:1/", pattern)
    assert matches_pattern("http://h:1/#/anything", "http://h:1/")  # compiled before routes were pages
    assert matches_pattern(f"http://h:1/?x=1#/items/{B}?tab=3", pattern)
    assert not matches_pattern(f"http://h:1/#/items/{B}/delete", pattern)


def test_a_links_shape_masks_its_ids_and_keeps_what_says_where_it_goes() -> None:
    assert link_shape(f"#/items/{A}") == link_shape(f"#/items/{B}") == "#/items/*"
    assert link_shape("/report?id=3&action=edit") == link_shape("/report?action=edit&id=41")
    assert link_shape("/report?id=3&action=edit") != link_shape("/report?id=3&action=delete")
    assert link_shape("/items/3") != link_shape("/items/3/delete")


def _link(href: str, name: str = "Bravo", row: str = "Bravo") -> dict[str, Any]:
    return {"tag": "a", "role": "link", "name": name, "attrs": {"href": href},
            "containers": [{"role": "row", "name": row}]}


# The link's evidence as the runner reads it: its role and name were on no other element when recorded.
EXPECT = {"tag": "a", "role": "link", "name": "Bravo", "href": f"#/items/{A}",
          "container": {"role": "row", "name": "Bravo"}, NAMED_ALONE: True}


def test_a_record_link_under_a_new_id_agrees_by_role_name_and_row_and_runs_as_taught() -> None:
    moved = _link(f"#/items/{B}")
    assert agrees(EXPECT, moved, {"role"}).score == EXACT
    assert as_taught(EXPECT, moved, {"role"})  # a `run` answer covers it: the same link, another id
    other_kind = agrees(EXPECT, _link(f"#/items/{B}/delete"), {"role"})
    assert other_kind.score == NONE and "leads to" in other_kind.reason


def test_a_link_whose_name_repeats_in_every_row_is_told_by_its_very_address() -> None:
    """"Delete" in every row: only the address tells the rows apart. Under
    a new id it is not the demonstrated record's link — the one left after
    that record went is refused, never clicked."""
    delete = {"tag": "a", "role": "link", "name": "Delete", "href": f"#/items/{A}/delete", NAMED_ALONE: False}
    other_row = {"tag": "a", "role": "link", "name": "Delete", "attrs": {"href": f"#/items/{B}/delete"}}
    assert agrees(delete, other_row, {"role"}).score == NONE
    assert not as_taught(delete, other_row, {"role"})
    same_row = {**other_row, "attrs": {"href": f"#/items/{A}/delete"}}
    assert agrees(delete, same_row, {"role"}).score == EXACT


def test_an_address_with_an_id_never_vouches_for_a_link_whose_row_was_renamed() -> None:
    """/items/3 on a reseeded store is another record: the same address
    must not stand for the record the person chose."""
    expect = dict(EXPECT, href="#/items/3")
    renamed_row = _link("#/items/3", name="Bravo", row="Zulu")
    assert agrees(expect, renamed_row, {"role"}).score == NONE


# -- taught once through `teachd teach`, replayed by `teachd run` ------------------------------------------
TASK = "Add an item and describe another"
SLUG = "taught-add-an-item-and-describe-another"


def demonstrate(teach: Any) -> None:
    """From the list (#/items): New item, a name, Create (a write, then the
    new record's route); back to Items; open Bravo by its link; a
    description, a note in the unlabelled editor under "Notes"; Save (a write)."""
    from tests.spa_app import person_at

    with person_at(teach, clicks=6) as person:
        page = person.page
        page.wait_for_url(re.compile(r"#/items$"))
        page.get_by_role("button", name="New item").click()
        person.type_into(page.get_by_label("Name"), "Delta")
        page.get_by_role("button", name="Create").click()
        page.get_by_role("heading", name="Delta").wait_for()
        page.get_by_role("link", name="Items").click()
        page.get_by_role("link", name="Bravo").click()
        page.get_by_role("heading", name="Bravo").wait_for()
        person.type_into(page.get_by_label("Description"), "Checked")
        person.type_into(page.locator("textarea"), "Call back")
        page.get_by_role("button", name="Save").click()
        page.get_by_text("Saved").wait_for()


@pytest.fixture(scope="module")
def taught_spa(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], Any]]:
    """(the teachd environment, the app) — the task taught once on the app as seeded."""
    from tests.spa_app import taught_on

    with taught_on(tmp_path_factory.mktemp("spa"), TASK, "/#/items", demonstrate) as (env, app):
        assert [(i["description"], i["notes"]) for i in app.named("Bravo")] == [("Checked", "Call back")]
        assert app.named("Delta")
        yield env, app


def _replay(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any], str]:
    from tests.drift_suite import replay_cli

    return replay_cli(env, "--step-timeout", "3", *args, password=None, slug=SLUG)


def test_the_taught_plan_names_each_route_as_its_page(taught_spa) -> None:
    from tests.spa_app import exported

    env, _app = taught_spa
    steps = exported(env, SLUG)["steps"]
    patterns = [s["expect"]["url_pattern"] for s in steps if s.get("expect")]
    assert any(p.endswith("/#/items/*") for p in patterns), patterns  # Create led to the new record's page
    assert all("-" not in p.rsplit("/", 1)[-1] for p in patterns), patterns  # no record's id in a page
    # the unlabelled editor (id ":r3:", made up by its framework) is named by the heading above it
    params = sorted(s["param"] for s in steps if s.get("param"))
    assert params == ["description", "name", "notes"], params


@pytest.mark.parametrize("names", [("Alpha", "Bravo", "Charlie"), ("Charlie", "Bravo", "Alpha")],
                         ids=["new-ids", "new-ids-other-order"])
def test_the_same_names_under_new_ids_replay_right_opening_the_record_by_its_name(
        taught_spa, names: tuple[str, ...]) -> None:
    env, app = taught_spa
    app.reseed(names)
    bravo = app.named("Bravo")[0]["id"]
    code, out, err = _replay(env)
    assert code == 0 and out["status"] == "success", (out.get("message"), err[-1500:])
    assert [(i["description"], i["notes"]) for i in app.named("Bravo")] == [("Checked", "Call back")]
    assert len(app.named("Delta")) == 1
    assert app.writes == [("POST", "/api/items"), ("POST", f"/api/items/{bravo}")]


def test_a_step_whose_route_moved_halts_before_any_write_naming_the_route_it_expected(taught_spa) -> None:
    """Halted before anything was written: a ``failure``, not ``partial``.
    The first page is checked like any other (the entry point moved: step
    1 halts); given a start of the person's own, the first step not found
    on the route it was shown on says which route it expected."""
    env, app = taught_spa
    app.reseed()
    app.moved = True
    try:
        code, out, err = _replay(env)
        halted = [s["n"] for s in out.get("steps", []) if s["status"] == "halted"]
        assert code == 1 and halted == [1], (out.get("message"), err[-1500:])
        assert out["message"].startswith("step 1: expected the page ") and out["message"].endswith("/#/records")
        code, out, err = _replay(env, "--start-url", app.url + "/")
    finally:
        app.moved = False
    halted = [s["n"] for s in out.get("steps", []) if s["status"] == "halted"]
    assert code == 1 and halted == [2], (out.get("message"), err[-1500:])
    assert app.writes == []
    assert "expected /#/items, found /#/records" in out["message"], out["message"]
    assert out["status"] == "failure" and "partial" not in out


def test_a_run_that_stops_after_a_write_reports_partial_with_what_was_written_and_not_done(taught_spa) -> None:
    """Bravo is gone from the list: the run halts at its link — after Create
    already wrote. It says so: ``partial``, the write the app answered (its
    method, path, status and step), and the steps it did not do — in the
    command's result, the run's record and the run page."""
    from teachd.config import settings_from_env
    from teachd.server.pages import templates
    from teachd.server.ui.views import run_view
    from teachd.store import open_store
    from teachd.store.runs import RunStore

    env, app = taught_spa
    app.reseed(("Alpha", "Charlie"))
    code, out, err = _replay(env)
    assert code == 1 and out["status"] == "partial", (out.get("message"), err[-1500:])
    halted = next(s["n"] for s in out["steps"] if s["status"] == "halted")
    create = next(s["n"] for s in out["steps"] if "Create" in (s.get("detail") or ""))
    assert out["partial"]["wrote"] == [{"step": create, "method": "POST", "path": "/api/items", "status": 200}]
    assert out["partial"]["stopped_at"] == halted and out["partial"]["not_done"][0] == halted
    assert out["partial"]["not_done"][-1] == len(out["steps"]) + len(out["partial"]["not_done"]) - 1
    assert out["message"].startswith(f"step {halted}: the Bravo link")  # why it stopped, first
    assert f"partial change: the app answered POST /api/items (200, step {create})" in out["message"]
    assert app.writes == [("POST", "/api/items")]  # the app's own record agrees: one write, then nothing

    run = RunStore(open_store(settings_from_env(env))).one(out["run_id"])
    assert run["status"] == "partial" and run["partial"] == out["partial"]
    page = templates.env.get_template("_run_live.html").render(run=run_view(run, {}, set()))
    assert "Half a change" in page and "POST /api/items" in page and "stopped half way" in page
    assert f'data-repair="{out["run_id"]}"' in page  # "Show me this step": a halted step can be shown again


def test_a_lists_own_numbering_before_a_cards_name_is_data_not_which_record_it_is() -> None:
    """optuna-dashboard titles each card "2. bravo-study": the number is the
    study's id in this store. Under other ids it is still bravo's card; a
    number that is part of the name itself still tells records apart."""
    from teachd.runner.match import item_agrees

    card = {"tag": "div", "name": "2. bravo-study"}
    assert item_agrees(card, {"tag": "div", "name": "3. bravo-study"}) is None
    assert item_agrees(card, {"tag": "div", "name": "#7 — bravo-study"}) is None
    assert "charlie-study" in str(item_agrees(card, {"tag": "div", "name": "1. charlie-study"}))
    assert item_agrees({"name": "Report 2024"}, {"name": "Report 2025"}) is not None
    assert item_agrees({"name": "2024 Report"}, {"name": "2025 Report"}) is not None


ICON = {"tag": "span", "role": "img", "name": "New item", "test_id": "create-item-button",
        "container": {"role": "toolbar", "name": "Items"}}


def _redesigned(via: set[str], place: str = "Items", **changes: Any) -> tuple[set[str], dict[str, Any]]:
    found = {"tag": "button", "role": "button", "name": "Create", "test_id": "create-item-button",
             "attrs": {"data-testid": "create-item-button"}, "containers": [{"role": "toolbar", "name": place}]}
    return via, {**found, **changes}


def test_an_unchanged_test_id_in_the_same_place_vouches_across_a_new_tag_role_and_name() -> None:
    """The icon <span role=img title="New item" data-testid=create-item-button>
    became <button data-testid=create-item-button>Create</button>."""
    via, button = _redesigned({"test_id"})
    verdict = agrees(ICON, button, via)
    assert verdict.score > NONE and "stable identity" in verdict.reason
    assert not as_taught(ICON, button, via)  # a redesign: a `run` answer does not cover it, it asks


def test_a_test_id_does_not_vouch_elsewhere_nor_by_name_alone_nor_across_an_inputs_type() -> None:
    assert agrees(ICON, _redesigned({"test_id"}, place="Archive")[1], {"test_id"}).score == NONE
    assert agrees(ICON, _redesigned({"role"})[1], {"role"}).score == NONE  # found by its role: no identity
    field = {"tag": "input", "role": "textbox", "name": "Code", "type": "text", "test_id": "code"}
    secret = {"tag": "input", "role": "textbox", "name": "Code", "attrs": {"type": "password"}}
    assert agrees(field, secret, {"test_id"}).score == NONE


def test_among_candidates_one_that_agrees_exactly_beats_a_redesigned_one_its_test_id_vouches_for() -> None:
    from teachd.runner.match import Candidate, choose

    via, button = _redesigned({"test_id"})
    exact = {"tag": "span", "role": "img", "name": "New item", "containers": [{"role": "toolbar", "name": "Items"}]}
    picked = choose(ICON, [Candidate(1, via, button), Candidate(2, {"role"}, exact)], [])
    assert picked.candidate is not None and picked.candidate.identity == 2


# -- cards with the same icons in each: known by the card's name, never by position -----------------------
CARDS_TASK = "Rename Bravo and delete Charlie"
CARDS_SLUG = "taught-rename-bravo-and-delete-charlie"


def demonstrate_cards(teach: Any) -> None:
    """On #/cards: Bravo's rename icon, a new name, Save (a write); then —
    once the page is back from under the dialog — Charlie's delete icon, and
    Delete in its dialog (a write)."""
    from tests.spa_app import person_at

    with person_at(teach, clicks=4) as person:
        page = person.page
        page.wait_for_url(re.compile(r"#/cards$"))
        page.locator(".card", has_text="Bravo").locator(".rename").click()
        person.type_into(page.get_by_label("New name"), "Bravissimo")
        page.get_by_role("button", name="Save").click()
        page.locator(".card", has_text="Bravissimo").wait_for()
        page.wait_for_function("() => !document.getElementById('view').hasAttribute('aria-hidden')")
        page.locator(".card", has_text="Charlie").locator(".delete").click()
        page.get_by_role("button", name="Delete").click()
        page.locator(".card", has_text="Charlie").wait_for(state="detached")


@pytest.fixture(scope="module")
def taught_cards(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], Any]]:
    from tests.spa_app import taught_on

    with taught_on(tmp_path_factory.mktemp("cards"), CARDS_TASK, "/#/start", demonstrate_cards) as (env, app):
        assert app.names() == ["Alpha", "Bravissimo"]
        yield env, app


def test_each_icon_is_recorded_with_the_card_it_was_on(taught_cards) -> None:
    from tests.spa_app import exported

    env, _app = taught_cards
    anchors = exported(env, CARDS_SLUG)["anchors"]
    items = sorted(a["expect"]["item"]["name"] for a in anchors.values() if a["expect"].get("item"))
    assert items == ["Bravo", "Charlie"], items  # the two icons; the dialogs' buttons repeat nowhere


def test_a_slow_client_side_redirect_is_the_start_pages_doing_not_a_typed_address(taught_cards) -> None:
    """#/start sends itself to #/cards 2.5 s after it loads — longer than
    any clock window, on any machine: the browser's word (a replaced
    history entry) makes it step 1's redirect, not a second address typed."""
    from tests.spa_app import exported

    env, _app = taught_cards
    steps = exported(env, CARDS_SLUG)["steps"]
    assert [s["action"] for s in steps] == ["goto", "click", "type", "click", "click", "click"], steps
    assert steps[0]["url"].endswith("/#/start") and steps[0]["expect"]["url_pattern"].endswith("/#/cards")


def test_cards_in_another_order_under_new_ids_are_told_by_their_names(taught_cards) -> None:
    from tests.spa_app import check_cards_told_by_name

    check_cards_told_by_name(*taught_cards, CARDS_SLUG)


def test_without_the_demonstrated_card_the_run_halts_before_any_write_naming_the_card(taught_cards) -> None:
    from tests.spa_app import check_cards_halt_without_bravo

    check_cards_halt_without_bravo(*taught_cards, CARDS_SLUG)


def test_a_card_the_run_made_under_a_parameter_is_looked_for_by_this_runs_value() -> None:
    """Create "Delta", then its card's rename icon: the card is the
    parameter's, so a run with name=Echo looks for (and its plan names) Echo's."""
    from compiler.anchors import build_anchor
    from compiler.plan import PlanStep, Procedure
    from teachd.runner.locate import _as_evidence
    from teachd.runner.plan_view import plan_step

    icon = {"tag": "button", "role": "button", "name": "", "css": "div.card:nth-child(4) > button",
            "icon": {"symbol": "#pen"}, "item": {"tag": "div", "name": "Delta"}}
    anchor = build_anchor(icon, "http://h:1/#/cards", None, {}, None, {"name": "Delta"})
    assert anchor.expect["item"] == {"tag": "div", "name": "{{name}}"}
    assert anchor.describe.endswith(r"on the card **\{\{name\}\}**"), anchor.describe
    assert _as_evidence(anchor, {"name": "Echo"}).expect["item"]["name"] == "Echo"
    assert anchor.expect["item"]["name"] == "{{name}}"  # the skill's own anchor is not changed
    proc = Procedure(start_url="http://h:1/#/cards", steps=[], anchors={"a1": anchor},
                     parameters={"name": {"default": "Delta"}}, secrets={}, scope=[], success={})
    step = PlanStep(n=2, action="click", page="http://h:1/#/cards", anchor="a1", describe=anchor.describe)
    assert plan_step(step, proc, {"name": "Echo"}).target.endswith("on the card Echo")
    assert plan_step(step, proc, {}).target.endswith("on the card Delta")  # the default, when none is given
    untied = build_anchor(icon, "http://h:1/#/cards", None, {}, None, {"name": "Deltas"})
    assert untied.expect["item"]["name"] == "Delta"  # only the very words typed make it the parameter's


@pytest.mark.parametrize("late_ms", [300, 2600, 30000], ids=["quick", "slow", "very-slow"])
def test_a_redirect_the_page_made_compiles_to_the_same_steps_however_late_it_lands(late_ms: int) -> None:
    """The clock is what a loaded machine changes: with the browser's word
    (``by: page``) the plan is the same at any delay. Without it, a late
    page event nobody acted for is still an address the person typed."""
    from compiler.recording import Recording
    from compiler.steps import to_steps

    def steps(by: dict[str, str]) -> list[tuple[str, str]]:
        events = ({"type": "page", "t": 100, "seq": 1, "url": "http://h:1/#/start", "title": "Loading"},
                  {"type": "page", "t": 100 + late_ms, "seq": 2, "url": "http://h:1/#/cards", "title": "Cards", **by},
                  {"type": "click", "t": 200 + late_ms, "seq": 3, "url": "http://h:1/#/cards",
                   "target": {"tag": "button", "role": "button", "name": "New"}})
        rec = Recording(id="r", name="n", start_url="http://h:1/#/start", started_at="2026-12-03T00:00:00Z",
                        recorder="t", screen={"w": 1280, "h": 800}, events=events)
        return [(s.action, s.expect_url or s.url) for s in to_steps(rec)]

    assert steps({"by": "page"}) == [("goto", "http://h:1/#/cards"), ("click", "http://h:1/#/cards")]
    if late_ms > 1500:
        assert steps({})[1] == ("goto", "http://h:1/#/cards")  # the person typed it, as far as anyone can tell


def test_the_same_demonstration_compiles_to_the_same_plan_on_a_loaded_machine(taught_cards, tmp_path) -> None:
    """The cards task shown again while two processes keep both cores
    busy (as `stress --cpu 2` does): the slow redirect, the page events and
    every step land later, and the plan — each step's action, page, target
    and what it should lead to — is the one the quiet machine compiled."""
    import subprocess
    import sys

    from tests.spa_app import exported, taught_on

    def plan(env: dict[str, str]) -> list[tuple[Any, ...]]:
        port = re.compile(r"127\.0\.0\.1:\d+")
        return [(s["action"], port.sub("app", s.get("page") or s.get("url") or ""), s.get("describe"),
                 port.sub("app", (s.get("expect") or {}).get("url_pattern") or ""))
                for s in exported(env, CARDS_SLUG)["steps"]]

    quiet_env, _app = taught_cards
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        with taught_on(tmp_path, CARDS_TASK, "/#/start", demonstrate_cards) as (env, _loaded):
            pass
    finally:
        for b in burners:
            b.kill()
            b.wait()
    assert plan(env) == plan(quiet_env)


ROWS = """<!doctype html><main><h1>Invoices</h1><table><tbody>
<tr><td>1</td><td><a href="/i/a">Acme</a></td><td><button>Delete</button></td></tr>
<tr><td>2</td><td><a href="/i/b">Birch</a></td><td><button>Delete</button></td></tr>
<tr><td>3</td><td><a href="/i/c">Birch</a></td><td><button>Delete</button></td></tr></tbody></table>
<div class="cards"><div class="card"><span class="tip" style="display:none">secret tip</span><p>Alpha</p>
<span><button aria-label=""><svg><circle cx="8" cy="8" r="4"/></svg></button></span>
<span><button aria-label=""><svg><rect x="2" y="2" width="12" height="12"/></svg></button></span></div>
<div class="card"><p>Bravo</p><span><button aria-label=""><svg><circle cx="8" cy="8" r="4"/></svg></button></span>
<span><button aria-label=""><svg><rect x="2" y="2" width="12" height="12"/></svg></button></span></div></div>
</main>"""


def test_a_record_is_named_by_its_link_or_text_never_by_a_row_number_a_hidden_tip_or_a_shared_name(pw) -> None:
    """The row's number (its place) names nothing; where two records share a
    name, none is recorded (the tie halts, as before); a card's name skips
    text nobody sees; icon buttons in cells of their own still find their
    card; a circle is not a square."""
    from recorder.browser import CAPTURE_JS, chromium_path, launch_args

    browser = pw.chromium.launch(executable_path=chromium_path(None, headless=True), args=launch_args(None))
    try:
        page = browser.new_page()
        page.add_init_script(path=str(CAPTURE_JS))
        page.route("http://rows.test/", lambda route: route.fulfill(body=ROWS, content_type="text/html"))
        page.goto("http://rows.test/")
        items = page.eval_on_selector_all("button", "els => els.map((el) => window.__teachdDescribe(el).item)")
        icons = page.eval_on_selector_all(".card button",
                                          "els => els.map((el) => window.__teachdDescribe(el).icon.symbol)")
    finally:
        browser.close()
    assert items[0] == {"tag": "tr", "name": "Acme"}  # its link, not "1"
    assert items[1] is None and items[2] is None  # two records named Birch: nothing tells them apart
    assert items[3] == items[4] == {"tag": "div", "name": "Alpha"}  # not the hidden "secret tip"
    assert items[5] == items[6] == {"tag": "div", "name": "Bravo"}
    assert icons[0] == icons[2] != icons[1] == icons[3]  # the same drawing on each card; another between


def test_a_field_known_by_a_heading_the_run_typed_is_looked_for_under_this_runs_value() -> None:
    """A record's own page titled with the name typed when creating it: the
    field nothing names sits under that heading, so it is the parameter's."""
    from compiler.anchors import build_anchor
    from teachd.runner.locate import _as_evidence

    notes = {"tag": "textarea", "role": "textbox", "name": "", "heading": "Delta", "css": "main > textarea"}
    anchor = build_anchor(notes, "http://h:1/#/items/1", None, {}, None, {"name": "Delta"})
    assert anchor.expect["heading"] == "{{name}}"
    assert [loc.value for loc in anchor.locators if loc.by == "heading"] == ["{{name}}"]
    filled = _as_evidence(anchor, {"name": "Echo"})
    assert filled.expect["heading"] == "Echo" and [loc.value for loc in filled.locators if loc.by == "heading"] == ["Echo"]


def test_a_task_that_begins_and_ends_under_one_title_is_described_by_it_once() -> None:
    from types import SimpleNamespace

    from compiler.render import _plain, _span

    same = SimpleNamespace(first_title="Tracker", last_title="Tracker")
    assert _span(same, _plain) == "in “Tracker”"  # a single-page app's own name, not "from “Tracker” to “Tracker”"
    moved = SimpleNamespace(first_title="Sign in", last_title="Report submitted")
    assert _span(moved, _plain) == "from “Sign in” to “Report submitted”"
