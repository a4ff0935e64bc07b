"""What a page says in plain words: a schedule ("every Monday at 09:00"), a
duration ("1.2 s"), the evidence that found a step's target ("its label,
its id"). Pure functions, unit-tested (tests/test_web_ui.py)."""

from __future__ import annotations

DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_DAY_NAMES = {d[:3].lower(): i for i, d in enumerate(DAYS)}
_UNITS = ((7 * 86400, "week"), (86400, "day"), (3600, "hour"), (60, "minute"), (1, "second"))


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}{'' if n == 1 else 's'}"


def every_words(seconds: int) -> str:
    """An interval: ``every 6 hours``, ``every day``, ``every 1 hour 30 minutes``."""
    if seconds <= 0:
        return "never"
    parts: list[tuple[int, str]] = []
    left = seconds
    for size, unit in _UNITS:
        if left >= size:
            parts.append((left // size, unit))
            left %= size
    if len(parts) == 1 and parts[0][0] == 1:
        return f"every {parts[0][1]}"
    return "every " + " ".join(_count(n, unit) for n, unit in parts)


def _number(field: str, low: int, high: int) -> int | None:
    return int(field) if field.isdigit() and low <= int(field) <= high else None


def _day(field: str) -> int | None:
    """One crontab weekday (0 or 7 is Sunday; names too)."""
    if field.lower() in _DAY_NAMES:
        return _DAY_NAMES[field.lower()]
    n = _number(field, 0, 7)
    return None if n is None else n % 7


def _days(field: str) -> str | None:
    """A day-of-week field as words: ``Monday``, ``Monday and Friday``, ``weekday``."""
    if field in ("1-5", "mon-fri"):
        return "weekday (Monday to Friday)"
    if field in ("0,6", "6,0", "sat,sun", "sun,sat", "6,7", "6-7", "sat-sun"):
        return "Saturday and Sunday"
    days = [_day(part) for part in field.split(",")]
    if not days or any(d is None for d in days):
        return None
    names = [DAYS[d] for d in sorted(set(d for d in days if d is not None), key=lambda d: (d - 1) % 7)]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def cron_words(expr: str) -> str | None:
    """A cron expression (minute hour day-of-month month day-of-week) in
    words, or None when it is not one of the common shapes."""
    fields = expr.split()
    if len(fields) != 5:
        return None
    minute, hour, dom, month, dow = fields
    if month != "*":
        return None
    if (minute, hour, dom, dow) == ("*", "*", "*", "*"):
        return "every minute"
    if minute.startswith("*/") and (hour, dom, dow) == ("*", "*", "*"):
        n = _number(minute[2:], 1, 59)
        return None if n is None else ("every minute" if n == 1 else f"every {n} minutes")
    m = _number(minute, 0, 59)
    if m is None:
        return None
    if hour == "*" and (dom, dow) == ("*", "*"):
        return "every hour, on the hour" if m == 0 else f"every hour at {m} minutes past"
    if hour.startswith("*/") and (dom, dow) == ("*", "*"):
        n = _number(hour[2:], 1, 23)
        if n is None:
            return None
        past = "" if m == 0 else f" at {m} minutes past"
        return ("every hour" if n == 1 else f"every {n} hours") + past
    h = _number(hour, 0, 23)
    if h is None:
        return None
    at = f"at {h:02d}:{m:02d}"
    if dom == "*" and dow == "*":
        return f"every day {at}"
    if dom == "*":
        days = _days(dow.lower())
        return None if days is None else f"every {days} {at}"
    if dow == "*":
        d = _number(dom, 1, 31)
        return None if d is None else f"every month on the {_ordinal(d)} {at}"
    return None


def schedule_words(cron: str | None, every_s: int | None) -> tuple[str, bool]:
    """(the schedule in words, whether those are plain words); when they
    are not, the text is the cron expression itself, for the page to show
    as such with a note."""
    if cron:
        words = cron_words(cron.strip())
        return (words, True) if words else (cron.strip(), False)
    return every_words(int(every_s or 0)), True


def duration(ms: int | float | None) -> str:
    """A step's duration: ``850 ms``, ``1.2 s``, ``2 min 5 s``."""
    if ms is None:
        return ""
    if ms < 1000:
        return f"{int(ms)} ms"
    s = ms / 1000
    if s < 60:
        return f"{s:.1f} s"
    return f"{int(s // 60)} min {int(s % 60)} s"


_EVIDENCE = {"role": "its role and name", "label": "its label", "placeholder": "its placeholder",
             "text": "its text", "test_id": "its test id", "id": "its id", "attr:name": "its field name",
             "attr:value": "its value", "attr:href": "its address", "item": "its row or card",
             "heading": "the heading above it", "css": "its place on the page",
             "xpath": "its place on the page"}


def evidence_words(via: list[str]) -> str:
    """The locators that found a target (``role``, ``label~``, ``attr:name``)
    as a person reads them: "its label (loosely), its field name"."""
    said: list[str] = []
    for label in via:
        loose = label.endswith("~")
        base = label.rstrip("~")
        word = _EVIDENCE.get(base, base.replace("_", " ")) + (" (loosely)" if loose else "")
        if word not in said:
            said.append(word)
    return ", ".join(said)


_TOOLS = {"computer_act": "Act on the computer", "run_command": "Run a command",
          "delete_file": "Delete a file", "move_file": "Move a file",
          "message_agent": "Message another agent", "write_file": "Write a file"}


def tool_words(tool: str) -> str:
    """A gated tool as a person reads it ("Act on the computer"), never its
    name (``computer_act``: what a saved rule and a skill's approval list)."""
    return _TOOLS.get(tool, tool.replace("_", " ").capitalize())
