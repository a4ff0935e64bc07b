"""The one exception tree of teachd, and the one place where the recorder's
and the compiler's failures join it.

Every failure a user can cause is a ``TeachdError``; the CLI turns it into one
line on stderr and an exit code (and, once the daemon exists, an HTTP status). Each exit
code means one thing. Anything else escaping is a bug and is reported as such.

    TeachdError                     (never raised bare)
    ├── Failed              exit 1, HTTP 500   the work ran and did not succeed (recorder, demo)
    ├── BadInput            exit 2, HTTP 400   a value given is wrong: a URL, a parameter, config.yaml
    ├── NotFound            exit 3, HTTP 404   unknown slug, file, version, run, rule
    ├── InvalidSkill        exit 4, HTTP 422   malformed SKILL.md, envelope or replay plan
    ├── InvalidRecording    exit 4, HTTP 422   a recording that cannot be compiled
    ├── LimitExceeded       exit 4, HTTP 413   too many / too large / binary files
    │   └── TooMany         exit 4, HTTP 429   too many open requests of one person (secrets asked)
    ├── UnsafePath          exit 4, HTTP 400   traversal, absolute, symlink escape
    ├── Conflict            exit 5, HTTP 409   slug exists, disabled skill loaded, a recording running
    ├── KeyProblem          exit 6, HTTP 500   missing, wrong or exposed key
    ├── PolicyStop          exit 7, HTTP 403   approval denied, out of scope, secret missing
    └── Unavailable         exit 69, HTTP 503  the machine lacks something: a display, Chromium, Xvfb
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class TeachdError(Exception):
    exit_code = 1
    http_status = 400


class Failed(TeachdError):
    exit_code = 1
    http_status = 500


class BadInput(TeachdError):
    exit_code = 2
    http_status = 400


class NotFound(TeachdError):
    exit_code = 3
    http_status = 404


class InvalidSkill(TeachdError):
    exit_code = 4
    http_status = 422


class InvalidRecording(TeachdError):
    exit_code = 4
    http_status = 422


class LimitExceeded(TeachdError):
    exit_code = 4
    http_status = 413


class TooMany(LimitExceeded):
    """Too many things open at once for one person: answer or let some go first."""

    http_status = 429


class UnsafePath(TeachdError):
    exit_code = 4
    http_status = 400


class Conflict(TeachdError):
    exit_code = 5
    http_status = 409


class KeyProblem(TeachdError):
    exit_code = 6
    http_status = 500


class PolicyStop(TeachdError):
    exit_code = 7
    http_status = 403


class Unavailable(TeachdError):
    exit_code = 69  # EX_UNAVAILABLE
    http_status = 503

    def __init__(self, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after  # seconds: a passing outage (the store restarting): Retry-After


def http_headers(exc: TeachdError) -> dict[str, str]:
    """What an HTTP answer carries beside its status: Retry-After for a passing outage."""
    after = getattr(exc, "retry_after", None)
    return {"Retry-After": str(after)} if after else {}


def as_teachd_error(exc: BaseException) -> TeachdError | None:
    """The recorder's or compiler's failure as a teachd error; None for anything
    else. Imports lazily: only a failure pays for them."""
    from compiler.plan import PlanError
    from compiler.recording import RecordingError
    from recorder.errors import BrowserMissing, NoDisplay, RecorderError

    table: tuple[tuple[type[BaseException], type[TeachdError]], ...] = (
        (BrowserMissing, Unavailable), (NoDisplay, Unavailable), (RecorderError, Failed),
        (RecordingError, InvalidRecording), (PlanError, InvalidSkill),
    )
    for source, target in table:
        if isinstance(exc, source):
            return target(str(exc))
    return None


@contextlib.contextmanager
def component_errors() -> Iterator[None]:
    """Around a boundary (a CLI command, an API call): component failures come
    out as teachd errors, everything else as it was."""
    try:
        yield
    except TeachdError:
        raise
    except Exception as exc:
        mapped = as_teachd_error(exc)
        if mapped is None:
            raise
        raise mapped from None
