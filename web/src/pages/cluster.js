// cluster.js - the Cluster page: per-rank step trace (iteration interval, forward+backward,
// tail; sortable; step selector, average by default), each rank linking to its own pages;
// the communication matrix heatmap and the slow-rank / slow-link verdicts once the cluster
// analysis (issue 14) writes them: until then they say so.
import { h, card, fix, int, notice } from '../ui.js';
import { chart } from '../charts.js';
import { table } from '../table.js';

function matrix(m) {
  if (!m.available) return notice(m.reason, 'info');
  const n = m.ranks.length, data = [];
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) data.push([j, i, m.bandwidth_gbps[i][j]]);
  return chart('comm-matrix', {
    tooltip: { formatter: (p) => `rank ${m.ranks[p.data[1]]} → ${m.ranks[p.data[0]]}: ${fix(p.data[2], 2)} GB/s` },
    grid: { left: 60, right: 80, top: 20, bottom: 40 },
    xAxis: { type: 'category', name: 'to', data: m.ranks }, yAxis: { type: 'category', name: 'from', data: m.ranks },
    visualMap: { min: 0, max: Math.max(...data.map((d) => d[2] || 0)), calculable: true, right: 0, top: 'center' },
    series: [{ type: 'heatmap', data }],
  }, 360).el;
}

function verdicts(v) {
  if (!v.available) return notice(v.reason, 'info');
  return h('ul', {}, ...v.verdicts.map((x) => h('li', { text: `${x.rank ?? `${x.src} → ${x.dst}`}: ${x.reason}` })));
}

export default async function cluster(ctx) {
  const d = await ctx.get('cluster', { step: ctx.params.step });
  const body = ctx.body;
  body.replaceChildren();
  const sel = h('select', { 'data-select': 'step', onchange: (e) => ctx.go('cluster', { step: e.target.value }) },
    h('option', { value: 'average', text: 'average of all steps', selected: d.selected === 'average' }),
    ...d.step_ids.map((s) => h('option', { value: s, text: `step ${s}`, selected: d.selected === s })));
  body.append(h('div', { class: 'page-tools' }, h('label', {}, 'Step ', sel), h('span', { class: 'muted', text: `${int(d.n_ranks)} ranks` })));
  const cols = [['iteration_interval', 'Iteration interval (ms)'], ['fp_and_bp', 'Forward + backward (ms)'], ['tail', 'Tail (ms)'], ['fp', 'Forward (ms)'], ['total', 'Total (ms)']]
    .filter(([k]) => d.step_trace.some((r) => k in r));
  const rows = d.step_trace.map((r) => ({ ...r }));
  // The slowest rank of each column stands out: where MindInsight users look first.
  const max = Object.fromEntries(cols.map(([k]) => [k, Math.max(...rows.map((r) => r[k] ?? -Infinity))]));
  body.append(card(`Step trace per rank (${d.selected === 'average' ? 'average' : `step ${d.selected}`})`, table({
    id: 'cluster-ranks', sortKey: 'rank', sortDesc: false,
    columns: [{ key: 'rank', label: 'rank', num: true, fmt: (v) => h('a', { href: `#/run/${encodeURIComponent(ctx.run.id)}/overview?rank=${v}`, text: `rank ${v}` }) },
      ...cols.map(([k, label]) => ({ key: k, label, num: true, fmt: (v) => h('span', { class: v !== null && v === max[k] && rows.length > 1 ? 'slowest' : '', text: fix(v, 6) }) }))],
    rows,
  }), { wide: true, id: 'cluster-steps' }));
  const curves = chart('cluster-bars', {
    tooltip: { trigger: 'axis', valueFormatter: (v) => `${fix(v, 6)} ms` }, legend: { top: 0 },
    grid: { left: 60, right: 20, top: 36, bottom: 30 },
    xAxis: { type: 'category', name: 'rank', data: rows.map((r) => r.rank) }, yAxis: { type: 'value', name: 'ms' },
    series: cols.filter(([k]) => k !== 'total').map(([k, label]) => ({ name: label, type: 'bar', stack: 'p', data: rows.map((r) => r[k]) })),
  }, 280);
  body.append(card('Phases per rank', curves.el, { wide: true, id: 'cluster-chart' }));
  body.append(card('Communication matrix', matrix(d.communication_matrix), { wide: true, id: 'comm-matrix' }));
  body.append(card('Slow ranks', verdicts(d.slow_rank), { id: 'slow-rank' }));
  body.append(card('Slow links', verdicts(d.slow_link), { id: 'slow-link' }));
}
