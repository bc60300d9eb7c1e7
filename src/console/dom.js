// Small DOM helpers. Text always goes in as text nodes (never as HTML), so nothing the broker answers
// (event payloads, names) can run as script in the page.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value') el.value = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** A link inside the console (handled by the router without a page load). */
export function link(href, ...children) {
  return h('a', { href, 'data-link': true }, ...children);
}

/** A table; cells may be nodes or text; numeric columns are right-aligned. */
export function table(headers, rows, attrs = {}) {
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number'));
  return h(
    'table',
    attrs,
    h('thead', {}, h('tr', {}, headers.map((t, i) => h('th', { class: numeric[i] ? 'num' : undefined }, t)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c, i) => h('td', { class: numeric[i] ? 'num' : undefined }, c ?? '-'))))),
  );
}

export function fields(pairs, attrs = {}) {
  return h('dl', { class: 'fields', ...attrs }, pairs.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '-')]));
}

export function card(label, value, testid, alarm = false) {
  return h('div', { class: `card${alarm ? ' alarm' : ''}` }, h('div', { class: 'label' }, label), h('div', { class: 'value', 'data-testid': testid }, value));
}

export function errorBox(err) {
  const status = err?.status;
  const detail = err?.problem?.detail ?? err?.problem?.title ?? err?.message ?? String(err);
  const what =
    status === 401
      ? 'Authentication required: give the console a bearer token (Token, top right).'
      : status === 403
        ? 'Forbidden: the token does not allow this.'
        : status === undefined
          ? 'Error'
          : `Error ${status}`;
  return h('div', { class: 'error', 'data-testid': 'error' }, h('strong', {}, what), ' ', detail);
}

export function fmtNumber(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : n;
}

export function fmtBytes(n) {
  if (typeof n !== 'number') return '-';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${u[i]}`;
}

/** A random UUID also where crypto.randomUUID is missing (pages over plain http on another host). */
export function uuid() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const x = [...b].map((v) => v.toString(16).padStart(2, '0')).join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
