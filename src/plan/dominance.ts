/**
 * Dominated candidates (docs/planning.md, "Pruning"). Candidate A dominates B when A costs no
 * more per hour and sustains a higher rate within the SLOs: then every target B meets, A meets
 * for no more money, and A's cost per output token is lower. B is never the best, for any target
 * and in "as much as possible" mode.
 *
 * The search knows bounds, not rates: `lo`, a rate that met the SLOs (the max rate is at least
 * lo), and `hi`, one that did not (the max rate is below hi; rate-search.ts). So A dominates B for
 * certain once cost(A) <= cost(B) and lo(A) >= hi(B): max(B) < hi(B) <= lo(A) <= max(A). B's search
 * stops there. Later replays of A only raise lo(A), and if A is itself pruned by C, C dominates B
 * too (cost(C) <= cost(A) <= cost(B), lo(C) >= hi(A) > lo(A) >= hi(B)), so a pruning is never undone.
 */

export interface RateBounds {
  costPerHour: number;
  /**
   * Only a candidate of the same group prunes: the worker layout, so that each layout's search
   * runs to its own frontier and the two can be set side by side (docs/planning.md).
   */
  group?: string;
  /** Highest rate known to meet the SLOs (0: none). */
  lo: number;
  /** Lowest rate known not to (Infinity: none). */
  hi: number;
}

/**
 * The index of a candidate of `b`'s group that dominates `b` for certain, or null: the cheapest
 * such, then the one with the highest lo, then the first in plan order.
 */
export function dominatorOf(b: number, bounds: readonly RateBounds[]): number | null {
  const target = bounds[b];
  if (!Number.isFinite(target.hi)) return null;
  let found: number | null = null;
  for (let a = 0; a < bounds.length; a++) {
    if (a === b) continue;
    const other = bounds[a];
    if (other.group !== target.group || other.lo <= 0 || other.costPerHour > target.costPerHour || other.lo < target.hi) continue;
    if (
      found === null ||
      other.costPerHour < bounds[found].costPerHour ||
      (other.costPerHour === bounds[found].costPerHour && other.lo > bounds[found].lo)
    ) {
      found = a;
    }
  }
  return found;
}

/**
 * After the search: the candidate that dominates `b` on the rates found (`rates[i]`, null for a
 * candidate with none), or null. A dominates B when cost(A) <= cost(B) and rate(A) >= rate(B) with
 * one of the two strict. With `groups`, only a candidate of `b`'s group counts.
 */
export function dominatorByRates(
  b: number,
  costs: readonly number[],
  rates: ReadonlyArray<number | null>,
  groups?: readonly string[],
): number | null {
  const rateB = rates[b];
  if (rateB === null) return null;
  let found: number | null = null;
  for (let a = 0; a < costs.length; a++) {
    const rateA = rates[a];
    if (a === b || rateA === null || (groups !== undefined && groups[a] !== groups[b])) continue;
    if (costs[a] > costs[b] || rateA < rateB || (costs[a] === costs[b] && rateA === rateB)) continue;
    if (found === null || costs[a] < costs[found] || (costs[a] === costs[found] && rateA > (rates[found] as number))) found = a;
  }
  return found;
}
