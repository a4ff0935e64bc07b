"""Approvals over HTTP, as the Approvals page shows them: the requests a run
waits on a person for, the answer to one (run, once or deny), and the saved
"always allow" rules — which never satisfy a skill that requires approval."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from teachd.core.errors import BadInput
from teachd.runner.gate import ANSWERS
from teachd.server.api.common import body, daemon, text_field
from teachd.server.responses import JSONResponse


async def approvals_list(request: Request) -> JSONResponse:
    """
    summary: Requests waiting for a person, and the saved "always allow" rules
    responses:
      200: {description: pending and rules}
    """
    d = daemon(request)
    return JSONResponse(await run_in_threadpool(
        lambda: {"pending": d.approvals.pending(), "rules": d.rules.all()}))


async def approval_answer(request: Request) -> JSONResponse:
    """
    summary: "Answer a waiting request: `answer` run, once, deny, or here (with `x` and `y`)"
    description: >-
      run allows its whole plan, once this step, deny stops the run. `{"allow": true}` is once and
      false is deny (a JSON boolean); an unknown answer is deny. A request with `show` asks where a
      step not found is now, on its picture: `{"answer": "here", "x": 0.42, "y": 0.3}` (fractions of
      the picture's width and height) or deny.
    responses:
      200: {description: answered}
      400:
        description: >-
          `allow` not a JSON boolean, `run` where no plan was offered, `here` without a point or to
          a request that does not ask where, another answer to one that does: nothing answered
      404: {description: answered already or timed out}
    """
    data = await body(request)
    pid = request.path_params["pid"]
    word = data.get("answer")
    point = None
    if "answer" not in data:
        allow = data.get("allow")
        if not isinstance(allow, bool):  # typed: "false", 1, [] or a missing answer is no answer at all
            raise BadInput("send `answer`: run, once or deny (or `allow` as a JSON boolean: true is once)")
        word = "once" if allow else "deny"
    elif word == "here":
        x, y = data.get("x"), data.get("y")
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y)):
            raise BadInput("here needs x and y: fractions (0 to 1) of the picture's width and height")
        point = (float(x), float(y))  # type: ignore[arg-type]
    elif word not in ANSWERS:
        word = "deny"  # an answer teachd does not know is a no
    await run_in_threadpool(daemon(request).approvals.answer, pid, str(word), point)
    return JSONResponse({"id": pid, "answer": word, "allow": word != "deny"})


async def rule_add(request: Request) -> JSONResponse:
    """
    summary: Save an "always allow" rule for a tool (never satisfies a skill that requires approval)
    responses:
      200: {description: the rule id}
    """
    tool = text_field(await body(request), "tool") or ""
    rule = await run_in_threadpool(daemon(request).rules.allow_always, tool)
    return JSONResponse({"id": rule, "tool": tool})


async def rule_revoke(request: Request) -> JSONResponse:
    """
    summary: Revoke a saved rule
    responses:
      200: {description: revoked}
    """
    await run_in_threadpool(daemon(request).rules.revoke, request.path_params["rid"])
    return JSONResponse({"revoked": request.path_params["rid"]})
