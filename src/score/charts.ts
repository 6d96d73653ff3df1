/**
 * Charts of a score as SVG text (vega-lite compiled to vega, rendered headless with
 * `renderer: 'none'`): simulated and measured values against load, one chart per metric;
 * APE per point. The SVG is inlined into `report.html`, so the page needs no network.
 */
import type * as vegaLite from 'vega-lite';
import { renderSvg } from '../io/render-svg.js';
import type { ScoreResult } from './score-result.js';
import { keyValueText, type PointKey } from './points.js';

type Spec = vegaLite.TopLevelSpec;

const SERIES_COLORS = ['#1f77b4', '#d62728', '#7f7f7f'];

/** Dashed-line symbols for the curves; the stroke is set through `encode` (the legend's
 * own stroke colour is overridden by the mark's). */
const CURVE_LEGEND = {
  labelLimit: 260,
  symbolType: 'stroke',
  symbolStrokeWidth: 2,
  symbolSize: 300,
  encode: { symbols: { update: { stroke: { value: '#333' } } } },
};

function curveLabel(key: PointKey, loadKey: string | null): string {
  const parts = Object.keys(key)
    .filter((name) => name !== loadKey)
    .sort()
    .map((name) => `${name}=${keyValueText(key[name])}`);
  return parts.length > 0 ? parts.join(', ') : 'all points';
}

function pointLabel(key: PointKey, loadKey: string | null): string {
  const curve = curveLabel(key, loadKey);
  const load = loadKey !== null && loadKey in key ? `${loadKey === 'concurrency' ? 'c' : 'rate '}${keyValueText(key[loadKey])}` : '';
  if (curve === 'all points') return load || 'point';
  return load ? `${load} (${curve})` : curve;
}

/** True when the load values double from one to the next (1, 2, 4, ...): a log2 axis reads best. */
function isDoubling(values: number[]): boolean {
  const sorted = [...new Set(values)].filter((value) => value > 0).sort((a, b) => a - b);
  if (sorted.length < 3) return false;
  let doublings = 0;
  for (let i = 1; i < sorted.length; i++) if (Math.abs(sorted[i] / sorted[i - 1] - 2) < 1e-9) doublings++;
  return doublings >= (sorted.length - 1) / 2;
}

/** Vega-lite spec of one metric: simulated (and baseline) and measured against load. */
export function metricChartSpec(result: ScoreResult, metric: string): Spec | null {
  const loadKey = result.match.load_key;
  const rows = result.points.filter((row) => row.metric === metric);
  const simLabel = result.inputs.sim_label;
  const baselineLabel = result.inputs.baseline_label ?? 'baseline';
  const values: Array<Record<string, unknown>> = [];
  for (const row of rows) {
    const x = loadKey !== null && typeof row.key[loadKey] === 'number' ? row.key[loadKey] : null;
    const base = { load: x, label: pointLabel(row.key, loadKey), curve: curveLabel(row.key, loadKey) };
    if (row.measured !== null && Number.isFinite(row.measured)) values.push({ ...base, series: 'measured', value: row.measured });
    if (row.sim !== null && Number.isFinite(row.sim)) values.push({ ...base, series: simLabel, value: row.sim });
    if (row.baseline_sim !== undefined && row.baseline_sim !== null && Number.isFinite(row.baseline_sim)) {
      values.push({ ...base, series: baselineLabel, value: row.baseline_sim });
    }
  }
  if (values.length === 0) return null;
  const unit = result.metrics[metric]?.unit ?? '';
  const hasMeasured = values.some((value) => value.series === 'measured');
  const series = [simLabel, 'measured', ...(result.inputs.baseline ? [baselineLabel] : [])];
  const curves = new Set(values.map((value) => value.curve));
  const hasLoad = values.every((value) => value.load !== null);
  const loads = values.map((value) => value.load as number);
  const x = hasLoad
    ? {
        field: 'load',
        type: 'quantitative' as const,
        title: loadKey ?? 'load',
        scale: isDoubling(loads) ? { type: 'log' as const, base: 2 } : { zero: false },
        axis: isDoubling(loads) ? { values: [...new Set(loads)].sort((a, b) => a - b) } : {},
      }
    : { field: 'label', type: 'ordinal' as const, title: 'point', sort: null };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: metric,
      subtitle: hasMeasured
        ? `${unit ? `${unit}; ` : ''}${simLabel} and measured against ${loadKey ?? 'point'}`
        : 'no measured values: simulated only',
    },
    width: 340,
    height: 240,
    data: { values },
    mark: { type: 'line', point: { filled: true, size: 50 }, strokeWidth: 2 },
    encoding: {
      x,
      y: { field: 'value', type: 'quantitative', title: unit ? `${metric} (${unit})` : metric, scale: { zero: false } },
      color: { field: 'series', type: 'nominal', title: null, scale: { domain: series, range: SERIES_COLORS.slice(0, series.length) } },
      ...(curves.size > 1 ? { strokeDash: { field: 'curve', type: 'nominal' as const, title: 'curve', legend: CURVE_LEGEND } } : {}),
      detail: { field: 'curve', type: 'nominal' },
    },
    config: { font: 'sans-serif', view: { stroke: '#ccc' } },
  };
}

/** Vega-lite spec of APE per point, grouped by point, one bar per metric. */
export function apeChartSpec(result: ScoreResult, which: 'sim' | 'baseline' = 'sim'): Spec | null {
  const loadKey = result.match.load_key;
  const values = result.points
    .map((row) => ({
      label: pointLabel(row.key, loadKey),
      metric: row.metric,
      ape: which === 'sim' ? row.ape : (row.baseline_ape ?? null),
      load: loadKey ? row.key[loadKey] : 0,
    }))
    .filter((value) => value.ape !== null);
  if (values.length === 0) return null;
  const order = [...new Map(values.map((value) => [value.label, value.load])).entries()]
    .sort((a, b) => (typeof a[1] === 'number' && typeof b[1] === 'number' ? a[1] - b[1] : 0))
    .map(([label]) => label);
  const title =
    which === 'sim' ? `APE per point (${result.inputs.sim_label})` : `APE per point (${result.inputs.baseline_label ?? 'baseline'})`;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title, subtitle: '|sim - measured| / measured, %' },
    width: { step: Math.max(12, Math.min(28, Math.floor(160 / Math.max(1, Object.keys(result.metrics).length)))) },
    height: 240,
    data: { values },
    mark: { type: 'bar' },
    encoding: {
      x: { field: 'label', type: 'ordinal', title: 'point', sort: order, axis: { labelAngle: -40, labelLimit: 240 } },
      xOffset: { field: 'metric', type: 'nominal', sort: Object.keys(result.metrics) },
      y: { field: 'ape', type: 'quantitative', title: 'APE (%)' },
      color: { field: 'metric', type: 'nominal', title: 'metric', sort: Object.keys(result.metrics), legend: { labelLimit: 260 } },
    },
    config: { font: 'sans-serif', view: { stroke: '#ccc' } },
  };
}

export interface ScoreCharts {
  /** One SVG per metric with any value, by metric name. */
  metrics: Record<string, string>;
  ape: string | null;
  baselineApe: string | null;
}

export async function renderScoreCharts(result: ScoreResult): Promise<ScoreCharts> {
  const metrics: Record<string, string> = {};
  for (const metric of Object.keys(result.metrics)) {
    const spec = metricChartSpec(result, metric);
    if (spec) metrics[metric] = await renderSvg(spec);
  }
  const apeSpec = apeChartSpec(result, 'sim');
  const baselineSpec = result.inputs.baseline ? apeChartSpec(result, 'baseline') : null;
  return {
    metrics,
    ape: apeSpec ? await renderSvg(apeSpec) : null,
    baselineApe: baselineSpec ? await renderSvg(baselineSpec) : null,
  };
}
