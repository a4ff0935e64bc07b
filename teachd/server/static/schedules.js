// Schedules: add one (with the skill's parameters and a start URL), run now, pause, resume, remove.
'use strict';
(() => {
const $ = (id) => document.getElementById(id);
for (const tr of document.querySelectorAll('tr[data-schedule]')) for (const b of tr.querySelectorAll('[data-do]'))
  b.addEventListener('click', () => act(() => b.dataset.do === 'remove'
      ? api('DELETE', `/api/schedules/${seg(tr.dataset.schedule)}`)
      : api('POST', `/api/schedules/${seg(tr.dataset.schedule)}/${seg(b.dataset.do)}`), () => location.reload(), b));
const add = $('add'), field = $('slug');
if (!add || !field) return;
const form = paramForm('schedule'), pick = skillPick(field);
pick.onPick((slug) => form.load(slug));
$('check').addEventListener('change', () => { $('schedule-params').disabled = $('check').checked; });
add.addEventListener('click', () => {
  unflash(add);
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
