"""The matcher's rules, as pure functions: what counts as the demonstrated
element, and when the only honest answer is to halt."""

from __future__ import annotations

from typing import Any

from teachd.runner.match import EXACT, GAINED, NONE, Candidate, agrees, choose, name_score, what_changed

LIST_FROM = {"role": "listbox", "name": "Available permissions", "id": "perm-from"}
LIST_TO = {"role": "listbox", "name": "Chosen permissions", "id": "perm-to"}


def option(name: str, box: dict) -> dict:
    return {"tag": "option", "role": "option", "name": name, "text": name, "containers": [box]}


def test_names_compare_without_case_or_spacing_and_never_accept_lost_words() -> None:
    assert name_score("Add group", "ADD  GROUP") == EXACT
    assert name_score("Amount", "Total amount") == GAINED
    assert name_score("Can export reports", "Reports | Can export reports") == GAINED
    assert name_score("Add group", "Add") == NONE  # the missing word told them apart
    assert name_score("Submit report", "Submit reports later") == NONE
    assert name_score("Submit report", "Submit draft") == NONE


def test_a_shorter_look_alike_is_refused_and_a_longer_one_loses_to_the_exact_name() -> None:
    expect = {"tag": "a", "role": "link", "name": "Add group", "text": "Add group", "href": "/groups/add"}
    sidebar = {"tag": "a", "role": "link", "name": "Add", "attrs": {"href": "/groups/add?quick=1"}}
    assert agrees(expect, sidebar, {"css"}).score == NONE
    real = {"tag": "a", "role": "link", "name": "Add group", "attrs": {"href": "/groups/add"}}
    longer = {"tag": "a", "role": "link", "name": "Add group from a file", "attrs": {}}
    picked = choose(expect, [Candidate(1, {"text~"}, longer), Candidate(2, {"role", "css"}, real)], [])
    assert picked.candidate is not None and picked.candidate.identity == 2


def test_an_element_found_only_by_its_place_on_the_page_is_never_taken() -> None:
    """A CSS or XPath path says where an element sat, not what it is: the
    second card of a list in another order, a page under a closing dialog's
    cover (where a role's locator finds nothing) — halt, never act."""
    expect = {"tag": "button", "role": "button", "name": "Rename"}
    same_looks = {"tag": "button", "role": "button", "name": "Rename"}
    alone = choose(expect, [Candidate(1, {"css", "xpath"}, same_looks)], [])
    assert alone.candidate is None and "found only by where it sat" in alone.reason
    told = choose(expect, [Candidate(1, {"role", "css"}, same_looks)], [])
    assert told.candidate is not None
    twins = choose(expect, [Candidate(1, {"role"}, same_looks), Candidate(2, {"css"}, dict(same_looks))], ["role"])
    assert twins.candidate is None and "ambiguous" in twins.reason  # a look-alike seen only by place still ties


def test_a_control_in_every_card_is_known_by_its_cards_name() -> None:
    expect = {"tag": "button", "role": "button", "icon": {"symbol": "#pen"},
              "item": {"tag": "div", "name": "Bravo"}}

    def icon_on(card: str | None) -> dict[str, Any]:
        return {"tag": "button", "role": "button", "icon": {"symbol": "#pen"},
                **({"item": {"tag": "div", "name": card}} if card else {})}

    assert agrees(expect, icon_on("bravo"), {"role"}).score == EXACT
    other = agrees(expect, icon_on("Charlie"), {"role"})
    assert other.score == NONE and other.reason == "is on the card 'Charlie', expected on the card 'Bravo'"
    assert agrees(expect, icon_on("Bravo copy"), {"role"}).score == NONE  # another record, not a renamed one
    assert agrees(expect, icon_on(None), {"role"}).score == NONE  # no record to tell it by: halt
    picked = choose(expect, [Candidate(i, {"role"}, icon_on(n)) for i, n in enumerate(["Charlie", "Bravo", "Alpha"])],
                    ["role"])
    assert picked.candidate is not None and picked.candidate.identity == 1


def test_an_option_of_the_other_list_is_not_the_demonstrated_option() -> None:
    expect = {"tag": "option", "role": "option", "name": "Can approve reports", "container": LIST_FROM}
    assert agrees(expect, option("Can approve reports", LIST_FROM), {"role"}).score == EXACT
    verdict = agrees(expect, option("Can approve reports", LIST_TO), {"role", "css"})
    assert verdict.score == NONE and "Chosen permissions" in verdict.reason


def test_renamed_container_counts_only_with_a_stable_identity() -> None:
    expect = {"tag": "a", "role": "tab", "name": "Reports", "href": "/dashboard/reports",
              "container": {"role": "tablist", "name": "Dashboard"}}
    translated = {"tag": "a", "role": "tab", "name": "Berichte", "attrs": {"href": "/dashboard/reports"},
                  "containers": [{"role": "tablist", "name": "Übersicht"}]}
    assert agrees(expect, translated, {"attr:href"}).score > NONE  # the same address vouches
    elsewhere = {**translated, "attrs": {"href": "/elsewhere"}}
    assert agrees(expect, elsewhere, {"css"}).score == NONE


def test_a_link_must_lead_where_it_led_unless_an_id_vouches() -> None:
    expect = {"tag": "a", "role": "link", "name": "New report", "href": "/reports/new"}
    other = {"tag": "a", "role": "link", "name": "New report", "attrs": {"href": "/reports/new?template=1"}}
    assert agrees(expect, other, {"role"}).score == NONE
    assert agrees(expect, other, {"role", "id"}).score > NONE


def test_a_link_that_became_a_button_needs_its_exact_name() -> None:
    expect = {"tag": "a", "role": "link", "name": "Add group", "href": "/groups/add"}
    button = {"tag": "button", "role": "button", "name": "ADD GROUP", "attrs": {"type": "button"}}
    assert agrees(expect, button, {"text"}).score == EXACT
    assert agrees(expect, {**button, "name": "Add"}, {"text"}).score == NONE
    assert agrees(expect, {**button, "role": "checkbox", "tag": "input"}, {"text"}).score == NONE


def test_relabelled_field_is_accepted_only_through_a_stable_identity() -> None:
    field = {"tag": "input", "role": "textbox", "label": "Amount", "name": "Amount"}
    renamed = {"tag": "input", "role": "textbox", "label": "Sum", "name": "Sum"}
    assert agrees(field, renamed, {"id"}).score > NONE
    assert agrees(field, renamed, {"attr:name"}).score > NONE
    assert agrees(field, renamed, {"xpath", "css"}).score == NONE


def test_position_never_breaks_a_tie_but_a_stable_id_does() -> None:
    expect = {"role": "button", "name": "Save"}
    same = {"role": "button", "name": "Save"}
    tie = choose(expect, [Candidate(1, {"css", "role"}, same), Candidate(2, {"xpath", "role"}, same)], [])
    assert tie.candidate is None and "ambiguous" in tie.reason
    by_id = choose(expect, [Candidate(1, {"role", "id"}, same), Candidate(2, {"role", "css"}, same)], [])
    assert by_id.candidate is not None and by_id.candidate.identity == 1


def test_nothing_found_and_only_refusals_halt_with_the_reason() -> None:
    expect = {"role": "button", "name": "Save"}
    assert "not found" in choose(expect, [], []).reason
    assert "ambiguous" in choose(expect, [], ["role"]).reason
    refused = choose(expect, [Candidate(1, {"css"}, {"role": "button", "name": "Cancel"})], [])
    assert refused.candidate is None and "Cancel" in refused.reason


# -- controls that changed tag across an upgrade, and icon-only controls (issue 23) --

FORM_COLLECTION = {"role": "form", "name": "Collection"}
FORM_SEARCH = {"role": "form", "name": "Search"}
FOOTER_FORM = {"role": "form", "name": "Post"}
MORE = {"symbol": "#icon-more", "title": None, "classes": []}


def submit_input() -> dict:
    return {"tag": "input", "role": "button", "name": "Create", "type": "submit", "container": FORM_COLLECTION}


def test_a_submit_input_that_became_a_button_with_the_same_name_in_the_same_form_is_the_control() -> None:
    button = {"tag": "button", "role": "button", "name": "Create", "text": "Create",
              "attrs": {"type": "submit"}, "containers": [FORM_COLLECTION]}
    assert agrees(submit_input(), button, {"role"}).score == EXACT
    untyped = {**button, "attrs": {}}  # <button>Create</button>: submit by default
    assert agrees(submit_input(), untyped, {"role"}).score == EXACT
    back = {"tag": "input", "role": "button", "name": "Create", "attrs": {"type": "submit"},
            "containers": [FORM_COLLECTION]}
    expect_button = {"tag": "button", "role": "button", "name": "Create", "container": FORM_COLLECTION}
    assert agrees(expect_button, back, {"role"}).score == EXACT  # and back again


def test_a_retagged_control_needs_the_exact_name_the_same_role_and_the_same_form() -> None:
    button = {"tag": "button", "role": "button", "name": "Create", "attrs": {}, "containers": [FORM_COLLECTION]}
    assert agrees(submit_input(), {**button, "name": "Create draft"}, {"role"}).score == NONE
    assert agrees(submit_input(), {**button, "containers": [FORM_SEARCH]}, {"role"}).score == NONE
    link = {"tag": "a", "role": "link", "name": "Create", "attrs": {"href": "/x"}, "containers": [FORM_COLLECTION]}
    assert agrees(submit_input(), link, {"text"}).score == EXACT  # a link ↔ button swap, exact name
    menu = {"tag": "div", "role": "menuitem", "name": "Create", "attrs": {}, "containers": [FORM_COLLECTION]}
    assert agrees(submit_input(), menu, {"text"}).score == NONE


def test_of_two_create_buttons_only_the_one_in_the_demonstrated_form_is_chosen() -> None:
    mine = {"tag": "button", "role": "button", "name": "Create", "attrs": {}, "containers": [FORM_COLLECTION]}
    other = {"tag": "button", "role": "button", "name": "Create", "attrs": {}, "containers": [FORM_SEARCH]}
    picked = choose(submit_input(), [Candidate(1, {"role"}, other), Candidate(2, {"role"}, mine)], ["role"])
    assert picked.candidate is not None and picked.candidate.identity == 2
    twins = choose(submit_input(), [Candidate(1, {"role"}, mine), Candidate(2, {"css"}, dict(mine))], ["role"])
    assert twins.candidate is None and "ambiguous" in twins.reason


def test_a_link_that_became_a_button_with_more_words_in_the_same_place_is_accepted_below_an_exact_match() -> None:
    main = {"role": "main"}
    expect = {"tag": "a", "role": "link", "name": "Add collection", "href": "/collections/new", "container": main}
    longer = {"tag": "button", "role": "button", "name": "Add new collection", "attrs": {"type": "button"},
              "containers": [main]}
    verdict = agrees(expect, longer, {"role~"})
    assert NONE < verdict.score < GAINED
    exact = {"tag": "a", "role": "link", "name": "Add collection", "attrs": {"href": "/collections/new"},
             "containers": [main]}
    picked = choose(expect, [Candidate(1, {"role~"}, longer), Candidate(2, {"role", "css"}, exact)], [])
    assert picked.candidate is not None and picked.candidate.identity == 2
    placed = choose(expect, [Candidate(1, {"role~"}, longer), Candidate(2, {"css"}, exact)], [])
    assert placed.candidate is None  # the better one seen only by its place: not the lesser one either
    gained_link = {**exact, "name": "Add a collection", "attrs": {"href": "/collections/new"}}
    picked = choose(expect, [Candidate(1, {"role~"}, longer), Candidate(2, {"role~"}, gained_link)], [])
    assert picked.candidate is not None and picked.candidate.identity == 2  # the same role agrees better


def test_a_link_that_became_a_button_and_lost_words_or_moved_is_refused() -> None:
    main, aside = {"role": "main"}, {"role": "complementary"}
    expect = {"tag": "a", "role": "link", "name": "Add collection", "href": "/collections/new", "container": main}
    lost = {"tag": "button", "role": "button", "name": "Add", "attrs": {}, "containers": [main]}
    assert agrees(expect, lost, {"role~"}).score == NONE
    moved = {"tag": "button", "role": "button", "name": "Add new collection", "attrs": {}, "containers": [aside]}
    assert agrees(expect, moved, {"role~"}).score == NONE
    nowhere = {k: v for k, v in expect.items() if k != "container"}  # no place demonstrated: no gained swap
    assert agrees(nowhere, {**lost, "name": "Add new collection"}, {"role~"}).score == NONE


def icon_control(symbol: str | None, name: str | None = None, tag: str = "div", role: str | None = None,
                 box: dict = FOOTER_FORM, **icon) -> dict:
    return {"tag": tag, "role": role, "name": name, "text": name, "attrs": {},
            "icon": {"symbol": symbol, "title": None, "classes": [], **icon}, "containers": [box]}


def icon_expect() -> dict:
    return {"tag": "div", "role": None, "name": None, "text": None, "icon": MORE, "container": FOOTER_FORM}


def test_an_icon_only_toggle_that_became_a_named_button_is_found_by_its_icon_and_place() -> None:
    same = icon_control("#icon-more")
    assert agrees(icon_expect(), same, {"css"}).score == EXACT
    named = icon_control("#icon-more", "More actions", tag="button", role="button")
    assert agrees(icon_expect(), named, {"css~"}).score == GAINED
    picked = choose(icon_expect(), [Candidate(1, {"css~"}, named),
                                    Candidate(2, {"css~"}, icon_control("#icon-share"))], ["css~"])
    assert picked.candidate is not None and picked.candidate.identity == 1


def test_another_icon_in_the_same_footer_or_the_same_icon_elsewhere_is_refused() -> None:
    share = icon_control("#icon-share")
    verdict = agrees(icon_expect(), share, {"css"})
    assert verdict.score == NONE and "another icon" in verdict.reason
    assert agrees(icon_expect(), icon_control("#icon-more", box={"role": "banner"}), {"css"}).score == NONE
    assert agrees(icon_expect(), {**share, "icon": None}, {"css"}).score == NONE  # no icon at all
    checkbox = icon_control("#icon-more", role="checkbox", tag="input")
    assert agrees({**icon_expect(), "role": "button"}, checkbox, {"css"}).score == NONE


def test_icon_identity_by_title_or_a_naming_class_token_never_a_generic_one() -> None:
    fa = {**icon_expect(), "icon": {"symbol": None, "title": None, "classes": ["fa", "fa-solid", "fa-ellipsis"]}}
    same = icon_control(None, classes=["fa-solid", "fa-ellipsis", "fa-fw"])
    assert agrees(fa, same, {"css"}).score == EXACT
    other = icon_control(None, classes=["fa", "fa-solid", "fa-share"])
    assert agrees(fa, other, {"css"}).score == NONE  # only the set's own classes in common
    titled = {**icon_expect(), "icon": {"symbol": None, "title": "More", "classes": []}}
    assert agrees(titled, icon_control(None, title="more"), {"css"}).score == EXACT
    assert agrees(titled, icon_control(None, title="Share"), {"css"}).score == NONE
    both = icon_control("#icon-share", classes=["icon-more"])  # a symbol decides before classes
    assert agrees({**icon_expect(), "icon": {**MORE, "classes": ["icon-more"]}}, both, {"css"}).score == NONE


def test_two_matching_icons_in_the_same_footer_are_ambiguous() -> None:
    twins = [Candidate(1, {"css~"}, icon_control("#icon-more")), Candidate(2, {"css~"}, icon_control("#icon-more"))]
    assert "ambiguous" in choose(icon_expect(), twins, ["css~"]).reason


def test_a_class_the_author_gave_breaks_a_tie_only_when_one_element_still_has_it() -> None:
    """Django 4.2 → 5.2: the "Choose" link became the button "Choose selected
    permissions" (class selector-add), beside "Choose all permissions"
    (selector-chooseall): both kept the word, one kept the class."""
    form = {"role": "form", "name": "Add group"}
    expect = {"tag": "a", "role": "link", "name": "Choose", "classes": ["selector-add"], "container": form}
    add = {"tag": "button", "role": "button", "name": "Choose selected permissions", "classes": ["selector-add"],
           "containers": [form]}
    add_all = dict(add, name="Choose all permissions", classes=["selector-chooseall"])
    picked = choose(expect, [Candidate(1, {"role~"}, add_all), Candidate(2, {"role~"}, add)], ["role~"])
    assert picked.candidate is not None and picked.candidate.identity == 2
    # both still carry it, or neither was taught with one: a tie stays a halt
    twin = dict(add, name="Choose selected groups")
    assert choose(expect, [Candidate(1, {"role~"}, twin), Candidate(2, {"role~"}, add)], []).candidate is None
    bare = {k: v for k, v in expect.items() if k != "classes"}
    assert choose(bare, [Candidate(1, {"role~"}, add_all), Candidate(2, {"role~"}, add)], []).candidate is None


def test_a_control_that_left_an_unnamed_table_for_a_section_of_the_same_page_is_the_same() -> None:
    """An unnamed table only laid the page out; a named list, form or
    landmark is still a place the control must be in."""
    expect = {"tag": "button", "role": "button", "name": "Save", "container": {"role": "table"}}
    moved = {"tag": "button", "role": "button", "name": "Save", "containers": [{"role": "region", "name": "Actions"}]}
    assert agrees(expect, moved, {"role"}).score == EXACT
    named = {**expect, "container": {"role": "table", "name": "Invoices"}}
    assert agrees(named, moved, {"role"}).score == NONE
    in_a_form = {**expect, "container": {"role": "form", "name": "Billing"}}
    assert agrees(in_a_form, moved, {"role"}).score == NONE


def test_a_changed_step_says_in_words_what_differs_and_what_still_agreed() -> None:
    """The question a changed step asks carries its evidence: expected vs
    found, and what vouched (run page, Approvals, the CLI prompt and MCP all
    show the question's note)."""
    form = {"role": "form", "name": "Report"}
    expect = {"tag": "input", "role": "textbox", "name": "Amount", "label": "Amount", "container": form}
    found = {"tag": "input", "role": "textbox", "name": "Total amount", "label": "Total amount",
             "containers": [form]}
    assert what_changed(expect, found, {"id", "role~"}) == (
        "its name 'Amount' is now 'Total amount' — still the same: its id, the form 'Report'")
    link = {"tag": "a", "role": "link", "name": "Add group", "href": "/groups/add", "container": {"role": "main"}}
    button = {"tag": "button", "role": "button", "name": "Add group", "containers": [{"role": "main"}]}
    assert what_changed(link, button, {"text~"}) == (
        "it was a <a>, now a <button>; its role link is now button; it was found by a loosened name"
        " — still the same: the page's main area")
    unnamed = {**expect, "container": {"role": "form"}}  # a container with no name is said by what it is
    assert what_changed(unnamed, {**found, "containers": [{"role": "form"}]}, {"id"}).endswith(
        "— still the same: its id, a form around it")
    moved = {**found, "name": "Amount", "label": "Amount", "containers": [{"role": "dialog", "name": "Help"}]}
    assert what_changed(expect, moved, {"test_id"}) == (
        "it is in the dialog 'Help', expected in the form 'Report' — still the same: its test id")
    assert what_changed(expect, {**found, "name": "Amount", "label": "Amount"}, {"role"}) == ""
