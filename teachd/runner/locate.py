"""Finding a step's target on the page: exactly one element that agrees with
the anchor's demonstrated evidence, or a halt that says why not.

Split from the replay executor (teachd.runner.replay): the locators asked
(an anchor's own, their looser twins, the fallback ones), the evidence each
match brings in one round trip, the choice among them (teachd.runner.match),
and the wait for the page while nothing agrees. Waiting is Playwright's own:
a target is looked for again when the page changes (a mutation counter the
capture script keeps), never on a clock. Plain functions over the page and
the anchor; what they found is a ``Found`` the acts are then made on.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from compiler.plan import Anchor, Locator
from compiler.scope import matches_pattern, origin_of, url_pattern
from teachd.core.errors import InvalidSkill
from teachd.runner.guard import element_location
from teachd.runner.halt import Halt, plain
from teachd.runner.looks import BY_CSS, evaluate_each, look
from teachd.runner.match import (
    EXACT,
    NAMED_ALONE,
    POSITIONAL,
    STRONG,
    Candidate,
    Choice,
    agrees,
    as_taught,
    change_kind,
    choose,
    names_of,
    what_changed,
    words,
)
from teachd.runner.traffic import CLOCK

if TYPE_CHECKING:
    from playwright.sync_api import Frame, Page
    from playwright.sync_api import Locator as PwLocator

MAX_MATCHES = 20  # candidates taken from one locator; more is a list, not a target
_CHANGED = "m => (window.__teachdMutations || 0) !== m"
_MARK = "teachd-target"
_CHEAP = STRONG | {"attr:href"}  # named by an attribute (CSS): no accessible names to compute
FALLBACK_AFTER = 0.3  # seconds a target is looked for by its own locators before the fallback ones
# One round trip per locator: the evidence of every match, and the page's
# mutation count (what a wait for the page to change starts from). It also
# starts the document's change clock before anything is typed, and tells,
# per match, what typing needs to know: an editor (``rich``; then what its
# form's fields hold now, as a field that changes as it is typed into is
# the editor's) and a field that owns a popup (leaving it could close what
# the next step picks from).
_ONE = """(el, want) => {
    const ev = window.__teachdEvidence ? window.__teachdEvidence(el, want) : null;
    if (!ev) return ev;
    ev.popup = ["aria-autocomplete", "aria-haspopup", "aria-expanded", "aria-controls", "aria-owns", "list"]
      .some((a) => el.hasAttribute(a)) || el.getAttribute("role") === "combobox";
    ev.rich = el.isContentEditable && !["INPUT", "TEXTAREA"].includes(el.tagName);
    const field = ["INPUT", "TEXTAREA"].includes(el.tagName);
    ev.empty = field ? !el.value : ev.rich ? !el.textContent.trim() : null;
    if (ev.rich) {
      const fields = Array.from((el.closest("form") || el.ownerDocument).querySelectorAll("input, textarea"));
      el.__teachdBefore = new Map(fields.map((f) => [f, f.value]));
    }
    return ev;
  }"""
_EVIDENCE = ("(els, want) => { const e = document.documentElement;" + CLOCK + "const one = " + _ONE
             + "; return [window.__teachdMutations || 0, els.map((el) => one(el, want))]; }")
# The same for CSS selectors, asked of the document itself (and its open
# shadow roots, as Playwright's CSS does): no selector engine is needed, so
# a document the replay has just reached costs no injected script for it.
# Per selector: the evidence of its first matches, or null (a selector the
# page cannot parse). Given ``names`` (a name's words, lower case, one space
# apart), each match also counts its namesakes (``others``): the elements,
# shown or not, outside it and not holding it, whose text or naming attribute
# has those very words; any of them could be what a role's or a text's
# locator finds under that name.
_BY_CSS = "([sels, names, want]) => { const e = document.documentElement;" + CLOCK + """
  const one = """ + _ONE + """, all = """ + BY_CSS + """;
  const norm = (s) => String(s || "").toLowerCase().replace(/[^\\p{L}\\p{N}]+/gu, " ").trim();
  const named = (el) => [el.textContent, ...["aria-label", "title", "alt", "value"]
    .map((a) => el.getAttribute(a))].some((s) => s && s.length < 400 && names.includes(norm(s)));
  const namesakes = names.length ? all("*").filter(named) : [];
  return [window.__teachdMutations || 0, sels.map((css) => {
    try {
      return all(css).slice(0, 50).map((el) => {
        const ev = one(el, want);
        if (ev) ev.others = namesakes.filter((n) => !(n === el || n.contains(el) || el.contains(n))).length;
        return ev;
      });
    } catch (err) { return null; }
  })];
}"""


def via_label(loc: Locator) -> str:
    if loc.attr in ("loose", "words"):
        return loc.by + "~"
    return f"attr:{loc.attr}" if loc.by == "attr" and loc.attr else loc.by


def _css(loc: Locator) -> str | None:
    """The CSS selector of a locator that names an element by an attribute."""
    if loc.by == "test_id":
        v = json.dumps(loc.value)
        return ", ".join(f"[{a}={v}]" for a in ("data-testid", "data-test-id", "data-test", "data-qa"))
    if loc.by == "id":
        return f"[id={json.dumps(loc.value)}]"
    if loc.by == "attr":
        return str(loc.css)
    return None


_FIELD_AFTER = ("xpath=following::*[self::input or self::textarea or self::select or @contenteditable='true'"
                " or @contenteditable=''][1]")


def _locator(root: Page | Frame, loc: Locator) -> PwLocator:
    """Playwright's locator for one of an anchor's locators, made on ``root`` (a page or a frame)."""
    by, exact = loc.by, loc.attr != "loose"
    if (css := _css(loc)) is not None:
        return root.locator(css)
    if by == "role" and loc.attr == "words":  # every word of the name, in any order, among others
        every = "".join(rf"(?=.*\b{re.escape(w)}\b)" for w in words(loc.name))
        return root.get_by_role(loc.role, name=re.compile(every, re.IGNORECASE))  # type: ignore[arg-type]
    if by == "role":
        return root.get_by_role(loc.role, name=loc.name, exact=exact)  # type: ignore[arg-type]
    if by == "label":
        return root.get_by_label(str(loc.value), exact=exact)
    if by == "placeholder":
        return root.get_by_placeholder(str(loc.value), exact=True)
    if by == "text":
        return root.get_by_text(str(loc.value), exact=True)
    if by == "item":  # the icon controls (``role``: their tag) of the record named ``value``
        tag = str(loc.role or "*")
        drawn = f"{tag}[.//*[local-name()='svg' or local-name()='img' or local-name()='i']]"
        named = root.get_by_text(str(loc.value), exact=True)
        return named.locator(f"xpath=ancestor::*[.//{drawn}][1]//{drawn}")
    if by == "heading":  # the first field after that heading: how a person tells an unlabelled editor
        return root.get_by_role("heading", name=str(loc.value), exact=True).locator(_FIELD_AFTER)
    if by == "css":
        return root.locator(str(loc.value))
    if by == "xpath":
        return root.locator("xpath=" + str(loc.value))
    raise InvalidSkill(f"unknown locator kind {by!r}")


def agreed(found: list[tuple[Any, Choice]]) -> tuple[Choice, Any]:
    """One choice from each evidence version of an anchor (the taught one,
    then each repair's): the element they point to when they all that point
    anywhere point to the same one and none is ambiguous; else why not."""
    picked = {(id(root), c.candidate.identity): (c, root) for root, c in found if c.candidate is not None}
    torn = [c for _root, c in found if c.reason.startswith("ambiguous")]
    if len(picked) == 1 and not torn:
        return next(iter(picked.values()))
    if len(picked) > 1:
        why = "ambiguous: the taught and the repaired evidence point to different elements"
        return Choice(None, why), None
    if torn and picked:
        return Choice(None, torn[0].reason), None
    return found[0][1], None


@dataclass(frozen=True)
class Found:
    """A step's target as ``resolve`` found it, and where: what its acts are made on."""

    target: PwLocator
    choice: Choice
    root: Page | Frame  # where it was found
    css: str | None  # a CSS selector naming it alone, when it has one
    as_taught: bool  # found exactly as demonstrated
    changed: str = ""  # otherwise, how it differs from the demonstration, in words (match.what_changed)
    kind: str = ""  # ... and the kind of that change, where later steps may change alike (match.change_kind)

    def look(self, js: str, arg: Any = None, timeout: float | None = None) -> Any:
        """``js`` evaluated on the target, the cheapest way it can be (teachd.runner.looks)."""
        return look(self.target, js, arg, timeout, (self.root, self.css) if self.css is not None else None)

    def location(self, page: Page) -> str:
        """The URL the target's frame is judged by. A locator made on the page
        never looks into a frame, so an element found there is in the top
        document, whose http(s) address the page already knows (no round
        trip); a frame's, or an about:/data: document's, is asked of it."""
        if self.root is page and page.url.lower().startswith(("http:", "https:")):
            return page.url
        return element_location(self.target)


def _root(page: Page, anchor: Anchor) -> Page | Frame | None:
    if not anchor.frame_url:
        return page
    pattern = url_pattern(anchor.frame_url)
    for frame in page.frames:
        if frame != page.main_frame and matches_pattern(frame.url, pattern):
            return frame
    return None


def _candidates(root: Page | Frame, ladder: list[Locator], known: list[Candidate] | None = None,
                want: str | None = None) -> tuple[list[Candidate], list[str], int | None]:
    """Every visible element any locator finds (besides ``known`` ones),
    with the evidence to judge it; and the page's mutation count before
    the first look. ``want``: the name of the record the target was on (a
    control that no longer repeats is then told by its nearest named
    ancestor: capture.js ``nearestNamed``)."""
    by_identity: dict[int, Candidate] = {c.identity: c for c in known or []}
    ambiguous: list[str] = []
    mark: int | None = None
    cheap: set[int] = set()  # candidates whose handle is an attribute's locator
    asked: list[tuple[Locator, PwLocator]] = []
    for loc in ladder:
        try:
            asked.append((loc, _locator(root, loc)))
        except PlaywrightError:
            continue
    answers = evaluate_each([found for _loc, found in asked], _EVIDENCE, want)  # all in one round trip
    for (loc, found), answer in zip(asked, answers, strict=True):
        if isinstance(answer, PlaywrightError):
            continue  # a selector this page cannot parse, or a navigation under way
        label = via_label(loc)
        count, infos = answer
        mark = count if mark is None else mark
        shown = [(i, info) for i, info in enumerate(infos) if info and info.get("visible")]
        if len(shown) > 1:
            ambiguous.append(label)
        for i, info in shown[:MAX_MATCHES]:
            ident = int(info["ident"])
            cand = by_identity.get(ident)
            if cand is None:
                cand = by_identity[ident] = Candidate(ident, set(), info)
            cand.via.add(label)
            if len(shown) == 1 and (cand.handle is None or (label in _CHEAP and ident not in cheap)):
                # re-resolves if the page re-renders; by an attribute when one names it alone,
                # a cheaper query than a role's for every action and look that follows
                cand.handle = found.filter(visible=True)
                cand.css = _css(loc)  # None for a role's or a text's
                if label in _CHEAP:
                    cheap.add(ident)
            elif cand.handle is None and cand.where is None:
                cand.where = (found, i)
    return list(by_identity.values()), ambiguous, mark


def _record(anchor: Anchor) -> str | None:
    """The name of the row or card the target was on, when it was one repeated in every record."""
    item = anchor.expect.get("item")
    return str(item["name"]) if isinstance(item, dict) and item.get("name") else None


def _look(root: Page | Frame,
          anchor: Anchor) -> tuple[list[Candidate], list[str], int | None, Choice]:
    """The ladder's candidates and the choice among them. The locators
    that name the element (test id, role, label, placeholder, id,
    attribute) are asked first; when exactly one element answers them
    and agrees exactly, nothing the rest could bring would beat it — a
    position (css, xpath) never breaks a tie and a loose name scores
    lower — so the rest are not asked (each is a round trip to the page)."""
    if (quick := _by_identity(root, anchor)) is not None:
        return quick
    ladder = _ladder(anchor)
    naming = [loc for loc in ladder if loc.by not in POSITIONAL and loc.attr != "loose"]
    if naming and len(naming) < len(ladder):
        candidates, ambiguous, mark = _candidates(root, naming, want=_record(anchor))
        picked = choose(anchor.expect, candidates, ambiguous)
        if picked.candidate is not None and not ambiguous and len(candidates) == 1 \
                and agrees(anchor.expect, picked.candidate.found, picked.candidate.via).score == EXACT:
            return candidates, ambiguous, mark, picked
        rest = [loc for loc in ladder if loc not in naming]
        more, also, later = _candidates(root, rest, candidates, _record(anchor))
        ambiguous += also
        candidates, mark = more, mark if mark is not None else later
    else:
        candidates, ambiguous, mark = _candidates(root, ladder, want=_record(anchor))
    return candidates, ambiguous, mark, choose(anchor.expect, candidates, ambiguous)


def _by_identity(root: Page | Frame,
                 anchor: Anchor) -> tuple[list[Candidate], list[str], int | None, Choice] | None:
    """The anchor's stable identities (test id, id, name or value
    attribute) asked first, in one plain look at the document. When they
    all point to one visible element, each to it alone, and it agrees
    exactly, the whole ladder would choose it too: any other element it
    could bring agrees at best as well and without a stable identity,
    which ranks lower (``choose``). A link's address stands in for them
    when it names one visible element that agrees exactly and nothing
    else on the page bears its name: another element the ladder could
    bring would then be one it refuses (a link elsewhere, another name)
    or ranks lower (a name that gained words). Otherwise None: the
    ladder is asked."""
    strong = [(loc, css) for loc in anchor.locators
              if via_label(loc) in STRONG and (css := _css(loc)) is not None]
    by_href = not strong and bool(anchor.expect.get("href"))
    if by_href:
        strong = [(loc, css) for loc in anchor.locators
                  if via_label(loc) == "attr:href" and (css := _css(loc)) is not None]
    if not strong:
        return None
    names = sorted({" ".join(words(n)) for n in names_of(anchor.expect)} - {""}) if by_href else []
    if by_href and not names:
        return None
    try:
        mark, answers = root.evaluate(_BY_CSS, [[css for _loc, css in strong], names, _record(anchor)])
    except PlaywrightError:
        return None
    picked: Candidate | None = None
    for (loc, css), infos in zip(strong, answers, strict=True):
        if infos is None:
            return None
        shown = [info for info in infos if info and info.get("visible")]
        if len(shown) > 1:
            return None
        if not shown:
            continue
        ident = int(shown[0]["ident"])
        if picked is None:
            picked = Candidate(ident, set(), shown[0], css=css,
                               handle=root.locator(css).filter(visible=True))
        elif picked.identity != ident:
            return None
        picked.via.add(via_label(loc))
    if picked is None or agrees(anchor.expect, picked.found, picked.via).score != EXACT:
        return None
    if by_href and picked.found.get("others") != 0:
        return None
    return [picked], [], int(mark), Choice(picked, "found", tuple(sorted(picked.via)))


def _ladder(anchor: Anchor) -> list[Locator]:
    """The anchor's locators, then looser twins of its name locators
    (a name that gained words: "Total amount", "🚕 Taxi Paris"): they only
    bring candidates; the evidence still decides."""
    loose = [Locator(loc.by, value=loc.value, role=loc.role, name=loc.name, attr="loose")
             for loc in anchor.locators if loc.by in ("role", "label")]
    return [*anchor.locators, *loose]


def _fallback(anchor: Anchor) -> list[Locator]:
    """Asked only when nothing the ladder found agrees (a quiet page pays
    nothing for them): a link that became a button (or back) under a name
    that gained words anywhere ("Add collection" → "Add new collection"),
    and every control drawing the demonstrated icon's symbol (it may have
    become a named button). Candidates still; the evidence decides."""
    out: list[Locator] = []
    role, name = anchor.expect.get("role"), anchor.expect.get("name")
    if role in ("link", "button") and words(name):
        other = "button" if role == "link" else "link"
        out.append(Locator("role", role=other, name=str(name), attr="words"))
    icon = anchor.expect.get("icon") or {}
    symbol = str(icon.get("symbol") or "") if isinstance(icon, dict) else ""
    if symbol and not symbol.startswith("svg:"):  # a sprite's symbol (an inline drawing has no <use>)
        uses = ", ".join(f"use[{a}={json.dumps(symbol)}]" for a in ("href", "*|href"))
        clickable = ("button, a[href], summary, [role=button], [role=link], [role=menuitem], [role=tab], "
                     "[tabindex], [onclick], [aria-haspopup], [aria-expanded]")
        out.append(Locator("css", value=f":is({clickable}):has({uses})", attr="loose"))
    return out


def _act_on(root: Page | Frame, cand: Candidate) -> PwLocator:
    if cand.handle is not None or cand.where is None:
        return cand.handle
    # Found only among several matches (told apart by its evidence): pin
    # that very element, so acting cannot slip to one of its look-alikes.
    found, i = cand.where
    found.nth(i).evaluate(
        f"(e, id) => e.setAttribute('data-{_MARK}', String(id))", cand.identity)
    cand.css = f"[data-{_MARK}='{cand.identity}']"
    return root.locator(cand.css)


def _as_evidence(version: Anchor, values: Mapping[str, str]) -> Anchor:
    """The evidence as the matcher reads it: with whether the recording saw
    the target's role and name on no other element (``NAMED_ALONE``: then
    its name tells it, and a link's address may differ in its ids), and the
    record it belongs to named with this run's values (a card the run
    created under ``{{title}}``). A copy: the skill's own anchor is not changed."""
    alone = any(loc.by == "role" and loc.unique for loc in version.locators)
    expect: dict[str, Any] = {**version.expect, NAMED_ALONE: alone}
    for key in ("name", "text", "heading"):  # a type-to-create option: `Add "{{tags}}"`; a record's page
        if isinstance(expect.get(key), str):
            expect[key] = _filled(expect[key], values)
    item = expect.get("item")
    if isinstance(item, dict) and isinstance(item.get("name"), str):
        expect["item"] = {**item, "name": _filled(item["name"], values)}
    locators = [dataclasses.replace(loc, name=_filled(loc.name, values), value=_filled(loc.value, values))
                if loc.by in ("role", "text", "item", "heading") else loc for loc in version.locators]
    return dataclasses.replace(version, expect=expect, locators=locators)


_PARAM = re.compile(r"\{\{(\w+)\}\}")


def _filled(text: str | None, values: Mapping[str, str]) -> Any:
    """``{{name}}`` in a recorded name as this run's value (unknown names stay)."""
    if text is None or "{{" not in text:
        return text
    return _PARAM.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def resolve(page: Page, n: int, anchor: Anchor, step_timeout: float,
            values: Mapping[str, str] | None = None) -> Found:
    """Exactly one agreeing element, waiting for the page to change while
    there is none, up to the step timeout. A repaired anchor's evidence
    versions are each asked; they must not disagree (see ``agreed``).
    ``values``: this run's parameters (a record's name may be one)."""
    started = time.monotonic()
    deadline = started + step_timeout
    choice = Choice(None, "its frame is not on the page")
    versions = [_as_evidence(v, values or {}) for v in anchor.versions()]
    while True:
        remaining = deadline - time.monotonic()
        try:
            looks = [(root, v) for v in versions if (root := _root(page, v)) is not None]
            if not looks:
                if remaining <= 0:
                    break
                page.wait_for_event("framenavigated", timeout=remaining * 1000)
                continue
            found = []
            mark: int | None = None
            for root, version in looks:
                candidates, ambiguous, seen, picked = _look(root, version)
                mark = seen if mark is None else mark
                late = time.monotonic() - started >= FALLBACK_AFTER  # a page still loading is not asked
                if picked.candidate is None and late and (extra := _fallback(version)):
                    candidates, more, seen = _candidates(root, extra, candidates, _record(version))
                    mark = seen if mark is None else mark
                    picked = choose(version.expect, candidates, ambiguous + more)
                found.append((root, picked))
            choice, root = agreed(found)
            if choice.candidate is not None and root is not None:
                css = choice.candidate.css  # as found: before ``_act_on`` pins an element told apart
                first = found[0][1].candidate  # the taught evidence's own pick, not a repair's
                taught = first is not None and first.identity == choice.candidate.identity \
                    and as_taught(versions[0].expect, first.found, first.via)
                changed = "" if taught else what_changed(versions[0].expect, choice.candidate.found,
                                                         choice.candidate.via)
                kind = "" if taught else change_kind(versions[0].expect, choice.candidate.found,
                                                     choice.candidate.via)
                return Found(_act_on(root, choice.candidate), choice, root, css, taught, changed, kind)
            if remaining <= 0:
                break
            if mark is None:  # nothing could be asked: the page is between documents
                page.wait_for_load_state("domcontentloaded", timeout=remaining * 1000)
                continue
            # until the page changes; while the fallback is not asked yet, not past its time
            wait = min(remaining, max(0.05, started + FALLBACK_AFTER - time.monotonic())) \
                if time.monotonic() - started < FALLBACK_AFTER else remaining
            looks[0][0].wait_for_function(_CHANGED, arg=mark, timeout=wait * 1000)
        except PlaywrightTimeout:
            continue  # the deadline is checked at the top
        except PlaywrightError:
            page.wait_for_load_state("domcontentloaded")  # it navigated meanwhile
    raise Halt(plain(f"step {n}: {anchor.describe} — {choice.reason}{elsewhere(page.url, anchor.page)}; "
                     "stopping rather than guessing"))


def _place(url: str) -> str:
    """A URL's pattern without its origin: the same app on another host is the same place."""
    pattern = url_pattern(url)
    origin = origin_of(url)
    return pattern[len(origin):] or "/" if origin and pattern.startswith(origin) else pattern


def elsewhere(url: str, shown_on: str) -> str:
    """Nothing when ``url`` is the page (path and hash route, ids aside) the
    step was shown on; else what a person needs to see why it was not found:
    the page the step expected and the page the replay is on."""
    if not shown_on or origin_of(url) is None:  # about:blank, data: … — no page to name
        return ""
    want, got = _place(shown_on), _place(url)
    if matches_pattern("http://x" + got, "http://x" + want):
        return ""
    return f" (this is not the page the step was shown on: expected {want}, found {got})"
