import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { orderStatistics, percentileSorted, summarize } from '../src/core/stats.js';

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

  it('gives order statistics equal to a full sort for any values, with many repeats', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: 0, max: 5 }), fc.double({ min: -1e6, max: 1e6, noNaN: true })), {
          minLength: 1,
          maxLength: 3000,
        }),
        (values) => {
          const sorted = Float64Array.from(values).sort();
          const s = summarize(values);
          const expected = [1, 5, 10, 25, 50, 75, 90, 95, 99].map((q) => percentileSorted(sorted, q));
          expect([s.p1, s.p5, s.p10, s.p25, s.p50, s.p75, s.p90, s.p95, s.p99]).toEqual(expected);
          expect(s.min).toBe(sorted[0]);
          expect(s.max).toBe(sorted[sorted.length - 1]);
        },
      ),
      { numRuns: 300, seed: 3 },
    );
  });

  it('finds order statistics equal to a full sort, for negative, zero, repeated and extreme values', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(fc.oneof(fc.constantFrom(0, -0, 1e-300, -1e-300, 6.83, 6.83, 1e300, -5), fc.double({ noNaN: true })), {
            minLength: 1,
            maxLength: 5000,
          }),
          fc.array(fc.constantFrom(0, -0), { minLength: 1, maxLength: 600 }),
          fc.array(fc.constantFrom(2.5, 2.5000000000000004), { minLength: 1, maxLength: 600 }),
          // One value bit for bit (the selection returns it without looking further).
          fc.array(fc.constant(12.25), { minLength: 300, maxLength: 2000 }),
          // Values sharing their top digits (the selection starts at the first digit that differs),
          // of either sign.
          fc.array(
            fc.integer({ min: 0, max: 4096 }).map((k) => 12.0625 + k * 2 ** -40),
            { minLength: 300, maxLength: 3000 },
          ),
          fc.array(
            fc.integer({ min: 0, max: 100000 }).map((k) => -3.5 - k * 1e-9),
            { minLength: 300, maxLength: 3000 },
          ),
        ),
        fc.array(fc.nat(), { minLength: 1, maxLength: 20 }),
        (values, picks) => {
          const a = Float64Array.from(values);
          const sorted = Float64Array.from(values).sort();
          const ranks = Array.from(new Set(picks.map((p) => p % a.length))).sort((x, y) => x - y);
          expect(orderStatistics(a, ranks)).toEqual(ranks.map((r) => sorted[r]));
          expect(a).toEqual(Float64Array.from(values));
        },
      ),
      { numRuns: 300, seed: 5 },
    );
  });
});
