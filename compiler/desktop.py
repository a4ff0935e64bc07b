"""Desktop targets → desktop anchors: what a replay looks for outside the
browser, as plain data.

A desktop anchor holds three kinds of evidence, strongest first: the
window (its class, and its title as a pattern: an editor's title changes
with the document it holds), the widget as the app's accessibility layer
named it (role, name, the named containers from its window down), and the
picture around the click (recorder crop: its fingerprint, and the crop
itself, small, for a replay that must find it by looks where the app names
nothing). Every string is masked like the rest of a skill.
"""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Mapping
from typing import Any

from compiler.fingerprint import fingerprint_image
from compiler.names import md_escape
from compiler.secrets import mask_text

# How a person calls a widget of each AT-SPI role.
NOUNS = {
    "push button": "button", "toggle button": "toggle", "text": "text field",
    "password text": "password field", "entry": "text field", "menu item": "menu item", "menu": "menu",
    "check box": "checkbox",
    "radio button": "option", "combo box": "list", "list item": "item", "table cell": "cell",
    "page tab": "tab", "link": "link", "spin button": "number field", "slider": "slider", "icon": "icon",
    "label": "label", "tree item": "item", "check menu item": "menu item", "radio menu item": "menu item",
}
TITLE_SEPARATORS = (" - ", " — ", " – ")
MODIFIED_MARKS = "*•● "  # what an editor puts before a document's name while it has unsaved changes
PICTURE_MAX = (160, 80)  # a crop kept in a skill is at most this big (about 2 kB as PNG)


WINDOW_ROLES = frozenset({"frame", "dialog", "alert", "file chooser", "window", "color chooser",
                          "font chooser"})  # AT-SPI's roles of a top-level window


def below_window(path: Any) -> list[list[str]]:
    """A widget's path without its window (named by the anchor's title instead)."""
    out = [[str(r), str(n)] for r, n in (path or [])]
    return out[1:] if out and out[0][0] in WINDOW_ROLES else out


_FOLDERS = re.compile(r"(?<![\w.~])/(?:[^/\s]+/)+")


def without_folders(title: str) -> str:
    """A window title as a skill keeps it: a path's folders left out (whose
    home it is, and where, are not the window): "/home/alice/notes.txt" →
    "…/notes.txt"."""
    return _FOLDERS.sub("…/", title)


def title_pattern(title: str, values: tuple[str, ...] = ()) -> str:
    """The window's title as a glob that still holds after the document
    changes: "*Untitled 1 - Mousepad" → "* - Mousepad" (what follows the
    last separator names the app). A title with no app part keeps its name
    but not what varies around it: a modified mark before it ("*Untitled"
    → "*Untitled", which "Untitled" fits too), or the folder of a path
    ("/home/alice/notes.txt" → "*/notes.txt": whose home it is, and where,
    is not the window). What is kept is matched literally, but for
    ``values``, a run's typed values (a file's name, shown in the title as
    well: "/home/alice/notes.txt" → "*/*", the value asked for apart)."""
    pattern = _title_pattern(title)
    for value in sorted(values, key=len, reverse=True):
        if len(value) >= 3:
            pattern = pattern.replace(_literal(value), "*")
    return pattern


def _title_pattern(title: str) -> str:
    for sep in TITLE_SEPARATORS:
        if sep in title:
            return "*" + sep + _literal(title.rsplit(sep, 1)[1])
    bare = title.lstrip(MODIFIED_MARKS)
    if "/" in bare.rstrip("/"):
        return "*/" + _literal(bare.rstrip("/").rsplit("/", 1)[1])
    return "*" + _literal(bare) if bare else title


def _literal(text: str) -> str:
    """``text`` as a glob that matches only itself (fnmatch's brackets)."""
    return re.sub(r"([\[\]*?])", r"[\1]", text)


def app_name(target: Mapping[str, Any] | None, window_class: str | None) -> str:
    """The application as a person names it: "mousepad" → "Mousepad"."""
    name = str((target or {}).get("app") or "").strip() or (window_class or "").split(" ")[-1]
    return name[:1].upper() + name[1:] if name else "desktop"


def describe_desktop(target: Mapping[str, Any] | None, window_class: str | None, window: str | None) -> str:
    """ "the **Save** button in the *Mousepad* window" (or "the window “…”" where no widget is named)."""
    app = md_escape(app_name(target, window_class))
    if not target:
        return f"the *{app}* window" if app != "desktop" else f"the window “{window or ''}”"
    noun = NOUNS.get(str(target.get("role") or ""), str(target.get("role") or "widget"))
    name = mask_text(str(target.get("name") or ""))[0]
    what = f"the **{md_escape(name)}** {noun}" if name else f"the {noun}"
    return f"{what} in the *{app}* window"


def _picture(png: bytes | None) -> dict[str, Any] | None:
    if not png:
        return None
    try:
        from PIL import Image

        with Image.open(io.BytesIO(png)) as img:
            img.load()
            small = img.convert("RGB")
            small.thumbnail(PICTURE_MAX)
            out = io.BytesIO()
            small.save(out, format="PNG", optimize=True)
            fp = fingerprint_image(img)
            return {**fp, "png": base64.b64encode(out.getvalue()).decode("ascii")}
    except Exception:  # an unreadable crop is no evidence
        return None


def desktop_anchor(target: Mapping[str, Any] | None, window: str | None, window_class: str | None,
                   at: Mapping[str, Any] | None, crop_png: bytes | None) -> dict[str, Any]:
    """The anchor of one desktop step (``at``: where the click was, on the screen)."""
    title = without_folders(mask_text(" ".join(str(window or "").split()))[0])
    anchor: dict[str, Any] = {
        "describe": describe_desktop(target, window_class, title),
        "window": {"class": window_class or None, "title": title or None,
                   "title_pattern": title_pattern(title) if title else None,
                   "app": (target or {}).get("app") or None},
    }
    if target:
        path = [[r, mask_text(n)[0]] for r, n in below_window(target.get("path"))]
        anchor["widget"] = {"role": str(target.get("role") or ""),
                            "name": mask_text(str(target.get("name") or ""))[0], "path": path}
    if at and at.get("x") is not None:
        anchor["at"] = {"x": int(at["x"]), "y": int(at["y"])}
        box = (target or {}).get("box")
        if isinstance(box, Mapping):  # where in the widget the click fell
            anchor["at"]["in"] = {"x": int(at["x"]) - int(box.get("x", 0)),
                                  "y": int(at["y"]) - int(box.get("y", 0))}
    if (picture := _picture(crop_png)) is not None:
        anchor["picture"] = picture
    return anchor


def desktop_key(target: Mapping[str, Any] | None, window_class: str | None) -> tuple[Any, ...] | None:
    """Two steps share one desktop anchor when they act on the same named
    widget of the same app (a click that focused a field, then its typing)."""
    if not target:
        return None
    path = tuple(tuple(p) for p in below_window(target.get("path")))
    return (target.get("app") or window_class, target.get("role"), target.get("name"), path)
