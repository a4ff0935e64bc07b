"""A schedule as data: when it fires, what it does. Pure functions; the
trigger is APScheduler's own, so what ``teachd schedule list`` says is
exactly what the daemon does."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from teachd.core.errors import BadInput

if TYPE_CHECKING:
    from apscheduler.triggers.base import BaseTrigger

KINDS = ("run", "check")
_EVERY = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
MIN_EVERY = 60  # seconds: a schedule is for people's tasks, not a busy loop
DEFAULT_TIMEOUT = 3600  # seconds a scheduled run waits for its approvals and secrets


def parse_every(text: str) -> int:
    """``6h`` → 21600 seconds."""
    m = _EVERY.match(text or "")
    if not m:
        raise BadInput(f"--every takes a number and a unit (s, m, h, d, w), like 6h; not {text!r}")
    seconds = int(m.group(1)) * _UNIT[m.group(2)]
    if seconds < MIN_EVERY:
        raise BadInput("--every must be at least 1m")
    return seconds


def every_text(seconds: int) -> str:
    for unit in ("w", "d", "h", "m"):
        if seconds % _UNIT[unit] == 0:
            return f"{seconds // _UNIT[unit]}{unit}"
    return f"{seconds}s"


@dataclass(frozen=True)
class Spec:
    slug: str
    kind: str  # run | check
    cron: str | None = None
    every_s: int | None = None
    params: dict[str, str] = field(default_factory=dict)
    profile: str | None = None
    timeout_s: int = DEFAULT_TIMEOUT
    start_url: str | None = None  # where the run begins instead of the demonstrated first page

    def check(self) -> None:
        if self.kind not in KINDS:
            raise BadInput(f"a schedule is a run or a check, not {self.kind!r}")
        if (self.cron is None) == (self.every_s is None):
            raise BadInput("give one of --cron \"MIN HOUR DOM MON DOW\" or --every 6h")
        if self.kind == "check" and self.params:
            raise BadInput("a health check takes no parameters: it types nothing")
        if self.start_url is not None and not self.start_url.lower().startswith(("http://", "https://")):
            raise BadInput("the start address must be a web address (http:// or https://)")
        trigger(self)  # a cron expression APScheduler would refuse is refused now

    @property
    def when(self) -> str:
        return f"cron {self.cron}" if self.cron else f"every {every_text(int(self.every_s or 0))}"


_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")  # crontab's numbering: 0 (and 7) is Sunday


def _weekdays(field_: str) -> str:
    """A crontab day-of-week field as day names. APScheduler numbers days from
    Monday = 0, crontab from Sunday = 0: "1" must mean Monday, as in cron."""
    if field_ == "*":
        return "*"
    days: set[int] = set()
    for part in field_.lower().split(","):
        rng, _, step_text = part.partition("/")
        step = int(step_text) if step_text.isdigit() and int(step_text) > 0 else 1
        if step_text and not step_text.isdigit():
            raise BadInput(f"day of week {field_!r}: bad step {step_text!r}")

        def day(tok: str) -> int:
            if tok.isdigit() and int(tok) <= 7:
                return int(tok) % 7 if tok != "7" else 7
            if tok[:3] in _DAYS:
                return _DAYS.index(tok[:3])
            raise BadInput(f"day of week {field_!r}: {tok!r} is not a day (0-7 or sun-sat)")

        if rng == "*":
            lo, hi = 0, 6
        elif "-" in rng:
            a, b = rng.split("-", 1)
            lo, hi = day(a), day(b)
        else:
            lo = hi = day(rng)
        if lo > hi:
            raise BadInput(f"day of week {field_!r}: a range runs forward")
        days.update(d % 7 for d in range(lo, hi + 1, step))
    return "*" if len(days) == 7 else ",".join(_DAYS[d] for d in sorted(days))


def trigger(spec: Spec, start: datetime | None = None, tz: Any = None) -> BaseTrigger:
    from apscheduler.triggers.cron import CronTrigger  # here, not at import: `teachd --help` stays quick
    from apscheduler.triggers.interval import IntervalTrigger

    if spec.cron is not None:
        fields = spec.cron.split()
        if len(fields) != 5:
            raise BadInput(f"--cron takes five fields (minute hour day month weekday), not {spec.cron!r}")
        minute, hour, dom, month, dow = fields
        try:
            return CronTrigger(minute=minute, hour=hour, day=dom, month=month, day_of_week=_weekdays(dow),
                               timezone=tz)
        except ValueError as exc:
            raise BadInput(f"--cron {spec.cron!r}: {exc}") from None
    return IntervalTrigger(seconds=int(spec.every_s or 0), start_date=start, timezone=tz)


def fire_times(trig: BaseTrigger, since: datetime, until: datetime, most: int = 10_000) -> list[datetime]:
    """The times ``trig`` fires after ``since`` and no later than ``until``."""
    times: list[datetime] = []
    t = trig.get_next_fire_time(None, since + timedelta(seconds=1))
    while t is not None and t <= until and len(times) < most:
        times.append(t)
        t = trig.get_next_fire_time(t, t + timedelta(seconds=1))
    return times


def missed_note(trig: BaseTrigger, since: datetime, now: datetime) -> str:
    """Runs missed while no daemon ran, coalesced into the one firing now."""
    n = len(fire_times(trig, since, now)) - 1
    return f"missed {n} run(s) while no daemon ran; ran once" if n > 0 else ""


def spec_from(slug: str, *, cron: str | None = None, every: str | None = None,
              params: dict[str, str] | None = None, profile: str | None = None, check: bool = False,
              timeout: float = DEFAULT_TIMEOUT, profiles: Collection[str] = (),
              start_url: str | None = None) -> Spec:
    """A schedule from what the person typed (the CLI and the web UI alike);
    ``profiles``: the ones config.yaml defines."""
    if timeout <= 0:
        raise BadInput("the timeout is a positive number of seconds")
    if profile and profile not in profiles:
        raise BadInput(f"no profile {profile!r} in config.yaml")
    spec = Spec(slug, "check" if check else "run", cron or None, parse_every(every) if every else None,
                dict(params or {}), profile or None, int(timeout), start_url or None)
    spec.check()
    return spec
