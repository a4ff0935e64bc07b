"""A real content management system with a rich-text editor, taught once and
replayed there and across its upgrade: Wagtail (from PyPI, each version in its
own virtual environment, tests/realapps.py), on loopback with its own SQLite.

The project is Wagtail's own starter (``wagtail start``) with the tutorial's
first change: the home page type gets a rich-text ``body``. Nothing in the
admin was written for teachd: the body is a Draft.js editor (Draftail) that
copies its state into a hidden input; Publish sits behind the footer's
icon-only "more actions" toggle (on 5.2 a bare ``<svg>`` in a ``<div>``, on
the newest a ``<button>`` named "More actions"); the collection form submits
with ``<input type=submit value=Create>`` on 5.2 and ``<button>Create</button>``
on the newest.

The judge is Wagtail's own database: the page is live with the title AND its
body holds the sentence; the collection exists; nothing else was created.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from teachd.demo.sampleapp.judge import teachd_env
from tests.conftest import all_bytes_under
from tests.desktop import Teach, free_port
from tests.drift_suite import replay_cli
from tests.realapps import Served, cached_site, manage, serve, venv_python, version_of

ADMIN_PASSWORD = "W4gtail-admin-S3cret"
TASK = "Publish a page and add a collection in Wagtail"
HOME_PAGE_MODELS = '''from wagtail.admin.panels import FieldPanel
from wagtail.fields import RichTextField
from wagtail.models import Page


class HomePage(Page):
    body = RichTextField(blank=True)

    content_panels = Page.content_panels + [FieldPanel("body")]
'''
TAUGHT = ("Open day", "Join us on Saturday for the open day.", "Press kit")  # title, sentence, collection


@dataclass
class WagtailProject:
    folder: Path
    old: Path  # the interpreters of the two virtual environments
    new: Path
    home_id: int = 0
    env: dict[str, str] = field(default_factory=dict)  # teachd's, once taught
    slug: str = ""
    params: dict[str, dict[str, Any]] = field(default_factory=dict)  # the skill's, by name
    port: int = 0


def pages(app: Served) -> dict[str, tuple[bool, str]]:
    """Every page under the home page: title → (live, body as saved)."""
    rows = app.query("select p.title, p.live, h.body from wagtailcore_page p left join home_homepage h"
                     " on h.page_ptr_id = p.id where p.depth > 2")
    return {str(t): (bool(live), str(body or "")) for t, live, body in rows}


def collections(app: Served) -> list[str]:
    return sorted(str(n) for (n,) in app.query("select name from wagtailcore_collection where depth > 1"))


def make_site(old: Path) -> Callable[[Path], None]:
    """Wagtail's starter project with the tutorial's rich-text body, migrated, one superuser."""
    def make(folder: Path) -> None:
        subprocess.run([str(old.parent / "wagtail"), "start", "cms", str(folder)], check=True,
                       capture_output=True, timeout=60)
        (folder / "home" / "models.py").write_text(HOME_PAGE_MODELS)
        manage(old, folder, "makemigrations", "home")
        manage(old, folder, "migrate", "--noinput")
        manage(old, folder, "createsuperuser", "--noinput", "--username", "admin", "--email", "admin@example.com",
               DJANGO_SUPERUSER_PASSWORD=ADMIN_PASSWORD)
    return make


@pytest.fixture(scope="module")
def wagtail(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WagtailProject]:
    """A fresh copy of the Wagtail 5.2 site (built once, cached under build/)."""
    old, new = venv_python("wagtail-old"), venv_python("wagtail-new")
    version = version_of(old, "wagtail")
    assert version.startswith("5.2")
    assert int(version_of(new, "wagtail").split(".")[0]) >= 7
    key = f"wagtail {version}\n{HOME_PAGE_MODELS}{ADMIN_PASSWORD}\n"
    folder = cached_site("wagtail-old-site", key, make_site(old), tmp_path_factory.mktemp("wagtail"))
    project = WagtailProject(folder, old, new, port=free_port())
    with sqlite3.connect(folder / "db.sqlite3") as db:
        project.home_id = int(db.execute("select id from wagtailcore_page where depth = 2").fetchone()[0])
    yield project


def demonstrate(teach: Teach) -> None:
    """A person on Wagtail 5.2: signs in, writes and publishes a page, adds a collection."""
    from playwright.sync_api import sync_playwright

    title, sentence, collection = TAUGHT
    with sync_playwright() as pw:
        browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{teach.cdp_port}")
        context = browser.contexts[0]
        page = context.pages[0]
        page.wait_for_selector("#id_username")

        def type_into(selector: str, text: str) -> None:
            page.click(selector)
            page.keyboard.type(text, delay=15)

        type_into("#id_username", "admin")
        type_into("#id_password", ADMIN_PASSWORD)
        page.keyboard.press("Enter")
        page.wait_for_url("**/admin/pages/add/home/homepage/*/")  # one page type: straight to its form
        type_into("#id_title", title)
        type_into(".public-DraftEditor-content", sentence)  # Draftail's editable
        page.wait_for_timeout(600)  # a person reads what they typed; the editor syncs its input
        page.locator("footer .dropdown-toggle svg").click()  # the icon itself, as a person aims
        page.get_by_role("button", name="Publish", exact=True).click()
        page.wait_for_url("**/admin/pages/*/")
        page.get_by_role("button", name="Settings").click()  # the sidebar's menu
        page.get_by_role("link", name="Collections").click()
        page.wait_for_url("**/admin/collections/")
        page.get_by_role("link", name="Add a collection").click()
        page.wait_for_url("**/admin/collections/add/")
        type_into("#id_name", collection)
        page.select_option("#id_parent", label="Root")  # required, nothing chosen at first
        page.locator("input[type=submit][value=Create]").click()
        page.wait_for_url("**/admin/collections/")
        teach.wait_for(lambda evs: sum(e["type"] == "page" and e["url"].endswith("/admin/collections/")
                                       for e in evs) >= 2)  # the list, and the list after creating
        for p in context.pages:
            p.close()


@pytest.fixture(scope="module")
def taught(wagtail: WagtailProject, tmp_path_factory: pytest.TempPathFactory) -> WagtailProject:
    """The task taught once on Wagtail 5.2, judged by its database."""
    home = tmp_path_factory.mktemp("teachd") / "home"
    home.mkdir(mode=0o700)
    wagtail.env = teachd_env(home, home.parent)
    with serve(wagtail.old, wagtail.folder, wagtail.port) as app:
        teach = Teach(wagtail.env, TASK, f"{app.url}/admin/pages/{wagtail.home_id}/add_subpage/", "--headless",
                      "--no-os-input")
        demonstrate(teach)
        code, out, err = teach.finish()
        assert code == 0, err
        title, sentence, collection = TAUGHT
        live, body = pages(app)[title]
        assert live and sentence in body, body  # the demonstration published what was typed
        assert collections(app) == [collection]
    wagtail.slug = json.loads(out)["slug"]
    wagtail.params = json.loads(read_skill(wagtail, "references/steps.json"))["parameters"]
    return wagtail


def read_skill(project: WagtailProject, path: str = "") -> str:
    """A file of the taught skill as ``teachd skills read`` prints it."""
    url = f"skill://{project.slug}" + (f"/{path}" if path else "")
    done = subprocess.run([sys.executable, "-m", "teachd", "skills", "read", url], env=project.env,
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


def param_for(project: WagtailProject, default: str) -> str:
    """The skill's parameter whose default is what the person typed there."""
    names = [name for name, p in project.params.items() if p.get("default") == default]
    assert len(names) == 1, project.params
    return names[0]


def run(project: WagtailProject, title: str, sentence: str, collection: str) -> tuple[int, dict[str, Any], str]:
    """``teachd run`` with this page and collection, the way a user passes them."""
    args = [f"{param_for(project, taught)}={now}" for taught, now in zip(TAUGHT, (title, sentence, collection), strict=True)]
    args = [a for arg in args for a in ("--param", arg)]
    return replay_cli(project.env, *args, password=ADMIN_PASSWORD, slug=project.slug)


def judge(app: Served, code: int, result: dict[str, Any], stderr: str, want_pages: dict[str, str],
          want_collections: list[str]) -> None:
    """Right means: teachd says success AND Wagtail's database holds exactly
    the pages (live, body with the sentence) and collections expected."""
    halted = next((s for s in result.get("steps", []) if s["status"] != "ok"), None)
    state = (pages(app), collections(app))
    assert code == 0 and result["status"] == "success", (result.get("message"), halted, state, stderr[-1500:])
    assert {t: live for t, (live, _) in state[0].items()} == dict.fromkeys(want_pages, True), state
    for title, sentence in want_pages.items():
        assert sentence in state[0][title][1], (title, state[0][title])
    assert state[1] == sorted(want_collections), state


def test_wagtail_rich_text_body_is_named_from_its_label_never_from_the_typed_sentence(
        taught: WagtailProject) -> None:
    sentence = TAUGHT[1]
    assert param_for(taught, sentence) == "body", taught.params  # the field's label is "Body"
    assert sentence not in taught.params[param_for(taught, sentence)]["describe"]
    assert sentence not in read_skill(taught, "references/anchors.json")  # no locator, no evidence
    # Only as the parameter's default: once in steps.json, once in SKILL.md.
    assert read_skill(taught, "references/steps.json").count(sentence) == 1
    assert read_skill(taught).count(sentence) == 1


def test_wagtail_page_and_collection_taught_once_replay_on_the_unchanged_cms(taught: WagtailProject) -> None:
    with serve(taught.old, taught.folder, taught.port) as app:
        code, result, stderr = run(taught, "Spring fair", "Bring a friend to the spring fair.", "Logos")
        judge(app, code, result, stderr, {TAUGHT[0]: TAUGHT[1], "Spring fair": "Bring a friend to the spring fair."},
              [TAUGHT[2], "Logos"])
    assert ADMIN_PASSWORD.encode() not in all_bytes_under(Path(taught.env["TEACHD_HOME"]))


def test_wagtail_task_taught_on_5_2_replays_after_the_upgrade(taught: WagtailProject) -> None:
    manage(taught.new, taught.folder, "migrate", "--noinput")  # the upgrade: same project, same database
    with serve(taught.new, taught.folder, taught.port) as app:
        before = pages(app), collections(app)
        code, result, stderr = run(taught, "Summer gala", "Tickets for the summer gala are on sale.", "Banners")
        judge(app, code, result, stderr,
              {**{t: b for t, (_, b) in before[0].items()}, "Summer gala": "Tickets for the summer gala are on sale."},
              [*before[1], "Banners"])
