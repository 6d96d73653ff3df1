/**
 * `sweep.svg`. By default each headline metric against the first swept axis (the first grid key,
 * else the first zip key), one line per combination of the other axes; the sweep file's `chart`
 * chooses other metrics, or a metric on x with each line ordered by a swept key
 * (`chart-options.ts`). Vega-Lite compiled to Vega and rendered headless to SVG; only points with
 * status ok are drawn.
 *
 * Layout: one panel per metric, two panels a row, each with its own x axis (a facet grid would
 * leave an empty cell with a stray x axis under an odd number of metrics), every y axis the same
 * width so that the panels of a column line up, and the legend under the panels with no label
 * cut short. A swept value that is a mapping is labelled by the fields in which the values of its
 * axis differ (`input_tokens=4096`), not as an object. Values that are not numbers are categories:
 * their points are set side by side in each category and never joined by a line (nothing lies
 * between two GPUs). Repeats of a point (`repeats: k`) are drawn as their mean with a bar from
 * their lowest to their highest value.
 */
import type { TopLevelSpec } from 'vega-lite';
import { readableScale } from '../io/chart-scale.js';
import { renderSvg } from '../io/render-svg.js';
import { chartMetric, type ChartMetric } from './chart-options.js';
import type { OutlinePoint, PlanOutline } from './plan.js';
import type { PointRecord } from './results.js';

type Summary = NonNullable<PointRecord['summary']>;

/** A metric drawn, with its panel title and where it is found in a summary. */
interface DrawnMetric {
  label: string;
  get: (s: Summary) => unknown;
}

/** The metrics drawn by default, with where they are found in a summary. */
export const HEADLINE_METRICS: readonly DrawnMetric[] = [
  { label: 'TTFT avg (ms)', get: (s) => s.metrics?.time_to_first_token?.avg },
  { label: 'TTFT p90 (ms)', get: (s) => s.metrics?.time_to_first_token?.p90 },
  { label: 'ITL avg (ms)', get: (s) => s.metrics?.inter_token_latency?.avg },
  { label: 'request latency avg (ms)', get: (s) => s.metrics?.request_latency?.avg },
  { label: 'output token throughput (tokens/sec)', get: (s) => s.run?.output_token_throughput },
];

function namedMetric(name: string): ChartMetric {
  const metric = chartMetric(name);
  // Names were checked when the sweep file was read.
  if (metric === null) throw new Error(`unknown chart metric ${name}`);
  return metric;
}

function drawnMetric(metric: ChartMetric): DrawnMetric {
  return { label: `${metric.name} (${metric.unit})`, get: (s) => metric.get(s) };
}

/** The panels' metrics: the sweep file's `chart.y`, else the headline metrics. */
function panelMetrics(plan: PlanOutline): readonly DrawnMetric[] {
  return plan.chart?.y === undefined ? HEADLINE_METRICS : plan.chart.y.map((name) => drawnMetric(namedMetric(name)));
}

/** Whether the chart puts a metric on x (`chart.x` names no swept axis). */
function hasMetricX(plan: PlanOutline): boolean {
  return plan.chart?.x !== undefined && !plan.axes.includes(plan.chart.x);
}

/** The swept axis on x: `chart.x`, else the first one. */
function xAxisOf(plan: PlanOutline): string | undefined {
  if (plan.chart?.x !== undefined && plan.axes.includes(plan.chart.x)) return plan.chart.x;
  return plan.axes.find((a) => a !== REPEAT_AXIS);
}

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
  const xAxis = hasMetricX(plan) ? plan.chart?.along : xAxisOf(plan);
  if (xAxis === undefined) return null;
  const metrics = hasMetricX(plan) ? [drawnMetric(namedMetric(plan.chart?.x as string)), ...panelMetrics(plan)] : panelMetrics(plan);
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
    for (const metric of metrics) {
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

/** Legend columns that keep the legend within the panels (two, or one when there is one panel). */
function legendColumns(labels: readonly string[], panels: number): number {
  const longest = Math.max(...labels.map((l) => l.length), 1);
  const width = Math.min(2, Math.max(1, panels)) * (PANEL_WIDTH + Y_AXIS_EXTENT);
  // At most about 6.5 px a character at the legend's 11 px font, plus the symbol and the gap.
  return Math.max(1, Math.min(labels.length, Math.floor(width / (longest * 6.5 + 40))));
}

/** The legend of the lines, under the panels, with every label whole. */
function seriesColor(title: string, names: string[], panels: number) {
  return {
    field: 'series',
    type: 'nominal' as const,
    title,
    scale: { domain: names, ...(names.length > 10 ? { scheme: 'tableau20' } : {}) },
    legend: {
      orient: 'bottom' as const,
      direction: 'horizontal' as const,
      columns: legendColumns(names, panels),
      labelLimit: 0,
      titleLimit: 0,
      symbolLimit: 0,
      symbolType: 'circle',
      symbolOpacity: 1,
    },
  };
}

function seriesNamesOf(rows: readonly ChartRow[]): string[] {
  return [...new Map([...rows].sort((a, b) => a.order - b.order).map((r) => [r.series, r.series])).keys()];
}

function topLevel(plan: PlanOutline, rows: unknown[], panels: unknown[], notes: string[]): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: plan.name, subtitle: notes.join('; '), anchor: 'start', offset: 10 },
    data: { values: rows },
    concat: panels,
    columns: 2,
    spacing: { row: 24, column: 28 },
    resolve: { scale: { x: 'independent', y: 'independent' } },
    config: { legend: { labelFontSize: 11 } },
  } as TopLevelSpec;
}

/** The Vega-Lite spec, or null when the plan has no swept axis to draw against. */
export function chartSpec(plan: PlanOutline, points: OutlinePoint[], byId: Map<string, PointRecord>): TopLevelSpec | null {
  const rows = chartRows(plan, points, byId);
  if (rows === null) return null;
  return hasMetricX(plan) ? metricXSpec(plan, rows) : sweptXSpec(plan, points, rows);
}

/** Each metric against a swept axis, one line (or, on a category axis, one set of points) per combination of the other axes. */
function sweptXSpec(plan: PlanOutline, points: OutlinePoint[], rows: ChartRow[]): TopLevelSpec {
  const xAxis = xAxisOf(plan) as string;
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
        scale: readableScale(xNumbers, isLog2 ? { log: 2 } : {}),
        axis: isLog2 ? { values: xNumbers } : {},
      }
    : {
        field: 'x',
        type: 'ordinal' as const,
        title: xTitle,
        sort: xOrder.map(String),
        scale: { paddingInner: 0.3, paddingOuter: 0.2 },
        axis: { labelAngle: longLabels ? -25 : 0, labelLimit: 220 },
      };
  const seriesNames = seriesNamesOf(rows);
  const metrics = panelMetrics(plan).filter((m) => rows.some((r) => r.metric === m.label));
  const color = others.length === 0 ? { value: '#1f77b4' } : seriesColor(others.join(', '), seriesNames, metrics.length);
  // On a category axis the lines' points sit side by side within their category.
  const offset =
    !isNumeric && others.length > 0 ? { xOffset: { field: 'series', type: 'nominal' as const, scale: { domain: seriesNames } } } : {};
  const yAxis = { title: null, minExtent: Y_AXIS_EXTENT, maxExtent: Y_AXIS_EXTENT };
  const panels = metrics.map((metric) => {
    const own = rows.filter((r) => r.metric === metric.label);
    const y = {
      field: 'value',
      type: 'quantitative' as const,
      axis: yAxis,
      scale: readableScale(
        own.flatMap((r) => [r.low, r.high]),
        { zero: true },
      ),
    };
    return {
      title: metric.label,
      width: PANEL_WIDTH,
      height: PANEL_HEIGHT,
      transform: [{ filter: { field: 'metric', equal: metric.label } }],
      layer: [
        ...(repeats
          ? [
              {
                mark: { type: 'rule' as const, strokeWidth: 1.5 },
                encoding: { x: xEncoding, ...offset, y: { ...y, field: 'low' }, y2: { field: 'high' }, color },
              },
              // Caps at both ends, so that a narrow range still shows as a bar.
              ...['low', 'high'].map((field) => ({
                mark: { type: 'tick' as const, thickness: 1.5, size: 10 },
                encoding: { x: xEncoding, ...offset, y: { ...y, field }, color },
              })),
            ]
          : []),
        {
          mark: isNumeric
            ? { type: 'line' as const, point: { filled: true, size: 30 } }
            : { type: 'point' as const, filled: true, size: 40 },
          encoding: {
            x: xEncoding,
            ...offset,
            y,
            color,
            detail: { field: 'series', type: 'nominal' as const },
            order: { field: 'order', type: 'quantitative' as const },
          },
        },
      ],
    };
  });
  const notes = [
    `against ${xAxis}`,
    ...(others.length > 0 ? [`${isNumeric ? 'one line' : 'one colour'} per ${others.join(', ')}`] : []),
    ...(repeats ? ['point: mean of the repeats; bar: their lowest to highest value'] : []),
  ];
  return topLevel(plan, rows, panels, notes);
}

/**
 * Each metric against the metric on x, one line per combination of the swept axes but `along`,
 * through its points in the order of `along`, each labelled with its value of `along`. Each
 * axis is logarithmic where its values span a factor of 10 or more.
 */
function metricXSpec(plan: PlanOutline, rows: ChartRow[]): TopLevelSpec {
  const along = plan.chart?.along as string;
  const xMetric = drawnMetric(namedMetric(plan.chart?.x as string));
  const others = plan.axes.filter((a) => a !== along && a !== REPEAT_AXIS);
  const xOf = new Map(rows.filter((r) => r.metric === xMetric.label).map((r) => [JSON.stringify([r.series, r.x]), r.value]));
  const pairs = rows
    .filter((r) => r.metric !== xMetric.label && xOf.has(JSON.stringify([r.series, r.x])))
    .map((r) => ({ ...r, label: String(r.x), xValue: xOf.get(JSON.stringify([r.series, r.x])) as number }));
  const metrics = panelMetrics(plan).filter((m) => m.label !== xMetric.label && pairs.some((p) => p.metric === m.label));
  const seriesNames = seriesNamesOf(pairs);
  const color = others.length === 0 ? { value: '#1f77b4' } : seriesColor(others.join(', '), seriesNames, metrics.length);
  // Room for the labels beside the points at the ends of each axis.
  const autoScale = (values: number[]) => {
    const positive = values.filter((v) => v > 0);
    const isLog = positive.length === values.length && values.length > 0 && Math.max(...positive) / Math.min(...positive) >= 10;
    return readableScale(values, { margin: 0.08, ...(isLog ? { log: 10 } : {}) });
  };
  // One panel gets the width of two.
  const [width, height] = metrics.length === 1 ? [2 * PANEL_WIDTH, Math.round(1.4 * PANEL_HEIGHT)] : [PANEL_WIDTH, PANEL_HEIGHT];
  const yAxis = { title: null, minExtent: Y_AXIS_EXTENT, maxExtent: Y_AXIS_EXTENT };
  const panels = metrics.map((metric) => {
    const own = pairs.filter((p) => p.metric === metric.label);
    const x = { field: 'xValue', type: 'quantitative' as const, title: xMetric.label, scale: autoScale(own.map((p) => p.xValue)) };
    const y = { field: 'value', type: 'quantitative' as const, axis: yAxis, scale: autoScale(own.map((p) => p.value)) };
    return {
      title: metric.label,
      width,
      height,
      transform: [{ filter: { field: 'metric', equal: metric.label } }],
      layer: [
        {
          mark: { type: 'line' as const, point: { filled: true, size: 30 } },
          encoding: {
            x,
            y,
            color,
            detail: { field: 'series', type: 'nominal' as const },
            order: { field: 'order', type: 'quantitative' as const },
          },
        },
        {
          mark: { type: 'text' as const, align: 'right' as const, baseline: 'bottom' as const, dx: -3, dy: -2, fontSize: 9 },
          encoding: { x, y, text: { field: 'label' }, color },
        },
      ],
    };
  });
  const notes = [
    `against ${xMetric.label}`,
    ...(others.length > 0 ? [`one line per ${others.join(', ')}`] : []),
    `points labelled with ${along}`,
    ...(plan.axes.includes(REPEAT_AXIS) ? ['means of the repeats'] : []),
  ];
  return topLevel(plan, pairs, panels, notes);
}

/** The chart as SVG text, or null when there is nothing to draw against. */
export async function renderChart(plan: PlanOutline, points: OutlinePoint[], byId: Map<string, PointRecord>): Promise<string | null> {
  const spec = chartSpec(plan, points, byId);
  if (spec === null) return null;
  return renderSvg(spec);
}
