"""The sample app's second task, "Publish a post", as a small CMS would draw it.

As unfriendly as the CMS in issue 23: the post's body is a real rich-text
editor (Quill 2, vendored under ``vendor/quill``: no network at test time)
whose ``contenteditable`` copies itself into the form's hidden
``<input name=body>`` only after a debounce, so a Publish clicked at once
saves an empty body; "Publish" sits in a footer menu behind an icon-only
toggle (a ``<div onclick>`` holding ``<svg><use href=#icon-more>``: no role,
no name); the collection form submits through ``<input type=submit>``.
The editor is wired as Quill ships: its ``contenteditable`` has no role and
no accessible name; a visible "Body" label above it is not associated with
it, and its placeholder lives in ``data-placeholder``.
An unrelated icon-only control (``#icon-help``, in the header) is always
there. Every clickable element carries ``data-k``, logged by the same beacon
as the first task's pages: the server's log is the judge.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, fields
from html.parser import HTMLParser
from typing import Any

from teachd.demo.sampleapp.pages import BEACON

DEBOUNCE_MS = 250  # the editor → hidden input sync, as demonstrated
SLOW_DEBOUNCE_MS = 1000  # the slow_editor variant's


@dataclass(frozen=True)
class PostsVariant:
    """Kinds of drift the posts pages can show; all off is the demonstrated page."""

    toggle_named: bool = False  # the icon-only toggle became <button>More actions</button> (same svg)
    submit_input_to_button: bool = False  # <input type=submit value=Create> became <button>Create</button>
    link_to_longer_button: bool = False  # the "Add collection" link became a button "Add new collection"
    slow_editor: bool = False  # the hidden input syncs on a 1 s debounce
    decoy_icons: bool = False  # a second icon-only toggle (another symbol) first in the same footer
    toggle_removed: bool = False  # no way to open the menu that holds "Publish"

    @classmethod
    def named(cls, name: str) -> PostsVariant:
        if name in ("", "base"):
            return cls()
        if name not in {f.name for f in fields(cls)}:
            raise ValueError(f"unknown posts variant {name!r}")
        return cls(**{name: True})


# One sprite per page, as icon sets ship them; the page refers to symbols by id.
SPRITE = """<svg xmlns='http://www.w3.org/2000/svg' style='display:none'>
<symbol id='icon-more' viewBox='0 0 24 24'><circle cx='5' cy='12' r='2'/><circle cx='12' cy='12' r='2'/>\
<circle cx='19' cy='12' r='2'/></symbol>
<symbol id='icon-help' viewBox='0 0 24 24'><circle cx='12' cy='12' r='10' fill='none' stroke='currentColor' \
stroke-width='2'/><path d='M9.5 9a2.5 2.5 0 1 1 3.5 2.3c-.7.3-1 .8-1 1.7M12 17h.01' fill='none' \
stroke='currentColor' stroke-width='2'/></symbol>
<symbol id='icon-share' viewBox='0 0 24 24'><circle cx='6' cy='12' r='2.5'/><circle cx='18' cy='6' r='2.5'/>\
<circle cx='18' cy='18' r='2.5'/>\
<path d='M8 11l8-4M8 13l8 4' stroke='currentColor' stroke-width='2'/></symbol>
</svg>"""

STYLE = """<style>
body{font-family:sans-serif;margin:0} .cms-head{display:flex;align-items:center;gap:16px;padding:10px 24px;
background:#1f2933;color:#fff} .cms-head a{color:#cde} .cms-head .spacer{flex:1}
main{margin:24px;max-width:44em} label{display:block;margin-top:12px;font-weight:bold}
input[name=title], input[name=name]{width:30em;padding:4px} #editor{height:9em}
.icon-btn{display:inline-flex;align-items:center;justify-content:center;width:32px;height:32px;
cursor:pointer;border-radius:6px;background:transparent;border:0;padding:0;color:inherit}
.icon-btn:hover{background:#e4e7eb} .icon-btn svg{width:20px;height:20px;fill:currentColor}
button.icon-btn{width:auto;gap:4px;padding:0 8px;font:inherit}
.post-footer{display:flex;align-items:center;gap:8px;margin-top:16px;padding-top:8px;
border-top:1px solid #ccc}
.menu-anchor{position:relative} .menu{position:absolute;bottom:36px;left:0;background:#fff;
border:1px solid #999;padding:4px;display:flex;flex-direction:column;gap:2px;min-width:9em}
.menu[hidden]{display:none} .menu button{text-align:left;border:0;background:#fff;padding:6px}
.menu button:hover{background:#eef} .action{text-transform:uppercase;letter-spacing:.05em}
</style>"""

EDITOR = """<script src='/vendor/quill/quill.js'></script>
<script>
const DEBOUNCE = %(debounce)d;
const quill = new Quill('#editor', {theme: 'snow', placeholder: 'Write your post…',
  modules: {toolbar: [['bold', 'italic', 'underline'], ['link'], [{list: 'bullet'}]]}});
const hidden = document.querySelector('input[name=body]');
// The form submits what the hidden input holds: the editor's state reaches it
// only once typing has paused for DEBOUNCE ms (a Publish sooner saves "").
let timer = null;
quill.on('text-change', () => {
  clearTimeout(timer);
  timer = setTimeout(() => {
    hidden.value = quill.getLength() > 1 ? quill.getSemanticHTML() : '';
  }, DEBOUNCE);
});
function toggleMenu(id) { const m = document.getElementById(id); m.hidden = !m.hidden; }
</script>"""


def body_text(body_html: str) -> str:
    """The words of a saved body (the editor submits HTML), whitespace folded:
    what the judge compares with what was typed."""

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.parts: list[str] = []

        def handle_data(self, data: str) -> None:
            self.parts.append(data)

        def handle_endtag(self, tag: str) -> None:
            self.parts.append(" ")

    parser = Text()
    parser.feed(body_html)
    parser.close()
    return " ".join("".join(parser.parts).split())


def cms_page(title: str, body: str, head: str = "") -> bytes:
    """The CMS frame: its own header (Posts, Collections, the help icon) and sprite."""
    header = ("<header class='cms-head'><strong>Pressroom</strong>"
              "<nav aria-label='CMS'><a href='/posts' data-k='cms.posts'>Posts</a> "
              "<a href='/collections' data-k='cms.collections'>Collections</a></nav>"
              "<span class='spacer'></span>"
              "<div class='icon-btn' data-k='decoy.help' "
              "onclick=\"document.getElementById('help-tip').hidden=false\">"
              "<svg><use href='#icon-help'/></svg></div></header>"
              "<p id='help-tip' hidden>Posts are public once published.</p>")
    doc = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
           f"<title>{html.escape(title)} — Pressroom</title>{head}{STYLE}</head>"
           f"<body>{SPRITE}{header}{body}{BEACON}</body></html>")
    return doc.encode("utf-8")


def posts_page(posts: list[dict[str, Any]]) -> bytes:
    rows = "".join(f"<li><a href='/posts/{p['id']}' data-k='posts.open'>{html.escape(p['title'])}</a></li>"
                   for p in posts if not p.get("draft"))
    body = (f"<main><h1>Posts</h1><p><a class='action' href='/posts/new' data-k='posts.add'>Add post</a></p>"
            f"<ul>{rows}</ul></main>")
    return cms_page("Posts", body)


def post_form_page(v: PostsVariant) -> bytes:
    more = "<svg><use href='#icon-more'/></svg>"
    if v.toggle_removed:
        toggle = ""
    elif v.toggle_named:
        toggle = (f"<button type='button' class='icon-btn' data-k='post.more' "
                  f"onclick=\"toggleMenu('more-menu')\">{more}More actions</button>")
    else:
        toggle = f"<div class='icon-btn' data-k='post.more' onclick=\"toggleMenu('more-menu')\">{more}</div>"
    share = ""
    if v.decoy_icons:  # same look, another symbol, first in the footer: where the toggle used to be
        share = ("<span class='menu-anchor'><div class='icon-btn' data-k='decoy.share' "
                 "onclick=\"toggleMenu('share-menu')\"><svg><use href='#icon-share'/></svg></div>"
                 "<div id='share-menu' class='menu' hidden>"
                 "<button type='button' data-k='decoy.copy-link'>Copy link</button>"
                 "<button type='button' data-k='decoy.email'>Email</button></div></span>")
    footer = (f"<footer class='post-footer'>"
              f"<button type='submit' name='draft' value='1' data-k='decoy.save-draft'>Save draft</button>"
              f"{share}<span class='menu-anchor'>{toggle}"
              f"<div id='more-menu' class='menu' hidden>"
              f"<button type='submit' data-k='post.publish'>Publish</button>"
              f"<button type='button' data-k='decoy.schedule'>Schedule…</button></div></span></footer>")
    form = ("<form method='post' action='/posts' aria-label='Post'>"
            "<label for='post-title'>Title</label>"
            "<input id='post-title' name='title' autocomplete='off' data-k='post.title'>"
            "<label id='body-label'>Body</label>"
            "<div id='editor' data-k='post.body'></div>"
            "<input type='hidden' name='body'>"
            f"{footer}</form>")
    head = "<link rel='stylesheet' href='/vendor/quill/quill.snow.css'>"
    script = EDITOR % {"debounce": SLOW_DEBOUNCE_MS if v.slow_editor else DEBOUNCE_MS}
    return cms_page("Add post", f"<main><h1>Add post</h1>{form}</main>{script}", head)


def post_page(v: PostsVariant, post: dict[str, Any]) -> bytes:
    if v.link_to_longer_button:
        add = ("<button type='button' class='action' data-k='collections.add' "
               "onclick=\"location.href='/collections/new'\">Add new collection</button>")
    else:
        add = "<a class='action' href='/collections/new' data-k='collections.add'>Add collection</a>"
    body = (f"<main><p role='status'>Published.</p><article><h1>{html.escape(post['title'])}</h1>"
            f"<div class='post-body'><p>{html.escape(post['body_text'])}</p></div></article>"
            f"<p>{add}</p></main>")
    return cms_page(post["title"], body)


def collections_page(collections: list[dict[str, Any]]) -> bytes:
    rows = "".join(f"<li><a href='/collections/{c['id']}' data-k='collections.open'>"
                   f"{html.escape(c['name'])}</a></li>" for c in collections)
    return cms_page("Collections", f"<main><h1>Collections</h1><ul>{rows}</ul></main>")


def collection_form_page(v: PostsVariant) -> bytes:
    submit = ("<button type='submit' data-k='collection.create'>Create</button>" if v.submit_input_to_button
              else "<input type='submit' value='Create' data-k='collection.create'>")
    form = ("<form method='post' action='/collections' aria-label='Collection'>"
            "<label for='collection-name'>Name</label>"
            "<input id='collection-name' name='name' autocomplete='off' data-k='collection.name'>"
            f"<p>{submit}</p></form>")
    return cms_page("Add collection", f"<main><h1>Add collection</h1>{form}</main>")


def collection_page(collection: dict[str, Any]) -> bytes:
    body = (f"<main><p role='status'>Collection created.</p><h1>{html.escape(collection['name'])}</h1>"
            f"<p>No posts in this collection yet.</p></main>")
    return cms_page(collection["name"], body)
