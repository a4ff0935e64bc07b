"""AES-GCM at rest. Each ciphertext is bound to (owner, slug, version, field)
as associated data, so a value cannot be moved to another row or field.

A long value is compressed before it is sealed (zlib), marked inside the
ciphertext by a first byte UTF-8 text never starts with: a sealed value does
not compress, and a skill's History grows by a line a click — each version
written whole would write the whole History again. Only values of
``PACK_FROM`` bytes or more are compressed; a secret's is far shorter, so its
length never tells what else shares its value.

The key lives in ``TEACHD_HOME/key`` (0600). A missing key for an existing
store, a wrong key, or a key readable by others all fail closed.
"""

from __future__ import annotations

import os
import stat
import threading
import zlib
from collections import OrderedDict
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from teachd.core.errors import KeyProblem

KEY_BYTES = 32
NONCE_BYTES = 12
PACKED = b"\xff"  # the first byte of a compressed clear text: never the first byte of UTF-8 text
PACK_FROM = 2048  # bytes of clear text from which a value is compressed before it is sealed


def read_key(path: Path) -> bytes:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise KeyProblem(f"key file {path} is missing") from None
    if stat.S_IMODE(st.st_mode) & 0o077:
        raise KeyProblem(
            f"key file {path} is readable by others (mode {stat.S_IMODE(st.st_mode):o}); "
            f"run: chmod 600 {path}"
        )
    key = path.read_bytes()
    if len(key) != KEY_BYTES:
        raise KeyProblem(f"key file {path} is not a {KEY_BYTES}-byte key")
    return key


def create_key(path: Path) -> bytes:
    """Write a fresh key with mode 0600 from the first byte (never world-readable)."""
    key = AESGCM.generate_key(bit_length=KEY_BYTES * 8)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    return key


MEMO_ENTRIES = 50_000  # small fields remembered (names, descriptions): a few MB for 25,000 skills


class Cipher:
    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)
        # (owner, slug, field) → (version, ciphertext, clear text): one entry per
        # skill and field, so a skill written 10,000 times is remembered once
        self._memo: OrderedDict[tuple[str, str, str], tuple[int, bytes, str]] = OrderedDict()
        self._memo_lock = threading.Lock()

    def open_remembered(self, owner: str, slug: str, version: int, field: str, blob: bytes) -> str:
        """``open``, remembering the clear text of small fields (a manifest's
        names and descriptions) in this process's memory only. Answered from
        memory only for the very ciphertext it was read from: every write
        seals anew (a fresh nonce), so a new version, a restore, a rotated
        key or a deleted and re-made skill is read again, and nothing stale
        is ever answered. Only the last version read of each skill's field
        is kept: the ones before it are never listed again."""
        key, sealed = (owner, slug, field), bytes(blob)
        with self._memo_lock:
            kept = self._memo.get(key)
            if kept is not None and kept[0] == version and kept[1] == sealed:
                self._memo.move_to_end(key)
                return kept[2]
        plain = self.open(owner, slug, version, field, sealed)
        with self._memo_lock:
            self._memo[key] = (version, sealed, plain)
            self._memo.move_to_end(key)
            while len(self._memo) > MEMO_ENTRIES:
                self._memo.popitem(last=False)
        return plain

    @staticmethod
    def _ad(owner: str, slug: str, version: int, field: str) -> bytes:
        return "\x1f".join((owner, slug, str(version), field)).encode()

    def seal(self, owner: str, slug: str, version: int, field: str, text: str) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        ad = self._ad(owner, slug, version, field)
        return nonce + self._aead.encrypt(nonce, packed(text.encode("utf-8")), ad)

    def open(self, owner: str, slug: str, version: int, field: str, blob: bytes) -> str:
        blob = bytes(blob)
        try:
            plain = self._aead.decrypt(
                blob[:NONCE_BYTES], blob[NONCE_BYTES:], self._ad(owner, slug, version, field)
            )
        except InvalidTag:
            raise KeyProblem(
                f"cannot decrypt {field} of {slug} v{version}: wrong key or tampered row"
            ) from None
        if plain[:1] == PACKED:
            plain = zlib.decompress(plain[1:])
        return plain.decode("utf-8")


def packed(data: bytes) -> bytes:
    """``data`` compressed and marked, when it is long and that saves a tenth; else as it is.
    Level 1: a click's History is compressed in about a millisecond, without the GIL."""
    if len(data) < PACK_FROM:
        return data
    small = PACKED + zlib.compress(data, 1)
    return small if len(small) * 10 < len(data) * 9 else data
