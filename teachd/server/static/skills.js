// The Skills page: search ($slug completes), the enable switches, a new skill, import (a file, a folder, a URL).
'use strict';
(() => {
document.getElementById('search').addEventListener('input', (ev) => {
  const q = ev.target.value.trim().toLowerCase();
  for (const tr of document.querySelectorAll('tbody tr[data-slug]')) {
    tr.hidden = !(q.startsWith('$') ? tr.dataset.slug === q.slice(1) : tr.dataset.text.includes(q));
  }
});
for (const box of document.querySelectorAll('[data-enable]')) box.addEventListener('change', () =>
  act(() => api('PUT', `/api/skills/${seg(box.dataset.enable)}/enabled`, {on: box.checked}),
      (s) => flash(`${s.slug} ${s.enabled ? 'enabled' : 'disabled'}`)));
const field = (id) => document.getElementById('new-' + id);
field('template').addEventListener('change', () => {
  const t = (pageData().templates || []).find((x) => x.name === field('template').value);
  if (!t) return;
  if (!field('slug').value) field('slug').value = t.name;
  field('name').value = t.title;
  field('description').value = t.description;
  field('instructions').value = t.instructions;
});
const createButton = document.getElementById('create-skill');
createButton.addEventListener('click', () => act(() => api('POST', '/api/skills', {
  slug: field('slug').value.trim(), name: field('name').value, description: field('description').value,
  instructions: field('instructions').value, always_ask: field('always-ask').checked,
}), (s) => { location.href = '/skills/' + seg(s.slug); }, createButton));
const urlButton = document.getElementById('import-url-go');
urlButton.addEventListener('click', () => act(async () => {
  const url = document.getElementById('import-url').value.trim();
  try { return await api('POST', '/api/skills-from-url', {url}); }
  catch (err) {
    const raw = err.data && err.data.error ? String(err.data.error) : '';
    if (!raw.includes('--update') || !confirm(err.message + '\n\nTake the remote version?')) throw err;
    return await api('POST', '/api/skills-from-url', {url, update: true});
  }
}, (r) => {
  document.getElementById('import-plan').textContent = r.warnings.join('\n');
  flash(`${r.action} ${r.skill ? r.skill.slug : ''} from ${r.plan.resolved}`);
  if (r.action !== 'unchanged') setTimeout(() => location.reload(), 800);
}, urlButton));
// An archive's bytes for JSON: base64, a chunk at a time (no argument list as long as the file).
async function base64Of(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let out = '';
  for (let i = 0; i < bytes.length; i += 0x8000) out += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(out);
}
const importButton = document.getElementById('import');
importButton.addEventListener('click', async () => {
  const folder = [...document.getElementById('import-folder').files];
  if (folder.length) {
    const top = folder[0].webkitRelativePath.split('/')[0], files = {};
    let skillMd = null;
    for (const f of folder) {
      const rel = f.webkitRelativePath.split('/').slice(1).join('/');
      if (rel === 'SKILL.md') skillMd = await f.text(); else files[rel] = await f.text();
    }
    if (skillMd === null) return flash('That folder has no SKILL.md', 'err', importButton);
    return act(() => api('POST', '/api/skills/import', {skill_md: skillMd, folder: top, files}),
               (s) => { location.href = '/skills/' + seg(s.slug); }, importButton);
  }
  const f = document.getElementById('import-file').files[0];
  if (!f) return flash('Choose a file or a folder first', 'err', importButton);
  const archive = /\.(zip|tar|tar\.gz|tgz|tar\.bz2|tar\.xz)$/i.test(f.name);
  const body = archive ? {archive: await base64Of(f), name: f.name}
    : f.name.endsWith('.json') ? {envelope: await f.text()}
    : {skill_md: await f.text(), folder: f.name.replace(/\.md$/i, '')};
  return act(() => importOrUpdate(body), (s) => { location.href = '/skills/' + seg(s.slug); }, importButton);
});
// A skill of that name exists already: asked, the file becomes its next version (as `teachd skills update`).
async function importOrUpdate(body) {
  try { return await api('POST', '/api/skills/import', body); }
  catch (err) {
    const m = /^skill '([a-z0-9][a-z0-9-]*)' already exists/.exec(err.data && err.data.error ? String(err.data.error) : '');
    if (!m || !confirm(`You have a skill ${m[1]} already. Save this file as its next version?`)) throw err;
    return await api('PUT', `/api/skills/${seg(m[1])}`, body);
  }
}
})();
