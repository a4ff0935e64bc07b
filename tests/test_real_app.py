"""A real third-party web application, taught and replayed: Django's admin
(installed from PyPI with the test extras), run on loopback with its own
SQLite database. Nothing in it was written for teachd: the sign-in form, the
uppercase "ADD GROUP" link next to a sidebar "Add" link with the same
address, and the permissions filter that rebuilds its list on keystrokes.

The judge is Django's own database, never teachd's report.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from teachd.demo.sampleapp.drift import replay_cli, teachd_env
from tests.conftest import all_bytes_under
from tests.desktop import Teach, free_port

ADMIN_PASSWORD = "Dj4ngo-admin-S3cret"
TASK = "Create an auditors group in Django admin"
SLUG = "taught-create-an-auditors-group-in-django-admin"
PERMS = {"view user": "Can view user", "change user": "Can change user"}


@dataclass
class DjangoAdmin:
    folder: Path
    url: str

    def groups(self) -> dict[str, list[str]]:
        with sqlite3.connect(self.folder / "db.sqlite3") as db:
            rows = db.execute(
                "select g.name, p.codename from auth_group g left join auth_group_permissions gp"
                " on gp.group_id = g.id left join auth_permission p on p.id = gp.permission_id"
            ).fetchall()
        out: dict[str, list[str]] = {}
        for name, code in rows:
            out.setdefault(name, [])
            if code:
                out[name].append(code)
        return {k: sorted(v) for k, v in out.items()}


def _manage(folder: Path, *args: str, **env: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=folder, check=True, capture_output=True,
                   env={**teachd_env(folder, folder), **env}, timeout=180)


@pytest.fixture(scope="module")
def django_admin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DjangoAdmin]:
    folder = tmp_path_factory.mktemp("django")
    subprocess.run([sys.executable, "-m", "django", "startproject", "adminsite", str(folder)],
                   check=True, capture_output=True, timeout=60)
    _manage(folder, "migrate", "--noinput")
    _manage(folder, "createsuperuser", "--noinput", "--username", "admin", "--email", "admin@example.com",
            DJANGO_SUPERUSER_PASSWORD=ADMIN_PASSWORD)
    port = free_port()
    server = subprocess.Popen([sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
                              cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=teachd_env(folder, folder))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url + "/admin/login/", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise RuntimeError("Django's runserver did not start") from None
            time.sleep(0.2)
    try:
        yield DjangoAdmin(folder, url)
    finally:
        server.terminate()
        server.wait(10)


def demonstrate(teach: Teach) -> None:
    """A person signs in and creates the group, over the DevTools port."""
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
            page.get_by_role("button", name="Choose selected permissions").click()
        page.get_by_role("button", name="Save", exact=True).click()
        page.wait_for_url("**/admin/auth/group/")
        teach.wait_for(lambda evs: sum(e["type"] == "page" and e["url"].endswith("/admin/auth/group/")
                                       for e in evs) >= 2)  # the list, and the list after saving
        for p in context.pages:
            p.close()


def test_django_admin_task_taught_once_replays_on_the_unchanged_app(django_admin: DjangoAdmin,
                                                                     tmp_path: Path) -> None:
    env = teachd_env(tmp_path / "home", tmp_path)
    (tmp_path / "home").mkdir(mode=0o700)
    teach = Teach(env, TASK, django_admin.url + "/admin/login/", "--headless", "--no-os-input")
    demonstrate(teach)
    code, out, err = teach.finish()
    assert code == 0, err
    assert json.loads(out)["slug"] == SLUG
    assert django_admin.groups() == {"Auditors": ["change_user", "view_user"]}  # the demonstration

    # Replay on the same, unchanged app, signed out, as another group name.
    code, result, stderr = replay_cli(env, "--param", "name=Reviewers", password=ADMIN_PASSWORD, slug=SLUG)
    assert code == 0 and result["status"] == "success", (result.get("message"), stderr[-2000:])
    assert django_admin.groups() == {"Auditors": ["change_user", "view_user"],
                                     "Reviewers": ["change_user", "view_user"]}
    # The sidebar's "Add" link leads to the same address as "ADD GROUP": the
    # replay clicked the one whose name was demonstrated.
    add_step = next(s for s in result["steps"] if "Add group" in s["detail"])
    assert "role" in add_step["via"]
    assert any(s["action"] == "press" and s["status"] == "ok" for s in result["steps"])  # Enter, replayed as a key
    assert ADMIN_PASSWORD.encode() not in all_bytes_under(tmp_path / "home")
