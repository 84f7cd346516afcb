// charts.js - every chart is ECharts (what MindInsight used), tree-shaken to the series
// and components the pages use. chart() makes one in a sized container, keeps it sized to
// its box and records it in window.__nnpCharts (the browser tests check each is drawn).
import * as echarts from 'echarts/core';
import { BarChart, LineChart, PieChart, GraphChart, HeatmapChart } from 'echarts/charts';
import {
  GridComponent, TooltipComponent, LegendComponent, DataZoomComponent, MarkLineComponent,
  MarkPointComponent, TitleComponent, VisualMapComponent,
} from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';
import { h } from './ui.js';

echarts.use([BarChart, LineChart, PieChart, GraphChart, HeatmapChart, GridComponent,
  TooltipComponent, LegendComponent, DataZoomComponent, MarkLineComponent, MarkPointComponent,
  TitleComponent, VisualMapComponent, CanvasRenderer]);

export const palette = ['#5470c6', '#91cc75', '#fac858', '#ee6666', '#73c0de', '#3ba272',
  '#fc8452', '#9a60b4', '#ea7ccc'];

window.__nnpCharts = window.__nnpCharts || [];
const observer = new ResizeObserver((entries) => {
  for (const e of entries) echarts.getInstanceByDom(e.target)?.resize();
});

// Returns {el, chart}: el is the container to insert; the chart is drawn at once.
export function chart(name, option, height = 320) {
  const el = h('div', { class: 'chart', 'data-chart': name, style: { height: `${height}px` } });
  // ECharts needs the box laid out: draw on the next frame, once el is in the page.
  // option.series' data is kept for the browser test, which checks what a chart shows.
  const state = { name, finished: false, el, data: (option.series || []).map((x) => x.data) };
  window.__nnpCharts.push(state);
  const c = { el, chart: null, ready: null };
  c.ready = new Promise((resolve) => {
    requestAnimationFrame(() => {
      c.chart = echarts.init(el, null, { renderer: 'canvas' });
      c.chart.on('finished', () => { state.finished = true; resolve(c.chart); });
      c.chart.setOption({ color: palette, animation: false, ...option });
      observer.observe(el);
    });
  });
  return c;
}

export function resetCharts() {
  for (const s of window.__nnpCharts) echarts.getInstanceByDom(s.el)?.dispose();
  window.__nnpCharts.length = 0;
}

// Legend text for long op names: the last scope component, cut to fit (the tooltip has
// the whole name).
export function shortName(name, max = 38) {
  const core = name.replace(/^(.*\/)/, '');
  return core.length > max ? `${core.slice(0, max - 1)}…` : core;
}

export function pieLegend() {
  return { type: 'scroll', orient: 'vertical', right: 0, top: 10, bottom: 10, width: '48%',
    formatter: (n) => shortName(n), tooltip: { show: true } };
}
