"""What a desktop app showed before and after the person acted in it
(recorder.app_text), and how a replay tells its end from the
demonstration's (teachd.runner.desktop ``differs``): plain data, a reader
passed in for the accessibility tree."""

from __future__ import annotations

from typing import Any

from recorder.app_text import AppTexts
from teachd.runner.desktop import differs

DISPLAY = ("text", (), 0)
KEY_LABEL = ("label", (("push button", "7"),), 0)


class App:
    """An app's window as AT-SPI would read it: texts by place, or gone."""

    def __init__(self) -> None:
        self.texts: dict[Any, str] | None = {DISPLAY: "0", KEY_LABEL: "7"}

    def read(self, pid: int, title: str | None) -> tuple[str, dict[Any, str]] | None:
        return None if self.texts is None else ("galculator", dict(self.texts))


def first_seen(app: App, title: str = "galculator") -> AppTexts:
    """The app's texts read at first sight (done before the test changes them)."""
    seen = AppTexts(app.read)
    seen.first(7, title)
    seen.drain()
    return seen


def test_the_texts_that_changed_between_first_sight_and_the_end_are_the_effect() -> None:
    app = App()
    seen = AppTexts(app.read)
    seen.first(7, "galculator")
    seen.after(7, "galculator", "galculator galculator")
    seen.drain()
    app.texts = {DISPLAY: "9", KEY_LABEL: "7"}
    seen.after(7, "galculator", "galculator galculator")
    assert seen.changed() == [{"window_class": "galculator galculator",
                               "texts": [{"role": "text", "path": [], "n": 0, "text": "9"}]}]


def test_an_app_gone_before_its_last_read_settled_leaves_no_check_rather_than_a_stale_one() -> None:
    app = App()
    seen = first_seen(app)
    app.texts = {DISPLAY: "7", KEY_LABEL: "7"}
    seen.after(7, "galculator", "galculator galculator")
    assert seen.changed()[0]["texts"][0]["text"] == "7"  # the app still up: as it is now
    app.texts = None  # the "=" pressed, and the app closed before its display could be read
    seen.after(7, "galculator", "galculator galculator")
    assert seen.changed() == []


def test_a_text_shaped_like_a_secret_is_never_kept() -> None:
    app = App()
    seen = first_seen(app, "a")
    app.texts = {DISPLAY: "ghp_1A2b3C4d5E6f7G8h9I0jK1l2M3n4O5p6Q7r8", KEY_LABEL: "7"}
    seen.after(7, "a", "x x")
    assert seen.changed() == []


def test_what_a_widget_marked_secret_shows_is_never_kept() -> None:
    """A field the person marked secret (Ctrl+Alt+S) whose value has no
    secret's shape: its text is not the app's end, not on disk."""
    app = App()
    seen = first_seen(app, "a")
    app.texts = {DISPLAY: "my street name", KEY_LABEL: "7"}
    seen.hide(7, "text", (("frame", "a"),))
    seen.after(7, "a", "x x")
    assert seen.changed() == []


def test_an_app_never_seen_before_the_person_acted_has_no_end_to_compare() -> None:
    app = App()
    seen = AppTexts(app.read)
    seen.after(7, "galculator", "galculator galculator")  # no first sight
    assert seen.changed() == []


def test_the_replay_says_what_the_app_shows_where_the_demonstration_ended_otherwise() -> None:
    shows = [{"role": "text", "path": [], "n": 0, "text": "9"}]
    assert differs({DISPLAY: "9"}, shows, "galculator galculator") == []
    assert differs({DISPLAY: "19"}, shows, "galculator galculator") == [
        "the Galculator text field shows '19' where the demonstration ended on '9'"]
    assert differs({}, shows, "galculator galculator") == [
        "the Galculator text field that showed '9' is not there"]
    assert differs(None, shows, "galculator galculator") == [
        "the Galculator window this run acted in cannot be read: its end is not confirmed"]
