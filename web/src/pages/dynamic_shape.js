// dynamic_shape.js - the Dynamic shape page: average time per step of each op type and of
// each dynamic op (curves over the steps); clicking a point shows every listed op's input
// shapes at that step.
import { h, card, fix, int, notice } from '../ui.js';
import { chart } from '../charts.js';
import { table } from '../table.js';

function curveChart(name, curves, selected, onClick) {
  const names = Object.keys(curves);
  const c = chart(name, {
    tooltip: { trigger: 'axis', valueFormatter: (v) => `${fix(v, 3)} us` },
    legend: { type: 'scroll', top: 0, selected: Object.fromEntries(names.map((n) => [n, !selected || n === selected])) },
    grid: { left: 60, right: 20, top: 40, bottom: 60 },
    xAxis: { type: 'value', name: 'step', minInterval: 1 },
    yAxis: { type: 'value', name: 'us' },
    dataZoom: [{ type: 'slider' }, { type: 'inside' }],
    series: names.map((n) => ({ name: n, type: 'line', showSymbol: true, symbolSize: 5, data: curves[n].x.map((x, i) => [x, curves[n].y[i]]) })),
  }, 320);
  c.ready.then((ch) => ch.on('click', (p) => onClick(p.data[0])));
  return c;
}

export default async function dynamicShape(ctx) {
  const d = await ctx.get('dynamic_shape', { step: ctx.params.step });
  const body = ctx.body;
  body.replaceChildren();
  if (!d.available) {
    body.append(notice('No op changed its input shapes between steps in this run: nothing to show.'));
    return;
  }
  const pick = (step) => ctx.go('dynamic_shape', { step });
  body.append(h('p', { class: 'muted', text: `${int(d.n_dynamic_ops)} ops changed their input shapes. Click a point to see the shapes at that step.` }));
  body.append(card('Average time per step, by op type', curveChart('dyn-types', d.type_curves, null, pick).el, { wide: true, id: 'types' }));
  body.append(card('Average time per step, by op', curveChart('dyn-ops', d.op_curves, null, pick).el, { wide: true, id: 'ops' }));
  body.append(card(d.step ? `Input shapes at step ${d.step}` : 'Input shapes', d.step ? table({ id: 'dyn-shapes', columns: [
    { key: 'op_name', label: 'op' }, { key: 'op_type', label: 'type' }, { key: 'shapes_at_step', label: 'input shapes' }, { key: 'n_distinct_shapes', label: 'distinct shapes', num: true }],
  rows: d.ops, search: ['op_name', 'op_type'] }) : h('p', { class: 'muted', text: 'Click a point of a curve.' }), { wide: true, id: 'shapes' }));
}
