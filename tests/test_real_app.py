"""A real third-party web application, taught and replayed across a real
upgrade: Django's admin taught on the LTS (4.2) and replayed there, then the
same project and database migrated forward (``manage.py migrate``) to the
newest Django this Python installs and replayed again. Each Django lives in
its own virtual environment (tests/realapps.py, cached under build/). Nothing
in it was written for teachd: the sign-in form, the uppercase "ADD GROUP" link
next to a sidebar "Add" link with the same address, the permissions filter
that rebuilds its list on keystrokes, and the permission widget's "Choose"
control, a link on 4.2 and a "Choose selected permissions" button on 5.2.

The judge is Django's own database, never teachd's report.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from teachd.demo.sampleapp.judge import teachd_env
from tests.conftest import all_bytes_under
from tests.desktop import Teach
from tests.drift_suite import replay_cli
from tests.realapps import Served, manage, serve, venv_python, version_of

ADMIN_PASSWORD = "Dj4ngo-admin-S3cret"
TASK = "Create an auditors group in Django admin"
SLUG = "taught-create-an-auditors-group-in-django-admin"
PERMS = {"view user": "Can view user", "change user": "Can change user"}
DEMONSTRATED = ["change_user", "view_user"]


def groups(app: Served) -> dict[str, list[str]]:
    """Every group in Django's database with its permissions' codenames."""
    out: dict[str, list[str]] = {}
    for name, code in app.query(
            "select g.name, p.codename from auth_group g left join auth_group_permissions gp"
            " on gp.group_id = g.id left join auth_permission p on p.id = gp.permission_id"):
        out.setdefault(str(name), [])
        if code:
            out[str(name)].append(str(code))
    return {k: sorted(v) for k, v in out.items()}


@dataclass
class DjangoProject:
    folder: Path
    lts: Path  # the interpreters of the two virtual environments
    newest: Path


@pytest.fixture(scope="module")
def django_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DjangoProject]:
    """A fresh project made and migrated by Django 4.2, with one superuser."""
    lts, newest = venv_python("django-4.2"), venv_python("django-new")
    assert version_of(lts, "django").startswith("4.2.")
    assert tuple(int(n) for n in version_of(newest, "django").split(".")[:2]) >= (5, 2)
    folder = tmp_path_factory.mktemp("django")
    subprocess.run([str(lts), "-m", "django", "startproject", "adminsite", str(folder)],
                   check=True, capture_output=True, timeout=60)
    manage(lts, folder, "migrate", "--noinput")
    manage(lts, folder, "createsuperuser", "--noinput", "--username", "admin", "--email", "admin@example.com",
           DJANGO_SUPERUSER_PASSWORD=ADMIN_PASSWORD)
    yield DjangoProject(folder, lts, newest)


def demonstrate(teach: Teach) -> None:
    """A person signs in and creates the group on Django 4.2, over the DevTools port."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{teach.cdp_port}")
        context = browser.contexts[0]
        page = context.pages[0]
        page.wait_for_selector("#id_username")

        def type_into(selector: str, text: str, replace: bool = False) -> None:
            page.click(selector)
            if replace:
                page.keyboard.press("Control+a")
            page.keyboard.type(text, delay=15)

        type_into("#id_username", "admin")
        type_into("#id_password", ADMIN_PASSWORD)
        page.keyboard.press("Enter")  # signs in from the field, as people do: a key step
        page.wait_for_url("**/admin/")
        page.locator("#content-main").get_by_role("link", name="Groups", exact=True).click()
        page.wait_for_url("**/admin/auth/group/")
        page.get_by_role("link", name="Add group").click()  # shown as ADD GROUP
        page.wait_for_url("**/admin/auth/group/add/")
        type_into("#id_name", "Auditors")
        for query, label in PERMS.items():
            type_into("#id_permissions_input", query, replace=True)
            page.get_by_role("option", name=label).click()
            page.locator("#id_permissions_add_link").click()  # 4.2: a link named "Choose"
        page.get_by_role("button", name="Save", exact=True).click()
        page.wait_for_url("**/admin/auth/group/")
        teach.wait_for(lambda evs: sum(e["type"] == "page" and e["url"].endswith("/admin/auth/group/")
                                       for e in evs) >= 2)  # the list, and the list after saving
        for p in context.pages:
            p.close()


def test_django_admin_task_taught_on_the_lts_replays_there_and_after_the_upgrade(
        django_project: DjangoProject, tmp_path: Path) -> None:
    env = teachd_env(tmp_path / "home", tmp_path)
    (tmp_path / "home").mkdir(mode=0o700)
    with serve(django_project.lts, django_project.folder) as app:
        teach = Teach(env, TASK, app.url + "/admin/login/", "--headless", "--no-os-input")
        demonstrate(teach)
        code, out, err = teach.finish()
        assert code == 0, err
        assert json.loads(out)["slug"] == SLUG
        assert groups(app) == {"Auditors": DEMONSTRATED}  # the demonstration
        port = app.port

        # Replay on the same, unchanged app, signed out, as another group name.
        code, result, stderr = replay_cli(env, "--param", "name=Reviewers", password=ADMIN_PASSWORD, slug=SLUG)
        assert code == 0 and result["status"] == "success", (result.get("message"), stderr[-2000:])
        assert groups(app) == {"Auditors": DEMONSTRATED, "Reviewers": DEMONSTRATED}
        # The sidebar's "Add" link leads to the same address as "ADD GROUP": the
        # replay clicked the one whose name was demonstrated.
        add_step = next(s for s in result["steps"] if "Add group" in s["detail"])
        assert "role" in add_step["via"]
        assert any(s["action"] == "press" and s["status"] == "ok" for s in result["steps"])  # Enter, as a key

    # The upgrade, as a site does it: the same project and database, migrated
    # forward by the new Django, then served by it.
    manage(django_project.newest, django_project.folder, "migrate", "--noinput")
    with serve(django_project.newest, django_project.folder, port) as app:
        code, result, stderr = replay_cli(env, "--param", "name=Inspectors", password=ADMIN_PASSWORD, slug=SLUG)
        halted = next((s for s in result.get("steps", []) if s["status"] != "ok"), None)
        assert code == 0 and result["status"] == "success", (result.get("message"), halted, groups(app))
        assert groups(app) == {"Auditors": DEMONSTRATED, "Reviewers": DEMONSTRATED, "Inspectors": DEMONSTRATED}
        assert app.query("select username from auth_user") == [("admin",)]  # nothing else created
    assert ADMIN_PASSWORD.encode() not in all_bytes_under(tmp_path / "home")
