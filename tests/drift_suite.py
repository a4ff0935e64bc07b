"""The drift suite's tasks: the sample task (and the posts task) taught
through ``teachd teach``, replayed as a user runs ``teachd run``, and what
each variant of the app must come to — for the tests and for ``bench/``
(none of it ships: the wheel holds the product only)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teachd.demo.sampleapp.judge import HALTED, RIGHT, WRONG, Judgement, teachd_env
from teachd.demo.sampleapp.posts import PostsVariant
from teachd.demo.sampleapp.script import TASK, Person, demonstrate
from teachd.demo.sampleapp.server import SampleApp, State
from teachd.teach.process import TeachProcess
from tests.desktop import Teach
from tests.ports import free_port

SLUG = "taught-file-a-report-and-add-approvers"  # what teaching TASK saves

# The second task: a post with a rich-text body, published from an icon-only
# menu, then a collection (see posts.py).
POSTS_TASK = "Publish a post"
POST = {"title": "Harbour clean-up", "body": "Join us on Saturday for the harbour clean-up."}
COLLECTION = "Community"
POSTS_START = "/posts"  # signed out, it sends the person to sign in, then back here
POSTS_TASK_CLICKS = frozenset({"login.submit", "posts.add", "post.more", "post.publish", "collections.add",
                               "collection.create"})
POSTS_FIELDS = frozenset({"login.email", "login.password", "post.title", "post.body", "collection.name"})


def demonstrate_posts(teach: TeachProcess, password: str) -> None:
    """Sign in (sent there from Posts), add a post: a title, a sentence typed
    into the rich-text body, then — after the pause a person takes, long
    enough for the editor to sync its hidden input — the footer's icon-only
    "more actions" toggle (clicked on its svg, as a person clicks the dots)
    and Publish; then Add collection, a name, Create; then close the browser."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{teach.cdp_port}")
        context = browser.contexts[0]
        person = Person(context.pages[0], 0.0)
        page, type_into = person.page, person.type_into
        person.sign_in(password, re.compile(r"^[^?]*/posts$"))  # not /login?next=/posts
        page.get_by_role("link", name="Add post").click()
        page.wait_for_url("**/posts/new")
        type_into(page.locator("#post-title"), POST["title"])
        type_into(page.locator(".ql-editor"), POST["body"])
        # A person reads what they typed before reaching for the menu: the
        # editor's debounce has copied the body into the form by then — the
        # whole of it, to its last word (on a loaded machine a stall between
        # keys syncs a part; the editor's HTML may hold its spaces as &nbsp;).
        page.wait_for_function("end => document.querySelector('input[name=body]').value.includes(end)",
                               arg=POST["body"].split()[-1])
        page.locator("[data-k='post.more'] svg").click()
        page.get_by_role("button", name="Publish").click()
        page.wait_for_url(re.compile(r"/posts/\d+$"))
        page.get_by_role("link", name="Add collection").click()
        page.wait_for_url("**/collections/new")
        type_into(page.locator("#collection-name"), COLLECTION)
        page.get_by_role("button", name="Create").click()
        page.wait_for_url(re.compile(r"/collections/\d+$"))
        done = re.compile(r"/collections/\d+$")
        teach.wait_for(lambda evs: any(e["type"] == "page" and done.search(e.get("url", "")) for e in evs))
        for p in context.pages:
            p.close()


# Variant → the outcome a careful replayer must reach. Every variant that can
# succeed must; a removed or truly ambiguous target must halt, with no effect.
EXPECTED: dict[str, str] = {
    "base": RIGHT, "renamed_ids": RIGHT, "new_theme": RIGHT, "moved_layout": RIGHT,
    "inserted_elements": RIGHT, "wrappers": RIGHT, "changed_labels": RIGHT, "link_to_button": RIGHT,
    "option_prefix": RIGHT, "below_fold": RIGHT, "decoys": RIGHT, "translated": RIGHT,
    "combination": RIGHT, "renamed_values": RIGHT, "submit_removed": HALTED, "ambiguous": HALTED,
    "submit_relabelled": HALTED, "password_relabelled": HALTED,
}
DESCRIBED: dict[str, str] = {
    "base": "the page as demonstrated",
    "renamed_ids": "every id renamed, option order changed",
    "new_theme": "new fonts, colours, paddings",
    "moved_layout": "fields, lists and menu moved",
    "inserted_elements": "new field, notice and menu entry",
    "wrappers": "extra wrapping elements",
    "changed_labels": "labels reworded, ids kept",
    "link_to_button": "action links became buttons",
    "option_prefix": "option labels gained a prefix",
    "below_fold": "targets pushed below the fold",
    "decoys": "look-alikes: 'Add', 'Submit', 'Submit draft', '… (legacy)', a 'Choose' elsewhere",
    "translated": "the UI in German, ids kept",
    "combination": "renamed ids + theme + layout + inserts + wrappers + decoys + fold",
    "renamed_values": "the menu's option values changed (new ids), labels kept",
    "submit_removed": "the 'Submit report' button is gone",
    "ambiguous": "two identical 'Save' buttons, no id to tell them apart",
    "submit_relabelled": "'Submit report' is now 'Send for approval', with no id (a repair teaches it)",
    "password_relabelled": "the password field is now 'Passphrase', new id and name (a repair teaches it)",
}


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The drift table of docs/replay.md, in Markdown."""
    lines = ["| variant | what changed | expected | result | wrong actions | halted at |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['variant']} | {DESCRIBED[r['variant']]} | {EXPECTED[r['variant']]} | "
                     f"{r['verdict']} | {len(r['wrong'])} | {r.get('halted_at') or '—'} |")
    return "\n".join(lines)


@dataclass
class Taught:
    home: Path
    port: int  # the app's port: the skill's scope is this origin
    result: dict[str, Any]


def teach_task(home: Path, password: str, env: dict[str, str] | None = None) -> Taught:
    """Record the sample task through ``teachd teach`` (headless, the person
    played over DevTools) and save the skill in ``home``."""
    port = free_port()
    with SampleApp(password=password, port=port) as app:
        teach = Teach(env or teachd_env(home), TASK, app.url + "/login", "--headless",
                             "--no-os-input")
        demonstrate(teach, password)
        code, out, err = teach.finish()
        if code != 0 or len(app.state.reports) != 1 or len(app.state.groups) != 1:
            raise RuntimeError("teaching the sample task failed: " + " ".join(err.split())[-400:])
    return Taught(home, port, json.loads(out))


def replay_cli(env: dict[str, str], *args: str, password: str | None, approvals: str = "once\n" * 80,
               slug: str = SLUG) -> tuple[int, dict[str, Any], str]:
    """``teachd run SLUG --headless --json`` as a user runs it; (exit, result, stderr)."""
    e = dict(env)
    if password is not None:
        e["TEACHD_SECRET_PASSWORD"] = password
    p = subprocess.run([sys.executable, "-m", "teachd", "run", slug, "--headless", "--json", *args],
                       input=approvals, capture_output=True, text=True, env=e, timeout=300)
    return p.returncode, (json.loads(p.stdout) if p.stdout.strip() else {}), p.stderr



# -- the second task: "Publish a post" (posts.py) ------------------------------
POSTS_SLUG = "taught-publish-a-post"
POSTS_EXPECTED: dict[str, str] = {
    "base": RIGHT, "toggle_named": RIGHT, "submit_input_to_button": RIGHT, "link_to_longer_button": RIGHT,
    "slow_editor": RIGHT, "decoy_icons": RIGHT, "toggle_removed": HALTED,
}
POSTS_DESCRIBED: dict[str, str] = {
    "base": "the CMS as demonstrated",
    "toggle_named": "the icon-only toggle is now <button>More actions</button> with the same svg",
    "submit_input_to_button": "<input type=submit value=Create> is now <button>Create</button>",
    "link_to_longer_button": "the 'Add collection' link is now a button 'Add new collection'",
    "slow_editor": "the editor syncs the form's hidden body on a 1 s debounce (was 250 ms)",
    "decoy_icons": "a second icon-only toggle (another symbol) first in the same footer",
    "toggle_removed": "the 'more actions' toggle is gone: Publish cannot be reached",
}


def posts_wrong_actions(state: State) -> list[str]:
    """Clicks and effects the posts task never asked for: any other click, a
    post whose title or body is not what was typed (an empty body above all),
    a draft, a collection with another name, or more than one of either."""
    wrong = [f"clicked {k}" for k in state.clicked() if k not in POSTS_TASK_CLICKS | POSTS_FIELDS]
    with state.lock:
        saved, collections = list(state.posts), list(state.collections)
        other = len(state.reports) + len(state.groups) + len(state.notes) + state.drafts
    for p in saved:
        got = {"title": p["title"], "body": p["body_text"]}
        if got != POST or p.get("draft"):
            wrong.append(f"saved post {got}" + (" as a draft" if p.get("draft") else ""))
    wrong += [f"saved collection {c['name']!r}" for c in collections if c["name"] != COLLECTION]
    if len(saved) > 1 or len(collections) > 1:
        wrong.append(f"saved {len(saved)} posts and {len(collections)} collections")
    if other:
        wrong.append("saved something in the expenses pages")
    return wrong


def judge_posts(status: str, state: State) -> Judgement:
    """The posts task's verdict from the app's state. A run that says it is
    done ("success", or "unverified" — done, but unchecked) without the post
    and the collection both saved is as wrong as a wrong click."""
    wrong = posts_wrong_actions(state)
    if wrong:
        return Judgement(WRONG, wrong)
    done = len(state.posts) == 1 and len(state.collections) == 1
    if status in ("success", "unverified") and done:
        return Judgement(RIGHT, [])
    if status in ("success", "unverified"):
        return Judgement(WRONG, [f"reported {status}, but the app holds no complete effect"])
    return Judgement(HALTED, [])


def teach_posts_task(home: Path, password: str, env: dict[str, str] | None = None) -> Taught:
    """Record the posts task through ``teachd teach`` (headless, the person
    played over DevTools) and save the skill in ``home``; ``result`` holds
    the recording's folder (the peers in bench/peers.py replay it too)."""
    port = free_port()
    with SampleApp(password=password, port=port) as app:
        teach = Teach(env or teachd_env(home), POSTS_TASK, app.url + POSTS_START, "--headless",
                             "--no-os-input")
        demonstrate_posts(teach, password)
        code, out, err = teach.finish()
        judged = judge_posts("success", app.state)
        if code != 0 or judged.verdict != RIGHT:
            raise RuntimeError("teaching the posts task failed: " + "; ".join(judged.wrong) + " "
                               + " ".join(err.split())[-400:])
    return Taught(home, port, json.loads(out))


def posts_app(password: str, variant: str, port: int) -> SampleApp:
    """The sample app with the posts pages drifted as ``variant`` says."""
    return SampleApp(password=password, port=port, posts_variant=PostsVariant.named(variant))
