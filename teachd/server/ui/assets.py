"""The UI's static files (``teachd/server/static``): read once, each served
at ``/static/<name>`` with a long cache, and named in pages by a URL that
carries its content hash (``?v=``) and an ``integrity=`` hash (SRI), so a
changed file is a new URL and a tampered one does not run."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
CACHE = "public, max-age=31536000, immutable"  # the URL changes with the content


@dataclass(frozen=True)
class Asset:
    name: str
    body: bytes
    media_type: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.body).hexdigest()

    @property
    def url(self) -> str:
        return f"/static/{self.name}?v={self.digest[:12]}"

    @property
    def integrity(self) -> str:
        return "sha384-" + base64.b64encode(hashlib.sha384(self.body).digest()).decode()


def load(folder: Path = STATIC_DIR) -> dict[str, Asset]:
    return {p.name: Asset(p.name, p.read_bytes(), TYPES[p.suffix]) for p in sorted(folder.iterdir())
            if p.is_file() and p.suffix in TYPES}


ASSETS = load()


def asset(name: str) -> Asset:
    """A static file by name; a page naming one that does not exist is a bug, said at once."""
    try:
        return ASSETS[name]
    except KeyError:
        raise LookupError(f"no static file {name!r} in {STATIC_DIR}") from None
