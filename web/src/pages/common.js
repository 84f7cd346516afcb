// common.js - pieces several pages share: the step-phase chart options and the phase
// names as MindInsight labels them.
import { fix } from '../ui.js';

export const PHASES = [
  ['iteration_interval', 'Iteration interval'],
  ['fp_and_bp', 'Forward + backward'],
  ['tail', 'Tail'],
  ['fp', 'Forward (inference)'],
];

// Stacked bars of the phases per step (ms), from a curves object {x, <phase>: [...]}.
export function stepBarsOption(curves, opts = {}) {
  const series = PHASES.filter(([k]) => curves && curves[k]).map(([k, label]) => ({
    name: label, type: 'bar', stack: 'step', data: curves[k], large: true,
  }));
  return {
    tooltip: { trigger: 'axis', valueFormatter: (v) => `${fix(v, 6)} ms` },
    legend: { top: 0 },
    grid: { left: 60, right: 20, top: 36, bottom: opts.zoom ? 60 : 30 },
    xAxis: { type: 'category', name: 'step', data: curves ? curves.x : [] },
    yAxis: { type: 'value', name: 'ms' },
    dataZoom: opts.zoom ? [{ type: 'slider' }, { type: 'inside' }] : undefined,
    series,
  };
}
