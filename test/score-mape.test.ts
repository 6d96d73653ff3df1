import { describe, expect, it } from 'vitest';
import { apeOf, groupRows, scorePairs, summarizeRows } from '../src/score/mape.js';
import { parseMetricList, parseMetricName } from '../src/score/metric-names.js';
import { pairPoints, selectPoints } from '../src/score/pair.js';
import type { PointKey, ScorePoint } from '../src/score/points.js';
import { buildScore, checkLimits } from '../src/score/score-result.js';

const TTFT = parseMetricName('time_to_first_token.avg');

function point(source: string, key: PointKey, ttft: number | undefined, extra: Record<string, Record<string, number>> = {}): ScorePoint {
  return { source, key, metrics: { ...(ttft === undefined ? {} : { time_to_first_token: { avg: ttft } }), ...extra } };
}

/** Two curves (isl 1024 and 8192) against the same measured load points. */
function example() {
  const sim = [
    point('s1', { concurrency: 1, isl: 1024 }, 10),
    point('s2', { concurrency: 2, isl: 1024 }, 22),
    point('s4', { concurrency: 4, isl: 1024 }, 50),
    point('s8', { concurrency: 8, isl: 8192 }, 150),
    point('s9', { concurrency: 16, isl: 8192 }, 300),
  ];
  const measured = [
    point('m1', { concurrency: 1, isl: 1024 }, 10),
    point('m2', { concurrency: 2, isl: 1024 }, 20),
    point('m4', { concurrency: 4, isl: 1024 }, 40),
    point('m8', { concurrency: 8, isl: 8192 }, 100),
    point('m16', { concurrency: 16, isl: 8192 }, 250),
  ];
  return { sim, measured };
}

describe('APE, MAPE and the shape error, computed by hand', () => {
  it('scores one point: signed error and absolute percentage error', () => {
    expect(apeOf(110, 100)).toEqual({ error: 10, ape: 10, note: null });
    expect(apeOf(90, 100)).toEqual({ error: -10, ape: 10, note: null });
    expect(apeOf(5, 0)).toEqual({ error: 5, ape: null, note: 'measured is 0' });
    expect(apeOf(5, null)).toEqual({ error: null, ape: null, note: 'no measured value' });
    expect(apeOf(undefined, 5)).toEqual({ error: null, ape: null, note: 'no simulated value' });
  });

  it('gives MAPE as the mean APE over points and the shape error from each curve anchor', () => {
    const { sim, measured } = example();
    const paired = pairPoints(sim, measured);
    expect(paired.matchKeys).toEqual(['concurrency', 'isl']);
    expect(paired.loadKey).toBe('concurrency');
    const rows = scorePairs(paired.pairs, [TTFT], paired.matchKeys, paired.loadKey);
    // Rows ordered by curve (isl), then load.
    expect(rows.map((row) => row.key.concurrency)).toEqual([1, 2, 4, 8, 16]);
    expect(rows.map((row) => row.ape)).toEqual([0, 10, 25, 50, 20]);
    expect(rows.map((row) => row.error)).toEqual([0, 2, 10, 50, 50]);
    // isl 1024: anchor c1, sim ratios 2.2 and 5 against measured 2 and 4 -> 10 % and 25 %.
    // isl 8192: anchor c8, sim ratio 2 against measured 2.5 -> 20 %.
    expect(rows.map((row) => row.isAnchor)).toEqual([true, false, false, true, false]);
    expect(rows[1].shapeApe).toBeCloseTo(10, 12);
    expect(rows[2].shapeApe).toBeCloseTo(25, 12);
    expect(rows[4].shapeApe).toBeCloseTo(20, 12);
    const summary = summarizeRows(rows);
    expect(summary.mape).toBeCloseTo((0 + 10 + 25 + 50 + 20) / 5, 12);
    expect(summary.shapeError).toBeCloseTo((10 + 25 + 20) / 3, 12);
    expect(summary.points).toBe(5);
    expect(summary.maxApe).toBe(50);
  });

  it('gives a zero shape error to a simulator off by a constant factor', () => {
    const measured = [1, 2, 4, 8].map((c) => point(`m${c}`, { concurrency: c }, 10 * c));
    const sim = [1, 2, 4, 8].map((c) => point(`s${c}`, { concurrency: c }, 20 * c));
    const paired = pairPoints(sim, measured);
    const summary = summarizeRows(scorePairs(paired.pairs, [TTFT], paired.matchKeys, paired.loadKey));
    expect(summary.mape).toBe(100);
    expect(summary.shapeError).toBe(0);
  });

  it('computes group MAPEs from their points, not by averaging sub-MAPEs', () => {
    const { sim, measured } = example();
    const paired = pairPoints(sim, measured);
    const rows = scorePairs(paired.pairs, [TTFT], paired.matchKeys, paired.loadKey);
    const groups = groupRows(rows, ['isl']);
    expect(groups.map((group) => group.key)).toEqual([{ isl: 1024 }, { isl: 8192 }]);
    const small = summarizeRows(groups[0].rows);
    const large = summarizeRows(groups[1].rows);
    expect(small.mape).toBeCloseTo(35 / 3, 12);
    expect(large.mape).toBeCloseTo(35, 12);
    expect(small.shapeError).toBeCloseTo(17.5, 12);
    expect(large.shapeError).toBeCloseTo(20, 12);
    // Overall: 105 / 5 = 21, not the mean of the group MAPEs (23.33).
    expect(summarizeRows(rows).mape).toBeCloseTo(21, 12);
    const result = buildScore({
      paired,
      metrics: [TTFT],
      groupBy: ['isl'],
      skippedSim: [],
      inputs: { sim: 'sim', sim_label: 'sim', measured: ['m'], measured_notes: [] },
    });
    expect(result.metrics['time_to_first_token.avg'].mape).toBeCloseTo(21, 12);
    expect(result.metrics['time_to_first_token.avg'].groups?.map((group) => [group.key, group.points])).toEqual([
      [{ isl: 1024 }, 3],
      [{ isl: 8192 }, 2],
    ]);
  });

  it('reports a zero or missing measured value and leaves it out of MAPE', () => {
    const sim = [1, 2, 4].map((c) => point(`s${c}`, { concurrency: c }, 10));
    const measured = [point('m1', { concurrency: 1 }, 0), point('m2', { concurrency: 2 }, undefined), point('m4', { concurrency: 4 }, 8)];
    const paired = pairPoints(sim, measured);
    const rows = scorePairs(paired.pairs, [TTFT], paired.matchKeys, paired.loadKey);
    expect(rows.map((row) => row.note)).toEqual(['measured is 0', 'no measured value', null]);
    const summary = summarizeRows(rows);
    expect(summary).toMatchObject({ mape: 25, points: 1, unscored: 2, shapeError: null });
  });

  it('anchors the shape error at the lowest scored load point of a curve', () => {
    const sim = [1, 2, 4].map((c) => point(`s${c}`, { concurrency: c }, c * 10));
    const measured = [point('m1', { concurrency: 1 }, undefined), point('m2', { concurrency: 2 }, 20), point('m4', { concurrency: 4 }, 50)];
    const paired = pairPoints(sim, measured);
    const rows = scorePairs(paired.pairs, [TTFT], paired.matchKeys, paired.loadKey);
    expect(rows.map((row) => row.isAnchor)).toEqual([false, true, false]);
    // 40/20 = 2 against 50/20 = 2.5 -> 20 %.
    expect(rows[2].shapeApe).toBeCloseTo(20, 12);
  });
});

describe('matching points', () => {
  it('matches on the keys both sides have and lists what matches nothing', () => {
    const sim = [1, 2, 4, 8].map((c) => point(`s${c}`, { concurrency: c, isl: 1024, osl: 128 }, c));
    const measured = [2, 4, 8, 16].map((c) => point(`m${c}`, { concurrency: c }, c));
    const paired = pairPoints(sim, measured);
    expect(paired.matchKeys).toEqual(['concurrency']);
    expect(paired.pairs.map((pair) => [pair.sim.source, pair.measured.source])).toEqual([
      ['s2', 'm2'],
      ['s4', 'm4'],
      ['s8', 'm8'],
    ]);
    expect(paired.unmatched.sim.map((p) => p.source)).toEqual(['s1']);
    expect(paired.unmatched.measured.map((p) => p.source)).toEqual(['m16']);
    expect(paired.variantKeys).toEqual([]);
  });

  it('scores several simulated variants against one measured point and names the key that tells them apart', () => {
    const sim = [1, 4].flatMap((workers) =>
      [1, 2].map((c) => point(`s${workers}-${c}`, { concurrency: c, 'engine.detokenization.workers': workers }, c * workers)),
    );
    const measured = [1, 2].map((c) => point(`m${c}`, { concurrency: c }, c));
    const paired = pairPoints(sim, measured);
    expect(paired.pairs).toHaveLength(4);
    expect(paired.variantKeys).toEqual(['engine.detokenization.workers']);
    const rows = scorePairs(paired.pairs, [TTFT], [...paired.matchKeys, ...paired.variantKeys], paired.loadKey);
    const groups = groupRows(rows, ['engine.detokenization.workers']);
    expect(groups.map((group) => summarizeRows(group.rows).mape)).toEqual([0, 300]);
    // Each variant is its own curve for the shape error.
    expect(rows.filter((row) => row.isAnchor)).toHaveLength(2);
  });

  it('refuses two measured points with the same keys, naming both', () => {
    const sim = [point('s', { concurrency: 1 }, 1)];
    const measured = [point('a.csv:2', { concurrency: 1 }, 1), point('a.csv:3', { concurrency: 1 }, 2)];
    expect(() => pairPoints(sim, measured)).toThrow(/a\.csv:2 and a\.csv:3/);
  });

  it('refuses to match when the sides share no key', () => {
    expect(() => pairPoints([point('s', { concurrency: 1 }, 1)], [point('m', { request_rate: 1 }, 1)])).toThrow(/no key to match on/);
  });

  it('selects points by key value, numbers compared as numbers', () => {
    const points = [
      point('a', { concurrency: 1, isl: 1024 }, 1),
      point('b', { concurrency: 2, isl: 8192 }, 1),
      point('c', { concurrency: 2 }, 1),
    ];
    expect(selectPoints(points, [{ column: 'isl', value: '1024.0' }]).map((p) => p.source)).toEqual(['a', 'c']);
  });
});

describe('metric names and limits', () => {
  it('parses tags, statistics, aliases and single values', () => {
    expect(parseMetricName('request_latency.p99')).toMatchObject({ id: 'request_latency.p99', tag: 'request_latency', stat: 'p99' });
    expect(parseMetricName('ttft.p90').id).toBe('time_to_first_token.p90');
    expect(parseMetricName('tpot').id).toBe('inter_token_latency.avg');
    expect(parseMetricName('output_token_throughput')).toMatchObject({ id: 'output_token_throughput', isSingle: true });
    expect(parseMetricName('output_token_throughput.avg').id).toBe('output_token_throughput');
    expect(() => parseMetricName('output_token_throughput.p50')).toThrow(/single value/);
    expect(() => parseMetricName('time_to_first_token.p42')).toThrow(/unknown statistic "p42"/);
    expect(parseMetricList(['ttft,ttft.avg', 'itl']).map((m) => m.id)).toEqual(['time_to_first_token.avg', 'inter_token_latency.avg']);
  });

  it('fails a limit above the MAPE, naming the metric', () => {
    const { sim, measured } = example();
    const result = buildScore({
      paired: pairPoints(sim, measured),
      metrics: [TTFT],
      groupBy: [],
      skippedSim: [],
      inputs: { sim: 'sim', sim_label: 'sim', measured: ['m'], measured_notes: [] },
    });
    const [failed] = checkLimits(result, [{ metric: 'time_to_first_token.avg', maxMape: 20 }]);
    expect(failed.passed).toBe(false);
    expect(failed.message).toBe('time_to_first_token.avg: MAPE 21.00 % is above the limit 20 %');
    expect(checkLimits(result, [{ metric: 'time_to_first_token.avg', maxMape: 21 }])[0].passed).toBe(true);
    expect(checkLimits(result, [{ metric: 'request_latency.avg', maxMape: 5 }])[0].message).toMatch(/no point was scored/);
  });
});
