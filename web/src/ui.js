// ui.js - small DOM helpers shared by the pages: element builder, number formats,
// cards, tabs, notices. No framework: each page builds its DOM from the API's JSON.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// Fixed decimals, as the CSV outputs print them (3 for us, 6 for ms, 2 for %).
export function fix(v, digits) {
  if (v === null || v === undefined || Number.isNaN(v)) return '-';
  return Number(v).toFixed(digits);
}

export function int(v) {
  if (v === null || v === undefined) return '-';
  return Number(v).toLocaleString('en-US');
}

export function bytes(v) {
  if (v === null || v === undefined) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let x = Number(v), u = 0;
  while (Math.abs(x) >= 1024 && u < units.length - 1) { x /= 1024; u++; }
  return `${x.toFixed(u ? 2 : 0)} ${units[u]}`;
}

export function card(title, body, opts = {}) {
  return h('section', { class: `card ${opts.wide ? 'wide' : ''}`, 'data-card': opts.id },
    h('header', {}, h('h2', { text: title }), opts.link ? h('a', { href: opts.link, class: 'more', text: opts.linkText || 'details' }) : null),
    body);
}

export function notice(text, kind = 'info') {
  return h('div', { class: `notice ${kind}`, 'data-notice': kind, text });
}

// Tabs: [{id, label, render(el)}]; renders the first (or `active`) tab.
export function tabs(items, active) {
  const bar = h('div', { class: 'tabs', role: 'tablist' });
  const body = h('div', { class: 'tab-body' });
  const show = (id) => {
    for (const b of bar.children) b.classList.toggle('active', b.dataset.tab === id);
    body.replaceChildren();
    items.find((t) => t.id === id).render(body);
  };
  for (const t of items) {
    bar.append(h('button', { class: 'tab', 'data-tab': t.id, role: 'tab', onclick: () => show(t.id), text: t.label }));
  }
  const wrap = h('div', { class: 'tabbed' }, bar, body);
  show(items.some((t) => t.id === active) ? active : items[0].id); // an unknown tab: the first
  return wrap;
}

export function kv(pairs) {
  return h('dl', { class: 'kv' }, ...pairs.flatMap(([k, v]) => [h('dt', { text: k }), h('dd', {}, v)]));
}
