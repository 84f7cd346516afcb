// timeline.js - the Timeline page: download the Chrome-trace file with MindInsight's
// choices (logical ranks, graph id, summary or detail, merge sub-graphs) and open it in
// Perfetto; each rank's timeline summary.
import { h, card, fix, int, notice, bytes } from '../ui.js';
import { table } from '../table.js';
import { downloadUrl } from '../api.js';

export default async function timeline(ctx) {
  const d = await ctx.get('timeline');
  const body = ctx.body;
  body.replaceChildren();
  const withTrace = d.ranks.filter((r) => r.trace_bytes !== null);
  if (!withTrace.length) {
    body.append(notice('No timeline (trace_view.json) was written for this run.'));
    return;
  }
  const rankBoxes = withTrace.map((r) => h('label', { class: 'check' }, h('input', { type: 'checkbox', value: r.rank, checked: true, 'data-rank': r.rank }), ` rank ${r.rank}`));
  const graph = h('select', { 'data-select': 'graph' }, h('option', { value: 'all', text: 'all' }), ...d.graph_ids.map((g) => h('option', { value: g, text: `graph ${g}` })));
  const kind = h('select', { 'data-select': 'kind' }, h('option', { value: 'summary', text: 'summary (step trace, overlap)' }), h('option', { value: 'detail', text: 'detail (every op, kernel, communication)' }));
  const merge = h('input', { type: 'checkbox', checked: true, 'data-check': 'merge' });
  const link = h('a', { class: 'button', 'data-link': 'download', download: '' , text: 'Download timeline' });
  const update = () => {
    const ranks = rankBoxes.map((l) => l.firstChild).filter((c) => c.checked).map((c) => c.value);
    link.href = downloadUrl({ run: ctx.run.id, ranks: ranks.join(','), graph: graph.value, kind: kind.value, merge: merge.checked ? 1 : 0 });
    link.classList.toggle('disabled', !ranks.length);
  };
  for (const el of [...rankBoxes.map((l) => l.firstChild), graph, kind, merge]) el.addEventListener('change', update);
  update();
  body.append(card('Download', h('div', { class: 'form' },
    h('div', {}, h('b', { text: 'Logical ranks: ' }), ...rankBoxes),
    h('div', {}, h('label', {}, h('b', { text: 'Sub-graph: ' }), graph)),
    h('div', {}, h('label', {}, h('b', { text: 'Data: ' }), kind)),
    h('div', {}, h('label', { class: 'check' }, merge, ' merge sub-graphs (one Step Trace lane)')),
    link), { id: 'download' }));
  body.append(card('Open it', h('ol', {},
    h('li', { text: 'Open https://ui.perfetto.dev (or chrome://tracing) and drag the downloaded file onto the page.' }),
    h('li', { text: 'W/S zoom, A/D move; click a slice for its details; drag over slices to compare their durations.' }),
    h('li', { text: 'Start with the summary of every rank and graph (where does the step go?), then the detail of a few ranks or graphs.' })), { id: 'howto' }));
  body.append(card('Timeline of each rank', table({ id: 'timeline-ranks', columns: [
    { key: 'rank', label: 'rank', num: true }, { key: 'size', label: 'trace_view.json', num: true, fmt: bytes },
    { key: 'streams', label: 'streams', num: true, fmt: int }, { key: 'ops', label: 'ops', num: true, fmt: int },
    { key: 'exe', label: 'executions', num: true, fmt: int }, { key: 'time', label: 'compute (ms)', num: true, fmt: (v) => fix(v, 6) }],
  rows: d.ranks.map((r) => ({ rank: r.rank, size: r.trace_bytes, streams: r.summary?.num_of_streams, ops: r.summary?.num_of_ops,
    exe: r.summary?.op_exe_times, time: r.summary?.total_time })) }), { wide: true, id: 'ranks' }));
}
