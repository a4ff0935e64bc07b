"""One number for the whole store that every write able to change a
manifest moves on — a skill's new version, its switch, its deletion, a
grant, a group's members — in that write's own transaction, with a line
saying which skill it changed (none: a grant or a group, which changes who
sees what). A process keeps the manifest it listed while the number stays
where it was, and when it moves reads again only the skills those lines
name: an agent's session over 10,000 skills starts from memory, a feedback
click costs the next listing one skill's rows, and any write, by any process
on any machine sharing the store, is seen at the next listing."""

from __future__ import annotations

from teachd.store.db import Database, Transaction

KEPT = 5000  # lines kept: a process further behind than this reads the whole list again
_PRUNE_EVERY = 500


def moved(tx: Transaction, owner: str | None = None, slug: str | None = None) -> None:
    """``owner``/``slug``: the one skill the write changed; none: who sees what."""
    n = int(tx.execute("UPDATE store_revision SET n = n + 1 WHERE id = 1 RETURNING n")[0]["n"])
    tx.execute("INSERT INTO store_changes (n, owner, slug) VALUES (?, ?, ?)", (n, owner, slug))
    if n % _PRUNE_EVERY == 0:
        tx.execute("DELETE FROM store_changes WHERE n <= ?", (n - KEPT,))


def current(db: Database) -> int:
    rows = db.query("SELECT n FROM store_revision WHERE id = 1")
    return int(rows[0]["n"]) if rows else -1


def changed_slugs(db: Database, since: int, until: int) -> set[str] | None:
    """The slugs of the skills changed after revision ``since`` up to
    ``until``; None when the whole list must be read again (who sees what
    changed, or the lines that far back are no longer kept)."""
    if until - since > KEPT:
        return None
    rows = db.query("SELECT owner, slug FROM store_changes WHERE n > ? AND n <= ?", (since, until))
    if len(rows) != until - since or any(r["slug"] is None for r in rows):
        return None
    return {str(r["slug"]) for r in rows}
