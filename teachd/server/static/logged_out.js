// Not logged in: forget any page key this origin kept.
'use strict';
(() => {
localStorage.removeItem('teachd-key');
})();
