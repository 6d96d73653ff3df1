/**
 * The rate search of one candidate (rate-search.ts), the dominance rule (dominance.ts) and the
 * search over many candidates in rounds (search.ts), on oracles whose answers are known: a
 * candidate meets the SLOs at a rate when its (made-up) TTFT p90, rate / capacity x limit, is
 * within the limit, so its true max rate is its capacity.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Candidate } from '../src/plan/candidates.js';
import { dominatorByRates, dominatorOf } from '../src/plan/dominance.js';
import type { Slo } from '../src/plan/plan-file.js';
import { bestOf, candidateRows, rankRows } from '../src/plan/plan-result.js';
import { RateSearch, roundRate } from '../src/plan/rate-search.js';
import { searchCandidates, type CandidateState, type RoundOutcome } from '../src/plan/search.js';
import type { PlanSpec } from '../src/plan/plan-file.js';
import type { PointSummary } from '../src/sweep/point-summary.js';

/** Runs a search against `meets` to its end; returns the rates it tested, in order. */
function runSearch(search: RateSearch, meets: (rate: number) => boolean): number[] {
  const rates: number[] = [];
  for (let rate = search.next(); rate !== null; rate = search.next()) {
    rates.push(rate);
    search.record(rate, meets(rate));
    if (rates.length > 200) throw new Error('the search does not end');
  }
  return rates;
}

describe('rate search', () => {
  it('brackets by doubling, then bisects geometrically to the tolerance (a worked example)', () => {
    // Capacity 5.3 rps, start 4, tolerance 5 %:
    //   4 meets; 8 does not: bracket [4, 8];
    //   sqrt(4 x 8) = 5.657 -> 5.66 (3 digits) does not: [4, 5.66];
    //   sqrt(4 x 5.66) = 4.758 -> 4.76 meets: [4.76, 5.66];
    //   sqrt(4.76 x 5.66) = 5.191 -> 5.19 meets: [5.19, 5.66];
    //   sqrt(5.19 x 5.66) = 5.420 -> 5.42 does not: [5.19, 5.42], 5.42 / 5.19 = 1.0443 <= 1.05: done.
    const search = new RateSearch({ startRps: 4, tolerance: 0.05 });
    expect(runSearch(search, (r) => r <= 5.3)).toEqual([4, 8, 5.66, 4.76, 5.19, 5.42]);
    expect(search.maxRps).toBe(5.19);
    expect(search.hi).toBe(5.42);
  });

  it('halves from a start that breaks the SLOs, and gives up after maxHalvings', () => {
    const search = new RateSearch({ startRps: 8, tolerance: 0.1 });
    // 8, 4, 2 do not meet; 1 does: bracket [1, 2], then sqrt(2) = 1.41 meets, sqrt(1.41 x 2) = 1.68 does not,
    // sqrt(1.41 x 1.68) = 1.539 -> 1.54 meets: 1.68 / 1.54 = 1.09 <= 1.1.
    expect(runSearch(search, (r) => r <= 1.6)).toEqual([8, 4, 2, 1, 1.41, 1.68, 1.54]);
    expect(search.maxRps).toBe(1.54);

    const never = new RateSearch({ startRps: 64, tolerance: 0.05, maxHalvings: 6 });
    expect(runSearch(never, () => false)).toEqual([64, 32, 16, 8, 4, 2, 1]);
    // The default: 10 halvings, down to 1/1024 of the first rate.
    const tested = runSearch(new RateSearch({ startRps: 100, tolerance: 0.05 }), () => false);
    expect(tested).toHaveLength(11);
    expect(tested.at(-1)).toBe(100 / 1024);
    expect(never.maxRps).toBe(0);
  });

  it('rounds rates to the fewest digits that stay inside the bracket', () => {
    expect(roundRate(Math.sqrt(4 * 8), 4, 8)).toBe(5.66);
    expect(roundRate(1.00049, 1, 1.001)).toBe(1.0005);
    fc.assert(
      fc.property(fc.double({ min: 1e-3, max: 1e4, noNaN: true }), fc.double({ min: 1e-6, max: 1, noNaN: true }), (lo, width) => {
        const hi = lo * (1 + width);
        const mid = Math.sqrt(lo * hi);
        const rounded = roundRate(mid, lo, hi);
        return rounded > lo && rounded < hi;
      }),
    );
  });

  it('law: on a monotone oracle, the max rate meets, the next tested rate above it does not, and they are within the tolerance', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.01, max: 1000, noNaN: true }),
        fc.double({ min: 0.02, max: 30, noNaN: true }),
        fc.double({ min: 0.001, max: 0.5, noNaN: true }),
        (start, capacityOverStart, tolerance) => {
          const capacity = start * capacityOverStart;
          const search = new RateSearch({ startRps: start, tolerance });
          const rates = runSearch(search, (r) => r <= capacity);
          expect(search.maxRps).toBeGreaterThan(0);
          expect(search.maxRps).toBeLessThanOrEqual(capacity);
          expect(search.hi).toBeGreaterThan(capacity);
          expect(search.hi / search.maxRps).toBeLessThanOrEqual(1 + tolerance);
          // The next tested rate above the max rate is hi, and it does not meet the SLOs.
          expect(Math.min(...rates.filter((r) => r > search.maxRps))).toBe(search.hi);
        },
      ),
    );
  });

  it('law: on any oracle, the max rate and every lower tested rate meet the SLOs; the next tested rate above does not', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.1, max: 100, noNaN: true }),
        fc.double({ min: 0.01, max: 0.5, noNaN: true }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.double({ min: 0.05, max: 0.95, noNaN: true }),
        (start, tolerance, salt, pass) => {
          // A rate meets the SLOs by a coin flip fixed per rate (hash of the rate and a salt).
          const meets = (r: number) => {
            let h = salt ^ Math.floor(r * 1e6);
            h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
            h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
            return ((h ^ (h >>> 16)) >>> 0) / 2 ** 32 < pass;
          };
          const search = new RateSearch({ startRps: start, tolerance });
          const rates = runSearch(search, meets);
          const max = search.maxRps;
          for (const r of rates) if (r <= max) expect(meets(r), `tested ${r} <= max ${max}`).toBe(true);
          const above = rates.filter((r) => r > max);
          if (above.length > 0) expect(meets(Math.min(...above))).toBe(false);
          if (max === 0) expect(rates.every((r) => !meets(r))).toBe(true);
          else if (Number.isFinite(search.hi)) expect(search.hi / max).toBeLessThanOrEqual(1 + tolerance);
        },
      ),
    );
  });
});

describe('rate search within the rates a run config accepts', () => {
  it('stops halving at the lowest rate and doubling at the highest', () => {
    // From 0.4 with a floor of 0.1: 0.4, 0.2, 0.1 break the SLOs; 0.05 is below the floor: met at no rate.
    const low = new RateSearch({ startRps: 0.4, tolerance: 0.05, minRps: 0.1 });
    expect(runSearch(low, () => false)).toEqual([0.4, 0.2, 0.1]);
    expect(low.maxRps).toBe(0);
    // From 3 with a ceiling of 20: 3, 6, 12 meet; 24 is above the ceiling: the max rate is 12, nothing broke above it.
    const high = new RateSearch({ startRps: 3, tolerance: 0.05, maxRps: 20 });
    expect(runSearch(high, () => true)).toEqual([3, 6, 12]);
    expect(high.maxRps).toBe(12);
    expect(high.hi).toBe(Infinity);
    // A first rate outside the range starts at its edge.
    expect(new RateSearch({ startRps: 1e-9, tolerance: 0.05 }).next()).toBe(1e-6);
    expect(new RateSearch({ startRps: 5e7, tolerance: 0.05 }).next()).toBe(1e7);
  });

  it('law: every rate proposed is within [minRps, maxRps]', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1e-7, max: 1e8, noNaN: true }),
        fc.double({ min: 1e-6, max: 1e7, noNaN: true }),
        fc.boolean(),
        (start, capacity, never) => {
          const search = new RateSearch({ startRps: start, tolerance: 0.05 });
          for (const r of runSearch(search, (rate) => !never && rate <= capacity)) {
            expect(r).toBeGreaterThanOrEqual(1e-6);
            expect(r).toBeLessThanOrEqual(1e7);
          }
        },
      ),
    );
  });
});

describe('dominance', () => {
  it('prunes B once a candidate that costs no more met the SLOs at a rate where B broke them', () => {
    const bounds = [
      { costPerHour: 8, lo: 3.9, hi: 4.1 }, // A
      { costPerHour: 10, lo: 3.1, hi: 3.5 }, // B: dearer, broke at 3.5 <= 3.9
      { costPerHour: 8, lo: 0, hi: 3.9 }, // C: same cost, broke at 3.9 <= 3.9
      { costPerHour: 6, lo: 0, hi: 3 }, // D: cheaper than A: not dominated by A
      { costPerHour: 10, lo: 3.1, hi: Infinity }, // E: no upper bound yet
    ];
    expect(dominatorOf(1, bounds)).toBe(0);
    expect(dominatorOf(2, bounds)).toBe(0);
    expect(dominatorOf(3, bounds)).toBeNull();
    expect(dominatorOf(4, bounds)).toBeNull();
    expect(dominatorOf(0, bounds)).toBeNull();
  });

  it('after the search: cost no higher and rate no lower, one of them strictly', () => {
    const costs = [8, 8, 10, 6];
    const rates = [4, 4, 3.9, null];
    expect(dominatorByRates(0, costs, rates)).toBeNull(); // a twin is not a dominator
    expect(dominatorByRates(2, costs, rates)).toBe(0);
    expect(dominatorByRates(3, costs, rates)).toBeNull();
  });

  it('law: whoever dominatorOf names costs no more and has a higher true max rate', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ cost: fc.integer({ min: 1, max: 6 }), capacity: fc.double({ min: 0.5, max: 20, noNaN: true }), seen: fc.boolean() }),
          { minLength: 2, maxLength: 12 },
        ),
        fc.double({ min: 1.01, max: 3, noNaN: true }),
        (candidates, spread) => {
          // Bounds consistent with the true capacities: lo below (or 0), hi above (or none).
          const bounds = candidates.map((c) => ({
            costPerHour: c.cost,
            lo: c.seen ? c.capacity / spread : 0,
            hi: c.seen ? c.capacity * spread : Infinity,
          }));
          for (let b = 0; b < bounds.length; b++) {
            const a = dominatorOf(b, bounds);
            if (a === null) continue;
            expect(candidates[a].cost).toBeLessThanOrEqual(candidates[b].cost);
            expect(candidates[a].capacity).toBeGreaterThan(candidates[b].capacity);
          }
        },
      ),
    );
  });
});

const SLOS: Slo[] = [{ metric: 'time_to_first_token', stat: 'p90', limit: 1000, bound: 'max', unit: 'ms' }];

/** A summary whose TTFT p90 is rate / capacity x 1000 ms: it meets the SLO exactly up to the capacity. */
function madeUpSummary(rate: number, capacity: number): PointSummary {
  return {
    metrics: {
      time_to_first_token: { unit: 'ms', p90: (rate / capacity) * 1000 } as never,
      output_sequence_length: { unit: 'tokens', avg: 100 } as never,
      request_latency: { unit: 'ms', avg: 1 } as never,
    },
    run: { error_request_count: 0, incomplete_request_count: 0, request_count: 1000 } as never,
  } as unknown as PointSummary;
}

function plan(targetRps: number | null, tolerance: number): PlanSpec {
  return { targetRps, slos: SLOS, rates: { tolerance } } as PlanSpec;
}

async function searchMadeUp(
  spec: Array<{ cost: number; capacity: number; start: number }>,
  tolerance: number,
): Promise<{ states: CandidateState[]; replays: number }> {
  const states: CandidateState[] = spec.map((c, index) => ({
    candidate: { index, id: `c${index}`, costPerHour: c.cost, gpus: 1, hardware: 'x', knobs: {} } as Candidate,
    status: 'searching',
    reason: null,
    search: new RateSearch({ startRps: c.start, tolerance }),
    tested: [],
    dominatedBy: null,
  }));
  let replays = 0;
  await searchCandidates(states, SLOS, {
    jobId: (candidate, rate) => `${candidate.index}@${rate}`,
    runRound(jobs) {
      replays += jobs.length;
      const out = new Map<string, RoundOutcome>();
      for (const job of jobs)
        out.set(job.id, { status: 'ok', summary: madeUpSummary(job.rateRps, spec[job.state.candidate.index].capacity) });
      return Promise.resolve(out);
    },
  });
  return { states, replays };
}

const extras = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ weightsGibPerGpu: null, kvTokensPerRank: null, pools: null, config: `configs/c${i}.yaml` }));

describe('search over candidates', () => {
  const arbCandidates = fc.array(
    fc.record({
      cost: fc.integer({ min: 1, max: 8 }),
      capacity: fc.double({ min: 0.5, max: 50, noNaN: true }),
      start: fc.double({ min: 0.5, max: 50, noNaN: true }),
    }),
    { minLength: 1, maxLength: 16 },
  );

  it('law: pruned candidates are truly dominated, and the best is within the tolerance of the true best (as much as possible)', async () => {
    await fc.assert(
      fc.asyncProperty(arbCandidates, fc.double({ min: 0.01, max: 0.3, noNaN: true }), async (spec, tolerance) => {
        const { states } = await searchMadeUp(spec, tolerance);
        for (const state of states) {
          expect(['searched', 'pruned']).toContain(state.status);
          if (state.status === 'pruned') {
            const by = state.dominatedBy as number;
            expect(spec[by].cost).toBeLessThanOrEqual(spec[state.candidate.index].cost);
            expect(spec[by].capacity).toBeGreaterThan(spec[state.candidate.index].capacity);
          }
        }
        const rows = candidateRows(plan(null, tolerance), states, extras(spec.length), 100);
        const best = bestOf(rankRows(rows, null), null);
        // The true best: the lowest cost per unit of capacity. The search's pick is within a
        // factor 1 + tolerance of it (each max rate is within that factor of its capacity).
        const trueBest = Math.min(...spec.map((c) => c.cost / c.capacity));
        const pick = spec[Number(best?.id.slice(1))];
        expect(pick.cost / pick.capacity).toBeLessThanOrEqual(trueBest * (1 + tolerance) * (1 + 1e-9));
      }),
    );
  });

  it('law: with a target, the best sustains it and costs no more than any candidate whose capacity clears it by the tolerance', async () => {
    await fc.assert(
      fc.asyncProperty(
        arbCandidates,
        fc.double({ min: 0.01, max: 0.3, noNaN: true }),
        fc.double({ min: 0.5, max: 40, noNaN: true }),
        async (spec, tolerance, target) => {
          const { states } = await searchMadeUp(spec, tolerance);
          const rows = candidateRows(plan(target, tolerance), states, extras(spec.length), 100);
          const best = bestOf(rankRows(rows, target), target);
          const clear = spec.filter((c) => c.capacity >= target * (1 + tolerance));
          if (best === null) {
            expect(clear).toEqual([]);
            return;
          }
          const pick = spec[Number(best.id.slice(1))];
          expect(pick.capacity).toBeGreaterThanOrEqual(target);
          for (const c of clear) expect(pick.cost).toBeLessThanOrEqual(c.cost);
        },
      ),
    );
  });

  it("costs come from the traffic's mean output tokens, the same for every candidate, not from each replay's", () => {
    // A sustains 10 rps, B 9.5, both at 2 per hour. Their replays happen to average 90 and 110
    // output tokens (samples of the same lengths); the traffic's mean is 96. By the samples B
    // would emit 9.5 x 110 = 1045 tokens/s against A's 10 x 90 = 900 and win; by the traffic's
    // mean A emits 960 and B 912, and A (more rate, same cost) is the better deployment.
    const states = [
      { rate: 10, sampleOut: 90 },
      { rate: 9.5, sampleOut: 110 },
    ].map(({ rate, sampleOut }, index): CandidateState => {
      const search = new RateSearch({ startRps: rate, tolerance: 0.05 });
      search.record(rate, true);
      search.record(rate * 1.04, false);
      const summary = madeUpSummary(rate, rate * 1.02);
      (summary.metrics.output_sequence_length as { avg: number }).avg = sampleOut;
      return {
        candidate: { index, id: `c${index}`, costPerHour: 2, gpus: 2, hardware: 'x', knobs: {} } as Candidate,
        status: 'searched',
        reason: null,
        search,
        tested: [{ rateRps: rate, id: `c${index}@${rate}`, meets: true, reason: null, checks: [], summary }],
        dominatedBy: null,
      };
    });
    const rows = candidateRows(plan(null, 0.05), states, extras(2), 96);
    expect(rows.map((r) => r.output_tokens_per_s)).toEqual([960, 912]);
    expect(rows.map((r) => r.output_tokens_per_s_per_gpu)).toEqual([480, 456]);
    // 2 per hour / (960 tokens/s x 3600 s) x 10^6 = 0.578704 per million output tokens.
    expect(rows[0].cost_per_million_output_tokens).toBe(0.578704);
    expect(rankRows(rows, null).map((r) => r.id)).toEqual(['c0', 'c1']);
    expect(rows[1].dominated_by).toBe('c0');
  });

  it('prunes: a dearer candidate that breaks the SLOs where a cheaper one meets them stops after one replay', async () => {
    // c0 costs 4 and sustains 10 rps; c1 costs 8 and sustains 3: c1 breaks them at 6 (its start),
    // and c0 met them at 6 in the same round, so c1 stops there. c0 takes 6 rounds:
    // 6 meets, 12 does not, 8.49 (sqrt 72) meets, 10.1 does not (sqrt(8.49 x 12) = 10.09), 9.26 meets, 9.67 meets:
    // 10.1 / 9.67 = 1.044 <= 1.05.
    const { states, replays } = await searchMadeUp(
      [
        { cost: 4, capacity: 10, start: 6 },
        { cost: 8, capacity: 3, start: 6 },
      ],
      0.05,
    );
    expect(states[1].status).toBe('pruned');
    expect(states[1].dominatedBy).toBe(0);
    expect(states[1].tested.map((t) => t.rateRps)).toEqual([6]);
    expect(states[0].tested.map((t) => t.rateRps)).toEqual([6, 12, 8.49, 10.1, 9.26, 9.67]);
    expect(replays).toBe(7);
  });
});
