"""The "Publish a post" task (issue 23's rich app): taught once through the
real recorder, replayed by teachd on every drift variant of the CMS pages,
each run judged by the app's saved state — the post's title AND body as
typed, the collection, nothing else. Plus the fixture's own adversarial
properties, pinned so a change to the app cannot quietly make it easy."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from teachd.demo.sampleapp import PostsVariant, SampleApp
from teachd.demo.sampleapp.judge import HALTED, RIGHT, WRONG
from teachd.demo.sampleapp.server import USER, VENDOR
from tests.drift_suite import POSTS_EXPECTED, POSTS_SLUG, judge_posts, posts_app
from tests.posts_task import PASSWORD, copy_home, replay_posts, teach_posts


@pytest.fixture(scope="module")
def taught_posts(tmp_path_factory: pytest.TempPathFactory):
    return teach_posts(tmp_path_factory.mktemp("taught-posts"))


@pytest.mark.parametrize("variant", list(POSTS_EXPECTED))
def test_posts_replay_on_drifted_cms_is_right_or_halts_with_zero_wrong(taught_posts, tmp_path: Path,
                                                                        variant: str) -> None:
    env = copy_home(taught_posts, tmp_path)
    timeout = "3" if POSTS_EXPECTED[variant] == RIGHT else "1.5"
    with posts_app(PASSWORD, variant, taught_posts.port) as app:
        code, out, err = replay_posts(env, "--step-timeout", timeout)
        verdict = judge_posts(out.get("status", ""), app.state)
        saved = list(app.state.posts)
    assert verdict.wrong == [], (verdict.wrong, out.get("message"))
    assert verdict.verdict == POSTS_EXPECTED[variant], (out.get("message"), err[-1500:])
    if POSTS_EXPECTED[variant] == RIGHT:
        assert code == 0 and out["skills"][POSTS_SLUG] >= 1
    else:
        assert code == 1 and saved == []  # halted before Publish: nothing published


def test_publish_before_the_editor_syncs_saves_an_empty_body_that_the_judge_calls_wrong() -> None:
    """The trap the task is built around: the real Quill editor copies its
    content into the form's hidden input only once typing has paused for its
    debounce (250 ms; 1 s in slow_editor), so a Publish sooner saves an empty
    body (and a run that then says success is wrong); after it, the body is
    saved. Timed on the page's own clock, so a loaded machine cannot flip it."""
    from playwright.sync_api import sync_playwright

    from recorder.browser import chromium_path

    typed = "Join us on Saturday for the harbour clean-up."
    with SampleApp(password=PASSWORD) as base, \
            SampleApp(password=PASSWORD, posts_variant=PostsVariant(slow_editor=True)) as slow, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(None, headless=True), headless=True)
        try:
            for app, debounce_ms in ((base, 250), (slow, 1000)):
                page = browser.new_context().new_page()  # a context each: cookies ignore the port
                page.goto(app.url + "/posts/new")
                page.fill("#email", USER)
                page.fill("#password", PASSWORD)
                page.get_by_role("button", name="Sign in").click()
                page.wait_for_url("**/posts/new")
                # Publish in the same task as the edit: inside any debounce window.
                page.evaluate("""(text) => {
                    Quill.find(document.querySelector('#editor')).setText(text);
                    document.querySelector("[data-k='post.publish']").click();
                }""", typed)
                page.wait_for_url("**/posts/1*")
                page.goto(app.url + "/posts/new")
                page.fill("#post-title", "Harbour clean-up")
                page.locator(".ql-editor").click()
                page.evaluate("""() => document.querySelector('.ql-editor').addEventListener('input',
                    () => { window.lastInput = performance.now(); })""")
                page.keyboard.type(typed)
                # the sync after the last key (on a busy machine a pause between two keys
                # can outlast the debounce: a sync of part of the text comes first)
                filled = page.wait_for_function(
                    "(end) => document.querySelector('input[name=body]').value.includes(end) && performance.now()",
                    arg=typed.split()[-1]).json_value()  # its last word (spaces may come as &nbsp;)
                assert filled - page.evaluate("window.lastInput") >= debounce_ms - 5
                page.locator("[data-k='post.more']").click()
                with page.expect_navigation():
                    page.get_by_role("button", name="Publish").click()
        finally:
            browser.close()
        for app in (base, slow):
            assert [p["body_text"] for p in app.state.posts] == ["", typed]
            app.state.posts.pop()
            assert judge_posts("success", app.state).verdict == WRONG


def test_the_rich_text_editor_is_the_vendored_quill_served_without_network() -> None:
    """Quill 2's built file, its licence beside it; the app serves exactly the
    two files its pages load from vendor/, and nothing else there."""
    assert "Copyright (c) 2017-2024, Slab" in (VENDOR / "quill" / "LICENSE").read_text()
    with SampleApp(password=PASSWORD) as app:
        js = urllib.request.urlopen(app.url + "/vendor/quill/quill.js", timeout=10)
        assert js.read() == (VENDOR / "quill" / "quill.js").read_bytes()
        assert js.headers["Content-Type"].startswith("text/javascript")
        css = urllib.request.urlopen(app.url + "/vendor/quill/quill.snow.css", timeout=10).read()
        assert b".ql-snow" in css
        opener = urllib.request.build_opener(_NoRedirect)
        for path in ("/vendor/quill/LICENSE", "/vendor/quill/../server.py", "/vendor/quill/quill.js.map"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                opener.open(app.url + path, timeout=10)
            assert refused.value.code in (303, 404)  # sent to sign in, or not found: never the file
    assert b"Quill Editor v2." in (VENDOR / "quill" / "quill.js.LICENSE.txt").read_bytes()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return None


def test_sign_in_returns_to_the_cms_page_asked_for_and_nowhere_else() -> None:
    opener = urllib.request.build_opener(_NoRedirect)
    with SampleApp(password=PASSWORD) as app:
        with pytest.raises(urllib.error.HTTPError) as sent:
            opener.open(app.url + "/posts/new", timeout=10)
        assert sent.value.headers["Location"] == "/login?next=/posts/new"
        for nxt, lands in (("/posts/new", "/posts/new"), ("//evil.example/posts", "/dashboard"),
                           ("https://evil.example/posts", "/dashboard"), ("/audit", "/dashboard")):
            form = urllib.parse.urlencode({"email": USER, "password": PASSWORD, "next": nxt}).encode()
            with pytest.raises(urllib.error.HTTPError) as signed_in:
                opener.open(app.url + "/login", data=form, timeout=10)
            assert signed_in.value.headers["Location"] == lands
        page = urllib.request.urlopen(app.url + "/login?next=//evil.example", timeout=10).read().decode()
        assert "name='next'" not in page
        state = json.loads(urllib.request.urlopen(app.url + "/api/state", timeout=10).read())
        assert state["posts"] == [] and state["collections"] == []


def test_posts_judge_counts_a_halt_before_publish_as_halted_and_a_wrong_click_as_wrong() -> None:
    with SampleApp(password=PASSWORD) as app:
        assert judge_posts("failure", app.state).verdict == HALTED
        assert judge_posts("success", app.state).verdict == WRONG  # success without the effect
        app.state.clicks.append("decoy.share /posts/new")
        assert judge_posts("failure", app.state).wrong == ["clicked decoy.share"]
