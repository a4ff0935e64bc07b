"""The versioned, encrypted skill store.

``open_store(settings)`` opens the embedded SQLite database in
``TEACHD_HOME`` — or PostgreSQL with ``TEACHD_DB_URL=postgresql://…`` — applies
migrations and checks the key (the key file stays in TEACHD_HOME: every
daemon of a team store needs the same one).
"""

from __future__ import annotations

from teachd.config import Settings
from teachd.core.errors import BadInput, KeyProblem
from teachd.core.models import Skill, SkillContent, SkillVersion
from teachd.store.crypto import Cipher, create_key, read_key
from teachd.store.db import Database, SQLiteDatabase
from teachd.store.migrations import MIGRATIONS
from teachd.store.origins import settle_unknown
from teachd.store.rotation import recover
from teachd.store.skills import SkillStore
from teachd.store.users import UserStore

__all__ = ["Skill", "SkillContent", "SkillStore", "SkillVersion", "open_database", "open_store"]


def open_database(settings: Settings) -> Database:
    if settings.db_url:
        if not settings.db_url.startswith(("postgresql://", "postgres://")):
            raise BadInput("TEACHD_DB_URL must be a postgresql:// URL")
        from teachd.store.postgres import PostgresDatabase

        return PostgresDatabase(settings.db_url)
    return SQLiteDatabase(settings.db_path)


def _key_for(settings: Settings, store_exists: bool) -> bytes:
    if settings.key_env:
        return key_from_text(settings.key_env)
    if settings.key_path.exists():
        return read_key(settings.key_path)
    if store_exists:
        raise KeyProblem(
            f"key file {settings.key_path} is missing but the store exists; "
            "refusing to create a new key (restore the old key file)"
        )
    return create_key(settings.key_path)


def open_store(settings: Settings) -> SkillStore:
    existed = settings.db_path.exists()
    db = open_database(settings)
    db.migrate(MIGRATIONS)
    store_exists = bool(db.query("SELECT id FROM keycheck")) or (existed and not settings.db_url)
    key = _key_for(settings, store_exists)
    try:
        store = SkillStore(db, Cipher(key), settings.owner)
    except KeyProblem:
        # A rotation killed between its commit and the key swap: finish it.
        if settings.key_env or not recover(db, settings.key_path, lambda c: _opens(db, c)):
            raise
        store = SkillStore(db, Cipher(read_key(settings.key_path)), settings.owner)
    UserStore(db).ensure(settings.owner)  # the person at this machine is a person of the store
    settle_unknown(db, store.cipher)  # skills stored before provenance was kept: read from their notes
    return store


def _opens(db: Database, cipher: Cipher) -> bool:
    rows = db.query("SELECT blob FROM keycheck WHERE id = 1")
    try:
        return bool(rows) and cipher.open("", "", 0, "keycheck", rows[0]["blob"]) is not None
    except KeyProblem:
        return False


def key_from_text(text: str) -> bytes:
    """TEACHD_KEY: the 32-byte key as 64 hex digits (or URL-safe base64)."""
    import base64
    import binascii

    raw = text.strip()
    try:
        key = bytes.fromhex(raw) if len(raw) == 64 else base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
    except (ValueError, binascii.Error):
        raise KeyProblem("TEACHD_KEY is neither 64 hex digits nor base64") from None
    if len(key) != 32:
        raise KeyProblem("TEACHD_KEY must hold a 32-byte key")
    return key
