// Runs (and a run's page): the Run form, the feedback chips (undoable for a minute), Show me.
'use strict';
(() => {
const $ = (id) => document.getElementById(id);
const UNDO_MS = 60000;

// -- feedback chips ---------------------------------------------------------------------
// Undo is the server's for a minute after the click (data-undo: the seconds left, as the page was
// made), so a reload or a visit elsewhere keeps it; each Undo button goes when its time is up.
function arm(undo) {
  if (undo.dataset.armed) return;
  undo.dataset.armed = '1';
  setTimeout(() => undo.remove(), Number(undo.dataset.undo || UNDO_MS / 1000) * 1000);
}
setInterval(() => document.querySelectorAll('.chip button[data-undo]').forEach(arm), 1000);
document.querySelectorAll('.chip button[data-undo]').forEach(arm);
function given(chip, outcome, version, seconds) {
  const label = chip.querySelector('.label').textContent;
  const done = document.createElement('span');
  done.className = 'done ' + (outcome === 'success' ? 'ok' : 'bad');
  done.textContent = (outcome === 'success' ? '✓ worked' : '✗ failed') + (version ? ` → v${version}` : '');
  const undo = document.createElement('button');
  undo.type = 'button'; undo.textContent = 'Undo'; undo.setAttribute('aria-label', `Undo: ${label}`);
  undo.dataset.undo = String(seconds || UNDO_MS / 1000);
  chip.replaceChildren(Object.assign(document.createElement('span'), {className: 'label', textContent: label}), done, undo);
  arm(undo);
  undo.focus();
}
document.addEventListener('click', (ev) => {
  const undo = ev.target.closest('.chip[data-run] button[data-undo]');
  if (!undo) return;
  const chip = undo.closest('.chip'), label = chip.querySelector('.label').textContent;
  undo.disabled = true;
  act(() => api('DELETE', `/api/runs/${seg(chip.dataset.run)}/feedback/${seg(chip.dataset.slug)}`), () => {
    open(chip, label); chip.querySelector('button').focus();
    flash(`Undone: ${label} has no feedback from this run`);
  }, chip).finally(() => { undo.disabled = false; });
});
function open(chip, label) {
  const make = (outcome, text) => {
    const b = document.createElement('button'); b.type = 'button'; b.dataset.outcome = outcome; b.textContent = text; return b;
  };
  chip.replaceChildren(Object.assign(document.createElement('span'), {className: 'label', textContent: label}),
                       make('success', 'Worked'), make('failure', 'Failed'));
}
document.addEventListener('click', (ev) => {
  const b = ev.target.closest('.chip[data-run] button[data-outcome]');
  if (!b) return;
  const chip = b.closest('.chip');
  if (chip.dataset.busy) return;  // a double click is one click
  chip.dataset.busy = '1';
  chip.querySelectorAll('button').forEach((x) => { x.disabled = true; });
  act(() => api('POST', `/api/runs/${seg(chip.dataset.run)}/feedback`, {slug: chip.dataset.slug, outcome: b.dataset.outcome}),
      (r) => given(chip, r.feedback[chip.dataset.slug], r.version, r.undo_seconds), chip)
    .finally(() => { delete chip.dataset.busy; chip.querySelectorAll('button').forEach((x) => { x.disabled = false; }); });
});

// -- Show me (a run that halted at a step) ---------------------------------------------------------
document.addEventListener('click', (ev) => {
  const b = ev.target.closest('[data-repair]');
  if (!b) return;
  b.disabled = true;
  act(() => api('POST', `/api/runs/${seg(b.dataset.repair)}/repair`), () => { location.href = '/teach'; }, b)
    .finally(() => { b.disabled = false; });
});

// -- the Runs list, live: redrawn while the page is open (a new run, a status that changed) -----------
// Not while the person is at it (focus inside, a click on its way): Undo comes back from the server.
const recent = $('recent-runs');
if (recent) setInterval(async () => {
  if (recent.querySelector('.chip[data-busy]') || recent.contains(document.activeElement)) return;
  try { swap(recent, await fragment('/runs?part=list')); } catch (err) { /* the daemon is stopping */ }
}, 3000);

// -- the Run form ---------------------------------------------------------------------------------
const runButton = $('run'), field = $('slug');
if (!runButton || !field) return;
const form = paramForm('run'), pick = skillPick(field);
pick.choose(new URLSearchParams(location.search).get('skill'));  // "Run" on a skill's page comes here
pick.onPick((slug) => form.load(slug));

async function newRun(known, slug) {  // a daemon that answers a job id: find the run it became
  for (let i = 0; i < 40; i++) {
    const runs = await api('GET', '/api/runs');
    const found = runs.find((r) => !known.has(r.run_id) && (!r.slug || r.slug === slug));
    if (found) return found.run_id;
    await new Promise((ok) => setTimeout(ok, 250));
  }
  return null;
}
runButton.addEventListener('click', async () => {
  if (runButton.disabled) return;
  unflash();
  const slug = pick.required(runButton);
  if (!slug) return;
  runButton.disabled = true;
  const known = new Set([...document.querySelectorAll('[data-run-row]')].map((tr) => tr.dataset.runRow));
  try {
    const r = await api('POST', '/api/runs', {slug, params: form.values(), start_url: form.startUrl()});
    const id = r.run_id || await newRun(known, slug);
    if (id) { location.href = '/runs/' + seg(id); return; }
    flash('Started: what it asks shows on Approvals', 'info', runButton);
    setTimeout(() => location.reload(), 1500);
  } catch (err) {
    flash(err.message, 'err', runButton);
    if (err.status === 409) {
      const a = $('conflict-link').content.firstElementChild.cloneNode(true);
      const named = (err.data && err.data.run_id) || (String(err.message).match(/\((run-[\w-]+)\)/) || [])[1];
      a.href = named ? '/runs/' + seg(named) : '/runs';
      const box = runButton.closest('[data-errors]').querySelector('.flash');
      box.append(' ', a);
    }
  } finally {
    runButton.disabled = false;
  }
});
})();
