import { describe, expect, it } from 'vitest';
import { percentileSorted, summarize } from '../src/core/stats.js';

// Expected values printed by numpy 1.x: np.percentile(x, q) (default linear) and x.std() (population).
const CASES = [
  {
    values: [10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
    pct: [1.09, 1.45, 1.9, 3.25, 5.5, 7.75, 9.1, 9.549999999999999, 9.91],
    std: 2.8722813232690143,
    avg: 5.5,
  },
  { values: [3.5], pct: [3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5], std: 0, avg: 3.5 },
  {
    values: [0.1, 7, 2.25, 100, -3, 42, 9.75],
    pct: [-2.814, -2.07, -1.1399999999999997, 1.175, 7.0, 25.875, 65.20000000000002, 82.59999999999997, 96.51999999999997],
    std: 34.54052189908578,
    avg: 22.585714285714285,
  },
];

describe('statistics match numpy', () => {
  it.each(CASES)('percentiles, mean and population std of %j', ({ values, pct, std, avg }) => {
    const s = summarize(values);
    const got = [s.p1, s.p5, s.p10, s.p25, s.p50, s.p75, s.p90, s.p95, s.p99];
    got.forEach((g, i) => expect(g).toBeCloseTo(pct[i], 12));
    expect(s.std).toBeCloseTo(std, 12);
    expect(s.avg).toBeCloseTo(avg, 12);
    expect(s.count).toBe(values.length);
    expect(s.min).toBe(Math.min(...values));
    expect(s.max).toBe(Math.max(...values));
  });

  it('interpolates between the closest ranks', () => {
    expect(percentileSorted([0, 10], 25)).toBe(2.5);
    expect(percentileSorted([1, 2, 3, 4], 50)).toBe(2.5);
  });

  it('gives NaN statistics and count 0 for no values', () => {
    const s = summarize([]);
    expect(s.count).toBe(0);
    expect(s.avg).toBeNaN();
  });

  it('does not depend on the order values come in', () => {
    const a = summarize([5, 1, 4, 2, 3]);
    const b = summarize([1, 2, 3, 4, 5]);
    expect(a).toEqual(b);
  });
});
