"""The drift suite: the taught sample task replayed on every variant of the
app, judged by the app's own log of what was clicked and saved."""

from __future__ import annotations

import pytest

from teachd.demo.sampleapp import SampleApp, Variant
from teachd.demo.sampleapp.judge import RIGHT, judge
from tests.drift_suite import EXPECTED
from tests.sample_task import PASSWORD, SLUG, replay


@pytest.mark.parametrize("variant", sorted(EXPECTED))
def test_replay_on_drifted_app_is_right_or_halts_with_zero_wrong_actions(taught, variant: str) -> None:
    env, port = taught
    timeout = "10" if EXPECTED[variant] == RIGHT else "2"
    with SampleApp(password=PASSWORD, variant=Variant.named(variant), port=port) as app:
        code, out, err = replay(env, "--step-timeout", timeout)
        verdict = judge(out.get("status", ""), app.state)
    assert verdict.wrong == [], verdict.wrong
    assert verdict.verdict == EXPECTED[variant], (out.get("message"), err[-1500:])
    if EXPECTED[variant] == RIGHT:
        assert code == 0 and out["status"] == "success" and out["skills"][SLUG] >= 1
    else:
        halted = [s for s in out["steps"] if s["status"] == "halted"]
        assert code == 1 and len(halted) == 1
        assert f"step {halted[0]['n']}:" in out["message"]  # the halt names its step


def test_removed_target_halts_at_that_step_before_its_effect(taught) -> None:
    env, port = taught
    with SampleApp(password=PASSWORD, variant=Variant(submit_removed=True), port=port) as app:
        code, out, err = replay(env, "--step-timeout", "1")
        assert app.state.reports == [] and app.state.groups == []
    halted = [s for s in out["steps"] if s["status"] == "halted"]
    assert halted, out.get("message")
    assert "Submit report" in halted[0]["detail"] and "not found" in halted[0]["detail"], halted[0]


def test_look_alike_save_buttons_halt_as_ambiguous(taught) -> None:
    env, port = taught
    with SampleApp(password=PASSWORD, variant=Variant(ambiguous=True), port=port) as app:
        code, out, err = replay(env, "--step-timeout", "1")
        assert app.state.groups == [] and app.state.drafts == 0
    assert "ambiguous" in out["message"] and "Save" in out["message"]
    # It halted after the sign-in and the report it filed: a half change, said as one.
    assert out["status"] == "partial", out["message"]
    assert [w["path"] for w in out["partial"]["wrote"]][0] == "/login" and "/groups" not in str(out["partial"])


def test_typing_sends_key_events_that_type_ahead_and_filters_need(taught) -> None:
    """The merchant suggestions and the permission filter react to keyup only:
    a replay that set values without key events would find no suggestion, and
    'Choose all' would take every permission instead of the filtered one."""
    env, port = taught
    with SampleApp(password=PASSWORD, port=port) as app:
        code, out, err = replay(env)
        assert code == 0, out.get("message")
        assert app.state.reports[0]["merchant_id"] == "taxi-paris"
        assert app.state.groups[0]["permissions"] == ["approve_reports", "archive_reports",
                                                       "export_reports"]
    assert judge(out["status"], app.state).verdict == RIGHT


def test_an_update_from_a_plain_skill_md_keeps_the_plan_and_the_skill_still_replays(taught, cli_env_runner,
                                                                                     tmp_path) -> None:
    """Seed: files travel with the skill. ``skills update --from SKILL.md``
    (CLI) and the API's update with ``skill_md`` alone change the text and
    keep every bundled file — the taught plan among them — so the next
    replay is right; the edit is in the new version."""
    import json

    from tests.test_server import serve

    env, port = taught
    exported = cli_env_runner(env, "skills", "export", SLUG).stdout
    edited = tmp_path / "SKILL.md"
    edited.write_text(exported.replace("## Preconditions", "Ask before filing twice.\n\n## Preconditions", 1),
                      encoding="utf-8")
    done = cli_env_runner(env, "skills", "update", SLUG, "--from", str(edited))
    assert done.returncode == 0, done.stderr
    server = serve(env)
    try:
        r = server.api().put(f"/api/skills/{SLUG}", json={"skill_md": edited.read_text(encoding="utf-8")})
        assert r.status_code == 200, r.text
    finally:
        server.stop()
    shown = json.loads(cli_env_runner(env, "skills", "show", SLUG, "--json").stdout)
    assert shown["version"] == 3 and {"references/steps.json", "references/anchors.json"} <= set(shown["files"])
    assert "Ask before filing twice." in cli_env_runner(env, "skills", "export", SLUG).stdout
    with SampleApp(password=PASSWORD, port=port) as app:
        code, out, err = replay(env)
        assert code == 0, (out.get("message"), err[-800:])
        assert judge(out["status"], app.state).verdict == RIGHT
