"""The desktop's accessibility layer (AT-SPI, Linux), read as plain data.

Why: a desktop app names its widgets for screen readers — a role, a name,
the roles and names of the containers from its window down. That is
evidence a replay can look for again after the window moved, the theme or
font changed, or another window covers it, where coordinates or a picture
would click wrong. The recorder reads the widget under a click here, at
click time; the runner finds widgets and reads their text through the same
functions.

AT-SPI comes from the ``Atspi`` typelib through PyGObject (the ``desktop``
extra) and needs an accessibility bus beside the X display (a desktop
session starts one; tests start it with ``dbus-launch``). Without either,
:func:`open_desktop` raises :class:`NoAccessibility` saying which is
missing, and callers fall back to the picture.

A :class:`Widget` is a snapshot: its ``node`` is the live object, valid
while the app runs, used to act on it and never written anywhere.

One coordinate space: the X server's pixels. GTK 3 and Qt 5 report
extents in their own logical pixels, which a scaled app (``GDK_SCALE=2``,
``QT_SCALE_FACTOR``) draws at twice (or so) the size: each app's scale is
read from the toolkit's own setting in its environment (:func:`app_scale`)
and every box is converted before anyone compares it with a point on the
screen. A replay checks the result against sources other than AT-SPI
before it clicks (teachd.runner.desktop).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.desktop import WINDOW_ROLES, below_window

# The roles whose text a person types and that hold a secret by nature.
SECRET_ROLES = frozenset({"password text"})
# Widgets of these roles are containers or decoration: a path through them
# names nothing a person sees, so they are left out of a widget's path.
UNNAMED_CONTAINERS = frozenset({"filler", "panel", "scroll pane", "viewport", "page tab", "split pane",
                                "layered pane", "section", "unknown"})
MAX_NODES = 5000  # a window's walk stops here: an app exposing more is not read further
MAX_TEXT = 200  # a longer text (a document) is not kept as what a window shows: too big to be evidence

# A text a window shows, by its place: (role, the named containers below the
# window, n: the n-th text of that role there). Not its name (a label's name
# is its text) nor the window's title (a saved document renames it).
TextPlace = tuple[str, tuple[tuple[str, str], ...], int]


def scale_of(environ: Mapping[str, str]) -> float:
    """How many X pixels a toolkit's logical pixel is, from its own settings
    (GTK's ``GDK_SCALE``, an integer; Qt's ``QT_SCALE_FACTOR``, and one
    value of ``QT_SCREEN_SCALE_FACTORS``); 1 where none is set or readable.
    ``GDK_DPI_SCALE`` scales text only, not coordinates."""
    scale = 1.0
    for name in ("GDK_SCALE", "QT_SCALE_FACTOR"):
        try:
            value = float(environ.get(name) or 1)
        except ValueError:
            continue
        if 0.25 <= value <= 8:
            scale *= value
    screens = (environ.get("QT_SCREEN_SCALE_FACTORS") or "").split(";")
    if len(screens) == 1 and screens[0]:
        try:
            value = float(screens[0].rsplit("=", 1)[-1])
        except ValueError:
            value = 1.0
        scale *= value if 0.25 <= value <= 8 else 1.0
    return scale


def app_scale(pid: int) -> float:
    """The scale an app of this process draws at (:func:`scale_of` of its
    environment; 1 where it cannot be read)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            raw = f.read()
    except OSError:
        return 1.0
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return scale_of({k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs})


class NoAccessibility(Exception):
    """The desktop's accessibility layer cannot be read (no PyGObject, no bus)."""


@dataclass(frozen=True)
class Widget:
    """One widget as AT-SPI describes it (screen coordinates)."""

    role: str
    name: str
    path: tuple[tuple[str, str], ...]  # (role, name) of its named containers, window first
    states: frozenset[str]
    box: tuple[int, int, int, int] | None  # x, y, w, h on the screen; None when the app does not say
    window: str  # the title of its window
    app: str  # the application's name (its process, for most toolkits)
    pid: int
    actions: tuple[str, ...] = ()
    node: Any = field(default=None, compare=False, repr=False)

    @property
    def secret(self) -> bool:
        return self.role in SECRET_ROLES

    @property
    def centre(self) -> tuple[int, int] | None:
        if self.box is None:
            return None
        x, y, w, h = self.box
        return x + w // 2, y + h // 2

    def as_evidence(self) -> dict[str, Any]:
        """What a recording keeps of it (never its text)."""
        out: dict[str, Any] = {"role": self.role, "name": self.name, "path": [list(p) for p in self.path],
                               "states": sorted(self.states & {"editable", "checkable", "checked",
                                                               "multi-line", "single-line", "selectable"}),
                               "app": self.app, "window": self.window}
        if self.box is not None:
            out["box"] = dict(zip(("x", "y", "w", "h"), self.box, strict=True))
        if self.actions:
            out["actions"] = list(self.actions)
        return out


def clean(name: str | None) -> str:
    """A name as a person reads it (GTK pads menu items with spaces for their accelerators)."""
    return " ".join((name or "").split())


class Desktop:
    """The accessibility tree of every app on the display."""

    def __init__(self, atspi: Any) -> None:
        self._atspi = atspi
        self._screen = atspi.CoordType.SCREEN
        self._showing = atspi.StateType.SHOWING
        self._scales: dict[int, float] = {}  # pid → its toolkit's scale (app_scale), read once

    # -- windows ------------------------------------------------------------
    def windows(self, pid: int | None = None) -> list[tuple[Any, str, int, str]]:
        """(node, title, pid, app name) of every showing top-level window."""
        desk = self._atspi.get_desktop(0)
        out = []
        for i in range(desk.get_child_count()):
            app = desk.get_child_at_index(i)
            if app is None:
                continue
            try:
                app_pid, app_name = app.get_process_id(), clean(app.get_name())
            except Exception:  # an app that went away while being read
                continue
            if pid is not None and app_pid != pid:
                continue
            for j in range(app.get_child_count()):
                win = app.get_child_at_index(j)
                if win is not None and self._shown(win):
                    out.append((win, clean(win.get_name()), app_pid, app_name))
        return out

    def _window(self, pid: int, title: str) -> Any:
        """The app's one showing window of that title (None: none, or several)."""
        want = clean(title)
        nodes = [node for node, wtitle, _pid, _app in self.windows(pid) if wtitle == want]
        return nodes[0] if len(nodes) == 1 else None

    def window_box(self, pid: int, title: str) -> tuple[int, int, int, int] | None:
        """The box of the app's window of that title, in the X server's pixels."""
        node = self._window(pid, title)
        return None if node is None else self._box(node, pid)

    def window_active(self, pid: int, title: str) -> bool:
        """Whether the app calls its window of that title the active one (it has the keyboard)."""
        node = self._window(pid, title)
        return node is not None and _has(node, self._atspi.StateType.ACTIVE)

    # -- widgets ------------------------------------------------------------
    def walk(self, window: Any, title: str, pid: int, app: str,
             keep: Callable[[Widget], bool] | None = None) -> Iterator[Widget]:
        """Every showing widget of a window, depth first (``keep``: False
        leaves a widget and everything inside it out)."""
        stack: list[tuple[Any, tuple[tuple[str, str], ...]]] = [(window, ())]
        seen = 0
        while stack and seen < MAX_NODES:
            node, path = stack.pop()
            seen += 1
            if not self._shown(node):
                continue
            widget = self._widget(node, path, title, pid, app)
            if widget is None or (keep is not None and not keep(widget)):
                continue
            yield widget
            step = path if (widget.role in UNNAMED_CONTAINERS and not widget.name) else \
                (*path, (widget.role, widget.name))
            children = [node.get_child_at_index(i) for i in range(node.get_child_count())]
            stack.extend((c, step) for c in reversed(children) if c is not None)

    def at(self, x: int, y: int, pid: int | None = None, title: str | None = None) -> Widget | None:
        """The deepest showing widget whose box holds the point, in the window
        that holds it (``pid``/``title``: the window the X server says is under
        the pointer, when windows overlap)."""
        best: tuple[int, int, Widget] | None = None
        for window, wtitle, wpid, app in self._titled(pid, title):
            # a widget lies inside its container: one whose box misses the point is not entered
            inside = self.walk(window, wtitle, wpid, app, keep=lambda w: w.box is None or _holds(w.box, x, y))
            for widget in inside:
                d = len(widget.path)
                if widget.box is None or (widget.role in UNNAMED_CONTAINERS and not widget.name):
                    continue  # decoration over its widget (Qt lays a filler over its text field)
                area = widget.box[2] * widget.box[3]
                key = (d, -area)
                if best is None or key > (best[0], best[1]):
                    best = (d, -area, widget)
        return best[2] if best is not None else None

    def _titled(self, pid: int | None, title: str | None) -> list[tuple[Any, str, int, str]]:
        """The app's windows to look in for what the X server says happened in
        its window ``title`` (a dialog, not the main window behind it): that
        one; every one where none is titled so and the app has one window (the
        X server's name of it and AT-SPI's differ); none otherwise."""
        windows = self.windows(pid)
        if title is None:
            return windows
        want = clean(title)
        titled = [w for w in windows if w[1] == want]
        return titled or (windows if len(windows) == 1 else [])

    def focused(self, pid: int | None = None, title: str | None = None) -> Widget | None:
        """The widget that has the keyboard's focus (asked of each window's
        Collection in one call: a file chooser holds thousands of widgets);
        ``title``: in the app's window of that title, the X server's focused one."""
        a = self._atspi
        focused = a.StateSet.new([a.StateType.FOCUSED])
        none = a.CollectionMatchType.NONE
        rule = a.MatchRule.new(focused, a.CollectionMatchType.ALL, {}, none, [], none, [], none, False)
        for window, wtitle, wpid, app in self._titled(pid, title):
            try:
                found = window.get_matches(rule, a.CollectionSortOrder.CANONICAL, 1, True)
            except Exception:  # no Collection: every widget is looked at
                found = [w.node for w in self.walk(window, wtitle, wpid, app) if "focused" in w.states]
            for node in found:
                widget = self._widget(node, self._path(node), wtitle, wpid, app)
                if widget is not None and widget.role not in WINDOW_ROLES:
                    return widget
        return None

    def texts(self, pid: int, title: str | None = None,
              between: Callable[[], None] | None = None) -> tuple[str, dict[TextPlace, str]] | None:
        """The texts the app's window shows, by place (:data:`TextPlace`):
        its window titled ``title``, else its active one, else its only one;
        None when that cannot be told or the app went away. What a secret
        widget holds is never read. ``between`` is called between widgets: a
        caller's chance to let a shorter call go first (recorder.turns)."""
        windows = self.windows(pid)
        chosen = [w for w in windows if title is not None and w[1] == clean(title)] or [
            w for w in windows if _has(w[0], self._atspi.StateType.ACTIVE)] or windows
        if len(chosen) != 1:
            return None
        node, wtitle, wpid, app = chosen[0]
        out: dict[TextPlace, str] = {}
        seen: dict[tuple[str, tuple[tuple[str, str], ...]], int] = {}  # texts so far of a role at a path
        try:
            for widget in self.walk(node, wtitle, wpid, app):
                if between is not None:
                    between()
                if widget.secret or widget.role in WINDOW_ROLES:
                    continue
                text = self.text(widget)
                if text is None:
                    continue
                below = tuple((r, nm) for r, nm in below_window(widget.path))
                n = seen.get((widget.role, below), 0)
                seen[(widget.role, below)] = n + 1
                out[(widget.role, below, n)] = " ".join(text.split())[:MAX_TEXT + 1]
        except Exception:  # the app went away while read: nothing known
            return None
        return wtitle, out

    def _path(self, node: Any) -> tuple[tuple[str, str], ...]:
        """The named containers from the window down to ``node`` (as ``walk`` builds it)."""
        path: list[tuple[str, str]] = []
        parent = node.get_parent()
        while parent is not None:
            role, name = str(parent.get_role_name()), clean(parent.get_name())
            if role == "application":  # above the window: the path has ended
                break
            if not (role in UNNAMED_CONTAINERS and not name):
                path.append((role, name))
            parent = parent.get_parent()
        return tuple(reversed(path))

    def text(self, widget: Widget) -> str | None:
        """What a text widget holds (None: not a text widget)."""
        node = widget.node
        try:
            if "Text" not in node.get_interfaces():
                return None
            text = self._atspi.Text
            return str(text.get_text(node, 0, text.get_character_count(node)))
        except Exception:
            return None

    def act(self, widget: Widget, name: str) -> bool:
        """Run the widget's own action ``name`` ("click", "press", "activate")."""
        names = _action_names(widget.node)
        if name not in names:
            return False
        try:
            return bool(widget.node.do_action(names.index(name)))
        except Exception:
            return False

    def states(self, widget: Widget) -> frozenset[str]:
        """Its states now (a snapshot's may be old)."""
        try:
            return frozenset(s.value_nick for s in widget.node.get_state_set().get_states())
        except Exception:
            return frozenset()

    def grab_focus(self, widget: Widget) -> bool:
        """Move the keyboard's focus to it (its app's own call: no pointer needed)."""
        try:
            return bool(widget.node.grab_focus())
        except Exception:
            return False

    # -- reading one node ---------------------------------------------------
    def _shown(self, node: Any) -> bool:
        return _has(node, self._showing)

    def scale(self, pid: int) -> float:
        """The app's scale (:func:`app_scale`), read once per process."""
        if pid not in self._scales:
            self._scales[pid] = app_scale(pid)
        return self._scales[pid]

    def _box(self, node: Any, pid: int | None = None) -> tuple[int, int, int, int] | None:
        """The node's box in the X server's pixels (its toolkit's own, scaled by its app's scale)."""
        try:
            e = node.get_extents(self._screen)
        except Exception:
            return None
        if e.width <= 0 or e.height <= 0 or e.x < -10000 or e.y < -10000:
            return None  # not on screen, or the toolkit does not say (GTK's page tabs)
        k = self.scale(pid) if pid is not None else 1.0
        return round(e.x * k), round(e.y * k), round(e.width * k), round(e.height * k)

    def _widget(self, node: Any, path: tuple[tuple[str, str], ...], title: str, pid: int,
                app: str) -> Widget | None:
        try:
            role = str(node.get_role_name())
            name = clean(node.get_name())
            states = frozenset(s.value_nick for s in node.get_state_set().get_states())
            actions = tuple(_action_names(node))
        except Exception:  # gone while being read
            return None
        return Widget(role, name, path, states, self._box(node, pid), title, app, pid, actions, node)


def _action_names(node: Any) -> list[str]:
    """The widget's own actions. (libatspi 2.46 marks the only way to read
    their names deprecated, with nothing to use instead.)"""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return [str(node.get_action_name(i)) for i in range(node.get_n_actions())]
    except Exception:
        return []


def _has(node: Any, state: Any) -> bool:
    try:
        return bool(node.get_state_set().contains(state))
    except Exception:
        return False


def _holds(box: tuple[int, int, int, int], x: int, y: int) -> bool:
    bx, by, bw, bh = box
    return bx <= x < bx + bw and by <= y < by + bh


def open_desktop() -> Desktop:
    """The accessibility tree of the display in ``$DISPLAY``; why not, if it cannot be read."""
    try:
        import gi

        gi.require_version("Atspi", "2.0")
        from gi.repository import Atspi
    except (ImportError, ValueError) as exc:
        raise NoAccessibility("the desktop's accessibility layer needs PyGObject and Debian's "
                              f"gir1.2-atspi-2.0 (pip install 'teachd[desktop]'): {exc}") from None
    if not _bus_answers():
        # libatspi ends the process (a fatal GLib error) when it finds no bus: ask first
        raise NoAccessibility("no accessibility bus on this desktop (AT-SPI): start the desktop session's "
                              "at-spi-bus-launcher, or run under a session bus (dbus-launch)")
    Atspi.get_desktop(0).get_child_count()
    return Desktop(Atspi)


def _bus_answers(timeout_ms: int = 5000) -> bool:
    """Whether AT-SPI's bus can be reached as libatspi looks for it: the X
    root window's ``AT_SPI_BUS``, else the session bus's ``org.a11y.Bus``."""
    import os

    from gi.repository import Gio, GLib

    address = _x_bus_address() if os.environ.get("DISPLAY") else None
    if address is None:
        try:
            session = Gio.bus_get_sync(Gio.BusType.SESSION, None)
            reply = session.call_sync("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress", None,
                                      GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, timeout_ms, None)
            address = str(reply.unpack()[0])
        except GLib.Error:
            return False
    flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
    try:
        Gio.DBusConnection.new_for_address_sync(address, flags, None, None).close_sync(None)
    except GLib.Error:
        return False
    return True


def _x_bus_address() -> str | None:
    """``AT_SPI_BUS`` on the display's root window (set by a desktop session), if any."""
    try:
        from Xlib import display

        d = display.Display()
        try:
            atom = d.intern_atom("AT_SPI_BUS", only_if_exists=True)
            if not atom:
                return None
            prop = d.screen().root.get_full_property(atom, 0)
            return bytes(prop.value).decode() if prop is not None and prop.value else None
        finally:
            d.close()
    except Exception:
        return None
