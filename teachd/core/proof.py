"""How ``teachd mcp`` knows the daemon it talks to is the one holding the
token: a challenge answered with an HMAC the daemon's own address is in.
Both sides (the daemon's open route and the MCP bridge) compute it here."""

from __future__ import annotations

import hashlib
import hmac

PROOF_PATH = "/teachd-proof"  # answers HMAC(token, challenge): ``teachd mcp`` checks it talks to this daemon


def daemon_proof(token: str, base_url: str, challenge: str) -> str:
    """What the daemon at ``base_url`` answers to ``challenge``: only a
    holder of the token can compute it, and the daemon's own address is in
    it, so a server relaying the challenge to a real daemon elsewhere gets
    an answer that does not fit where it listens."""
    msg = f"teachd-daemon-proof\n{base_url.rstrip('/')}\n{challenge}".encode()
    return hmac.new(token.encode(), msg, hashlib.sha256).hexdigest()
