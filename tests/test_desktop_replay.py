"""Desktop steps replayed for real: "type a line and save it as notes.txt",
taught through the recorder,
in Debian's Mousepad (GTK, with an accessibility tree) on Xvfb, judged by the
file on disk — on the unchanged desktop and on drifted ones (the window
moved and resized, another theme and font size, another app's window on
top), and a halt with nothing written where two windows could be meant."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compiler.plan import Procedure
from teachd.core.errors import PolicyStop
from teachd.runner.gate import Answer, Gate, Request
from teachd.runner.replay import Halt, Replayer
from tests.desktop import DesktopSession, save_a_note, taught_on_desk, until

NOTE = "Call the bank on Monday"


class Approve:
    def __init__(self, allow: bool = True) -> None:
        self.asked: list[Request] = []
        self.allow = allow

    def ask(self, request: Request) -> Answer:
        self.asked.append(request)
        return Answer(request.id, self.allow)


@pytest.fixture(scope="module")
def taught_skill(desk: DesktopSession,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], str, Procedure]]:
    """The skill a person taught through the recorder (tests/desktop.py,
    ``save_a_note``): the sample app's sign-in page, then Mousepad — type
    the note, Ctrl+S, notes.txt, Enter. Its sign-in page stays up for the
    replays (their first step goes there)."""
    tmp = tmp_path_factory.mktemp("taught")
    with taught_on_desk(tmp, lambda env, url, pw: save_a_note(desk, env, url, pw, tmp, NOTE)[1]) as taught:
        yield taught


@pytest.fixture
def taught(taught_skill: tuple[dict[str, str], str, Procedure]) -> Procedure:
    return taught_skill[2]


@pytest.fixture
def on_desk(desk: DesktopSession, monkeypatch: pytest.MonkeyPatch) -> DesktopSession:
    """The replay's process on the desktop session, as `teachd run` on a desktop is."""
    monkeypatch.setenv("DISPLAY", desk.display)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", desk.env["DBUS_SESSION_BUS_ADDRESS"])
    return desk


@pytest.fixture
def page(browser: Any) -> Iterator[tuple[Any, Any]]:
    context = browser.new_context()
    yield context, context.new_page()
    context.close()


def replay(page: tuple[Any, Any], proc: Procedure, approver: Approve | None = None) -> Replayer:
    context, p = page
    r = Replayer(context, p, proc, Gate(approver or Approve()), {}, lambda _n: "", step_timeout=10)
    r.run()
    return r


def saved(folder: Path) -> str | None:
    path = folder / "notes.txt"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def variant_env(variant: str) -> dict[str, str]:
    return {"theme_and_font": {"GTK_THEME": "Adwaita:dark", "GDK_DPI_SCALE": "1.4"},
            "twice_the_scale": {"GDK_SCALE": "2"}}.get(variant, {})


@pytest.mark.parametrize("variant", ["unchanged", "moved_and_resized", "theme_and_font", "another_app_on_top",
                                     "twice_the_scale"])
def test_the_note_is_typed_and_saved_where_the_demonstration_saved_it(
        on_desk: DesktopSession, taught: Procedure, page: tuple[Any, Any], tmp_path: Path, variant: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    approver = Approve()
    with on_desk.mousepad(tmp_path / "person", out, **variant_env(variant)) as mousepad:
        cover = None
        if variant == "moved_and_resized":
            on_desk.place("Untitled 1 - Mousepad", mousepad.pid, 400, 250)
            wid = on_desk.xdo("search", "--pid", str(mousepad.pid), "--name", "Mousepad").split()[-1]
            on_desk.xdo("windowsize", "--sync", wid, "820", "560")
        if variant == "another_app_on_top":
            cover = on_desk.start(["zenity", "--info", "--text", "A reminder over the editor", "--width", "600",
                                   "--height", "400"], tmp_path / "other")
            until(lambda: on_desk.find(cover.pid, "push button"), 30, "the other app's window")
            on_desk.place("Information", cover.pid, 20, 40)
        try:
            r = replay(page, taught, approver)
        finally:
            if cover is not None:
                cover.kill()
        until(lambda: saved(out) is not None, 20, "notes.txt on disk")
    assert saved(out) == NOTE  # the file itself, as the app saved it (Mousepad adds no newline)
    # goto, click the editor, type, Ctrl+S, click the name, Ctrl+A, type the name, Enter
    assert [(s.action, s.status) for s in r.results] == [(s.action, "ok") for s in taught.steps]
    assert [s.action for s in taught.steps].count("os_key") == 3
    assert r.results[1].via[-1] in ("pointer", "click", "press")
    assert r.results[3].via[-1] == "window 'Save As'"  # Ctrl+S opened the dialog, as it did when taught
    assert r.results[-1].via[-1] == f"window '{out}/notes.txt - Mousepad'"  # Enter saved it under that name
    assert len(approver.asked) == 0  # no secret, no scope question: the gate had nothing to ask


def test_a_note_of_two_lines_and_accents_is_saved_as_typed_and_a_one_line_field_takes_none(
        on_desk: DesktopSession, taught: Procedure, page: tuple[Any, Any], tmp_path: Path) -> None:
    """Another value for the note: two lines, with letters outside ASCII.
    Each line is typed, with Return between them (the line break xdotool
    sends is lost on GTK), read back, saved as typed. The file's name, a
    one-line field, takes no line break: the run halts there before typing."""
    [note] = [name for name, p in taught.parameters.items() if (p or {}).get("default") == NOTE]
    [file_name] = [name for name, p in taught.parameters.items() if (p or {}).get("default") == "notes.txt"]
    two_lines = "Rappeler la banque\nlundi à 9 h — café"
    out = tmp_path / "out"
    out.mkdir()
    with on_desk.mousepad(tmp_path / "person", out):
        context, p = page
        r = Replayer(context, p, taught, Gate(Approve()), {note: two_lines}, lambda _n: "", step_timeout=10)
        r.run()
        until(lambda: saved(out) is not None, 20, "notes.txt on disk")
    assert saved(out) == two_lines
    out2 = tmp_path / "out2"
    out2.mkdir()
    with on_desk.mousepad(tmp_path / "person2", out2):
        context, p = page
        r = Replayer(context, p, taught, Gate(Approve()), {file_name: "notes\n.txt"}, lambda _n: "",
                     step_timeout=10)
        with pytest.raises(Halt) as stopped:
            r.run()
    assert "holds one line" in str(stopped.value) and "nothing was typed" in str(stopped.value)
    assert list(out2.iterdir()) == []


def test_two_windows_that_both_fit_halt_before_anything_is_typed_unless_one_has_the_keyboard(
        on_desk: DesktopSession, taught: Procedure, page: tuple[Any, Any], tmp_path: Path) -> None:
    """Two Mousepad windows: while another app has the keyboard, neither is
    the person's — a halt, nothing typed. With one of them focused (the X
    server gives it the keyboard, and Mousepad calls it active), that one
    is theirs: the note is typed and saved there, the other left alone."""
    out = tmp_path / "out"
    out.mkdir()
    with on_desk.mousepad(tmp_path / "person", out) as mousepad:
        on_desk.start(["mousepad", "--opening-mode=window"], tmp_path / "person", out)  # its second window
        until(lambda: len(editors(on_desk, mousepad.pid)) == 2 or None, 30, "two Mousepad windows")
        other = on_desk.start(["zenity", "--info", "--text", "Another app has the keyboard"], tmp_path / "other")
        try:
            until(lambda: on_desk.find(other.pid, "push button"), 30, "the other app's window")
            on_desk.place("Information", other.pid, 700, 500)
            with pytest.raises(Halt, match=r"step 2: the text field in the \*Mousepad\* window is ambiguous"):
                replay(page, taught)
        finally:
            other.kill()
        texts = [on_desk.desktop.text(w) for w in editors(on_desk, mousepad.pid)]
        assert texts == ["", ""] and saved(out) is None  # 0 wrong actions: nothing typed, nothing saved
        second = editors(on_desk, mousepad.pid)[-1]
        on_desk.place(second.window, mousepad.pid, 300, 200)  # the person brings it forward
        until(lambda: on_desk.desktop.window_active(mousepad.pid, second.window) or None, 10, "it active")
        r = replay(page, taught)
        until(lambda: saved(out) is not None, 20, "notes.txt on disk")
        by_window = {w.window: on_desk.desktop.text(w) for w in editors(on_desk, mousepad.pid)}
    assert saved(out) == NOTE and [s.status for s in r.results] == ["ok"] * len(taught.steps)
    assert sorted(by_window.values()) == ["", NOTE], by_window  # the other window untouched


def editors(desk: DesktopSession, pid: int) -> list[Any]:
    return [w for node, title, wpid, app in desk.desktop.windows(pid)
            for w in desk.desktop.walk(node, title, wpid, app) if w.role == "text"]


def test_an_agent_clicks_and_types_into_the_taught_editor_through_computer_act(
        on_desk: DesktopSession, taught_skill: tuple[dict[str, str], str, Procedure], tmp_path: Path) -> None:
    """A desktop anchor is a computer_act target, as a page's is: found by
    accessibility and acted on at the gate; a secret only where the
    demonstration masked one, and only click or type."""
    from tests.test_mcp import Person, session, text

    env, slug, proc = taught_skill
    editor = next(s.desktop for s in proc.steps if s.action == "os_type")
    person = Person("accept")

    async def go() -> list[Any]:
        async with session(env, person) as client:
            await client.call_tool("load_skill", {"slug": slug})
            return [await client.call_tool("computer_act", {"skill": slug, "anchor": editor, **args}) for args in (
                {"action": "click"}, {"action": "type", "text": "Buy milk"},
                {"action": "type", "text": "{{secret:pin}}"}, {"action": "press", "key": "Enter"})]

    with on_desk.mousepad(tmp_path / "person", tmp_path) as mousepad:
        clicked, typed, secret, pressed = asyncio.run(go())
        shown = on_desk.desktop.text(on_desk.find(mousepad.pid, "text", ""))
    assert not clicked.is_error and "by accessibility" in text(clicked), text(clicked)
    assert not typed.is_error and shown == "Buy milk", (text(typed), shown)
    assert secret.is_error and "nothing was typed" in text(secret)
    assert pressed.is_error and "clicked or typed into" in text(pressed)


def test_a_widget_of_an_app_the_skill_was_not_taught_on_is_asked_about_first(
        on_desk: DesktopSession, taught: Procedure, page: tuple[Any, Any], tmp_path: Path) -> None:
    """The skill's applications are its desktop scope: as if it had been
    taught on another editor, Mousepad's text field is outside it — the
    person is asked, and a no leaves the editor untouched."""
    other = dataclasses.replace(taught, apps=["gedit gedit"])
    no = Approve(allow=False)
    with on_desk.mousepad(tmp_path / "person", tmp_path) as mousepad:
        with pytest.raises(PolicyStop, match="not approved"):
            replay(page, other, no)
        shown = on_desk.desktop.text(on_desk.find(mousepad.pid, "text", ""))
    assert len(no.asked) == 1 and "is not among the applications the skill was taught on (gedit gedit)" \
        in no.asked[0].reason, [r.reason for r in no.asked]
    assert no.asked[0].action.step == 2 and shown == "" and saved(tmp_path) is None


def test_a_desktop_run_on_the_run_queue_waits_for_a_worker_with_a_display_which_saves_the_note(
        desk: DesktopSession, taught_skill: tuple[dict[str, str], str, Procedure], tmp_path: Path,
        postgres_url: str, cli_env_runner: Any) -> None:
    """On the team store the desktop skill's run is a job: a worker with no
    display never takes it; a worker process started on the desktop session
    (``--can desktop``) does, replays it in the real editor, and the note is
    on disk as the editor saved it."""
    import time

    from teachd.config import Settings
    from teachd.store import open_store
    from teachd.store.runs import RunStore
    from teachd.store.workers import WorkerStore
    from tests.people import PersonAtTheDaemon, run_until
    from tests.queue_team import team_on, until_listed
    from tests.test_server import serve

    env, slug, _proc = taught_skill
    team = team_on(env, postgres_url, tmp_path, cli_env_runner, slug=slug)
    server = serve(team.env, "--slots", "0")
    out = tmp_path / "out"
    out.mkdir()
    try:
        api = server.api()
        with desk.mousepad(tmp_path / "person", out), PersonAtTheDaemon(api, [], {}):
            team.worker("plain", "--slots", "1")
            until_listed(cli_env_runner, team.env, "plain")
            started = api.post("/api/runs", json={"slug": slug})
            assert started.status_code == 200, started.text
            run_id = started.json()["run_id"]
            time.sleep(5)  # a worker with no display is free, and does not take it
            assert api.get(f"/api/runs/{run_id}").json()["queued"]
            team.worker("desk", "--slots", "1", "--can", "desktop",
                        env={"DISPLAY": desk.display,
                             "DBUS_SESSION_BUS_ADDRESS": desk.env["DBUS_SESSION_BUS_ADDRESS"]})
            done = run_until(api, run_id, lambda r: r["status"] != "running", 180)
            assert done["status"] == "success", done["message"]
            until(lambda: saved(out) is not None, 20, "notes.txt on disk")
        assert saved(out) == NOTE
        store = open_store(Settings(home=tmp_path / "daemon", owner="alice", db_url=postgres_url,
                                    key_env=team.env["TEACHD_KEY"]))
        assert WorkerStore(store.db).by_runner().get(RunStore(store).runner_of(run_id)) == "desk"
    finally:
        team.stop()
        server.stop()
