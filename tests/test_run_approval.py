"""One approval per run (DESIGN §3.5), on the real sample app in Chromium:
``run`` lets the whole plan through after one answer, judged by the app's own
record; the next run asks again; a step that drifted from the plan asks again
inside a run-approved replay; the run's record shows each step live with its
pictures, secrets painted over."""

from __future__ import annotations

import io
import json
import re

from PIL import Image

from teachd.config import settings_from_env
from teachd.demo.sampleapp import SampleApp
from teachd.demo.sampleapp.pages import Variant
from teachd.runner.observe import THUMB_WIDTH
from teachd.store import open_store
from teachd.store.runs import RunStore
from tests.conftest import all_bytes_under
from tests.sample_task import PASSWORD, SLUG, replay
from tests.test_runner import EXPECTED


def _questions(err: str) -> int:
    return err.count("teachd: approve?")


def test_run_answer_replays_the_whole_plan_after_one_question_and_the_next_run_asks_again(taught) -> None:
    env, port = taught
    with SampleApp(password=PASSWORD, port=port) as app:
        code, out, err = replay(env, stdin="run\n")
        assert code == 0, (out.get("message"), err[-2000:])
        assert _questions(err) == 1 and "[run/once/deny]" in err
        steps = len(out["steps"])
        assert steps >= 10 and f"({steps} steps, within http://127.0.0.1:{port})" in err
        assert f"{steps}. " in err  # the whole plan was shown, its last step included
        assert "[secret password]" in err and PASSWORD not in err  # a secret is named, never shown
        reports = list(app.state.reports)
        assert len(reports) == 1 and {k: reports[0][k] for k in EXPECTED} == EXPECTED
        # the next run asks again: its one answer is the only one it gets, and a deny stops it
        code, out, err = replay(env, stdin="deny\n")
        assert code == 1 and out["status"] == "aborted" and _questions(err) == 1
        assert len(app.state.reports) == 1


def test_a_drifted_step_inside_a_run_approved_replay_asks_again(taught) -> None:
    """The sample app with its labels reworded (ids kept): the replay finds
    each field by its id (it agrees), but not as taught — under ``run`` that
    step asks; a deny there stops the run before it types anything."""
    env, port = taught
    with SampleApp(password=PASSWORD, port=port, variant=Variant(changed_labels=True)) as app:
        code, out, err = replay(env, stdin="run\ndeny\n")
        assert out["status"] == "aborted", (out, err[-1500:])
        assert _questions(err) == 2 and err.count("[once/these/like/deny]") == 1
        halted = [s for s in out["steps"] if s["status"] == "halted"]
        assert halted and "not approved" in halted[0]["detail"]
        assert app.state.reports == []


def test_a_relabelled_app_costs_one_answer_for_its_relabelled_steps_not_one_each(taught) -> None:
    """The same reworded app: the first changed field's question offers
    ``like`` — this step and later ones changed the same way (only their
    name; their id and field name still agree), in this run. One such
    answer, and every later relabelled field and button goes ahead without
    asking; steps changed another way (a link found by its place, a button
    by a loosened name) still ask, each on its own."""
    env, port = taught
    with SampleApp(password=PASSWORD, port=port, variant=Variant(changed_labels=True)) as app:
        code, out, err = replay(env, stdin="run\nlike\n" + "once\n" * 10)
        assert code == 0 and out["status"] == "success", (out.get("message"), err[-1500:])
        asked = [int(n) for n in re.findall(r"approve\? step (\d+):", err)]
        assert re.search(r"\[once/(these/)?like/deny\]: like", err) and "is now" in err and "still the same: its field name, its id" in err
        reports = list(app.state.reports)
        assert len(reports) == 1 and {k: reports[0][k] for k in EXPECTED} == EXPECTED
    # the run's record says which steps the one answer covered, and why
    gate = RunStore(open_store(settings_from_env(env))).one(out["run_id"])["gate"]
    covered = [e["action"]["step"] for e in gate if str(e.get("decision")).startswith("allowed: changed like step")]
    assert len(covered) >= 3 and not set(covered) & set(asked), (covered, asked)
    for e in gate:  # each covered step changed only its name, an id of its own still agreeing
        if e["action"]["step"] in covered:
            assert "is now" in e["action"]["note"] and "its id" in e["action"]["note"], e
    assert asked[:2] == [1, asked[1]] and asked[1] < min(covered)  # the plan, then the first changed field
    assert len(asked) == 2 + sum(1 for e in gate if e.get("decision") == "allowed once"), asked


def test_the_run_record_shows_each_step_with_pictures_and_no_secret(taught) -> None:
    env, port = taught
    with SampleApp(password=PASSWORD, port=port):
        code, out, err = replay(env, "--pictures", stdin="run\n")
    assert code == 0, err[-1500:]
    settings = settings_from_env(env)
    runs = RunStore(open_store(settings))
    run = runs.one(out["run_id"])
    assert [s["status"] for s in run["steps"]] == ["ok"] * len(run["steps"])
    assert all(isinstance(s["ms"], int) for s in run["steps"]) and run["plan"] and run["used"] == [SLUG]
    shots = runs.pictures_of(out["run_id"])
    clicks = [s["n"] for s in run["steps"] if s["action"] in ("click", "type")]
    assert all((n, "before") in shots and (n, "after") in shots for n in clicks)
    thumb = Image.open(io.BytesIO(runs.picture(out["run_id"], clicks[-1], "after")))
    assert thumb.format == "JPEG" and thumb.width == THUMB_WIDTH  # readable, enlarged on the run page
    assert PASSWORD.encode() not in all_bytes_under(settings.home)
    assert PASSWORD not in json.dumps(run)


def test_step_pictures_are_sealed_cancellable_runs_stop_and_old_pictures_are_purged(store, written) -> None:
    """On both engines: a picture is stored sealed (its bytes never in the
    clear), a cancel is seen by whichever process runs the run, and pictures
    older than the retention go while the run's record stays."""
    from datetime import timedelta

    from teachd.store.runs import purge_pictures

    runs = RunStore(store)
    run_id = runs.new_run_id()
    runs.start(run_id, {})
    jpeg = b"\xff\xd8\xff\xe0" + b"PICTURE-MARKER" * 50
    runs.put_picture(run_id, 3, "after", jpeg)
    assert runs.picture(run_id, 3, "after") == jpeg and runs.pictures_of(run_id) == {(3, "after")}
    assert b"PICTURE-MARKER" not in written()
    assert runs.cancelled_by(run_id) is None and runs.cancel(run_id, "alice")
    assert RunStore(store).cancelled_by(run_id) == "alice"  # another view of the store sees it
    runs.finish(run_id, "aborted", {"message": "cancelled"})
    assert not runs.cancel(run_id, "alice")  # an ended run cannot be cancelled
    assert purge_pictures(store.db, 14) == 0
    assert purge_pictures(store.db, 14, now=runs.clock() + timedelta(days=15)) == 1
    assert runs.pictures_of(run_id) == set() and runs.one(run_id)["message"] == "cancelled"


def test_a_relabelled_pages_changed_steps_are_allowed_together_with_these(taught) -> None:
    """The first changed field's question looks ahead on its page: the later
    steps there found changed too are listed, each with what changed, and
    ``these`` allows them with it — each still only if found changed just
    as listed when its turn comes, doing what its plan line shows."""
    env, port = taught
    with SampleApp(password=PASSWORD, port=port, variant=Variant(changed_labels=True)) as app:
        code, out, err = replay(env, stdin="run\nthese\n" + "once\n" * 12)
        assert code == 0 and out["status"] == "success", (out.get("message"), err[-1500:])
        reports = list(app.state.reports)
        assert len(reports) == 1 and {k: reports[0][k] for k in EXPECTED} == EXPECTED
    asked = [int(n) for n in re.findall(r"approve\? step (\d+):", err)]
    first = next(q for q in err.split("teachd: approve? ")[1:] if "[once/these/" in q)
    listed = [int(n) for n in re.findall(r"; step (\d+) on this page changed too: ", first)]
    assert listed and "is now" in first.split("changed too:")[1]
    gate = RunStore(open_store(settings_from_env(env))).one(out["run_id"])["gate"]
    covered = [e["action"]["step"] for e in gate
               if str(e.get("decision")).startswith("allowed: listed as changed with step")]
    assert covered == listed and not set(covered) & set(asked), (covered, listed, asked)
    assert len(listed) >= 3 and len(asked) <= 7, (listed, asked)  # asked one by one, it takes 10 answers
