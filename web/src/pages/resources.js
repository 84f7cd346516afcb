// resources.js - the Resources page. CPU: machine user/sys/io/idle, runnable processes and
// context switches, the process, each data op. Memory: capacity and peak, the usage curve
// over execution order with a zoom slider and FP/BP marks; hovering shows the op, clicking
// shows the live tensors at that point. Host memory from host_info.
import { h, card, fix, int, notice, kv, bytes } from '../ui.js';
import { chart } from '../charts.js';
import { table } from '../table.js';
import * as api from '../api.js';

function cpuCards(body, cpu) {
  if (!cpu) {
    body.append(card('CPU utilisation', notice('No CPU samples were recorded in this run.'), { id: 'cpu' }));
    return;
  }
  const x = cpu.time_stamp;
  const line = (name, series, unit, height = 240) => chart(name, {
    tooltip: { trigger: 'axis' }, legend: { top: 0 },
    grid: { left: 55, right: 20, top: 36, bottom: 50 },
    xAxis: { type: 'category', name: 'ms', data: x.map((t) => fix(t, 3)) },
    yAxis: { type: 'value', name: unit },
    dataZoom: [{ type: 'inside' }, { type: 'slider', height: 14, bottom: 8 }],
    series: series.map(([n, data]) => ({ name: n, type: 'line', showSymbol: false, data })),
  }, height);
  const dev = cpu.device_info, proc = cpu.process_info, avg = cpu.average || {};
  const a = avg.device_info || {};
  body.append(card(`Machine CPU (${cpu.cpu_processor_num} CPUs, every ${cpu.sampling_interval} ms)`, h('div', {},
    kv([['average user', `${fix(a.user_utilization, 2)}%`], ['sys', `${fix(a.sys_utilization, 2)}%`], ['io wait', `${fix(a.io_utilization, 2)}%`], ['idle', `${fix(a.idle_utilization, 2)}%`]]),
    line('cpu-machine', [['user', dev.user_utilization], ['sys', dev.sys_utilization], ['io', dev.io_utilization], ['idle', dev.idle_utilization]], '%').el,
    line('cpu-procs', [['runnable processes', dev.runable_processes], ['context switches', dev.context_switch_count]], 'count', 200).el), { wide: true, id: 'cpu-machine' }));
  body.append(card('This process', line('cpu-process', [['user', proc.user_utilization], ['sys', proc.sys_utilization]], '% of all CPUs').el, { id: 'cpu-process' }));
  if (cpu.op_info && cpu.op_info.length) {
    body.append(card('Data pipeline ops', line('cpu-ops', cpu.op_info.map((o) => [`op ${o.op_id}`, o.metrics.user_utilization.map((u, i) => (u ?? 0) + (o.metrics.sys_utilization[i] ?? 0))]), '% of all CPUs').el, { id: 'cpu-ops' }));
  }
}

function memoryCards(body, m, ctx) {
  if (!m.available) {
    body.append(card('Memory', notice('No tensor memory was recorded in this run (profile_memory).'), { id: 'memory' }));
    return;
  }
  const s = m.summary;
  body.append(card('Memory overview', kv([
    ['capacity', s.capacity_bytes === null ? 'unknown (nnprof analyse --memory-capacity-gb)' : bytes(s.capacity_bytes)],
    ['peak', h('span', { 'data-value': 'peak-bytes', text: `${bytes(s.peak_bytes)} (${int(s.peak_bytes)} B)` })],
    ['static', bytes(s.static_bytes)], ['allocations', int(s.allocations)], ['deallocations', int(s.deallocations)],
    ['never freed', int(s.never_freed)]]), { id: 'memory-summary' }));
  const lines = m.lines || [];
  const xs = lines.map((p) => p.op_index ?? 0);
  // FP/BP marks: every step's when there are few, else the step around the peak (a mark
  // per step of a long run would hide the curve).
  const all = m.marks || [];
  const peakIdx = m.peak ? m.peak.op_index : null;
  const around = all.find((mk) => peakIdx !== null && mk.fp !== null && mk.bp !== null && mk.fp <= peakIdx && peakIdx <= mk.bp);
  const shown = all.length <= 6 ? all : [around || all[0]].filter(Boolean);
  const marks = [];
  for (const mk of shown) {
    if (mk.fp !== null) marks.push({ xAxis: mk.fp, name: `FP ${mk.step}`, lineStyle: { color: '#3ba272' }, label: { formatter: `FP ${mk.step}`, color: '#3ba272' } });
    if (mk.bp !== null) marks.push({ xAxis: mk.bp, name: `BP ${mk.step}`, lineStyle: { color: '#ee6666' }, label: { formatter: `BP ${mk.step}`, color: '#ee6666' } });
  }
  const breakdown = h('div', { 'data-breakdown': '' }, h('p', { class: 'muted', text: api.report ? 'The live tensors at the peak (the report holds the peak only).' : 'Click the curve to see the live tensors at that point.' }));
  const c = chart('memory-line', {
    tooltip: { trigger: 'axis', formatter: (ps) => {
      const i = ps[0].dataIndex, p = lines[i], prev = i ? lines[i - 1].allocated : 0;
      const d = p.allocated - prev;
      return `op #${p.op_index ?? '-'}${p.op ? ` ${p.op}` : ''}<br>t = ${fix(p.t, 3)} us<br>allocated ${bytes(p.allocated)}<br>change ${d >= 0 ? '+' : '-'}${bytes(Math.abs(d))}`;
    } },
    grid: { left: 70, right: 20, top: 20, bottom: 70 },
    xAxis: { type: 'category', name: 'execution order (op)', data: xs },
    yAxis: { type: 'value', name: 'bytes', axisLabel: { formatter: (v) => bytes(v) } },
    dataZoom: [{ type: 'slider' }, { type: 'inside' }],
    series: [{ name: 'allocated', type: 'line', step: 'end', showSymbol: false, data: lines.map((p) => p.allocated), areaStyle: { opacity: 0.15 },
      markLine: { symbol: 'none', silent: true, data: marks.slice(0, 100) } }],
  }, 340);
  const showAt = async (i) => {
    const p = lines[i];
    breakdown.replaceChildren(h('p', { class: 'muted', text: 'loading…' }));
    try {
      const b = (await ctx.get('resources', { at: p.t })).memory.breakdown;
      breakdown.replaceChildren(h('h3', { 'data-at': String(p.t), text: `Live tensors after op #${p.op_index ?? '-'} (t = ${fix(p.t, 3)} us): ${int(b.live_tensors)} tensors, ${fix(b.live_kb, 3)} KB` }),
        table({ id: 'live-tensors', sortKey: 'size_kb', search: ['name'], columns: [{ key: 'name', label: 'tensor (or owner op)' },
          { key: 'size_kb', label: 'size (KB)', num: true, fmt: (v) => fix(v, 3) }, { key: 'alloc_us', label: 'allocated (us)', num: true, fmt: (v) => fix(v, 3) },
          { key: 'free_us', label: 'freed (us)', num: true, fmt: (v) => (v === null ? 'never' : fix(v, 3)) }], rows: b.tensors }),
        ...(b.others_count ? [h('p', { class: 'muted', text: `and ${int(b.others_count)} smaller tensors, ${fix(b.others_kb, 3)} KB` })] : []));
    } catch (e) {
      breakdown.replaceChildren(notice(String(e.message || e), 'warn'));
    }
  };
  c.ready.then((ch) => ch.getZr().on('click', (ev) => {
    const pt = ch.convertFromPixel({ seriesIndex: 0 }, [ev.offsetX, ev.offsetY]);
    if (pt && pt[0] >= 0 && pt[0] < lines.length && !api.report) showAt(Math.round(pt[0]));
  }));
  body.append(card(`Memory over execution order${marks.length ? (shown.length < all.length ? ` (FP/BP of step ${shown[0].step}, around the peak)` : ' (FP/BP of each step)') : ''}`, c.el, { wide: true, id: 'memory-line' }));
  if (api.report && m.peak) {
    breakdown.append(table({ id: 'live-tensors', sortKey: 'size', columns: [{ key: 'name', label: 'tensor' }, { key: 'owner_op', label: 'owner op' },
      { key: 'size', label: 'bytes', num: true, fmt: int }], rows: m.peak.breakdown || [] }));
  }
  body.append(card('Memory breakdown', breakdown, { wide: true, id: 'memory-breakdown' }));
}

export default async function resources(ctx) {
  const d = await ctx.get('resources');
  ctx.rank = d.rank;
  const body = ctx.body;
  body.replaceChildren();
  cpuCards(body, d.cpu);
  memoryCards(body, d.memory, ctx);
  const hm = d.host_memory;
  if (hm.available) {
    const c = chart('host-memory', {
      tooltip: { trigger: 'axis' }, grid: { left: 70, right: 20, top: 20, bottom: 60 },
      xAxis: { type: 'category', name: 'us', data: hm.time_us }, yAxis: { type: 'value', name: 'kB' },
      dataZoom: [{ type: 'slider' }, { type: 'inside' }],
      series: [{ name: 'host memory', type: 'line', showSymbol: false, data: hm.kb }],
    }, 260);
    body.append(card('Host memory (host_info)', c.el, { wide: true, id: 'host-memory' }));
  }
}
