// step_trace.js - the Step trace page: one step's phases (iteration interval,
// forward+backward, tail, and each communication op inside the step) drawn along the step,
// the step selector (the average by default), the curves of each phase over the steps, the
// FP-start/BP-end ops and how they were chosen, and compute/communication overlap.
import { h, card, fix, int, notice, kv } from '../ui.js';
import { chart } from '../charts.js';
import { PHASES } from './common.js';
import * as api from '../api.js';
import { table } from '../table.js';

const RULES = {
  fp: {
    marks: 'from the framework\'s FP marks recorded in each step',
    automatic: 'automatically: the first op after the step\'s data fetch (GetNext), else the step\'s first op',
    override: 'from your override (PROFILING_FP_START or fp_point)',
  },
  bp: {
    marks: 'from the framework\'s BP marks recorded in each step',
    automatic: 'automatically: the last op ending before the step\'s last communication op, else the last Gradients op',
    override: 'from your override (PROFILING_BP_END or bp_point)',
  },
};

// In a report, one step's phases come from the curves (every step when <= 2,000).
function fromCurves(d, step) {
  const i = d.curves.x.findIndex((x) => String(x) === String(step));
  if (i < 0) return null;
  const phases = {};
  for (const [k] of [...PHASES, ['total']]) if (d.curves[k]) phases[k] = d.curves[k][i];
  return { ...d, selected: String(step), phases, points: {}, comm: [] };
}

function phaseChart(d) {
  // A Gantt-like bar per phase: a transparent bar up to its start, then its length.
  const rows = [];
  const p = d.phases;
  if (d.inference) {
    rows.push(['Iteration interval', 0, p.iteration_interval], ['Forward', p.iteration_interval, p.fp]);
  } else {
    rows.push(['Iteration interval', 0, p.iteration_interval],
      ['Forward + backward', p.iteration_interval, p.fp_and_bp],
      ['Tail', (p.iteration_interval ?? 0) + (p.fp_and_bp ?? 0), p.tail]);
  }
  for (const c of d.comm || []) rows.push([c.name, c.offset_ms ?? 0, c.duration_ms]);
  const labels = rows.map((r) => r[0]);
  return chart('step-phases', {
    tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' },
      formatter: (ps) => { const r = rows[ps[0].dataIndex]; return `${r[0]}<br>starts at ${fix(r[1], 6)} ms<br>lasts ${fix(r[2], 6)} ms`; } },
    grid: { left: 160, right: 30, top: 20, bottom: 30 },
    xAxis: { type: 'value', name: 'ms from the step start' },
    yAxis: { type: 'category', data: labels, inverse: true },
    series: [
      { type: 'bar', stack: 's', itemStyle: { color: 'transparent' }, data: rows.map((r) => r[1] ?? 0), silent: true },
      { type: 'bar', stack: 's', data: rows.map((r, i) => ({ value: r[2] ?? 0, itemStyle: { color: ['#5470c6', '#91cc75', '#fac858'][i] || '#ee6666' } })),
        label: { show: true, position: 'right', formatter: (q) => `${fix(q.value, 3)} ms` } },
    ],
  }, Math.max(160, 50 + rows.length * 34));
}

export default async function stepTrace(ctx) {
  let d = await ctx.get('step_trace', { step: ctx.params.step });
  if (api.report && ctx.params.step && ctx.params.step !== 'average') d = fromCurves(d, ctx.params.step) || d;
  ctx.rank = d.rank;
  const body = ctx.body;
  body.replaceChildren();
  if (!d.n_steps) {
    body.append(notice('This run recorded no steps: there is no step trace.'));
    return;
  }
  const ids = d.step_ids || (api.report ? d.curves.x.map(String) : null);
  const selector = ids
    ? h('select', { 'data-select': 'step', onchange: (e) => ctx.go('step_trace', { step: e.target.value }) },
      h('option', { value: 'average', text: 'average of all steps', selected: d.selected === 'average' }),
      ...ids.map((s) => h('option', { value: s, text: `step ${s}`, selected: d.selected === s })))
    : h('input', { type: 'number', 'data-select': 'step', placeholder: `${d.first_step}..${d.last_step}`,
      onchange: (e) => ctx.go('step_trace', { step: e.target.value }) });
  body.append(h('div', { class: 'page-tools' }, h('label', {}, 'Step ', selector),
    h('span', { class: 'muted', text: `${int(d.n_steps)} steps, ${d.first_step}..${d.last_step}` })));

  const phases = d.phases || {};
  const sum = kv([
    ['total', h('span', { 'data-value': 'total', text: `${fix(phases.total, 6)} ms` })],
    ...PHASES.filter(([k]) => phases[k] !== undefined).map(([k, label]) => [label, h('span', { 'data-value': k, text: `${fix(phases[k], 6)} ms` })]),
  ]);
  const pc = phaseChart(d);
  body.append(card(d.selected === 'average' ? 'Average step' : `Step ${d.selected}`, h('div', {}, sum, pc.el), { wide: true, id: 'phases' }));

  const pts = d.points_chosen || {};
  const point = (p, which, what) => p ? h('div', { class: 'point', 'data-point': which }, h('b', { text: `${what}: ` }), h('code', { text: p.op || '(from marks)' }), h('div', { class: 'muted', text: `chosen ${RULES[which][p.rule] || p.rule}` })) : null;
  body.append(card('Forward start and backward end', h('div', {}, point(pts.fp, 'fp', 'FP start'), d.inference ? null : point(pts.bp, 'bp', 'BP end')), { id: 'points' }));

  const cv = d.curves;
  const curveChart = chart('step-curves', {
    tooltip: { trigger: 'axis', valueFormatter: (v) => `${fix(v, 6)} ms` },
    legend: { top: 0 },
    grid: { left: 60, right: 20, top: 36, bottom: 60 },
    xAxis: { type: 'category', name: 'step', data: cv.x },
    yAxis: { type: 'value', name: 'ms' },
    dataZoom: [{ type: 'slider' }, { type: 'inside' }],
    series: [...PHASES, ['total', 'Total']].filter(([k]) => cv[k]).map(([k, label]) => ({ name: label, type: 'line', showSymbol: false, data: cv[k] })),
  }, 320);
  curveChart.ready.then((c) => c.on('click', (p) => ctx.go('step_trace', { step: cv.x[p.dataIndex] })));
  body.append(card(`Phases over the steps${cv.downsampled ? ` (${int(cv.points)} steps, downsampled keeping extremes)` : ''}`, curveChart.el, { wide: true, id: 'curves' }));

  if (d.overlap) {
    const o = d.selected !== 'average' && d.overlap.step ? d.overlap.step : d.overlap.average;
    body.append(card(`Compute and communication (${d.selected === 'average' ? 'average per step' : `step ${d.selected}`}, us)`,
      table({ id: 'overlap', columns: [{ key: 'k', label: 'part' }, { key: 'v', label: 'us', num: true, fmt: (v) => fix(v, 3) }],
        rows: Object.entries(o).map(([k, v]) => ({ k, v })) }), { id: 'overlap' }));
  }
  if (d.comm && d.comm.length) {
    body.append(card('Communication ops in the step', table({ id: 'comm', sortKey: 'duration_ms',
      columns: [{ key: 'name', label: 'op' }, { key: 'duration_ms', label: 'duration (ms)', num: true, fmt: (v) => fix(v, 6) },
        { key: 'offset_ms', label: 'starts at (ms)', num: true, fmt: (v) => fix(v, 6) }], rows: d.comm }), { id: 'comm' }));
  }
}
