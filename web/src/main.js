// main.js - the UI shell: the run list (like MindInsight's training list), the page
// navigation of one run, the rank selector, and the progress bar while a run is analysed.
// Routes live in the URL hash (#/run/<id>/<page>?rank=R&...), so links and the back button
// work, also in the file:// report.
import { h, notice } from './ui.js';
import * as api from './api.js';
import { resetCharts } from './charts.js';
import overview from './pages/overview.js';
import stepTrace from './pages/step_trace.js';
import operators from './pages/operators.js';
import dataPrep from './pages/data_prep.js';
import timeline from './pages/timeline.js';
import dynamicShape from './pages/dynamic_shape.js';
import resources from './pages/resources.js';
import cluster from './pages/cluster.js';
import compare from './pages/compare.js';

export const PAGES = [
  { id: 'overview', label: 'Overview', mod: overview },
  { id: 'step_trace', label: 'Step trace', mod: stepTrace },
  { id: 'operators', label: 'Operators', mod: operators },
  { id: 'data_prep', label: 'Data preparation', mod: dataPrep },
  { id: 'timeline', label: 'Timeline', mod: timeline, server: true },
  { id: 'dynamic_shape', label: 'Dynamic shape', mod: dynamicShape, server: true },
  { id: 'resources', label: 'Resources', mod: resources },
  { id: 'cluster', label: 'Cluster', mod: cluster, server: true },
];

const app = document.getElementById('app');
let runList = null;

export function link(run, page, params = {}) {
  const q = new URLSearchParams(params).toString();
  return `#/run/${encodeURIComponent(run)}/${page}${q ? `?${q}` : ''}`;
}

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, q] = raw.split('?');
  const params = Object.fromEntries(new URLSearchParams(q || ''));
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { parts, params };
}

function progressBar(status) {
  const p = status.progress || { done: 0, total: 0 };
  const pct = p.total ? Math.round((100 * p.done) / p.total) : 0;
  return h('div', { class: 'progress', 'data-progress': status.state },
    h('div', { class: 'progress-label', text: `${status.state === 'loading' ? 'Loading results' : 'Analysing this run'}${p.stage ? `: ${p.stage}` : ''} (${pct}%)` }),
    h('div', { class: 'progress-track' }, h('div', { class: 'progress-fill', style: { width: `${pct}%` } })));
}

function header(active) {
  const title = h('a', { href: '#/', class: 'brand', text: 'nnprof' });
  const mode = api.report ? h('span', { class: 'badge', text: `report, ${api.report.generated}` }) : null;
  return h('header', { class: 'top' }, title, mode,
    h('nav', {}, h('a', { href: '#/', class: active === 'runs' ? 'active' : '', text: 'Runs' }),
      api.report ? null : h('a', { href: '#/compare', class: active === 'compare' ? 'active' : '', text: 'Compare runs' })));
}

async function renderRuns() {
  const list = await api.runs();
  runList = list.runs;
  const rows = list.runs.map((r) => h('tr', { 'data-run': r.id },
    h('td', {}, h('a', { href: link(r.id, 'overview'), text: r.id })),
    h('td', { text: r.kind }),
    h('td', { text: r.cluster ? `cluster (${r.inputs ?? r.ranks.length} ranks)` : 'single device' }),
    h('td', { text: r.state }),
    h('td', {}, h('a', { href: link(r.id, 'overview'), text: 'performance profiling' }),
      r.cluster ? [' · ', h('a', { href: link(r.id, 'cluster'), text: 'cluster' })] : null)));
  return h('main', { class: 'runs' },
    h('h1', { text: 'Runs' }),
    h('p', { class: 'muted', text: `Profiling data found under ${list.root}. A run is analysed the first time it is opened.` }),
    list.runs.length ? h('table', { class: 'grid', 'data-table': 'runs' },
      h('thead', {}, h('tr', {}, ...['Run', 'Data', 'Kind', 'State', ''].map((t) => h('th', { text: t })))),
      h('tbody', {}, ...rows)) : notice('No profiling data found under this directory.', 'warn'));
}

async function renderRun(runId, pageId, params) {
  if (!runList) runList = (await api.runs()).runs;
  const run = runList.find((r) => r.id === runId);
  if (!run) return h('main', {}, notice(`No run '${runId}' here.`, 'error'));
  const page = PAGES.find((p) => p.id === pageId) || PAGES[0];
  const body = h('div', { class: 'page-body' });
  const nav = h('nav', { class: 'side' },
    h('div', { class: 'run-name', title: run.path, text: run.id === '.' ? run.path.split('/').pop() || run.path : run.id }),
    ...PAGES.filter((p) => !(api.report && p.server)).map((p) => h('a', {
      href: link(run.id, p.id, params.rank !== undefined ? { rank: params.rank } : {}),
      class: p.id === page.id ? 'active' : '', 'data-page': p.id, text: p.label,
    })));
  const main = h('main', { class: 'run', 'data-page': page.id }, nav,
    h('div', { class: 'content' }, h('h1', { text: page.label }), body));
  const ctx = {
    run, params, body,
    rank: params.rank !== undefined ? Number(params.rank) : undefined,
    get: (p, extra = {}) => api.get(p, { run: run.id, rank: ctx.rank, ...extra }, (st) => body.replaceChildren(progressBar(st))),
    go: (p, extra = {}) => { location.hash = link(run.id, p, { ...(ctx.rank !== undefined ? { rank: ctx.rank } : {}), ...extra }); },
  };
  if (api.report && ctx.rank === undefined) ctx.rank = run.ranks[0];
  queueMicrotask(async () => {
    try {
      await page.mod(ctx);
    } catch (e) {
      body.replaceChildren(notice(String(e.message || e), 'error'));
    }
    app.dataset.ready = page.id;
  });
  return main;
}

async function route() {
  const { parts, params } = parseHash();
  resetCharts();
  delete app.dataset.ready;
  let view;
  try {
    if (parts[0] === 'run' && parts[1]) {
      app.replaceChildren(header('run'));
      view = await renderRun(parts[1], parts[2] || 'overview', params);
    } else if (parts[0] === 'compare' && !api.report) {
      app.replaceChildren(header('compare'));
      view = h('main', { class: 'compare', 'data-page': 'compare' });
      queueMicrotask(async () => {
        try { await compare(view, params); } catch (e) { view.append(notice(String(e.message || e), 'error')); }
        app.dataset.ready = 'compare';
      });
    } else {
      app.replaceChildren(header('runs'));
      view = await renderRuns();
      queueMicrotask(() => { app.dataset.ready = 'runs'; });
    }
  } catch (e) {
    view = notice(String(e.message || e), 'error');
  }
  app.append(view);
}

window.addEventListener('hashchange', route);
route();
