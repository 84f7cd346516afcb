// data_prep.js - the Data preparation page. Iteration gap: device and host queue sizes per
// step with empty/full counts (a step whose device queue was empty waited for data).
// Pipeline: the op graph with each queue's average usage; clicking a queue (an op or its
// output edge) shows its size over time; the bottleneck op is highlighted with its
// suggestion (MindInsight's rules, docs/OUTPUTS.md "Data pipeline").
import { h, card, fix, int, notice, kv, tabs } from '../ui.js';

// MindSpore's -1 means "no value" (no queue, no CPU sample).
const opt = (v, d) => (v === null || v === undefined || v < 0 ? 'n/a' : fix(v, d));
import { chart } from '../charts.js';
import { table } from '../table.js';

function gapTab(el, d) {
  const g = d.iteration_gap;
  if (!g.available) {
    el.append(notice('No device-queue sample per step was recorded (nnp_device_queue_sample), so there is no iteration-gap view.'));
    return;
  }
  const c = chart('queue-per-step', {
    tooltip: { trigger: 'axis' }, legend: { top: 0 },
    grid: { left: 50, right: 20, top: 36, bottom: 60 },
    xAxis: { type: 'category', name: 'step', data: g.per_step.x },
    yAxis: { type: 'value', name: 'batches in queue', minInterval: 1 },
    dataZoom: [{ type: 'slider' }, { type: 'inside' }],
    series: [
      { name: 'device queue', type: 'line', step: 'middle', data: g.per_step.device_queue_size },
      { name: 'host queue', type: 'line', step: 'middle', data: g.per_step.host_queue_size },
    ],
  }, 300);
  const counts = table({ id: 'queue-counts', columns: [{ key: 'q', label: 'queue' }, { key: 'steps', label: 'steps', num: true, fmt: int },
    { key: 'empty', label: 'empty', num: true, fmt: int }, { key: 'full', label: 'full', num: true, fmt: int }],
  rows: [{ q: 'device queue', ...g.device_queue }, { q: 'host queue', ...g.host_queue }] });
  el.append(card('Queue size when each step fetched its batch', c.el, { wide: true, id: 'gap-chart' }),
    card('Empty and full', h('div', {}, counts,
      h('p', { class: 'muted', text: 'Device queue empty: the step waited for data. Host queue empty too: the pipeline is slow; host queue not empty: sending to the device is slow.' })), { id: 'gap-counts' }));
}

function pipelineTab(el, d, ctx) {
  const p = d.pipeline;
  if (!p || !p.op_ids || !p.op_ids.length) {
    el.append(notice('No data pipeline was recorded in this run.'));
    return;
  }
  const ids = p.op_ids;
  const byId = new Map(ids.map((id, i) => [id, i]));
  const bott = (p.bottleneck_warning || [''])[0];
  // Depth from the root: leaves on the left, the root (feeding the device) on the right.
  const depth = (i) => { let n = 0, cur = i; while (p.parent_id[cur] !== -1 && byId.has(p.parent_id[cur]) && n < ids.length) { cur = byId.get(p.parent_id[cur]); n++; } return n; };
  const depths = ids.map((_, i) => depth(i));
  const maxDepth = Math.max(...depths);
  const rowAt = {};
  const nodes = ids.map((id, i) => {
    const name = p.pipeline_ops[i];
    const col = maxDepth - depths[i];
    rowAt[col] = (rowAt[col] || 0) + 1;
    const isBott = bott && name === bott;
    return { id: String(id), name, x: col * 200, y: rowAt[col] * 90, symbolSize: 54,
      itemStyle: { color: isBott ? '#ee6666' : '#5470c6', borderColor: isBott ? '#9b1c1c' : '#fff', borderWidth: isBott ? 4 : 1 },
      label: { show: true, lineHeight: 16, formatter: `${name}\n${p.num_workers[i]} worker${p.num_workers[i] === 1 ? '' : 's'}` },
      value: p.queue_utilization_pct[i] };
  });
  const links = ids.filter((_, i) => p.parent_id[i] !== -1 && byId.has(p.parent_id[i])).map((id) => {
    const i = byId.get(id);
    const u = p.queue_utilization_pct[i];
    return { source: String(id), target: String(p.parent_id[i]), opId: id,
      label: { show: true, formatter: u < 0 ? 'no queue' : `${fix(u, 2)}%` },
      lineStyle: { width: 2 + Math.max(0, u) / 20, color: u < 0 ? '#999' : u > 70 ? '#3ba272' : u < 30 ? '#ee6666' : '#fac858' } };
  });
  const queueBox = h('div', { class: 'queue-detail', 'data-queue-detail': '' }, h('p', { class: 'muted', text: 'Click an op or a queue to see its size over time.' }));
  const showQueue = async (opId) => {
    queueBox.replaceChildren(h('p', { class: 'muted', text: 'loading…' }));
    try {
      const q = (await ctx.get('data_prep', { queue: opId })).queue;
      const i = byId.get(opId);
      const c = chart('queue-size', {
        tooltip: { trigger: 'axis' }, grid: { left: 50, right: 20, top: 30, bottom: 60 },
        xAxis: { type: 'category', name: 'sample', data: q.x }, yAxis: { type: 'value', name: 'size', max: q.length || undefined },
        dataZoom: [{ type: 'slider' }, { type: 'inside' }],
        series: [{ name: 'queue size', type: 'line', step: 'middle', data: q.size }],
      }, 260);
      queueBox.replaceChildren(h('h3', { 'data-queue': String(opId), text: `Output queue of ${p.pipeline_ops[i]}` }),
        kv([['samples', h('span', { 'data-value': 'queue-samples', text: int(q.samples) })], ['length', q.length ?? '-'], ['average size', opt(p.queue_average_size[i], 2)], ['usage', `${opt(p.queue_utilization_pct[i], 2)}%`],
          ['empty', `${opt(p.queue_empty_freq_pct[i], 2)}%`], ['sample interval', `${q.sample_interval_ms ?? '-'} ms`]]),
        q.samples ? c.el : notice('This op has no output queue samples (the device-queue op feeds the device directly).'));
    } catch (e) {
      queueBox.replaceChildren(notice(String(e.message || e), 'warn'));
    }
  };
  const g = chart('pipeline-graph', {
    tooltip: { formatter: (x) => x.dataType === 'edge' ? `queue of ${p.pipeline_ops[byId.get(x.data.opId)]}: ${x.data.label.formatter}` : `${x.data.name}: output queue usage ${x.data.value < 0 ? 'n/a' : `${fix(x.data.value, 2)}%`}` },
    series: [{ type: 'graph', layout: 'none', roam: true, data: nodes, links, edgeSymbol: ['none', 'arrow'], edgeSymbolSize: 10,
      label: { position: 'bottom' }, edgeLabel: { fontSize: 11 } }],
  }, 320);
  g.ready.then((c) => c.on('click', (x) => showQueue(x.dataType === 'edge' ? x.data.opId : Number(x.data.id))));
  el.append(card('Pipeline: ops and their output queues (average usage)', g.el, { wide: true, id: 'pipeline' }));
  if (bott) {
    el.append(h('div', { class: 'notice warn', 'data-bottleneck': bott },
      h('b', { text: `Bottleneck: ${bott}. ` }), (p.bottleneck_suggestion || [''])[0]));
  }
  el.append(card('Queue over time', queueBox, { wide: true, id: 'queue' }));
  el.append(card('Ops', table({ id: 'pipeline-ops', columns: [
    { key: 'name', label: 'op' }, { key: 'workers', label: 'workers', num: true }, { key: 'avg', label: 'avg queue size', num: true, fmt: (v) => opt(v, 2) },
    { key: 'usage', label: 'usage (%)', num: true, fmt: (v) => opt(v, 2) }, { key: 'empty', label: 'empty (%)', num: true, fmt: (v) => opt(v, 2) },
    { key: 'cpu', label: 'CPU (% of one)', num: true, fmt: (v) => opt(v, 2) }],
  rows: ids.map((id, i) => ({ id, name: p.pipeline_ops[i], workers: p.num_workers[i], avg: p.queue_average_size[i], usage: p.queue_utilization_pct[i],
    empty: p.queue_empty_freq_pct[i], cpu: p.avg_cpu_pct ? p.avg_cpu_pct[i] : null })),
  onRow: (r) => showQueue(r.id) }), { wide: true, id: 'ops' }));
}

export default async function dataPrep(ctx) {
  const d = await ctx.get('data_prep');
  ctx.rank = d.rank;
  ctx.body.replaceChildren();
  if (!d.available) {
    ctx.body.append(notice('No data pipeline or device queue was recorded in this run.'));
    return;
  }
  ctx.body.append(tabs([
    { id: 'gap', label: 'Iteration gap', render: (el) => gapTab(el, d) },
    { id: 'pipeline', label: 'Data processing pipeline', render: (el) => pipelineTab(el, d, ctx) },
  ], ctx.params.tab));
}
