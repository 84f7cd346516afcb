// compare.js - Compare two runs (none of MindInsight, msprof or the TensorBoard plugin has
// it): pick a baseline (a) and a new run (b); op-type time deltas, step-phase deltas, ops
// new in b or removed from a; every list sorted by impact (the size of the change).
import { h, card, fix, int, notice } from '../ui.js';
import { chart } from '../charts.js';
import { table } from '../table.js';
import * as api from '../api.js';

const signed = (v, d) => (v === null || v === undefined ? '-' : `${v > 0 ? '+' : ''}${fix(v, d)}`);

export default async function compare(view, params) {
  const list = (await api.runs()).runs;
  view.append(h('h1', { text: 'Compare two runs' }));
  if (list.length < 1) {
    view.append(notice('No run found under this directory.', 'warn'));
    return;
  }
  const pick = (name, value) => h('select', { 'data-select': name }, ...list.map((r) => h('option', { value: r.id, text: r.id, selected: r.id === value })));
  const a = pick('a', params.a || list[0].id), b = pick('b', params.b || (list[1] || list[0]).id);
  const ra = h('input', { type: 'number', min: 0, placeholder: 'lowest', value: params.rank_a ?? '', 'data-select': 'rank_a', class: 'rank' });
  const rb = h('input', { type: 'number', min: 0, placeholder: 'lowest', value: params.rank_b ?? '', 'data-select': 'rank_b', class: 'rank' });
  const go = h('button', { class: 'button', 'data-action': 'compare', text: 'Compare', onclick: () => {
    const q = new URLSearchParams({ a: a.value, b: b.value });
    if (ra.value !== '') q.set('rank_a', ra.value);
    if (rb.value !== '') q.set('rank_b', rb.value);
    location.hash = `#/compare?${q}`;
  } });
  view.append(h('div', { class: 'page-tools' }, h('label', {}, 'Baseline (a) ', a, ' rank ', ra), h('label', {}, 'New (b) ', b, ' rank ', rb), go));
  if (!params.a || !params.b) {
    view.append(h('p', { class: 'muted', text: 'Pick two runs (or two ranks of one run) and press Compare. Deltas are b − a.' }));
    return;
  }
  const out = h('div', { class: 'compare-body' }, h('p', { class: 'muted', text: 'analysing…' }));
  view.append(out);
  let d;
  for (;;) {
    const q = new URLSearchParams({ a: params.a, b: params.b });
    if (params.rank_a) q.set('rank_a', params.rank_a);
    if (params.rank_b) q.set('rank_b', params.rank_b);
    const res = await fetch(`/api/compare?${q}`);
    d = await res.json();
    if (res.status === 200) break;
    if (res.status !== 202) throw new Error(d.error || `HTTP ${res.status}`);
    out.replaceChildren(h('div', { class: 'progress', 'data-progress': 'analysing', text: `Analysing: ${d.error || (d.progress ? `${d.progress.stage}` : '')}` }));
    await new Promise((r) => setTimeout(r, 500));
  }
  out.replaceChildren();
  const top = d.op_types.filter((t) => t.delta !== 0).slice(0, 15);
  const bars = chart('compare-types', {
    tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: (v) => `${signed(v, 3)} us` },
    grid: { left: 200, right: 40, top: 10, bottom: 30 },
    xAxis: { type: 'value', name: 'us (b − a)' }, yAxis: { type: 'category', inverse: true, data: top.map((t) => `${t.type} (${t.core})`) },
    series: [{ type: 'bar', data: top.map((t) => ({ value: t.delta, itemStyle: { color: t.delta > 0 ? '#ee6666' : '#3ba272' } })) }],
  }, Math.max(180, 40 + top.length * 24));
  out.append(card(`a = ${d.a.run} rank ${d.a.rank}, b = ${d.b.run} rank ${d.b.rank}`, h('p', { class: 'muted', text: 'Red: b takes longer; green: b is faster. Sorted by the size of the change.' }), { wide: true, id: 'sides' }));
  out.append(card('Op types with the largest change (total time)', bars.el, { wide: true, id: 'type-chart' }));
  const deltaCols = (unit, d1) => [
    { key: 'a', label: `a (${unit})`, num: true, fmt: (v) => fix(v, d1) }, { key: 'b', label: `b (${unit})`, num: true, fmt: (v) => fix(v, d1) },
    { key: 'delta', label: `b − a (${unit})`, num: true, fmt: (v) => h('span', { class: v > 0 ? 'worse' : v < 0 ? 'better' : '', text: signed(v, d1) }) },
    { key: 'delta_pct', label: 'change (%)', num: true, fmt: (v) => signed(v, 2) }];
  const impact = (rows) => rows.map((r) => ({ ...r, impact: Math.abs(r.delta ?? 0) }));
  out.append(card('Step phases (average per step)', table({ id: 'compare-phases', rows: impact(d.step_phases), sortKey: 'impact',
    columns: [{ key: 'phase', label: 'phase' }, ...deltaCols('ms', 6)] }), { wide: true, id: 'phases' }));
  out.append(card(`Op types (${int(d.op_types_counts.new)} new, ${int(d.op_types_counts.removed)} removed)`, table({ id: 'compare-types', rows: impact(d.op_types), sortKey: 'impact', search: ['type'],
    columns: [{ key: 'type', label: 'op type' }, { key: 'core', label: 'core' }, { key: 'status', label: '' }, ...deltaCols('us', 3)] }), { wide: true, id: 'types' }));
  const ops = impact(d.ops);
  out.append(card(`New ops (only in b: ${int(d.ops_counts.new)})`, table({ id: 'compare-new', rows: ops.filter((o) => o.status === 'new'), sortKey: 'impact', search: ['name', 'type'],
    columns: [{ key: 'name', label: 'op' }, { key: 'type', label: 'type' }, { key: 'b', label: 'b (us)', num: true, fmt: (v) => fix(v, 3) }] }), { wide: true, id: 'new' }));
  out.append(card(`Removed ops (only in a: ${int(d.ops_counts.removed)})`, table({ id: 'compare-removed', rows: ops.filter((o) => o.status === 'removed'), sortKey: 'impact', search: ['name', 'type'],
    columns: [{ key: 'name', label: 'op' }, { key: 'type', label: 'type' }, { key: 'a', label: 'a (us)', num: true, fmt: (v) => fix(v, 3) }] }), { wide: true, id: 'removed' }));
  out.append(card('Ops in both, by the size of the change', table({ id: 'compare-ops', rows: ops.filter((o) => o.status === 'both'), sortKey: 'impact', search: ['name', 'type'],
    columns: [{ key: 'name', label: 'op' }, { key: 'type', label: 'type' }, ...deltaCols('us', 3)] }), { wide: true, id: 'ops' }));
}
