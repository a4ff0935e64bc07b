"""``computer_act``: one action on the session's page.

The checks and descriptions are plain functions over the arguments; the
acting half runs on the browser thread. A target is a ref from the last
snapshot, a role and name, or a taught skill's anchor (resolved by the
session with the replay's anchor ladder and evidence check). Exactly one
visible element must answer to it: none, or several, is an error that says
so — the agent is told to look again, never given a guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Error as PlaywrightError

from teachd.core.errors import BadInput, NotFound, PolicyStop
from teachd.mcp.worker import Browser
from teachd.runner.quoting import quoted
from teachd.runner.replay import type_like_a_person
from teachd.runner.secrecy import MARK, Scrubber, sensitive_masks, sensitive_values

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

ACTIONS = ("goto", "click", "type", "select", "check", "press", "scroll", "snapshot", "screenshot")
NEEDS_TARGET = frozenset({"click", "type", "select", "check"})
SECRET = re.compile(r"\{\{\s*secret:([A-Za-z][A-Za-z0-9_]*)\s*\}\}")
_ROLE = re.compile(r"[a-z][a-z-]{0,39}")  # shown unquoted in a question, so a bare ARIA role word only
MASK_COLOR = "#FF00FF"  # what a screenshot shows over a password or secret field
_TEXT_FIELD = ("e => (e instanceof HTMLInputElement && !['hidden', 'checkbox', 'radio', 'button', 'submit',"
               " 'image', 'file', 'reset', 'color', 'range'].includes(e.type))"
               " || e instanceof HTMLTextAreaElement")


@dataclass(frozen=True)
class Act:
    action: str
    url: str | None = None
    ref: str | None = None
    role: str | None = None
    name: str | None = None
    skill: str | None = None
    anchor: str | None = None
    text: str | None = None
    value: str | None = None
    key: str | None = None

    def check(self) -> None:
        """Refuse what cannot be done, before anything is asked or touched."""
        if self.action not in ACTIONS:
            raise BadInput(f"action is one of {', '.join(ACTIONS)}; not {self.action!r}")
        ways = [w for w, given in (("ref", self.ref), ("role+name", self.role or self.name),
                                   ("skill+anchor", self.skill or self.anchor)) if given]
        if len(ways) > 1:
            raise BadInput(f"give the target one way, not {' and '.join(ways)}")
        if (self.role is None) != (self.name is None):
            raise BadInput("a target by role needs both role and name")
        if self.role is not None and not _ROLE.fullmatch(self.role):
            raise BadInput("role is an ARIA role such as button, link or textbox; "
                           f"not {quoted(self.role, 40)}")
        if (self.skill is None) != (self.anchor is None):
            raise BadInput("a target by anchor needs both skill and anchor")
        if self.action in NEEDS_TARGET and not ways:
            raise BadInput(f"{self.action} needs a target: ref, role+name, or skill+anchor")
        if self.action == "goto" and not (self.url or "").startswith(("http://", "https://")):
            raise BadInput("goto needs an http(s) url")
        if self.action == "type" and self.text is None:
            raise BadInput("type needs text (secrets as {{secret:NAME}})")
        if self.action == "select" and self.value is None:
            raise BadInput("select needs value (the option's value or its label)")
        if self.action == "press" and not self.key:
            raise BadInput("press needs key (e.g. Enter, Escape, Control+a)")

    @property
    def target(self) -> str:
        """The target as the question names it: every part whole, so the
        question, and the request key built over it, cover all of it."""
        if self.ref:
            return f"ref {quoted(self.ref, None)}"
        if self.role:
            return f"the {self.role} {quoted(self.name or '', None)}"
        if self.anchor:
            return f"anchor {quoted(self.anchor, None)} of {quoted(self.skill, None)}"
        return "the page"

    def describe(self, found: str | None = None) -> str:
        """What a person is asked to allow (``found``: what the target turned
        out to be, e.g. a taught anchor's "the Sign in button"); secrets as
        their placeholder only. Every value the agent chose is quoted data
        (runner/quoting.py), so it cannot pass for teachd's own words; and
        whole, never cut (issue 41): the person allows, and the answer's key
        binds, the exact text typed, value chosen, URL opened."""
        target = f"{found} ({self.target})" if found else self.target
        if self.action == "goto":
            return f"open {quoted(self.url, None)}"
        if self.action == "type":
            return f"type {quoted(self.text, None)} into {target}"
        if self.action == "select":
            return f"choose {quoted(self.value, None)} in {target}"
        if self.action == "press":
            return f"press {quoted(self.key, None)}" + ("" if target == "the page" else f" in {target}")
        if self.action in ("snapshot", "screenshot"):
            return f"read the page ({self.action})"
        return f"{self.action} {target}"


def expand_secrets(text: str, secret: Callable[[str], str]) -> str:
    return SECRET.sub(lambda m: secret(m.group(1)), text)


def by_ref_or_role(b: Browser, act: Act, timeout: float) -> Locator:
    """The one visible element a ref or a role and name names."""
    page = b.page
    if act.ref:
        found = page.get_by_ref(act.ref)
        what = f"ref {act.ref}"
    else:
        found = page.get_by_role(act.role, name=act.name, exact=True)  # type: ignore[arg-type]
        what = act.target
    visible = found.filter(visible=True)
    try:
        visible.first.wait_for(state="visible", timeout=timeout * 1000)
    except PlaywrightError:
        hint = " (refs last until the page changes: take a new snapshot)" if act.ref else ""
        raise NotFound(f"{what} is not on the page{hint}; nothing was done") from None
    count = visible.count()
    if count != 1:
        raise BadInput(f"{what} is ambiguous: {count} visible elements answer to it; "
                       "nothing was done — name it by a ref from a snapshot")
    return visible


def masked_field(target: Locator | None, act: Act) -> None:
    """The element a secret goes into must be a text field (the one the
    taught skill masked, found by its anchor): never a button, a link, a
    region whose text the page shows. Refused before anything is typed."""
    if target is None or not target.evaluate(_TEXT_FIELD):
        raise PolicyStop(f"{act.target} is not a text field: a secret is typed only into the field its "
                         "taught skill masked; nothing was typed")


def perform(b: Browser, act: Act, target: Locator | None, secret: Callable[[str], str],
            timeout: float, did: str, scrubber: Scrubber | None = None) -> dict[str, Any]:
    """Do the action; the result says what was done (``did``: secrets as their
    placeholders) and where the page is now. Nothing handed back holds a
    secret: the values this session typed and the values in the page's
    password and secret fields are scrubbed from text, and those fields are
    masked in a screenshot."""
    page, ms = b.page, timeout * 1000
    scrub = scrubber or Scrubber()
    if (read := _READS.get(act.action)) is not None:  # nothing done: the page, read
        return read(page, ms, scrub)
    if act.action == "goto":
        page.goto(str(act.url), wait_until="domcontentloaded")
    elif target is None:
        _on_the_page(page, act)
    elif (do := _ON_TARGET.get(act.action)) is not None:
        do(b, act, target, secret, ms)
    b.page.wait_for_load_state("domcontentloaded")
    if b.page is not page:  # it opened a tab (the worker follows new tabs): act there from now on
        did += " (it opened a new tab; actions go there now)"
    return {"text": scrub.scrub(f"Done: {did}.\nPage: {b.page.url}\nTitle: {b.page.title()}")}


def _snapshot(page: Page, ms: float, scrub: Scrubber) -> dict[str, Any]:
    text = page.aria_snapshot(mode="ai", timeout=ms)
    shown = f"Page: {page.url}\nTitle: {page.title()}\n\n{text}"
    return {"text": scrub.scrub(shown, also=sensitive_values(page))}


def _screenshot(page: Page, ms: float, scrub: Scrubber) -> dict[str, Any]:
    image = page.screenshot(type="png", mask=sensitive_masks(page), mask_color=MASK_COLOR)
    return {"text": scrub.scrub(f"Page: {page.url}\nTitle: {page.title()}"), "image": image}


def _on_the_page(page: Page, act: Act) -> None:
    """press and scroll with no target act on the page itself; anything else needs one."""
    if act.action == "press":
        page.keyboard.press(str(act.key))
    elif act.action == "scroll":
        page.mouse.wheel(0, int(act.value or 600) if (act.value or "").lstrip("-").isdigit() else 600)
    else:
        raise BadInput(f"{act.action} needs a target")


# On a target, each action is one function: (b, act, target, secret, ms).
def _click(b: Browser, act: Act, target: Locator, secret: Callable[[str], str], ms: float) -> None:
    if target.evaluate("e => !!e.closest('a[target=_blank], a[target=_new]')"):
        with b.context.expect_page(timeout=ms):  # a link to a new tab: wait for the tab, then act there
            target.click(timeout=ms)
    else:
        target.click(timeout=ms)


def _type(b: Browser, act: Act, target: Locator, secret: Callable[[str], str], ms: float) -> None:
    editable = bool(target.evaluate("e => e.matches('input, textarea')"))
    if SECRET.search(str(act.text)):  # masked in every screenshot and scrubbed from every snapshot
        target.evaluate("(e, mark) => e.setAttribute(mark, '')", MARK)
    type_like_a_person(target, expand_secrets(str(act.text), secret), editable, ms)


def _choose(b: Browser, act: Act, target: Locator, secret: Callable[[str], str], ms: float) -> None:
    _select(target, str(act.value), ms)


def _check(b: Browser, act: Act, target: Locator, secret: Callable[[str], str], ms: float) -> None:
    target.set_checked((act.value or "true").lower() not in ("false", "off", "0", "no"), timeout=ms)


def _press(b: Browser, act: Act, target: Locator, secret: Callable[[str], str], ms: float) -> None:
    target.press(str(act.key), timeout=ms)


def _scroll(b: Browser, act: Act, target: Locator, secret: Callable[[str], str], ms: float) -> None:
    target.scroll_into_view_if_needed(timeout=ms)


_READS: dict[str, Callable[[Page, float, Scrubber], dict[str, Any]]] = {
    "snapshot": _snapshot, "screenshot": _screenshot,
}
_ON_TARGET: dict[str, Callable[[Browser, Act, Locator, Callable[[str], str], float], None]] = {
    "click": _click, "type": _type, "select": _choose, "check": _check, "press": _press, "scroll": _scroll,
}


def _select(target: Locator, wanted: str, ms: float) -> None:
    """By value, else by the one option whose label it is."""
    options = target.evaluate("s => Array.from(s.options || []).map(o => [o.value, o.label])")
    values = [str(v) for v, _ in options if str(v) == wanted] or \
             [str(v) for v, label in options if str(label).strip() == wanted.strip()]
    if len(values) != 1:
        raise NotFound(f"no single option {wanted!r} in that menu; nothing was chosen")
    target.select_option(value=values[0], timeout=ms)
