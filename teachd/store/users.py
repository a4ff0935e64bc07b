"""People of a store, each with their own daemon token.

Only a token's SHA-256 is kept: the token is printed once, by ``teachd users
add``, and is the person's bearer for the daemon, its pages and ``/mcp``. The
person who runs the CLI (``TEACHD_OWNER`` or the login name) is a person of the
store with no token of their own: on their machine the daemon's token file
stands for them, so a single-user install needs no setup.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from teachd.core.errors import BadInput, Conflict, NotFound
from teachd.store.db import Database

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def check_name(name: str, what: str = "user") -> str:
    if not NAME.match(name or ""):
        raise BadInput(f"bad {what} name {name!r}: letters, digits, '.', '_' and '-', up to 64")
    return name


class UserStore:
    def __init__(self, db: Database, clock: Callable[[], str] = _now) -> None:
        self.db, self._clock = db, clock

    def ensure(self, name: str) -> None:
        """Know this person (the CLI's owner), without giving them a token."""
        if not self.db.query("SELECT 1 FROM users WHERE name = ?", (name,)):
            with self.db.atomic() as tx:  # two daemons starting at once on one store: one row, no error
                tx.execute("INSERT INTO users (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                           (name, self._clock()))

    def add(self, name: str) -> str:
        """A new token for the person (known already, or new); printed once, never stored."""
        check_name(name)
        token = secrets.token_urlsafe(32)
        with self.db.atomic() as tx:
            rows = tx.execute("SELECT token_sha256, revoked_at FROM users WHERE name = ?", (name,))
            if rows and rows[0]["token_sha256"] and not rows[0]["revoked_at"]:
                raise Conflict(f"{name} has a token already: `teachd users revoke {name}` first, "
                               "then add them again for a new one")
            if rows:
                tx.execute("UPDATE users SET token_sha256 = ?, revoked_at = NULL WHERE name = ?",
                           (digest(token), name))
            else:
                tx.execute("INSERT INTO users (name, token_sha256, created_at) VALUES (?, ?, ?)",
                           (name, digest(token), self._clock()))
        return token

    def revoke(self, name: str) -> None:
        """The person's token stops working at once; their skills and grants stay."""
        with self.db.atomic() as tx:
            if not tx.execute("SELECT 1 FROM users WHERE name = ? AND revoked_at IS NULL", (name,)):
                raise NotFound(f"no user {name!r} (or revoked already)")
            tx.execute("UPDATE users SET token_sha256 = NULL, revoked_at = ? WHERE name = ?",
                       (self._clock(), name))

    def who(self, token: str) -> str | None:
        """The person a token belongs to; None for no one (or a revoked one)."""
        if not token:
            return None
        rows = self.db.query("SELECT name FROM users WHERE token_sha256 = ? AND revoked_at IS NULL",
                             (digest(token),))
        return str(rows[0]["name"]) if rows else None

    def known(self, name: str) -> bool:
        return bool(self.db.query("SELECT 1 FROM users WHERE name = ? AND revoked_at IS NULL", (name,)))

    def all(self) -> list[dict[str, Any]]:
        rows = self.db.query("SELECT name, token_sha256, created_at, revoked_at FROM users ORDER BY name")
        return [{"name": r["name"], "token": bool(r["token_sha256"]), "created_at": r["created_at"],
                 "revoked_at": r["revoked_at"]} for r in rows]
