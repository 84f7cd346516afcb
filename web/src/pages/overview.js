// overview.js - the Overview page (MindInsight's "performance overview"): step-trace chart,
// op-type pie, steps with a data-preparation bottleneck, timeline summary, and the
// advisor's findings as the "Helper" panel, each linked to the page with its evidence.
import { h, card, fix, int, notice, kv } from '../ui.js';
import { chart, pieLegend } from '../charts.js';
import { stepBarsOption } from './common.js';

// Which page shows the evidence of each advisor rule (docs/OUTPUTS.md "Advisor").
const EVIDENCE = {
  iteration_interval: ['step_trace', 'Step trace'],
  device_queue_empty: ['data_prep', 'Data preparation'],
  cpu_busy: ['resources', 'Resources'],
  pipeline_bottleneck: ['data_prep', 'Data preparation'],
  tail_communication: ['step_trace', 'Step trace'],
  top_op_types: ['operators', 'Operators'],
  memory_peak: ['resources', 'Resources'],
  flops_under_peak: ['operators', 'Operators'],
  dynamic_shape: ['dynamic_shape', 'Dynamic shape'],
};

export default async function overview(ctx) {
  const d = await ctx.get('overview');
  ctx.rank = d.rank;
  const body = ctx.body;
  body.replaceChildren();
  const grid = h('div', { class: 'cards' });
  const rankSel = d.ranks.length > 1 ? h('label', { class: 'rank-select' }, 'Rank ',
    h('select', { 'data-select': 'rank', onchange: (e) => ctx.go('overview', { rank: e.target.value }) },
      ...d.ranks.map((r) => h('option', { value: r, selected: r === d.rank, text: String(r) })))) : null;
  body.append(h('div', { class: 'page-tools' }, rankSel,
    h('span', { class: 'muted', text: `${d.kind} data, rank ${d.rank}` })));

  // Helper panel: the advisor's findings.
  const findings = d.findings || [];
  const helper = h('aside', { class: 'helper', 'data-card': 'helper' }, h('h2', { text: 'Helper' }),
    findings.length ? h('ol', {}, ...findings.map((f) => {
      const ev = EVIDENCE[f.id];
      return h('li', { class: `finding ${f.severity}`, 'data-finding': f.id },
        h('div', { class: 'finding-title' }, h('span', { class: `sev ${f.severity}`, text: f.severity }), ' ', f.title),
        h('div', { class: 'finding-text', text: f.suggestion }),
        h('div', { class: 'finding-evidence', text: Object.entries(f.evidence || {}).map(([k, v]) => `${k} = ${v}`).join(', ') }),
        ev ? h('a', { href: `#/run/${encodeURIComponent(ctx.run.id)}/${ev[0]}?rank=${d.rank}`, text: `see ${ev[1]}` }) : null);
    })) : h('p', { class: 'muted', text: 'No finding: no rule fired, or the data its rules need was not recorded.' }));

  const st = d.step_trace;
  const s = d.step_summary || {};
  const stepCard = st && st.points ? (() => {
    const c = chart('overview-steps', stepBarsOption(st), 260);
    return card('Step trace', h('div', {},
      kv([['steps', int(s.total_steps)], ['average step', `${s.total_time ?? '-'} ms`],
        ...(d.inference ? [['forward', `${s.fp ?? '-'} ms (${s.fp_percent ?? '-'})`]] : [
          ['iteration interval', `${s.iteration_interval ?? '-'} ms (${s.iteration_interval_percent ?? '-'})`],
          ['forward + backward', `${s.fp_and_bp ?? '-'} ms (${s.fp_and_bp_percent ?? '-'})`],
          ['tail', `${s.tail ?? '-'} ms (${s.tail_percent ?? '-'})`]])]),
      c.el), { link: `#/run/${encodeURIComponent(ctx.run.id)}/step_trace?rank=${d.rank}`, id: 'steps' });
  })() : card('Step trace', notice('This run recorded no steps.'), { id: 'steps' });

  const types = d.op_types || [];
  const opCard = types.length ? (() => {
    const c = chart('overview-op-types', {
      tooltip: { trigger: 'item', formatter: (p) => `${p.name}<br>${fix(p.value, 3)} us (${fix(p.data.ratio, 2)}%)` },
      legend: pieLegend(),
      series: [{ type: 'pie', radius: ['35%', '65%'], center: ['25%', '50%'], label: { show: false },
        data: types.map((t) => ({ name: `${t.op_type} (${t.core_type})`, value: t.total_time_us, ratio: t.ratio_percent })) }],
    }, 260);
    return card('Op types (top 20 by time)', c.el, { link: `#/run/${encodeURIComponent(ctx.run.id)}/operators?rank=${d.rank}`, id: 'op-types' });
  })() : card('Op types', notice('No op was recorded.'), { id: 'op-types' });

  const dp = d.data_prep;
  const dpCard = card('Data preparation', dp.available && dp.steps ? h('div', {},
    h('p', { class: 'big', 'data-value': 'bottleneck-steps', text: `${int(dp.bottleneck_steps.total)} of ${int(dp.steps)} steps` }),
    h('p', { class: 'muted', text: 'waited for data: the device queue was empty when the step fetched its batch' }),
    kv([['data processing (host queue empty too)', int(dp.bottleneck_steps.data_process)],
      ['data transfer (host queue had batches)', int(dp.bottleneck_steps.data_transfer)],
      ['pipeline bottleneck', (dp.bottleneck_op && dp.bottleneck_op[0]) || 'none']]))
    : notice(dp.available ? 'The pipeline was recorded, but no device-queue sample per step.' : 'No data pipeline was recorded in this run.'),
  { link: `#/run/${encodeURIComponent(ctx.run.id)}/data_prep?rank=${d.rank}`, id: 'data-prep' });

  const tl = d.timeline;
  const tlCard = card('Timeline summary', tl ? kv([
    ['streams', int(tl.num_of_streams)], ['ops', int(tl.num_of_ops)], ['executions', int(tl.op_exe_times)],
    ['compute time', `${fix(tl.total_time, 6)} ms`], ['deepest scope', int(tl.max_scope_name_num)]])
    : notice('No timeline summary.'), { link: `#/run/${encodeURIComponent(ctx.run.id)}/timeline?rank=${d.rank}`, id: 'timeline' });

  grid.append(stepCard, opCard, dpCard, tlCard);
  body.append(h('div', { class: 'overview' }, grid, helper));
}
