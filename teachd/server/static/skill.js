// A skill's page: approval, description and instructions, files, versions, sharing, delete.
// Errors show next to the button that caused them.
'use strict';
(() => {
const data = pageData(), SLUG = data.slug;
const base = `/api/skills/${seg(SLUG)}`;
const reload = () => location.reload();
const $ = (id) => document.getElementById(id);
const on = (id, fn) => { const el = $(id); if (el) el.addEventListener('click', () => fn(el)); };
if (data.access === 'use')  // shared to use: read, export, run — no new versions
  document.querySelectorAll('main button, main textarea, main input').forEach((x) => { x.disabled = true; });

// The raw editors stay open across the reload a save makes.
for (const d of document.querySelectorAll('details.panel[id]')) {
  if (sessionStorage.getItem('open:' + SLUG + ':' + d.id) === '1') d.open = true;
  d.addEventListener('toggle', () => sessionStorage.setItem('open:' + SLUG + ':' + d.id, d.open ? '1' : '0'));
}

if ($('people')) api('GET', '/api/people').then((p) => {
  const list = $('people');
  for (const name of [...p.users.filter((u) => u !== p.me), ...p.groups.map((g) => '@' + g)]) {
    const o = document.createElement('option'); o.value = name; list.append(o);
  }
}).catch(() => {});

// Runs of this skill, by you and the people it is shared with (its owner's view).
api('GET', `${base}/runs`).then((runs) => {
  if (!Array.isArray(runs) || !runs.length) return;
  const body = document.querySelector('#others-runs tbody'), row = $('others-row');
  for (const r of runs) {
    const tr = row.content.firstElementChild.cloneNode(true);
    tr.querySelector('.id').textContent = r.run_id;
    const t = tr.querySelector('time'); t.setAttribute('datetime', r.started_at || ''); t.textContent = r.started_at || '';
    tr.querySelector('.by').textContent = r.by || '';
    tr.querySelector('.status').textContent = r.status || '';
    tr.querySelector('.version').textContent = r.version ? 'v' + r.version : '';
    body.append(tr);
  }
  $('others-runs').hidden = false;
  showTimes($('others-runs'));
}).catch(() => { /* not offered by this daemon */ });

on('share', (b) => act(() => api('POST', `${base}/grants`,
  {with: $('share-with').value.trim(), can: $('share-can').value}), reload, b));
for (const b of document.querySelectorAll('[data-unshare]')) b.addEventListener('click', () => act(() =>
  api('DELETE', `${base}/grants/${seg(b.dataset.unshare)}`), reload, b));

const askWas = $('always-ask').checked;
on('save-approval', (b) => {
  const always = $('always-ask').checked;
  const tools = [...document.querySelectorAll('[data-tool]')].filter((x) => x.checked).map((x) => x.dataset.tool);
  const guarded = always && (!tools.length || tools.includes('computer_act'));
  if (data.forced && askWas && !guarded && !confirm(
      'This skill types a secret (a password or the like), so teachd made it ask you before every ' +
      'computer action. Without it, a run types the secret with nobody watching. Save anyway?')) return;
  act(() => api('PUT', `${base}/approval`, {always_ask: always, tools}), reload, b);
});
on('save-content', (b) => act(() => api('PUT', `${base}/content`,
  {name: $('display-name').value, description: $('description').value, instructions: $('instructions').value}),
  reload, b));
for (const b of document.querySelectorAll('[data-save-file]')) b.addEventListener('click', () => act(() =>
  api('PUT', `${base}/files/${segs(b.dataset.saveFile)}`,
      {text: b.closest('.card').querySelector('textarea[data-file]').value}), reload, b));
for (const b of document.querySelectorAll('[data-remove-file]')) b.addEventListener('click', () => {
  if (!confirm(`Remove ${b.dataset.removeFile} from ${SLUG}? (A new version; the old one keeps it.)`)) return;
  act(() => api('DELETE', `${base}/files/${segs(b.dataset.removeFile)}`), reload, b);
});
on('add-file', (b) => act(() => api('PUT', `${base}/files/${segs($('new-path').value)}`,
  {text: $('new-text').value}), reload, b));
for (const b of document.querySelectorAll('[data-restore]')) b.addEventListener('click', () => act(() =>
  api('POST', `${base}/restore`, {version: Number(b.dataset.restore)}), reload, b));
if ($('repeatable')) $('repeatable').addEventListener('change', (e) => act(() =>
  api('PUT', `${base}/repeatable`, {on: e.target.checked}), reload, e.target));
if ($('at-once')) $('at-once').addEventListener('change', (e) => act(() =>
  api('PUT', `${base}/at-once`, {n: e.target.value ? Number(e.target.value) : null}), reload, e.target));
on('delete', (b) => {
  if (confirm('Delete ' + SLUG + ' and all its versions?'))
    act(() => api('DELETE', base), () => { location.href = '/skills'; }, b);
});
})();
