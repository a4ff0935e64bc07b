"""What the pages show, shaped for the templates: a run (its chips, its plan
with each step's result), a skill's parameters, someone else's text as
quoted data. Pure functions of the API's JSON; where a field of the
back-end contract (DESIGN §3.5, issue 24) is missing, the nearest honest
reading of what is there."""

from __future__ import annotations

import json
from typing import Any

from compiler.plan import has_steps
from teachd.core.models import Skill
from teachd.core.outcomes import REPAIRABLE, feedback_refused, numbered
from teachd.runner.quoting import invisible

QUOTED_MAX = 300  # characters of an agent's text shown at first; the rest folded, one click away

# unverified: every step ran, but nothing on the final page confirmed the effect
# partial: a step halted after the app had answered a write (a half change, shown with what was written)
STATUS_CLASS = {"success": "ok", "unverified": "warn", "partial": "bad", "failure": "bad", "aborted": "bad",
                "interrupted": "bad", "queued": "run", "running": "run"}
STATUS_WORDS = {"success": "succeeded", "unverified": "ran, not confirmed", "partial": "stopped half way",
                "failure": "failed", "aborted": "stopped", "interrupted": "interrupted",
                "queued": "waiting in the run queue", "running": "running"}
HEALTH_WORDS = {"success": "healthy", "unverified": "unknown", "failure": "needs attention"}
STEP_CLASS = {"ok": "ok", "halted": "bad", "running": "run", "skipped": "warn", "interrupted": "bad",
              "done": "ok", "refused": "bad", "failed": "bad"}  # the last three: an agent's actions (MCP)
STEP_WORDS = {"ok": "done", "halted": "halted", "running": "now", "skipped": "skipped"}


def _took(run: dict[str, Any]) -> int | None:
    """How long an ended run took, in ms, from its record's own times (None: not known)."""
    from datetime import datetime

    try:
        began = datetime.fromisoformat(str(run["started_at"]))
        ended = datetime.fromisoformat(str(run["finished_at"]))
    except (KeyError, TypeError, ValueError):
        return None
    return max(0, int((ended - began).total_seconds() * 1000))


def replayable(skills: list[Skill]) -> list[Skill]:
    """The skills a Run or a schedule form offers: taught steps, wherever they
    came from (an imported taught skill has them too)."""
    return [s for s in skills if has_steps(s.current.files)]


def worked_rate(success: int, failure: int) -> str:
    """How often the runs judged said it worked, in words ("3 of 4 worked")."""
    judged = success + failure
    return f"{success} of {judged} worked" if judged else "not judged yet"


def shown(text: Any, limit: int | None = QUOTED_MAX) -> tuple[str, int]:
    """Someone else's words (an agent's target, a URL) for a quote box: cut at
    ``limit`` (with ``limit`` None, whole: what a plan shows, as the person
    approves every value of it), with every control, format (bidi overrides,
    zero-width), line-breaking and wide blank character shown as ``\\u{…}`` —
    so an agent cannot write text that reads as teachd's own, break out of the
    box or hide a part of it. Returns the text and how many characters were cut."""
    raw = str(text if text is not None else "")
    kept = raw if limit is None else raw[:limit]
    return _escaped(kept), len(raw) - len(kept)


def shown_rest(text: Any, limit: int = QUOTED_MAX) -> str:
    """What :func:`shown` cut, escaped the same way: folded on the page, never
    dropped (what a person answers about is shown whole, one click away)."""
    return _escaped(str(text if text is not None else "")[limit:])


def _escaped(text: str) -> str:
    return "".join(f"\\u{{{ord(c):x}}}" if invisible(c) else c for c in text)


def parameters_of(view: dict[str, Any]) -> list[dict[str, Any]]:
    """A skill's declared parameters ``[{name, description, default}]``: the
    API's own list, else read from a taught skill's ``references/steps.json``
    (secrets are never among them)."""
    given = view.get("parameters")
    if isinstance(given, list):
        return [p for p in given if isinstance(p, dict) and p.get("name")]
    try:
        plan = json.loads((view.get("files") or {}).get("references/steps.json") or "{}")
    except ValueError:
        return []
    params = plan.get("parameters") if isinstance(plan, dict) else None
    if not isinstance(params, dict):
        return []
    return [{"name": str(name), "default": str((p or {}).get("default", "")),
             "description": str((p or {}).get("describe", "")).replace("**", "")}
            for name, p in params.items()]


def secret_typing(view: dict[str, Any]) -> bool:
    """The skill types a secret, so its approval was forced at compile time."""
    meta = (view.get("metadata") or {}).get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return bool(meta.get("teachd-secrets")) or bool(meta.get("teachd-approval"))


def _steps(run: dict[str, Any], waiting: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The plan with each step's result (and the step a question waits on);
    a run with no plan recorded shows its results alone."""
    results = {int(s["n"]): s for s in numbered(run.get("steps"))}
    asked = {int(p["step"]) for p in waiting if isinstance(p.get("step"), int)}
    rows: list[dict[str, Any]] = []
    planned = [s for s in run.get("plan") or [] if isinstance(s, dict) and "n" in s]
    for p in planned:
        n = int(p["n"])
        rows.append({**p, "result": results.pop(n, None), "asked": n in asked})
    for n, r in sorted(results.items()):
        # a result with no plan: an agent's action (its target and page), or an old run's detail
        rows.append({"n": n, "action": r.get("action", ""), "target": r.get("target") or r.get("detail", ""),
                     "page": r.get("page"), "value": None, "secret": False, "result": r, "asked": n in asked})
    return rows


def _now(rows: list[dict[str, Any]], total: int | None, halted: int | None) -> dict[str, Any]:
    """What a person looks for first on a run page: how far it got (N of M
    done) and the step it is on, waits at, or stopped at, in words."""
    # "ok": a replayed step; "done": an agent's action (teachd.mcp.session)
    done = sum(1 for r in rows if (r.get("result") or {}).get("status") in ("ok", "done"))
    at = next((r for r in rows if r.get("asked")), None) \
        or next((r for r in rows if (r.get("result") or {}).get("status") in ("running", "halted")), None)
    if at is None and halted is not None:
        at = next((r for r in rows if r["n"] == halted), None)
    # the trace: each step's picture after it (else before it), in order; the card's own picture is
    # the step it is at (its target outlined, the point it acts on marked), else the last one taken
    film = [{"n": r["n"], "src": pics.get("after") or pics.get("before"), "kind": "after" if pics.get("after")
             else "before"} for r in rows if (pics := (r.get("result") or {}).get("pictures") or {})]
    pics = ((at or {}).get("result") or {}).get("pictures") or {}
    picture = ({"n": at["n"], "src": pics.get("before") or pics.get("after"),
                "kind": "before" if pics.get("before") else "after"} if at is not None and pics
               else film[-1] if film and at is None else None)
    return {"done": done, "of": total, "step": at, "film": film,  # an agent's session has no plan: no "of"
            "picture": picture}


def run_view(run: dict[str, Any], feedback: dict[str, str], use_only: set[str],
             waiting: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A run as the Runs list and the run page show it (``undo_left``: the
    seconds left to take each skill's feedback back, the store's clock)."""
    status = str(run.get("status") or "")
    ended = status != "running"
    skills: dict[str, int] = dict(run.get("skills") or {})
    if isinstance(run.get("used"), list):
        used = [s for s in run["used"] if isinstance(s, str)]
    else:
        used = [run["slug"]] if run.get("slug") else list(skills)
    feedback_open = bool(run.get("feedback_open", feedback_refused(run) is None))
    chips = []
    for slug in sorted(set(used) | set(feedback)):
        given = feedback.get(slug)
        state = given if given else "open" if feedback_open else "closed"  # a grantee to use may judge it too
        chips.append({"slug": slug, "version": skills.get(slug), "state": state,
                      "undo": (run.get("undo_left") or {}).get(slug) if given else None})
    more = [{"slug": s, "version": v} for s, v in sorted(skills.items())
            if s not in used and s not in feedback]
    waiting = list(run.get("waiting") or waiting or [])
    steps = _steps(run, waiting)
    halted = [s for s in numbered(run.get("steps")) if s.get("status") == "halted"]
    repair = status in REPAIRABLE and bool(halted) and bool(run.get("slug")) \
        and run.get("slug") not in use_only
    total = len(run.get("plan") or []) or None
    halted_step = int(halted[-1]["n"]) if repair else None
    asks = bool(waiting or run.get("secrets_waiting"))  # a question, or a secret only the person can give
    words = HEALTH_WORDS if run.get("checked") else STATUS_WORDS  # a health check's verdict, in its words
    shown = "queued" if run.get("queued") and not ended else status  # on the run queue, no worker yet
    return {**run, "status": status, "ended": ended, "status_class": STATUS_CLASS.get(shown, ""),
            "status_words": "waiting for you" if asks and not ended else words.get(shown, shown),
            "took": _took(run) if ended else None,
            "chips": chips, "more": more, "feedback_open": feedback_open, "waiting": waiting,
            "rows": steps, "total": total, "halted_step": halted_step, "now": _now(steps, total, halted_step),
            "params": dict(run.get("params") or {}), "start_url": run.get("start_url") or ""}
