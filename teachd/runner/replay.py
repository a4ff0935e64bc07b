"""The replay executor: a taught skill's steps in Chromium, each one a
``computer_act`` call through the gate, its target resolved by the anchor
ladder and checked against the demonstrated evidence, its effect verified.

Anything unexpected halts the run with the step named: no silent wrong action.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.scope import in_scope, matches_pattern, url_pattern
from teachd.errors import PolicyStop, TeachdError
from teachd.runner.gate import Action, Gate
from teachd.runner.match import Candidate, Choice, choose

FIND_TIMEOUT = 10.0
NAV_TIMEOUT = 15.0
_IS_VISIBLE = ("e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);"
               " return (r.width > 0 || r.height > 0) && s.visibility !== 'hidden'"
               " && s.display !== 'none'; }")
_IDENTITY = "e => e.__teachdId || (e.__teachdId = (window.__teachdSeq = (window.__teachdSeq || 0) + 1))"


def plain(text: str) -> str:
    """Markdown emphasis off, for a terminal line."""
    return text.replace("**", "").replace("\\", "")


class Halt(TeachdError):
    """The replay stopped on purpose; the message names the step."""


@dataclass
class StepResult:
    n: int
    action: str
    status: str
    detail: str = ""
    via: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, "action": self.action, "status": self.status, "detail": self.detail,
                "via": self.via}


@dataclass
class Procedure:
    steps: list[dict[str, Any]]
    anchors: dict[str, dict[str, Any]]
    scope: list[str]
    success: dict[str, Any]
    parameters: dict[str, dict[str, Any]]
    secrets: dict[str, dict[str, Any]]
    start_url: str

    @classmethod
    def from_files(cls, files: Mapping[str, str]) -> Procedure:
        try:
            steps = json.loads(files["references/steps.json"])
            anchors = json.loads(files["references/anchors.json"])["anchors"]
        except (KeyError, ValueError) as exc:
            raise TeachdError(f"not a replayable taught skill (references missing: {exc})") from None
        return cls(steps["steps"], anchors, list(steps.get("scope") or []), steps.get("success") or {},
                   steps.get("parameters") or {}, steps.get("secrets") or {}, steps.get("start_url", ""))


def _locator(root: Any, loc: Mapping[str, Any]) -> Any:
    by = loc["by"]
    if by == "test_id":
        v = json.dumps(loc["value"])
        return root.locator(", ".join(f"[{a}={v}]" for a in ("data-testid", "data-test-id",
                                                             "data-test", "data-qa")))
    if by == "role":
        return root.get_by_role(loc["role"], name=loc["name"], exact=True)
    if by == "label":
        return root.get_by_label(loc["value"], exact=True)
    if by == "placeholder":
        return root.get_by_placeholder(loc["value"], exact=True)
    if by == "text":
        return root.get_by_text(loc["value"], exact=True)
    if by == "id":
        return root.locator(f"[id={json.dumps(loc['value'])}]")
    if by == "attr":
        return root.locator(loc["css"])
    if by == "css":
        return root.locator(loc["value"])
    if by == "xpath":
        return root.locator("xpath=" + loc["value"])
    raise TeachdError(f"unknown locator kind {by!r}")


class Replayer:
    def __init__(self, context: Any, page: Any, proc: Procedure, gate: Gate,
                 params: Mapping[str, str], secret: Callable[[str], str],
                 start_url: str | None = None, progress: Callable[[str], None] | None = None) -> None:
        self.context, self.page, self.proc, self.gate = context, page, proc, gate
        self.params, self.secret = dict(params), secret
        self.start_url = start_url
        self.progress = progress or (lambda _msg: None)
        self.results: list[StepResult] = []
        self._handles: dict[int, Any] = {}

    # -- evidence ---------------------------------------------------------
    def _root(self, anchor: Mapping[str, Any]) -> Any:
        frame_url = anchor.get("frame_url")
        if not frame_url:
            return self.page
        pattern = url_pattern(frame_url)
        for frame in self.page.frames:
            if frame != self.page.main_frame and matches_pattern(frame.url, pattern):
                return frame
        return None

    def _resolve_once(self, anchor: Mapping[str, Any]) -> Choice:
        root = self._root(anchor)
        if root is None:
            return Choice(None, "its frame is not on the page")
        by_identity: dict[int, Candidate] = {}
        ambiguous: list[str] = []
        self._handles = {}
        for loc in anchor.get("locators", []):
            try:
                handles = _locator(root, loc).element_handles()
                visible = [h for h in handles if h.evaluate(_IS_VISIBLE)]
            except Exception:
                continue
            if len(visible) > 1:
                ambiguous.append(loc["by"])
            if len(visible) != 1:
                continue
            h = visible[0]
            ident = int(h.evaluate(_IDENTITY))
            if ident not in by_identity:
                found = h.evaluate("e => window.__teachdDescribe ? window.__teachdDescribe(e) : {}")
                by_identity[ident] = Candidate(ident, set(), found or {})
                self._handles[ident] = h
            by_identity[ident].via.add(loc["by"])
        return choose(anchor.get("expect") or {}, list(by_identity.values()), ambiguous)

    def resolve(self, n: int, anchor: Mapping[str, Any]) -> tuple[Any, Choice]:
        """Wait (briefly) until exactly one agreeing element is there."""
        deadline = time.monotonic() + FIND_TIMEOUT
        while True:
            choice = self._resolve_once(anchor)
            if choice.identity is not None:
                return self._handles[choice.identity], choice
            if time.monotonic() > deadline:
                raise Halt(plain(f"step {n}: {anchor.get('describe', 'the target')} — {choice.reason}; "
                                 "stopping rather than guessing"))
            self.page.wait_for_timeout(250)

    # -- guards -----------------------------------------------------------
    def _guard(self, n: int, what: str, url: str) -> None:
        if self.proc.scope and not in_scope(url, self.proc.scope):
            self.gate.check(Action("computer_act", what, url, n),
                            reason=f"{url} is outside the skill's allowed scope "
                                   f"({' '.join(self.proc.scope)})")
        self.gate.check(Action("computer_act", what, url, n))

    def _wait_url(self, n: int, pattern: str) -> None:
        deadline = time.monotonic() + NAV_TIMEOUT
        while not matches_pattern(self.page.url, pattern):
            if time.monotonic() > deadline:
                raise Halt(f"step {n}: expected the page {pattern}, but it is {self.page.url}")
            self.page.wait_for_timeout(100)
        self.page.wait_for_load_state("domcontentloaded")

    def _value(self, step: Mapping[str, Any]) -> str:
        if "secret" in step:
            return self.secret(step["secret"])
        name = step.get("param")
        if name in self.params:
            return self.params[name]
        return str((self.proc.parameters.get(name) or {}).get("default", ""))

    # -- steps ------------------------------------------------------------
    def run(self) -> None:
        for step in self.proc.steps:
            n, action = int(step["n"]), step["action"]
            self.progress(plain(f"step {n}: {action} {step.get('describe') or step.get('url') or ''}"))
            try:
                via = self._do(step)
            except (Halt, PolicyStop) as exc:
                self.results.append(StepResult(n, action, "halted", str(exc)))
                raise
            except Exception as exc:  # Playwright's own errors: a halt, named
                msg = f"step {n}: {str(exc).splitlines()[0]}"
                self.results.append(StepResult(n, action, "halted", msg))
                raise Halt(msg) from None
            self.results.append(StepResult(n, action, "ok", step.get("describe") or "", via))
        self.check_success()

    def _do(self, step: Mapping[str, Any]) -> list[str]:
        n, action = int(step["n"]), step["action"]
        expect = step.get("expect") or {}
        if action == "goto":
            url = self.start_url if (n == 1 and self.start_url) else step["url"]
            if "[masked]" in url:
                raise Halt(f"step {n}: the recorded address held a secret; cannot open it again")
            self._guard(n, f"open {url}", url)
            self.page.goto(url, wait_until="domcontentloaded")
            if expect.get("url_pattern") and n > 1:
                self._wait_url(n, expect["url_pattern"])
            return []
        if action in ("os_click", "os_key"):
            raise Halt(f"step {n}: a desktop step outside the browser; a person must do it")
        anchor = self.proc.anchors.get(step.get("anchor", ""))
        if anchor is None:
            raise Halt(f"step {n}: no anchor for its target")
        handle, choice = self.resolve(n, anchor)
        handle.scroll_into_view_if_needed()
        what = plain(f"{action} {step.get('describe', '')}".strip())
        self._guard(n, what, self.page.url)
        new_tab = expect.get("tab") is not None and expect.get("tab") != step.get("tab", 0)
        if action in ("click", "dblclick") and new_tab:
            with self.context.expect_page() as info:
                handle.click()
            self.page = info.value
            self.page.wait_for_load_state("domcontentloaded")
        elif action == "click":
            handle.click()
        elif action == "dblclick":
            handle.dblclick()
        elif action == "type":
            value = self._value(step)
            handle.fill(value)
            if handle.input_value() != value:
                raise Halt(f"step {n}: {step.get('describe')} does not hold the value typed")
        elif action == "select":
            value = self._value(step)
            handle.select_option(value)
            if handle.input_value() != value:
                raise Halt(f"step {n}: {step.get('describe')} did not take {value!r}")
        elif action == "check":
            want = bool(step.get("checked", True))
            handle.set_checked(want)
            if handle.is_checked() != want:
                raise Halt(f"step {n}: {step.get('describe')} did not change")
        elif action == "press":
            handle.press("+".join([*step.get("modifiers", []), step.get("key") or "Enter"]))
        else:
            raise Halt(f"step {n}: unknown action {action!r}")
        if expect.get("url_pattern"):
            self._wait_url(n, expect["url_pattern"])
        return list(choice.via)

    def check_success(self) -> None:
        success = self.proc.success
        pattern = success.get("url_pattern")
        if pattern and not matches_pattern(self.page.url, pattern):
            raise Halt(f"success check: the final page is {self.page.url}, expected {pattern}")
        title = success.get("title")
        if title and self.page.title() != title:
            raise Halt(f"success check: the final title is {self.page.title()!r}, expected {title!r}")
