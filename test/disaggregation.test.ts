/**
 * Disaggregated prefill and decode (docs/replay-model.md, "Disaggregated prefill and decode"):
 * hand timelines whose every time is worked out in the comments.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadRunConfigFromObject } from '../src/config/load.js';
import { resolveRun } from '../src/config/resolve.js';
import { buildRequestRecords, buildSummary } from '../src/core/report.js';
import { Simulation } from '../src/core/simulation.js';
import { formatSummaryTable } from '../src/cli/format-table.js';
import { replay } from '../src/replay.js';
import { config, runCore, traceRows } from './helpers/core-run.js';

const FIXED = { type: 'fixed', prefill_ms: 10, decode_ms: 2 };

/**
 * Prefill and decode pools with fixed timing 10 / 2, unlimited KV, and a 1 ms transfer; the first
 * token leaves the prefill worker unless `transfer` says first_token: decode.
 */
function disagg(extra: { prefill?: object; decode?: object; transfer?: object } = {}) {
  return {
    workers: {
      prefill: { timing: FIXED, kv_cache: { capacity: { type: 'unlimited' } }, ...extra.prefill },
      decode: { timing: FIXED, kv_cache: { capacity: { type: 'unlimited' } }, ...extra.decode },
    },
    kv_transfer: { latency_ms: 1, kv_bytes_per_token: 0, bandwidth_gb_per_s: 100, first_token: 'prefill', ...extra.transfer },
  };
}

function trace(rows: Array<[number, number, number]>) {
  return {
    engine: {},
    traffic: {
      source: { type: 'trace', path: 'unused.jsonl' },
      load: { type: 'trace_timestamps' },
      stop: { requests: rows.length },
    },
  };
}

function run(engine: object, rows: Array<[number, number, number]>) {
  const raw = { ...trace(rows), engine };
  return runCore(raw, traceRows(rows));
}

describe('disaggregated prefill and decode, first token from the prefill worker: hand timelines', () => {
  it('one request, ISL 1024 OSL 4: tokens at 12, 15, 17, 19', () => {
    // Prefill pass 0-12 (10 prefill + 2 for the emitted first token). The transfer takes the
    // 1 ms latency: 12-13. The decode worker admits it at 13 with its prompt's KV computed:
    // a decode pass 13-15 (2 ms), then 15-17 and 17-19.
    const { records, summary } = run(disagg(), [[0, 1024, 4]]);
    expect(records[0].token_emitted_ms).toEqual([12, 15, 17, 19]);
    expect(records[0].token_ms).toEqual([12, 15, 17, 19]);
    expect(summary.kv_transfer).toEqual({ transfers: 1, mean_link_wait_ms: 0, mean_transfer_ms: 1 });
    expect(summary.pools?.map((p) => [p.role, p.passes])).toEqual([
      ['prefill', 1],
      ['decode', 3],
    ]);
  });

  it('a queued transfer waits for the link; the decode worker takes the second request at the next pass', () => {
    // 1e5 bytes per token over 100 GB/s (1e8 bytes per ms): 1,000 tokens in 1 ms, plus the
    // 1 ms latency = 2 ms. Both prompts prefill in one pass 0-12; both leave prefill worker 0
    // for decode worker 0 over one link: A 12-14, B waits for it, 14-16. A decodes 14-16
    // (token 2); B arrives at 16 and joins A's pass 16-18 (A's token 3, its last; B's token 2);
    // B's token 3 at 20.
    const { records, summary } = run(disagg({ transfer: { kv_bytes_per_token: 1e5 } }), [
      [0, 1000, 3],
      [0, 1000, 3],
    ]);
    expect(records.map((r) => r.token_ms)).toEqual([
      [12, 16, 18],
      [12, 18, 20],
    ]);
    // Link waits 0 and 2 ms; each transfer 2 ms.
    expect(summary.kv_transfer).toEqual({ transfers: 2, mean_link_wait_ms: 1, mean_transfer_ms: 2 });
  });

  it('a decode worker out of blocks admits the request once blocks are free', () => {
    // Decode pool: 70 blocks of 16 tokens. A takes 63 blocks (1,001 tokens) at 13; B (transfer
    // 13-14, queued behind A's 12-13) needs 63 of the 7 left and waits. A decodes 13-15, 15-17
    // (its last token) and frees its blocks; B runs 17-19 and 19-21.
    const decode = { kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 70 } } };
    const { records } = run(disagg({ decode }), [
      [0, 1000, 3],
      [0, 1000, 3],
    ]);
    expect(records.map((r) => r.token_ms)).toEqual([
      [12, 15, 17],
      [12, 19, 21],
    ]);
  });

  it('conditional disaggregation: a short prompt is prefilled on the decode worker, with no transfer', () => {
    // max_local_prefill_tokens 100: the 50-token prompt goes straight to the decode worker,
    // prefill 0-12 (token 1), then 12-14 and 14-16. The 1,000-token prompt prefills on the
    // prefill worker 0-12, moves 12-13, and waits for the decode worker's pass 12-14; it joins
    // the pass 14-16 (its token 2, its last).
    const { records, summary } = run(disagg({ transfer: { max_local_prefill_tokens: 100 } }), [
      [0, 50, 3],
      [0, 1000, 2],
    ]);
    expect(records.map((r) => r.token_ms)).toEqual([
      [12, 14, 16],
      [12, 16],
    ]);
    expect(summary.kv_transfer?.transfers).toBe(1);
    expect(summary.pools?.map((p) => [p.role, p.passes])).toEqual([
      ['prefill', 1],
      ['decode', 3],
    ]);
  });

  it('a preemption on the decode worker recomputes the request there', () => {
    // Decode pool: 64 blocks of 16. A (transfer 12-13) and B (13-14) each hold 32 blocks (501
    // tokens) from their admissions at 13 and 15. A's token g comes at 2g + 11 (15, 17, ...):
    // at 37 A has 13 tokens and needs 513 tokens of blocks, a 33rd block: vLLM preempts the
    // newest, B (12 tokens, the last at 37), which loses its KV. A decodes alone to its 20th
    // token at 51 and frees 33 blocks; B is admitted at 51 with its 512 tokens to recompute, a
    // prefill pass 51-63 that emits its 13th token, then 2 ms per token to its 20th at 77.
    const decode = { kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 64 } } };
    const { records, summary } = run(disagg({ decode }), [
      [0, 500, 20],
      [0, 500, 20],
    ]);
    const a = Array.from({ length: 20 }, (_, i) => (i === 0 ? 12 : 2 * (i + 1) + 11));
    const b = Array.from({ length: 20 }, (_, i) => (i === 0 ? 12 : i + 1 <= 12 ? 2 * (i + 1) + 13 : 63 + 2 * (i + 1 - 13)));
    expect(records[0].token_ms).toEqual(a);
    expect(records[1].token_ms).toEqual(b);
    expect(summary.engine.preemptions).toBe(1);
  });
});

describe('disaggregated prefill and decode, first token from the decode worker: hand timelines', () => {
  const onDecode = (extra: { decode?: object; transfer?: object } = {}) =>
    disagg({ ...extra, transfer: { first_token: 'decode', ...extra.transfer } });

  it('one request, ISL 1024 OSL 4: tokens at 15, 17, 19, 21', () => {
    // Prefill pass 0-12 (10 prefill + 2 for the token it samples, which is not sent). Transfer
    // 12-13. The decode worker admits it at 13 with 1,023 tokens of KV and recomputes the last
    // prompt token in a decode pass 13-15, which samples token 1; then 15-17, 17-19, 19-21.
    const { records, summary } = run(onDecode(), [[0, 1024, 4]]);
    expect(records[0].token_emitted_ms).toEqual([15, 17, 19, 21]);
    expect(records[0].time_to_first_token).toBe(15);
    // Stages: queue 0, prefill 0-12, KV transfer 12-13, decode 13-15.
    expect(summary.ttft_stages).toEqual({
      mean_frontend_ms: 0,
      mean_tokenization_ms: 0,
      mean_queue_ms: 0,
      mean_prefill_ms: 12,
      mean_kv_transfer_ms: 1,
      mean_decode_ms: 2,
      mean_detokenization_ms: 0,
    });
    expect(summary.kv_transfer).toEqual({ transfers: 1, mean_link_wait_ms: 0, mean_transfer_ms: 1 });
    expect(summary.pools?.map((p) => [p.role, p.passes])).toEqual([
      ['prefill', 1],
      ['decode', 4],
    ]);
  });

  it.each(['vllm', 'sglang', 'trtllm'])('the first pass on the decode worker is a decode under every policy (%s)', (policy) => {
    // As above: the decode worker's pass 13-15 computes one token over the prompt's context, a
    // decode (2 ms), not a prefill chunk (10 + 2 ms).
    const scheduler = { scheduler: { policy } };
    const { records } = run(onDecode({ decode: scheduler }), [[0, 1024, 4]]);
    expect(records[0].token_emitted_ms).toEqual([15, 17, 19, 21]);
  });

  it('the wait for a decode slot falls in TTFT', () => {
    // Decode worker with one sequence slot. A and B prefill together 0-12; one link: A moves
    // 12-13, B 13-14. A runs 13-15 (token 1), 15-17 (token 2, its last) and frees the slot; B,
    // there since 14, runs 17-19 (token 1) and 19-21. With the first token from the prefill
    // worker both would have it at 12.
    const decode = { scheduler: { max_sequences: 1 } };
    const { records, summary } = run(onDecode({ decode }), [
      [0, 1000, 2],
      [0, 1000, 2],
    ]);
    expect(records.map((r) => r.token_ms)).toEqual([
      [15, 17],
      [19, 21],
    ]);
    // Means over A and B: prefill 12; KV transfer (1 + 2) / 2; decode (2 + 5) / 2. They add up
    // to mean TTFT (15 + 19) / 2 = 17.
    expect(summary.ttft_stages.mean_prefill_ms).toBe(12);
    expect(summary.ttft_stages.mean_kv_transfer_ms).toBe(1.5);
    expect(summary.ttft_stages.mean_decode_ms).toBe(3.5);
    expect(summary.metrics.time_to_first_token?.avg).toBe(17);
    const prefillFirst = run(disagg({ decode }), [
      [0, 1000, 2],
      [0, 1000, 2],
    ]);
    expect(prefillFirst.records.map((r) => r.token_ms[0])).toEqual([12, 12]);
    expect(prefillFirst.summary.ttft_stages.mean_kv_transfer_ms).toBe(0);
  });
});

describe('disaggregated prefill and decode: the console', () => {
  const table = (firstToken: string) => {
    const config = loadRunConfigFromObject(
      {
        engine: disagg({ transfer: { first_token: firstToken } }),
        traffic: {
          source: { type: 'synthetic', input_tokens: 1024, output_tokens: 4 },
          load: { type: 'concurrency', concurrency: 1 },
          stop: { requests: 1 },
        },
      },
      'run.yaml',
    );
    return formatSummaryTable(replay(config, { baseDir: '.' }).summary);
  };

  it('prints the TTFT stages with the transfer and the decode worker, and where the transfers fall', () => {
    // The hand timelines above: decode 12 / 1 / 2 ms, prefill 12 / 0 / 0 (the transfer after the first token).
    expect(table('decode')).toMatch(
      /TTFT stages \(ms\): frontend \/ tokenization \/ queue \/ prefill \/ KV transfer \/ decode \/ detokenization +0\.00 \/ 0\.00 \/ 0\.00 \/ 12\.00 \/ 1\.00 \/ 2\.00 \/ 0\.00\n/,
    );
    expect(table('decode')).toMatch(
      /KV transfers \(before the first token\): count \/ link wait \(ms\) \/ transfer \(ms\) +1 \/ 0\.00 \/ 1\.00\n/,
    );
    expect(table('prefill')).toMatch(
      /prefill \/ KV transfer \/ decode \/ detokenization +0\.00 \/ 0\.00 \/ 0\.00 \/ 12\.00 \/ 0\.00 \/ 0\.00 \/ 0\.00\n/,
    );
    expect(table('prefill')).toMatch(/KV transfers \(after the first token\)/);
  });
});

// ---- Laws over random disaggregated configs ---------------------------------------------------

const arbTiming = fc.oneof(
  fc.record({
    type: fc.constant('fixed'),
    prefill_ms: fc.double({ min: 0, max: 5, noNaN: true }),
    decode_ms: fc.double({ min: 0.05, max: 5, noNaN: true }),
  }),
  fc.record({
    type: fc.constant('linear'),
    base_ms: fc.double({ min: 0.05, max: 3, noNaN: true }),
    prefill_token_us: fc.double({ min: 0, max: 5, noNaN: true }),
    decode_request_us: fc.double({ min: 0, max: 50, noNaN: true }),
  }),
);

const arbPool = fc.record({
  replicas: fc.integer({ min: 1, max: 3 }),
  ranks: fc.integer({ min: 1, max: 2 }),
  budget: fc.integer({ min: 16, max: 4096 }),
  maxSequences: fc.integer({ min: 1, max: 8 }),
  blocks: fc.oneof(fc.constant(0), fc.integer({ min: 40, max: 400 })),
  policy: fc.constantFrom('vllm', 'sglang', 'trtllm'),
  timing: arbTiming,
});

const arbDisagg = fc
  .record({
    prefill: arbPool,
    decode: arbPool,
    input: fc.integer({ min: 1, max: 600 }),
    output: fc.integer({ min: 1, max: 24 }),
    ratio: fc.oneof(fc.constant(1), fc.double({ min: 0.05, max: 1, noNaN: true })),
    seed: fc.integer({ min: 0, max: 1000 }),
    latency: fc.double({ min: 0, max: 3, noNaN: true }),
    bytes: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1e6 })),
    local: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 300 })),
    concurrency: fc.integer({ min: 1, max: 12 }),
    requests: fc.integer({ min: 1, max: 30 }),
    detok: fc.boolean(),
    firstToken: fc.constantFrom('prefill', 'decode'),
  })
  .map((a) => {
    const pool = (p: typeof a.prefill) => ({
      parallelism: { replicas: p.replicas, attention_data: p.ranks },
      scheduler: { max_batched_tokens: p.budget, max_sequences: p.maxSequences, chunked_prefill: true, policy: p.policy },
      kv_cache: { block_size: 16, capacity: p.blocks === 0 ? { type: 'unlimited' } : { type: 'fixed', blocks: p.blocks } },
      timing: p.timing,
    });
    return {
      engine: {
        workers: { prefill: pool(a.prefill), decode: pool(a.decode) },
        kv_transfer: {
          latency_ms: a.latency,
          kv_bytes_per_token: a.bytes,
          bandwidth_gb_per_s: 10,
          max_local_prefill_tokens: a.local,
          first_token: a.firstToken,
        },
        ...(a.detok ? { detokenization: { workers: 2, base_ms: 0.5, per_output_us: 20 } } : {}),
      },
      traffic: {
        source: { type: 'synthetic', input_tokens: a.input, output_tokens: a.output, random_range_ratio: a.ratio, seed: a.seed },
        load: { type: 'concurrency', concurrency: a.concurrency },
        stop: { requests: a.requests },
      },
    };
  });

/**
 * Replays `raw` with every invariant checked at every pass and, at every pass start, where each
 * request is: on at most one rank of all (waiting, running, or holding blocks in transfer), and
 * on one decode rank only over its whole life.
 */
function simulateWatched(raw: unknown) {
  const run = resolveRun(config(raw), null);
  const decodeRankOf = new Map<number, number>();
  let problem: string | null = null;
  let sim: Simulation | null = null;
  const onPass = () => {
    if (problem !== null || sim === null) return;
    const seen = new Map<number, string>();
    sim.pools.forEach((pool, p) => {
      pool.ranks.forEach((rank, k) => {
        const where = `pool ${p} rank ${k}`;
        const ids = [
          ...Array.from(rank.running.subarray(0, rank.runningCount)),
          ...Array.from({ length: rank.waiting.size }, (_, i) => rank.waiting.at(i)),
          ...Array.from(rank.sending.subarray(0, rank.sendingCount)),
        ];
        for (const id of ids) {
          if (seen.has(id)) problem ??= `request ${id} on ${seen.get(id)} and ${where}`;
          seen.set(id, where);
          if (pool.role === 'decode') {
            const before = decodeRankOf.get(id);
            if (before !== undefined && before !== k) problem ??= `request ${id} on decode ranks ${before} and ${k}`;
            decodeRankOf.set(id, k);
          }
        }
      });
    });
  };
  sim = new Simulation(run, { recordTokens: true, checkInvariants: true, onPass });
  const result = sim.run();
  return { run, result, problem, summary: buildSummary(run, result), records: buildRequestRecords(result) };
}

describe('disaggregated prefill and decode: laws over random configs', () => {
  it('conserve requests and tokens, keep each request in one place, and order its stages', () => {
    let transfers = 0;
    let preempting = 0;
    fc.assert(
      fc.property(arbDisagg, (raw) => {
        const { run, result, problem, summary, records } = simulateWatched(raw);
        expect(problem).toBeNull();
        const t = result.table;
        const transfer = run.kvTransfer as NonNullable<typeof run.kvTransfer>;
        if (summary.engine.preemptions > 0) preempting++;
        for (const r of records) {
          const id = r.request_id;
          // Conservation: every request completes (no time cap) with all its tokens, or is rejected.
          expect(['completed', 'rejected']).toContain(r.status);
          if (r.status === 'completed')
            expect(r.output_tokens).toBe(Math.min(t.outputLen[id], run.pools[1].limits.lengthLimit - r.input_tokens));
          expect(r.token_emitted_ms.length).toBe(t.generated[id]);
          const start = t.transferStartMs[id];
          if (start === start) {
            transfers++;
            // A prompt above the local threshold moves; the transfer starts at or after the
            // prefill's end and takes latency + bytes / bandwidth. The first token is sent at the
            // prefill's end, before the transfer, or after it from the decode worker; the decode
            // worker's tokens come after the transfer.
            expect(r.input_tokens).toBeGreaterThan(transfer.maxLocalPrefillTokens);
            expect(start).toBeGreaterThanOrEqual(t.handedOffMs[id]);
            expect(t.transferEndMs[id] - start).toBeCloseTo(
              transfer.latencyMs + (r.input_tokens * transfer.bytesPerToken) / transfer.bytesPerMs,
              9,
            );
            const fromDecode = transfer.firstTokenOnDecode ? 0 : 1;
            if (!transfer.firstTokenOnDecode && r.token_emitted_ms.length > 0) expect(r.token_emitted_ms[0]).toBe(t.handedOffMs[id]);
            if (r.token_emitted_ms.length > fromDecode) expect(r.token_emitted_ms[fromDecode]).toBeGreaterThan(t.transferEndMs[id]);
          } else if (r.output_tokens > 1) {
            expect(r.input_tokens).toBeLessThanOrEqual(transfer.maxLocalPrefillTokens);
          }
          // The TTFT stages add up to TTFT.
          if (r.time_to_first_token !== null) {
            const stages =
              t.serverMs[id] -
              r.sent_ms +
              (t.tokenizedMs[id] - t.serverMs[id]) +
              (t.firstScheduledMs[id] - t.tokenizedMs[id]) +
              (t.firstEmittedMs[id] - t.firstScheduledMs[id]) +
              (t.firstReceivedMs[id] - t.firstEmittedMs[id]);
            expect(stages).toBeCloseTo(r.time_to_first_token, 9);
          }
        }
        // The summary's stage means add up to mean TTFT.
        const ttft = summary.metrics.time_to_first_token;
        if (ttft !== undefined) {
          const s = summary.ttft_stages;
          const sum =
            s.mean_frontend_ms +
            s.mean_tokenization_ms +
            s.mean_queue_ms +
            s.mean_prefill_ms +
            (s.mean_kv_transfer_ms ?? NaN) +
            (s.mean_decode_ms ?? NaN) +
            s.mean_detokenization_ms;
          expect(sum).toBeCloseTo(ttft.avg, 6);
        }
        // Transfers on one link (prefill worker, decode worker) never overlap: first in, first out.
        const byLink = new Map<string, [number, number][]>();
        const prefill = run.pools[0];
        const decode = run.pools[1];
        for (const r of records) {
          const id = r.request_id;
          if (t.transferStartMs[id] !== t.transferStartMs[id]) continue;
          const link = `${Math.floor(t.otherRank[id] / prefill.ranksPerWorker)}>${Math.floor(t.rank[id] / decode.ranksPerWorker)}`;
          byLink.set(link, [...(byLink.get(link) ?? []), [t.transferStartMs[id], t.transferEndMs[id]]]);
        }
        for (const spans of byLink.values()) {
          spans.sort((x, y) => x[0] - y[0]);
          for (let i = 1; i < spans.length; i++) expect(spans[i][0]).toBeGreaterThanOrEqual(spans[i - 1][1] - 1e-9);
        }
      }),
      { numRuns: 150, seed: 25 },
    );
    // Coverage: the laws did not hold vacuously.
    expect(transfers).toBeGreaterThan(300);
    expect(preempting).toBeGreaterThan(0);
  });
});

// ---- Config ---------------------------------------------------------------------------------

describe('disaggregated configs', () => {
  const refusal = (engine: object) => {
    try {
      loadRunConfigFromObject({ engine, traffic: { stop: { requests: 4 } } }, 'run.yaml');
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('refuses aggregated with pools, one pool alone, and a transfer without pools, naming the key', () => {
    expect(refusal({ workers: { aggregated: {}, prefill: {}, decode: {} } })).toMatch(
      /run\.yaml: engine\.workers\.aggregated: is written with prefill workers: a deployment has aggregated workers or prefill and decode workers, not both/,
    );
    expect(refusal({ workers: { prefill: {} } })).toMatch(/engine\.workers\.decode: is required with prefill workers/);
    expect(refusal({ workers: { decode: {} } })).toMatch(/engine\.workers\.prefill: is required with decode workers/);
    expect(refusal({ kv_transfer: { latency_ms: 1 } })).toMatch(/engine\.kv_transfer: is read with prefill and decode workers only/);
    expect(refusal({ workers: { prefill: {}, decode: {} }, model: 'my-model' })).toMatch(
      /engine\.kv_transfer\.kv_bytes_per_token: is required: engine\.model "my-model" is not in the catalog/,
    );
    // L40S: PCIe between GPUs and no network link in the catalog.
    expect(refusal({ workers: { prefill: {}, decode: {} }, hardware: 'l40s', kv_transfer: { kv_bytes_per_token: 10 } })).toMatch(
      /engine\.kv_transfer\.bandwidth_gb_per_s: is required: l40s lists no network link in the catalog and links its GPUs by PCIe, not NVLink/,
    );
    expect(refusal({ workers: { prefill: {}, decode: {} }, kv_transfer: { kv_bytes_per_token: 10 } })).toMatch(
      /engine\.kv_transfer\.bandwidth_gb_per_s: is required: engine\.hardware "unknown" is not in the catalog/,
    );
    expect(
      refusal({
        workers: { prefill: { scheduler: { max_sequences: 0 } }, decode: {} },
        kv_transfer: { kv_bytes_per_token: 1, bandwidth_gb_per_s: 1 },
      }),
    ).toMatch(/engine\.workers\.prefill\.scheduler\.max_sequences: must be a positive integer/);
  });

  it('takes the bytes per token from the model and the bandwidth from the GPU when absent', () => {
    const resolved = (prefillTensor: number, decodeTensor: number, decodeReplicas = 1) =>
      resolveRun(
        config({
          engine: {
            model: 'llama-3.1-70b',
            hardware: 'h100_sxm',
            workers: {
              prefill: { parallelism: { tensor: prefillTensor } },
              decode: { parallelism: { tensor: decodeTensor, replicas: decodeReplicas } },
            },
          },
        }),
        null,
      ).kvTransfer;
    // Llama-3.1-70B, BF16 KV: 80 layers x 2 (K and V) x 8 KV heads x 128 x 2 bytes = 327,680
    // bytes per token; on one GPU of a 4-way shard 81,920 and of an 8-way shard 40,960. The
    // larger (the pool with fewer GPUs per worker) is what a link carries.
    // 4 + 8 = 12 GPUs do not fit H100's NVLink domain of 8: its network link, 50 GB/s.
    expect(resolved(4, 8)).toEqual({
      latencyMs: 0,
      bytesPerToken: 81_920,
      bytesPerMs: 50e6,
      maxLocalPrefillTokens: 0,
      firstTokenOnDecode: false,
    });
    // 2 + 2 x 2 = 6 GPUs fit: NVLink, 900 GB/s both ways, 450 one way.
    expect(resolved(2, 2, 2)).toEqual({
      latencyMs: 0,
      bytesPerToken: 163_840,
      bytesPerMs: 450e6,
      maxLocalPrefillTokens: 0,
      firstTokenOnDecode: false,
    });
  });

  it('gives each pool its own defaults: roofline timing and KV auto per pool', () => {
    const cfg = config({
      engine: {
        model: 'llama-3.1-70b',
        hardware: 'h100_sxm',
        workers: { prefill: { parallelism: { tensor: 4 } }, decode: { parallelism: { tensor: 8 } } },
      },
    });
    const run = resolveRun(cfg, null);
    expect(run.pools.map((p) => [p.role, p.timing.type, p.gpusPerWorker])).toEqual([
      ['prefill', 'roofline', 4],
      ['decode', 'roofline', 8],
    ]);
    // An 8-way shard holds half the KV per token of a 4-way one, with less of each GPU in weights: more than twice the tokens.
    expect(run.pools[1].kv.blocksPerRank).toBeGreaterThan(2 * run.pools[0].kv.blocksPerRank);
    expect(run.pools[1].router).toEqual({ type: 'least_loaded' });
    expect(run.pools[1].kv.prefixCache).toBeNull();
  });
});
