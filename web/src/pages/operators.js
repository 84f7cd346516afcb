// operators.js - the Operators page: pie/bar switch of the top-20 op types (% and us; the
// top-20 ops by self time when ops nest), the tables of every op and of op types (sortable,
// fuzzy search on name and type), and when ops nest (PyTorch) the ops by self time first,
// with a notice why; clicking a type lists its ops, an op's detail with shapes, dtypes and
// FLOPs, and the model's FLOPs.
import { h, card, fix, int, notice, kv, tabs } from '../ui.js';
import { chart, pieLegend, shortName } from '../charts.js';
import { table } from '../table.js';

// Entries of the top chart (op_statistic's top 20 types, or the ops with the most self time).
const TOP_N = 20;

// Numeric columns: times in us (3 decimals), shares in % (2).
const usCol = (key, label) => ({ key, label, num: true, fmt: (v) => fix(v, 3) });
const pctCol = (key, label) => ({ key, label, num: true, fmt: (v) => fix(v, 2) });
const TIME_COLS = [usCol('total_us', 'Total (us)'), usCol('avg_us', 'Avg (us)'),
  usCol('min_us', 'Min (us)'), usCol('max_us', 'Max (us)')];

// op_self_time_{rank}.csv's columns (torch's key_averages by self time).
const SELF_COLS = [
  { key: 'count', label: 'Calls', num: true, fmt: int },
  usCol('self_us', 'Self (us)'),
  pctCol('self_pct', 'Self (%)'),
  ...TIME_COLS,
];

const STAT_COLS = [
  { key: 'count', label: 'Count', num: true, fmt: int },
  ...TIME_COLS,
  pctCol('ratio_pct', 'Ratio (%)'),
];

// The top-20 chart: items are { name, value (us), ratio (%) }.
function topChart(data, kind) {
  const tip = (p) => `${p.name}<br>${fix(p.value, 3)} us (${fix(p.data.ratio, 2)}%)`;
  if (kind === 'pie') {
    return chart('op-types-pie', {
      tooltip: { trigger: 'item', formatter: tip },
      legend: pieLegend(),
      series: [{ type: 'pie', radius: ['30%', '65%'], center: ['25%', '50%'], data,
        label: { formatter: (p) => `${fix(p.data.ratio, 2)}%` } }],
    }, 340);
  }
  return chart('op-types-bar', {
    tooltip: { trigger: 'item', formatter: tip },
    grid: { left: 220, right: 80, top: 10, bottom: 30 },
    xAxis: { type: 'value', name: 'us' },
    yAxis: { type: 'category', inverse: true, data: data.map((x) => x.name), axisLabel: { formatter: (n) => shortName(n, 30) } },
    series: [{ type: 'bar', data, label: { show: true, position: 'right', formatter: (p) => `${fix(p.data.ratio, 2)}%` } }],
  }, Math.max(200, 40 + data.length * 22));
}

function opDetail(op) {
  if (!op) return h('div', { class: 'muted', text: 'Click an op to see its shapes, dtypes and FLOPs.' });
  const f = op.flops;
  return h('div', { 'data-detail': op.name },
    h('h3', { text: op.name }),
    kv([['type', op.type], ['core', op.core], ['count', int(op.count)], ['total', `${fix(op.total_us, 3)} us`], ['average', `${fix(op.avg_us, 3)} us`],
      ['FLOPs (cube)', f ? `${fix(f.mflops_cube, 6)} M, ${fix(f.gflops_cube, 3)} GFLOPS` : 'not recorded'],
      ['FLOPs (vector)', f ? `${fix(f.mflops_vector, 6)} M, ${fix(f.gflops_vector, 3)} GFLOPS` : 'not recorded']]),
    op.shapes && op.shapes.length ? table({ id: 'op-shapes', columns: [{ key: 'shapes', label: 'input shapes' }, { key: 'dtypes', label: 'input dtypes' }, { key: 'count', label: 'executions', num: true, fmt: int }], rows: op.shapes })
      : h('p', { class: 'muted', text: 'No input shapes were recorded for this op.' }));
}

export default async function operators(ctx) {
  const d = await ctx.get('operators', { type: ctx.params.type });
  ctx.rank = d.rank;
  const body = ctx.body;
  body.replaceChildren();
  if (!d.types.length) {
    body.append(notice('This run recorded no ops.'));
    return;
  }
  // Top-20 chart with a pie / bar switch. When ops nest, total times count one piece of
  // work in each caller (their shares add up past 100 %): the chart shows self times then.
  const nests = Array.isArray(d.self_times) && d.self_times.length > 0;
  const top = nests
    ? [...d.self_times].sort((a, b) => b.self_us - a.self_us).slice(0, TOP_N)
      .map((s) => ({ name: s.name, value: s.self_us, ratio: s.self_pct }))
    : (d.top20 || []).map((t) => ({ name: `${t.op_type} (${t.core_type})`, value: t.total_time_us, ratio: t.ratio_percent }));
  const chartBox = h('div');
  let kind = 'pie';
  const draw = () => chartBox.replaceChildren(topChart(top, kind).el);
  const switcher = h('div', { class: 'switch' },
    ...['pie', 'bar'].map((k) => h('button', { 'data-switch': k, class: k === kind ? 'active' : '', text: k, onclick: (e) => {
      kind = k; for (const b of e.target.parentNode.children) b.classList.toggle('active', b.dataset.switch === k); draw();
    } })));
  draw();
  body.append(card(nests ? `Ops: top ${TOP_N} by self time` : `Op types: top ${TOP_N} by total time`,
    h('div', {}, switcher, chartBox), { wide: true, id: 'top20' }));

  const detail = h('div', { class: 'op-detail' }, opDetail(null));
  const opsTable = (rows) => table({
    id: 'ops', rows, sortKey: 'total_us', search: ['name', 'type'],
    columns: [{ key: 'name', label: 'Op name' }, { key: 'type', label: 'Type' }, { key: 'core', label: 'Core' }, ...STAT_COLS],
    onRow: (op) => detail.replaceChildren(opDetail(op)),
  });
  const typesTable = () => table({
    id: 'types', rows: d.types, sortKey: 'total_us', search: ['type'],
    columns: [{ key: 'type', label: 'Op type' }, { key: 'core', label: 'Core' }, ...STAT_COLS],
    onRow: (t) => ctx.go('operators', { type: t.type }),
  });
  const selfTable = () => table({
    id: 'self', rows: d.self_times, sortKey: 'self_us', search: ['name'],
    columns: [{ key: 'name', label: 'Op' }, ...SELF_COLS],
  });
  const filtered = d.type_filter !== null;
  body.append(card(filtered ? `Ops of type ${d.type_filter}` : 'Statistics', h('div', {},
    filtered ? h('a', { href: `#/run/${encodeURIComponent(ctx.run.id)}/operators?rank=${d.rank}`, 'data-link': 'all-types', text: '← all op types' }) : null,
    d.ops_truncated ? notice(`${int(d.ops_total)} ops; the ${int(d.ops.length)} with the most time are listed.`) : null,
    !filtered && nests ? notice('Ops nest in this run (PyTorch: an autograd node holds the ops it runs): '
      + 'total times include the ops inside, so one piece of work counts in each caller. '
      + '"By self time" leaves the ops inside out (torch\'s key_averages).') : null,
    filtered ? opsTable(d.ops) : tabs([
      ...(nests ? [{ id: 'self', label: 'By self time', render: (el) => el.append(selfTable()) }] : []),
      { id: 'all', label: 'All ops', render: (el) => el.append(opsTable(d.ops)) },
      { id: 'types', label: 'By type', render: (el) => el.append(typesTable()) },
    ], ctx.params.tab)), { wide: true, id: 'op-tables' }));
  body.append(card('Op detail', detail, { wide: true, id: 'op-detail' }));

  const fs = d.flops_summary;
  body.append(card('FLOPs of the model', fs ? kv([
    ['ops with FLOPs', int(fs.n_ops)], ['total FLOPs', int(fs.total_flops)], ['matrix (cube)', int(fs.matrix_flops)], ['vector', int(fs.vector_flops)],
    ['compute time', `${fix(fs.compute_time_us, 3)} us`], ['achieved', fs.achieved_flops_per_s === null ? '-' : `${fix(fs.achieved_flops_per_s / 1e9, 3)} GFLOPS`],
    ['fraction of peak', fs.achieved_fraction === null ? 'no peak given (nnprof analyse --peak-tflops)' : `${fix(fs.achieved_fraction * 100, 2)}%`]])
    : notice('No op of this run recorded FLOPs.'), { id: 'flops' }));
}
