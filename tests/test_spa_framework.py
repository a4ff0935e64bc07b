"""A single-page app nobody here wrote the parts of: React 19, React Router's
hash routes and MUI 9 (tests/fixtures/spa_react, built from npm and
vendored). Taught once through ``teachd teach`` — a slow redirect on the
way in, an icon with a test id, fields whose ids MUI generated, a
type-to-create option, an unlabelled editor under its heading, a header
menu, a dialog — then replayed by ``teachd run`` on the same names under
new ids in another order, on a redesign, with a control moved, and with
the entry point moved. Judged by the app's own record of what it saved."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

TASK = "Add a tagged item and rename another"
SLUG = "taught-add-a-tagged-item-and-rename-another"


def demonstrate(teach: Any) -> None:
    """From #/ (which sends itself to #/items after 2.5 s): the create icon,
    a name, a new tag made by typing it, Create (a write); back to Items;
    Bravo by its link; a description in the unlabelled editor; Save (a
    write); the header menu's Rename, a new name, Save name (a write)."""
    from tests.spa_app import person_at

    with person_at(teach, clicks=10) as person:
        page = person.page
        page.wait_for_url(re.compile(r"#/items$"), timeout=15000)
        page.get_by_test_id("create-item-button").click()
        person.type_into(page.get_by_label("Name"), "Delta")
        person.type_into(page.get_by_label("Tags"), "stage")
        page.get_by_role("option", name='Add "stage"').click()
        page.get_by_role("button", name="Create").click()
        page.get_by_role("heading", name="Delta").wait_for()
        page.get_by_role("link", name="Items").click()
        page.get_by_role("link", name="Bravo").click()
        page.get_by_role("heading", name="Bravo").wait_for()
        person.type_into(page.locator("textarea").first, "Checked")
        page.get_by_role("button", name="Save", exact=True).click()
        page.get_by_text("Saved").wait_for()
        page.get_by_role("button", name="More actions").click()
        page.get_by_role("menuitem", name="Rename").click()
        person.type_into(page.get_by_label("New name"), "Bravo 2", replace=True)
        page.get_by_role("button", name="Save name").click()
        page.get_by_role("heading", name="Bravo 2").wait_for()


@pytest.fixture(scope="module")
def taught(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], Any]]:
    from tests.spa_app import BUILT, taught_on

    with taught_on(tmp_path_factory.mktemp("react"), TASK, "/#/", demonstrate, BUILT) as (env, app):
        assert _saved(app) == EXPECTED
        yield env, app


EXPECTED = {"Alpha": ("", []), "Bravo 2": ("Checked", []), "Charlie": ("", []), "Delta": ("", ["stage"])}


def _saved(app: Any) -> dict[str, tuple[str, list[str]]]:
    with app.lock:
        return {i["name"]: (i["description"], i["tags"]) for i in app.items}


def _replay(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any], str]:
    from tests.drift_suite import replay_cli

    return replay_cli(env, "--step-timeout", "4", *args, password=None, slug=SLUG)


def test_the_plan_has_the_apps_routes_its_fields_named_by_people_and_no_typed_redirect(taught) -> None:
    from tests.spa_app import exported

    env, _app = taught
    steps = exported(env, SLUG)["steps"]
    assert [s["action"] for s in steps].count("goto") == 1, steps  # the 2.5 s redirect is step 1's
    assert steps[0]["expect"]["url_pattern"].endswith("/#/items")
    assert sorted(s["param"] for s in steps if s.get("param")) == ["description", "name", "new_name", "tags"]
    patterns = {s["expect"]["url_pattern"].split("#", 1)[-1] for s in steps if s.get("expect")}
    assert {"/items", "/items/new", "/items/*"} <= patterns, patterns


@pytest.mark.parametrize("variant, names", [
    ({}, ("Alpha", "Bravo", "Charlie")),
    ({}, ("Charlie", "Bravo", "Alpha")),
    ({"redesign": True}, ("Alpha", "Bravo", "Charlie")),
    ({"section": True}, ("Alpha", "Bravo", "Charlie")),
], ids=["new-ids", "new-ids-other-order", "icon-became-a-button", "save-moved-from-a-table-to-a-section"])
def test_the_task_replays_right_on_new_ids_and_after_the_app_changed(taught, variant: dict[str, bool],
                                                                     names: tuple[str, ...]) -> None:
    env, app = taught
    app.reseed(names)
    app.variant = variant
    try:
        code, out, err = _replay(env)
    finally:
        app.variant = {}
    assert code == 0 and out["status"] == "success", (out.get("message"), err[-1500:])
    assert _saved(app) == EXPECTED


def test_with_the_entry_point_moved_the_run_halts_before_any_write(taught) -> None:
    env, app = taught
    app.reseed()
    app.variant = {"moved": True}
    try:
        code, out, err = _replay(env)
    finally:
        app.variant = {}
    assert code == 1 and out["status"] == "failure", (out.get("message"), err[-1500:])
    assert app.writes == [] and "/#/records" in out["message"], out["message"]


def test_a_run_with_other_values_creates_its_own_tag_through_the_type_to_create_option(taught) -> None:
    """The option the demonstration clicked was `Add "stage"`: it is the
    tags parameter's, so another value picks the option that value makes."""
    env, app = taught
    app.reseed()
    code, out, err = _replay(env, "--param", "name=Echo", "--param", "tags=review")
    assert code == 0 and out["status"] == "success", (out.get("message"), err[-1500:])
    assert _saved(app) == {**{k: v for k, v in EXPECTED.items() if k != "Delta"}, "Echo": ("", ["review"])}
    plan = " ".join(s.get("detail") or "" for s in out["steps"])
    assert 'Add "review"' in plan and "stage" not in plan, plan


# -- MUI cards: the same two icons on every card ------------------------------------------------------------
CARDS_TASK = "Rename Bravo's card and delete Charlie's"
CARDS_SLUG = "taught-rename-bravo-s-card-and-delete-charlie-s"


@pytest.fixture(scope="module")
def taught_cards(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], Any]]:
    """On #/cards: Bravo's edit icon, a new name, Rename (a write); Charlie's
    delete icon, Delete (a write). MUI draws each icon as an inline SVG with
    the same classes; the cards are plain <div>s."""
    from tests.spa_app import BUILT, taught_on

    with taught_on(tmp_path_factory.mktemp("react-cards"), CARDS_TASK, "/#/cards", demonstrate_cards,
                   BUILT) as (env, app):
        assert app.names() == ["Alpha", "Bravissimo"]
        yield env, app


def demonstrate_cards(teach: Any) -> None:
    from tests.spa_app import person_at

    with person_at(teach, clicks=4) as person:
        page = person.page
        card = page.locator(".MuiCard-root", has_text="Bravo")
        card.locator("button").first.click()  # the edit icon
        person.type_into(page.get_by_label("Card name"), "Bravissimo", replace=True)
        page.get_by_role("button", name="Rename").click()
        page.locator(".MuiCard-root", has_text="Bravissimo").wait_for()
        page.locator(".MuiCard-root", has_text="Charlie").locator("button").last.click()  # delete
        page.get_by_role("button", name="Delete").click()
        page.locator(".MuiCard-root", has_text="Charlie").wait_for(state="detached")


def test_mui_cards_in_another_order_are_told_by_their_names_and_their_icons(taught_cards) -> None:
    from tests.spa_app import check_cards_told_by_name

    check_cards_told_by_name(*taught_cards, CARDS_SLUG)


def test_without_the_card_shown_the_mui_run_halts_before_any_write(taught_cards) -> None:
    from tests.spa_app import check_cards_halt_without_bravo

    check_cards_halt_without_bravo(*taught_cards, CARDS_SLUG)
