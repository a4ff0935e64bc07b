"""Desktop steps replayed: a desktop anchor found again, then acted on as a
person acts — or a halt that names the step.

Finding is pure (``match``: exactly one showing widget agrees with the
anchor's window and widget evidence, or why not); acting sits at the edge:
the accessibility tree (recorder.a11y) and xdotool as the person's hands,
both passed in. A click lands only where the pointer's window is the
target's own window (another window on top: the widget's own action, where
the app offers one; otherwise a halt, never a click on what covers it).
Where the widget is comes from AT-SPI, in the X server's pixels
(recorder.a11y converts each app's scale); before the pointer clicks there,
two sources that are not AT-SPI must not say otherwise: the X server's top
window under the pointer, and the demonstrated picture of the place, looked
for in the widget's window — found clearly somewhere else is a halt.
Typing goes through xdotool's standard input (never its command line, which
any process can read) and is read back through accessibility where the
widget shows its text.
"""

from __future__ import annotations

import fnmatch
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from compiler.desktop import below_window
from teachd.core.errors import Unavailable

PRESS_ACTIONS = ("click", "press")  # a widget's own actions that do what a click does ("activate"
# on a text field is its Enter: not a click)
SIZE_SLACK = 0.2  # a window's X size and its AT-SPI size agree within this share (decorations, shadows)
VETO_SCORE = 0.45  # how alike the demonstrated picture must be, found elsewhere, to stop a click,
VETO_MARGIN = 0.05  # and by how much clearer there than anywhere else (a keypad's keys look alike)
SCALED_UP = (2.0, 3.0)  # a picture is also looked for at the scales a desktop is commonly set to
TYPING_DELAYS = (8, 40, 120)  # ms between keys: slower goes where the read-back differs (a busy app)
QUIET = 0.4  # seconds an app shows no change before the next step (a person sees it has caught up)
SETTLE_MAX = 5.0


class DesktopHalt(Exception):
    """The step cannot be done safely; the message says why (the runner names the step)."""


@dataclass(frozen=True)
class Found:
    widget: Any  # recorder.a11y.Widget
    why: str = ""
    several: tuple[Any, ...] = ()  # when ambiguous: the widgets that agree


def same(a: Any, b: Any) -> bool:
    """The same widget, as evidence tells (two snapshots of one widget)."""
    return (a.pid, a.role, a.name, a.path, a.window) == (b.pid, b.role, b.name, b.path, b.window)


def title_matches(title: str, window: Mapping[str, Any]) -> bool:
    pattern = window.get("title_pattern") or window.get("title")
    return not pattern or fnmatch.fnmatchcase(title, str(pattern)) or title == window.get("title")


def agrees(widget: Any, anchor: Mapping[str, Any]) -> bool:
    """The widget is the anchor's: its app, a window whose title fits, and
    the role, name and named containers the demonstration saw."""
    window, want = anchor.get("window") or {}, anchor.get("widget") or {}
    if window.get("app") and widget.app != window["app"]:
        return False
    if not title_matches(widget.window, window):
        return False
    return bool(widget.role == want.get("role") and widget.name == want.get("name")
                and below_window(widget.path) == [list(p) for p in want.get("path") or []])


def match(widgets: Iterable[Any], anchor: Mapping[str, Any]) -> Found:
    """Exactly one agreeing widget, or None and why (nothing, or several: a guess is never made)."""
    widgets = list(widgets)
    found = [w for w in widgets if agrees(w, anchor)]
    if len(found) == 1:
        return Found(found[0])
    what = anchor.get("describe") or "the widget"
    if not found:
        role = (anchor.get("widget") or {}).get("role")
        near = [f"{w.role} {w.name!r} at {below_window(w.path)} in {w.window!r}"
                for w in widgets if w.role == role]
        window = anchor.get("window") or {}
        where = (f" (of that role there: {'; '.join(near[:2])})" if near else "" if widgets else
                 f" (no {window.get('app') or 'such'} window titled like {window.get('title_pattern')!r})")
        return Found(None, f"{what} is not on the desktop{where}")
    return Found(None, f"{what} is ambiguous: {len(found)} widgets agree with it; "
                       "stopping rather than guessing", tuple(found))


def differs(texts: Mapping[Any, str] | None, shows: Iterable[Mapping[str, Any]], klass: str) -> list[str]:
    """Each text of ``shows`` (role, path, n, text: a place in the window and
    what it showed) that ``texts`` (recorder.a11y ``Desktop.texts``) does
    not show there, in words; all of them when the window is not known."""
    from compiler.desktop import NOUNS, app_name

    app = app_name(None, klass)
    if texts is None:
        return [f"the {app} window this run acted in cannot be read: its end is not confirmed"]
    out = []
    for t in shows:
        place = (t["role"], tuple(tuple(p) for p in t["path"]), int(t["n"]))
        now, want = texts.get(place), " ".join(str(t["text"]).split())
        if now != want:
            noun = NOUNS.get(str(t["role"]), str(t["role"]))
            out.append(f"the {app} {noun} shows {now!r} where the demonstration ended on {want!r}"
                       if now is not None else f"the {app} {noun} that showed {want!r} is not there")
    return out


def outside_apps(klass: str, apps: Iterable[str]) -> str | None:
    """Why acting in an app of this class asks first: it is not among those the skill was taught on."""
    taught = list(apps)
    if klass and taught and klass not in taught:
        return f"{klass} is not among the applications the skill was taught on ({', '.join(taught)})"
    return None


class DesktopActor:
    """The desktop's hands and eyes for one replay."""

    def __init__(self, desktop: Any, display: str | None = None,
                 run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run) -> None:
        self.desktop = desktop
        self.display = display
        self._run = run
        self._windows: Any = None  # recorder.desktop.WindowInfo: what the X server shows where

    # -- finding --------------------------------------------------------------
    def widgets(self, anchor: Mapping[str, Any]) -> list[Any]:
        window = anchor.get("window") or {}
        out = []
        for node, title, pid, app in self.desktop.windows():
            if window.get("app") and app != window["app"]:
                continue
            if not title_matches(title, window):
                continue
            out.extend(self.desktop.walk(node, title, pid, app))
        return out

    def find(self, anchor: Mapping[str, Any], timeout: float) -> Any:
        """The one widget, waiting up to ``timeout`` for it to show (a dialog opening)."""
        deadline = time.monotonic() + timeout
        while True:
            found = match(self.widgets(anchor), anchor)
            if found.widget is None and (mine := self._in_focused_window(found.several)) is not None:
                return mine
            if found.widget is not None or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        if found.widget is None:
            raise DesktopHalt(found.why)
        return found.widget

    def _in_focused_window(self, several: Iterable[Any]) -> Any | None:
        """Of widgets that agree in several windows (two documents of one
        app), the one in the window a person would call theirs: the X server
        gives it the keyboard, and AT-SPI calls it the active one — two
        sources; None unless exactly one widget is there."""
        several = list(several)
        if not several:
            return None
        wid = self.xdo("getwindowfocus").strip()
        if not wid or wid == "0":
            return None
        title, pid = self.xdo("getwindowname", wid).strip(), self.xdo("getwindowpid", wid).strip()
        mine = [w for w in several if str(w.pid) == pid and w.window == title]
        if len(mine) != 1 or not self.desktop.window_active(mine[0].pid, mine[0].window):
            return None
        return mine[0]

    # -- acting ---------------------------------------------------------------
    def xdo(self, *args: str, stdin: str | None = None) -> str:
        import os

        env = dict(os.environ)
        if self.display:
            env["DISPLAY"] = self.display
        try:
            done = self._run(["xdotool", *args], input=stdin, capture_output=True, text=True, env=env,
                             timeout=30)
        except FileNotFoundError:
            raise Unavailable("xdotool is missing: install Debian's xdotool") from None
        return str(done.stdout)

    def _window_ids(self, widget: Any) -> list[str]:
        """The X server's visible windows of the widget's app titled as its window."""
        import re

        # --all: its process and its title (xdotool's default is either one)
        return self.xdo("search", "--all", "--onlyvisible", "--pid", str(widget.pid), "--name",
                        f"^{re.escape(widget.window)}$").split()

    def _focus_window(self, widget: Any) -> None:
        """Its window raised and focused, as a person brings a window forward."""
        if ids := self._window_ids(widget):
            self._bring_forward(ids[-1])

    def _bring_forward(self, wid: str) -> None:
        """An X window raised and given the focus."""
        self.xdo("windowraise", wid)
        if self.xdo("getwindowfocus").strip() != wid:  # --sync on the focused one waits in vain
            self.xdo("windowfocus", "--sync", wid)

    def _point_at(self, x: int, y: int) -> None:
        if self._pointer()[:2] != (str(x), str(y)):  # --sync to where it already is waits in vain
            self.xdo("mousemove", "--sync", str(x), str(y))

    def _on_top(self) -> Any:
        """The X server's top window under the pointer (recorder.desktop.Window)."""
        if self._windows is None:
            from recorder.desktop import WindowInfo

            self._windows = WindowInfo()
        return self._windows.at_pointer()

    def _shows(self, widget: Any, x: int, y: int) -> bool:
        """Whether the point shows this very widget: the X server's top window
        under the pointer is the widget's (its own answer, not AT-SPI's), and
        in that window — not another of the app's, under it — the widget there
        is this one."""
        top = self._on_top()
        if top.pid != widget.pid or top.title != widget.window:
            return False
        under = self.desktop.at(x, y, pid=widget.pid, title=top.title)
        return under is not None and same(under, widget)

    def _screen(self) -> tuple[int, int]:
        size = self.xdo("getdisplaygeometry").split()
        return (int(size[0]), int(size[1])) if len(size) == 2 else (0, 0)

    def click(self, widget: Any, anchor: Mapping[str, Any] | None = None) -> str:
        """Click the widget (``anchor``: its evidence, where in it the person
        clicked and the picture of the place); returns how ("pointer" or its
        own action). The pointer clicks only where it shows this very widget."""
        if widget.box is None:
            return self._own_action(widget, "it shows no place on the screen")
        if why := self._not_borne_out(widget, anchor or {}):
            raise DesktopHalt(f"not clicking {widget.role} {widget.name!r}: {why}; stopping rather than "
                              "guessing")
        offset = ((anchor or {}).get("at") or {}).get("in")
        x, y, w, h = widget.box
        px, py = x + w // 2, y + h // 2
        if offset and 0 <= offset.get("x", -1) < w and 0 <= offset.get("y", -1) < h:
            px, py = x + int(offset["x"]), y + int(offset["y"])  # where the person clicked in it
        sw, sh = self._screen()
        if not (0 <= px < sw and 0 <= py < sh):
            return self._own_action(widget, "it is off the screen")
        self._focus_window(widget)
        self._point_at(px, py)
        if not self._shows(widget, px, py):
            return self._own_action(widget, "something else is where it shows")
        self.xdo("click", "1")
        return "pointer"

    def _not_borne_out(self, widget: Any, anchor: Mapping[str, Any]) -> str:
        """The sources that are not AT-SPI, before a pointer click: the X
        server's window of the widget, whose size AT-SPI's must agree with
        (else its places are not the screen's), and where that window shows the
        demonstrated picture of the place. '' when they bear AT-SPI out, or
        the picture is nowhere clearly (a field whose text changed: no say);
        else why not, in words."""
        import base64
        import io

        from PIL import Image

        from recorder.crops import grab_screen
        from teachd.runner.picture import SCALES, PictureMatch, find

        png = str((anchor.get("picture") or {}).get("png") or "")
        geo, why = self._x_window(widget)
        if geo is None:
            return why
        if not png:
            return ""
        crop = Image.open(io.BytesIO(base64.b64decode(png)))
        # the window and what a crop at its edge takes in around it (its frame, the desktop)
        k = self.desktop.scale(widget.pid)
        mx, my = round(crop.width * max(k, 1.0)), round(crop.height * max(k, 1.0))
        left, top = max(0, geo["X"] - mx), max(0, geo["Y"] - my)
        shot = grab_screen({"x": left, "y": top, "w": geo["X"] + geo["WIDTH"] + mx - left,
                            "h": geo["Y"] + geo["HEIGHT"] + my - top})
        if shot is None:
            return ""
        # the scales a picture may be drawn at here, whatever teachd read of the app's own
        scales = sorted({*SCALES, *(s * k for s in SCALES), *SCALED_UP})
        # a looser likeness than a click by picture needs: this can only stop a click, never make one
        m = find(shot, crop, scales=scales, min_score=VETO_SCORE, margin=VETO_MARGIN)
        if not isinstance(m, PictureMatch) or not 0.7 * k <= m.scale <= 1.5 * k:
            return ""  # nowhere clearly, or only at a size the app does not draw at
        x, y, w, h = widget.box
        px, py = left + m.x, top + m.y
        if x <= px < x + w and y <= py < y + h:
            return ""
        return (f"the screen shows its demonstrated picture at {px},{py}, but the accessibility layer "
                f"puts it at {x},{y} ({w}×{h})")

    def _x_window(self, widget: Any, wait: float = 2.0) -> tuple[dict[str, int] | None, str]:
        """The X server's geometry of the widget's window — of its app's
        visible windows of that title (a toolkit maps helper windows beside
        it), the one whose size agrees with AT-SPI's window — given a moment
        to be mapped; or None and why not."""
        deadline = time.monotonic() + wait
        while not (ids := self._window_ids(widget)) and time.monotonic() < deadline:
            time.sleep(0.1)
        geos = [geo for wid in ids
                if len(geo := {k: int(v) for k, v in self._shell("getwindowgeometry", wid).items()
                               if k in ("X", "Y", "WIDTH", "HEIGHT")}) == 4]
        if not geos:
            return None, f"the X server shows no window of it titled {widget.window!r}"
        box = self.desktop.window_box(widget.pid, widget.window)
        if box is None:
            if len(geos) == 1:
                return geos[0], ""
            return None, f"{len(geos)} windows titled {widget.window!r}, and no size to tell them apart"
        _x, _y, w, h = box
        agree = [g for g in geos if abs(g["WIDTH"] - w) <= SIZE_SLACK * g["WIDTH"]
                 and abs(g["HEIGHT"] - h) <= SIZE_SLACK * g["HEIGHT"]]
        if len(agree) == 1:
            return agree[0], ""
        big = max(geos, key=lambda g: g["WIDTH"] * g["HEIGHT"])
        if not agree:  # AT-SPI's places are not the screen's (a scale teachd could not read)
            return None, (f"the accessibility layer's window is {w}×{h}, the X server's "
                          f"{big['WIDTH']}×{big['HEIGHT']}: its places are not the screen's")
        return None, f"{len(agree)} windows titled {widget.window!r} fit it"

    def focus(self, widget: Any) -> str:
        """The keyboard's focus on it, as a person gives it: already there
        (the caret shows), its app's own call, or a click."""
        if "focused" in self.desktop.states(widget):
            return "focused"
        if self.desktop.grab_focus(widget) and "focused" in self.desktop.states(widget):
            self._focus_window(widget)
            return "focused"
        return self.click(widget)

    def _shell(self, command: str, *args: str) -> dict[str, str]:
        """xdotool's ``--shell`` answer (KEY=value lines) as a dict."""
        return dict(line.split("=", 1) for line in self.xdo(command, "--shell", *args).split() if "=" in line)

    def _pointer(self) -> tuple[str, str, str]:
        """x, y and the window under the pointer ("0" without a window manager)."""
        out = self._shell("getmouselocation")
        return out.get("X", ""), out.get("Y", ""), out.get("WINDOW", "0")

    def _own_action(self, widget: Any, why: str) -> str:
        for name in PRESS_ACTIONS:
            if name in widget.actions and self.desktop.act(widget, name):
                return name
        raise DesktopHalt(f"cannot click {widget.role} {widget.name!r} safely: {why}, and it offers no "
                          "action of its own")

    def type(self, widget: Any, value: str, secret: bool = False) -> None:
        """Type ``value`` over what the widget holds, then check it holds it.
        A value of several lines goes line by line with Return between them,
        and only into a widget that holds several (else nothing is typed)."""
        value = value.replace("\r\n", "\n").replace("\r", "\n")
        lines = value.split("\n")
        if len(lines) > 1 and "multi-line" not in self.desktop.states(widget):
            raise DesktopHalt(f"the {widget.role} holds one line, and the value has {len(lines)}: "
                              "nothing was typed")
        self.focus(widget)
        if "focused" not in self.desktop.states(widget):
            raise DesktopHalt(f"the {widget.role} would not take the keyboard's focus")
        for delay in TYPING_DELAYS:  # typed again, slower, where a busy app lost a key
            self._type_over(lines, delay)
            if secret or widget.secret:  # a password widget does not show its text
                break
            deadline = time.monotonic() + 5
            while (now := self.desktop.text(widget)) is not None and now != value \
                    and time.monotonic() < deadline:
                time.sleep(0.05)
            if now is None or now == value:
                break
        else:
            raise DesktopHalt(f"the {widget.role} does not hold what was typed (it holds {len(now or '')} "
                              f"characters, {len(value)} were typed)")
        self.settle(widget)

    def _type_over(self, lines: list[str], delay: int) -> None:
        """The lines over what the focused widget holds: a line break is the
        Return key (the one `xdotool type` sends is lost on GTK and Qt)."""
        self.xdo("key", "--clearmodifiers", "ctrl+a")
        if lines == [""]:
            self.xdo("key", "BackSpace")
        for i, line in enumerate(lines):
            if i:
                self.xdo("key", "--clearmodifiers", "Return")
            if line:
                self.xdo("type", "--clearmodifiers", "--delay", str(delay), "--file", "-", stdin=line)

    def settle(self, widget: Any) -> None:
        """Until the app has shown no change for ``QUIET``: the widget's text,
        its windows, what has the focus (a file dialog completing a name
        takes a moment; a key sent meanwhile goes to the completion)."""
        def look() -> tuple[Any, ...]:
            windows = tuple(title for _n, title, _p, _a in self.desktop.windows(widget.pid))
            focused = self.desktop.focused(widget.pid)
            return (None if widget.secret else self.desktop.text(widget), windows,
                    focused and (focused.role, focused.name, focused.window))

        last, since, deadline = look(), time.monotonic(), time.monotonic() + SETTLE_MAX
        while time.monotonic() < deadline:
            time.sleep(0.05)
            now = look()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= QUIET:
                return

    # -- by picture (an app that names nothing) --------------------------------
    def _windows_of(self, anchor: Mapping[str, Any]) -> list[tuple[str, dict[str, int], str]]:
        """(X window, geometry, title) of every visible window of the anchor's class whose title fits."""
        window = anchor.get("window") or {}
        klass = str(window.get("class") or "").split(" ")[0]
        out = []
        for wid in self.xdo("search", "--onlyvisible", "--class", f"^{klass}$").split() if klass else []:
            title = self.xdo("getwindowname", wid).strip()
            if not title_matches(title, window):
                continue
            geo = {k: int(v) for k, v in self._shell("getwindowgeometry", wid).items()
                   if k in ("X", "Y", "WIDTH", "HEIGHT")}
            if len(geo) == 4:
                out.append((wid, geo, title))
        return out

    def find_picture(self, anchor: Mapping[str, Any], timeout: float) -> tuple[str, int, int, str]:
        """The one place, across the app's windows, that shows the demonstrated
        crop: (X window, x, y on the screen, its title); a look-alike in
        another window, or in the same one, is a halt."""
        import base64
        import io

        from PIL import Image

        from recorder.crops import grab_screen
        from teachd.runner.picture import NoMatch, find

        picture = anchor.get("picture") or {}
        crop = Image.open(io.BytesIO(base64.b64decode(str(picture.get("png") or ""))))
        what = anchor.get("describe") or "the demonstrated place"
        deadline = time.monotonic() + timeout
        while True:
            hits, why = [], f"{what} is not on the screen (by its picture)"
            for wid, geo, title in self._windows_of(anchor):
                shot = grab_screen({"x": geo["X"], "y": geo["Y"], "w": geo["WIDTH"], "h": geo["HEIGHT"]})
                if shot is None:
                    continue
                m = find(shot, crop)
                if isinstance(m, NoMatch):
                    if m.ambiguous:
                        raise DesktopHalt(f"{what}: {m.why}")
                    why = f"{what}: {m.why}"
                    continue
                hits.append((wid, geo["X"] + m.x, geo["Y"] + m.y, title))
            if len(hits) > 1:
                raise DesktopHalt(f"{what} is ambiguous: {len(hits)} windows show it; "
                                  "stopping rather than guessing")
            if hits:
                return hits[0]
            if time.monotonic() >= deadline:
                raise DesktopHalt(why)
            time.sleep(0.2)

    def click_picture(self, anchor: Mapping[str, Any], hit: tuple[str, int, int, str]) -> str:
        """Click the place ``find_picture`` found, once its window is on top there."""
        wid, x, y, title = hit
        self._bring_forward(wid)
        self._point_at(x, y)
        if self._on_top().title != title:
            raise DesktopHalt(f"another window is over {anchor.get('describe') or 'it'}")
        self.xdo("click", "1")
        return "picture"

    def shows_window(self, want: Mapping[str, Any], values: list[str], timeout: float) -> str:
        """A window of the app whose title fits ``want``'s pattern and shows
        each of ``values`` (as whole words), within ``timeout``: what the
        demonstration's step left on the screen. Its title, or a halt."""
        from compiler.procedure import appears

        deadline = time.monotonic() + timeout
        while True:
            for _wid, _geo, title in self._windows_of({"window": want}):
                if all(appears(v, title) for v in values if v):
                    return title
            if time.monotonic() >= deadline:
                showing = f" showing {', '.join(repr(v) for v in values)}" if values else ""
                raise DesktopHalt(f"no window like {want.get('title_pattern')!r}{showing} came after it, "
                                  "as in the demonstration: its effect did not show")
            time.sleep(0.2)

    def key(self, keys: str, title_pattern: str | None) -> None:
        """Keys to the focused window, only when it is the one the person pressed them in."""
        focused = self.xdo("getwindowfocus", "getwindowname").strip()
        if title_pattern and not fnmatch.fnmatchcase(focused, title_pattern):
            raise DesktopHalt(f"the keys {keys} would go to the window {focused!r}, not to one like "
                              f"{title_pattern!r}")
        self.xdo("key", "--clearmodifiers", keys)


def keys_of(key: str | None, modifiers: Iterable[str]) -> str:
    """pynput's key names as xdotool's: ("s", ["ctrl"]) → "ctrl+s", "enter" → "Return"."""
    names = {"enter": "Return", "esc": "Escape", "tab": "Tab", "backspace": "BackSpace", "delete": "Delete",
             "up": "Up", "down": "Down", "left": "Left", "right": "Right", "home": "Home", "end": "End",
             "page_up": "Prior", "page_down": "Next", "cmd": "super"}
    mods = [names.get(m, m) for m in modifiers]
    return "+".join([*mods, names.get(str(key), str(key))])
