/**
 * `sweep.svg`: each headline metric against the first swept axis (the first grid key, else the
 * first zip key), one line per combination of the other axes. Vega-Lite compiled to Vega and
 * rendered headless to SVG; only points with status ok are drawn.
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
  { label: 'output token throughput (tokens/s)', get: (s) => s.run?.output_token_throughput },
];

interface ChartRow {
  x: number | string;
  series: string;
  metric: string;
  value: number;
  order: number;
}

/** Last path segments (`workers`), or the full key where two axes would share one. */
function shortenKeys(keys: string[]): string[] {
  const last = keys.map((k) => k.slice(k.lastIndexOf('.') + 1));
  return keys.map((k, i) => (last.filter((l) => l === last[i]).length > 1 ? k : last[i]));
}

/** One line per combination of the other axes: the bare value for one axis, `key=value, ...` for several. */
function seriesLabel(others: string[], shortKeys: string[], overrides: Record<string, unknown>): string {
  if (others.length === 0) return 'all';
  const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
  if (others.length === 1) return text(overrides[others[0]]);
  return others.map((k, i) => `${shortKeys[i]}=${text(overrides[k])}`).join(', ');
}

/** The Vega-Lite spec, or null when the plan has no swept axis to draw against. */
export function chartSpec(plan: PlanOutline, points: OutlinePoint[], byId: Map<string, PointRecord>): TopLevelSpec | null {
  const xAxis = plan.axes.find((a) => a !== 'repeat');
  if (xAxis === undefined) return null;
  const others = plan.axes.filter((a) => a !== xAxis);
  const shortKeys = shortenKeys(others);
  const ordered = [...points].sort((a, b) => a.index - b.index);
  const xValues = ordered.map((p) => p.overrides[xAxis]);
  const isNumeric = xValues.every((v) => typeof v === 'number' && Number.isFinite(v));
  const isLog2 = isNumeric && plan.log2Axes.includes(xAxis) && xValues.every((v) => (v as number) > 0);

  const rows: ChartRow[] = [];
  for (const point of ordered) {
    const record = byId.get(point.id);
    if (record === undefined || record.status !== 'ok' || record.summary === null) continue;
    const x = point.overrides[xAxis];
    const series = seriesLabel(others, shortKeys, point.overrides);
    for (const metric of HEADLINE_METRICS) {
      const value = metric.get(record.summary);
      if (typeof value !== 'number' || !Number.isFinite(value)) continue;
      rows.push({ x: isNumeric ? (x as number) : String(x), series, metric: metric.label, value, order: point.index });
    }
  }

  const xEncoding = isNumeric
    ? {
        field: 'x',
        type: 'quantitative' as const,
        title: xAxis,
        scale: isLog2 ? { type: 'log' as const, base: 2 } : { zero: false },
        axis: isLog2 ? { values: [...new Set(xValues as number[])] } : {},
      }
    : { field: 'x', type: 'ordinal' as const, title: xAxis, sort: { field: 'order' } };

  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: plan.name,
    data: { values: rows },
    facet: { field: 'metric', type: 'nominal', title: null, sort: HEADLINE_METRICS.map((m) => m.label) },
    columns: 2,
    spec: {
      width: 320,
      height: 200,
      mark: { type: 'line', point: true },
      encoding: {
        x: xEncoding,
        y: { field: 'value', type: 'quantitative', title: null },
        ...(others.length === 0
          ? {}
          : {
              color: {
                field: 'series',
                type: 'nominal',
                title: others.join(', '),
                sort: null,
                legend: { labelLimit: 360, titleLimit: 360 },
              },
            }),
        order: { field: 'order', type: 'quantitative' },
      },
    },
    resolve: { scale: { y: 'independent' } },
  };
}

/** The chart as SVG text, or null when there is nothing to draw against. */
export async function renderChart(plan: PlanOutline, points: OutlinePoint[], byId: Map<string, PointRecord>): Promise<string | null> {
  const spec = chartSpec(plan, points, byId);
  if (spec === null) return null;
  return renderSvg(spec);
}
