"""The daemon's JSON answers, encoded by orjson.

A skill's view carries its whole SKILL.md, whose History grows a line at
every feedback click: Python's own encoder took about 1.4 ms for one of
127 KB (escaping each character of a text full of em dashes), with the GIL
held — a sixth of the daemon's CPU in the soak. orjson writes it in 0.04 ms.
Answers are the same JSON. What orjson refuses and Python's encoder writes
(an integer past 64 bits from a skill's frontmatter, nesting past 254
levels) is written by Python's encoder; a NaN, which Starlette's encoder
refused with a 500, is ``null``.
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson
from starlette.responses import JSONResponse as _StarletteJSON


def json_bytes(content: Any, sort_keys: bool = False) -> bytes:
    """``content`` as compact UTF-8 JSON (``sort_keys``: keys in order, as a stream compares them)."""
    try:
        sort = orjson.OPT_SORT_KEYS if sort_keys else 0
        return orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS | sort)
    except orjson.JSONEncodeError:
        return json.dumps(_finite(content), ensure_ascii=False, allow_nan=False, sort_keys=sort_keys,
                          separators=(",", ":")).encode("utf-8")


def _finite(value: Any) -> Any:
    """``value`` with each NaN or infinity ``null``, as orjson writes them — so
    an answer holding one beside what orjson refuses is still an answer."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


class JSONResponse(_StarletteJSON):
    def render(self, content: Any) -> bytes:
        return json_bytes(content)
