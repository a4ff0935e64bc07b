// Approvals: answer in place (no reload: focus stays, the list redraws), give secrets,
// revoke rules, and an opt-in browser notification when something new waits.
'use strict';
(() => {
const $ = (id) => document.getElementById(id);
const waiting = $('waiting');

let lastAnswered = null;
async function redraw(force) {
  try {
    const html = await fragment('/approvals?part=waiting');
    swap(waiting, html, () => {
      // the answered request is gone: the next one's same answer, else the heading
      const word = lastAnswered ? lastAnswered.word : 'once';
      return waiting.querySelector(`#pending button[data-word="${word}"]`)
        || waiting.querySelector('#pending button[data-answer]') || $('waiting-h');
    }, force);
  } catch (err) { /* the daemon is stopping: keep the page as it is */ }
}
document.addEventListener('teachd:answered', (ev) => { lastAnswered = ev.detail; redraw(false); });
setInterval(() => redraw(false), 1500);

for (const b of document.querySelectorAll('[data-revoke]')) b.addEventListener('click', () => act(() =>
  api('DELETE', `/api/rules/${seg(b.dataset.revoke)}`), () => location.reload(), b));

// Notify me: opt-in, per browser; app.js raises the notification when the count rises.
const notify = $('notify'), state = $('notify-state');
function showNotify() {
  const on = localStorage.getItem('teachd-notify') === 'on' && Notification.permission === 'granted';
  notify.setAttribute('aria-pressed', on ? 'true' : 'false');
  notify.textContent = on ? 'Notifications on' : 'Notify me';
  state.textContent = Notification.permission === 'denied'
    ? 'This browser blocks notifications from teachd.'
    : on ? 'A notification comes when something new waits (while a teachd page is open).' : '';
}
if ('Notification' in window) {
  notify.hidden = false;
  showNotify();
  notify.addEventListener('click', async () => {
    if (localStorage.getItem('teachd-notify') === 'on') localStorage.setItem('teachd-notify', 'off');
    else if ((await Notification.requestPermission()) === 'granted') localStorage.setItem('teachd-notify', 'on');
    showNotify();
  });
}
})();
