"""The plan a person approves with ``run``: every step of a replay as they
would name it — action, target, page, the value to be typed (a secret only
by its name) — and the origins it may act on. A pure function of the
compiled procedure and this run's parameters.

It holds the skill's words, URLs and this run's values as they are, whole:
``Plan.describe`` (teachd.runner.gate) shows each as quoted data, never cut,
and ``Plan.key`` binds an answer to all of it. What a step will type or press
is in its plan line, on the desktop too, so nothing acts that the plan hid."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from compiler.names import md_escape
from compiler.plan import PlanStep as CompiledStep
from compiler.plan import Procedure
from teachd.runner.gate import Plan, PlanStep

_VERBS = {"goto": "open", "click": "click", "dblclick": "double-click", "type": "type into",
          "select": "choose in", "check": "tick", "press": "press", "os_click": "click (desktop)",
          "os_type": "type (desktop)", "os_key": "press (desktop)"}


def _plain(text: str) -> str:
    return text.replace("**", "").replace("\\", "")


def with_values(text: str, proc: Procedure, params: Mapping[str, str]) -> str:
    """``{{name}}`` in a step's words (a type-to-create option, the card a
    run's own record is on) as this run's value — in plain words or in the
    skill's Markdown (``\\{\\{name\\}\\}``, the value escaped again): the plan
    and the step's result name what the replay looks for."""
    def value(m: re.Match[str]) -> str:
        name = m.group(2).replace("\\", "")  # new\_name in Markdown
        default = (proc.parameters.get(name) or {}).get("default")
        if name not in params and default is None:
            return m.group(0)
        got = params.get(name, str(default))
        return md_escape(got) if m.group(1) else got

    return _PLACEHOLDER.sub(value, text)


_PLACEHOLDER = re.compile(r"(\\)?\{\\?\{((?:\w|\\_)+)\\?\}\\?\}")


def value_of(step: CompiledStep, proc: Procedure, params: Mapping[str, str],
             secret: Callable[[str], str] | None = None) -> str | None:
    """What the step will type or choose — the one rule, for the plan a person
    approves and for the replay that acts on it: this run's value of its
    parameter, else the parameter's default; a value the review kept fixed,
    itself; a choice with no parameter, the
    option demonstrated; a key press, its keys. A secret by its name
    (``[secret NAME]``), or, given ``secret`` (the replay, about to type it),
    its value."""
    if step.secret:
        return secret(step.secret) if secret is not None else f"[secret {step.secret}]"
    if step.value is not None and step.action in ("type", "os_type", "select"):
        return step.value  # kept fixed at the review: the same on every run
    if step.action in ("type", "os_type") or (step.action == "select" and step.param):
        name = step.param or ""
        if name in params:
            return params[name]
        return str((proc.parameters.get(name) or {}).get("default", ""))
    if step.action == "select":
        return step.option
    if step.action == "press":
        return "+".join([*step.modifiers, step.key or "Enter"])
    if step.action == "os_key":
        return "+".join([*step.modifiers, str(step.key)])
    return None


def plan_step(step: CompiledStep, proc: Procedure, params: Mapping[str, str],
              start_url: str | None = None) -> PlanStep:
    """One step as the plan shows it — and as the replay, about to act on it,
    says what it will do, for the gate to hold against the approved plan."""
    url = start_url if (step.n == 1 and step.action == "goto" and start_url) else step.url
    said = with_values(_plain(step.describe or "the target"), proc, params)
    target = url if step.action == "goto" else said
    if step.action == "press" and not step.anchor:
        target = "a key"
    page = None if step.action == "goto" else (step.page or url)  # a goto's target is its page
    verb = _VERBS.get(step.action, step.action)
    if step.action == "check" and step.checked is False:
        verb = "untick"
    return PlanStep(step.n, verb, str(target or ""), page, value_of(step, proc, params), bool(step.secret),
                    step.name)


def plan_of(slug: str, proc: Procedure, params: Mapping[str, str], start_url: str | None = None) -> Plan:
    return Plan(slug, tuple(plan_step(step, proc, params, start_url) for step in proc.steps),
                tuple(proc.scope or ()))
