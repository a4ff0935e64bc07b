"""What every ``/api/`` module needs, in one place: the daemon as the
request's person sees it, the request's JSON object, and a text field of it.

A handler raises a ``TeachdError`` (``BadInput``, ``NotFound``, ``Conflict``,
``PolicyStop`` …) and never builds an error response itself: the one mapping
from error to status and ``{"error": …}`` body is the app's exception handler
(``teachd.server.app``)."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from teachd.core.errors import BadInput
from teachd.server.state import Daemon


def daemon(request: Request) -> Daemon:
    """The daemon as the request's person sees it (the guard says who)."""
    d: Daemon = request.app.state.daemon
    return d.as_user(request.scope.get("state", {}).get("user"))


async def body(request: Request) -> dict[str, Any]:
    try:
        data = json.loads(await request.body() or b"{}")
    except ValueError:
        raise BadInput("the body is not JSON") from None
    if not isinstance(data, dict):
        raise BadInput("the body must be a JSON object")
    return data


def text_field(data: dict[str, Any], key: str) -> str | None:
    """``data[key]`` as text, None when absent (or null); anything else is refused."""
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadInput(f"{key} must be text")
    return value
