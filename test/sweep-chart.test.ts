import { describe, expect, it } from 'vitest';
import { chartRows, chartSpec, renderChart, valueLabels } from '../src/sweep/chart.js';
import type { PlanOutline } from '../src/sweep/plan.js';
import type { PointRecord } from '../src/sweep/results.js';

type Summary = NonNullable<PointRecord['summary']>;

function summaryOf(ttft: number, throughput: number): Summary {
  return {
    metrics: { time_to_first_token: { avg: ttft, p90: 2 * ttft }, inter_token_latency: { avg: 2 }, request_latency: { avg: 50 } },
    run: { output_token_throughput: throughput },
  } as never;
}

function recordsOf(plan: PlanOutline, summary: (index: number) => Summary, failed: number[] = []): Map<string, PointRecord> {
  return new Map(
    plan.points.map((p) => [
      p.id,
      {
        id: p.id,
        overrides: p.overrides,
        status: failed.includes(p.index) ? ('failed' as const) : ('ok' as const),
        error: null,
        summary: failed.includes(p.index) ? null : summary(p.index),
      },
    ]),
  );
}

interface Panel {
  title: string;
  layer: Array<{
    mark: { type: string };
    encoding: Record<string, { field?: string; title?: string; scale?: { type?: string }; legend?: unknown }>;
  }>;
}

const plan2: PlanOutline = {
  name: 'chart-test',
  axes: ['traffic.load.concurrency', 'engine.detokenization.workers'],
  log2Axes: ['traffic.load.concurrency'],
  points: [1, 2, 4].flatMap((c, i) =>
    [1, 4].map((w, j) => ({
      index: i * 2 + j,
      id: `id-${c}-${w}`,
      overrides: { 'traffic.load.concurrency': c, 'engine.detokenization.workers': w },
    })),
  ),
};
const byId2 = recordsOf(plan2, (i) => summaryOf(10 + i, 100 * (i + 1)), [5]);

describe('sweep.svg', () => {
  it('draws each headline metric against the first axis, one line per value of the others, ok points only', () => {
    const rows = chartRows(plan2, plan2.points, byId2) ?? [];
    expect(new Set(rows.map((r) => r.metric)).size).toBe(5);
    expect(new Set(rows.map((r) => r.series))).toEqual(new Set(['1', '4']));
    // Point 5 (concurrency 4, 4 workers) failed: nothing drawn for it.
    expect(rows.filter((r) => r.x === 4 && r.series === '4')).toHaveLength(0);
    const ttft = rows.filter((r) => r.metric === 'TTFT avg (ms)').map((r) => [r.x, r.series, r.value]);
    expect(ttft).toEqual([
      [1, '1', 10],
      [1, '4', 11],
      [2, '1', 12],
      [2, '4', 13],
      [4, '1', 14],
    ]);
    const spec = chartSpec(plan2, plan2.points, byId2) as unknown as { concat: Panel[]; columns: number };
    const line = spec.concat[0].layer[0];
    expect(line.mark.type).toBe('line');
    expect(line.encoding.x.scale?.type).toBe('log');
    expect(line.encoding.color.title).toBe('engine.detokenization.workers');
  });

  it('gives every metric a panel of its own with its own x axis: no empty panel under an odd count', () => {
    const spec = chartSpec(plan2, plan2.points, byId2) as unknown as { concat: Panel[]; columns: number; facet?: unknown };
    expect(spec.facet).toBeUndefined();
    expect(spec.columns).toBe(2);
    expect(spec.concat.map((p) => p.title)).toEqual([
      'TTFT avg (ms)',
      'TTFT p90 (ms)',
      'ITL avg (ms)',
      'request latency avg (ms)',
      'output token throughput (tokens/sec)',
    ]);
    // A metric no point has gets no panel (here: no throughput anywhere).
    const noThroughput = recordsOf(plan2, (i) => ({ ...summaryOf(10 + i, 0), run: {} }) as never);
    const fewer = chartSpec(plan2, plan2.points, noThroughput) as unknown as { concat: Panel[] };
    expect(fewer.concat).toHaveLength(4);
  });

  it('keeps every legend entry whole: no label limit, no entry limit, y axes of one width', () => {
    const spec = chartSpec(plan2, plan2.points, byId2) as unknown as { concat: Panel[] };
    const legend = spec.concat[0].layer[0].encoding.color.legend as Record<string, unknown>;
    expect(legend).toMatchObject({ labelLimit: 0, symbolLimit: 0, orient: 'bottom' });
    const extents = spec.concat.map((p) => JSON.stringify((p.layer[0].encoding.y as { axis?: unknown }).axis));
    expect(new Set(extents).size).toBe(1);
    expect(extents[0]).toContain('"minExtent":52');
  });

  it('labels mapping values by the fields in which they differ, never [object Object]', async () => {
    const sources = [
      { type: 'synthetic', input_tokens: 1024, output_tokens: 256 },
      { type: 'synthetic', input_tokens: 4096, output_tokens: 256 },
    ];
    const plan: PlanOutline = {
      name: 'mapping',
      axes: ['traffic.source', 'traffic.load.concurrency'],
      log2Axes: [],
      points: sources.flatMap((source, i) =>
        [1, 8].map((c, j) => ({
          index: i * 2 + j,
          id: `m-${i}-${c}`,
          overrides: { 'traffic.source': source, 'traffic.load.concurrency': c },
        })),
      ),
    };
    const rows =
      chartRows(
        plan,
        plan.points,
        recordsOf(plan, (i) => summaryOf(10 + i, 100)),
      ) ?? [];
    expect([...new Set(rows.map((r) => r.x))]).toEqual(['input_tokens=1024', 'input_tokens=4096']);
    const svg =
      (await renderChart(
        plan,
        plan.points,
        recordsOf(plan, (i) => summaryOf(10 + i, 100)),
      )) ?? '';
    expect(svg).not.toContain('[object Object]');
    expect(svg).toContain('input_tokens=4096');
  });

  it('labels nested mappings by dotted paths, and several differing fields together', () => {
    const labels = valueLabels([
      { capacity: { type: 'fixed', blocks: 100 }, block_size: 16 },
      { capacity: { type: 'fixed', blocks: 200 }, block_size: 32 },
      'max',
    ]);
    expect([...labels.values()]).toEqual(['capacity.blocks=100, block_size=16', 'capacity.blocks=200, block_size=32', 'max']);
    // One mapping among scalars: all its fields.
    expect([...valueLabels(['max', { type: 'fixed', blocks: 100 }]).values()]).toEqual(['max', 'type=fixed, blocks=100']);
    expect([...valueLabels([1, 'a', true]).values()]).toEqual(['1', 'a', 'true']);
  });

  it('draws repeats as one line through their mean with a capped bar from their lowest to their highest value', () => {
    const plan: PlanOutline = {
      name: 'repeats',
      axes: ['traffic.load.concurrency', 'repeat'],
      log2Axes: [],
      points: [1, 2].flatMap((c, i) =>
        [0, 1, 2].map((r) => ({ index: i * 3 + r, id: `r-${c}-${r}`, overrides: { 'traffic.load.concurrency': c, repeat: r } })),
      ),
    };
    // TTFT of the repeats at concurrency 1: 10, 13, 19 (mean 14); at 2: 20, 20, 23 (mean 21).
    const ttft = [10, 13, 19, 20, 20, 23];
    const byId = recordsOf(plan, (i) => summaryOf(ttft[i], 100));
    const rows = (chartRows(plan, plan.points, byId) ?? []).filter((r) => r.metric === 'TTFT avg (ms)');
    expect(rows.map((r) => ({ x: r.x, series: r.series, value: r.value, low: r.low, high: r.high, n: r.n }))).toEqual([
      { x: 1, series: 'all', value: 14, low: 10, high: 19, n: 3 },
      { x: 2, series: 'all', value: 21, low: 20, high: 23, n: 3 },
    ]);
    const spec = chartSpec(plan, plan.points, byId) as unknown as { concat: Panel[] };
    expect(spec.concat[0].layer.map((l) => l.mark.type)).toEqual(['rule', 'tick', 'tick', 'line']);
    expect(spec.concat[0].layer.map((l) => l.encoding.y.field)).toEqual(['low', 'low', 'high', 'value']);
    // Without repeats, no bar.
    expect((chartSpec(plan2, plan2.points, byId2) as unknown as { concat: Panel[] }).concat[0].layer).toHaveLength(1);
  });

  it('renders the same SVG every time, whatever order the points come in', async () => {
    const a = await renderChart(plan2, plan2.points, byId2);
    const b = await renderChart(plan2, [...plan2.points].reverse(), byId2);
    expect(a).toMatch(/^<svg /);
    expect(a).toContain('TTFT avg (ms)');
    expect(b).toBe(a);
  });

  it('has no chart without a swept key to draw against', () => {
    expect(chartSpec({ ...plan2, axes: ['repeat'] }, plan2.points, byId2)).toBeNull();
  });
});
