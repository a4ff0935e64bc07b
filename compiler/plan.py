"""The replay plan: ``references/steps.json`` and ``references/anchors.json``,
typed once for both sides — the compiler writes it, the runner reads it.

``format_version`` guards the exchange: a file written by a newer compiler is
refused with a clear message instead of being half understood. Older files
(version 1, before anchors carried a container and an ``href``) still load.
A plan is written at the lowest version that holds it: 5 only where the
person's review kept a value fixed or added a check of their own (a runner
that did not know them would type nothing there, or skip the check), 4 where it has
desktop anchors (``desktop``: steps outside the browser a replay can find
again, compiler.desktop — a runner that could not read them would lose
them), 3 where a repair gave an anchor ``alternates`` (a runner that ignored
them would halt where the repaired skill works), 2 otherwise — so a skill
taught once is byte-for-byte what it was before repairs existed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FORMAT_VERSION = 5  # the newest this code reads
BASE_FORMAT = 2  # what a plan without alternates is written as
ALTERNATES_FORMAT = 3  # a repaired anchor's alternates
DESKTOP_FORMAT = 4  # desktop anchors
REVIEWED_FORMAT = 5  # a value kept fixed, or a check of the person's own (a runner must not skip either)
PARAMETER = re.compile(r"\{\{[\w-]+\}\}")  # a success check's "{{name}}": this run's value of it
STEPS_FILE = "references/steps.json"
ANCHORS_FILE = "references/anchors.json"


def has_steps(files: Mapping[str, str]) -> bool:
    """A skill's files hold taught steps, which teachd can replay or check (a
    skill written by hand is instructions an agent follows: Run and a
    schedule are not offered for it)."""
    return STEPS_FILE in files


class PlanError(ValueError):
    """The references cannot be read as a replay plan; the message says why."""


@dataclass
class Locator:
    """One way to find a target: ``by`` is the kind, the other fields its query."""

    by: str  # test_id | role | label | placeholder | heading | text | id | attr | item | css | xpath
    value: str | None = None
    role: str | None = None
    name: str | None = None
    css: str | None = None
    attr: str | None = None  # for ``attr``: which attribute (name, value, href)
    unique: bool | None = None  # as the recording saw it

    def key(self) -> tuple[Any, ...]:
        return (self.by, self.value, self.role, self.name, self.css)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None or k == "unique"}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Locator:
        fields = {k: data.get(k) for k in cls.__dataclass_fields__ if k in data}
        return cls(by=str(data["by"]), **{k: v for k, v in fields.items() if k != "by"})


@dataclass
class Anchor:
    """Everything known about one action's target.

    ``alternates``: the same target as later demonstrations showed it (a
    repair after the page changed): each is evidence of its own, tried beside
    this one, and the replay acts only when they all point to one element."""

    page: str
    describe: str
    locators: list[Locator]
    expect: dict[str, Any]  # evidence: tag, role, name, text, label, type, href, container
    geometry: dict[str, Any] = field(default_factory=dict)
    fingerprint: dict[str, Any] | None = None
    frame_url: str | None = None
    alternates: list[Anchor] = field(default_factory=list)
    # where the demonstration's picture of it is: {"recording": id, "frame": "frames/….png"} — a
    # reference, never the picture (a skill stays text); read while the recording is kept
    crop: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"page": self.page, "describe": self.describe, "frame_url": self.frame_url,
               "locators": [loc.to_dict() for loc in self.locators], "expect": self.expect,
               "geometry": self.geometry, "fingerprint": self.fingerprint}
        if self.crop:
            out["crop"] = self.crop
        if self.alternates:
            out["alternates"] = [a.to_dict() for a in self.alternates]
        return out

    def versions(self) -> list[Anchor]:
        """This evidence first, then each repair's."""
        return [self, *self.alternates]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Anchor:
        return cls(page=str(data.get("page") or ""), describe=str(data.get("describe") or "the target"),
                   locators=[Locator.from_dict(x) for x in data.get("locators") or []],
                   expect=dict(data.get("expect") or {}), geometry=dict(data.get("geometry") or {}),
                   fingerprint=data.get("fingerprint"), frame_url=data.get("frame_url"),
                   alternates=[cls.from_dict(a) for a in data.get("alternates") or []],
                   crop=crop_ref(data.get("crop")))


CROP_RECORDING = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # a recording's id: a folder name
CROP_FRAME = re.compile(r"frames/[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.png")  # a recorder's crop in it


def crop_ref(data: Any) -> dict[str, str] | None:
    """A demonstration's crop reference as a skill may hold it: a recording's
    id and a frame's name, each a plain name (no path leaves the recordings'
    folder); anything else is none."""
    if not isinstance(data, Mapping):
        return None
    recording, frame = data.get("recording"), data.get("frame")
    if not (isinstance(recording, str) and CROP_RECORDING.fullmatch(recording) and ".." not in recording
            and isinstance(frame, str) and CROP_FRAME.fullmatch(frame) and ".." not in frame):
        return None
    return {"recording": recording, "frame": frame}


@dataclass
class PlanStep:
    """One step a replay takes; ``expect`` is the page it should lead to."""

    n: int
    action: str  # goto | click | dblclick | type | select | check | press | os_click | os_key | os_type
    page: str | None
    anchor: str | None = None
    describe: str | None = None
    url: str | None = None
    tab: int = 0
    param: str | None = None
    secret: str | None = None
    option: str | None = None  # the label of the option chosen, for when its value changed
    checked: bool | None = None
    key: str | None = None
    modifiers: list[str] = field(default_factory=list)
    window: str | None = None
    x: float | None = None
    y: float | None = None
    button: str | None = None
    expect: dict[str, Any] | None = None
    desktop: str | None = None  # the desktop anchor of a step outside the browser
    value: str | None = None  # typed or chosen as demonstrated on every run (the review kept it fixed)
    name: str | None = None  # the person's own name for the step (the review): said, never acted on

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in self.__dict__.items():
            if v is None or (k == "tab" and not v) or (k == "modifiers" and not v):
                continue
            out[k] = v
        if self.action in ("os_click", "os_key", "os_type"):
            out.setdefault("window", None)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlanStep:
        fields = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        fields["n"], fields["modifiers"] = int(data["n"]), list(data.get("modifiers") or [])
        fields["tab"] = int(data.get("tab") or 0)
        return cls(**fields)


@dataclass
class Procedure:
    """A taught task as the replay follows it."""

    start_url: str
    steps: list[PlanStep]
    anchors: dict[str, Anchor]
    scope: list[str]
    success: dict[str, Any]
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)
    secrets: dict[str, dict[str, Any]] = field(default_factory=dict)
    desktop: dict[str, dict[str, Any]] = field(default_factory=dict)  # desktop anchors (compiler.desktop)
    apps: list[str] = field(default_factory=list)  # window classes of the desktop apps it was taught on

    def format_version(self) -> int:
        if any(s.value is not None for s in self.steps) or any(
                not PARAMETER.fullmatch(str(t)) for t in self.success.get("shows") or []):
            return REVIEWED_FORMAT
        if self.desktop:
            return DESKTOP_FORMAT
        return ALTERNATES_FORMAT if any(a.alternates for a in self.anchors.values()) else BASE_FORMAT

    def steps_doc(self) -> dict[str, Any]:
        doc = {"format_version": self.format_version(), "start_url": self.start_url, "scope": self.scope,
               "success": self.success, "parameters": self.parameters, "secrets": self.secrets,
               "steps": [s.to_dict() for s in self.steps]}
        if self.apps:
            doc["apps"] = self.apps
        return doc

    def anchors_doc(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"format_version": self.format_version(),
                               "anchors": {aid: a.to_dict() for aid, a in self.anchors.items()}}
        if self.desktop:
            doc["desktop"] = self.desktop
        return doc

    @classmethod
    def from_files(cls, files: Mapping[str, str]) -> Procedure:
        """Read the plan from a skill's files (as text)."""
        missing = [p for p in (STEPS_FILE, ANCHORS_FILE) if p not in files]
        if missing:
            raise PlanError(f"not a replayable taught skill: {', '.join(missing)} missing")
        steps_doc, anchors_doc = _json(files, STEPS_FILE), _json(files, ANCHORS_FILE)
        for path, doc in ((STEPS_FILE, steps_doc), (ANCHORS_FILE, anchors_doc)):
            version = doc.get("format_version", doc.get("version", 1))
            if not isinstance(version, int) or version > FORMAT_VERSION:
                raise PlanError(f"{path} is format {version!r}, newer than this teachd reads "
                                f"(up to {FORMAT_VERSION}): upgrade teachd to replay it")
        try:
            return cls(
                start_url=str(steps_doc.get("start_url") or ""),
                steps=[PlanStep.from_dict(s) for s in steps_doc["steps"]],
                anchors={k: Anchor.from_dict(v) for k, v in anchors_doc["anchors"].items()},
                scope=list(steps_doc.get("scope") or []),
                success=dict(steps_doc.get("success") or {}),
                parameters=dict(steps_doc.get("parameters") or {}),
                secrets=dict(steps_doc.get("secrets") or {}),
                desktop={str(k): dict(v) for k, v in (anchors_doc.get("desktop") or {}).items()},
                apps=[str(a) for a in (steps_doc.get("apps") or [])],
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise PlanError(f"the replay plan is malformed ({type(exc).__name__}: {exc})") from None


def _json(files: Mapping[str, str], path: str) -> dict[str, Any]:
    try:
        doc = json.loads(files[path])
    except ValueError as exc:
        raise PlanError(f"{path} is not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise PlanError(f"{path} is not a JSON object")
    return doc
