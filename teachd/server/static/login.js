// After the login POST: keep this origin's page key, go to the skills.
'use strict';
(() => {
const given = document.querySelector('meta[name=teachd-key]');
if (given) { localStorage.setItem('teachd-key', given.content); location.replace('/skills'); }
})();
