"""The taught skill's files, as text: SKILL.md for a person or a model that
has only this file, and the machine-readable references for replay."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from compiler.desktop import NOUNS, app_name
from compiler.names import md_escape
from compiler.plan import PARAMETER
from compiler.procedure import Built
from compiler.recording import Recording

COMPILER_ID = "teachd-compiler 1"
HISTORY_HEADING = "## History"
NOT_REPLAYED = "Validation: not yet replayed."


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))


def to_json(data: dict[str, Any]) -> str:
    """Sorted JSON, one entry of each top-level map per line: readable in a
    diff, and fast (the C encoder does each line)."""
    lines = ["{"]
    items = sorted(data.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if isinstance(value, dict) and value:
            inner = sorted(value.items())
            lines.append(f"  {_compact(key)}: {{")
            lines += [
                f"    {_compact(k)}: {_compact(v)}{',' if j < len(inner) - 1 else ''}"
                for j, (k, v) in enumerate(inner)
            ]
            lines.append(f"  }}{comma}")
        elif isinstance(value, list) and value:
            lines.append(f"  {_compact(key)}: [")
            lines += [f"    {_compact(v)}{',' if j < len(value) - 1 else ''}" for j, v in enumerate(value)]
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {_compact(key)}: {_compact(value)}{comma}")
    return "\n".join(lines + ["}"]) + "\n"


def _desktop_end_lines(ends: list[dict[str, Any]]) -> list[str]:
    """ "- The *Galculator* window shows “9” (a text field) …": the apps' end state the run must show."""
    lines = []
    for end in ends:
        shown = "; ".join(f"{_shown_text(t['text'])} ({NOUNS.get(t['role'], t['role'])})"
                          for t in end["shows"])
        lines.append(f"- The *{md_escape(app_name(None, end['class']))}* window shows {shown}: where the "
                     "demonstration ended, its own display of the effect.")
    return lines


def _shown_text(text: str) -> str:
    """A text the run must show, quoted; a parameter in it as code (this run's value goes there)."""
    if not text:
        return "nothing"
    parts = re.split(r"(\{\{[\w-]+\}\})", text)
    return "“" + "".join(f"`{p}`" if i % 2 else md_escape(p) for i, p in enumerate(parts)) + "”"


def _q(text: str | None) -> str:
    return f"“{md_escape(text)}”" if text else "(untitled)"


def _host_list(scope: list[str]) -> str:
    hosts = [urlsplit(o).netloc for o in scope]
    return ", ".join(hosts) if hosts else "the recorded pages"


def description(display: str, proc: Built) -> str:
    text = (
        f"{display}: a task taught by demonstration on {_host_list(proc.plan.scope)}, "
        f"{_span(proc, _plain)}. "
        f"Use when the user asks to {display[0].lower() + display[1:]} there again; "
        f"it replays {len(proc.steps)} recorded steps"
        + (" and asks the user for secrets before acting." if proc.plan.secrets else ".")
    )
    return text.replace("---", "—")[:1024]


def _span(proc: Built, quote: Callable[[str | None], str]) -> str:
    """Where the task went: "from “Sign in” to “Report submitted”"; one
    title only when both are the same (a single-page app whose title is
    the app's own name: "in “Tracker”", not "from “Tracker” to “Tracker”")."""
    if proc.first_title and proc.first_title == proc.last_title:
        return f"in {quote(proc.first_title)}"
    return f"from {quote(proc.first_title)} to {quote(proc.last_title)}"


def _plain(title: str | None) -> str:
    return f"“{title}”" if title else "the start page"


def _step_line(step: dict[str, Any], proc: Built) -> str:
    what = step.get("describe", "the element")
    action = step["action"]
    if action == "goto":
        return f"Open <{step['url']}>."
    if action == "click":
        return f"Click {what}."
    if action == "dblclick":
        return f"Double-click {what}."
    if action == "check":
        return f"{'Check' if step.get('checked', True) else 'Uncheck'} {what}."
    if action in ("type", "select"):
        verb = "Choose" if action == "select" else "Type"
        prep = "in" if action == "select" else "into"
        if "secret" in step:
            return (f"{verb} {{{{secret:{step['secret']}}}}} {prep} {what} — ask the user for it "
                    "at this point; never write it down, log it or repeat it.")
        return f"{verb} {_value(step)} {prep} {what}."
    if action == "press":
        keys = "+".join([*step.get("modifiers", []), step.get("key") or ""])
        return f"Press **{md_escape(keys)}**" + (f" in {what}." if "anchor" in step else ".")
    if action == "os_click":
        if "desktop" in step:
            return f"Outside the browser, click {what}."
        return f"Outside the browser, click in the window {_q(step.get('window'))}."
    if action == "os_key":
        key = md_escape("+".join([*step.get("modifiers", []), str(step.get("key"))]))
        return f"Outside the browser, press **{key}** in the window {_q(step.get('window'))}."
    if action == "os_type":
        if "secret" in step:
            return (f"Outside the browser, type {{{{secret:{step['secret']}}}}} into {what} — ask the user "
                    "for it at this point; never write it down, log it or repeat it.")
        return f"Outside the browser, type {_value(step)} into {what}."
    return f"{action} {what}."


def _value(step: dict[str, Any]) -> str:
    """A typed or chosen value as the steps say it: a parameter by name, a value
    the review kept fixed as itself (it is typed as shown, every run)."""
    if "value" in step:
        return f"“{md_escape(step['value'])}” (always)"
    return f"{{{{{step['param']}}}}}"


def _repaired_as(step: dict[str, Any], proc: Built) -> str:
    """A repaired step says how a repair showed its target too."""
    anchor = proc.plan.anchors.get(step.get("anchor") or "")
    if anchor is None or not anchor.alternates:
        return ""
    return " — after a repair, also shown as " + " or ".join(a.describe for a in anchor.alternates)


def _verify_line(i: int, step: dict[str, Any], steps: list[dict[str, Any]]) -> str:
    expect = step.get("expect")
    if expect and (window := expect.get("window")):  # a desktop step: the title its app's window took
        shows = "".join(f" showing {v}" for v in window.get("shows") or [])
        app = md_escape(app_name(None, window.get("class")))
        return f"a *{app}* window titled like `{window['title_pattern']}`{shows}"
    if expect:
        title = f" titled {_q(expect.get('title'))}" if expect.get("title") else ""
        tab = " in a new tab" if expect.get("tab") else ""
        return f"the page{tab} matches `{expect['url_pattern']}`{title}"
    if step["action"] in ("type", "select"):
        value = f"{{{{secret:{step['secret']}}}}}" if "secret" in step else _value(step)
        return f"{step.get('describe', 'the field')} holds {value}"
    if step["action"] == "check":
        return f"{step.get('describe')} is {'checked' if step.get('checked', True) else 'unchecked'}"
    nxt = next((s for s in steps[i + 1 :] if "anchor" in s), None)
    if nxt:
        return f"{nxt['describe']} is visible"
    return "the success check below holds"


def taught_on(rec: Recording) -> str:
    return rec.started_at[:10] if rec.started_at else "an unrecorded date"


def skill_body(display: str, date: str, proc: Built) -> str:
    lines = [
        f"# {md_escape(display)}",
        "",
        f"Taught by demonstration on {date}: {len(proc.steps)} steps on "
        f"{_host_list(proc.plan.scope)}, {_span(proc, _q)}. "
        "Follow the steps in order; each names its target (with its anchor in "
        "`references/anchors.json`) and what the page shows after it. Stop and ask "
        "whenever a check fails.",
        "",
        "## Preconditions",
        "",
        f"- Start at <{proc.plan.start_url}> in a browser.",
    ]
    if proc.signed_in:
        lines.append("- The demonstration signed in: have the user's password ready to ask "
                     "for, or be signed in already (then skip the sign-in steps).")
    if proc.plan.parameters:
        lines.append("- Know the values of the parameters below (defaults are what was shown).")
    lines += ["", "## Steps", ""]
    for i, step in enumerate(proc.steps):
        anchor = f" `anchor: {step['anchor']}`" if "anchor" in step else ""
        named = f"**{md_escape(step['name'])}** — " if step.get("name") else ""
        lines.append(f"{step['n']}. {named}{_step_line(step, proc)}{anchor}{_repaired_as(step, proc)}")
        lines.append(f"   - page: <{step['page']}>")
        lines.append(f"   - verify: {_verify_line(i, step, proc.steps)}")
    success = proc.plan.success
    typed = [t for t in success.get("shows") or [] if PARAMETER.fullmatch(t)]
    checks = [t for t in success.get("shows") or [] if not PARAMETER.fullmatch(t)]
    lines += [
        "",
        "## Success check",
        "",
        f"- The final page matches `{success.get('url_pattern')}` (`*`: any id; shown: "
        f"<{success.get('url')}>)"
        + (f" and its title is {_q(success.get('title'))}." if success.get("title") else "."),
        *([f"- It shows this run's {', '.join(typed)} (the demonstration's final page "
           "showed the values typed: the effect, not only the address)."] if typed else []),
        *[f"- It shows {_shown_text(t)} (a check added at the review)." for t in checks],
        *_desktop_end_lines(success.get("desktop") or []),
        "",
        "## Parameters",
        "",
    ]
    if proc.plan.parameters:
        for name, p in proc.plan.parameters.items():
            lines.append(f"- `{{{{{name}}}}}` — default `{p['default']}` — entered in "
                         f"{p['describe']} (step {p['step']}).")
    else:
        lines.append("- None.")
    lines += ["", "## Secrets", ""]
    if proc.plan.secrets:
        for name, s in proc.plan.secrets.items():
            env = "TEACHD_SECRET_" + name.upper()
            lines.append(f"- `{{{{secret:{name}}}}}` — for {s['describe']} (step {s['step']}). "
                         f"Ask the user for it each run (or read `{env}`); never store, log "
                         "or echo it. Every computer action under this skill needs the "
                         "user's approval.")
    else:
        lines.append("- None.")
    lines += ["", "## Allowed scope", "", "Act only on pages of these origins:"]
    lines += [f"- `{o}`" for o in proc.plan.scope] or ["- (none recorded)"]
    lines += [
        "",
        "## Failure policy",
        "",
        "- A target not found, or matching more than one element: stop and ask the user. "
        "Never guess by position.",
        "- A page outside the allowed scope: stop and ask the user before acting.",
        "- A step whose verify line does not hold: stop and report the step number.",
        "- A secret is needed: ask the user; never reuse one from memory or a file.",
        "",
        NOT_REPLAYED,
        "",
        HISTORY_HEADING,
        "",
    ]
    return "\n".join(lines)


def recording_md(rec: Recording, proc: Built) -> str:
    counts = Counter(e["type"] for e in rec.events)
    duration = max((int(e["t"]) for e in rec.events), default=0)
    screen = rec.screen or {}
    lines = [
        "# Recording",
        "",
        f"- id: `{rec.id}`",
        f"- task: {md_escape(rec.name)}",
        f"- started: {rec.started_at or 'unknown'}",
        f"- duration: {duration / 1000:.1f} s",
        f"- recorder: {rec.recorder}",
        f"- screen: {screen.get('w', '?')}×{screen.get('h', '?')}",
        f"- stopped: {rec.stop_reason or 'no stop event (the recorder was killed)'}",
        "- events: " + ", ".join(f"{k} {counts[k]}" for k in sorted(counts)),
        f"- steps compiled: {len(proc.steps)}",
        f"- secrets masked: {len(proc.plan.secrets)} typed, {proc.masked_elsewhere} in URLs and titles",
        f"- compiler: {COMPILER_ID}",
    ]
    if rec.torn_tail:
        lines.append("- note: the last event was cut off by a crash and was dropped")
    return "\n".join(lines) + "\n"
