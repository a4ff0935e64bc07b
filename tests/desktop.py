"""Real desktop pieces for tests: Xvfb, xdotool as the person, the recorder
as a subprocess driven over its DevTools port."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from teachd.demo.xvfb import xvfb
from teachd.teach.process import TeachProcess
from tests.ports import free_port
from tests.programs import need

__all__ = ["BarProbe", "DesktopSession", "Teach", "a11y_session", "connect", "free_port", "kill9", "recording_on",
           "save_a_note", "screen_point", "to_screen", "xdo", "xvfb_display"]


xvfb_display = xvfb


def kill9(teach: TeachProcess) -> None:
    """The recorder killed outright (SIGKILL to its process group): what a crash looks like."""
    os.killpg(teach.proc.pid, signal.SIGKILL)
    teach.proc.wait(10)


def xdo(display: str, *args: str) -> str:
    out = subprocess.run([need("xdotool"), *args], env={**os.environ, "DISPLAY": display},
                         capture_output=True, text=True, timeout=30)
    return out.stdout


class Teach(TeachProcess):
    """``teachd teach`` with a DevTools port the suite claimed (tests/ports.py), not one of its own pick."""

    def __init__(self, env: dict[str, str], name: str, url: str, *flags: str, cdp_port: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(env, name, url, *flags, cdp_port=cdp_port or free_port(), **kwargs)


T = TypeVar("T")


@dataclass
class DesktopSession:
    """An X display with a session bus (and so an AT-SPI bus) as a desktop
    session has: ``env`` is what an app started on it needs."""

    display: str
    env: dict[str, str]
    desktop: Any  # recorder.a11y.Desktop, bound to this session's bus

    def start(self, argv: list[str], home: Path, cwd: Path | None = None, **env: str) -> subprocess.Popen[bytes]:
        """An app on this desktop, with a home of its own (no session restored
        from an earlier run), started in ``cwd`` (where its file dialogs open)."""
        need(argv[0])
        home.mkdir(parents=True, exist_ok=True)
        full = {**self.env, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                "XDG_DATA_HOME": str(home / ".local/share"), "XDG_CACHE_HOME": str(home / ".cache"),
                "XDG_STATE_HOME": str(home / ".local/state"), **env}
        return subprocess.Popen(argv, env=full, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, cwd=cwd)

    def xdo(self, *args: str) -> str:
        return xdo(self.display, *args)

    def click(self, widget: Any, rest: float = 0.0) -> None:
        """The person's click on a widget's centre, its window focused as a
        window manager focuses on click (Xvfb has none: the focus would stay
        with the browser that took it); ``rest``: seconds the hand rests on
        it first, as a person's does (the recorder looks at what the pointer
        rests on every 0.2 s)."""
        x, y = widget.centre
        self.xdo("mousemove", str(x), str(y))
        time.sleep(rest)
        ours = self.xdo("search", "--onlyvisible", "--pid", str(widget.pid), "--name",
                        f"^{re.escape(widget.window)}$").split()
        if ours and self.xdo("getwindowfocus").strip() != ours[-1]:
            self.xdo("windowfocus", "--sync", ours[-1])
        self.xdo("click", "1")
        if "editable" in widget.states:  # a person types once the caret shows there
            until(lambda: (w := self.desktop.focused(widget.pid, widget.window)) is not None and w.role == widget.role
                  and w.name == widget.name, 10, f"the {widget.role} focused")

    def place(self, title: str, pid: int, x: int = 80, y: int = 80, size: tuple[int, int] | None = None) -> None:
        """A window moved on screen (and sized) and focused, as a window manager places a new one."""
        for wid in self.xdo("search", "--onlyvisible", "--pid", str(pid), "--name", f"^{re.escape(title)}$").split():
            self.xdo("windowmove", "--sync", wid, str(x), str(y))
            if size is not None:
                self.xdo("windowsize", "--sync", wid, str(size[0]), str(size[1]))
            self.xdo("windowfocus", "--sync", wid)

    def find(self, pid: int, role: str, name: str | None = None, window: str | None = None) -> Any:
        """The first showing widget of ``pid`` with that role (and name, in that window), or None."""
        for node, title, wpid, app in self.desktop.windows(pid):
            if window is not None and title != window:
                continue
            for widget in self.desktop.walk(node, title, wpid, app):
                if widget.role == role and (name is None or widget.name == name):
                    return widget
        return None

    @contextlib.contextmanager
    def editor(self, editor: Editor, home: Path, cwd: Path | None = None, args: tuple[str, ...] = (),
               **env: str) -> Iterator[subprocess.Popen[bytes]]:
        """A text editor nobody here wrote (``args`` after its name), once its
        text field is on the accessibility bus."""
        proc = self.start([*editor.argv, *args], home, cwd, **{**editor.env, **env})
        try:
            until(lambda: self.find(proc.pid, "text", ""), 30, f"{editor.argv[0]}'s text field on the accessibility bus")
            yield proc
        finally:
            proc.terminate()
            proc.wait(10)

    def mousepad(self, home: Path, cwd: Path | None = None, **env: str) -> Any:
        """Debian's Mousepad (GTK 3)."""
        return self.editor(MOUSEPAD, home, cwd, **env)


@dataclass(frozen=True)
class Editor:
    """A desktop text editor from Debian, as the tests drive it."""

    argv: tuple[str, ...]
    save_as: str  # the title of its Save dialog
    saves_in_home: bool  # its Save dialog opens in the home folder (else in the folder it started in)
    env: dict[str, str] = dataclasses.field(default_factory=dict)  # what turns its accessibility on


MOUSEPAD = Editor(("mousepad",), "Save As", saves_in_home=False)
# a dark theme for any Qt app: its own style sheet (Qt's -stylesheet argument), light text on dark
DARK_QSS = "* { background-color: #1e1f22; color: #e8e8e8; selection-background-color: #3d6fb4; }"
# Qt 5 asks the accessibility bus only when told to (no desktop settings daemon says so here)
FEATHERPAD = Editor(("featherpad",), "Save as...", saves_in_home=True,
                    env={"QT_ACCESSIBILITY": "1", "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1"})


class AllowAll:
    """A person who allows every question of a replay (its plan, each desktop act)."""

    def ask(self, request: Any) -> Any:
        from teachd.runner.gate import Answer

        return Answer(request.id, True)


def until(what: Callable[[], T | None], timeout: float, say: str) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (got := what()) is not None and got is not False:
            return got
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout:.0f} s: {say}")


def _wm_running(env: dict[str, str]) -> bool:
    said = subprocess.run([need("xprop"), "-root", "_NET_SUPPORTING_WM_CHECK"], env=env, capture_output=True,
                          text=True, timeout=10).stdout
    return "window id" in said


@contextlib.contextmanager
def a11y_session(size: str = "1280x800x24") -> Iterator[DesktopSession]:
    """Xvfb, a D-Bus session bus on it (dbus-launch; AT-SPI's bus starts on
    demand), a window manager (Openbox), and this process's AT-SPI client bound to that bus. AT-SPI binds
    a process to the first bus it meets, so one session serves a whole test
    process (a session-scoped fixture); the variables are put back after."""
    from recorder.a11y import open_desktop

    for program in ("Xvfb", "dbus-launch", "openbox", "xprop", "xdotool"):
        need(program)
    with xvfb(size) as display:
        out = subprocess.run(["dbus-launch", "--sh-syntax"], env={**os.environ, "DISPLAY": display},
                             capture_output=True, text=True, timeout=30, check=True).stdout
        bus = dict(re.findall(r"^(DBUS_SESSION_BUS_\w+)='?([^';\n]*)'?;", out, re.M))
        address, pid = bus["DBUS_SESSION_BUS_ADDRESS"], int(bus["DBUS_SESSION_BUS_PID"])
        env = {**os.environ, "DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": address}
        env.pop("NO_AT_BRIDGE", None)
        saved = {k: os.environ.get(k) for k in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
        os.environ.update(DISPLAY=display, DBUS_SESSION_BUS_ADDRESS=address)
        try:
            desktop = open_desktop()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        # a window manager, as on a desktop: it places new windows, focuses on click, raises
        wm = subprocess.Popen(["openbox", "--sm-disable"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
        until(lambda: _wm_running(env) or None, 20, "the window manager")
        try:
            yield DesktopSession(display, env, desktop)
        finally:
            wm.terminate()
            wm.wait(10)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)


def connect(pw: Any, port: int) -> tuple[Any, Any]:
    """The recorder's browser over its DevTools port, on the sample app's sign-in page."""
    browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
    page = browser.contexts[0].pages[0]
    page.wait_for_selector("#email")
    return browser, page


def to_screen(page: Any, x: float, y: float) -> tuple[int, int]:
    """A point of the page's viewport on the X screen (headed Chromium)."""
    chrome = page.evaluate("() => ({x: window.screenX + (window.outerWidth - window.innerWidth),"
                           " y: window.screenY + (window.outerHeight - window.innerHeight)})")
    return int(chrome["x"] + x), int(chrome["y"] + y)


def screen_point(page: Any, selector: str, frame: Any = None) -> tuple[int, int]:
    """Where an element's centre is on the X screen (headed Chromium)."""
    el = (frame or page).locator(selector)
    el.scroll_into_view_if_needed()
    box = el.bounding_box()  # relative to the main frame's viewport
    return to_screen(page, box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


class BarProbe:
    """The recording bar as DevTools sees it: its shadow root is closed to the
    page (and to Playwright's selectors), not to the DOM domain, which
    pierces it. For a test to find the bar's buttons and read its toast."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.cdp = page.context.new_cdp_session(page)

    def _nodes(self) -> list[dict[str, Any]]:
        root = self.cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]
        out: list[dict[str, Any]] = []

        def walk(node: dict[str, Any], inside: bool) -> None:
            inside = inside or node.get("nodeName") == "TEACHD-RECORDER"
            if inside:
                out.append(node)
            for child in (node.get("children") or []) + (node.get("shadowRoots") or []):
                walk(child, inside)

        walk(root, False)
        return out

    @staticmethod
    def _text(node: dict[str, Any]) -> str:
        parts: list[str] = []

        def walk(n: dict[str, Any]) -> None:
            if n.get("nodeType") == 3:
                parts.append(n.get("nodeValue", ""))
            for c in n.get("children") or []:
                walk(c)

        walk(node)
        return " ".join("".join(parts).split())

    def button(self, label: str) -> tuple[int, int]:
        """Screen point of the bar's button with this label."""
        node = next(n for n in self._nodes() if n.get("nodeName") == "BUTTON" and self._text(n) == label)
        quad = self.cdp.send("DOM.getBoxModel", {"nodeId": node["nodeId"]})["model"]["content"]
        return to_screen(self.page, (quad[0] + quad[4]) / 2, (quad[1] + quad[5]) / 2)

    def _by_class(self, css_class: str) -> dict[str, Any]:
        for n in self._nodes():
            attrs = n.get("attributes") or []
            if "class" in attrs and css_class in attrs[attrs.index("class") + 1].split():
                return n
        raise LookupError(css_class)

    def box_of(self, css_class: str) -> dict[str, float]:
        """The element's box in the viewport (CSS px)."""
        q = self.cdp.send("DOM.getBoxModel", {"nodeId": self._by_class(css_class)["nodeId"]})["model"]["border"]
        return {"x": q[0], "y": q[1], "w": q[4] - q[0], "h": q[5] - q[1]}

    def point_of(self, css_class: str) -> tuple[int, int]:
        b = self.box_of(css_class)
        return to_screen(self.page, b["x"] + min(20, b["w"] / 2), b["y"] + b["h"] / 2)

    def to_screen(self, x: float, y: float) -> tuple[int, int]:
        return to_screen(self.page, x, y)

    def text(self, css_class: str) -> str:
        for n in self._nodes():
            attrs = n.get("attributes") or []
            if "class" in attrs and css_class in attrs[attrs.index("class") + 1].split():
                return self._text(n)
        return ""

    def wait_text(self, css_class: str, predicate: Any, timeout: float = 10) -> str:
        """The element's text once ``predicate`` holds for it (the bar updates
        when the recorder answers, a moment after the event is written)."""
        import time

        deadline = time.monotonic() + timeout
        while True:
            text = self.text(css_class)
            if predicate(text) or time.monotonic() > deadline:
                return text
            self.page.wait_for_timeout(50)

    def present(self) -> bool:
        return bool(self._nodes())


def recording_on(desk: DesktopSession, env: dict[str, str], url: str, pw: Any) -> tuple[Teach, Any]:
    """The recorder on the desktop session's display, its browser first (a
    window without a window manager stacks over what was mapped before it)."""
    teach = Teach({**env, "DISPLAY": desk.display, "DBUS_SESSION_BUS_ADDRESS": desk.env["DBUS_SESSION_BUS_ADDRESS"]},
                  "Save a note", url)
    browser, _page = connect(pw, teach.cdp_port)
    return teach, browser


def save_a_note(desk: DesktopSession, env: dict[str, str], url: str, pw: Any, folder: Path,
                note: str = "Call the bank on Monday", editor: Editor = MOUSEPAD,
                file_name: str = "notes.txt", save: str = "Return") -> tuple[Teach, tuple[int, str, str]]:
    """A person teaches "Save a note" through the recorder on the desktop
    session: the sample app's sign-in page, then a fresh ``editor`` started
    in ``folder`` (its home ``folder/person``): click its text field, type
    ``note`` (a line break as the Return key), Ctrl+S, ``file_name`` over
    what the Save dialog proposes, Enter (``save``: else the dialog's button
    of that name, clicked) — until the saved file's name shows in the title. The recording ends (the browser's pages closed) while the
    editor is still up, as a person stops before closing the app: (the
    recorder, what ``finish`` said)."""
    from teachd.runner.desktop import DesktopActor

    teach, browser = recording_on(desk, env, url, pw)
    saved = (folder / "person" if editor.saves_in_home else folder) / file_name
    with desk.editor(editor, folder / "person", folder) as app:
        desk.place(desk.find(app.pid, "text", "").window, app.pid)  # where the person keeps it
        desk.click(desk.find(app.pid, "text", ""))
        teach.wait_for(lambda evs: any(e["type"] == "os_click" for e in evs))
        for i, line in enumerate(note.split("\n")):
            if i:
                desk.xdo("key", "Return")
            desk.xdo("type", "--delay", "15", line)
        desk.xdo("key", "ctrl+s")
        teach.wait_for(lambda evs: any(e["type"] == "os_key" for e in evs))
        until(lambda: desk.find(app.pid, "text", window=editor.save_as), 20, "the Save dialog's name")
        # the person sees the dialog (the recorder's look at the window) before moving to it
        teach.wait_for(lambda evs: any(e["type"] == "os_window" and e["window"] == editor.save_as for e in evs))
        desk.place(editor.save_as, app.pid)  # what a window manager does with a new dialog
        desk.click(until(lambda: desk.find(app.pid, "text", window=editor.save_as), 10, "the name field"))
        desk.xdo("key", "ctrl+a")
        desk.xdo("type", "--delay", "15", file_name)  # in the folder the dialog opened in
        name = desk.find(app.pid, "text", window=editor.save_as)
        until(lambda: desk.desktop.text(name) == file_name, 10, "the whole name typed")
        DesktopActor(desk.desktop, desk.display).settle(name)  # a person sees the dialog has caught up
        if save == "Return":
            desk.xdo("key", "Return")
        else:
            desk.click(desk.find(app.pid, "push button", save, window=editor.save_as), rest=1.0)
        until(lambda: saved.is_file(), 20, f"{file_name} saved by the editor")
        # the person sees the saved file's name in the title (the recorder's look at the window;
        # written after the Enter or the click that saved, which hold their places)
        teach.wait_for(lambda evs: any(e["type"] == "os_window" and file_name in e["window"]
                                       and e["window"] != editor.save_as for e in evs))
        return teach, stop_recording(teach, browser)


def stop_recording(teach: Teach, browser: Any) -> tuple[int, str, str]:
    """The person ends the recording by closing the browser's pages: what ``teachd teach`` said."""
    for context in browser.contexts:
        for page in context.pages:
            page.close()
    return teach.finish()


# -- a GTK calculator nobody here wrote (Debian's galculator) -------------------------------------------
CALC_KEYS = ("7", "+", "2", "=")  # the task: 7 + 2 =, judged by the display showing 9


def calc_shows(desk: DesktopSession, pid: int) -> str:
    """What the calculator's display shows."""
    text = desk.find(pid, "text")
    return (desk.desktop.text(text) or "").strip() if text is not None else ""


@contextlib.contextmanager
def calculator(desk: DesktopSession, home: Path, at: tuple[int, int] = (150, 120),
               size: tuple[int, int] | None = None, **env: str) -> Iterator[subprocess.Popen[bytes]]:
    """galculator, placed ``at`` (and sized), once its keys are on the accessibility bus."""
    proc = desk.start(["galculator"], home, **env)
    try:
        until(lambda: desk.find(proc.pid, "toggle button", "7"), 30, "galculator's keys on the accessibility bus")
        desk.place("galculator", proc.pid, *at, size=size)
        yield proc
    finally:
        proc.kill()
        proc.wait()


def teach_a_sum(desk: DesktopSession, env: dict[str, str], url: str, pw: Any,
                folder: Path) -> tuple[Teach, tuple[int, str, str]]:
    """A person teaches "7 + 2 =" through the recorder: the page at ``url``
    first (every recording begins in the browser), then galculator's keys,
    clicked at their centres; the recording ends with the 9 on the display:
    (the recorder, what ``finish`` said)."""
    teach, browser = recording_on(desk, env, url, pw)
    with calculator(desk, folder) as calc:
        for i, key in enumerate(CALC_KEYS, 1):
            desk.click(desk.find(calc.pid, "toggle button", key))
            teach.wait_for(lambda evs, i=i: sum(e["type"] == "os_click" for e in evs) >= i)
        until(lambda: calc_shows(desk, calc.pid) == "9", 10, "9 on the person's calculator")
        return teach, stop_recording(teach, browser)


@contextlib.contextmanager
def taught_on_desk(folder: Path, teach: Callable[[dict[str, str], str, Any], tuple[int, str, str]]) -> Iterator[
        tuple[dict[str, str], str, Any]]:
    """A desktop task taught through the recorder by ``teach`` (given
    teachd's environment, the sample app's sign-in page every recording
    begins on, Playwright): (the environment, the skill's slug, its plan),
    the sign-in page still up for the replays' first step."""
    import json

    from playwright.sync_api import sync_playwright

    from compiler.plan import Procedure
    from teachd.config import Settings
    from teachd.demo.sampleapp import SampleApp
    from teachd.store import open_store

    (folder / "home").mkdir(mode=0o700)
    (folder / "user").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEACHD_")}
    env.update(TEACHD_HOME=str(folder / "home"), HOME=str(folder / "user"), TEACHD_OWNER="alice",
               PYTHONUTF8="1")
    with SampleApp(password="unused-Pw-1") as app:
        with sync_playwright() as pw:
            code, out, err = teach(env, app.url + "/login", pw)
        assert code == 0, err[-1500:]
        slug = json.loads(out)["slug"]
        skill = open_store(Settings(home=folder / "home", owner="alice")).get(slug)
        yield env, slug, Procedure.from_files(skill.current.files)
