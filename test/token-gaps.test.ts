import { describe, expect, it } from 'vitest';
import { percentileSorted } from '../src/core/stats.js';
import { TokenGapPool } from '../src/core/token-gaps.js';

/** Gaps like a decode loop's: a few pass times repeated, plus a long tail of stalls. */
function gaps(n: number): Float64Array {
  const out = new Float64Array(n);
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const u = x / 2147483648;
    out[i] = u < 0.9 ? 6 + Math.floor(u * 40) * 0.05 : 50 + u * 400;
  }
  return out;
}

describe('pooled token gaps', () => {
  it('is exact below the fold limit, keeping only gaps of requests that end valid', () => {
    const valid = new Set([0, 2]);
    const pool = new TokenGapPool((id) => valid.has(id), 4);
    [1, 2, 3, 4, 5, 6].forEach((g, i) => pool.push(g, i % 3));
    const stats = pool.stats();
    // Requests 0 and 2 own gaps 1, 3, 4, 6.
    expect(stats.count).toBe(4);
    expect(stats.approximate).toBe(false);
    expect(stats.avg).toBe(3.5);
    expect(stats.p50).toBe(3.5);
  });

  it('counts every gap when no owner is tracked (a run without a time cap), exactly and past the fold limit', () => {
    const exact = new TokenGapPool(null, 4);
    [3, 1, 2].forEach((g, i) => exact.push(g, i));
    expect(exact.stats()).toMatchObject({ count: 3, avg: 2, p50: 2, min: 1, max: 3, approximate: false });
    const values = gaps(50_000);
    const folded = new TokenGapPool(null, 1024, 10_000);
    values.forEach((g, i) => folded.push(g, i));
    const stats = folded.stats();
    expect(stats.approximate).toBe(true);
    expect(stats.count).toBe(50_000);
    expect(stats.max).toBe(Math.max(...values));
  });

  it('folds finished requests into a 0.1 % sketch past the limit, keeping avg, min, max, count exact', () => {
    const values = gaps(200_000);
    const owners = (i: number) => i % 1000;
    // Requests 0..899 finish valid; 900..999 are still in flight at every fold and end incomplete.
    const pool = new TokenGapPool((id) => id < 900, 1024, 20_000);
    values.forEach((g, i) => pool.push(g, owners(i)));
    const stats = pool.stats();
    const kept = Float64Array.from(values.filter((_, i) => owners(i) < 900)).sort();
    expect(stats.approximate).toBe(true);
    expect(stats.count).toBe(kept.length);
    expect(stats.min).toBe(kept[0]);
    expect(stats.max).toBe(kept[kept.length - 1]);
    const mean = kept.reduce((a, b) => a + b, 0) / kept.length;
    expect(stats.avg).toBeCloseTo(mean, 9);
    for (const q of [1, 5, 10, 25, 50, 75, 90, 95, 99] as const) {
      const exact = percentileSorted(kept, q);
      const got = stats[`p${q}`];
      // Within the sketch's relative accuracy of a value at the neighbouring ranks.
      const lo = kept[Math.max(0, Math.floor((kept.length - 1) * (q / 100)) - 1)];
      const hi = kept[Math.min(kept.length - 1, Math.ceil((kept.length - 1) * (q / 100)) + 1)];
      expect(got).toBeGreaterThanOrEqual(lo * (1 - 0.0011));
      expect(got).toBeLessThanOrEqual(hi * (1 + 0.0011));
      expect(Math.abs(got - exact) / exact).toBeLessThan(0.05);
    }
  });
});
