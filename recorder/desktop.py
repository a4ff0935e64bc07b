"""Desktop input outside the browser (pynput), as ``os_click`` / ``os_key``.

Listener callbacks never block: they look up the window and enqueue. Events
in the browser's own window are skipped (the capture script reports those,
with far better targets). Only named keys and shortcuts are kept: teachd
cannot tell a desktop password prompt, so plain typing there is not recorded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from compiler.secrets import mask_text
from recorder.crops import crop_box, grab_screen, to_png
from recorder.writer import EventWriter

BROWSER_CLASSES = ("chromium", "chrome")
NAMED_KEYS = {
    "enter", "esc", "tab", "backspace", "delete", "up", "down", "left", "right", "home", "end",
    "page_up", "page_down", *(f"f{i}" for i in range(1, 13)),
}
MODIFIERS = {"ctrl", "ctrl_l", "ctrl_r", "alt", "alt_l", "alt_r", "alt_gr", "cmd", "cmd_l", "cmd_r"}


class WindowInfo:
    """Window titles and classes from the X server (python-xlib, pynput's backend)."""

    def __init__(self) -> None:
        from Xlib import X, display

        self._X = X
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

    def _describe(self, win: Any) -> tuple[str, str]:
        title, klass = "", ""
        stack = [win]
        while stack and not (title and klass):
            w = stack.pop()
            try:
                title = title or (w.get_wm_name() or "")
                cls = w.get_wm_class()
                klass = klass or (" ".join(cls) if cls else "")
                stack.extend(w.query_tree().children[:20])
            except Exception:
                continue
        return str(title), klass.lower()

    def at_pointer(self) -> tuple[str, str]:
        with self._lock:
            child = self._root.query_pointer().child
            if not child:
                return "", ""
            return self._describe(child)

    def focused(self) -> tuple[str, str]:
        with self._lock:
            focus = self._d.get_input_focus().focus
            if not focus or isinstance(focus, int):  # PointerRoot: keys follow the pointer
                child = self._root.query_pointer().child
                return self._describe(child) if child else ("", "")
            top = self._top(focus)
            return self._describe(top) if top is not None else ("", "")


class DesktopCapture:
    def __init__(self, writer: EventWriter) -> None:
        self.writer = writer
        self.skipped_browser = 0
        self._windows = WindowInfo()
        self._mods: set[str] = set()
        self._listeners: list[Any] = []
        self._frames = 0

    def start(self) -> None:
        from pynput import keyboard, mouse

        self._listeners = [
            mouse.Listener(on_click=self._on_click),
            keyboard.Listener(on_press=self._on_press, on_release=self._on_release),
        ]
        for listener in self._listeners:
            listener.daemon = True
            listener.start()
        for listener in self._listeners:
            listener.wait()

    def stop(self) -> None:
        for listener in self._listeners:
            listener.stop()

    def _window_outside_browser(self, lookup: Callable[[], tuple[str, str]]) -> str | None:
        """The window's (masked) title, or None when it is the browser's own
        window, whose events the capture script reports better."""
        try:
            title, klass = lookup()
        except Exception:  # the window went away: still outside the browser
            title, klass = "", ""
        if any(b in klass for b in BROWSER_CLASSES):
            self.skipped_browser += 1
            return None
        return mask_text(title)[0]

    def _on_click(self, x: int, y: int, button: Any, pressed: bool) -> None:
        if not pressed:
            return
        window = self._window_outside_browser(self._windows.at_pointer)
        if window is None:
            return
        frame = None
        box = crop_box({"x": x - 40, "y": y - 20, "w": 80, "h": 40}, {})
        img = grab_screen(box)
        if img is not None:
            self._frames += 1
            frame = self.writer.write_frame(f"os-{self.writer.now_ms():09d}-{self._frames:04d}.png",
                                            to_png(img))
        self.writer.put("os_click", x=x, y=y, screen_x=x, screen_y=y,
                        button=getattr(button, "name", str(button)),
                        window=window, frame=frame)

    def _key_name(self, key: Any) -> str | None:
        name = getattr(key, "name", None)
        if name:
            return str(name)
        char = getattr(key, "char", None)
        return str(char) if char else None

    def _on_press(self, key: Any) -> None:
        name = self._key_name(key)
        if name is None:
            return
        if name in MODIFIERS:
            self._mods.add(name.split("_")[0])
            return
        shortcut = bool(self._mods & {"ctrl", "alt", "cmd"})
        if name not in NAMED_KEYS and not shortcut:
            return  # plain typing outside the browser is never recorded
        window = self._window_outside_browser(self._windows.focused)
        if window is None:
            return
        self.writer.put("os_key", key=name, modifiers=sorted(self._mods), window=window, frame=None)

    def _on_release(self, key: Any) -> None:
        name = self._key_name(key)
        if name in MODIFIERS:
            self._mods.discard(name.split("_")[0])
