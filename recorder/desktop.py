"""Desktop input outside the browser (pynput), as ``os_click`` / ``os_key``
/ ``os_input``.

Listener callbacks look up the window (and, where the desktop's
accessibility layer answers, the widget: recorder.a11y) and enqueue. Events
in the browser's own window are skipped (the capture script reports those,
with far better targets). Named keys and shortcuts are kept as they are.
Plain typing is kept only as a widget's final text, read through
accessibility when the person moves on (a click, a named key, the end), as
the browser keeps a field's final value: never from a password widget, one
marked secret (Ctrl+Alt+S, the browser's secret hotkey) or a value shaped
like a secret — those are ``masked`` — and never at all where no widget can
be told (an app without accessibility could be a password prompt).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

from compiler.desktop import WINDOW_ROLES
from compiler.secrets import looks_secret, mask_text
from recorder.app_text import AppTexts, Texts
from recorder.crops import black_out, crop_box, grab_screen, to_png
from recorder.turns import Turns
from recorder.writer import EventWriter, Slot
from recorder.xclock import not_after

BROWSER_CLASSES = ("chromium", "chrome")
NAMED_KEYS = {
    "enter", "esc", "tab", "backspace", "delete", "up", "down", "left", "right", "home", "end",
    "page_up", "page_down", *(f"f{i}" for i in range(1, 13)),
}
MODIFIERS = {"ctrl", "ctrl_l", "ctrl_r", "alt", "alt_l", "alt_r", "alt_gr", "cmd", "cmd_l", "cmd_r"}
SETTLED_READS = 10  # reads of a widget's text 50 ms apart, until two agree (the app catching up on keys)
CATCH_UP_S = 3.0  # how long a widget that shows none of the last keys yet is read again (a busy app behind)
TAIL_CHARS = 32  # the last keys typed, kept in memory only to tell that the widget has shown them
WATCH_EVERY = 0.2  # seconds between looks at the focused window (its title is a step's effect)
# a window manager's _NET_ACTIVE_WINDOW follows the focus's move by the time it takes to handle it
WM_LAG_MS = 200
HOVERS_KEPT = 4  # the last looks at the resting pointer, each with the X server's time it ended


class Window(NamedTuple):
    title: str
    klass: str  # WM_CLASS, lower case: "mousepad mousepad"
    pid: int | None  # _NET_WM_PID, when the app sets it


class WindowInfo:
    """Window titles and classes from the X server (python-xlib, pynput's backend)."""

    def __init__(self) -> None:
        from Xlib import display

        self._d = display.Display()
        self._root = self._d.screen().root
        self._lock = threading.Lock()

    def _top(self, win: Any) -> Any:
        while win is not None:
            parent = win.query_tree().parent
            if parent is None or parent.id == self._root.id:
                return win
            win = parent
        return None

    def _client(self, win: Any) -> Any:
        """The app's own window inside a window manager's frame: the first
        one, breadth first, carrying WM_STATE (ICCCM); the window itself
        where no manager framed it."""
        state = self._d.intern_atom("WM_STATE")
        level = [win]
        for _depth in range(4):
            nxt = []
            for w in level:
                try:
                    if w.get_full_property(state, 0) is not None:
                        return w
                    nxt.extend(w.query_tree().children)
                except Exception:
                    continue
            level = nxt[:200]
        return win

    def _describe(self, win: Any) -> Window:
        title, klass, pid = "", "", None
        stack = [self._client(win)]
        pid_atom = self._d.intern_atom("_NET_WM_PID")
        while stack and not (title and klass and pid):
            w = stack.pop()
            try:
                title = title or (w.get_wm_name() or "")
                cls = w.get_wm_class()
                klass = klass or (" ".join(cls) if cls else "")
                if pid is None and (prop := w.get_full_property(pid_atom, 0)) is not None and prop.value:
                    pid = int(prop.value[0])
                stack.extend(w.query_tree().children[:20])
            except Exception:
                continue
        return Window(str(title), klass.lower(), pid)

    def pointer(self) -> tuple[int, int, Window]:
        """Where the pointer is on the screen, and the window under it."""
        with self._lock:
            at = self._root.query_pointer()
            return at.root_x, at.root_y, (self._describe(at.child) if at.child else Window("", "", None))

    def at_pointer(self) -> Window:
        with self._lock:
            child = self._root.query_pointer().child
            if not child:
                return Window("", "", None)
            return self._describe(child)

    def by_id(self, wid: int) -> Window:
        """The window of that X id, as it is now (raises once it is gone)."""
        with self._lock:
            win = self._d.create_resource_object("window", wid)
            win.get_geometry()  # BadWindow once it is gone: not described as an empty window
            return self._describe(win)

    def focused(self) -> Window:
        with self._lock:
            focus = self._d.get_input_focus().focus
            if not focus or isinstance(focus, int):  # PointerRoot: keys follow the pointer
                child = self._root.query_pointer().child
                return self._describe(child) if child else Window("", "", None)
            top = self._top(focus)
            return self._describe(top) if top is not None else Window("", "", None)


def _around(x: int, y: int) -> dict[str, int]:
    """The screen box a click's picture is taken of: 80×40 around the point (and a margin)."""
    return crop_box({"x": x - 40, "y": y - 20, "w": 80, "h": 40}, {})


def _an_app(win: Window) -> bool:
    """A window of an app outside the browser (not the browser's own, not none)."""
    return bool(win.klass) and not any(b in win.klass for b in BROWSER_CLASSES)


def _coarse(widget: Any) -> bool:
    """A read that found no widget, or only a window: nothing a click names."""
    return widget is None or widget.role in WINDOW_ROLES


class Hover(NamedTuple):
    """What was under the resting pointer, looked at before any click: the
    window, the widget, the picture — should a click close that window
    before its handler can look (a dialog's Save button). ``seen``: the X
    server's time once the look had seen all that (None without a clock)."""

    x: int
    y: int
    win: Window
    widget: Any
    img: Any
    box: dict[str, int]
    seen: int | None = None


class DesktopCapture:
    def __init__(self, writer: EventWriter, desktop: Any = None, windows: Any = None,
                 clock: Callable[[], int] | None = None, active: Any = None) -> None:
        self.writer = writer
        real = windows is None
        self._windows = windows if windows is not None else WindowInfo()  # the X server's, or a test's
        if clock is None and real:
            from recorder.xclock import ServerClock

            clock = ServerClock().now
        self._clock = clock  # the X server's time, which a click's event carries too (recorder.xclock)
        if active is None and real and clock is not None:
            from recorder.xfocus import ActiveWindows

            with contextlib.suppress(Exception):  # no window manager's record to read: the focus is asked
                active = ActiveWindows(self._windows.by_id, clock)
        self._active = active  # which window had the keyboard at an X time (recorder.xfocus)
        self._desktop = desktop  # recorder.a11y.Desktop, or None: crops and titles only
        self._a11y = Turns()  # libatspi is asked from several threads; an app's texts read gives way
        self._mods: set[str] = set()
        self._listeners: list[Any] = []
        self._frames = 0
        self._typing: Any = None  # the widget plain keys went to since the last flush
        self._tail = ""  # the characters typed into it since its typing began or was last edited
        self._typing_class = ""  # its window's class
        self._typing_seen: str | None = None  # its text as last read while typing (the window watch)
        # the editable widget last clicked: where keys typed next go, when the app has not yet
        # told its focus (a busy machine): the click named it, from another source than the focus
        self._clicked: Any = None
        self._secret: set[tuple[Any, ...]] = set()  # widgets marked secret with Ctrl+Alt+S
        self._stopped = threading.Event()
        self._shown: tuple[str, str] | None = None  # the focused window's (title, class) last written
        # what each app showed before and after the person acted there (the effect: ``os_text``)
        self._texts = AppTexts(self._read_texts) if desktop is not None else None
        self._hovers: list[Hover] = []  # what the pointer rested on, oldest first (``_look_at_pointer``)

    def start(self) -> None:
        from recorder.xclock import timed_keyboard_listener, timed_mouse_listener

        self._listeners = [
            timed_mouse_listener(self._on_click),
            timed_keyboard_listener(self._on_press, self._on_release),
        ]
        if self._active is not None:
            self._active.start()
        for listener in self._listeners:
            listener.daemon = True
            listener.start()
        for listener in self._listeners:
            listener.wait()
        threading.Thread(target=self._watch, name="teachd-window-watch", daemon=True).start()

    def stop(self) -> None:
        self._stopped.set()
        if self._active is not None:
            self._active.stop()
        for listener in self._listeners:
            listener.stop()
        self.flush()
        for fields in self._texts.changed() if self._texts is not None else []:
            self.writer.put("os_text", **fields)

    def _read_texts(self, pid: int, title: str | None) -> tuple[str, Texts] | None:
        """A whole window's texts: a long read, which lets the listeners' and
        the pointer's looks go first between widgets (recorder.turns)."""
        if self._desktop is None:
            return None
        with self._a11y.background():
            try:
                got: tuple[str, Texts] | None = self._desktop.texts(pid, title, between=self._a11y.give_way)
            except Exception:  # the app went away while read
                return None
        return got

    def _acted(self, win: Window | None) -> None:
        """The person acted in ``win``: its app's texts are read again once it settles."""
        if self._texts is not None and win is not None:
            self._texts.after(win.pid, win.title, win.klass)

    def _watch(self) -> None:
        """An ``os_window`` event each time the focused window outside the
        browser changes title or app: what a desktop step did shows there
        ("Save As" opening, "notes.txt - Mousepad" once saved), and the
        replay checks it happened again."""
        while not self._stopped.wait(WATCH_EVERY):
            with contextlib.suppress(Exception):  # a look that failed is taken again in 0.2 s
                self._read_typing()
                self._look_at_pointer()
            try:
                win = self._windows.focused()
            except Exception:  # the window went away while read: the next look tells
                continue
            if not win.klass or any(b in win.klass for b in BROWSER_CLASSES):
                continue
            shown = (mask_text(win.title)[0], win.klass)
            if shown != self._shown:
                self._shown = shown
                self.writer.put("os_window", window=shown[0], window_class=shown[1])
                if self._texts is not None:  # what it shows before the person acts in it
                    self._texts.first(win.pid, win.title)

    def _look_at_pointer(self) -> None:
        """What the pointer rests on outside the browser, looked at again only
        when it moves or the window under it changes."""
        pointer = getattr(self._windows, "pointer", None)
        try:
            x, y, win = pointer() if pointer is not None else (0, 0, Window("", "", None))
        except Exception:
            return
        last = self._hovers[-1] if self._hovers else None
        if not _an_app(win):  # the browser, or no window: a look all the same, so that an older one
            if last is None or (last.x, last.y, last.win) != (x, y, win):  # is not taken for it
                self._hovers = [*self._hovers, Hover(x, y, win, None, None, {}, self._now())][-HOVERS_KEPT:]
            return
        if last is not None and (last.x, last.y, last.win) == (x, y, win) and not _coarse(last.widget):
            return  # a read that found only the window (its widgets not yet told) is taken again
        widget = self._widget(lambda d: d.at(x, y, pid=win.pid, title=win.title))
        box = _around(x, y)
        img = grab_screen(box)
        self._hovers = [*self._hovers, Hover(x, y, win, widget, img, box, self._now())][-HOVERS_KEPT:]

    def _now(self) -> int | None:
        try:
            return self._clock() if self._clock is not None else None
        except Exception:  # the X server went away: the look has no time
            return None

    def _rested(self, x: int, y: int, pressed_at: int | None) -> Hover | None:
        """What the pointer rested on when the button went down at (x, y):
        the last look that had ended by then (X server time) — not a look
        the window watch took after the click, which a late handler would
        otherwise find there already (the dialog the click closed gone, the
        window behind it in its place) — and only if it was at that point."""
        hovers = self._hovers
        if pressed_at is not None:
            hovers = [h for h in hovers if h.seen is None or not_after(h.seen, pressed_at)]
        last = hovers[-1] if hovers else None
        return last if last is not None and (last.x, last.y) == (x, y) and _an_app(last.win) else None

    def _read_typing(self) -> None:
        """The text of the widget being typed into, as it reads now: what was
        typed, should the widget close or change on the key that ends it."""
        widget = self._typing
        if widget is None or self._is_secret(widget):
            return
        text = self._widget(lambda d: d.text(widget))
        if text is not None and self._typing is widget:
            self._typing_seen = text

    def _outside_browser(self, lookup: Callable[[], Window]) -> Window | None:
        """The window (its title masked), or None when it is the browser's own
        window, whose events the capture script reports better."""
        try:
            win = lookup()
        except Exception:  # the window went away: still outside the browser
            win = Window("", "", None)
        if any(b in win.klass for b in BROWSER_CLASSES):
            return None
        if self._texts is not None:  # an app first met here: what it shows before the person acts
            self._texts.first(win.pid, win.title)
        return Window(mask_text(win.title)[0], win.klass, win.pid)

    @staticmethod
    def _window_fields(win: Window) -> dict[str, Any]:
        return {"window": win.title, "window_class": win.klass}

    def _widget(self, find: Callable[[Any], Any]) -> Any:
        if self._desktop is None:
            return None
        with self._a11y.urgent():
            try:
                return find(self._desktop)
            except Exception:  # the app went away, or its tree changed while read
                return None

    @staticmethod
    def _identity(widget: Any) -> tuple[Any, ...]:
        return (widget.pid, widget.role, widget.name, widget.path)

    def _target(self, widget: Any) -> dict[str, Any]:
        evidence: dict[str, Any] = widget.as_evidence()
        evidence["window"] = mask_text(evidence.get("window", ""))[0]
        evidence["name"] = mask_text(evidence.get("name", ""))[0]
        evidence["path"] = [[role, mask_text(name)[0]] for role, name in evidence.get("path", [])]
        return evidence

    def _on_click(self, x: int, y: int, button: Any, pressed: bool, pressed_at: int | None = None) -> None:
        """``pressed_at``: the X server's time on the button's event (recorder.xclock)."""
        if not pressed:
            return
        # Places in the order first: what was typed came before this click, and
        # what the app shows after it (os_window) comes after, however long the
        # typed text and the widget take to read.
        typing = self._typing_slot()
        self._clicked = None  # named again below, when this click was on an editable widget
        try:
            under = self._windows.at_pointer()
        except Exception:  # the window went away: still outside the browser
            under = Window("", "", None)
        # A window that closes on this very click (a dialog's Save button) may
        # be gone before this handler looks: where the pointer rested there a
        # moment before, the click was on what was looked at then — when the
        # window now under it is another, or the widget read now is in another.
        hover = self._rested(x, y, pressed_at)
        rested = hover if hover is not None and (hover.win.title, hover.win.pid) != (under.title, under.pid) \
            else None
        win = self._outside_browser(lambda: rested.win if rested is not None else under)
        slot = self.writer.reserve("os_click") if win is not None else None
        # Then what is there now, before the click's effect: what was typed,
        # the widget under the click, its picture.
        self._read_typing()
        widget = frame = None
        if rested is None and slot is not None and win is not None:
            widget = self._widget(lambda d: d.at(x, y, pid=win.pid, title=win.title))  # the window it was in
            if hover is not None and hover.widget is not None and (
                    widget is None or widget.window != hover.widget.window
                    or (_coarse(widget) and not _coarse(hover.widget))):
                # its window closed while read (the app's other window read instead), or closing, it
                # told only itself: what the resting pointer was on says where the click went
                rested = hover
            else:
                box = _around(x, y)
                frame = self._frame(grab_screen(box), box, widget)
        if rested is not None:
            widget, frame = rested.widget, self._frame(rested.img, rested.box, rested.widget)
        self.flush(typing)
        if slot is None or win is None:
            return
        self._clicked = widget if widget is not None and "editable" in widget.states else None
        fields: dict[str, Any] = {}
        if widget is not None:
            fields["target"] = self._target(widget)
        slot.fill(x=x, y=y, screen_x=x, screen_y=y, button=getattr(button, "name", str(button)),
                  **self._window_fields(win), frame=frame, **fields)
        self._acted(win)

    def _frame(self, img: Any, box: dict[str, int], widget: Any) -> str | None:
        """The picture around a click (a secret widget in it blacked out), written as a frame."""
        if img is None:
            return None
        if widget is not None and widget.box is not None and self._is_secret(widget):
            bx, by, bw, bh = widget.box
            img = black_out(img, box, [{"x": bx, "y": by, "w": bw, "h": bh}])
        self._frames += 1
        return self.writer.write_frame(f"os-{self.writer.now_ms():09d}-{self._frames:04d}.png", to_png(img))

    def _is_secret(self, widget: Any) -> bool:
        return bool(widget.secret) or self._identity(widget) in self._secret

    def _typing_slot(self) -> Slot | None:
        """The place of the text typed so far, taken before the event that ends it."""
        return self.writer.reserve("os_input") if self._typing is not None else None

    def flush(self, slot: Slot | None = None) -> None:
        """The text typed into the last widget, as it now reads (or masked),
        in ``slot`` when its place was taken already."""
        widget, self._typing = self._typing, None
        seen, self._typing_seen = self._typing_seen, None
        tail, self._tail = self._tail, ""
        put = slot.fill if slot is not None else (lambda **fields: self.writer.put("os_input", **fields))
        if widget is None:
            if slot is not None:
                slot.drop()
            return
        fields: dict[str, Any] = {"target": self._target(widget), "window": mask_text(widget.window)[0],
                                  "window_class": self._typing_class}
        self._acted(Window(widget.window, self._typing_class, widget.pid))
        value = None if self._is_secret(widget) else self._settled_text(widget, tail)
        if seen is not None and tail and tail in seen and (value is None or tail not in value):
            # read while typing, before the key that ends it: the app acting on that key (a dialog
            # closing on Enter, a name completed into a path) does not change what was typed
            value = seen
        if self._is_secret(widget) or (value is not None and looks_secret(value)):
            put(masked=True, **fields)
        elif value is not None:
            put(value=value, **fields)
        elif slot is not None:
            slot.drop()  # it can no longer be read (closed): nothing known is kept

    def _settled_text(self, widget: Any, tail: str) -> str | None:
        """Its text once two reads 50 ms apart agree: the app may still be
        handling the last keys when the person moves on. Two reads that agree
        on a text without the last keys typed (``tail``) show an app that has
        not reached them yet — seen beside a loaded machine's other work: a
        whole sentence recorded as an empty editor — so it is read again, for
        up to ``CATCH_UP_S``. An app that changes what it is typed (capitals,
        a number's separators) is taken as it reads once the time is up."""
        import time

        def shows(text: str | None) -> bool:
            return not tail or tail in (text or "")

        last = self._widget(lambda d: d.text(widget))
        reads, deadline = 0, time.monotonic() + CATCH_UP_S
        while reads < SETTLED_READS or (not shows(last) and time.monotonic() < deadline):
            time.sleep(0.05)
            reads += 1
            now = self._widget(lambda d: d.text(widget))
            if now is None:
                return None  # gone (a dialog closed on the key that ended the typing): nothing to wait for
            if now == last and (shows(now) or time.monotonic() >= deadline):
                break
            last = now
        return last

    def _key_name(self, key: Any) -> str | None:
        name = getattr(key, "name", None)
        if name:
            return str(name)
        char = getattr(key, "char", None)
        return str(char) if char else None

    def _on_press(self, key: Any, pressed_at: int | None = None) -> None:
        """``pressed_at``: the X server's time on the key's event (recorder.xclock)."""
        name = self._key_name(key)
        if name is None:
            return
        if name in MODIFIERS:
            self._mods.add(name.split("_")[0])
            return
        if {"ctrl", "alt"} <= self._mods and name.lower() == "s":  # the secret hotkey
            self._mark_secret(pressed_at)
            return
        shortcut = bool(self._mods & {"ctrl", "alt", "cmd"})
        if name == "enter" and not shortcut and self._typing is not None \
                and "multi-line" in self._typing.states:
            self._tail = (self._tail + "\n")[-TAIL_CHARS:]  # a line break in the text being typed
            return
        if name not in NAMED_KEYS and not shortcut:
            self._typed(pressed_at)
            char = " " if name == "space" else getattr(key, "char", None)
            if self._typing is not None and char:
                self._tail = (self._tail + char)[-TAIL_CHARS:]
            return
        if name in ("backspace", "delete", "left", "right", "home", "end") and self._typing is not None:
            self._tail = ""  # the keys before an edit need not read as typed any more
            return  # editing the text being typed: its final value covers it
        typing = self._typing_slot()  # the typing, then the key, then what it opened: in that order
        win = self._key_window(pressed_at)
        slot = self.writer.reserve("os_key") if win is not None else None
        self._read_typing()  # what was typed, before the key's effect (Enter closing the dialog)
        self.flush(typing)
        if slot is None or win is None:
            return
        slot.fill(key=name, modifiers=sorted(self._mods), **self._window_fields(win), frame=None)
        self._acted(win)

    def _key_window(self, pressed_at: int | None = None) -> Window | None:
        """Where a named key or shortcut went. While typing, the typed
        widget's window: the keys went where the text did, and nothing that
        moves the focus came between. Asking the X server instead reads the
        focus when this handler runs, which on a busy machine can be after
        the key's own effect: Ctrl+S recorded as pressed in the "Save As" it
        opened."""
        if self._typing is not None:
            w = self._typing
            return Window(mask_text(w.window)[0], self._typing_class, w.pid)
        return self._outside_browser(lambda: self._focused_at(pressed_at))

    def _focused_at(self, pressed_at: int | None) -> Window:
        """The window a key went to: the one focused now, unless the window
        manager has made another active since the key's X time (a late
        handler: the key's own effect, or a later key's, came first) — then
        the one it had made active by that time, as it reads now (or as it
        read then, once it is gone). Told by the X server's clock, which
        stamps both the key's event and the property's change, never by this
        handler's timing (recorder.xfocus). The manager sets the property
        once it has handled the focus's move, a moment after it: a key within
        ``WM_LAG_MS`` before the next change may have gone to the window that
        change names, so the focus is asked, as without a manager's record."""
        return self._focus_then(pressed_at)[0]

    def _focus_then(self, pressed_at: int | None) -> tuple[Window, str | None]:
        """``_focused_at``, and the window's title when the manager made it
        active (None where the focus was asked): a late handler reads a title
        the key's own effect may have changed since ("*Untitled 1" once typed in)."""
        active = self._active
        if pressed_at is not None and active is not None:
            then, after, latest = active.at(pressed_at)
            if then is not None and then.wid is not None and after is not None and latest is not None \
                    and then.wid != latest.wid and not not_after(after.since, pressed_at + WM_LAG_MS):
                was = then.window.title if then.window is not None else None
                try:
                    return self._windows.by_id(then.wid), was
                except Exception:  # gone (a dialog closed on a later key)
                    if then.window is not None:
                        return then.window, was
        return self._windows.focused(), None

    def _typed(self, pressed_at: int | None = None) -> None:
        """A plain key: kept only as the focused widget's final text (``flush``).
        Where the app does not yet tell an editable widget focused (a busy
        machine), the editable widget just clicked in that same window is the
        one: the person clicked it, then typed."""
        if self._typing is not None:
            return
        titled: list[str] = []  # the window's title when it was made active, where the manager's record told

        def lookup() -> Window:
            found, was = self._focus_then(pressed_at)
            titled.extend([mask_text(was)[0]] if was else [])
            return found

        win = self._outside_browser(lookup)
        if win is None:
            return
        widget = self._widget(lambda d: d.focused(win.pid, win.title))
        clicked = self._clicked
        if (widget is None or "editable" not in widget.states) and clicked is not None \
                and clicked.pid == win.pid and mask_text(clicked.window)[0] in {win.title, *titled}:
            widget = clicked
        if widget is not None and "editable" in widget.states:
            self._typing, self._typing_class, self._typing_seen = widget, win.klass, None

    def _mark_secret(self, pressed_at: int | None = None) -> None:
        win = self._outside_browser(lambda: self._focused_at(pressed_at))
        widget = self._widget(lambda d: d.focused(win.pid, win.title)) if win is not None else None
        if widget is not None:
            self._secret.add(self._identity(widget))
            if self._texts is not None:  # nor is what it shows kept as the app's end
                self._texts.hide(widget.pid, widget.role, widget.path)

    def _on_release(self, key: Any) -> None:
        name = self._key_name(key)
        if name in MODIFIERS:
            self._mods.discard(name.split("_")[0])

