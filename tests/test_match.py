"""The matcher's rules, as pure functions: what counts as the demonstrated
element, and when the only honest answer is to halt."""

from __future__ import annotations

from teachd.runner.match import EXACT, GAINED, NONE, Candidate, agrees, choose, name_score

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
    picked = choose(expect, [Candidate(1, {"text~"}, longer), Candidate(2, {"css"}, real)], [])
    assert picked.candidate is not None and picked.candidate.identity == 2


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
