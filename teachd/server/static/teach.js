// The Teach page: start, the bar's commands, the steps as the compiler will save them, the result.
'use strict';
(() => {
const $ = (id) => document.getElementById(id);
const clone = (id) => $(id).content.firstElementChild.cloneNode(true);

let shownResult = '', shownRows = '', saving = '';
// the person's review, each step by its seq: unticked, named, its value fixed or secret; checks in words
const dropped = new Set(), names = new Map(), kinds = new Map(), checks = [];
const forget = () => { dropped.clear(); names.clear(); kinds.clear(); checks.length = 0; };
function edits() {
  const pick = (kind) => [...kinds].filter(([, k]) => k === kind).map(([seq]) => seq);
  return {drop: [...dropped], names: Object.fromEntries([...names].filter(([, v]) => v.trim())),
          fixed: pick('fixed'), secret: pick('secret'), checks: [...checks]};
}
function show(st) {
  // the steps as the compiler will save them (the daemon folds the events: teach/review.py)
  const fix = st.repair, rows = st.steps || [], paused = Boolean(st.paused);
  const kept = rows.filter((r) => !r.undone).length;
  $('state').textContent = st.starting
    ? `Show me: replaying the steps before step ${fix.step} — answer them on the Approvals page`
    : st.stopping ? (fix ? `Stopped. Compiling ${kept} step${kept === 1 ? '' : 's'} into the skill's next version…`
                         : `Stopped: ${kept} step${kept === 1 ? '' : 's'}. Getting them ready for your review…`)
    : st.recording ? (fix ? `Show me — ${fix.banner.split('**').join('')}`
                          : `Recording “${st.name}” — Chromium is open` + (paused ? ' · paused: nothing you do is recorded' : ''))
    : '';
  // each button only where it acts: Start when nothing records; the bar's commands while recording
  const live = Boolean(st.recording) && !st.stopping;
  $('start').disabled = live || Boolean(st.stopping) || Boolean(st.starting)
    || Boolean(st.result && st.result.review);  // one demonstration at a time: this one waits for its review
  $('stop').disabled = !live;
  for (const b of document.querySelectorAll('[data-command]')) {
    const kind = b.dataset.command;
    b.disabled = !live || (kind === 'pause' && paused) || (kind === 'resume' && !paused)
      || (kind === 'undo' && kept <= 1) || (kind === 'mark' && paused);
  }
  const review = Boolean(st.result && st.result.review);
  if (review) $('state').textContent = saving || (`Review “${st.name}”: untick a step to leave it out, name it, `
    + 'choose what each typed value is, add a check — then Save or Discard.');
  $('stop').textContent = fix ? 'Done' : 'Stop and review';
  const rowsKey = JSON.stringify([rows, review]);
  if (rowsKey !== shownRows) {  // redrawn only when it changed: a tick or the focus stays where it is
    shownRows = rowsKey;
    drawRows(rows, review);
  }
  $('no-steps').hidden = rows.length > 0;
  showResult(st, fix);
}
function drawRows(rows, review) {
  const body = $('steps');
  body.replaceChildren();
  for (const r of rows) {
    const tr = clone('step-row');
    tr.querySelector('.n').textContent = r.undone ? '—' : String(r.n);
    if (review && !r.undone && r.seq != null) {
      const keep = clone('keep-box');
      keep.checked = !dropped.has(r.seq);
      keep.setAttribute('aria-label', `Keep step ${r.n}: ${r.action} ${r.target}`);
      keep.addEventListener('change', () => { unflash(); if (keep.checked) dropped.delete(r.seq); else dropped.add(r.seq); });
      tr.querySelector('.n').prepend(keep, ' ');
    }
    const what = `step ${r.n}: ${r.action} ${r.target}`;
    tr.querySelector('.action').textContent = r.action;
    const target = tr.querySelector('.target');
    target.textContent = r.target + ' ';
    if (r.value != null) { const v = document.createElement('q'); v.textContent = r.value; target.append(v, ' '); }
    if (r.masked) target.append(clone('masked-badge'));
    if (r.undone) { tr.classList.add('undone'); target.append(clone('undone-note')); }
    if (review && !r.undone && r.seq != null) {
      if (r.value != null && !r.masked) {
        const kind = clone('value-kind');
        kind.value = kinds.get(r.seq) || 'param';
        kind.setAttribute('aria-label', `The value of ${what}`);
        kind.addEventListener('change', () => { unflash(); kinds.set(r.seq, kind.value); });
        target.append(kind);
      }
      const name = clone('name-box');
      name.value = names.get(r.seq) || '';
      name.placeholder = 'your name for this step (optional)';
      name.setAttribute('aria-label', `Name ${what}`);
      name.addEventListener('input', () => { unflash(); names.set(r.seq, name.value); });
      target.append(name);
    }
    body.append(tr);
  }
}
function showResult(st, fix) {
  const r = st.result, key = JSON.stringify(r || null);
  if (key === shownResult) return;
  shownResult = key;
  const out = $('result');
  out.querySelectorAll(':scope > :not(.flash)').forEach((x) => x.remove());
  if (r && r.review) {
    const p = clone('review'), form = p.querySelector('[data-checks]'), list = form.querySelector('ul');
    const drawChecks = () => list.replaceChildren(...checks.map((text, i) => {
      const li = clone('check-item');
      li.querySelector('.text').textContent = `The final page shows “${text}”`;
      const remove = li.querySelector('button');
      remove.setAttribute('aria-label', `Remove the check “${text}”`);
      remove.addEventListener('click', () => { unflash(); checks.splice(i, 1); drawChecks(); });
      return li;
    }));
    const add = form.querySelector('button[type=submit]'), words = form.querySelector('#check-text');
    add.disabled = true;  // enabled only when there are words to add
    words.addEventListener('input', () => { add.disabled = !words.value.trim(); });
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      unflash();  // a change to the review: what Save said of the last one is old news
      const text = $('check-text').value.trim();
      if (text && !checks.includes(text)) checks.push(text);
      $('check-text').value = '';
      add.disabled = true;
      drawChecks();
    });
    drawChecks();
    p.querySelector('[data-save]').addEventListener('click', (ev) => {
      const save = ev.currentTarget;
      const kept = (st.steps || []).filter((r) => !r.undone && r.seq != null && !dropped.has(r.seq)).length + 1;
      save.disabled = true;  // one save; the state says what it is doing meanwhile
      saving = `Saving: compiling ${kept} step${kept === 1 ? '' : 's'} into the skill…`;
      $('state').textContent = saving;
      act(() => api('POST', '/api/teach/save', edits()), (st2) => { forget(); show(st2); }, save)
        .finally(() => { save.disabled = false; saving = ''; });
    });
    p.querySelector('[data-discard]').addEventListener('click', (ev) => {
      if (!confirm('Discard this demonstration? Its recording is deleted; nothing is saved.')) return;
      act(() => api('POST', '/api/teach/discard'), (st2) => { forget(); show(st2); }, ev.currentTarget);
    });
    out.prepend(p);
  } else if (r && r.discarded) {
    out.prepend(clone('discarded'));
  } else if (r && r.ok) {
    const p = clone('saved'), a = p.querySelector('a');
    a.href = '/skills/' + seg(r.slug); a.textContent = `${r.slug} v${r.version}`;
    out.prepend(p);
  } else if (r) {
    const p = clone('failed');
    p.querySelector('.why').textContent = say(r.error || 'the recording failed');
    p.querySelector('.where').textContent = r.recording_dir || '';
    out.prepend(p);
    if (fix && /--extend-scope/.test(r.error || '')) {
      const allow = clone('allow-scope');
      allow.addEventListener('click', () => act(() => api('POST', '/api/teach/apply'), show, allow));
      p.after(allow);
    }
  }
}
async function poll() { try { show(await api('GET', '/api/teach')); } catch (e) { /* the daemon is stopping */ } }
$('start').addEventListener('click', () => act(() => api('POST', '/api/teach',
  {name: $('name').value, url: $('url').value}), show, $('start')));
$('stop').addEventListener('click', () => act(() => api('POST', '/api/teach/stop'), show, $('stop')));
// The API answers once the recorder applied the command: "armed" is said only when it holds.
const APPLIED = {mark: 'Armed: the next field you type into is masked', pause: 'Paused: nothing is recorded',
                 resume: 'Recording again', undo: 'The last step is taken back'};
for (const b of document.querySelectorAll('[data-command]')) b.addEventListener('click', () =>
  act(() => api('POST', '/api/teach/command', {kind: b.dataset.command}), (r) => {
    flash(r.applied ? APPLIED[b.dataset.command] : 'Sent, not confirmed yet: wait a moment before you go on',
          r.applied ? 'info' : 'err', b);
    setTimeout(poll, 300);
  }, b));
poll(); setInterval(poll, 700);
})();
