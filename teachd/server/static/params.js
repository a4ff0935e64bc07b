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
// The skill field of a run form: its datalist offers $slug; the field takes "slug" or "$slug".
// onPick(fn) calls fn with the chosen slug ('' while none is) each time the choice changes.
function skillPick(input) {
  const known = new Set([...(input.list ? input.list.options : [])].map((o) => o.value.slice(1)));
  const slugOf = () => { const v = input.value.trim().replace(/^\$/, ''); return known.has(v) ? v : ''; };
  return {
    known, slugOf,
    choose(slug) { if (known.has(slug)) input.value = slug; },
    onPick(fn) {
      let last = null;
      const fire = () => { const s = slugOf(); if (s !== last) { last = s; fn(s); } };
      input.addEventListener('input', fire);
      input.addEventListener('change', fire);
      fire();
    },
    // Before a run: the chosen slug, or '' and a message next to the field.
    required(near) {
      const s = slugOf();
      if (!s) { flash('Choose a skill: type $ in the field and pick one', 'err', near); input.focus(); }
      return s;
    },
  };
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
