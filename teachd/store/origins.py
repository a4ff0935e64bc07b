"""Where each skill came from: its provenance, kept by the store.

A skill is *taught* only when this store compiled it from a recording, or its
owner accepted an imported one as taught (``teachd skills trust``). The slug
says nothing: anyone can name an imported skill ``taught-…``. Only taught
skills are auto-loaded into computer runs and lend their scope.
"""

from __future__ import annotations

from teachd.store.crypto import Cipher
from teachd.store.db import Database

TAUGHT, IMPORTED, CREATED = "taught", "imported", "created"
ORIGINS = (TAUGHT, IMPORTED, CREATED)
_TAUGHT_NOTES = ("taught from ", "compiled from ")  # what the store's own compile paths write
_IMPORTED_NOTES = ("imported", "updated from ")  # an import, or a remote version taken over it


def settle_unknown(db: Database, cipher: Cipher) -> int:
    """Give skills stored before provenance was recorded their origin, read
    from the version notes the store itself wrote (encrypted: an imported
    skill cannot forge them). Taught only when its first version was
    compiled here and no later version was taken from elsewhere."""
    rows = db.query("SELECT owner, slug FROM skills WHERE origin = 'unknown'")
    for row in rows:
        owner, slug = str(row["owner"]), str(row["slug"])
        notes = [cipher.open(owner, slug, int(v["version"]), "note", v["note"]) for v in db.query(
            "SELECT version, note FROM skill_versions WHERE owner = ? AND slug = ? ORDER BY version",
            (owner, slug))]
        first = notes[0] if notes else ""
        if first.startswith(_TAUGHT_NOTES) and not any(n.startswith(_IMPORTED_NOTES) for n in notes[1:]):
            origin = TAUGHT
        elif first.startswith(_IMPORTED_NOTES):
            origin = IMPORTED
        else:
            origin = CREATED
        with db.atomic() as tx:
            tx.execute("UPDATE skills SET origin = ? WHERE owner = ? AND slug = ? AND origin = 'unknown'",
                       (origin, owner, slug))
    return len(rows)
