import { describe, expect, it } from 'vitest';
import { apeChartSpec, metricChartSpec } from '../src/score/charts.js';
import { parseMetricList } from '../src/score/metric-names.js';
import { pairPoints } from '../src/score/pair.js';
import type { PointKey, ScorePoint } from '../src/score/points.js';
import { buildScore, type ScoreResult } from '../src/score/score-result.js';

function point(source: string, key: PointKey, ttft: number | null, throughput?: number): ScorePoint {
  return {
    source,
    key,
    metrics: {
      ...(ttft === null ? {} : { time_to_first_token: { avg: ttft } }),
      ...(throughput === undefined ? {} : { output_token_throughput: { avg: throughput } }),
    },
  };
}

/** A fitted model swept at 1..128, measured at 4..64; 4, 8 and 16 were its training points. */
function quickstartLike(withBaseline = false): ScoreResult {
  const sim = [1, 2, 4, 8, 16, 32, 64, 128].map((c) => point(`s${c}`, { concurrency: c, isl: 1024 }, 100 + c, 30 * c));
  const measured = [4, 8, 16, 32, 64].map((c) => point(`m${c}`, { concurrency: c }, 110 + c));
  const training = measured.slice(0, 3);
  const scored = measured.slice(3);
  const baseline = sim.map((p) => point(`b${p.source}`, p.key, 2 * (p.metrics.time_to_first_token?.avg ?? 0)));
  const paired = pairPoints(sim, scored);
  return buildScore({
    paired,
    metrics: parseMetricList(['ttft', 'throughput']),
    groupBy: [],
    skippedSim: [],
    ...(withBaseline ? { baseline: { paired: pairPoints(baseline, scored), skipped: [] } } : {}),
    curves: { sim, training, ...(withBaseline ? { baseline } : {}) },
    inputs: {
      sim: 'sweep',
      sim_label: 'fitted model',
      measured: ['m.csv'],
      measured_notes: [],
      ...(withBaseline ? { baseline: 'before', baseline_label: 'before' } : {}),
    },
  });
}

interface Layer {
  data: { values: Array<{ series: string; load: number; value: number }> };
  mark: { type: string };
  encoding: Record<string, { scale?: { domain?: string[]; range?: string[] }; legend?: unknown; title?: unknown }>;
}
interface MetricSpec {
  title: { text: string; subtitle: string };
  layer: Layer[];
}

describe('score charts', () => {
  it('draws the simulated curve over every load it ran at, the scored points and the training points marked apart', () => {
    const spec = metricChartSpec(quickstartLike(), 'time_to_first_token.avg') as unknown as MetricSpec;
    // The measured points under the curve (where the two agree, the curve's point shows on the measured one).
    const [, points, lines] = spec.layer;
    expect(lines.data.values.map((v) => [v.load, v.value])).toEqual([1, 2, 4, 8, 16, 32, 64, 128].map((c) => [c, 100 + c]));
    expect(points.data.values.map((v) => [v.series, v.load, v.value])).toEqual([
      ['measured, scored', 32, 142],
      ['measured, scored', 64, 174],
      ['measured, training (not scored)', 4, 114],
      ['measured, training (not scored)', 8, 118],
      ['measured, training (not scored)', 16, 126],
    ]);
    expect(points.encoding.shape.scale?.range).toEqual(['circle', 'circle', 'square']);
    expect(points.encoding.color.legend).toMatchObject({ labelLimit: 0, orient: 'bottom' });
    // The subtitle is short: it never makes the chart wider than its plot.
    expect(spec.title.subtitle).toBe('ms against concurrency');
  });

  it('leaves "measured" out of a chart with no measured value, and names its unit on the y axis', () => {
    const spec = metricChartSpec(quickstartLike(), 'output_token_throughput') as unknown as MetricSpec;
    expect(spec.layer).toHaveLength(1);
    expect(spec.layer[0].encoding.color.scale?.domain).toEqual(['fitted model']);
    // Concurrency on a log2 axis, its ticks the loads the curve ran at.
    const x = spec.layer[0].encoding.x as unknown as { scale: { type: string; base: number }; axis: { values: number[] } };
    expect(x.scale).toMatchObject({ type: 'log', base: 2 });
    expect(x.axis.values).toEqual([1, 2, 4, 8, 16, 32, 64, 128]);
    expect(spec.title.subtitle).toBe('no measured values: simulated only');
    expect(spec.layer[0].encoding.y.title).toBe('tokens/sec');
  });

  it('puts both sides of a baseline score in one APE chart on one y scale, labelled by load alone', () => {
    const result = quickstartLike(true);
    const spec = apeChartSpec(result) as unknown as {
      facet: { column: { field: string } };
      resolve: { scale: { y: string } };
      data: { values: Array<{ side: string; label: string; ape: number }> };
      spec: { encoding: { color: { legend: unknown } } };
    };
    expect(spec.facet.column.field).toBe('side');
    expect(spec.resolve.scale.y).toBe('shared');
    expect(spec.data.values.map((v) => [v.side, v.label])).toEqual([
      ['fitted model', 'c32'],
      ['fitted model', 'c64'],
      ['before', 'c32'],
      ['before', 'c64'],
    ]);
    // |132 - 142| / 142 and |264 - 142| / 142.
    expect(spec.data.values[0].ape).toBeCloseTo((10 / 142) * 100, 9);
    expect(spec.data.values[2].ape).toBeCloseTo((122 / 142) * 100, 9);
    expect(spec.spec.encoding.color.legend).toMatchObject({ labelLimit: 0, symbolLimit: 0 });
    // Without a baseline: one chart, no facet.
    expect((apeChartSpec(quickstartLike()) as unknown as { facet?: unknown }).facet).toBeUndefined();
  });
});
