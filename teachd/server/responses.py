"""The daemon's JSON answers, encoded by orjson.

A skill's view carries its whole SKILL.md, whose History grows a line at
every feedback click: Python's own encoder took about 2 ms for one of 127 KB
(escaping each character of a text full of em dashes), with the GIL held —
a sixth of the daemon's CPU in the soak. orjson writes it in a fraction of
that. Answers are the same JSON; a NaN, which Starlette's encoder refuses,
is ``null``.
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import JSONResponse as _StarletteJSON


class JSONResponse(_StarletteJSON):
    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS)
