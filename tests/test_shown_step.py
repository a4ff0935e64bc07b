"""A step shown on its run's picture, where the person or the page gets it
wrong (teachd.runner.shown, ``Replayer._show``): the run goes on only on
what the person saw and on what can take the step, and the skill keeps a
shown step only once the whole step held.

Each run replays the sample task on the app whose "Submit report" became
"Send for approval" (no id left), in process, with a person who points on
the page the run shows them: where an element is on the run's own page is
where they would click on its picture."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import teachd.runner.run as run_module
from teachd.config import settings_from_env
from teachd.demo.sampleapp import SampleApp, Variant
from teachd.runner.gate import Answer, Request
from teachd.runner.policy import Who
from teachd.runner.run import RunOptions, RunOutcome, run_skill
from teachd.store import open_store
from teachd.store.runs import RunStore
from tests.drift_suite import SLUG
from tests.sample_task import PASSWORD


class Person:
    """Allows the run's plan; asked where, clicks where ``look`` finds it on the page the run shows."""

    points = True

    def __init__(self, look: Callable[[Any, int], tuple[float, float]]) -> None:
        self.look, self.page, self.asked = look, None, []

    def ask(self, request: Request) -> Answer:
        self.asked.append(request)
        if not request.show:
            return Answer(request.id, True, run=request.offers_run)
        return Answer(request.id, True, point=self.look(self.page, len(self.asked)))


def centre(page: Any, locator: Any) -> tuple[float, float]:
    box = locator.bounding_box()
    size = page.viewport_size
    return (box["x"] + box["width"] / 2) / size["width"], (box["y"] + box["height"] / 2) / size["height"]


@pytest.fixture
def replay(taught: tuple[dict[str, str], int], monkeypatch: pytest.MonkeyPatch) -> Iterator[
        Callable[[Person], tuple[RunOutcome, SampleApp, int, int]]]:
    """Runs the taught skill for ``person`` on the relabelled app: (outcome, the app, the
    skill's version before, after)."""
    env, port = taught
    settings = settings_from_env(env)
    opened = run_module.open_chromium

    def go(person: Person) -> tuple[RunOutcome, SampleApp, int, int]:
        @contextlib.contextmanager
        def watched(opts: Any, policy: Any) -> Iterator[Any]:
            with opened(opts, policy) as (context, page):
                person.page = page  # what the run shows on its picture is this page
                yield context, page

        monkeypatch.setattr(run_module, "open_chromium", watched)
        store = open_store(settings)
        before = store.get(SLUG).current_version
        with SampleApp(password=PASSWORD, port=port, variant=Variant.named("submit_relabelled")) as app:
            out = run_skill(RunStore(store), frozenset(), SLUG, person, lambda _name: PASSWORD,
                            RunOptions(headless=True, environ={**os.environ, **env}, step_timeout=5),
                            Who.of(settings, store.owner))
            return out, app, before, open_store(settings).get(SLUG).current_version

    yield go


def test_a_picture_the_page_has_moved_on_from_is_asked_again_and_the_step_done_on_the_fresh_one(replay) -> None:
    """While the person looks, the app pushes the form down (a late
    banner): where they click on the old picture is now the receipt
    checkbox. Asked again on a fresh picture, they click the button."""

    def look(page: Any, asked: int) -> tuple[float, float]:
        button = centre(page, page.get_by_role("button", name="Send for approval"))
        if asked == 2:  # the first question where: the page moves after its picture was taken
            page.evaluate("() => { const d = document.createElement('div'); d.style.height = '120px';"
                          " d.textContent = 'Reports are reviewed within two days.';"
                          " document.querySelector('main').prepend(d); }")
        return button

    person = Person(look)
    out, app, before, after = replay(person)
    assert out.status == "success", out.message
    shows = [r for r in person.asked if r.show]
    assert len(shows) == 2 and "has changed there since its picture" in shows[1].action.note
    assert app.state.clicked().count("report.receipt") == 1  # as demonstrated: the receipt left ticked
    assert len(app.state.reports) == 1 and after == before + 1


def test_a_wrong_thing_shown_is_asked_again_and_a_step_that_did_not_hold_is_not_kept(replay) -> None:
    """The person points at the form's heading (no button), then at the
    Help link (a link for a button: it opens another page, and the step's
    page is not reached). The heading is refused and asked again; the link
    is clicked, the step halts, and the skill is unchanged."""

    def look(page: Any, asked: int) -> tuple[float, float]:
        if asked == 2:
            return centre(page, page.get_by_role("heading", name="New report"))
        return centre(page, page.get_by_role("link", name="Help"))

    person = Person(look)
    out, app, before, after = replay(person)
    shows = [r for r in person.asked if r.show]
    assert "is not a button like the one taught" in shows[1].action.note, shows[1].action.note
    assert out.status in ("failure", "partial") and "kept in the skill" not in out.message, out.message
    assert after == before and app.state.reports == []
