/**
 * Prefix caching in the replay (docs/replay-model.md "Prefix cache"): hand-derived timelines for
 * a hit, a full hit, an eviction, a hit after a preemption and the kv_aware router's choice;
 * laws over random traces with shared prefixes; and the cached tokens of a real trace, counted
 * from its hash ids independently of the simulator.
 *
 * Timing in the timelines: linear, base 1 ms + 0.125 ms per prefill token (exact in binary), so a
 * pass that prefills P tokens takes 1 + P/8 ms and a decode pass 1 ms.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveRun } from '../src/config/resolve.js';
import { buildRequestRecords, buildSummary } from '../src/core/report.js';
import { Simulation } from '../src/core/simulation.js';
import { parseRunConfig } from '../src/config/load.js';
import { replay } from '../src/replay.js';
import { config, runCore, traceRows } from './helpers/core-run.js';

const LINEAR = { type: 'linear', base_ms: 1, prefill_token_us: 125 };
/** Trace hash ids of 16 tokens: one engine block each (block_size 16). */
const source16 = { type: 'trace', path: 'mem.jsonl', block_size: 16 };

function engine(kv: Record<string, unknown> = {}, extra: Record<string, unknown> = {}, replicas = 1) {
  return { workers: { aggregated: { parallelism: { replicas }, kv_cache: { block_size: 16, ...kv }, timing: LINEAR } }, ...extra };
}

const atTimestamps = { type: 'trace_timestamps' };

describe('prefix cache timelines', () => {
  it('serves the shared leading blocks of a later prompt from the cache', () => {
    // R0 (64 tokens, ids 1 2 3 4) prefills in 1 + 64/8 = 9 ms: token at 9, then 10. Its four
    // blocks are cached when that pass ends. R1 at 100 (ids 1 2 5 6) finds blocks 1, 2 (32
    // tokens) and computes 32: 1 + 32/8 = 5 ms, tokens at 105 and 106 (without the cache 109).
    const { records, summary } = runCore(
      { engine: engine(), traffic: { source: source16, load: atTimestamps, stop: { requests: 2 } } },
      traceRows(
        [
          [0, 64, 2],
          [100, 64, 2],
        ],
        [
          [1, 2, 3, 4],
          [1, 2, 5, 6],
        ],
      ),
    );
    expect(records.map((r) => r.token_ms)).toEqual([
      [9, 10],
      [105, 106],
    ]);
    expect(records.map((r) => r.cached_tokens)).toEqual([0, 32]);
    expect(summary.prefix_cache).toEqual({ hit_rate: 32 / 128, queries: 128, hits: 32, evictions: 0 });
  });

  it('computes at least the last block of a prompt that is all cached', () => {
    // R1 repeats R0's prompt: at most 63 tokens may come from the cache, so 3 blocks (48) do
    // and the last block's 16 tokens are computed: 1 + 16/8 = 3 ms, token at 103.
    const { records } = runCore(
      { engine: engine(), traffic: { source: source16, load: atTimestamps, stop: { requests: 2 } } },
      traceRows(
        [
          [0, 64, 1],
          [100, 64, 1],
        ],
        [
          [1, 2, 3, 4],
          [1, 2, 3, 4],
        ],
      ),
    );
    expect(records[1].cached_tokens).toBe(48);
    expect(records[1].token_ms).toEqual([103]);
  });

  it('evicts the least recently freed blocks, last block of a request first', () => {
    // 6 blocks, free queue [0 1 2 3 4 5]. R0 (ids 1-4, 1 token) takes 0-3 and frees them last
    // first: queue [4 5 3 2 1 0]. R1 (ids 7-10) takes 4 5 and evicts 3 (id 4) and 2 (id 3).
    // R2 (ids 1-4 again) finds 1 and 2 only (32 tokens), takes back blocks 0 and 1, and for its
    // 2 new blocks evicts R1's last two (ids 10, 9): 4 evictions. R2 computes 32 tokens: 1 +
    // 32/8 = 5 ms, token at 205.
    const { records, summary } = runCore(
      {
        engine: engine({ capacity: { type: 'fixed', blocks: 6 } }),
        traffic: { source: source16, load: atTimestamps, stop: { requests: 3 } },
      },
      traceRows(
        [
          [0, 64, 1],
          [100, 64, 1],
          [200, 64, 1],
        ],
        [
          [1, 2, 3, 4],
          [7, 8, 9, 10],
          [1, 2, 3, 4],
        ],
      ),
    );
    expect(records.map((r) => r.cached_tokens)).toEqual([0, 0, 32]);
    expect(records[2].token_ms).toEqual([205]);
    expect(summary.prefix_cache?.evictions).toBe(4);
  });

  it('lets a preempted request find the blocks it computed before, unless they were evicted', () => {
    // Two one-turn sessions (their blocks have keys), ISL 64, OSL 20, 10 blocks of 16. Pass at 0
    // prefills both (128 tokens, 17 ms): token k of each at 16 + k. The pass starting at 33
    // needs R0's sixth block: R1 (newest, 17 tokens, 80 computed = 5 full blocks, all cached)
    // is preempted and frees them last first; R0 takes the queue head, R1's fifth block (an
    // eviction). R1 cannot come back while R0 runs (its 81 tokens need 2 blocks beyond its 4
    // cached ones, and those 4 are the only free ones). R0 ends at 36 (token 20); R1 is admitted
    // at 36 with 64 tokens cached (its blocks 0-3), takes R0's blocks 5 (no key) and 4 (an
    // eviction), and computes 17 tokens: 1 + 17/8 = 3.125 ms, token 18 at 39.125, then 40.125,
    // 41.125 (without the cache it recomputes 81 tokens and token 18 comes at 47.125).
    const { records, summary } = runCore({
      engine: engine({ capacity: { type: 'fixed', blocks: 10 } }),
      traffic: {
        source: { type: 'synthetic-session', turns: 1, new_input_tokens_per_turn: 64, output_tokens_per_turn: 20 },
        load: { type: 'concurrency', concurrency: 2 },
        stop: { requests: 2 },
      },
    });
    expect(summary.engine.preemptions).toBe(1);
    expect(records[0].token_ms).toEqual(Array.from({ length: 20 }, (_, k) => 17 + k));
    expect(records[1].token_ms).toEqual([...Array.from({ length: 17 }, (_, k) => 17 + k), 39.125, 40.125, 41.125]);
    // First admission found nothing; the readmission looked up 81 tokens and found 64.
    expect(records[1].cached_tokens).toBe(0);
    expect(summary.prefix_cache).toEqual({ hit_rate: 64 / 209, queries: 64 + 64 + 81, hits: 64, evictions: 2 });
  });

  it('reuses the blocks of earlier turns of a synthetic session', () => {
    // Turn 1: 64 prompt + 20 outputs; its last output's KV is never computed, so 83 tokens are:
    // 5 full blocks. Turn 2's prompt (2 x 64 + 20 = 148) starts with them: 80 tokens cached.
    const { records } = runCore({
      engine: engine(),
      traffic: {
        source: { type: 'synthetic-session', turns: 2, new_input_tokens_per_turn: 64, output_tokens_per_turn: 20 },
        load: { type: 'concurrency', concurrency: 1 },
        stop: { requests: 2 },
      },
    });
    expect(records.map((r) => [r.input_tokens, r.cached_tokens])).toEqual([
      [64, 0],
      [148, 80],
    ]);
  });

  it('places a request where its prefix is cached unless the overlap weight is 0 (kv_aware)', () => {
    // Two replicas. R0 (ids 1-4) goes to replica 0 (a tie: candidate order) and decodes for a
    // long time. R1 at 100 (ids 1 2 3 9): on replica 0 its first 3 blocks are cached, so 16 new
    // tokens (1 prefill block) and 4 active blocks + 1 new = 5 decode blocks: cost 1 x 1 + 5 = 6;
    // on replica 1, 64 new tokens (4 blocks) and 4 new blocks: 4 + 4 = 8. Replica 0 wins and R1
    // finds 48 tokens. With overlap_score_weight 0 the costs are 5 and 4: replica 1, nothing cached.
    const run = (router: Record<string, unknown>) =>
      runCore(
        {
          engine: engine({}, { router }, 2),
          traffic: { source: source16, load: atTimestamps, stop: { requests: 2 } },
        },
        traceRows(
          [
            [0, 64, 1000],
            [100, 64, 2],
          ],
          [
            [1, 2, 3, 4],
            [1, 2, 3, 9],
          ],
        ),
      );
    const weighted = run({ type: 'kv_aware' });
    expect(weighted.records[1].cached_tokens).toBe(48);
    expect(weighted.result.table.rank[1]).toBe(0);
    const balanced = run({ type: 'kv_aware', overlap_score_weight: 0 });
    expect(balanced.records[1].cached_tokens).toBe(0);
    expect(balanced.result.table.rank[1]).toBe(1);
    // least_loaded: replica 0 has one request, replica 1 none.
    expect(run({ type: 'least_loaded' }).result.table.rank[1]).toBe(1);
  });
});

describe('prefix cache laws over random traces with shared prefixes', () => {
  /** Rows whose hash ids extend a prefix of an earlier row's (16-token trace blocks). */
  const arbTrace = fc
    .array(
      fc.record({
        parent: fc.nat(),
        keep: fc.nat({ max: 5 }),
        extra: fc.nat({ max: 3 }),
        tail: fc.nat({ max: 15 }),
        output: fc.nat({ max: 12 }),
      }),
      {
        minLength: 2,
        maxLength: 14,
      },
    )
    .map((shapes) => {
      let next = 1;
      const hashes: number[][] = [];
      const rows: [number, number, number][] = [];
      shapes.forEach((s, i) => {
        const parent = hashes.length > 0 ? hashes[s.parent % hashes.length] : [];
        const kept = parent.slice(0, Math.min(s.keep, Math.max(0, parent.length - 1)));
        const ids = [...kept, ...Array.from({ length: s.extra + 1 }, () => next++)];
        hashes.push(ids);
        rows.push([i * 3, (ids.length - 1) * 16 + 1 + s.tail, s.output]);
      });
      return { rows, hashes };
    });

  function simulate(raw: unknown, trace: ReturnType<typeof traceRows>) {
    const run = resolveRun(config(raw), trace);
    const result = new Simulation(run, { recordTokens: true, checkInvariants: true }).run();
    return { summary: buildSummary(run, result), records: buildRequestRecords(result) };
  }

  it('conserves blocks, keeps counts >= 0, serves less than each prompt and a hit rate in [0, 1]', () => {
    let evicting = 0;
    fc.assert(
      fc.property(
        arbTrace,
        fc.integer({ min: 12, max: 60 }),
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom('round_robin', 'least_loaded', 'kv_aware'),
        fc.integer({ min: 1, max: 5 }),
        (t, blocks, replicas, router, concurrency) => {
          const raw = {
            engine: {
              workers: {
                aggregated: {
                  parallelism: { replicas },
                  scheduler: { max_batched_tokens: 40 },
                  kv_cache: { block_size: 4, capacity: { type: 'fixed', blocks } },
                  timing: LINEAR,
                },
              },
              router: { type: router },
            },
            traffic: { source: source16, load: { type: 'concurrency', concurrency }, stop: { requests: t.rows.length } },
          };
          // INV-kv (the store's books against its running requests) is checked at every pass.
          const { summary, records } = simulate(raw, traceRows(t.rows, t.hashes));
          const pc = summary.prefix_cache as NonNullable<typeof summary.prefix_cache>;
          expect(pc.hit_rate).toBeGreaterThanOrEqual(0);
          expect(pc.hit_rate).toBeLessThanOrEqual(1);
          expect(pc.hits).toBeLessThanOrEqual(pc.queries);
          if (pc.evictions > 0) evicting++;
          for (const r of records) {
            if (r.status !== 'rejected') expect(r.cached_tokens as number).toBeLessThan(r.input_tokens);
          }
        },
      ),
      { numRuns: 150, seed: 31 },
    );
    expect(evicting).toBeGreaterThan(20);
  });

  it('never lowers the hit rate with more cache, at concurrency 1 on one replica', () => {
    fc.assert(
      fc.property(arbTrace, fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 40 }), (t, small, more) => {
        // Both pools hold any one request whole, so none is rejected or cut short.
        const need = Math.max(...t.rows.map(([, input, output]) => Math.ceil((input + output) / 4)));
        const hitRate = (blocks: number) => {
          const raw = {
            engine: { workers: { aggregated: { kv_cache: { block_size: 4, capacity: { type: 'fixed', blocks } }, timing: LINEAR } } },
            traffic: { source: source16, load: { type: 'concurrency', concurrency: 1 }, stop: { requests: t.rows.length } },
          };
          return (simulate(raw, traceRows(t.rows, t.hashes)).summary.prefix_cache as { hit_rate: number }).hit_rate;
        };
        expect(hitRate(need + small + more)).toBeGreaterThanOrEqual(hitRate(need + small));
      }),
      { numRuns: 150, seed: 32 },
    );
  });
});

describe('cached tokens of a real trace, counted from its hash ids', () => {
  it('equal the longest prefix of hash ids seen in earlier requests times 512, capped at the prompt minus one', () => {
    // Unlimited KV, one replica, concurrency 1: every earlier prompt is cached whole when a
    // request arrives. Engine blocks of 16 tokens divide the trace's 512, so the cache serves
    // that prefix's tokens, at most prompt - 1, rounded down to whole blocks.
    const file = join(import.meta.dirname, '../data/traces/mooncake_fast25_conversation_trace.jsonl');
    const lines = readFileSync(file, 'utf8').trim().split('\n').slice(0, 1000);
    const rows = lines.map((l) => JSON.parse(l) as { input_length: number; hash_ids: number[] });
    const seen = new Set<string>();
    const expected = rows.map(({ input_length, hash_ids }) => {
      let longest = 0;
      while (longest < hash_ids.length && seen.has(hash_ids.slice(0, longest + 1).join(','))) longest++;
      for (let k = 1; k <= hash_ids.length; k++) seen.add(hash_ids.slice(0, k).join(','));
      return Math.floor(Math.min(longest * 512, input_length - 1) / 16) * 16;
    });
    const cfg = parseRunConfig(
      {
        traffic: {
          source: { type: 'trace', path: file },
          load: { type: 'concurrency', concurrency: 1 },
          stop: { requests: rows.length },
        },
      },
      'x.yaml',
    );
    const { requests } = replay(cfg, { baseDir: '/', perRequest: true });
    expect((requests ?? []).map((r) => r.cached_tokens)).toEqual(expected);
    // Not vacuous: most requests hit, some for more than the shared first block.
    expect(expected.filter((c) => c > 0).length).toBeGreaterThan(900);
    expect(expected.filter((c) => c > 512).length).toBeGreaterThan(100);
  });
});
