"""The one exception tree of teachd.

Every failure a user can cause is a ``TeachdError``; the CLI turns it into one
line on stderr and an exit code, the daemon into an HTTP status. Anything else
escaping is a bug and is reported as such.

    TeachdError                 exit 1, HTTP 400
    ├── NotFound                exit 3, HTTP 404   unknown slug, file, version
    ├── InvalidSkill            exit 4, HTTP 422   malformed SKILL.md / envelope
    ├── LimitExceeded           exit 4, HTTP 413   too many / too large / binary files
    ├── UnsafePath              exit 4, HTTP 400   traversal, absolute, symlink escape
    ├── Conflict                exit 5, HTTP 409   slug exists, disabled skill loaded
    ├── KeyProblem              exit 6, HTTP 500   missing, wrong or exposed key
    └── PolicyStop              exit 7, HTTP 403   approval denied, out of scope
"""

from __future__ import annotations


class TeachdError(Exception):
    exit_code = 1
    http_status = 400


class NotFound(TeachdError):
    exit_code = 3
    http_status = 404


class InvalidSkill(TeachdError):
    exit_code = 4
    http_status = 422


class LimitExceeded(TeachdError):
    exit_code = 4
    http_status = 413


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
