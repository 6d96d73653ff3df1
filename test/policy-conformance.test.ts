/**
 * The laws every scheduler keeps, over random small configs (fast-check), one suite for all:
 * conservation (every request sent ends completed, rejected or incomplete, exactly once, with
 * its output length in tokens), no request lost (without a time cap none is left incomplete),
 * KV bounds (INV-kv after every pass start and end), the budget (INV-budget: the plan holds
 * running requests only, within max_batched_tokens and max_sequences, each given tokens it still
 * needs) and the clock (checked by the simulation's `checkInvariants`), and determinism.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildRequestRecords } from '../src/core/report.js';
import { resolveRun } from '../src/config/resolve.js';
import { Simulation } from '../src/core/simulation.js';
import { config } from './helpers/core-run.js';

const POLICIES = [
  { name: 'vllm fcfs', backend: 'vllm', scheduler: {} },
  { name: 'vllm priority', backend: 'vllm', scheduler: { schedule_policy: 'priority', priority_levels: 3 } },
  { name: 'sglang fcfs', backend: 'sglang', scheduler: {} },
  { name: 'sglang lpm', backend: 'sglang', scheduler: { schedule_policy: 'lpm' } },
  { name: 'trtllm guaranteed_no_evict', backend: 'trtllm', scheduler: {} },
  { name: 'trtllm max_utilization', backend: 'trtllm', scheduler: { capacity_policy: 'max_utilization' } },
] as const;

const arbConfig = fc.record({
  input: fc.integer({ min: 1, max: 1500 }),
  output: fc.integer({ min: 0, max: 60 }),
  ratio: fc.oneof(fc.constant(1), fc.double({ min: 0.05, max: 1, noNaN: true })),
  seed: fc.integer({ min: 0, max: 1000 }),
  budget: fc.integer({ min: 8, max: 4096 }),
  chunked: fc.boolean(),
  maxSequences: fc.integer({ min: 1, max: 12 }),
  blockSize: fc.constantFrom(1, 16),
  blocks: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 300 })),
  ranks: fc.integer({ min: 1, max: 2 }),
  contextLength: fc.oneof(fc.constant('max' as const), fc.integer({ min: 2, max: 3000 })),
  load: fc.oneof(
    fc.record({ type: fc.constant('concurrency'), concurrency: fc.integer({ min: 1, max: 10 }) }),
    fc.record({
      type: fc.constant('poisson'),
      requests_per_second: fc.integer({ min: 1, max: 2000 }),
      seed: fc.integer({ min: 0, max: 99 }),
    }),
  ),
  sessions: fc.option(fc.record({ turns: fc.integer({ min: 1, max: 3 }), delay: fc.integer({ min: 0, max: 5 }) }), { nil: undefined }),
  stop: fc.oneof(
    fc.record({ requests: fc.integer({ min: 1, max: 30 }) }),
    fc.record({ max_virtual_time_seconds: fc.double({ min: 0.001, max: 0.3, noNaN: true }) }),
  ),
});

type Params = typeof arbConfig extends fc.Arbitrary<infer T> ? T : never;

function build(a: Params, policy: (typeof POLICIES)[number]) {
  {
    const chunked = a.chunked || a.input * (a.sessions ? 2 * a.sessions.turns : 1) + a.output * 3 > a.budget;
    const source = a.sessions
      ? {
          type: 'synthetic-session',
          turns: a.sessions.turns,
          new_input_tokens_per_turn: a.input,
          output_tokens_per_turn: a.output,
          inter_turn_delay_ms: a.sessions.delay,
        }
      : { type: 'synthetic', input_tokens: a.input, output_tokens: a.output, random_range_ratio: a.ratio, seed: a.seed };
    return {
      engine: {
        backend: policy.backend,
        context_length: a.contextLength,
        workers: {
          aggregated: {
            parallelism: { attention_data: a.ranks },
            scheduler: { max_batched_tokens: a.budget, max_sequences: a.maxSequences, chunked_prefill: chunked, ...policy.scheduler },
            kv_cache: { block_size: a.blockSize, capacity: a.blocks === 0 ? { type: 'unlimited' } : { type: 'fixed', blocks: a.blocks } },
            timing: { type: 'fixed', prefill_ms: 3, decode_ms: 1 },
          },
        },
      },
      traffic: {
        source,
        // A time cap needs time to advance even when every request is rejected at once.
        load: { ...a.load, response_overhead: { base_ms: 0.05, per_output_token_us: 0 } },
        stop: a.stop,
      },
    };
  }
}

function simulate(raw: unknown) {
  const run = resolveRun(config(raw), null);
  const result = new Simulation(run, { recordTokens: true, checkInvariants: true }).run();
  return { run, result, records: buildRequestRecords(result) };
}

describe('every scheduler keeps the laws of the replay core', () => {
  for (const policy of POLICIES) {
    it(policy.name, () => {
      let preempting = 0;
      let completed = 0;
      fc.assert(
        fc.property(arbConfig, (params) => {
          const raw = build(params, policy);
          const { run, result, records } = simulate(raw);
          const capped = Number.isFinite(run.capMs);
          const seen = new Set<number>();
          for (const r of records) {
            expect(seen.has(r.request_id)).toBe(false);
            seen.add(r.request_id);
            if (!capped) expect(r.status).not.toBe('incomplete');
            if (r.status === 'completed') {
              completed++;
              const expected = Math.min(
                result.table.outputLen[r.request_id],
                Math.max(0, run.pools[0].limits.lengthLimit - r.input_tokens),
              );
              expect(r.output_tokens).toBe(expected);
              expect(r.token_ms.length).toBe(expected);
              for (let k = 1; k < r.token_ms.length; k++) expect(r.token_ms[k]).toBeGreaterThanOrEqual(r.token_ms[k - 1]);
            }
            if (r.status === 'rejected') expect(r.token_ms).toEqual([]);
          }
          // Every request created was sent and ended in exactly one state.
          expect(records.length).toBe(result.requestCount);
          if (result.preemptionCount > 0) preempting++;
          // Determinism: the same config gives the same timeline.
          const again = simulate(raw);
          expect(again.records.map((r) => r.token_ms)).toEqual(records.map((r) => r.token_ms));
        }),
        { numRuns: 60, seed: 20261202 },
      );
      // The generator reaches the interesting cases.
      expect(completed).toBeGreaterThan(50);
      if (policy.name !== 'trtllm guaranteed_no_evict') expect(preempting).toBeGreaterThan(0);
    });
  }
});
