// Schedules: add one (with the skill's parameters and a start URL), run now, pause, resume, remove.
'use strict';
(() => {
const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const RUN_NOW_WAIT = 60;  // seconds the row waits to see the run a Run now started, before it says where to look

// Run now: the schedule fires on whichever daemon leads, so the run's id is learnt from the runs
// list (the first new run of this schedule's origin), and the row links to it as soon as it exists.
async function runNow(tr, b) {
  const sid = tr.dataset.schedule, origin = `schedule ${sid}`;
  const ours = async () => (await api('GET', '/api/runs')).filter((r) => r.origin === origin).map((r) => r.run_id);
  const before = new Set(await ours());
  await api('POST', `/api/schedules/${seg(sid)}/run`);
  if (tr.dataset.kind === 'check') {
    flash('Checking now: its outcome shows here when it is done', 'info', b);
    const was = tr.dataset.lastAt;
    for (let waited = 0; waited < RUN_NOW_WAIT; waited += 1) {
      await sleep(1000);
      const now = (await api('GET', '/api/schedules')).find((s) => String(s.id) === sid);
      if (now && now.last_at !== was && now.last_at) { location.reload(); return; }
    }
    return;
  }
  flash('Asked to run now: waiting for it to start…', 'info', b);
  for (let waited = 0; waited < RUN_NOW_WAIT; waited += 1) {  // a look a second: the runs list is a read of each run
    await sleep(1000);
    const started = (await ours()).find((id) => !before.has(id));
    if (started) {
      const f = b.closest('[data-errors]').querySelector('.flash'), a = document.createElement('a');
      a.href = `/runs/${seg(started)}`;
      a.textContent = `Follow ${started}`;
      f.textContent = 'Started: ';
      f.append(a);
      return;
    }
  }
  flash('Asked to run now; it has not started yet: it shows on Runs once it does', 'info', b);
}

for (const tr of document.querySelectorAll('tr[data-schedule]')) for (const b of tr.querySelectorAll('[data-do]'))
  b.addEventListener('click', () => {
    const sid = tr.dataset.schedule, what = b.dataset.do;
    if (what === 'run') return act(() => runNow(tr, b), null, b);
    if (what === 'remove') {
      if (!confirm(`Remove schedule ${sid} (${tr.dataset.slug})? Its past runs stay.`)) return undefined;
      return act(() => api('DELETE', `/api/schedules/${seg(sid)}`), () => location.reload(), b);
    }
    return act(() => api('POST', `/api/schedules/${seg(sid)}/${seg(what)}`), () => location.reload(), b);
  });
const add = $('add'), field = $('slug');
if (!add || !field) return;
const form = paramForm('schedule'), pick = skillPick(field);
pick.onPick((slug) => form.load(slug));
$('check').addEventListener('change', () => { $('schedule-params').disabled = $('check').checked; });
add.addEventListener('click', () => {
  unflash();
  const slug = pick.required(add);
  if (!slug) return;
  const check = $('check').checked;
  const body = {slug, cron: $('cron').value.trim() || null, every: $('every').value.trim() || null, check};
  if (!check) {
    body.params = form.values();
    const start = form.startUrl();
    if (start) body.start_url = start;
  }
  act(() => api('POST', '/api/schedules', body), () => location.reload(), add);
});
})();
