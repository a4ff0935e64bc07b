"""The sample app's pages, as HTML, for the demonstrated page and its drift.

Built to be as unfriendly as real apps are: pages share markup paths (the
sign-in e-mail field and the report's amount field are both
``main/form/input[1]``; "New report" and "Add group" both ``main/p/a``), the
reports list is a client-side route (``history.pushState``), action links are
styled ``text-transform: uppercase``, the merchant type-ahead and the
permission filter react to keystrokes only, a dual list moves options between
two ``<select>``s, a form lives in an iframe, and the audit log opens in a new
tab. Every element a person may click carries ``data-k``: the server's own
log of what was clicked, kept by a beacon, is the judge of a replay — never
teachd's own report.
"""

from __future__ import annotations

import html
import json
import zlib
from dataclasses import dataclass, fields
from typing import Any

MERCHANTS = [("taxi-berlin", "Taxi Berlin"), ("taxi-paris", "Taxi Paris"), ("hotel-lyon", "Hotel Lyon"),
             ("train-ice", "Train ICE"), ("cafe-nord", "Cafe Nord")]
PERMISSIONS = [("view_reports", "Can view reports"), ("add_reports", "Can add reports"),
               ("approve_reports", "Can approve reports"), ("export_reports", "Can export reports"),
               ("archive_reports", "Can archive reports"), ("delete_reports", "Can delete reports"),
               ("approve_trips", "Can approve trips"), ("view_audit", "Can view audit log")]
CATEGORIES = [("travel", "Travel"), ("meals", "Meals"), ("office", "Office")]
VALUE_PREFIX = "id-4711-"  # the renamed_values variant's new option values
DE = {  # the translated UI: chrome in German, data (merchants, permissions) as entered
    "Sign in": "Anmelden", "Email": "E-Mail", "Password": "Passwort", "Dashboard": "Übersicht",
    "Reports": "Berichte", "Groups": "Gruppen", "Overview": "Überblick", "New report": "Neuer Bericht",
    "Amount": "Betrag", "Description": "Beschreibung", "Merchant": "Händler", "Category": "Kategorie",
    "Choose…": "Auswählen…", "Travel": "Reisen", "Meals": "Essen", "Office": "Büro",
    "I have a receipt": "Ich habe einen Beleg", "Submit report": "Bericht einreichen",
    "Report submitted": "Bericht eingereicht", "Add group": "Gruppe hinzufügen", "Name": "Name",
    "Permissions": "Berechtigungen", "Filter": "Filtern", "Available permissions": "Verfügbare Berechtigungen",
    "Chosen permissions": "Gewählte Berechtigungen", "Choose": "Auswählen", "Choose all": "Alle auswählen",
    "Save": "Speichern", "Group saved": "Gruppe gespeichert", "Open audit log": "Prüfprotokoll öffnen",
    "Audit log": "Prüfprotokoll", "Note": "Notiz", "Save note": "Notiz speichern", "Note saved": "Notiz gespeichert",
    "Help": "Hilfe", "Expenses": "Spesen", "Merchants": "Händler", "Main": "Hauptmenü", "Expense": "Ausgabe",
    "Group": "Gruppe", "Your reports": "Ihre Berichte",
}
RELABEL = {"Amount": "Total amount", "Merchant": "Merchant name", "Submit report": "Send report",
           "Add group": "Create group", "Choose": "Add selected", "Save": "Save group",
           "Open audit log": "Show audit log", "Save note": "Keep note"}


@dataclass(frozen=True)
class Variant:
    """Kinds of drift the pages can show; all off is the demonstrated page."""

    renamed_ids: bool = False
    new_theme: bool = False
    moved_layout: bool = False
    inserted_elements: bool = False
    wrappers: bool = False
    changed_labels: bool = False  # relabelled, stable ids kept
    link_to_button: bool = False
    option_prefix: bool = False
    below_fold: bool = False
    decoys: bool = False
    translated: bool = False
    submit_removed: bool = False  # the "Submit report" button is gone
    ambiguous: bool = False  # two look-alike "Save" buttons, nothing stable to tell them apart
    renamed_values: bool = False  # the category options' values changed (new database ids)
    signin_removed: bool = False  # the sign-in page lost its "Sign in" button (health checks catch it)
    submit_relabelled: bool = False  # "Submit report" became "Send for approval", with no id left
    password_relabelled: bool = False  # the password field is now "Passphrase", new id and name

    @classmethod
    def named(cls, name: str) -> Variant:
        if name in ("", "base"):
            return cls()
        if name == "combination":
            return cls(renamed_ids=True, new_theme=True, moved_layout=True, inserted_elements=True,
                       wrappers=True, decoys=True, below_fold=True)
        known = {f.name for f in fields(cls)}
        if name not in known:
            raise ValueError(f"unknown variant {name!r}")
        return cls(**{name: True})


class Html:
    """Helpers bound to one variant: ids, words and wrappers as it draws them."""

    def __init__(self, v: Variant) -> None:
        self.v = v

    def id(self, base: str) -> str:
        if self.v.renamed_ids or (self.v.ambiguous and base == "group-save"):
            return f"{base}-x{zlib.crc32(base.encode()) % 997}v2"
        return base

    def t(self, text: str) -> str:
        if self.v.translated:
            return DE.get(text, text)
        if self.v.changed_labels:
            return RELABEL.get(text, text)
        return text

    def e(self, text: str) -> str:
        return html.escape(self.t(text))

    def wrap(self, inner: str) -> str:
        return f"<div class='card'><div class='card-body'><section>{inner}</section></div></div>" \
            if self.v.wrappers else inner

    def action_link(self, href: str, text: str, k: str, ident: str | None = None) -> str:
        """A link as a call to action (uppercase styled), or the button it became."""
        id_attr = f" id='{self.id(ident)}'" if ident else ""
        if self.v.link_to_button:
            return (f"<button type='button' class='action'{id_attr} data-k='{k}' "
                    f"onclick=\"location.href='{href}'\">{self.e(text)}</button>")
        return f"<a class='action'{id_attr} href='{href}' data-k='{k}'>{self.e(text)}</a>"


def _entries(items: list[tuple[str, str]], prefix: str, kind: str) -> list[tuple[str, str, str]]:
    """(value, label as shown, data-k) for a list the page's script draws."""
    return [(value, prefix + label, f"{kind}.{value}") for value, label in items]


BEACON = """<script>
document.addEventListener('click', (e) => {
  const el = e.target.closest && e.target.closest('[data-k]');
  navigator.sendBeacon('/log/click', (el ? el.dataset.k : 'unmarked:' + e.target.tagName) + ' ' + location.pathname);
}, true);
</script>"""


def page(v: Variant, title: str, body: str, nav: bool = True) -> bytes:
    h = Html(v)
    theme = (
        "body{font-family:serif;background:#202830;color:#eee;font-size:18px} button{border-radius:12px;"
        "padding:14px 28px;background:#e0a030} a{color:#9cf}" if v.new_theme
        else "body{font-family:sans-serif;margin:24px} button{padding:6px 14px}"
    )
    style = (f"<style>{theme} label{{display:block;margin-top:10px}} .action, nav a"
             "{text-transform:uppercase;letter-spacing:.05em} select[multiple]{min-width:16em;height:9em}"
             ".suggest{list-style:none;padding:0;margin:0;border:1px solid #999;width:16em}"
             ".suggest li{padding:3px;cursor:pointer} .suggest:empty{display:none}</style>")
    links = [("/dashboard", "Dashboard", "nav.dashboard"), ("/groups", "Groups", "nav.groups")]
    if v.inserted_elements:
        links.insert(1, ("/dashboard", "Inbox", "nav.inbox"))
    menu = "".join(f"<a href='{href}' data-k='{k}'>{h.e(text)}</a> " for href, text, k in links)
    top = f"<header><nav aria-label='{h.e('Main')}'>{menu}</nav></header>" if nav else ""
    if v.moved_layout and nav:
        top = (f"<header style='float:right;width:12em'><nav aria-label='{h.e('Main')}' "
               f"style='display:flex;flex-direction:column'>{menu}</nav></header>")
    doc = (f"<!doctype html><html lang='{'de' if v.translated else 'en'}'><head><meta charset='utf-8'>"
           f"<title>{html.escape(h.t(title))} — {h.e('Expenses')}</title>{style}</head>"
           f"<body>{top}{body}{BEACON}</body></html>")
    return doc.encode("utf-8")


def login_page(v: Variant, error: str = "", next_: str = "") -> bytes:
    """The sign-in form; ``next_`` (a CMS page the person asked for) rides in a
    hidden field after the button, so the first task's form is unchanged."""
    h = Html(v)
    err = f"<p role='alert'>{html.escape(error)}</p>" if error else ""
    decoy = (f"<p><a href='/help' role='button' data-k='decoy.signin-help'>{h.e('Sign in')} help</a></p>"
             if v.decoys else "")
    form = (f"<form method='post' action='/login'>"
            f"<label for='{h.id('email')}'>{h.e('Email')}</label>"
            f"<input id='{h.id('email')}' name='email' type='email' autocomplete='username' data-k='login.email'>"
            + ("<label for='f-3a9c1e7b'>Passphrase</label>"  # an id a framework made up
               "<input id='f-3a9c1e7b' name='passphrase' type='password' "
               "autocomplete='current-password' data-k='login.password'>" if v.password_relabelled else
               f"<label for='{h.id('password')}'>{h.e('Password')}</label>"
               f"<input id='{h.id('password')}' name='password' type='password' "
               "autocomplete='current-password' data-k='login.password'>")
            + ("" if v.signin_removed else
               f"<p><button id='{h.id('login-btn')}' data-testid='login-submit' type='submit' data-k='login.submit'>"
               f"{h.e('Sign in')}</button></p>")
            + (f"<input type='hidden' name='next' value='{html.escape(next_)}'>" if next_ else "")
            + "</form>")
    body = f"<main><h1>{h.e('Sign in')}</h1>{err}{h.wrap(form)}{decoy}</main>"
    return page(v, "Sign in", body, nav=False)


# The dashboard is a small single-page app: /dashboard and /dashboard/reports
# are one document whose routes change with history.pushState.
SPA = """<script>
const T = %(words)s, reports = %(reports)s, V = %(variant)s;
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => '&#' + c.charCodeAt(0) + ';');
function render() {
  const main = document.querySelector('main');
  if (location.pathname === '/dashboard/reports') {
    document.title = T.Reports + ' — ' + T.Expenses;
    const list = reports.map((r) => '<li>' + esc(r.description) + ': ' + esc(r.amount) + '</li>').join('');
    main.innerHTML = '<h1>' + T.Reports + '</h1>' + V.filler + V.wrapOpen + '<p>' + V.newReport + '</p>'
      + V.wrapClose + '<h2>' + T['Your reports'] + '</h2><ul>' + list + '</ul>';
  } else {
    document.title = T.Dashboard + ' — ' + T.Expenses;
    main.innerHTML = '<h1>' + T.Dashboard + '</h1><p>' + reports.length + ' reports.</p>';
  }
}
document.addEventListener('click', (e) => {
  const a = e.target.closest && e.target.closest('a[data-spa]');
  if (!a) return;
  e.preventDefault();
  history.pushState({}, '', a.getAttribute('href'));
  render();
});
window.addEventListener('popstate', render);
render();
</script>"""


def dashboard_page(v: Variant, reports: list[dict[str, Any]]) -> bytes:
    h = Html(v)
    tabs = (f"<div role='tablist' aria-label='{h.e('Dashboard')}'>"
            f"<a role='tab' href='/dashboard' data-spa data-k='tab.overview'>{h.e('Overview')}</a> "
            f"<a role='tab' id='{h.id('tab-reports')}' href='/dashboard/reports' data-spa "
            f"data-k='tab.reports'>{h.e('Reports')}</a></div>")
    new_report = h.action_link("/reports/new", "New report", "reports.new")
    if v.decoys:
        new_report = (f"<a class='action' href='/reports' data-k='decoy.new'>{h.e('New')}</a> "
                      + new_report + " <a href='/reports/new?template=1' data-k='decoy.new-template'>"
                      f"{h.e('New report')} template</a>")
    filler = "<div style='height:1400px'>Scroll for more.</div>" if v.below_fold else ""
    spa = SPA % {"words": json.dumps({w: h.t(w) for w in DE}), "reports": json.dumps(reports),
                 "variant": json.dumps({"newReport": new_report, "filler": filler,
                                        "wrapOpen": "<div class='x'><div>" if v.wrappers else "",
                                        "wrapClose": "</div></div>" if v.wrappers else ""})}
    body = f"{tabs}<main></main>{spa}"
    return page(v, "Dashboard", body)


TYPEAHEAD = """<script>
const merchants = %(merchants)s;
const box = document.getElementById(%(input)s), list = document.getElementById(%(list)s);
const hidden = document.querySelector('input[name=merchant_id]');
// Suggestions follow keystrokes (keyup), as many type-aheads do: a value set
// without key events shows none.
box.addEventListener('keyup', () => {
  const q = box.value.trim().toLowerCase();
  list.innerHTML = '';
  if (q.length < 2) return;
  for (const [key, label, k] of merchants) {
    if (!label.toLowerCase().includes(q)) continue;
    const li = document.createElement('li');
    li.setAttribute('role', 'option'); li.dataset.k = k; li.dataset.key = key; li.textContent = label;
    li.addEventListener('click', () => { box.value = label; hidden.value = key; list.innerHTML = ''; });
    list.appendChild(li);
  }
});
</script>"""


def form_page(v: Variant) -> bytes:
    h = Html(v)
    merchants = _entries(MERCHANTS, "🚕 " if v.option_prefix else "", "merchant")
    if v.decoys:
        merchants += [("taxi", "Taxi", "decoy.merchant-taxi"),
                      ("taxi-paris-cdg", "Taxi Paris Airport", "decoy.merchant-cdg")]
    cats = [(val, h.t(label)) for val, label in CATEGORIES]
    if v.moved_layout or v.renamed_ids:
        cats.reverse()  # the options change order
    if v.option_prefix:
        cats = [(val, f"Category: {label}") for val, label in cats]
    options = "".join(f"<option value='{VALUE_PREFIX if v.renamed_values else ''}{val}'>{html.escape(label)}</option>"
                      for val, label in cats)
    fields_ = [
        f"<label for='{h.id('amount')}'>{h.e('Amount')}</label>"
        f"<input id='{h.id('amount')}' name='amount' inputmode='decimal' data-k='report.amount'>",
        f"<label for='{h.id('description')}'>{h.e('Description')}</label>"
        f"<textarea id='{h.id('description')}' name='description' data-k='report.description'></textarea>",
        f"<label for='{h.id('merchant')}'>{h.e('Merchant')}</label>"
        f"<input id='{h.id('merchant')}' role='combobox' aria-autocomplete='list' autocomplete='off' "
        f"aria-controls='{h.id('merchant-list')}' data-k='report.merchant'>"
        f"<ul id='{h.id('merchant-list')}' class='suggest' role='listbox' aria-label='{h.e('Merchants')}'></ul>"
        f"<input type='hidden' name='merchant_id'>",
        f"<label for='{h.id('category')}'>{h.e('Category')}</label>"
        f"<select id='{h.id('category')}' name='category' data-k='report.category'>"
        f"<option value=''>{h.e('Choose…')}</option>{options}</select>",
        f"<label><input type='checkbox' id='{h.id('has-receipt')}' name='has_receipt' data-k='report.receipt'> "
        f"{h.e('I have a receipt')}</label>",
    ]
    if v.moved_layout:
        fields_ = [fields_[3], fields_[4], fields_[1], fields_[0], fields_[2]]
        fields_.insert(0, "<div style='display:flex;flex-direction:column-reverse'>")
        fields_.append("</div>")
    if v.inserted_elements:
        fields_.insert(0, "<p class='notice'>New: reports are reviewed within two days.</p>"
                          "<label for='project'>Project</label><input id='project' name='project'>")
    submit = "" if v.submit_removed else (
        f"<button id='{h.id('submit')}' type='submit' data-k='report.submit'>{h.e('Submit report')}</button>")
    if v.submit_relabelled:
        submit = "<button type='submit' data-k='report.submit'>Send for approval</button>"
    if v.decoys:
        submit = ("<button type='button' data-k='decoy.draft' onclick=\"this.textContent='Saved as draft'\">"
                  "Submit draft</button> " + submit +
                  " <a href='/reports/new' role='button' data-k='decoy.later'>Submit reports later</a>"
                  " <button type='button' data-k='decoy.submit'>Submit</button>")
    filler = "<div style='height:1600px'>Scroll down for the rest of the form.</div>" if v.below_fold else ""
    inner = "".join(fields_) + filler + f"<p>{submit}</p>"
    help_link = f"<a href='/help' target='_blank' data-k='report.help'>{h.e('Help')}</a>"
    body = (f"<main><h1>{h.e('New report')}</h1>"
            f"<form method='post' action='/reports' aria-label='{h.e('Expense')}'>{h.wrap(inner)}</form>"
            f"<iframe src='/frame/note' title='{h.e('Note')}' style='height:90px;border:0;width:30em'></iframe>"
            f"<p>{help_link}</p></main>")
    script = TYPEAHEAD % {"merchants": json.dumps(merchants), "input": json.dumps(h.id("merchant")),
                          "list": json.dumps(h.id("merchant-list"))}
    return page(v, "New report", body + script)


def note_frame(v: Variant, saved: str | None) -> bytes:
    """A form of its own inside an iframe."""
    h = Html(v)
    done = f"<p role='status'>{h.e('Note saved')}</p>" if saved is not None else ""
    body = (f"<form method='post' action='/frame/note'><label for='{h.id('note')}'>{h.e('Note')}</label>"
            f"<input id='{h.id('note')}' name='note' data-k='note.field'> "
            f"<button type='submit' id='{h.id('note-save')}' data-k='note.save'>{h.e('Save note')}</button>"
            f"</form>{done}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Note</title></head>"
            f"<body>{body}{BEACON}</body></html>").encode()


def report_page(v: Variant, r: dict[str, Any]) -> bytes:
    h = Html(v)
    body = (f"<main><h1>{h.e('Report submitted')}</h1><p id='summary'>{html.escape(r['description'])} — "
            f"{html.escape(r['amount'])} ({html.escape(r['category'])}, {html.escape(r['merchant_id'])})</p>"
            f"</main>")
    return page(v, "Report submitted", body)


def groups_page(v: Variant, groups: list[dict[str, Any]]) -> bytes:
    h = Html(v)
    rows = "".join(f"<li>{html.escape(g['name'])}</li>" for g in groups)
    add = h.action_link("/groups/add", "Add group", "groups.add")
    aside = ""
    if v.decoys:
        aside = (f"<aside aria-label='Shortcuts'><a href='/groups/add?quick=1' data-k='decoy.add'>Add</a> "
                 f"<a href='/groups/import' data-k='decoy.add-import'>{h.e('Add group')} from a file</a></aside>")
    filler = "<div style='height:1400px'>All groups below.</div>" if v.below_fold else ""
    body = (f"{aside}<main><h1>{h.e('Groups')}</h1>{filler}{h.wrap(f'<p>{add}</p>')}<ul>{rows}</ul></main>")
    return page(v, "Groups", body)


DUAL_LIST = """<script>
const perms = %(perms)s, ids = %(ids)s;
const from = document.getElementById(ids.from), to = document.getElementById(ids.to);
const filter = document.getElementById(ids.filter);
const chosen = new Set();
// Like Django's SelectFilter: the filter reacts to keyup and rebuilds the
// "available" list with only the matching options (the others leave the DOM).
function fill() {
  const q = filter.value.trim().toLowerCase();
  from.innerHTML = '';
  for (const [value, label, k] of perms) {
    if (chosen.has(value) || (q && !label.toLowerCase().includes(q))) continue;
    const o = new Option(label, value); o.dataset.k = k; from.appendChild(o);
  }
}
function move(values) {
  for (const value of values) {
    const p = perms.find((x) => x[0] === value);
    if (!p || chosen.has(value)) continue;
    chosen.add(value);
    const o = new Option(p[1], value); o.dataset.k = 'chosen.' + value; to.appendChild(o);
  }
  fill();
}
filter.addEventListener('keyup', fill);
document.getElementById(ids.add).addEventListener('click', () =>
  move(Array.from(from.selectedOptions).map((o) => o.value)));
document.getElementById(ids.addAll).addEventListener('click', () =>
  move(Array.from(from.options).map((o) => o.value)));
document.getElementById(ids.form).addEventListener('submit', () => {
  for (const o of to.options) o.selected = true;
});
fill();
</script>"""


def group_form_page(v: Variant) -> bytes:
    h = Html(v)
    perms = _entries(PERMISSIONS, "Reports | " if v.option_prefix else "", "perm")
    if v.decoys:
        perms.insert(2, ("approve_reports_legacy", "Can approve reports (legacy)", "decoy.perm-legacy"))
    if v.moved_layout:
        perms.reverse()
    ids = {k: h.id(x) for k, x in (("from", "perm-from"), ("to", "perm-to"), ("filter", "perm-filter"),
                                   ("add", "perm-add"), ("addAll", "perm-add-all"), ("form", "group-form"))}
    chooser = (f"<button type='button' id='{ids['add']}' data-k='perm.add'>{h.e('Choose')}</button> "
               f"<button type='button' id='{ids['addAll']}' data-k='perm.add-all'>{h.e('Choose all')}</button>")
    available = (f"<div><label for='{ids['filter']}'>{h.e('Filter')}</label>"
                 f"<input id='{ids['filter']}' placeholder='{h.e('Filter')}' autocomplete='off' "
                 f"data-k='perm.filter'>"
                 f"<label for='{ids['from']}'>{h.e('Available permissions')}</label>"
                 f"<select id='{ids['from']}' multiple size='8' data-k='perm.from'></select></div>")
    chosen = (f"<div><label for='{ids['to']}'>{h.e('Chosen permissions')}</label>"
              f"<select id='{ids['to']}' name='permissions' multiple size='8' data-k='perm.to'></select></div>")
    parts = [available, f"<div>{chooser}</div>", chosen]
    if v.moved_layout:
        parts = [chosen, f"<div>{chooser}</div>", available]
    save = f"<button type='submit' id='{h.id('group-save')}' data-k='group.save'>{h.e('Save')}</button>"
    if v.ambiguous:
        save = (f"<button type='submit' name='draft' value='1' data-k='decoy.save-draft'>{h.e('Save')}</button> "
                + save)
    decoy = ""
    if v.decoys:
        decoy = ("<aside aria-label='Appearance'><button type='button' data-k='decoy.choose'>"
                 f"{h.e('Choose')}</button> theme</aside>")
    filler = "<div style='height:1400px'>More settings below.</div>" if v.below_fold else ""
    inner = (f"<label for='{h.id('group-name')}'>{h.e('Name')}</label>"
             f"<input id='{h.id('group-name')}' name='name' data-k='group.name'>"
             f"<fieldset><legend>{h.e('Permissions')}</legend>"
             f"<div style='display:flex;gap:12px;align-items:center'>{''.join(parts)}</div></fieldset>"
             f"{filler}<p>{save}</p>")
    body = (f"{decoy}<main><h1>{h.e('Add group')}</h1><form id='{ids['form']}' method='post' action='/groups' "
            f"aria-label='{h.e('Group')}'>{h.wrap(inner)}</form></main>")
    script = DUAL_LIST % {"perms": json.dumps(perms), "ids": json.dumps(ids)}
    return page(v, "Add group", body + script)


def group_page(v: Variant, g: dict[str, Any]) -> bytes:
    h = Html(v)
    link = f"<a href='/audit' target='_blank' data-k='audit.open'>{h.e('Open audit log')}</a>"
    body = (f"<main><h1>{h.e('Group saved')}</h1><p id='group'>{html.escape(g['name'])}: "
            f"{html.escape(', '.join(g['permissions']))}</p><p>{link}</p></main>")
    return page(v, "Group saved", body)


def audit_page(v: Variant, entries: list[str]) -> bytes:
    h = Html(v)
    rows = "".join(f"<li>{html.escape(e)}</li>" for e in entries)
    return page(v, "Audit log", f"<main><h1>{h.e('Audit log')}</h1><ul>{rows}</ul></main>")


def simple_page(v: Variant, title: str, text: str) -> bytes:
    h = Html(v)
    return page(v, title, f"<main><h1>{h.e(title)}</h1><p>{html.escape(text)}</p></main>")
