// A secret asked for a run: typed here, handed to that run once.
'use strict';
(() => {
const SID = pageData().sid, form = document.getElementById('give'), input = document.getElementById('secret');
form.addEventListener('submit', (ev) => {
  ev.preventDefault();
  act(() => api('POST', `/api/secrets/${seg(SID)}`, {value: input.value}), () => {
    input.value = ''; input.disabled = true; flash('Given to the run. You can close this page.');
  }, form);
});
})();
