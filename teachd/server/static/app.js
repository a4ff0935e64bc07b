// teachd's shared page script: the page key, api(), seg(), flash(), times,
// the waiting count in the nav, logout. Plain script (no build step); every
// page loads it first, then its own small script.
'use strict';

const csrf = localStorage.getItem('teachd-key') || '';  // this origin's page key: see teachd.server.security

// One path segment of a URL, encoded: a name with '/', '%2e', '?' or '#' stays one segment;
// '.' and '..' cannot be sent as a segment at all (every URL parser folds them).
function seg(s) {
  s = String(s);
  if (s === '.' || s === '..' || s === '') throw new Error('not a name that can go in a URL: ' + JSON.stringify(s));
  return encodeURIComponent(s);
}
const segs = (path) => String(path).split('/').map(seg).join('/');

// What the page's script was given by the server (never executed: type=application/json).
function pageData() {
  const el = document.getElementById('page-data');
  try { return el ? JSON.parse(el.textContent) : {}; } catch (err) { return {}; }
}

// The API's words for the command line, said as the page says them.
const UI_WORDS = [
  [/give one of --cron "MIN HOUR DOM MON DOW" or --every 6h/, 'fill in Cron (like 0 9 * * 1) or Every (like 6h), one of them'],
  [/--every takes a number and a unit \(s, m, h, d, w\), like 6h; not/, 'Every takes a number and a unit (s, m, h, d, w), like 6h, not'],
  [/--every must be at least 1m/, 'Every must be at least 1 minute'],
  [/--cron takes five fields/, 'Cron takes five fields'],
  [/--cron /, 'Cron '],
  [/take the remote version with --update/, 'take the remote version with Update'],
  [/no display to show the browser on: pass --headless/, 'this daemon has no display to show the browser on'],
  [/--can is use or edit/, '“They can” is use or edit'],
  [/ \(--skill SLUG\)/, ''],
  [/--json/, ''],
];
function say(message) {
  let text = String(message || '');
  for (const [from, to] of UI_WORDS) text = text.replace(from, to);
  return text;
}

class ApiError extends Error {
  constructor(message, status, data) { super(message); this.status = status; this.data = data; }
}

async function api(method, url, body) {
  const r = await fetch(url, {method, headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf},
                              body: body === undefined ? undefined : JSON.stringify(body)});
  const text = await r.text();
  let data; try { data = JSON.parse(text); } catch (e) { data = {error: text}; }
  if (!r.ok) throw new ApiError(say((data && data.error) || text || r.status), r.status, data);
  return data;
}

// A page fragment (the same template the page was made with), fetched with the key.
async function fragment(url) {
  const r = await fetch(url, {headers: {'X-CSRF-Token': csrf}});
  if (!r.ok) throw new ApiError(say(await r.text()), r.status, null);
  return r.text();
}

// A message: next to what caused it (`near`: an element inside a [data-errors] box
// holding a .flash), else at the top of the page (which stays in view).
// A message says what the last action did, for as long as that is news: the next action clears
// every message on the page (an old error beside a new success is a stale one), a message that is not
// an error fades after FLASH_MS, and a page brought back by Back or Forward shows none.
const FLASH_MS = 12000;
function flash(msg, kind, near) {
  const box = near && near.closest ? near.closest('[data-errors]') : null;
  const f = (box && box.querySelector('.flash')) || document.getElementById('flash');
  if (!f) return;
  const said = say(msg);
  f.textContent = said;
  f.className = 'flash ' + (kind || 'info');
  clearTimeout(f.fading);
  if (kind !== 'err') f.fading = setTimeout(() => { if (f.textContent === said) clear(f); }, FLASH_MS);
}
function clear(f) { clearTimeout(f.fading); f.textContent = ''; f.className = 'flash'; }
function unflash() { document.querySelectorAll('.flash').forEach(clear); }
window.addEventListener('pageshow', (ev) => { if (ev.persisted) unflash(); });

async function act(fn, done, near) {
  try {
    unflash();
    const r = await fn();
    if (done) await done(r);
    return r;
  } catch (err) { flash(err.message, 'err', near); return undefined; }
}

// A download (Export) is a fetch with the key, saved from memory: a plain link would carry the cookie only.
async function download(url, name) {
  const r = await fetch(url, {headers: {'X-CSRF-Token': csrf}});
  if (!r.ok) throw new Error((await r.text()) || r.status);
  const a = document.createElement('a');
  a.href = URL.createObjectURL(await r.blob()); a.download = name; document.body.append(a); a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

// Pictures under /api/ need the key too: fetched, shown from memory (blob: URLs).
const pictureCache = new Map();
async function showPictures(root) {
  for (const img of (root || document).querySelectorAll('img[data-src]')) {
    const url = img.dataset.src;
    if (img.dataset.shown === url) continue;
    img.dataset.shown = url;
    try {
      if (!pictureCache.has(url)) {
        pictureCache.set(url, (async () => {
          if (url.startsWith('data:')) return url;
          const r = await fetch(url, {headers: {'X-CSRF-Token': csrf}});
          if (!r.ok) throw new Error(String(r.status));
          return URL.createObjectURL(await r.blob());
        })());
      }
      img.src = await pictureCache.get(url);
    } catch (err) { pictureCache.delete(url); img.dataset.shown = ''; img.alt += ' (not available)'; }
  }
}

// -- times: local and relative, the exact local time on hover ---------------------------
const RELATIVE = new Intl.RelativeTimeFormat(undefined, {numeric: 'auto'});
const EXACT = new Intl.DateTimeFormat(undefined, {dateStyle: 'medium', timeStyle: 'medium'});
function relative(date, now) {
  const s = Math.round((date - now) / 1000), a = Math.abs(s);
  if (a < 45) return s <= 0 ? 'just now' : 'in a few seconds';
  for (const [unit, size] of [['year', 31536000], ['month', 2592000], ['week', 604800], ['day', 86400],
                              ['hour', 3600], ['minute', 60]]) {
    if (a >= size * 0.95 || unit === 'minute') return RELATIVE.format(Math.round(s / size), unit);
  }
  return '';
}
function showTimes(root) {
  const now = Date.now();
  for (const t of (root || document).querySelectorAll('time[datetime]')) {
    const d = new Date(t.getAttribute('datetime'));
    if (isNaN(d)) continue;
    t.textContent = relative(d, now);
    t.title = EXACT.format(d);
  }
}

// -- the nav: what waits for the person (approvals + secrets), in the link and the title --
// (a page written into the guard's shell keeps the shell's <title>: the page's own comes as data)
const baseTitle = pageData().title || document.title.replace(/^\(\d+\) /, '');
let waitingBefore = null;
function showWaiting(n) {
  const badge = document.getElementById('waiting-count');
  if (badge) {
    badge.hidden = !n;
    badge.querySelector('.n').textContent = String(n);
  }
  document.title = (n ? `(${n}) ` : '') + baseTitle;
  if (waitingBefore !== null && n > waitingBefore && localStorage.getItem('teachd-notify') === 'on'
      && 'Notification' in window && Notification.permission === 'granted') {
    const note = new Notification('teachd: something waits for you',
                                  {body: `${n} waiting on the Approvals page`, tag: 'teachd-waiting'});
    note.onclick = () => { window.focus(); location.href = '/approvals'; };
  }
  waitingBefore = n;
  document.dispatchEvent(new CustomEvent('teachd:waiting', {detail: n}));
}
let waitingRoute = true;
async function waitingCount() {
  if (waitingRoute) {
    try { const w = await api('GET', '/api/waiting'); return (w.approvals || 0) + (w.secrets || 0); }
    catch (err) { if (err.status !== 404 && err.status !== 405) throw err; waitingRoute = false; }
  }
  const [a, s] = await Promise.all([api('GET', '/api/approvals'), api('GET', '/api/secrets')]);
  return a.pending.length + s.pending.length;
}
async function refreshWaiting() {
  try { showWaiting(await waitingCount()); } catch (err) { /* the daemon is stopping: keep what is shown */ }
}

// -- on every page -------------------------------------------------------------------------
for (const a of document.querySelectorAll('a[data-download]')) a.addEventListener('click', (ev) => {
  ev.preventDefault(); act(() => download(a.href, a.getAttribute('download')), null, a);
});
const logout = document.getElementById('logout');
if (logout) logout.addEventListener('click', () => act(() => api('POST', '/logout'), () => {
  localStorage.removeItem('teachd-key'); location.replace('/logged-out'); }));
showTimes();
setInterval(() => showTimes(), 30000);
document.title = baseTitle;
if (document.getElementById('waiting-count') && csrf) {
  const start = pageData().waiting;
  if (typeof start === 'number') showWaiting(start);
  setInterval(refreshWaiting, 4000);
}

// -- redrawing part of a page: the same template's partial, swapped in place -------------------
// Focus stays where it was (the same id or data-focus), or goes to `fallback` when that is gone.
const swapped = new WeakMap();
function typingSecret(el) {  // never redraw under the person's fingers while a secret is being typed
  const a = document.activeElement;
  return (a && a.type === 'password' && el.contains(a)) || [...el.querySelectorAll('input[type=password]')].some((i) => i.value);
}
function swap(el, html, fallback, force) {
  if (swapped.get(el) === html || (!force && typingSecret(el))) return false;
  const active = document.activeElement;
  const key = active && el.contains(active)
    ? (active.id ? '#' + CSS.escape(active.id) : active.dataset.focus ? `[data-focus="${CSS.escape(active.dataset.focus)}"]` : null)
    : null;
  el.innerHTML = html;
  swapped.set(el, html);
  showTimes(el); showPictures(el);
  if (key) {
    const again = el.querySelector(key) || (fallback && fallback());
    if (again) again.focus();
  }
  return true;
}

// -- answering an approval (Approvals page, a run's page): no reload, the page redraws -------
document.addEventListener('click', (ev) => {
  const b = ev.target.closest('button[data-answer]');
  if (!b) return;
  const id = b.dataset.answer, word = b.dataset.word || 'deny';
  const group = b.closest('.answers') || b;
  if (group.dataset.busy) return;  // one answer per request: a double click sends one
  group.dataset.busy = '1';
  group.setAttribute('aria-busy', 'true');  // buttons stay enabled: focus stays where the person is
  act(() => api('POST', `/api/approvals/${seg(id)}`, {answer: word}), () => {
    flash(word === 'deny' ? 'Denied: the run stops at this step (its page says what it did before).'
      : word === 'run' ? 'Allowed for this run: every step of its plan, in order.'
      : word === 'like' ? 'Allowed: this step, and later steps changed the same way in this run.'
      : word === 'these' ? 'Allowed: this step, and the changed steps of its page it listed.'
      : 'Allowed: this step.');
    document.dispatchEvent(new CustomEvent('teachd:answered', {detail: {id, word}}));
    refreshWaiting();
  }, b).finally(() => { delete group.dataset.busy; group.removeAttribute('aria-busy'); });
});

// -- a run's pictures, enlarged: one dialog, its neighbours a step away (buttons, arrow keys) --------
let enlarged = null;
function enlargeDialog() {
  if (enlarged) return enlarged;
  enlarged = document.createElement('dialog');
  enlarged.id = 'enlarged';
  enlarged.setAttribute('aria-labelledby', 'enlarged-caption');
  enlarged.innerHTML = '<figure><img alt=""><figcaption id="enlarged-caption"></figcaption></figure>'
    + '<div class="row"><button type="button" data-move="-1">Previous</button>'
    + '<button type="button" data-move="1">Next</button>'
    + '<button type="button" class="primary" data-close>Close</button></div>';
  document.body.append(enlarged);
  enlarged.addEventListener('click', (ev) => {
    if (ev.target === enlarged || ev.target.closest('[data-close]')) enlarged.close();
    const move = ev.target.closest('[data-move]');
    if (move) showEnlarged(Number(move.dataset.move));
  });
  enlarged.addEventListener('keydown', (ev) => {
    if (ev.key === 'ArrowLeft' || ev.key === 'ArrowRight') {
      ev.preventDefault();
      showEnlarged(ev.key === 'ArrowLeft' ? -1 : 1);
    }
  });
  return enlarged;
}
let enlargedAt = 0;
function picturesHere() {  // every picture of the page, in order (the filmstrip's and the now-card's are steps' own)
  return [...document.querySelectorAll('button[data-enlarge]')].filter((b) => !b.closest('.filmstrip, .now-picture'));
}
function showEnlarged(move) {
  const all = picturesHere();
  if (!all.length) return;
  enlargedAt = Math.min(all.length - 1, Math.max(0, enlargedAt + move));
  const img = all[enlargedAt].querySelector('img');
  const big = enlarged.querySelector('img');
  big.src = img.src;
  big.alt = img.alt;
  enlarged.querySelector('figcaption').textContent = `${img.alt} (${enlargedAt + 1} of ${all.length})`;
  enlarged.querySelector('[data-move="-1"]').disabled = enlargedAt === 0;
  enlarged.querySelector('[data-move="1"]').disabled = enlargedAt === all.length - 1;
}
document.addEventListener('click', (ev) => {
  const b = ev.target.closest('button[data-enlarge]');
  if (!b || !b.querySelector('img')?.src) return;
  const all = picturesHere();
  // a filmstrip's (or the now-card's) picture opens its step's own, where the steps show it
  const own = b.closest('.filmstrip, .now-picture')
    ? all.findIndex((x) => x.querySelector('img').dataset.src === b.querySelector('img').dataset.src) : all.indexOf(b);
  enlargedAt = Math.max(0, own);
  const dialog = enlargeDialog();
  showEnlarged(0);
  dialog.showModal();
  dialog.querySelector('[data-close]').focus();
});

// -- a step not found, shown on the picture of its page: where the person clicked, as fractions --
// (or, by keyboard, where they moved the picture's mark with the arrow keys, then Enter)
function showWhere(img, x, y) {
  if (img.dataset.busy || !(x >= 0 && x <= 1 && y >= 0 && y <= 1)) return;
  img.dataset.busy = '1';
  const id = img.dataset.where;
  act(() => api('POST', `/api/approvals/${seg(id)}`, {answer: 'here', x, y}), () => {
    flash('Sent: the run looks at what you showed, and asks again if it cannot take the step.');
    document.dispatchEvent(new CustomEvent('teachd:answered', {detail: {id, word: 'here'}}));
    refreshWaiting();
  }, img).finally(() => { delete img.dataset.busy; });
}
document.addEventListener('click', (ev) => {
  const img = ev.target.closest('img[data-where]');
  if (!img) return;
  const r = img.getBoundingClientRect();  // the picture itself: inside its border
  showWhere(img, (ev.clientX - r.left - img.clientLeft) / img.clientWidth,
            (ev.clientY - r.top - img.clientTop) / img.clientHeight);
});
const MOVES = {ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1]};
function placeMark(img) {  // the keyboard's mark where Enter would show the run (the middle at first)
  const mark = img.parentElement.querySelector('.where-mark');
  mark.hidden = false;
  mark.style.left = `${img.offsetLeft + img.clientLeft + Number(img.dataset.x || 0.5) * img.clientWidth}px`;
  mark.style.top = `${img.offsetTop + img.clientTop + Number(img.dataset.y || 0.5) * img.clientHeight}px`;
}
document.addEventListener('focusin', (ev) => { if (ev.target.matches && ev.target.matches('img[data-where]')) placeMark(ev.target); });
document.addEventListener('keydown', (ev) => {
  const img = ev.target.closest && ev.target.closest('img[data-where]');
  if (!img) return;
  const x = Number(img.dataset.x || 0.5), y = Number(img.dataset.y || 0.5);
  if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); showWhere(img, x, y); return; }
  const move = MOVES[ev.key];
  if (!move) return;
  ev.preventDefault();
  const step = ev.shiftKey ? 0.1 : 0.02, clamp = (v) => Math.min(1, Math.max(0, v));
  img.dataset.x = clamp(x + move[0] * step); img.dataset.y = clamp(y + move[1] * step);
  placeMark(img);
});

// -- a secret typed for a run (Approvals page, a run's page): handed over once, never kept here --
document.addEventListener('submit', (ev) => {
  const f = ev.target.closest('form[data-secret]');
  if (!f) return;
  ev.preventDefault();
  const input = f.querySelector('input');
  act(() => api('POST', `/api/secrets/${seg(f.dataset.secret)}`, {value: input.value}), () => {
    input.value = '';
    // given: the form may go now. Focus moves to its heading first (the redraw never replaces
    // a password field that holds focus), and from there to what the redrawn page offers.
    const heading = f.closest('section, .card')?.querySelector('h2') || document.getElementById('waiting-h');
    if (heading) { heading.setAttribute('tabindex', '-1'); heading.focus(); } else input.blur();
    flash('Given to the run.');
    document.dispatchEvent(new CustomEvent('teachd:answered', {detail: {secret: f.dataset.secret}}));
    refreshWaiting();
  }, f);
});
