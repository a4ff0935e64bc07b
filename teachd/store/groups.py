"""Groups of people, so a skill is shared once with ``@team`` rather than
with each member; joining a group gives its grants at once, leaving takes
them away at once (nothing is copied)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from teachd.core.errors import BadInput, Conflict, NotFound
from teachd.store.db import Database, Transaction
from teachd.store.revision import moved
from teachd.store.users import UserStore, check_name


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class GroupStore:
    def __init__(self, db: Database, clock: Callable[[], str] = _now) -> None:
        self.db, self._clock = db, clock

    def all(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {str(r["name"]): [] for r in
                                     self.db.query("SELECT name FROM user_groups ORDER BY name")}
        for r in self.db.query("SELECT grp, member FROM group_members ORDER BY grp, member"):
            out.setdefault(str(r["grp"]), []).append(str(r["member"]))
        return out

    def get(self, name: str) -> list[str]:
        found = self.all().get(name.removeprefix("@"))
        if found is None:
            raise NotFound(f"no group {name!r} (teachd groups list)")
        return found

    def exists(self, name: str) -> bool:
        return bool(self.db.query("SELECT 1 FROM user_groups WHERE name = ?", (name.removeprefix("@"),)))

    def create(self, name: str, members: Iterable[str] = ()) -> list[str]:
        name = check_name(name.removeprefix("@"), "group")
        if self.exists(name):
            raise Conflict(f"group {name!r} exists: add members to it instead")
        wanted = self._people(members)
        with self.db.atomic() as tx:
            tx.execute("INSERT INTO user_groups (name, created_at) VALUES (?, ?)", (name, self._clock()))
            self._insert(tx, name, wanted)
        return self.get(name)

    def add(self, name: str, members: Iterable[str]) -> list[str]:
        name = name.removeprefix("@")
        self.get(name)
        wanted = self._people(members)
        with self.db.atomic() as tx:
            self._insert(tx, name, wanted)
        return self.get(name)

    def remove(self, name: str, members: Iterable[str] = ()) -> list[str]:
        """Take members out; with none named, delete the group (its grants go with it)."""
        name = name.removeprefix("@")
        self.get(name)
        gone = list(members)
        with self.db.atomic() as tx:
            if gone:
                for member in gone:
                    tx.execute("DELETE FROM group_members WHERE grp = ? AND member = ?", (name, member))
            else:
                tx.execute("DELETE FROM group_members WHERE grp = ?", (name,))
                tx.execute("DELETE FROM grants WHERE grantee = ?", ("@" + name,))
                tx.execute("DELETE FROM user_groups WHERE name = ?", (name,))
            moved(tx)
        return self.all().get(name, [])

    def _people(self, members: Iterable[str]) -> list[str]:
        wanted = list(dict.fromkeys(members))
        users = UserStore(self.db)
        unknown = [m for m in wanted if not users.known(m)]
        if unknown:
            raise BadInput(f"no user {unknown[0]!r} (teachd users add {unknown[0]})")
        return wanted

    def _insert(self, tx: Transaction, name: str, members: list[str]) -> None:
        moved(tx)  # who is in a group decides which shared skills its members see
        for member in members:
            if not tx.execute("SELECT 1 FROM group_members WHERE grp = ? AND member = ?", (name, member)):
                tx.execute("INSERT INTO group_members (grp, member, added_at) VALUES (?, ?, ?)",
                           (name, member, self._clock()))
