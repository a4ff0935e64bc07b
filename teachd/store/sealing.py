"""A value sealed to one reader: the process that asked for it.

A secret a run on another machine must type is typed by its person on a
daemon's page, and must reach that run's worker through the only thing they
share — the store — without the store ever holding it readable. So the
worker makes a key pair for that one question and keeps the private half in
its memory only; the daemon seals the typed value to the public half
(X25519, then HKDF-SHA256, then AES-GCM, bound to the question: a sealed
value opens for no other question). The row holds ciphertext that nothing
written anywhere can open, and is deleted once taken.
"""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from teachd.core.errors import BadInput

INFO = b"teachd sealed secret/1"
PUBLIC_BYTES = 32
NONCE_BYTES = 12
_RAW = serialization.Encoding.Raw, serialization.PublicFormat.Raw


def _key(shared: bytes, sender: bytes, reader: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=sender + reader, info=INFO).derive(shared)


def seal_to(reader: bytes, value: str, bound: bytes) -> bytes:
    """``value`` sealed to the ``reader``'s public key, bound to ``bound``
    (what the question is): a fresh sender key each time, so one seal tells
    nothing about another. Anyone may seal to a public key: the store seals
    the result again with its own key (store/secret_asks.py), so only a key
    holder's value is ever opened."""
    try:
        public = X25519PublicKey.from_public_bytes(reader)
    except ValueError:
        raise BadInput("the asker's key is not a key") from None
    sender = X25519PrivateKey.generate()
    mine = sender.public_key().public_bytes(*_RAW)
    try:
        shared = sender.exchange(public)
    except ValueError:  # a low-order point: no key anyone could hold
        raise BadInput("the asker's key is not a key") from None
    nonce = os.urandom(NONCE_BYTES)
    box = AESGCM(_key(shared, mine, reader))
    return mine + nonce + box.encrypt(nonce, value.encode("utf-8"), bound)


class Opener:
    """The reader's side: a key pair made in memory, never written anywhere,
    dropped with this object."""

    def __init__(self) -> None:
        self._private = X25519PrivateKey.generate()
        self.public = self._private.public_key().public_bytes(*_RAW)

    def open(self, sealed: bytes, bound: bytes) -> str | None:
        """The value, or None when it was not sealed to this key for this question."""
        sender, nonce, body = (sealed[:PUBLIC_BYTES], sealed[PUBLIC_BYTES:PUBLIC_BYTES + NONCE_BYTES],
                               sealed[PUBLIC_BYTES + NONCE_BYTES:])
        try:
            shared = self._private.exchange(X25519PublicKey.from_public_bytes(sender))
            return AESGCM(_key(shared, sender, self.public)).decrypt(nonce, body, bound).decode("utf-8")
        except (ValueError, InvalidTag):
            return None
