// The parameter fields of a run form (Runs, Schedules): the chosen skill's declared
// parameters, from GET /api/skills/{slug}; secrets are never among them.
'use strict';
const skillParams = new Map();
async function parametersOf(slug) {
  if (!skillParams.has(slug)) {
    skillParams.set(slug, api('GET', `/api/skills/${seg(slug)}`).then((view) => view.parameters || []));
  }
  return skillParams.get(slug);
}
function paramForm(prefix) {
  const box = document.getElementById(prefix + '-params'), template = document.getElementById(prefix + '-param-field');
  const url = document.getElementById(prefix + '-start-url');
  return {
    async load(slug) {
      const fields = box.querySelector('.fields');
      fields.replaceChildren();
      box.hidden = true;
      if (!slug) return;
      let params = [];
      try { params = await parametersOf(slug); } catch (err) { flash(err.message, 'err', box); }
      params.forEach((p, i) => {
        const div = template.content.firstElementChild.cloneNode(true), input = div.querySelector('input');
        input.id = `${prefix}-param-${i}`; input.dataset.param = p.name; input.value = p.default ?? '';
        const label = div.querySelector('label'); label.htmlFor = input.id;
        label.querySelector('.name').textContent = p.name;  // the field's name; what it fills, its description
        const desc = div.querySelector('.desc');
        desc.id = `${input.id}-desc`; desc.textContent = p.description ? `— ${p.description}` : '';
        input.setAttribute('aria-describedby', desc.id);
        fields.append(div);
      });
      box.hidden = params.length === 0;
    },
    values() {
      const out = {};
      for (const input of box.querySelectorAll('input[data-param]')) out[input.dataset.param] = input.value;
      return out;
    },
    startUrl() { return url.value.trim() || null; },
  };
}
