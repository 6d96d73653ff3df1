/**
 * `sweep.svg`: each headline metric against the first swept axis (the first grid key, else the
 * first zip key), one line per combination of the other axes. Vega-Lite compiled to Vega and
 * rendered headless to SVG; only points with status ok are drawn.
 *
 * Layout: one panel per metric, two panels a row, each with its own x axis (a facet grid would
 * leave an empty cell with a stray x axis under an odd number of metrics), every y axis the same
 * width so that the panels of a column line up, and the legend under the panels with no label
 * cut short. Repeats of a point (`repeats: k`) are one line through their mean with a band from
 * their lowest to their highest value. A swept value that is a mapping is labelled by the fields
 * in which the values of its axis differ (`input_tokens=4096`), not as an object.
 */
import type { TopLevelSpec } from 'vega-lite';
import { renderSvg } from '../io/render-svg.js';
import type { OutlinePoint, PlanOutline } from './plan.js';
import type { PointRecord } from './results.js';

/** The metrics drawn, with where they are found in a summary. */
export const HEADLINE_METRICS: ReadonlyArray<{ label: string; get: (s: NonNullable<PointRecord['summary']>) => unknown }> = [
  { label: 'TTFT avg (ms)', get: (s) => s.metrics?.time_to_first_token?.avg },
  { label: 'TTFT p90 (ms)', get: (s) => s.metrics?.time_to_first_token?.p90 },
  { label: 'ITL avg (ms)', get: (s) => s.metrics?.inter_token_latency?.avg },
  { label: 'request latency avg (ms)', get: (s) => s.metrics?.request_latency?.avg },
  { label: 'output token throughput (tokens/sec)', get: (s) => s.run?.output_token_throughput },
];

/** The axis that repeats of a point are told apart by (plan.ts). */
const REPEAT_AXIS = 'repeat';

/** One drawn value: the mean over the repeats of a point, with their range. */
export interface ChartRow {
  /** The x value: a number, or a label for a value that is not one. */
  x: number | string;
  series: string;
  metric: string;
  value: number;
  low: number;
  high: number;
  /** Repeats averaged into `value`. */
  n: number;
  /** Plan index of the first point of the row (orders the x labels and the lines). */
  order: number;
}

const PANEL_WIDTH = 320;
const PANEL_HEIGHT = 200;
/** Width of every y axis (labels and ticks), so that the plots of one column line up. */
const Y_AXIS_EXTENT = 52;

/** Last path segments (`workers`), or the full key where two axes would share one. */
function shortenKeys(keys: string[]): string[] {
  const last = keys.map((k) => k.slice(k.lastIndexOf('.') + 1));
  return keys.map((k, i) => (last.filter((l) => l === last[i]).length > 1 ? k : last[i]));
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** Leaves of a value as dotted paths (`{a: {b: 1}}` -> `a.b: 1`); a scalar is one leaf with the empty path. */
function leaves(value: unknown, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (isMapping(value)) {
    for (const [name, child] of Object.entries(value)) leaves(child, prefix === '' ? name : `${prefix}.${name}`, out);
  } else {
    out.set(prefix, value);
  }
  return out;
}

function scalarText(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined ? '(none)' : JSON.stringify(value);
}

/**
 * Labels of the values of one axis: scalars as they are; mappings (and lists) by the leaf fields
 * in which the axis's mappings differ, e.g. `input_tokens=1024` and `input_tokens=4096` for two
 * synthetic sources that differ only in their prompt length (by all their fields when there is
 * only one mapping).
 */
export function valueLabels(values: readonly unknown[]): Map<string, string> {
  const labels = new Map<string, string>();
  const distinct = [...new Map(values.map((v) => [JSON.stringify(v), v])).entries()];
  const mappings = distinct.filter(([, v]) => isMapping(v)).map(([key, v]) => [key, leaves(v)] as const);
  const paths = [...new Set(mappings.flatMap(([, l]) => [...l.keys()]))];
  const differing = paths.filter((path) => new Set(mappings.map(([, l]) => JSON.stringify(l.get(path)))).size > 1);
  const shown = differing.length > 0 ? differing : paths;
  for (const [key, v] of distinct) {
    const l = mappings.find(([k]) => k === key)?.[1];
    if (l === undefined) {
      labels.set(key, scalarText(v));
      continue;
    }
    const parts = shown.filter((path) => l.has(path)).map((path) => `${path}=${scalarText(l.get(path))}`);
    labels.set(key, parts.length > 0 ? parts.join(', ') : key);
  }
  return labels;
}

/** The rows drawn: ok points only, repeats folded into their mean and range. */
export function chartRows(plan: PlanOutline, points: OutlinePoint[], byId: Map<string, PointRecord>): ChartRow[] | null {
  const xAxis = plan.axes.find((a) => a !== REPEAT_AXIS);
  if (xAxis === undefined) return null;
  const others = plan.axes.filter((a) => a !== xAxis && a !== REPEAT_AXIS);
  const shortKeys = shortenKeys(others);
  const ordered = [...points].sort((a, b) => a.index - b.index);
  const xValues = ordered.map((p) => p.overrides[xAxis]);
  const isNumeric = xValues.every((v) => typeof v === 'number' && Number.isFinite(v));
  const xLabels = valueLabels(xValues);
  const otherLabels = others.map((axis) => valueLabels(ordered.map((p) => p.overrides[axis])));
  const seriesOf = (overrides: Record<string, unknown>): string => {
    if (others.length === 0) return 'all';
    const text = others.map((axis, i) => otherLabels[i].get(JSON.stringify(overrides[axis])) ?? scalarText(overrides[axis]));
    if (others.length === 1) return text[0];
    return others.map((_, i) => `${shortKeys[i]}=${text[i]}`).join(', ');
  };

  const groups = new Map<string, { x: number | string; series: string; metric: string; values: number[]; order: number }>();
  for (const point of ordered) {
    const record = byId.get(point.id);
    if (record === undefined || record.status !== 'ok' || record.summary === null) continue;
    const raw = point.overrides[xAxis];
    const x = isNumeric ? (raw as number) : (xLabels.get(JSON.stringify(raw)) ?? scalarText(raw));
    const series = seriesOf(point.overrides);
    for (const metric of HEADLINE_METRICS) {
      const value = metric.get(record.summary);
      if (typeof value !== 'number' || !Number.isFinite(value)) continue;
      const key = JSON.stringify([metric.label, series, x]);
      const group = groups.get(key) ?? { x, series, metric: metric.label, values: [], order: point.index };
      group.values.push(value);
      groups.set(key, group);
    }
  }
  return [...groups.values()].map((g) => {
    // Summed in plan order, so the mean is the same bytes whatever order the points finished in.
    const mean = g.values.reduce((sum, v) => sum + v, 0) / g.values.length;
    return {
      x: g.x,
      series: g.series,
      metric: g.metric,
      value: mean,
      low: Math.min(...g.values),
      high: Math.max(...g.values),
      n: g.values.length,
      order: g.order,
    };
  });
}

/** Legend columns that keep the legend about as wide as two panels. */
function legendColumns(labels: readonly string[]): number {
  const longest = Math.max(...labels.map((l) => l.length), 1);
  // About 6 px a character at the legend's 11 px font, plus the symbol and the gap.
  return Math.max(1, Math.min(labels.length, Math.floor((2 * PANEL_WIDTH + Y_AXIS_EXTENT) / (longest * 6 + 40))));
}

/** The Vega-Lite spec, or null when the plan has no swept axis to draw against. */
export function chartSpec(plan: PlanOutline, points: OutlinePoint[], byId: Map<string, PointRecord>): TopLevelSpec | null {
  const rows = chartRows(plan, points, byId);
  if (rows === null) return null;
  const xAxis = plan.axes.find((a) => a !== REPEAT_AXIS) as string;
  const others = plan.axes.filter((a) => a !== xAxis && a !== REPEAT_AXIS);
  const repeats = plan.axes.includes(REPEAT_AXIS);
  const isNumeric = points.every((p) => typeof p.overrides[xAxis] === 'number' && Number.isFinite(p.overrides[xAxis]));
  const xNumbers = isNumeric ? [...new Set(points.map((p) => p.overrides[xAxis] as number))].sort((a, b) => a - b) : [];
  const isLog2 = isNumeric && plan.log2Axes.includes(xAxis) && xNumbers.every((v) => v > 0);
  const xTitle = xAxis.slice(xAxis.lastIndexOf('.') + 1);
  const xOrder = [...new Map([...rows].sort((a, b) => a.order - b.order).map((r) => [String(r.x), r.x])).values()];
  // Ordinal labels are turned only when they would not fit side by side (about 6 px a character).
  const longLabels = !isNumeric && xOrder.reduce<number>((sum, x) => sum + String(x).length * 6 + 12, 0) > PANEL_WIDTH;

  const xEncoding = isNumeric
    ? {
        field: 'x',
        type: 'quantitative' as const,
        title: xTitle,
        scale: isLog2 ? { type: 'log' as const, base: 2 } : { zero: false },
        axis: isLog2 ? { values: xNumbers } : {},
      }
    : {
        field: 'x',
        type: 'ordinal' as const,
        title: xTitle,
        sort: xOrder.map(String),
        axis: { labelAngle: longLabels ? -25 : 0, labelLimit: 220 },
      };
  const seriesNames = [...new Map([...rows].sort((a, b) => a.order - b.order).map((r) => [r.series, r.series])).keys()];
  const color =
    others.length === 0
      ? { value: '#1f77b4' }
      : {
          field: 'series',
          type: 'nominal' as const,
          title: others.join(', '),
          scale: { domain: seriesNames, ...(seriesNames.length > 10 ? { scheme: 'tableau20' } : {}) },
          legend: {
            orient: 'bottom' as const,
            direction: 'horizontal' as const,
            columns: legendColumns(seriesNames),
            labelLimit: 0,
            titleLimit: 0,
            symbolLimit: 0,
            // The band's layer would lend the symbols its pale opacity.
            symbolOpacity: 1,
          },
        };
  const yAxis = { title: null, minExtent: Y_AXIS_EXTENT, maxExtent: Y_AXIS_EXTENT };
  const panels = HEADLINE_METRICS.filter((m) => rows.some((r) => r.metric === m.label)).map((metric) => ({
    title: metric.label,
    width: PANEL_WIDTH,
    height: PANEL_HEIGHT,
    transform: [{ filter: { field: 'metric', equal: metric.label } }],
    layer: [
      ...(repeats
        ? [
            {
              mark: { type: 'area' as const, opacity: 0.18 },
              encoding: {
                x: xEncoding,
                y: { field: 'low', type: 'quantitative' as const, axis: yAxis, stack: null },
                y2: { field: 'high' },
                color,
                detail: { field: 'series', type: 'nominal' as const },
              },
            },
          ]
        : []),
      {
        mark: { type: 'line' as const, point: true },
        encoding: {
          x: xEncoding,
          y: { field: 'value', type: 'quantitative' as const, axis: yAxis },
          color,
          detail: { field: 'series', type: 'nominal' as const },
          order: { field: 'order', type: 'quantitative' as const },
        },
      },
    ],
  }));
  const notes = [
    `against ${xAxis}`,
    ...(others.length > 0 ? [`one line per ${others.join(', ')}`] : []),
    ...(repeats ? ['line: mean of the repeats; band: their lowest to highest value'] : []),
  ];
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: plan.name, subtitle: notes.join('; '), anchor: 'start', offset: 10 },
    data: { values: rows },
    concat: panels,
    columns: 2,
    spacing: { row: 24, column: 28 },
    resolve: { scale: { y: 'independent' } },
    config: { font: 'sans-serif', legend: { labelFontSize: 11 } },
  };
  return spec;
}

/** The chart as SVG text, or null when there is nothing to draw against. */
export async function renderChart(plan: PlanOutline, points: OutlinePoint[], byId: Map<string, PointRecord>): Promise<string | null> {
  const spec = chartSpec(plan, points, byId);
  if (spec === null) return null;
  return renderSvg(spec);
}
