"""One number for the whole store that every write able to change a
manifest moves on — a skill's new version, its switch, its deletion, a
grant, a group's members — in that write's own transaction. A process keeps
the manifest it listed while the number stays where it was: an agent's
session over 10,000 skills starts from memory, and any write, by any
process on any machine sharing the store, is seen at the next listing."""

from __future__ import annotations

from teachd.store.db import Database, Transaction


def moved(tx: Transaction) -> None:
    tx.execute("UPDATE store_revision SET n = n + 1 WHERE id = 1")


def current(db: Database) -> int:
    rows = db.query("SELECT n FROM store_revision WHERE id = 1")
    return int(rows[0]["n"]) if rows else -1
