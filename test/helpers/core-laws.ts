/**
 * Laws that hold for any small config (fast-check): conservation of requests, tokens per
 * request, monotone receive times, TTFT <= latency, causality of stage stamps, KV pool
 * invariants (checked after every pass), the TTFT stage breakdown summing to TTFT, and
 * determinism. `test/properties.test.ts` checks them on a few configs in the unit suite,
 * `test/properties.e2e.test.ts` on many more (other seeds) in the end-to-end suite.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildRequestRecords, buildSummary } from '../../src/core/report.js';
import { resolveRun } from '../../src/config/resolve.js';
import type { ResolvedRun } from '../../src/core/run.js';
import { Simulation } from '../../src/core/simulation.js';
import { config } from './core-run.js';

const cost = fc.oneof(fc.constant(0), fc.double({ min: 0.001, max: 5, noNaN: true }));

const arbConfig = fc
  .record({
    input: fc.integer({ min: 1, max: 3000 }),
    output: fc.integer({ min: 0, max: 40 }),
    ratio: fc.oneof(fc.constant(1), fc.double({ min: 0.05, max: 1, noNaN: true })),
    seed: fc.integer({ min: 0, max: 1000 }),
    budget: fc.integer({ min: 8, max: 4096 }),
    chunked: fc.boolean(),
    maxSequences: fc.integer({ min: 1, max: 16 }),
    blockSize: fc.constantFrom(1, 16),
    blocks: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 400 })),
    replicas: fc.integer({ min: 1, max: 3 }),
    ranks: fc.integer({ min: 1, max: 3 }),
    contextLength: fc.oneof(fc.constant('max' as const), fc.integer({ min: 2, max: 4000 })),
    timing: fc.oneof(
      fc.record({ type: fc.constant('fixed'), prefill_ms: cost, decode_ms: fc.double({ min: 0.05, max: 5, noNaN: true }) }),
      fc.record({
        type: fc.constant('linear'),
        base_ms: fc.double({ min: 0.05, max: 5, noNaN: true }),
        prefill_token_us: cost,
        prefill_pair_ns: cost,
        decode_request_us: cost,
        decode_kv_token_ns: cost,
      }),
      fc.constant({ type: 'polynomial' }),
    ),
    tokenization: fc.option(fc.record({ workers: fc.integer({ min: 1, max: 3 }), base_ms: cost, per_input_us: cost }), { nil: undefined }),
    detokenization: fc.option(
      fc.record({
        workers: fc.integer({ min: 1, max: 4 }),
        base_ms: cost,
        per_output_us: cost,
        chunk_outputs: fc.integer({ min: 1, max: 8 }),
      }),
      { nil: undefined },
    ),
    overhead: fc.option(fc.record({ base_ms: cost, per_output_token_us: cost }), { nil: undefined }),
    load: fc.oneof(
      fc.record({ type: fc.constant('concurrency'), concurrency: fc.integer({ min: 1, max: 12 }) }),
      fc.record({
        type: fc.constant('poisson'),
        requests_per_second: fc.integer({ min: 1, max: 2000 }),
        seed: fc.integer({ min: 0, max: 99 }),
      }),
      fc.record({ type: fc.constant('constant_rate'), requests_per_second: fc.integer({ min: 1, max: 2000 }) }),
    ),
    sessions: fc.option(fc.record({ turns: fc.integer({ min: 1, max: 3 }), delay: cost }), { nil: undefined }),
    stop: fc.oneof(
      fc.record({ requests: fc.integer({ min: 1, max: 40 }) }),
      fc.record({ max_virtual_time_seconds: fc.double({ min: 0.001, max: 0.3, noNaN: true }) }),
    ),
    warmup: fc.integer({ min: 0, max: 3 }),
  })
  .map((a) => {
    // Without chunked prefill every prompt must fit the budget (a config error otherwise).
    const chunked = a.chunked || a.input * (a.sessions ? 2 * a.sessions.turns : 1) + a.output * 3 > a.budget;
    const engine: Record<string, unknown> = {
      context_length: a.contextLength,
      workers: {
        aggregated: {
          parallelism: { replicas: a.replicas, attention_data: a.ranks },
          scheduler: { max_batched_tokens: a.budget, max_sequences: a.maxSequences, chunked_prefill: chunked },
          kv_cache: { block_size: a.blockSize, capacity: a.blocks === 0 ? { type: 'unlimited' } : { type: 'fixed', blocks: a.blocks } },
          timing: a.timing,
        },
      },
    };
    if (a.tokenization) engine.tokenization = a.tokenization;
    if (a.detokenization) engine.detokenization = a.detokenization;
    const load: Record<string, unknown> = { ...a.load };
    if (a.overhead) load.response_overhead = a.overhead;
    // Under a time cap, a closed loop whose requests are all rejected at once would never let
    // time advance (the core stops such a run with an error; see the stall test).
    if ('max_virtual_time_seconds' in a.stop) load.response_overhead = { base_ms: 0.05, per_output_token_us: 0, ...(a.overhead ?? {}) };
    if ('max_virtual_time_seconds' in a.stop && (load.response_overhead as { base_ms: number }).base_ms === 0) {
      (load.response_overhead as { base_ms: number }).base_ms = 0.05;
    }
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
      engine,
      traffic: { source, load, stop: a.stop },
      report: { warmup_requests: 'requests' in a.stop ? Math.min(a.warmup, a.stop.requests - 1) : a.warmup },
    };
  });

/** Replays a raw config with every invariant checked after every pass. */
export function simulate(raw: unknown) {
  const run = resolveRun(config(raw), null);
  const result = new Simulation(run, { recordTokens: true, checkInvariants: true }).run();
  return { run, result, summary: buildSummary(run, result), records: buildRequestRecords(result) };
}

/** How many random configs each law is checked on, and the fast-check seeds. */
export interface LawRuns {
  /** The laws of one run (conservation, causality, KV, stages), and its seed. */
  laws: number;
  lawsSeed: number;
  /** Same bytes twice. */
  determinism: number;
  determinismSeed: number;
  /** All-zero client-path costs = no client-path blocks. */
  zeroCosts: number;
  zeroCostsSeed: number;
  /**
   * Coverage guards, so that no law holds vacuously: at least this many completed requests with
   * tokens, runs that preempted and requests rejected over the `laws` configs. About one config in
   * a hundred preempts, so a small run may see none.
   */
  atLeast: { completedWithTokens: number; preemptingRuns: number; rejected: number };
}

/** Declares the suite of laws, each checked on `runs` random configs. */
export function describeCoreLaws(runs: LawRuns): void {
  describe('laws of the replay core', () => {
    it('holds for random small configs', () => {
      let completedWithTokens = 0;
      let preempting = 0;
      let rejecting = 0;
      fc.assert(
        fc.property(arbConfig, (raw) => {
          const { run, result, summary, records } = simulate(raw);
          const capped = Number.isFinite(run.capMs);
          const statuses = new Map<number, string>();
          for (const r of records) {
            // Every request ends in exactly one state; without a cap none is left incomplete.
            expect(statuses.has(r.request_id)).toBe(false);
            statuses.set(r.request_id, r.status);
            if (!capped) expect(r.status).not.toBe('incomplete');
            // Receive times never go backwards and never precede emission.
            for (let k = 1; k < r.token_ms.length; k++) expect(r.token_ms[k]).toBeGreaterThanOrEqual(r.token_ms[k - 1]);
            r.token_ms.forEach((t, k) => expect(t).toBeGreaterThanOrEqual(r.token_emitted_ms[k]));
            if (capped) r.token_ms.forEach((t) => expect(t).toBeLessThanOrEqual(run.capMs));
            if (r.status === 'completed') {
              // Tokens per request equal the output length (or what the length limit leaves).
              const expected = Math.min(
                result.table.outputLen[r.request_id],
                Math.max(0, run.pools[0].limits.lengthLimit - r.input_tokens),
              );
              expect(r.output_tokens).toBe(expected);
              expect(r.token_ms.length).toBe(expected);
              if (r.output_tokens > 0) {
                completedWithTokens++;
                expect(r.time_to_first_token as number).toBeLessThanOrEqual(r.request_latency as number);
                // Causality of the stage stamps.
                expect(r.sent_ms).toBeLessThanOrEqual(r.tokenized_ms as number);
                expect(r.tokenized_ms as number).toBeLessThanOrEqual(r.first_scheduled_ms as number);
                expect(r.first_scheduled_ms as number).toBeLessThanOrEqual(r.first_token_emitted_ms as number);
                expect(r.first_token_emitted_ms as number).toBeLessThanOrEqual(r.token_ms[0]);
              }
            }
            if (r.status === 'rejected') {
              rejecting++;
              expect(r.token_ms).toEqual([]);
            }
          }
          if (result.preemptionCount > 0) preempting++;
          // The TTFT stages sum to the mean TTFT.
          const ttft = summary.metrics.time_to_first_token;
          if (ttft) {
            const s = summary.ttft_stages;
            const sum = s.mean_frontend_ms + s.mean_tokenization_ms + s.mean_queue_ms + s.mean_prefill_ms + s.mean_detokenization_ms;
            expect(Math.abs(sum - ttft.avg)).toBeLessThanOrEqual(1e-9 * Math.max(1, ttft.avg));
          }
          // Conservation: valid + rejected + incomplete + warmup-or-empty = sent.
          const sent = records.length;
          const warmupOrEmpty = records.filter((r) => r.warmup || (r.status === 'completed' && r.output_tokens === 0)).length;
          expect(summary.run.request_count + summary.run.error_request_count + summary.run.incomplete_request_count).toBe(
            sent - warmupOrEmpty,
          );
        }),
        { numRuns: runs.laws, seed: runs.lawsSeed },
      );
      // Coverage guards: the properties were not checked vacuously.
      expect(completedWithTokens).toBeGreaterThanOrEqual(runs.atLeast.completedWithTokens);
      expect(preempting).toBeGreaterThanOrEqual(runs.atLeast.preemptingRuns);
      expect(rejecting).toBeGreaterThanOrEqual(runs.atLeast.rejected);
    });

    it('gives the same bytes for the same config and seed', () => {
      fc.assert(
        fc.property(arbConfig, (raw) => {
          const a = simulate(raw);
          const b = simulate(raw);
          expect(JSON.stringify(b.summary)).toBe(JSON.stringify(a.summary));
          expect(JSON.stringify(b.records)).toBe(JSON.stringify(a.records));
        }),
        { numRuns: runs.determinism, seed: runs.determinismSeed },
      );
    });

    it('treats all-zero client-path costs exactly as leaving the blocks out', () => {
      fc.assert(
        fc.property(
          arbConfig,
          fc.integer({ min: 1, max: 4 }),
          fc.integer({ min: 1, max: 4 }),
          fc.integer({ min: 0, max: 3 }),
          (raw, tokenizers, detokenizers, chunk) => {
            const plain = structuredClone(raw) as {
              engine: Record<string, unknown>;
              traffic: { load: Record<string, unknown>; stop: unknown };
              report: { warmup_requests: number };
            };
            // Without any client cost, a capped run of instant rejections would stall: stop by count.
            plain.traffic.stop = { requests: 30 };
            plain.report.warmup_requests = Math.min(plain.report.warmup_requests, 29);
            delete plain.engine.tokenization;
            delete plain.engine.detokenization;
            delete plain.traffic.load.response_overhead;
            const plainRun = resolveRun(config(plain), null);
            // The zero-cost side runs the client-path code: its stages are there, costing nothing.
            // (The resolver drops all-zero stages, which would make both sides the same run.)
            const zeroRun: ResolvedRun = {
              ...plainRun,
              tokenization: { serversPerWorker: tokenizers, baseMs: 0, perTokenMs: 0, chunkOutputs: 0 },
              detokenization: { serversPerWorker: detokenizers, baseMs: 0, perTokenMs: 0, chunkOutputs: chunk },
              responseOverhead: { baseMs: 0, perOutputTokenMs: 0, perInflightMs: 0 },
            };
            const records = (run: ResolvedRun) => JSON.stringify(buildRequestRecords(new Simulation(run, { recordTokens: true }).run()));
            expect(records(zeroRun)).toBe(records(plainRun));
          },
        ),
        { numRuns: runs.zeroCosts, seed: runs.zeroCostsSeed },
      );
    });
  });
}
