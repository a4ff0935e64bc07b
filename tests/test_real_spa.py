"""A real single-page app nobody here wrote: optuna-dashboard, React with
MUI, installed from PyPI in its own environment (tests/realapps.py). Its
study list is a grid of cards, each with the same rename and delete icons
and nothing but its title to tell them apart; its dialogs' fields have ids
React made up (``:r8:``). A task taught once on an older release (0.13.0):
create a study, then delete another from its card's icon — two writes; the
delete dialog names only the study's id, so a wrong card would go unseen.

Judged by the app's own record (its studies, read through its API): right
where it was taught; right on a store made again with the same names under
other ids, in another order; and on the newest release (another layout,
the list sorted the other way) right, or halted before its first write
with a message that names the difference — never half a change.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ports import free_port
from tests.realapps import venv_python

TASK = "Create a study and delete another"
SLUG = "taught-create-a-study-and-delete-another"
NAMES = ("alpha-study", "bravo-study", "charlie-study")
DONE = ["alpha-study", "charlie-study", "delta-study"]
_SEED = """
import sys, optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
for name in sys.argv[2:]:
    optuna.create_study(study_name=name, storage=sys.argv[1]).optimize(lambda t: t.suggest_float("x", 0, 1), 1)
"""


class Dashboard:
    """optuna-dashboard of one environment on a new SQLite store holding
    studies named ``names``, made in that order (their ids follow it), on
    ``port`` (the skill's scope is the address it was taught on)."""

    def __init__(self, venv: str, folder: Path, names: tuple[str, ...] = NAMES, port: int | None = None) -> None:
        self.python = venv_python(venv)
        self.folder, self.names, self.port = folder, names, port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Dashboard:
        self.folder.mkdir(parents=True, exist_ok=True)
        db = self.folder / "optuna.db"
        db.unlink(missing_ok=True)
        storage = f"sqlite:///{db}"
        subprocess.run([str(self.python), "-c", _SEED, storage, *self.names], check=True, timeout=120)
        exe = self.python.parent / "optuna-dashboard"
        self.proc = subprocess.Popen([str(exe), storage, "--host", "127.0.0.1", "--port", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                self.studies()
                return self
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise
                time.sleep(0.2)

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        self.proc.terminate()
        self.proc.wait(10)

    def studies(self) -> dict[str, int]:
        """The app's own record: each study's name and id."""
        with urllib.request.urlopen(self.url + "/api/studies", timeout=10) as r:
            return {s["study_name"]: s["study_id"] for s in json.load(r)["study_summaries"]}


def demonstrate(teach: Any) -> None:
    """Create "delta-study" in the Create dialog, then delete bravo-study
    through the bin icon on its card (the second of three alike)."""
    from tests.spa_app import person_at

    with person_at(teach, clicks=5) as person:
        page = person.page
        page.locator("h5", has_text="bravo-study").wait_for()
        page.get_by_role("button", name="Create", exact=True).click()
        dialog = page.get_by_role("dialog")
        person.type_into(dialog.get_by_label("Study name"), "delta-study")
        dialog.get_by_role("button", name="Create", exact=True).click()
        page.locator("h5", has_text="delta-study").wait_for()
        page.wait_for_timeout(500)  # a person sees the dialog gone before the next click
        card = page.locator(".MuiCard-root").filter(has_text="bravo-study")
        card.get_by_role("button", name="delete study").click()
        page.get_by_role("dialog").get_by_role("button", name="Yes", exact=True).click()
        page.locator("h5", has_text="bravo-study").wait_for(state="detached")
        page.wait_for_timeout(500)


@pytest.fixture(scope="module")
def taught(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], Path, int]]:
    """(teachd's environment, a folder for the apps, the app's port) — the task taught once on 0.13.0."""
    from teachd.demo.sampleapp.judge import teachd_env
    from tests.desktop import Teach
    from tests.programs import need

    need("chromium")
    base = tmp_path_factory.mktemp("optuna")
    (base / "home").mkdir(mode=0o700)
    (base / "user").mkdir()
    env = teachd_env(base / "home", base / "user")
    with Dashboard("optuna-dashboard-old", base / "taught") as app:
        teach = Teach(env, TASK, app.url + "/dashboard", "--headless", "--no-os-input")
        try:
            demonstrate(teach)
        except BaseException:
            teach.proc.kill()
            teach.proc.wait()
            raise
        code, _out, err = teach.finish()
        assert code == 0, err[-1500:]
        assert sorted(app.studies()) == DONE
    yield env, base, app.port


def _replay(env: dict[str, str]) -> tuple[int, dict[str, Any], str]:
    from tests.drift_suite import replay_cli

    return replay_cli(env, "--step-timeout", "4", password=None, slug=SLUG)


def test_the_taught_plan_keeps_no_made_up_id_and_knows_the_icon_by_its_card(taught) -> None:
    from tests.spa_app import exported

    env, _base, _port = taught
    plan = exported(env, SLUG)
    text = json.dumps(plan)
    assert ":r" not in text.replace(":root", ""), "a React-made id in the plan"
    params = sorted(s["param"] for s in plan["steps"] if s.get("param"))
    assert params and not any(re.search(r"\d", p) for p in params), params
    icon = next(a for a in plan["anchors"].values() if a["expect"].get("name") == "delete study")
    assert "bravo-study" in json.dumps(icon), icon  # the card it was on, by its title


@pytest.mark.parametrize("names", [NAMES, ("charlie-study", "alpha-study", "bravo-study")],
                         ids=["as-taught", "new-ids-other-order"])
def test_right_where_taught_and_on_the_same_names_under_other_ids(taught, names: tuple[str, ...]) -> None:
    env, base, port = taught
    with Dashboard("optuna-dashboard-old", base / "again", names, port) as app:
        code, out, err = _replay(env)
        assert code == 0 and out["status"] == "success", (out.get("message"), err[-1500:])
        assert sorted(app.studies()) == DONE


def test_after_the_upgrade_right_or_halted_before_any_write_naming_the_difference(taught) -> None:
    """The newest release: another build of the same screens, the list the
    other way round. Either the task is done, or nothing is written."""
    env, base, port = taught
    with Dashboard("optuna-dashboard-new", base / "new", port=port) as app:
        code, out, err = _replay(env)
        after = sorted(app.studies())
    if out.get("status") == "success":
        assert code == 0 and after == DONE
        return
    assert after == sorted(NAMES), (out.get("message"), after)  # nothing written: no half change
    assert out["status"] == "failure" and "partial" not in out, out
    assert re.match(r"step \d+: ", out["message"]), out["message"]
