"""The sweep judges no worker dead until it has reached the store without a
gap for as long as a worker may be silent (queue/sweep.py ``Sweeper``): a
worker's heartbeats stop while PostgreSQL is away as surely as when it dies.
Here the store's answers and the clock are the test's; the judging (``sweep``)
is watched. The whole outage, with real workers, is in tests/test_queue.py."""

from __future__ import annotations

from typing import Any

import pytest

from teachd.queue import sweep as sweeping
from teachd.queue.sweep import STALLED_S, SWEEP_EVERY, Sweeper


class _Store:
    """A store whose database answers, or is away, as the test says."""

    def __init__(self) -> None:
        self.away = False
        self.db = self

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        if self.away:
            raise ConnectionError("the PostgreSQL store is unreachable")
        return [{"?column?": 1}]


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    calls: list[float] = []
    monkeypatch.setattr(sweeping, "sweep", lambda store, stalled_s, queue=None: calls.append(stalled_s) or [])
    return calls


def _looks(sweeper: Sweeper, now: list[float], until: float) -> None:
    """Looks every ``SWEEP_EVERY`` seconds until ``until``, as its thread would."""
    while now[0] + SWEEP_EVERY <= until:
        now[0] += SWEEP_EVERY
        sweeper.once()


def test_no_worker_is_judged_until_the_store_was_reached_for_a_workers_silence(judged: list[float]) -> None:
    now = [1000.0]
    store = _Store()
    sweeper = Sweeper(store, stalled_s=STALLED_S, clock=lambda: now[0])  # type: ignore[arg-type]
    _looks(sweeper, now, 1000.0 + STALLED_S)
    assert judged == []  # just started: the workers' beats are not known to be current
    _looks(sweeper, now, 1000.0 + STALLED_S + 3 * SWEEP_EVERY)
    assert judged, "reached long enough: dead workers are looked for"


def test_after_the_store_was_away_no_worker_is_judged_until_they_had_time_to_beat(judged: list[float]) -> None:
    now = [0.0]
    store = _Store()
    sweeper = Sweeper(store, clock=lambda: now[0])  # type: ignore[arg-type]
    _looks(sweeper, now, 60.0)
    before = len(judged)
    store.away = True
    _looks(sweeper, now, 60.0 + 2 * STALLED_S)  # every heartbeat is older than a dead worker's now
    assert len(judged) == before
    store.away = False
    _looks(sweeper, now, 60.0 + 3 * STALLED_S)
    assert len(judged) == before  # back, but the workers may not have beaten again yet
    _looks(sweeper, now, 60.0 + 4 * STALLED_S + SWEEP_EVERY)
    assert len(judged) > before


def test_a_look_that_hung_counts_as_the_store_away(judged: list[float]) -> None:
    now = [0.0]
    sweeper = Sweeper(_Store(), clock=lambda: now[0])  # type: ignore[arg-type]
    _looks(sweeper, now, 60.0)
    before = len(judged)
    now[0] += 2 * STALLED_S  # one look's query waited this long for an answer
    sweeper.once()
    assert len(judged) == before
    _looks(sweeper, now, now[0] + STALLED_S + 2 * SWEEP_EVERY)
    assert len(judged) > before
