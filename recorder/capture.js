// teachd's capture script: injected into every page and frame before any
// page script runs. It reports what the person does, with a full description
// of each target, through the binding window.__teachdEmit. Values of
// sensitive fields never leave the page.
(() => {
  if (window.__teachdInstalled) return;
  window.__teachdInstalled = true;
  // Without the recorder's binding (a replay), only the describer is installed.
  const recording = typeof window.__teachdEmit === "function";
  // Every report goes to the recorder; what comes back (a toast, the bar's
  // state) is for the recording bar.
  const emit = (data, then) => {
    try {
      const answer = window.__teachdEmit(data);
      if (answer && answer.then) answer.then((r) => {
        if (r && window.__teachdBarAnswer) window.__teachdBarAnswer(r);
        if (r && then) then(r);
      }, () => {});
    } catch (e) { /* page closing */ }
  };
  const SENSITIVE_AC = new Set(["current-password", "new-password", "one-time-code", "cc-number", "cc-csc", "cc-exp"]);
  const INTERACTIVE = "button, a[href], input, select, textarea, summary, option, [role=button], [role=link], " +
    "[role=checkbox], [role=radio], [role=switch], [role=tab], [role=menuitem], [role=option], " +
    "[role=combobox], [role=textbox], [contenteditable=''], [contenteditable=true]";
  const TEST_ID_ATTRS = ["data-testid", "data-test-id", "data-test", "data-qa"];
  const norm = (s) => (s || "").replace(/\s+/g, " ").trim();

  const isSensitive = (el) => {
    if (!el || el.nodeType !== 1) return false;
    if (el.dataset && el.dataset.teachdSecret === "1") return true;
    const type = (el.getAttribute("type") || "").toLowerCase();
    const ac = (el.getAttribute("autocomplete") || "").toLowerCase().split(/\s+/);
    return type === "password" || ac.some((t) => SENSITIVE_AC.has(t));
  };

  // A rich-text editor's editing host: the outermost element of its
  // contenteditable region (a click on a <p> inside is a click on the field).
  const editableHost = (el) => {
    if (!el || el.nodeType !== 1 || !el.isContentEditable) return null;
    let host = el;
    while (host.parentElement && host.parentElement.isContentEditable) host = host.parentElement;
    return host;
  };
  const isEditableRoot = (el) => !!el && el.nodeType === 1 && editableHost(el) === el;

  // Icons: what a person clicks on is the control the icon sits in.
  const ICON_RE = /icon|^(fa[a-z]?|bi|mdi|bx[sl]?|ti|ri|la[srb]?|ion|lucide|feather|octicon|glyphicon|codicon)(-|$)|^material-(icons|symbols)/i;
  const classTokens = (el) => (el.getAttribute("class") || "").split(/\s+/).filter(Boolean);
  const iconClasses = (el) => classTokens(el).filter((c) => ICON_RE.test(c) && !/[0-9a-f]{8,}|\d{3,}/i.test(c));
  const SVG_NS = "http://www.w3.org/2000/svg";
  const iconish = (el) => {
    if (!el || el.nodeType !== 1) return false;
    if (el.namespaceURI === SVG_NS || el.tagName === "IMG") return true;
    if (el.tagName !== "I" && el.tagName !== "SPAN") return false;
    return iconClasses(el).length > 0 || !norm(el.textContent) || !!el.querySelector("svg, img");
  };
  const CONTROL_ROLES = ["button", "link", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "switch",
    "checkbox", "radio", "option", "combobox", "treeitem"];
  // Marks of a clickable element, as CSS for closest(); cursor and an
  // onclick property are checked in script (CSS cannot see them).
  const CONTROL_MARKS = "button, a, summary, " + CONTROL_ROLES.map((r) => `[role=${r}]`).join(", ") +
    ", [tabindex]:not([tabindex^='-']), [onclick], [aria-haspopup], [aria-expanded]";
  const ICON_LEVELS = 4;
  const iconControl = (el) => {
    let node = el;
    while (node.parentElement && node.parentElement.namespaceURI === SVG_NS) node = node.parentElement;
    const clicky = (n) => n.matches(CONTROL_MARKS) || typeof n.onclick === "function";
    const setsPointer = (n) => getComputedStyle(n).cursor === "pointer" &&
      !(n.parentElement && getComputedStyle(n.parentElement).cursor === "pointer");
    if (clicky(node) || setsPointer(node)) return null; // the icon is the control itself
    for (let level = 0, up = node.parentElement; up && level < ICON_LEVELS && up !== document.body;
         level++, up = up.parentElement) {
      if (clicky(up) || setsPointer(up)) return up;
    }
    return null;
  };

  const retarget = (el) => {
    if (!el || el.nodeType !== 1) return el;
    const host = editableHost(el);
    if (host) return host;
    const interactive = el.closest(INTERACTIVE);
    const hit = interactive || el;
    if (hit.tagName === "LABEL" && hit.control) return hit.control;
    const label = el.closest("label");
    if (label && label.control && hit === el) return label.control; // a styled checkbox's icon
    if (!interactive && iconish(el)) return iconControl(el) || el;
    return hit;
  };

  const implicitRole = (el) => {
    const explicit = el.getAttribute("role");
    if (explicit) return explicit.split(/\s+/)[0];
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute("type") || "text").toLowerCase();
    if (tag === "a" && el.hasAttribute("href")) return "link";
    if (tag === "button" || tag === "summary") return "button";
    if (tag === "select") return el.multiple ? "listbox" : "combobox";
    if (tag === "textarea") return "textbox";
    if (tag === "option") return "option";
    if (tag === "img") return "img";
    if (/^h[1-6]$/.test(tag)) return "heading";
    if (tag === "input") {
      if (["button", "submit", "reset", "image"].includes(type)) return "button";
      if (type === "checkbox") return "checkbox";
      if (type === "radio") return "radio";
      if (type === "search") return "searchbox";
      if (type === "number") return "spinbutton";
      if (type === "range") return "slider";
      if (type === "hidden") return null;
      return "textbox";
    }
    return null;
  };

  // Hidden to a person (and so to an accessible name): display:none,
  // visibility:hidden, aria-hidden, or inert machinery like <script>.
  const SKIP_TAGS = new Set(["SCRIPT", "STYLE", "TEMPLATE", "NOSCRIPT", "HEAD"]);
  const hidden = (el) => {
    if (SKIP_TAGS.has(el.tagName) || el.getAttribute("aria-hidden") === "true" || el.hidden) return true;
    const s = getComputedStyle(el);
    return s.display === "none" || s.visibility === "hidden";
  };
  const BLOCKISH = /^(block|flex|grid|list-item|table|table-row|table-cell|flow-root)/;

  // Text as the DOM holds it (not innerText): a link styled
  // text-transform:uppercase keeps the name its author wrote.
  const textFrom = (node, depth = 0) => {
    if (depth > 30) return "";
    if (node.nodeType === 3) return node.data;
    if (node.nodeType !== 1 || hidden(node)) return "";
    if (node.isContentEditable) return " "; // what a person typed is never a name
    const aria = node.getAttribute("aria-label");
    if (depth > 0 && aria && norm(aria)) return " " + aria + " ";
    const tag = node.tagName;
    if (tag === "IMG" || (tag === "INPUT" && node.type === "image")) return " " + (node.getAttribute("alt") || "") + " ";
    if (depth > 0 && ["INPUT", "TEXTAREA", "SELECT"].includes(tag)) return " "; // never a field's value
    let out = "";
    for (const child of node.childNodes) out += textFrom(child, depth + 1);
    const pad = BLOCKISH.test(getComputedStyle(node).display) || tag === "BR" ? " " : "";
    return pad + out + pad;
  };
  const domText = (el) => norm(textFrom(el)).slice(0, 200) || null;

  const labelText = (el) => {
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      const t = by.split(/\s+/).map((id) => document.getElementById(id)).filter(Boolean)
        .map((n) => norm(textFrom(n))).join(" ");
      if (norm(t)) return norm(t);
    }
    if (el.labels && el.labels.length) {
      const t = Array.from(el.labels).map((l) => norm(textFrom(l))).join(" ");
      if (norm(t)) return norm(t);
    }
    const wrap = el.closest("label");
    return wrap ? norm(textFrom(wrap)) || null : null;
  };

  // A rich-text editor's label as a person reads it, never from its content:
  // aria-labelledby, aria-label, a wrapping <label>, the label just before it
  // in its form group, its placeholder, its title. ``source`` says which, so
  // the compiler knows whether getByLabel would find it as well.
  const placeholderOf = (el) => {
    for (const a of ["aria-placeholder", "data-placeholder", "placeholder"]) {
      const v = norm(el.getAttribute(a));
      if (v) return v.slice(0, 200);
    }
    const inner = el.querySelector("[data-placeholder]"); // ProseMirror, Tiptap, CKEditor 5: the empty paragraph
    if (inner && norm(inner.getAttribute("data-placeholder"))) return norm(inner.getAttribute("data-placeholder")).slice(0, 200);
    const described = (el.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean)
      .map((id) => document.getElementById(id)).filter(Boolean); // Draft.js
    const beside = el.parentElement ? Array.from(el.parentElement.children).filter((n) => n !== el) : []; // Lexical
    for (const n of described.concat(beside)) {
      if (n.isContentEditable || !/placeholder/i.test(n.getAttribute("class") || "")) continue;
      const t = norm(n.textContent);
      if (t) return t.slice(0, 200);
    }
    return null;
  };
  const labelUsable = (n, el) => {
    if (n.tagName !== "LABEL" || !n.control || n.control === el) return true;
    const c = n.control; // a label for the hidden input the editor writes to is the editor's label
    return c.type === "hidden" || !(c.getBoundingClientRect().width || c.getBoundingClientRect().height);
  };
  const nearbyLabel = (el) => {
    for (let up = el.parentElement, level = 0; up && up !== document.body && level < 4; up = up.parentElement, level++) {
      const found = Array.from(up.querySelectorAll("label, legend, h1, h2, h3, h4, h5, h6")).filter((n) =>
        !n.contains(el) && !el.contains(n) && !n.isContentEditable && !hidden(n) && labelUsable(n, el) &&
        (n.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING));
      const last = found[found.length - 1];
      const t = last && norm(textFrom(last));
      if (t) return t.slice(0, 200);
      if (up.tagName === "FORM" || up.tagName === "FIELDSET") break;
    }
    return null;
  };
  // The form input an editor writes its content to (a hidden input or a
  // hidden textarea near it: Draftail, Trix, CKEditor's source textarea):
  // the label written for that input names the editor to a person.
  const syncedInputLabel = (el) => {
    for (let up = el.parentElement, level = 0; up && up !== document.body && level < 6; up = up.parentElement, level++) {
      const inputs = Array.from(up.querySelectorAll("input[type=hidden][id], textarea[id]"))
        .filter((n) => n.type === "hidden" || !visible(n));
      if (inputs.length > 1) return null; // several: nothing says which one is this editor's
      if (inputs.length === 1) {
        const label = document.querySelector(`label[for="${CSS.escape(inputs[0].id)}"]`);
        const t = label && norm(textFrom(label));
        return t ? t.slice(0, 200) : null;
      }
      if (up.tagName === "FORM") return null;
    }
    return null;
  };
  const fieldLabel = (el) => {
    if (el.getAttribute("aria-labelledby")) { const t = labelText(el); if (t) return { text: t.slice(0, 200), source: "labelledby" }; }
    const aria = norm(el.getAttribute("aria-label"));
    if (aria) return { text: aria.slice(0, 200), source: "aria-label" };
    const wrap = el.closest("label");
    const wrapped = wrap && norm(textFrom(wrap));
    if (wrapped) return { text: wrapped.slice(0, 200), source: "wrapping-label" };
    const near = nearbyLabel(el);
    if (near) return { text: near, source: "nearby" };
    const synced = syncedInputLabel(el);
    if (synced) return { text: synced, source: "input-label" };
    const ph = placeholderOf(el);
    if (ph) return { text: ph, source: "placeholder" };
    const title = norm(el.getAttribute("title"));
    return title ? { text: title.slice(0, 200), source: "title" } : { text: null, source: null };
  };
  // An element's own class tokens (ql-editor, ProseMirror, selector-add),
  // without state classes that come and go as the person acts.
  const STATE_RE = /focus|blur|blank|empty|active|hover|selected|placeholder|dirty|touched|pristine|valid|disabled|readonly|composing|open|show|collaps|expand|hidden|current|checked|pressed|loading/i;
  const editorClasses = (el) => Array.from(new Set(classTokens(el).filter((c) =>
    !STATE_RE.test(c) && !/[0-9a-f]{8,}|\d{3,}/i.test(c) && /^[A-Za-z_-][A-Za-z0-9_-]*$/.test(c)))).sort().slice(0, 6);
  // A selector that finds the editor by what it shows when empty, else by its class.
  const editorSelector = (el) => {
    for (const a of ["aria-placeholder", "data-placeholder"]) {
      const v = el.getAttribute(a);
      if (v && norm(v)) return `[contenteditable][${a}=${JSON.stringify(v)}]`;
    }
    const inner = el.querySelector("[data-placeholder]");
    if (inner && norm(inner.getAttribute("data-placeholder")))
      return `[contenteditable]:has([data-placeholder=${JSON.stringify(inner.getAttribute("data-placeholder"))}])`;
    if (el.hasAttribute("data-lexical-editor")) return "[contenteditable][data-lexical-editor]";
    const known = ["ql-editor", "ProseMirror", "public-DraftEditor-content", "ck-editor__editable", "mce-content-body",
      "note-editable", "trix-content", "cm-content"].find((c) => el.classList.contains(c));
    return known ? `[contenteditable].${known}` : null;
  };

  // An icon's identity: the sprite symbol it draws, its title, its icon classes
  // (and a Material icon's ligature). Looked for in the control, a few levels deep.
  const ICON_SEL = "svg, img, i, [class*=icon i], [class*=fa-], [class*=bi-], [class*=material-], [data-icon]";
  const XLINK = "http://www.w3.org/1999/xlink";
  const symbolOf = (use) => {
    const h = use.getAttribute("href") || use.getAttributeNS(XLINK, "href") || "";
    const i = h.indexOf("#");
    return i >= 0 && h.length > i + 1 ? h.slice(i) : null;
  };
  const iconNode = (el) => {
    if (el.namespaceURI === SVG_NS) { let n = el; while (n.parentElement && n.parentElement.namespaceURI === SVG_NS) n = n.parentElement; return n; }
    if (el.matches(ICON_SEL)) return el;
    // breadth first, a few levels and a bounded number of nodes: a replay asks this of every candidate
    let level = [el], seen = 0;
    for (let depth = 0; depth <= ICON_LEVELS && level.length; depth++) {
      const next = [];
      for (const n of level) {
        for (const c of n.children) {
          if (++seen > 200) return null;
          if (c.matches(ICON_SEL)) return c;
          next.push(c);
        }
      }
      level = next;
    }
    return null;
  };
  // An inline SVG icon's own drawing (Material, Lucide, Heroicons draw each
  // icon as paths, with the same classes on every icon): a short hash of its
  // shapes, so the pen is not the bin.
  const SHAPE_ATTRS = ["d", "points", "cx", "cy", "r", "rx", "ry", "x", "y", "width", "height", "x1", "y1", "x2", "y2"];
  const drawing = (svg) => {
    const shapes = Array.from(svg.querySelectorAll("path, polygon, polyline, circle, ellipse, rect, line")).slice(0, 12)
      .map((n) => n.tagName + ":" + SHAPE_ATTRS.map((a) => n.getAttribute(a) || "").join(",")).join("|");
    if (!shapes) return null;
    let h = 0x811c9dc5;
    for (let i = 0; i < shapes.length; i += 1) { h ^= shapes.charCodeAt(i); h = Math.imul(h, 0x01000193) >>> 0; }
    return "svg:" + h.toString(16).padStart(8, "0");
  };
  const iconOf = (el) => {
    if (!el || el.nodeType !== 1) return null;
    const node = iconNode(el);
    if (!node) return null;
    const tag = node.tagName.toLowerCase();
    const svg = tag === "svg" ? node : node.querySelector("svg");
    const use = svg && svg.querySelector("use");
    const icon = {};
    const sym = (use && symbolOf(use)) || (svg && drawing(svg));
    if (sym) icon.symbol = sym.slice(0, 120);
    const titleEl = svg && svg.querySelector("title");
    const img = tag === "img" ? node : node.querySelector("img");
    const title = norm((titleEl && titleEl.textContent) || (svg && svg.getAttribute("aria-label")) ||
      (img && (img.getAttribute("alt") || img.getAttribute("title"))) || node.getAttribute("title"));
    if (title) icon.title = title.slice(0, 120);
    const classes = new Set();
    for (const n of [node, ...Array.from(node.querySelectorAll("svg, i, span, img")).slice(0, 6)]) {
      for (const c of iconClasses(n)) classes.add(c);
      if (/material-(icons|symbols)/.test(n.getAttribute("class") || "")) {
        const t = norm(n.textContent);
        if (t && t.length <= 40) classes.add(t);
      }
    }
    if (classes.size) icon.classes = Array.from(classes).sort().slice(0, 8);
    return Object.keys(icon).length ? icon : null;
  };
  // The icon as a selector the replay can look for (then up to its control):
  // the sprite symbol, else the most specific icon class.
  const GENERIC_ICON = /^(icon|icons|fa[a-z]?|bi|mdi|bx[sl]?|ti|ri|la[srb]?|ion|lucide|feather|octicon|glyphicon|codicon|material-(icons|symbols)[a-z-]*)$/i;
  const iconSelector = (icon) => {
    if (icon.symbol && !icon.symbol.startsWith("svg:")) return `use[*|href$=${JSON.stringify(icon.symbol)}]`; // href or xlink:href
    const specific = (icon.classes || []).filter((c) => /^[A-Za-z_][A-Za-z0-9_-]*-[A-Za-z0-9_-]+$/.test(c) && !GENERIC_ICON.test(c));
    specific.sort((a, b) => b.length - a.length || (a < b ? -1 : a > b ? 1 : 0));
    return specific.length ? "." + specific[0] : null;
  };
  // How many controls that selector leads to: each icon's nearest ancestor
  // that looks clickable or has the control's tag (what the replay's xpath does).
  const iconControls = (css, tag) => {
    let nodes;
    try { nodes = Array.from(document.querySelectorAll(css)); } catch (e) { return null; }
    const marks = CONTROL_MARKS + ", " + tag;
    const out = new Set(nodes.map((n) => n.parentElement && n.parentElement.closest(marks)).filter(Boolean));
    return out.size;
  };

  // The accessible name, close to what Playwright's getByRole(name) computes:
  // aria-labelledby, aria-label, labels, then content for roles named by it.
  const NAME_FROM_CONTENT = new Set(["button", "link", "option", "menuitem", "tab", "heading", "cell",
    "checkbox", "radio", "switch", "treeitem", "columnheader", "rowheader", "tooltip", "menuitemcheckbox",
    "menuitemradio"]);
  const accessibleName = (el) => {
    const by = el.getAttribute("aria-labelledby");
    if (by) { const t = labelText(el); if (t) return t.slice(0, 200); }
    const aria = el.getAttribute("aria-label");
    if (aria && norm(aria)) return norm(aria).slice(0, 200);
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute("type") || "").toLowerCase();
    if (tag === "input" && ["button", "submit", "reset"].includes(type))
      return norm(el.getAttribute("value")) || { submit: "Submit", reset: "Reset" }[type] || null;
    if (tag === "input" && type === "image") return norm(el.getAttribute("alt")) || null;
    if (["input", "select", "textarea"].includes(tag)) {
      const labelled = labelText(el);
      if (labelled) return labelled.slice(0, 200);
      return norm(el.getAttribute("title") || el.getAttribute("placeholder")) || null;
    }
    if (tag === "img") return norm(el.getAttribute("alt") || el.getAttribute("title")) || null;
    const role = implicitRole(el);
    if (NAME_FROM_CONTENT.has(role) || tag === "summary" || tag === "label") {
      const text = domText(el);
      if (text) return text;
    }
    return norm(el.getAttribute("title")) || null;
  };

  const looksGenerated = (v) => !v || /^:r[0-9a-z]+:$|[0-9a-f]{8,}|\d{3,}/i.test(v);

  const cssPath = (el) => {
    if (el.id && !looksGenerated(el.id) && document.querySelectorAll("#" + CSS.escape(el.id)).length === 1)
      return "#" + CSS.escape(el.id);
    const parts = [];
    let node = el;
    while (node && node.nodeType === 1 && node !== document.documentElement) {
      if (node !== el && node.id && !looksGenerated(node.id) &&
          document.querySelectorAll("#" + CSS.escape(node.id)).length === 1) {
        parts.unshift("#" + CSS.escape(node.id));
        break;
      }
      const tag = node.tagName.toLowerCase();
      const parent = node.parentElement;
      if (!parent) { parts.unshift(tag); break; }
      const same = Array.from(parent.children).filter((c) => c.tagName === node.tagName);
      parts.unshift(same.length > 1 ? `${tag}:nth-of-type(${same.indexOf(node) + 1})` : tag);
      node = parent;
    }
    return parts.join(" > ");
  };

  const xpath = (el) => {
    const parts = [];
    let node = el;
    while (node && node.nodeType === 1) {
      const tag = node.tagName.toLowerCase();
      const parent = node.parentNode;
      const same = parent ? Array.from(parent.children).filter((c) => c.tagName === node.tagName) : [node];
      parts.unshift(same.length > 1 ? `${tag}[${same.indexOf(node) + 1}]` : tag);
      node = parent && parent.nodeType === 1 ? parent : null;
    }
    return "/" + parts.join("/");
  };

  const rect = (el) => {
    const r = el.getBoundingClientRect();
    return { x: Math.round(r.x * 10) / 10, y: Math.round(r.y * 10) / 10,
             w: Math.round(r.width * 10) / 10, h: Math.round(r.height * 10) / 10 };
  };

  const countMatches = (el, d) => {
    const q = (sel) => { try { return document.querySelectorAll(sel).length; } catch (e) { return null; } };
    const m = {};
    if (d.test_id) m.test_id = TEST_ID_ATTRS.reduce((n, a) => n + q(`[${a}="${CSS.escape(d.test_id)}"]`), 0);
    const all = Array.from(document.querySelectorAll(INTERACTIVE + ", label, h1, h2, h3, h4, h5, h6, img")).slice(0, 3000);
    if (d.role && d.name) m.role = all.filter((n) => implicitRole(n) === d.role && accessibleName(n) === d.name).length;
    const byLabel = (n) => ["INPUT", "SELECT", "TEXTAREA"].includes(n.tagName) ? labelText(n) :
      isEditableRoot(n) && ["labelledby", "aria-label"].includes(fieldLabel(n).source) ? fieldLabel(n).text : null;
    if (d.label && (!d.editable || ["labelledby", "aria-label"].includes(d.label_source)))
      m.label = all.filter((n) => byLabel(n) === d.label).length;
    if (d.editor_css) m.editor = q(d.editor_css);
    if (d.icon_css) { const n = iconControls(d.icon_css, d.tag); if (n !== null) m.icon = n; }
    if (d.attrs.placeholder) m.placeholder = q(`[placeholder="${CSS.escape(d.attrs.placeholder)}"]`);
    if (d.text) m.text = all.filter((n) => !["INPUT", "SELECT", "TEXTAREA"].includes(n.tagName) && domText(n) === d.text).length;
    if (d.id) m.id = q("#" + CSS.escape(d.id));
    if (d.attrs.name) m.attr = q(`${d.tag}[name="${CSS.escape(d.attrs.name)}"]`);
    if (d.attrs.value !== undefined && d.container && d.container.css)
      m.value = q(`${d.container.css} > ${d.tag}[value="${CSS.escape(d.attrs.value)}"], ${d.container.css} > optgroup > ${d.tag}[value="${CSS.escape(d.attrs.value)}"]`);
    if (d.attrs.href) m.href = q(`a[href="${CSS.escape(d.attrs.href)}"]`);
    m.css = q(d.css);
    try {
      m.xpath = document.evaluate(`count(${d.xpath})`, document, null, XPathResult.NUMBER_TYPE, null).numberValue;
    } catch (e) { /* leave it out */ }
    return m;
  };

  const labelledAncestor = (el) => {
    let node = el.parentElement;
    while (node && node !== document.body) {
      const tag = node.tagName.toLowerCase();
      let name = node.getAttribute("aria-label");
      if (!name && tag === "fieldset") { const lg = node.querySelector("legend"); name = lg && norm(textFrom(lg)); }
      if (!name && ["section", "form", "dialog", "article"].includes(tag) || node.getAttribute("role") === "group") {
        const h = node.querySelector("h1, h2, h3, h4, h5, h6, legend");
        name = name || (h && norm(textFrom(h)));
      }
      if (name) return { name: norm(name), bbox: rect(node) };
      node = node.parentElement;
    }
    return null;
  };

  // The container an element belongs to, as evidence: which list an option
  // is in, which form, dialog or landmark. Unnamed wrappers do not count.
  const CONTAINER_ROLES = new Set(["listbox", "menu", "menubar", "tablist", "radiogroup", "tree", "grid",
    "dialog", "alertdialog", "navigation", "search", "region", "complementary", "banner", "contentinfo",
    "main", "form", "group", "toolbar", "table"]);
  const containerRole = (node) => {
    const explicit = node.getAttribute("role");
    if (explicit) return explicit.split(/\s+/)[0];
    const tag = node.tagName.toLowerCase();
    const named = node.hasAttribute("aria-label") || node.hasAttribute("aria-labelledby");
    return { select: node.multiple || node.size > 1 ? "listbox" : "combobox", datalist: "listbox",
             dialog: "dialog", form: "form", fieldset: "group", nav: "navigation", aside: "complementary",
             main: "main", table: "table", section: named ? "region" : null,
             header: node.closest("main, article, section, aside, nav") ? null : "banner",
             footer: node.closest("main, article, section, aside, nav") ? null : "contentinfo" }[tag] || null;
  };
  const containerName = (node) => {
    const own = accessibleName(node);
    if (own && node.tagName !== "TABLE") return own;
    if (node.tagName === "FIELDSET") { const lg = node.querySelector(":scope > legend"); if (lg) return domText(lg); }
    return null;
  };
  const containers = (el, max = 4) => {
    const out = [];
    for (let node = el.parentElement; node && node !== document.documentElement && out.length < max;
         node = node.parentElement) {
      const role = containerRole(node);
      if (!role || (!CONTAINER_ROLES.has(role) && role !== "combobox")) continue;
      const c = { role, tag: node.tagName.toLowerCase() };
      const name = containerName(node);
      if (name) c.name = name.slice(0, 200);
      if (node.id) c.id = node.id;
      c.css = cssPath(node);
      out.push(c);
    }
    return out;
  };
  const container = (el) => containers(el, 1)[0] || null;

  // The record a repeated control belongs to: the row or card whose parent
  // holds another of its kind with the same control in it (a rename icon,
  // a "Delete" in every card). Where the control itself is the same in every
  // record, the record tells them apart — by its own name (``itemName``).
  // Found by the DOM's shape, so a card with no ARIA role counts; null when
  // the control does not repeat, or when another record has the same name.
  const ITEM_DEPTH = 8;
  const ITEM_BOUNDS = new Set(["dialog", "alertdialog", "navigation", "main", "banner", "contentinfo",
    "complementary", "search", "menu", "menubar", "listbox", "tablist", "tree", "radiogroup"]);
  const SKIP_TEXT = "button, [role=button], input, select, textarea, script, style, svg, [contenteditable]";
  const KIN_MAX = 200;  // records compared (a longer list is judged on its first ones)
  const signature = (el) => [el.tagName, implicitRole(el), norm(accessibleName(el)), el.getAttribute("type") || ""]
    .join("\u0001");
  const shown = (node) => (node.checkVisibility ? node.checkVisibility({ visibilityProperty: true }) : !hidden(node));
  const firstText = (node) => {
    const walk = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
    for (let t = walk.nextNode(); t; t = walk.nextNode()) {
      const text = norm(t.data);
      if (text && t.parentElement && !t.parentElement.closest(SKIP_TEXT) && shown(t.parentElement)) return text;
    }
    return null;
  };
  // A record's own name: its heading, its label or title, its link's text,
  // else its first text. A number alone (a row's position, an id) names no record.
  const itemName = (node, el) => {
    const own = (sel) => Array.from(node.querySelectorAll(sel)).find((n) => !n.contains(el) && shown(n) && domText(n));
    const heading = own("h1, h2, h3, h4, h5, h6, [role=heading]");
    const link = heading ? null : own("a[href]");
    const name = heading ? domText(heading)
      : norm(node.getAttribute("aria-label") || node.getAttribute("title") || "") || (link ? domText(link) : firstText(node));
    return name && !/^[\d\s.,:;#/()+-]*$/.test(name) ? name.slice(0, 80) : null;
  };
  const itemOf = (el) => {
    const mine = signature(el);
    const likeMine = (s) => Array.from(s.getElementsByTagName(el.tagName)).slice(0, 50).some((o) => signature(o) === mine);
    let node = el.parentElement;
    for (let depth = 0; node && node.parentElement && node !== document.body && depth < ITEM_DEPTH;
         depth += 1, node = node.parentElement) {
      if (ITEM_BOUNDS.has(containerRole(node))) return null; // records do not reach past a landmark or dialog
      const kin = Array.from(node.parentElement.children).filter((s) => s !== node && s.tagName === node.tagName)
        .slice(0, KIN_MAX).filter(likeMine);
      if (!kin.length) continue;
      const name = itemName(node, el);
      if (!name) continue;  // a cell of the row: the row may have the name
      // a name another record shares tells nothing apart: no record, as before (a tie halts)
      if (kin.some((s) => { const other = itemName(s, el); return other && norm(other).toLowerCase() === norm(name).toLowerCase(); })) {
        return null;
      }
      return { tag: node.tagName.toLowerCase(), name };
    }
    return null;
  };

  const visible = (el) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return (r.width > 0 || r.height > 0) && s.visibility !== "hidden" && s.display !== "none";
  };

  // What a replay compares with the demonstration: cheap, no page-wide counts.
  // An editor's content is never evidence: its label is what it is known by.
  // ``want``: the record the demonstrated control was on — asked only then
  // (a look for any other step pays nothing for it). A control that no
  // longer repeats (one card left, a widget redesigned) is then told by its
  // nearest ancestor with a name of its own — never by any ancestor that
  // happens to hold that name.
  const nearestNamed = (el) => {
    let node = el.parentElement;
    for (let depth = 0; node && node.parentElement && node !== document.body && depth < ITEM_DEPTH;
         depth += 1, node = node.parentElement) {
      if (ITEM_BOUNDS.has(containerRole(node))) return null;
      const name = itemName(node, el);
      if (name) return { tag: node.tagName.toLowerCase(), name, alone: true };
    }
    return null;
  };
  const evidence = (el, want = null) => {
    const tag = el.tagName.toLowerCase();
    const field = ["input", "select", "textarea"].includes(tag);
    const editable = isEditableRoot(el);
    const attrs = {};
    for (const a of ["type", "href", "name"]) { const v = el.getAttribute(a); if (v !== null) attrs[a] = v; }
    const ev = { tag, role: implicitRole(el), name: accessibleName(el), text: field || editable ? null : domText(el),
                 label: field ? labelText(el) : editable ? fieldLabel(el).text : null, attrs, containers: containers(el),
                 visible: visible(el), editable, icon: iconOf(el), item: want ? itemOf(el) || nearestNamed(el) : null,
                 classes: editorClasses(el),
                 ident: el.__teachdId || (el.__teachdId = (window.__teachdSeq = (window.__teachdSeq || 0) + 1)) };
    if ((field || editable) && !ev.label && !ev.name) ev.heading = headingBefore(el);
    return ev;
  };
  window.__teachdEvidence = evidence;

  // ``opts.icon``: the person clicked on an icon, so the control's icon is
  // part of what it is (a control with no name keeps its icon anyway).
  const describe = (el, opts = {}) => {
    const attrs = {};
    for (const a of ["name", "type", "placeholder", "aria-label", "autocomplete", "href", "title", "alt",
      "aria-placeholder", "data-placeholder", "contenteditable"]) {
      const v = el.getAttribute(a);
      if (v !== null) attrs[a] = v;
    }
    if (el.tagName === "OPTION" && el.hasAttribute("value")) attrs.value = el.getAttribute("value");
    const tag = el.tagName.toLowerCase();
    const field = ["input", "select", "textarea"].includes(tag);
    const editable = isEditableRoot(el);
    const testAttr = TEST_ID_ATTRS.find((a) => el.hasAttribute(a));
    const d = {
      tag, role: implicitRole(el), name: accessibleName(el),
      text: field || editable ? null : domText(el),
      id: el.id || null, test_id: testAttr ? el.getAttribute(testAttr) : null, attrs,
      label: field ? labelText(el) : null,
      css: cssPath(el), xpath: xpath(el), bbox: rect(el),
      frame_url: window === window.top ? null : location.href,
      sensitive: isSensitive(el),
      container: container(el),
      item: itemOf(el),
      classes: editorClasses(el),
    };
    if (editable) {
      const fl = fieldLabel(el);
      Object.assign(d, { editable: true, label: fl.text, label_source: fl.source, editor_css: editorSelector(el) });
      const ph = placeholderOf(el);
      if (ph && !attrs["aria-placeholder"] && !attrs["data-placeholder"]) attrs["data-placeholder"] = ph;
    }
    const icon = iconOf(el);
    if (icon && (opts.icon || !d.name)) {
      d.icon = icon;
      const css = iconNode(el) !== el ? iconSelector(icon) : null;
      if (css) d.icon_css = css;
    }
    const sameRole = Array.from(document.querySelectorAll(tag)).filter((n) => accessibleName(n) === d.name);
    d.nth = Math.max(0, sameRole.indexOf(el));
    d.matches = countMatches(el, d);
    const anc = labelledAncestor(el);
    if (anc) d.ancestor = anc;
    if ((field || editable) && !d.label && !d.name) {
      const heading = headingBefore(el);
      if (heading) d.heading = heading;
    }
    return d;
  };

  // A field with no label of its own is known by the heading above it
  // ("Description" over a bare markdown editor): the last heading before it
  // in the document, as a person reading down the page meets it.
  const headingBefore = (el) => {
    let last = null;
    for (const h of document.querySelectorAll("h1, h2, h3, h4, h5, h6, [role=heading]")) {
      if (h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) last = h;
      else break;
    }
    const text = last ? domText(last) : "";
    return text ? text.slice(0, 120) : null;
  };

  // Read-only: a replay asks them what a person pointed at, and the page's own script must not answer.
  Object.defineProperty(window, "__teachdDescribe", { value: describe, writable: false, configurable: false });
  Object.defineProperty(window, "__teachdRetarget", { value: retarget, writable: false, configurable: false });
  if (!recording) {
    // A replay waits for the page to change, not for a clock: count mutations.
    window.__teachdMutations = 0;
    new MutationObserver(() => { window.__teachdMutations += 1; })
      .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    return;
  }

  const BAR = installBar();
  const isBar = (t) => BAR.owns(t);
  const sensitiveBoxes = () => Array.from(document.querySelectorAll("input, textarea, [contenteditable]"))
    .filter(isSensitive).map(rect).filter((r) => r.w > 0 && r.h > 0).concat(BAR.boxes());

  // Typing is sent once the person pauses, leaves the field, or acts elsewhere,
  // so a half-typed value (say, the start of a token) is not written.
  const pending = new Map();
  // A rich-text editor is described as it was before the first keystroke
  // (its placeholder gone, its size changed, by then): once per element.
  const before = new WeakMap();
  const remember = (el) => {
    const host = editableHost(el);
    if (host && !before.has(host)) before.set(host, describe(host));
    return host;
  };
  const describeTarget = (el, opts) => {
    const host = remember(el);
    return host ? { ...before.get(host), sensitive: isSensitive(host) } : describe(el, opts);
  };
  const flush = (el) => {
    const entry = pending.get(el);
    if (!entry) return;
    clearTimeout(entry.timer);
    pending.delete(el);
    const d = describeTarget(el);
    if (d.sensitive || isSensitive(el)) emit({ kind: "input", target: { ...d, sensitive: true }, masked: true });
    else emit({ kind: "input", target: d, value: el.isContentEditable ? el.innerText : el.value },
              (r) => { if (r.masked_field) markSecret(el); }); // the recorder took it for the armed field
  };
  const flushAll = () => Array.from(pending.keys()).forEach(flush);
  window.__teachdFlushAll = flushAll;

  document.addEventListener("pointerdown", (e) => {
    if (isBar(e.target)) return; // the bar's own buttons are never a step
    flushAll();
    const el = retarget(e.target);
    if (!el || el.nodeType !== 1) return;
    const shift = { x: e.screenX - e.clientX, y: e.screenY - e.clientY };
    emit({ kind: "click", x: e.clientX, y: e.clientY, screen_x: e.screenX, screen_y: e.screenY,
           button: ["left", "middle", "right"][e.button] || "left", url: location.href,
           target: describeTarget(el, { icon: iconish(e.target) }), sensitive_boxes: sensitiveBoxes(),
           screen_shift: shift, viewport: viewport() });
    pageTextSoon();
  }, true);

  // Before the editor changes: the first keystroke's beforeinput comes first.
  document.addEventListener("beforeinput", (e) => { if (!isBar(e.target)) remember(e.target); }, true);

  document.addEventListener("input", (e) => {
    const el = e.target;
    if (!el || el.nodeType !== 1 || isBar(el)) return;
    remember(el);
    pageTextSoon();
    const tag = el.tagName;
    const type = (el.getAttribute("type") || "").toLowerCase();
    if (tag === "SELECT" || type === "checkbox" || type === "radio") return; // sent on change
    const entry = pending.get(el) || {};
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => flush(el), 400);
    pending.set(el, entry);
  }, true);

  document.addEventListener("change", (e) => {
    const el = e.target;
    if (!el || el.nodeType !== 1 || isBar(el)) return;
    for (const other of Array.from(pending.keys())) if (other !== el) flush(other);
    const type = (el.getAttribute("type") || "").toLowerCase();
    if (el.tagName === "SELECT") {
      const opt = el.selectedOptions && el.selectedOptions[0];
      emit({ kind: "input", target: describe(el), value: el.value, option_text: opt ? norm(opt.text) : null });
    } else if (type === "checkbox" || type === "radio") {
      emit({ kind: "input", target: describe(el), value: el.value, checked: el.checked });
    } else {
      flush(el); // only if typing is still pending: blur may have sent it already
    }
  }, true);

  document.addEventListener("focusout", (e) => { flush(e.target); BAR.blurred(e.target); }, true);
  document.addEventListener("focusin", (e) => {
    if (isBar(e.target)) return;
    remember(e.target);
    if (BAR.armedFor(e.target)) {
      const el = e.target;
      markSecret(el);
      // the recorder may have given the mark to a field typed into before this page heard of it
      emit({ kind: "marked", armed: true }, (r) => { if (r.unmark) { delete el.dataset.teachdSecret; BAR.focused(el); } });
    }
    BAR.focused(e.target);
  }, true);
  function markSecret(el) { el.dataset.teachdSecret = "1"; pending.delete(el); BAR.focused(el); }
  window.__teachdMarkSecret = markSecret;

  // Keys that act rather than type; characters reach the recording only as
  // the field's final value (and never from a sensitive field).
  const KEYS = new Set(["Enter", "Escape", "Tab", "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Delete",
    "Backspace", "Home", "End", "PageUp", "PageDown", " "]);
  const EDIT_KEYS = new Set(["Backspace", "Delete", "ArrowLeft", "ArrowRight", "Home", "End"]);
  const CLIPBOARD = new Set(["c", "v", "x", "C", "V", "X", "Insert"]);
  document.addEventListener("keydown", (e) => {
    if (isBar(e.target)) return;
    if (e.ctrlKey && e.altKey && (e.key === "s" || e.key === "S")) {
      // the recorder's "secret" hotkey: the focused field's value is never recorded
      const el = document.activeElement;
      if (el && el !== document.body) { markSecret(el); emit({ kind: "marked" }); }
      e.preventDefault();
      return;
    }
    const el = e.target && e.target.nodeType === 1 ? e.target : null;
    const shortcut = (e.ctrlKey || e.metaKey) && !e.getModifierState("AltGraph") && e.key.length === 1 &&
      !CLIPBOARD.has(e.key) && !(el && isSensitive(el));
    const typing = el && (["INPUT", "TEXTAREA"].includes(el.tagName) || el.isContentEditable);
    if (!KEYS.has(e.key) && !shortcut) return;
    if (e.key === " " && typing) return; // a space typed is text
    // Editing keys inside a field that holds text are part of typing: the
    // final value (typed again, key by key, on replay) covers them.
    const holds = typing && (el.isContentEditable ? el.textContent : el.value);
    if (holds && (EDIT_KEYS.has(e.key) || shortcut)) return;
    if (el) flush(el);
    const mods = ["Alt", "Control", "Meta", "Shift"].filter((m) => e.getModifierState(m));
    emit({ kind: "key", key: e.key === " " ? "Space" : e.key, modifiers: mods, url: location.href,
           target: el && el !== document.body ? describeTarget(el) : null });
    pageTextSoon();
  }, true);

  // The page as the person last saw it, for the skill's success check: its
  // visible text (never a field's value; a masked editor's content blanked),
  // sent a little after each action and as the page goes away.
  function pageText() {
    let text = document.body ? document.body.innerText || "" : "";
    for (const el of document.querySelectorAll("[contenteditable], [data-teachd-secret]")) {
      if (!el.isContentEditable || !isSensitive(editableHost(el) || el)) continue;
      const inner = el.innerText || "";
      if (inner.trim()) text = text.split(inner).join(" ");
    }
    text = text.split("\n").map((line) => line.replace(/[ \t\u00a0]+/g, " ").trim()).filter(Boolean).join("\n");
    return { url: location.href, title: document.title, text: text.slice(0, 20000) };
  }
  window.__teachdPageText = pageText;
  const textTimers = [];
  function pageTextSoon() {
    if (window !== window.top) return;
    textTimers.splice(0).forEach(clearTimeout);
    for (const ms of [1000, 4000]) textTimers.push(setTimeout(() => emit({ kind: "page_text", ...pageText() }), ms));
  }
  if (window === window.top) window.addEventListener("pagehide", () => emit({ kind: "page_text", ...pageText() }));
  function viewport() { return { w: window.innerWidth, h: window.innerHeight, dpr: window.devicePixelRatio }; }

  // Who moved the page, when the browser can tell (``by: "page"``): the
  // page's own script — a history entry pushed or replaced, a location
  // replaced, a route set by script — never the person typing an address,
  // however long after the last step it comes (a slow client-side redirect).
  // The compiler makes a step of a page event nobody acted for only when it
  // was not the page's doing.
  let lastNav = null;  // the Navigation API's last navigate event: its kind, and whether a person caused it
  if (window.navigation) {
    window.navigation.addEventListener("navigate", (e) => {
      lastNav = { url: e.destination.url, replace: e.navigationType === "replace", user: e.userInitiated };
    });
  }
  const loadedBy = () => {
    const how = window.navigation && window.navigation.activation;
    return how && how.navigationType === "replace" ? "page" : null;
  };
  const routedBy = () => lastNav && lastNav.url === location.href && (lastNav.replace || !lastNav.user) ? "page" : null;
  let lastHref = "";  // the address the last page event told
  const pageEvent = (by = null) => {
    if (window !== window.top) return;
    lastHref = location.href;
    emit({ kind: "page", url: location.href, title: document.title, viewport: viewport(), ...(by ? { by } : {}) });
    pageTextSoon();
  };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", () => pageEvent(loadedBy()), { once: true });
  } else pageEvent(loadedBy());
  for (const fn of ["pushState", "replaceState"]) {  // only a script calls these
    const orig = history[fn];
    history[fn] = function (...args) { const r = orig.apply(this, args); setTimeout(() => pageEvent("page"), 0); return r; };
  }
  window.addEventListener("popstate", () => { const by = routedBy(); setTimeout(() => pageEvent(by), 0); });
  // A hash route (#/items/3) is a page of a single-page app: a browser that
  // fires no popstate for it still fires hashchange (told once: popstate
  // may have told it already).
  window.addEventListener("hashchange", () => {
    const by = routedBy();
    setTimeout(() => { if (location.href !== lastHref) pageEvent(by); }, 0);
  });
  window.addEventListener("beforeunload", flushAll);

  // The recording bar: one per tab (frames get only the lock marker), in a
  // closed shadow root on a host that is aria-hidden and position:fixed, so
  // the page's layout, styles and accessibility tree are as without it.
  function installBar() {
    const top = window === window.top;
    let host = null, root = null, armed = false, collapsed = false, paused = false;
    const q = (sel) => root && root.querySelector(sel);
    const fillable = (el) => el && el.nodeType === 1 && (el.isContentEditable || el.tagName === "TEXTAREA" ||
      (el.tagName === "INPUT" && !["button", "submit", "reset", "checkbox", "radio", "file", "image", "hidden",
        "range", "color"].includes((el.getAttribute("type") || "text").toLowerCase())));
    const CSS_TEXT = `
      .bar { position: fixed; right: 16px; bottom: 16px; z-index: 2147483647; font: 13px/1.35 system-ui, sans-serif;
        background: #1f2430; color: #fff; border-radius: 10px; box-shadow: 0 4px 18px rgba(0,0,0,.35);
        padding: 8px 10px; width: 340px; box-sizing: border-box; user-select: none; }
      .head { display: flex; align-items: center; gap: 6px; cursor: move; }
      .dot { width: 10px; height: 10px; border-radius: 50%; background: #e53935; flex: none; }
      .paused .dot { background: #9e9e9e; }
      .title { flex: 1; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
      .controls { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 7px; }
      button { font: inherit; color: #fff; background: #3a4152; border: 1px solid #5a6275; border-radius: 6px;
        padding: 3px 8px; cursor: pointer; }
      button:hover { background: #4a5268; }
      button.stop { background: #b3261e; border-color: #d04a43; }
      .collapse { padding: 0 7px; }
      .toast { margin-top: 7px; min-height: 1.3em; color: #cfe3ff; }
      .banner { margin-top: 7px; color: #ffd166; display: none; }
      .lock { margin-top: 5px; color: #ffd166; display: none; }
      .collapsed .controls, .collapsed .toast, .collapsed .lock { display: none; }
      .badge { position: fixed; z-index: 2147483647; font: 12px system-ui, sans-serif; background: #ffd166;
        color: #000; border-radius: 4px; padding: 1px 5px; display: none; pointer-events: none; }`;
    const build = () => {
      if (host || !document.documentElement) return;
      host = document.createElement("teachd-recorder");
      host.setAttribute("aria-hidden", "true");
      host.style.cssText = "all: initial; position: fixed; top: 0; left: 0; width: 0; height: 0; z-index: 2147483647;";
      root = host.attachShadow({ mode: "closed" });
      root.innerHTML = `<style>${CSS_TEXT}</style>` + (top ? `<div class="bar"><div class="head">
          <span class="dot"></span><span class="title">Recording</span>
          <button class="collapse" title="Collapse or expand">–</button></div>
        <div class="controls"><button class="pause">Pause</button><button class="mark">Mark next field secret</button>
          <button class="undo">Undo last step</button><button class="stop">Stop</button></div>
        <div class="banner"></div>
        <div class="lock">Masked field: its value is never recorded</div>
        <div class="toast"></div></div>` : "") + `<div class="badge">masked</div>`;
      // Clicking the bar must not take focus from the field being worked on.
      root.addEventListener("mousedown", (e) => e.preventDefault());
      root.addEventListener("click", (e) => { e.stopPropagation(); onButton(e); });
      document.documentElement.appendChild(host);
      if (top) wireDrag();
      emit({ kind: "hello" }); // the bar's state, which outlives this document (paused, armed, …)
    };
    const onButton = (e) => {
      const b = e.target.closest && e.target.closest("button");
      if (!b) return;
      window.__teachdFlushAll(); // typing so far belongs before pause, undo or stop
      if (b.classList.contains("pause")) emit({ kind: paused ? "resume" : "pause" });
      else if (b.classList.contains("undo")) emit({ kind: "undo" });
      else if (b.classList.contains("stop")) emit({ kind: "stop" });
      else if (b.classList.contains("collapse")) { collapsed = !collapsed; show(); sendGeometry(); }
      else if (b.classList.contains("mark")) {
        const el = document.activeElement;
        if (fillable(el)) { window.__teachdMarkSecret(el); emit({ kind: "marked" }); return; }
        armed = true;
        for (let i = 0; i < window.frames.length; i++) window.frames[i].postMessage({ __teachd: "arm" }, "*");
        emit({ kind: "mark" });
      }
    };
    const sendGeometry = () => {
      const bar = q(".bar");
      const r = bar.getBoundingClientRect();
      emit({ kind: "bar", collapsed, position: bar.style.left ? { x: r.left, y: r.top } : null });
    };
    const place = (pos) => {
      const bar = q(".bar");
      if (!bar || !pos) return;
      bar.style.left = Math.max(0, Math.min(pos.x, innerWidth - 60)) + "px";
      bar.style.top = Math.max(0, Math.min(pos.y, innerHeight - 30)) + "px";
      bar.style.right = "auto"; bar.style.bottom = "auto";
    };
    const wireDrag = () => {
      const head = q(".head");
      let start = null;
      head.addEventListener("pointerdown", (e) => {
        if (e.target.closest("button")) return;
        const r = q(".bar").getBoundingClientRect();
        start = { dx: e.clientX - r.left, dy: e.clientY - r.top };
        head.setPointerCapture(e.pointerId);
      });
      head.addEventListener("pointermove", (e) => { if (start) place({ x: e.clientX - start.dx, y: e.clientY - start.dy }); });
      head.addEventListener("pointerup", () => { if (start) { start = null; sendGeometry(); } });
    };
    const show = () => {
      const bar = q(".bar");
      if (!bar) return;
      bar.classList.toggle("collapsed", collapsed);
      bar.classList.toggle("paused", paused);
      q(".pause").textContent = paused ? "Resume" : "Pause";
    };
    const write = (el, text) => {
      el.textContent = "";
      // **bold** as the compiler writes names; built as nodes, never as HTML
      String(text).replace(/\\(.)/g, "$1").split("**").forEach((part, i) => {
        const node = i % 2 ? document.createElement("b") : document.createTextNode(part);
        if (i % 2) node.textContent = part;
        el.appendChild(node);
      });
    };
    const toast = (text) => {
      const el = q(".toast");
      if (!el) { if (!top) window.top.postMessage({ __teachdToast: String(text) }, "*"); return; }
      write(el, text);
    };
    window.__teachdBarAnswer = (r) => {
      if (typeof r.paused === "boolean" && "name" in r) paused = r.paused;
      if (typeof r.armed === "boolean") armed = r.armed;
      if ("name" in r) {
        collapsed = !!r.collapsed;
        const title = q(".title");
        if (title) title.textContent = (paused ? "Paused: " : "Recording ") + "“" + r.name + "”";
        const banner = q(".banner"), stop = q(".stop");
        if (banner) { write(banner, r.banner || ""); banner.style.display = r.banner ? "block" : "none"; }
        if (stop) stop.textContent = r.banner ? "Done" : "Stop"; // a repair ends when the step is shown
        place(r.position);
        if (!r.toast && r.recent && r.recent.length) toast(r.recent[r.recent.length - 1]);
        show();
      }
      if (r.toast) toast(r.toast);
    };
    window.__teachdArm = () => { armed = true; };
    window.addEventListener("message", (e) => {
      if (!e.data || e.source === window) return;
      if (top && typeof e.data.__teachdToast === "string") toast(e.data.__teachdToast.slice(0, 300));
      if (!top && e.data.__teachd === "arm") armed = true;
    });
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", build, { once: true });
    else build();
    return {
      owns: (t) => !!host && t === host,
      boxes: () => { const bar = q(".bar"); return bar ? [rect(bar)] : []; },
      armedFor: (el) => { if (armed && fillable(el)) { armed = false; return true; } return false; },
      focused: (el) => {
        const badge = q(".badge"), lock = q(".lock");
        const masked = isSensitive(el) && fillable(el);
        if (lock) lock.style.display = masked ? "block" : "none";
        if (!badge) return;
        if (!masked) { badge.style.display = "none"; return; }
        const r = el.getBoundingClientRect();
        badge.style.display = "block";
        badge.style.left = Math.max(0, r.right - 70) + "px";
        badge.style.top = Math.max(0, r.top - 18) + "px";
      },
      blurred: () => { const badge = q(".badge"), lock = q(".lock"); if (badge) badge.style.display = "none"; if (lock) lock.style.display = "none"; },
    };
  }
})();
