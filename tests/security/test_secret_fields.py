"""A secret goes only into the field its taught skill masked, and never
comes back (issue 22, row 6), tried as an agent would.

The agent has ``{{secret:password}}`` at hand through ``computer_act``. It
tries to type it where it could read it back — a plain text box, by ``ref``,
by ``role`` + ``name``, by the anchor of an unmasked step, mixed into other
text — and every try is refused before anything is asked or typed, the
fields staying empty. Then, after the one legitimate type (the masked step's
own anchor), it tries to read the value back: the page echoes it into its
title, its text and the next page's address; a snapshot, the results, the
errors and the question put to the person hold ``[secret]`` instead, and a
screenshot shows the password fields covered by the mask colour. The page
is a loopback server of the attacker's (``Trap``) on the taught origin.
"""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path
from typing import Any

from teachd.mcp.acts import MASK_COLOR
from tests.conftest import all_bytes_under
from tests.sample_task import PASSWORD, SLUG
from tests.security.people_and_traps import PRESET, Trap
from tests.test_mcp import Person, session, text, with_secret

MASKED, EMAIL, SIGN_IN = "a2", "a1", "a3"  # the taught sign-in's anchors: the password step's is masked


async def _act(client: Any, **args: Any) -> Any:
    return await client.call_tool("computer_act", args)


def _line(snapshot: str, name: str) -> str:
    found = re.search(rf'textbox "{name}" \[[^\n]*', snapshot)
    assert found, snapshot
    return found.group(0)


def test_a_secret_typed_anywhere_but_its_masked_field_is_refused_before_anything_is_typed(taught) -> None:
    env, port = taught
    person = Person("accept")

    async def go(trap: Trap) -> tuple[list[Any], str, int]:
        async with session(with_secret(env), person, step_timeout=2) as client:
            await _act(client, action="goto", url=f"{trap.url}/login")
            snap = text(await _act(client, action="snapshot"))
            refs = {name: re.search(rf'textbox "{name}" \[ref=(e\d+)\]', snap).group(1)  # type: ignore[union-attr]
                    for name in ("Email", "Password", "Comment")}
            asked = len(person.asked)
            tries = [
                {"role": "textbox", "name": "Comment", "text": "{{secret:password}}"},
                {"role": "textbox", "name": "Email", "text": "{{ secret:password }}"},
                {"role": "textbox", "name": "Password", "text": "{{secret:password}}"},  # the right field, by role
                {"ref": refs["Password"], "text": "{{secret:password}}"},  # the right field, by ref
                {"ref": refs["Comment"], "text": "{{secret:password}}"},
                {"skill": SLUG, "anchor": EMAIL, "text": "{{secret:password}}"},  # an unmasked step's anchor
                {"skill": SLUG, "anchor": SIGN_IN, "text": "{{secret:password}}"},  # a button's
                {"skill": SLUG, "anchor": MASKED, "text": "me:{{secret:password}}"},  # mixed into other text
                {"skill": SLUG, "anchor": MASKED, "text": "{{secret:password}}{{secret:password}}"},
                {"skill": SLUG, "anchor": MASKED, "text": "{{secret:otp}}"},  # a secret the step does not type
                {"skill": "taught-not-loaded", "anchor": MASKED, "text": "{{secret:password}}"},
            ]
            results = [await _act(client, action="type", **t) for t in tries]
            after = text(await _act(client, action="snapshot"))
            return results, after, len(person.asked) - asked

    with Trap(port=port, echo=True) as trap:
        results, after, questions = asyncio.run(go(trap))
        log = trap.received()
    for r in results:
        assert r.is_error and "nothing was typed" in text(r), text(r)
        assert "masked" in text(r) or "not loaded" in text(r), text(r)
    assert questions == 1  # only the last snapshot asked: no refused type ever reached the person
    for name in ("Email", "Password", "Comment"):
        assert ":" not in _line(after, name).split("]", 1)[-1], _line(after, name)  # every field still empty
    assert "Typed" not in after and PASSWORD not in after and PASSWORD not in log


def test_after_a_masked_type_no_snapshot_result_error_or_question_holds_the_secret(taught) -> None:
    env, port = taught
    person = Person("accept", "accept", "accept", "accept", "accept", "accept", "accept", "decline")

    async def go(trap: Trap) -> list[str]:
        async with session(with_secret(env), person, step_timeout=2) as client:
            out = [await _act(client, action="goto", url=f"{trap.url}/login"),
                   await _act(client, action="type", skill=SLUG, anchor=MASKED, text="{{secret:password}}"),
                   await _act(client, action="snapshot"),  # the page echoes it into its title and text
                   await _act(client, action="click", role="link", name="Continue"),  # ...and the next address
                   await _act(client, action="snapshot"),
                   await _act(client, action="screenshot"),
                   await _act(client, action="snapshot"),
                   await _act(client, action="click", role="textbox", name="Note")]  # declined: an error
            said = [text(r) for r in out]
            assert [r.is_error for r in out] == [False] * 7 + [True], said
            return said

    with Trap(port=port, echo=True) as trap:
        said = asyncio.run(go(trap))
        log = trap.received()
    assert "pw=" + PASSWORD in log  # the page did read it (the attack was real)...
    everything = "\n".join(said + person.asked)
    assert PASSWORD not in everything and PRESET not in everything  # ...and nothing handed back holds it
    assert "Title: Typed [secret]" in said[1] and "You typed [secret]" in said[2]
    assert "pw=[secret]" in said[3] and "pw=[secret]" in said[-1] and "not approved" in said[-1]
    assert 'textbox "Saved password"' in said[4] and 'textbox "Note"' in said[4] and "plain note" in said[4]
    assert PASSWORD.encode() not in all_bytes_under(Path(env["TEACHD_HOME"]))


def test_a_screenshot_covers_every_password_field_and_the_field_a_secret_went_into(taught) -> None:
    from PIL import Image

    env, port = taught

    async def go(trap: Trap) -> list[bytes]:
        async with session(with_secret(env), Person("accept"), step_timeout=2) as client:
            await _act(client, action="goto", url=f"{trap.url}/login")
            await _act(client, action="type", skill=SLUG, anchor=MASKED, text="{{secret:password}}")
            first = await _act(client, action="screenshot")
            await _act(client, action="goto", url=f"{trap.url}/welcome")
            second = await _act(client, action="screenshot")
            return [next(c.data for c in r.content if getattr(c, "data", None)) for r in (first, second)]

    import base64

    with Trap(port=port, echo=True) as trap:
        shots = [Image.open(io.BytesIO(base64.b64decode(s))).convert("RGB") for s in asyncio.run(go(trap))]
    mask = tuple(int(MASK_COLOR[i:i + 2], 16) for i in (1, 3, 5))
    for shot in shots:
        covered = [(x, y) for y in range(shot.height) for x in range(0, shot.width, 2)
                   if shot.getpixel((x, y)) == mask]
        assert covered, "no field was masked"
        xs, ys = [x for x, _ in covered], [y for _, y in covered]
        box = (min(xs), min(ys), max(xs), max(ys))
        assert box[2] - box[0] > 60 and box[3] - box[1] > 8, box  # a field's size, not a stray pixel
        inside = [shot.getpixel((x, y)) for y in range(box[1], box[3] + 1) for x in range(box[0], box[2] + 1)]
        assert all(p == mask for p in inside), "the masked field shows something through the mask"


def test_a_replay_never_reports_the_secret_it_typed(taught) -> None:
    """``run_skill``: the page shows the typed password in the title the
    success check reads and in its text; the outcome, its steps, the run's
    record and the snapshot after it say ``[secret]``."""
    from teachd.store import open_store
    from teachd.store.runs import RunStore
    from tests.security.people_and_traps import aimed_at
    from tests.test_mcp import settings_of

    env, port = taught
    store = open_store(settings_of(env))
    store.update(SLUG, lambda current: aimed_at(current, port, port))  # the sign-in only, ending on the dashboard

    async def go() -> list[str]:
        async with session(with_secret(env), Person("accept"), step_timeout=2) as client:
            ran = await client.call_tool("run_skill", {"slug": SLUG})
            return [text(ran), text(await _act(client, action="snapshot"))]

    with Trap(port=port, echo=True) as trap:
        ran, snap = asyncio.run(go())
    assert trap.posted_password == PASSWORD  # the page did get it, and showed it back...
    assert ": success" in ran and "Expenses for [secret]" in ran, ran  # ...the note on the title says [secret]
    assert "Signed in with [secret]" in snap
    assert PASSWORD not in ran + snap
    records = RunStore(store).recent()  # the replay's run and the session's, opened
    assert any(r["slug"] == SLUG and r["status"] == "success" for r in records)
    assert PASSWORD not in repr(records) and "[secret]" in repr(records)
