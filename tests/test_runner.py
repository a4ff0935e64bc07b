"""Replays of the taught sample task: approvals, scope, profiles, secrets and
feedback; the assertions are on the server's side effects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from teachd.demo.sampleapp import SampleApp
from teachd.teach.edits import apply_edits, check_edits, edits_from, final_text_of
from teachd.teach.process import read_events
from teachd.teach.review import review
from tests.conftest import all_bytes_under
from tests.sample_task import PASSWORD, SLUG, replay

EXPECTED = {"amount": "42.50", "description": "Taxi from the airport", "category": "travel",
            "merchant_id": "taxi-paris", "has_receipt": True}


def test_replay_on_the_unchanged_app_saves_exactly_the_demonstrated_effect(taught) -> None:
    env, port = taught
    with SampleApp(password=PASSWORD, port=port) as app:
        code, out, err = replay(env)
        reports, groups = list(app.state.reports), list(app.state.groups)
    assert code == 0, (out.get("message"), err[-2000:])
    assert out["status"] == "success" and out["skills"][SLUG] == 1
    assert len(reports) == 1 and {k: reports[0][k] for k in EXPECTED} == EXPECTED
    assert [g["name"] for g in groups] == ["Approvers"]


def test_deny_and_eof_abort_before_any_effect(taught) -> None:
    env, port = taught
    with SampleApp(password=PASSWORD, port=port) as app:
        for stdin in ("deny\n", "", "once\nonce\nonce\n"):
            code, out, err = replay(env, stdin=stdin)
            assert code == 1 and out["status"] == "aborted", out
            assert "required by skill " + SLUG in err
        assert app.state.reports == []
        assert not app.state.sessions  # the third run stopped before signing in
        assert app.state.clicked() == []


def test_saved_always_allow_never_satisfies_the_skill(taught, cli_env_runner) -> None:
    env, port = taught
    assert cli_env_runner(env, "approvals", "allow", "computer_act", "--always").returncode == 0
    with SampleApp(password=PASSWORD, port=port) as app:
        code, out, err = replay(env, "--approval", "ask", stdin="")
        assert out["status"] == "aborted" and app.state.reports == []
    rules = json.loads(cli_env_runner(env, "approvals", "list", "--json").stdout)
    cli_env_runner(env, "approvals", "revoke", str(rules[0]["id"]))


def test_scope_violation_asks_and_deny_aborts(taught) -> None:
    env, port = taught
    with SampleApp(password=PASSWORD) as other:  # another origin (port)
        code, out, err = replay(env, "--start-url", other.url + "/login", stdin="deny\n")
        assert out["status"] == "aborted"
        assert "outside the skill's allowed scope" in err
        assert other.state.reports == []


def test_profile_binding(taught, cli_env_runner, tmp_path) -> None:
    env, port = taught
    home = Path(env["TEACHD_HOME"])
    (home / "config.yaml").write_text(f"profiles:\n  finance: [{SLUG}]\n  other: [nothing]\n")
    try:
        with SampleApp(password=PASSWORD, port=port) as app:
            code, out, err = replay(env, "--profile", "finance", stdin="deny\n")
            assert out["status"] == "aborted"  # bound to the profile, its gate still holds
            p = cli_env_runner(env, "run", SLUG, "--headless", "--profile", "other")
            assert p.returncode == 3 and "not bound" in p.stderr  # not found among the profile's skills
            assert app.state.reports == []
    finally:
        (home / "config.yaml").unlink()


def test_missing_secret_aborts_and_secrets_never_stored(taught) -> None:
    env, port = taught
    with SampleApp(password=PASSWORD, port=port) as app:
        code, out, err = replay(env, secret=False)
        assert out["status"] == "aborted" and "TEACHD_SECRET_PASSWORD" in out["message"]
        assert app.state.reports == []
    assert PASSWORD.encode() not in all_bytes_under(Path(env["TEACHD_HOME"]))


def test_feedback_appends_history_and_counts_per_version(taught, cli_env_runner) -> None:
    env, port = taught
    with SampleApp(password=PASSWORD, port=port):
        code, out, err = replay(env)
    assert code == 0
    run_id, version = out["run_id"], out["skills"][SLUG]
    procs = [subprocess.Popen([sys.executable, "-m", "teachd", "feedback", ref, "--skill", SLUG, verdict],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for ref, verdict in [(run_id, "success"), ("ext-agent:7", "failure"), ("ext-agent:8", "success"),
                                  ("ext-agent:9", "success")]]
    assert all(p.wait(60) == 0 for p in procs)
    body = cli_env_runner(env, "skills", "load", SLUG).stdout
    history = body.split("## History", 1)[1]
    lines = [ln for ln in history.splitlines() if ln.startswith("- ")]
    assert len([ln for ln in lines if f"run {run_id}" in ln]) == 1
    assert len(lines) == 4 and all(ln.startswith("- 20") and " — " in ln for ln in lines)
    assert "Validation: replayed successfully" in body
    versions = json.loads(cli_env_runner(env, "skills", "versions", SLUG, "--json").stdout)
    assert versions[-1]["version"] == version + 4
    ran = next(v for v in versions if v["version"] == version)
    assert ran["success"] >= 1
    bad = cli_env_runner(env, "feedback", "run-nope", "--skill", "taught-other", "success")
    assert bad.returncode == 3  # no such skill


def test_bad_run_input_is_one_line(taught, cli_env_runner) -> None:
    env, port = taught
    cases = [  # (environment, arguments, exit code, message)
        ({"TEACHD_CHROMIUM": "/nonexistent"}, ["--headless"], 69, "Chromium not found"),
        ({}, ["--headless", "--param", "bogus=1"], 2, "unknown parameter"),
        ({}, ["--headless", "--param", "novalue"], 2, "NAME=VALUE"),
        ({"DISPLAY": ""}, [], 69, "no display"),
    ]
    for extra, args, exit_code, message in cases:
        e = {k: v for k, v in {**env, **extra}.items() if v}
        p = cli_env_runner(e, "run", SLUG, *args)
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        assert p.returncode == exit_code and len(lines) == 1 and message in lines[0], p.stderr
    assert cli_env_runner(env, "run", "taught-missing", "--headless").returncode == 3


def test_a_plan_from_a_newer_teachd_is_refused_in_one_line(taught, cli_env_runner, tmp_path) -> None:
    env, _port = taught
    envelope = json.loads(cli_env_runner(env, "skills", "export", SLUG, "--format", "json").stdout)
    steps = json.loads(envelope["files"]["references/steps.json"])
    steps["format_version"] = 99
    envelope["files"]["references/steps.json"] = json.dumps(steps)
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(envelope))
    put = cli_env_runner(env, "skills", "update", SLUG, "--from", str(newer))
    assert put.returncode == 0, put.stderr
    p = cli_env_runner(env, "run", SLUG, "--headless")
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 4 and len(lines) == 1, p.stderr
    assert "newer than this teachd reads" in lines[0] and "Traceback" not in p.stderr


def _edit_success(env: dict[str, str], cli_env_runner, tmp_path: Path, edit) -> None:
    """Change the taught skill's success check (as a newer teachd or a person could)."""
    envelope = json.loads(cli_env_runner(env, "skills", "export", SLUG, "--format", "json").stdout)
    steps = json.loads(envelope["files"]["references/steps.json"])
    edit(steps)
    envelope["files"]["references/steps.json"] = json.dumps(steps)
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(envelope))
    assert cli_env_runner(env, "skills", "update", SLUG, "--from", str(edited)).returncode == 0


def test_a_run_whose_end_cannot_show_the_effect_is_unverified_and_exits_1(taught, cli_env_runner, tmp_path) -> None:
    env, port = taught

    def nothing_checkable(steps: dict) -> None:
        last = steps["steps"][-1]
        steps["success"] = {"url": last["page"], "url_pattern": last["expect"]["url_pattern"], "title": None}
        last["page"] = last["expect"]["url"]  # the end is the page the last step acted on

    _edit_success(env, cli_env_runner, tmp_path, nothing_checkable)
    with SampleApp(password=PASSWORD, port=port) as app:
        code, out, err = replay(env)
        assert len(app.state.reports) == 1  # it did act; it just cannot say the effect is there
    assert code == 1 and out["status"] == "unverified", (out, err[-1500:])
    assert "nothing on the final page could confirm the effect" in out["message"]
    fb = cli_env_runner(env, "feedback", out["run_id"], "--skill", SLUG, "success")
    assert fb.returncode == 0, fb.stderr  # a person settles it with one click


def test_a_final_page_without_this_runs_values_is_a_failure(taught, cli_env_runner, tmp_path) -> None:
    env, port = taught
    _edit_success(env, cli_env_runner, tmp_path, lambda steps: steps["success"].update(shows=["{{name}}"]))
    with SampleApp(password=PASSWORD, port=port):
        code, out, err = replay(env, "--param", "name=Night shift")  # the group is saved under this name
    assert code == 0 and out["status"] == "success", (out.get("message"), err[-1500:])
    _edit_success(env, cli_env_runner, tmp_path,
                  lambda steps: steps["success"].update(shows=["{{name}}", "{{description}}"]))
    with SampleApp(password=PASSWORD, port=port):
        code, out, err = replay(env)  # the audit log never shows the report's description
    assert code == 1 and out["status"] == "failure"
    assert "does not show this run's {{description}}" in out["message"]


def test_a_reviewed_skill_types_its_fixed_value_and_holds_the_persons_own_check(
        taught, cli_env_runner, tmp_path) -> None:
    """The review kept the description fixed and added a check the final page
    showed: the run is never asked for the description, types it as shown,
    and succeeds where the page shows the check's words — and fails, saying
    which, where it does not."""
    env, port = taught
    (folder,) = (Path(env["TEACHD_HOME"]) / "recordings").iterdir()
    rows = review(read_events(folder))
    described = next(r for r in rows if r["target"] == "the Description field")
    edits = edits_from({"fixed": [described["seq"]], "checks": ["Audit log"]})
    check_edits(edits, rows, final_text_of(folder))
    apply_edits(folder, edits)
    saved = cli_env_runner(env, "compile", str(folder), "--save")
    assert saved.returncode == 0, saved.stderr
    with SampleApp(password=PASSWORD, port=port) as app:
        code, out, err = replay(env)
        assert [r["description"] for r in app.state.reports] == [EXPECTED["description"]]
    assert code == 0 and out["status"] == "success", (out.get("message"), err[-1500:])
    refused = cli_env_runner(env, "run", SLUG, "--headless", "--json", "--param", "description=Other")
    assert refused.returncode != 0 and "description" in refused.stderr  # not a parameter any more
    _edit_success(env, cli_env_runner, tmp_path,
                  lambda steps: steps["success"]["shows"].append("Nowhere on the page"))
    with SampleApp(password=PASSWORD, port=port):
        code, out, err = replay(env)
    assert code == 1 and out["status"] == "failure"
    assert "does not show “Nowhere on the page”" in out["message"]
