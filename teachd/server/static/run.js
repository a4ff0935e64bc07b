// A run's page: live over server-sent events (polling when they fail), Cancel, Run again,
// the question answered right here.
'use strict';
(() => {
const data = pageData(), ID = data.run_id, live = document.getElementById('live');
let ended = Boolean(data.ended), busy = false, again = false, timer = null;

async function refresh() {
  if (busy) { again = true; return; }
  busy = true;
  try {
    const html = await fragment(`/runs/${seg(ID)}?part=live`);
    const inside = live.contains(document.activeElement), wasEnded = ended;
    const asked = (root) => [...root.querySelectorAll('.question')].map((q) => q.getAttribute('aria-labelledby'));
    const before = asked(live).join();
    swap(live, html, () => live.querySelector('.question button, li.now, li.halted, #run-status'));
    // the person was here and what they had focus on went away (an answer, a given secret):
    // their place is the run's status, never the top of the page
    if (inside && !live.contains(document.activeElement)) document.getElementById('run-status')?.focus();
    const root = live.querySelector('[data-ended]');
    ended = Boolean(root && root.dataset.ended === '1');
    // what the last answer or Cancel said is old news once the run ends or asks something new
    if ((ended && !wasEnded) || (asked(live).join() && asked(live).join() !== before)) unflash();
  } catch (err) { /* the daemon is stopping: keep what is shown */ }
  busy = false;
  if (again) { again = false; refresh(); }
}
function poll() {
  if (timer) return;
  timer = setInterval(async () => { await refresh(); if (ended) { clearInterval(timer); timer = null; } }, 1000);
}
function follow() {
  if (ended) return;
  if (!('EventSource' in window)) { poll(); return; }
  const events = new EventSource(`/api/runs/${seg(ID)}/events?key=${encodeURIComponent(csrf)}`);
  events.addEventListener('run', () => refresh());
  events.addEventListener('end', () => { events.close(); refresh(); });
  events.onerror = () => { events.close(); if (!ended) poll(); };
}

live.addEventListener('click', (ev) => {
  const b = ev.target.closest('button');
  if (!b) return;
  if (b.id === 'cancel') {
    b.disabled = true;
    act(() => api('POST', `/api/runs/${seg(ID)}/cancel`), () => { flash('Cancelling: the run stops before its next step.'); refresh(); }, b)
      .finally(() => { if (b.isConnected) b.disabled = false; });
  } else if (b.id === 'again') {
    b.disabled = true;
    act(() => api('POST', `/api/runs/${seg(ID)}/again`), (r) => {
      if (r.run_id) location.href = '/runs/' + seg(r.run_id); else location.href = '/runs';
    }, b).finally(() => { if (b.isConnected) b.disabled = false; });
  }
});
document.addEventListener('teachd:answered', () => refresh());
showPictures(live);
follow();
})();
