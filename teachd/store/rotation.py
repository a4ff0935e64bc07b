"""``teachd key rotate``: every sealed value re-encrypted under a new key.

1. The new key is written to ``key.new`` (0600, fsynced) — or, when an earlier
   rotation was interrupted, the one already there is taken again.
2. One transaction re-encrypts every sealed column of every row and the key
   check. Killed before it commits, nothing changed: the store still opens
   with the old key, and rotating again resumes with the same new key.
3. Then ``key.new`` replaces ``key``. Killed between the commit and this
   step, the next opening of the store sees that only ``key.new`` opens the
   key check, and finishes the swap itself.

The key never goes into the database. Every daemon of a team store needs the
new key file afterwards.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from teachd.core.errors import KeyProblem
from teachd.store.crypto import Cipher, create_key, read_key
from teachd.store.db import Database

# table, its key columns, sealed column(s), and how each value's associated data is made
Ad = Callable[[dict[str, Any], str], tuple[str, str, int, str]]
SEALED: tuple[tuple[str, tuple[str, ...], tuple[str, ...], Ad], ...] = (
    ("skill_versions", ("owner", "slug", "version"),
     ("name", "description", "instructions", "files", "approval", "metadata", "note"),
     lambda r, f: (r["owner"], r["slug"], int(r["version"]), f)),
    ("runs", ("id",), ("detail",), lambda r, f: (r["owner"], "run:" + r["id"], 0, f)),
    ("pending_approvals", ("id",), ("request",), lambda r, f: (r["owner"], f"approval:{r['id']}", 0, f)),
    ("run_pictures", ("id",), ("image",),
     lambda r, f: (r["owner"], f"picture:{r['run_id']}", int(r["n"]), r["kind"])),
    ("schedules", ("id",), ("params",), lambda r, f: (r["owner"], f"schedule:{r['id']}", 0, f)),
    ("keycheck", ("id",), ("blob",), lambda r, f: ("", "", 0, "keycheck")),
)


def pending_key(key_path: Path) -> Path:
    return key_path.with_name(key_path.name + ".new")


def rotate(db: Database, key_path: Path, progress: Callable[[int, int], None] | None = None,
           swap: bool = True) -> int:
    """Re-encrypt every sealed value under a new key; returns how many."""
    old = Cipher(read_key(key_path))
    new_path = pending_key(key_path)
    new_key = read_key(new_path) if new_path.exists() else create_key(new_path)
    new = Cipher(new_key)
    done = 0
    with db.atomic() as tx:
        # a worker's open secret question lives seconds, sealed with the key every worker holds: after
        # a rotation they all start again with the new one, and a question of the old key is dropped
        tx.execute("DELETE FROM secret_asks")
        total = sum(int(tx.execute(f"SELECT COUNT(*) AS n FROM {table}")[0]["n"]) for table, *_ in SEALED)
        for table, keys, columns, ad in SEALED:
            for row in tx.execute(f"SELECT * FROM {table}"):
                values = [new.seal(*ad(row, c), old.open(*ad(row, c), row[c])) for c in columns]
                sets = ", ".join(f"{c} = ?" for c in columns)
                where = " AND ".join(f"{k} = ?" for k in keys)
                tx.execute(f"UPDATE {table} SET {sets} WHERE {where}", (*values, *(row[k] for k in keys)))
                done += 1
                if progress and (done % 50 == 0 or done == total):
                    progress(done, total)
    if swap:
        finish(key_path)
    return done


def finish(key_path: Path) -> None:
    """The new key takes the old one's place (atomically; the directory fsynced)."""
    os.replace(pending_key(key_path), key_path)
    fd = os.open(key_path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def recover(db: Database, key_path: Path, check: Callable[[Cipher], bool]) -> bool:
    """After a rotation killed between its commit and the swap: finish it.
    True when the pending key was the one the store needs."""
    new_path = pending_key(key_path)
    if not new_path.exists():
        return False
    try:
        candidate = Cipher(read_key(new_path))
    except KeyProblem:
        return False
    if check(candidate):
        finish(key_path)
        return True
    return False
