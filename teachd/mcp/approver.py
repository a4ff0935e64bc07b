"""Asking the person, for an agent's session.

Through the client, when it can show a question (an MCP form elicitation
with no fields: accept = allow once; decline or cancel = deny); otherwise on
the daemon's Approvals page, through the store. No answer in time is a deny.
An accept is an allow only with empty content (the form asks for nothing);
any other content is a deny, said in the result. The gate calls this from
the browser thread; the question goes out on the server's event loop, which
the tool call that caused it is awaiting.

On 2026-07-28 the answer comes back in a new call, under the key the
question went out with (``request_state``). That key is bound to the whole
plan or request, to this run, to a fresh nonce and to an expiry, and is
remembered here as issued until it is used once or expires: an accepted
answer allows that question only, in this run, once, in time.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import hmac
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from mcp.server.elicitation import render_elicitation_schema
from mcp.shared.exceptions import NoBackChannelError
from pydantic import BaseModel, Field, create_model

from teachd.runner.gate import Answer, Asking, PageApprover, Request
from teachd.store.approvals import ApprovalQueue

log = logging.getLogger(__name__)


class AllowOnce(BaseModel):
    """No fields: the question is the message; the answer is accept or decline."""


ALLOW_ONCE_SCHEMA: Any = render_elicitation_schema(AllowOnce)  # no properties, none required
LIKE = "also_later_steps_changed_like_this"  # the gate's ``like``
THESE = "also_the_changed_steps_listed"  # the gate's ``these``
_BOXES = {
    LIKE: "Also allow, in this run only, every later step found changed the same way (its name alone)",
    THESE: "Also allow the later steps of this page listed as changed, each only if found just so",
}
BOX_WORDS = {LIKE: "“also later steps changed like this”", THESE: "“also the changed steps listed”"}


def boxes_of(request: Request) -> tuple[str, ...]:
    """The boxes a question's form has: one per wider answer it offers."""
    return tuple(k for k, on in ((THESE, request.offers_these), (LIKE, request.offers_like)) if on)


def schema_of(boxes: tuple[str, ...]) -> Any:
    """The form a question goes out with: no fields (accept = allow once), or a box per wider answer."""
    if not boxes:
        return ALLOW_ONCE_SCHEMA
    fields: Any = {k: (bool, Field(default=False, description=_BOXES[k])) for k in boxes}
    return render_elicitation_schema(create_model("AllowWider", **fields))


def box_words(boxes: tuple[str, ...]) -> str:
    """What the boxes do, said after the question."""
    if not boxes:
        return ""
    ticks = " or ".join(BOX_WORDS[b] for b in boxes)
    return (f"\nAccept allows this step once. Tick {ticks} to allow more with it, in this run only, each "
            "still held to its plan line and the scope.")


APPROVAL = "approval"  # the key of teachd's question in an input-required round
NOWHERE = ("this client cannot show teachd's questions (it declares no elicitation) and no teachd serve "
           "is running to ask on: start teachd serve and call again (its Approvals page asks), or use a "
           "client that supports elicitation")
ROUNDS_FROM = "2026-07-28"  # the protocol whose tools/call asks by input-required rounds


def round_question(request: Request, run_id: str = "", nonce: str = "",
                   expires: float = 0.0) -> tuple[str, str]:
    """The question as it goes out in an input-required round, and its key.
    The words are the same for the same question in every round (nothing in
    them depends on when it is asked). The key is bound to what the answer
    allows — the whole plan (:meth:`Plan.key`, every value whole, not the text
    shown) or the whole request — to this run, to a nonce and to an expiry:
    an answer to it fits no other plan, no other run, no later question."""
    if request.plan is not None:
        body = request.plan.describe()
        message = (f"teachd asks: allow this run? {body}\nAccept allows exactly these steps, in order, "
                   "within scope, for this run only; anything else asks again.")
    else:
        body = request.describe()
        message = f"teachd asks: allow this once? {body}"
    bound = json.dumps(["teachd-round/1", request.key(), run_id, nonce, f"{expires:.6f}"], ensure_ascii=False)
    return message, hashlib.sha256(bound.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Issued:
    """A question sent in a round and not answered yet: its nonce and until when it may be."""

    nonce: str
    expires: float


ISSUED_MAX = 64  # questions of one run awaiting their round's answer; the oldest go first


def answers_of(ctx: Any) -> dict[str, tuple[str, Any]]:
    """The client's answer to the round before (``approval``), under the key
    of the question it answers (the round's ``request_state``)."""
    responses, key = getattr(ctx, "input_responses", None) or {}, getattr(ctx, "request_state", None)
    got = responses.get(APPROVAL) if isinstance(responses, dict) else None
    if not key or got is None or not hasattr(got, "action"):
        return {}
    return {str(key): (str(got.action), getattr(got, "content", None))}


def asks_in_rounds(ctx: Any) -> bool:
    """A client on 2026-07-28 (or later) that can show a form: asked in input-required rounds."""
    from mcp_types.version import is_version_at_least

    version = getattr(ctx, "protocol_version", None)
    caps = getattr(ctx, "client_capabilities", None)
    return bool(version and is_version_at_least(version, ROUNDS_FROM) and caps is not None
                and caps.elicitation is not None)


def judge(request_id: int, action: str, content: Any, boxes: tuple[str, ...] = ()) -> Answer:
    """A form answer to "allow this once?". The form has no fields, so an
    accept is an allow only with empty content (``{}``, or none): an accept
    carrying anything (``{"allow": false}``, ``{"answer": "deny"}``…) is an
    answer teachd did not ask for and cannot read as a yes — a deny, said.
    Where the form has boxes (``like``, ``these``: the wider answers the
    question offers), they may come too, each true or false: a ticked one
    is that answer."""
    if action != "accept":
        return Answer(request_id, False)
    if content is None or content == {}:
        return Answer(request_id, True)
    if isinstance(content, dict) and set(content) <= set(boxes) and all(isinstance(v, bool)
                                                                        for v in content.values()):
        return Answer(request_id, True, like=bool(content.get(LIKE)), these=bool(content.get(THESE)))
    keys = ", ".join(sorted(str(k) for k in content)) if isinstance(content, dict) else type(content).__name__
    return Answer(request_id, False, f"the client accepted with content ({keys}) the question did not "
                                     "ask for; only an empty accept allows")


@dataclass
class Caller:
    """The tool call being served: how to reach its client."""

    ctx: Any  # mcp.server.mcpserver.Context
    loop: asyncio.AbstractEventLoop
    stopping: threading.Event  # the server is closing: an unanswered question is a deny now
    cancelled: threading.Event = field(default_factory=threading.Event)  # the client cancelled this call
    # 2026-07-28 (no back channel): a question ends the call as an input-required round, and the
    # call comes again with the answer — ``answered`` holds it, by the question's key
    rounds: bool = False
    answered: dict[str, tuple[str, Any]] = field(default_factory=dict)
    may_ask: Callable[[Request], bool] = lambda _request: True  # … only before anything acted
    sent: float = 0.0  # the last progress value sent: the spec wants each one higher

    def can_elicit(self) -> bool:
        caps = self.ctx.client_capabilities
        return bool(caps is not None and caps.elicitation is not None)

    def can_open_url(self) -> bool:
        caps = self.ctx.client_capabilities
        return bool(caps is not None and caps.elicitation is not None and caps.elicitation.url is not None)

    def run(self, coro: Any, timeout: float) -> Any:
        """Await ``coro`` on the server's loop from the browser thread; a
        TimeoutError when no answer comes in time or the server closes."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0 and not self.stopping.is_set() \
                and not self.cancelled.is_set():
            try:
                return future.result(min(left, 0.5))
            except concurrent.futures.TimeoutError:
                continue
        future.cancel()
        raise TimeoutError("no answer")

    def progress(self, n: float, total: float | None, message: str) -> None:
        """Best effort: a client that asked for progress sees it; a lost note stops nothing.
        Progress only rises (the spec's rule): a note between steps (waiting for
        an approval) goes a hair above the last value instead of back to 0."""
        value = n if n > self.sent else self.sent + 0.001
        self.sent = value
        asyncio.run_coroutine_threadsafe(self.ctx.report_progress(value, total, message), self.loop)


def anywhere() -> str | None:
    return "the teachd Approvals page"


class ClientApprover:
    def __init__(self, queue: ApprovalQueue, timeout: float, stopping: threading.Event,
                 approvals_page: Callable[[], str | None] = anywhere,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.queue, self.timeout, self.stopping = queue, timeout, stopping
        self.approvals_page = approvals_page  # where a person can answer now; None: nowhere
        self.run_id = ""
        self.caller: Caller | None = None  # set for each tool call by the session
        self.clock = clock
        # the questions sent in input-required rounds, by key: each answered once, before it expires
        self._issued: dict[str, Issued] = {}
        self._lock = threading.Lock()

    def issue(self, request: Request) -> tuple[str, str]:
        """A round's question and its key, with a fresh nonce remembered here
        as issued and unused until the approval timeout."""
        nonce, expires = secrets.token_hex(16), self.clock() + self.timeout
        message, key = round_question(request, self.run_id, nonce, expires)
        with self._lock:
            self._forget_expired()
            while len(self._issued) >= ISSUED_MAX:
                del self._issued[next(iter(self._issued))]
            self._issued[key] = Issued(nonce, expires)
        return message, key

    def redeem(self, request: Request, answered: dict[str, tuple[str, Any]]) -> tuple[str, Any] | None:
        """The client's answer to this very question — same plan or request,
        this run — under a key issued here, not used before and not expired.
        Redeemed, the key is spent: the same answer never allows twice."""
        with self._lock:
            self._forget_expired()
            for state in list(answered):
                issued = self._issued.get(state)
                if issued is None:
                    continue
                _, key = round_question(request, self.run_id, issued.nonce, issued.expires)
                if hmac.compare_digest(key, state):
                    del self._issued[state]
                    return answered.pop(state)
        return None

    def _forget_expired(self) -> None:
        now = self.clock()
        for key in [k for k, i in self._issued.items() if i.expires < now]:
            del self._issued[key]

    def ask(self, request: Request) -> Answer:
        caller = self.caller
        if caller is not None and caller.rounds:
            got = self.redeem(request, caller.answered)
            if got is not None:  # this very question, answered in the client's last round
                action, content = got
                answer = judge(request.id, action, content, boxes_of(request))
                return replace(answer, run=answer.allow and request.offers_run)
            if caller.may_ask(request):
                message, key = self.issue(request)
                boxes = boxes_of(request)
                raise Asking(message + box_words(boxes), key, boxes)
            # a question after something acted (a step that drifted mid-replay): the Approvals page
        elif caller is not None and caller.can_elicit():
            message = f"teachd asks: allow this once? {request.describe()}"
            if request.plan is not None:  # a replay's first gated step: one question for the whole plan
                message = (f"teachd asks: allow this run? {request.plan.describe()}\n"
                           f"First: {request.describe()}\nAccept allows exactly these steps, in order, "
                           "within scope, for this run only; anything else (a step that drifted, another "
                           "page) asks again.")
            boxes = boxes_of(request)
            try:
                session = caller.ctx.request_context.session  # as Context.elicit asks, the raw answer kept
                form = session.elicit_form(message + box_words(boxes), schema_of(boxes),
                                           caller.ctx.request_id)
                result = caller.run(form, self.timeout)
                answer = judge(request.id, result.action, result.content, boxes)
                return replace(answer, run=answer.allow and request.offers_run)
            except NoBackChannelError:
                log.info("the client cannot be asked on this connection: the Approvals page asks")
            except TimeoutError:
                return Answer(request.id, False)
            except Exception as exc:  # the client went away, or answered with an error: no answer, a deny
                log.info("the question got no answer (%s): deny", type(exc).__name__)
                return Answer(request.id, False)
        if self.stopping.is_set():
            return Answer(request.id, False)
        page = self.approvals_page()
        if page is None:  # nobody could answer: said now, not after a silent wait
            return Answer(request.id, False, NOWHERE)
        if caller is not None:
            caller.progress(0, None, f"waiting for approval on {page}: {request.describe()}")
        answer = PageApprover(self.queue, self.run_id, self.timeout).ask(request)
        return answer if answer.allow or answer.why else replace(answer, why=f"no yes on {page} in time")
