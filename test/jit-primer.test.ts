/**
 * The pool threads' JIT primer (src/sweep/jit-primer.ts): which points it copies, how it shrinks
 * them, and that the copies replay. That priming changes no result is checked on the real pool in
 * sweep-run.e2e.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadRunConfigFromObject } from '../src/config/load.js';
import type { RunConfig } from '../src/config/types.js';
import { replay } from '../src/replay.js';
import { PRIMER_OUTPUT_TOKENS, PRIMER_POINTS, PRIMER_REQUESTS, primerFor, primerPicks, shrinkForPrimer } from '../src/sweep/jit-primer.js';

const run = (concurrency: number, outputTokens = 200): RunConfig =>
  loadRunConfigFromObject(
    {
      engine: {
        model: 'm',
        workers: {
          aggregated: {
            timing: { type: 'linear', base_ms: 8, prefill_token_us: 30, prefill_pair_ns: 1, decode_request_us: 25, decode_kv_token_ns: 40 },
          },
        },
        detokenization: { workers: 2, base_ms: 2, per_output_us: 60 },
      },
      traffic: {
        source: { type: 'synthetic', input_tokens: 300, output_tokens: outputTokens, random_range_ratio: 0.5, seed: 3 },
        load: { type: 'concurrency', concurrency },
        stop: { requests_per_load_unit: 10 },
      },
      report: { warmup_requests: 5 },
    },
    'test',
  );

describe('jit primer', () => {
  it('copies the first point, the last and evenly spread ones between, in order', () => {
    const points = [1, 2, 4, 8, 16, 32, 64, 128, 256].map((c) => run(c));
    const concurrencies = primerFor(points).map((c) => (c.traffic.load.type === 'concurrency' ? c.traffic.load.concurrency : 0));
    expect(concurrencies).toEqual([1, 8, 32, 256]);
    expect(primerFor(points.slice(0, 2))).toHaveLength(2);
    expect(primerFor([])).toEqual([]);
    // Trace points are left out (a copy would read the whole trace again).
    const traced = {
      ...points[0],
      traffic: { ...points[0].traffic, source: { type: 'trace', path: 't.jsonl', format: 'mooncake', block_size: 512 } },
    } as unknown as RunConfig;
    expect(primerFor([traced, points[1], traced])).toHaveLength(1);
    expect(primerFor([traced])).toEqual([]);
  });

  it('picks distinct points, PRIMER_POINTS of them or all, the first and the last, in order (fast-check)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), (n) => {
        const picks = primerPicks(n);
        expect(picks).toHaveLength(Math.min(PRIMER_POINTS, n));
        expect(new Set(picks).size).toBe(picks.length);
        expect(picks[0]).toBe(0);
        expect(picks[picks.length - 1]).toBe(n - 1);
        expect([...picks].sort((a, b) => a - b)).toEqual(picks);
      }),
    );
    expect(primerPicks(0)).toEqual([]);
  });

  it('shrinks a copy to a few short requests without touching the original, and the copy replays', () => {
    const original = run(16);
    const before = JSON.stringify(original);
    const shrunk = shrinkForPrimer(original);
    expect(JSON.stringify(original)).toBe(before);
    expect(shrunk.traffic.stop).toEqual({ requests: PRIMER_REQUESTS });
    expect(shrunk.report.warmup_requests).toBe(0);
    expect(shrunk.traffic.source.type === 'synthetic' && shrunk.traffic.source.output_tokens).toBe(PRIMER_OUTPUT_TOKENS);
    expect(shrinkForPrimer(run(4, 8)).traffic.source).toMatchObject({ output_tokens: 8 });
    // Never more requests than the point itself sends (10 per slot here).
    expect(shrinkForPrimer(run(2)).traffic.stop).toEqual({ requests: 20 });
    const { summary } = replay(shrunk, { baseDir: '.' });
    expect(summary.run.request_count).toBe(PRIMER_REQUESTS);
    expect(summary.simulator.output_tokens).toBeLessThanOrEqual(PRIMER_REQUESTS * PRIMER_OUTPUT_TOKENS);
  });
});
