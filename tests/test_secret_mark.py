""""Mark next field secret" is the recorder's to keep (recorder.browser):
the field typed into while it is armed is masked even where the page had
not heard of the mark yet — a new document's bar learns its state a round
trip after load, and on a loaded machine a person types first. Seen in CI:
the Teach page's mark, a navigation, a field typed into at once."""

from __future__ import annotations

import json
from pathlib import Path

from recorder.bar import Bar
from recorder.browser import BrowserCapture
from recorder.writer import EventWriter

TYPED = "Private trip to Lyon"


def _capture(folder: Path) -> BrowserCapture:
    writer = EventWriter(folder)
    return BrowserCapture(writer=writer, headless=True, pages=[], bar=Bar("Teach", writer))


def test_a_field_typed_into_while_armed_is_masked_though_its_page_had_not_heard_and_only_that_one(
        tmp_path: Path) -> None:
    capture = _capture(tmp_path)
    say = lambda data: capture.on_emit({"page": None}, data)  # noqa: E731 — a page's report, as the binding gets it
    assert say({"kind": "mark"})["armed"] is True  # from the Teach page: the bar in no page knew yet
    answer = say({"kind": "input", "target": {"tag": "input", "id": "description"}, "value": TYPED})
    assert answer["masked_field"] is True and answer["armed"] is False  # the page marks that field, disarms
    # the new page's arm came late and marked the next field it focused: the recorder takes it back
    assert say({"kind": "marked", "armed": True})["unmark"] is True
    say({"kind": "input", "target": {"tag": "input", "id": "amount"}, "value": "12.00"})
    # the hotkey and a bar click on a focused field still mark it, armed or not
    assert "unmark" not in say({"kind": "marked"})
    capture.writer.close()
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    inputs = {e["target"]["id"]: e for e in events if e["type"] == "input"}
    assert inputs["description"].get("masked") is True and "value" not in inputs["description"]
    assert inputs["amount"].get("value") == "12.00" and not inputs["amount"].get("masked")
    assert TYPED.encode() not in (tmp_path / "events.jsonl").read_bytes()
