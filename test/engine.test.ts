/**
 * Engine behaviour (docs/replay-model.md, "Engine", §5), each expected time derived by hand in the
 * comment above its assertion. Fixed timing 10/2 ms unless stated: a pass costs 10 ms with
 * any prefill work plus 2 ms when it emits a token.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveRun, timingSpec } from '../src/config/resolve.js';
import { createPassTime } from '../src/core/timing/create-pass-time.js';
import { Simulation } from '../src/core/simulation.js';
import { config, fixedEngine, runCore, traceRows } from './helpers/core-run.js';

const synthetic = (input: number, output: number) => ({ type: 'synthetic', input_tokens: input, output_tokens: output });
const closedLoop = (concurrency: number) => ({ type: 'concurrency', concurrency });
const traceSource = { type: 'trace', path: 'mem.jsonl' };

describe('KV blocks and preemption', () => {
  it('preempts the newest running request, recomputes it later, and admits nothing in that pass', () => {
    // 10 blocks of 16 tokens. R0, R1: ISL 64 (4 blocks each), OSL 20, both admitted at 0.
    // Token k of each is emitted at 12 + 2(k-1). Both take block 5 in pass 2 (free 0).
    // R0 needs block 6 when it schedules position 80, in pass 18 (starts 44): R1 (newest) is
    // preempted with 17 tokens generated. R1 needs 81 tokens = 6 blocks to come back; only 4
    // are free until R0 finishes (token 20 at 50). Pass at 50 recomputes 81 tokens (12 ms):
    // R1's token 18 at 62, then 64 and 66.
    const { records, summary } = runCore({
      engine: fixedEngine({ kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 10 } } }),
      traffic: { source: synthetic(64, 20), load: closedLoop(2), stop: { requests: 2 } },
    });
    const r0 = Array.from({ length: 20 }, (_, k) => 12 + 2 * k);
    const r1 = [...Array.from({ length: 17 }, (_, k) => 12 + 2 * k), 62, 64, 66];
    expect(records[0].token_ms).toEqual(r0);
    expect(records[1].token_ms).toEqual(r1);
    expect(summary.engine.preemptions).toBe(1);
    expect(records[1].first_scheduled_ms).toBe(0);
    // Emit times equal receive times without detokenization.
    expect(records[1].token_emitted_ms).toEqual(r1);
  });

  it('rejects a prompt that needs more blocks than the pool, and ends a request that fills it', () => {
    // 4 blocks x 16 = 64 tokens. ISL 65 needs 5 blocks: rejected. ISL 64 fits; after its first
    // token the sequence (65 tokens) could not take another decode, so it ends with 1 token.
    const { records } = runCore(
      {
        engine: fixedEngine({ kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 4 } } }),
        traffic: { source: traceSource, load: closedLoop(2), stop: { requests: 2 } },
      },
      traceRows([
        [0, 64, 10],
        [0, 65, 10],
      ]),
    );
    expect(records[0].status).toBe('completed');
    expect(records[0].token_ms).toEqual([12]);
    expect(records[1].status).toBe('rejected');
    expect(records[1].response_received_ms).toBe(12);
  });

  it('delivers a rejection at the end of the pass in which it reached the head of waiting', () => {
    // context_length 100: R1 (ISL 200) is rejected while composing the pass at 0 that prefills
    // R0; the client gets the rejection when that pass ends (12), not at 0.
    const { records, summary } = runCore(
      {
        engine: { ...fixedEngine(), context_length: 100 },
        traffic: { source: traceSource, load: closedLoop(2), stop: { requests: 2 } },
      },
      traceRows([
        [0, 50, 4],
        [0, 200, 4],
      ]),
    );
    expect(records[0].token_ms).toEqual([12, 14, 16, 18]);
    expect(records[1].status).toBe('rejected');
    expect(records[1].response_received_ms).toBe(12);
    expect(records[1].token_ms).toEqual([]);
    expect(summary.run.error_request_count).toBe(1);
    expect(summary.run.request_count).toBe(1);
  });

  it('ends a request when prompt plus output reaches context_length', () => {
    // context_length 100, ISL 97: tokens 98, 99, 100 -> ends at 100 tokens with 3 outputs.
    const { records } = runCore({
      engine: { ...fixedEngine(), context_length: 100 },
      traffic: { source: synthetic(97, 10), load: closedLoop(1), stop: { requests: 1 } },
    });
    expect(records[0].token_ms).toEqual([12, 14, 16]);
  });
});

describe('chunked prefill and the token budget', () => {
  const linear = { type: 'linear', base_ms: 0, prefill_token_us: 1, prefill_pair_ns: 0, decode_request_us: 1000, decode_kv_token_ns: 0 };
  const twoPrompts = (chunked: boolean) =>
    runCore({
      engine: { workers: { aggregated: { scheduler: { max_batched_tokens: 8192, chunked_prefill: chunked }, timing: linear } } },
      traffic: { source: synthetic(6000, 2), load: closedLoop(2), stop: { requests: 2 } },
    });

  it('fills the budget with a chunk of the next prompt when chunked prefill is on', () => {
    // Pass 1: R0 6000 + R1 2192 tokens = 8.192 ms; R0's first token. Pass 2: R0 decodes (1 ms),
    // R1 finishes its 3808 tokens (3.808 ms): both emit at 13.0.
    const { records } = twoPrompts(true);
    expect(records[1].first_scheduled_ms).toBe(0);
    expect(records[0].token_ms[0]).toBeCloseTo(8.192, 9);
    expect(records[1].token_ms[0]).toBeCloseTo(13.0, 9);
  });

  it('keeps a prompt whole and blocks the queue head when chunked prefill is off', () => {
    // Pass 1: R0 6000 tokens alone (6 ms); R1 does not fit the 2192 left and waits.
    // Pass 2 at 6: R0 decodes (1 ms) + R1 6000 (6 ms) = 7 ms -> 13.
    const { records } = twoPrompts(false);
    expect(records[1].first_scheduled_ms).toBeCloseTo(6, 9);
    expect(records[0].token_ms[0]).toBeCloseTo(6, 9);
    expect(records[1].token_ms[0]).toBeCloseTo(13, 9);
  });

  it('admits no more than max_sequences, strictly first come first served', () => {
    // max_sequences 1: R0 runs alone (12, 14), then R1 (26, 28), then R2 (40, 42).
    const { records } = runCore({
      engine: fixedEngine({ scheduler: { max_sequences: 1 } }),
      traffic: { source: synthetic(100, 2), load: closedLoop(3), stop: { requests: 3 } },
    });
    expect(records.map((r) => r.token_ms)).toEqual([
      [12, 14],
      [26, 28],
      [40, 42],
    ]);
  });
});

describe('replicas and attention-DP ranks', () => {
  const linear = { type: 'linear', base_ms: 0, prefill_token_us: 1, prefill_pair_ns: 0, decode_request_us: 1000, decode_kv_token_ns: 0 };
  const trace = traceRows([
    [0, 1000, 2],
    [0, 3000, 2],
  ]);
  it('runs attention-DP ranks in lockstep: a pass ends when the slowest rank ends', () => {
    // R0 -> rank 0 (1000 tokens, 1 ms), R1 -> rank 1 (3000 tokens, 3 ms): the pass ends at 3.
    // Pass 2: both decode, 1 ms each -> 4.
    const { records } = runCore(
      {
        engine: { workers: { aggregated: { parallelism: { attention_data: 2 }, timing: linear } } },
        traffic: { source: traceSource, load: closedLoop(2), stop: { requests: 2 } },
      },
      trace,
    );
    expect(records[0].token_ms).toEqual([3, 4]);
    expect(records[1].token_ms).toEqual([3, 4]);
  });

  it("gives every rank's timing the tokens of the whole worker, for the experts they run together", () => {
    // Same passes as above, seen by a listener: pass 1 has 1000 tokens on rank 0 and 3000 on rank
    // 1 (the slowest, 3 ms), the worker 4000; pass 2 has one decode on each rank, the worker 2.
    // An idle rank adds nothing: with attention DP 2 and one request, the worker has its tokens.
    const passes = (requests: number) => {
      const run = resolveRun(
        config({
          engine: { workers: { aggregated: { parallelism: { attention_data: 2 }, timing: linear } } },
          traffic: { source: traceSource, load: closedLoop(requests), stop: { requests } },
        }),
        trace,
      );
      const seen: Array<[number, number, number, number]> = [];
      new Simulation(run, {
        onPass: (_worker, start, end, view) => seen.push([start, end, view.prefillTokens + view.decodeRequests, view.workerTokens]),
      }).run();
      return seen;
    };
    expect(passes(2)).toEqual([
      [0, 3, 3000, 4000],
      [3, 4, 1, 2],
    ]);
    expect(passes(1)).toEqual([
      [0, 1, 1000, 1000],
      [1, 2, 1, 1],
    ]);
  });

  it.each(['vllm', 'sglang', 'trtllm'])('tells the timing the longest and shortest decode context (%s)', (backend) => {
    // Prompts of 500, 900 and 100 tokens prefill together; each decode pass then reads contexts of
    // prompt + generated tokens: 501, 901 and 101, then 502, 902 and 102.
    const run = resolveRun(
      config({
        engine: { backend, workers: { aggregated: { timing: linear } } },
        traffic: { source: traceSource, load: closedLoop(3), stop: { requests: 3 } },
      }),
      traceRows([
        [0, 500, 3],
        [0, 900, 3],
        [0, 100, 3],
      ]),
    );
    const seen: Array<[number, number, number, number | undefined, number | undefined]> = [];
    new Simulation(run, {
      onPass: (_worker, _start, _end, view) =>
        seen.push([view.prefillTokens, view.decodeRequests, view.decodeKvTokens, view.decodeKvMax, view.decodeKvMin]),
    }).run();
    expect(seen).toEqual([
      [1500, 0, 0, 0, 0],
      [0, 3, 1503, 901, 101],
      [0, 3, 1506, 902, 102],
    ]);
  });

  it('runs replicas independently', () => {
    // Same requests on two replicas: R0 at 1, 2; R1 at 3, 4.
    const { records, summary } = runCore(
      {
        engine: { workers: { aggregated: { parallelism: { replicas: 2, tensor: 2 }, timing: linear } } },
        traffic: { source: traceSource, load: closedLoop(2), stop: { requests: 2 } },
      },
      trace,
    );
    expect(records[0].token_ms).toEqual([1, 2]);
    expect(records[1].token_ms).toEqual([3, 4]);
    // Worker time: 2 workers x 4 ms; 2 GPUs each.
    expect(summary.run.worker_seconds).toBeCloseTo(0.008, 12);
    expect(summary.run.gpu_hours).toBeCloseTo((0.008 * 2) / 3600, 15);
  });

  it('places requests on replicas round-robin in the order they reach the scheduler', () => {
    // max_sequences 1, two replicas: R0 -> w0, R1 -> w1, R2 -> w0 (after R0).
    const { records } = runCore({
      engine: fixedEngine({ parallelism: { replicas: 2 }, scheduler: { max_sequences: 1 } }),
      traffic: { source: synthetic(100, 2), load: closedLoop(3), stop: { requests: 3 } },
    });
    expect(records.map((r) => r.token_ms)).toEqual([
      [12, 14],
      [12, 14],
      [26, 28],
    ]);
  });
});

describe('traffic', () => {
  it('lets an arrival at the exact end of a pass join the pass that starts then', () => {
    // Prefill 18 + decode 2 = 20 ms; constant rate 50/s: R1 arrives at 20, when R0's first pass
    // ends, and joins the pass at 20 (R0 decode + R1 prefill, 20 ms): R1's first token at 40.
    const { records } = runCore({
      engine: { workers: { aggregated: { timing: { type: 'fixed', prefill_ms: 18, decode_ms: 2 } } } },
      traffic: { source: synthetic(100, 2), load: { type: 'constant_rate', requests_per_second: 50 }, stop: { requests: 2 } },
    });
    expect(records[1].sent_ms).toBe(20);
    expect(records[1].token_ms).toEqual([40, 42]);
    expect(records[0].token_ms).toEqual([20, 40]);
  });

  it('runs synthetic sessions turn by turn on one slot, with the conversation as the next prompt', () => {
    // Turn 0: sent 0, tokens 12, 14. Turn 1 sent at 14 + 5 = 19 with prompt 2*100 + 2 = 202:
    // tokens 31, 33. A new session starts at 33 (no delay between sessions): 45, 47; 52: 64, 66.
    const { records } = runCore({
      engine: fixedEngine(),
      traffic: {
        source: { type: 'synthetic-session', turns: 2, new_input_tokens_per_turn: 100, output_tokens_per_turn: 2, inter_turn_delay_ms: 5 },
        load: closedLoop(1),
        stop: { requests: 4 },
      },
    });
    expect(records.map((r) => r.sent_ms)).toEqual([0, 19, 33, 52]);
    expect(records.map((r) => r.input_tokens)).toEqual([100, 202, 100, 202]);
    expect(records.map((r) => [r.session_id, r.turn_index])).toEqual([
      [0, 0],
      [0, 1],
      [1, 0],
      [1, 1],
    ]);
    expect(records[3].token_ms).toEqual([64, 66]);
  });

  it('replays trace timestamps divided by speedup, later turns after the previous turn plus delay', () => {
    // Session a: row 0 at 0; session b: row 1 at 5/2 = 2.5; row 2 is a's second turn (delay 3).
    // Row 0: pass 0-12 (token 1); pass 12-24 decodes row 0 and prefills row 1: row 0's token 2
    // and row 1's token 1 at 24; row 1's token 2 at 26. Row 0 acted on at 24 -> row 2 sent at 27:
    // tokens 39, 41.
    const { records } = runCore(
      {
        engine: fixedEngine(),
        traffic: { source: traceSource, load: { type: 'trace_timestamps', speedup: 2 }, stop: { requests: 3 } },
      },
      traceRows([
        [0, 100, 2, 'a'],
        [5, 100, 2, 'b'],
        [1000, 100, 2, 'a', 3],
      ]),
    );
    expect(records.map((r) => r.sent_ms)).toEqual([0, 2.5, 27]);
    expect(records.map((r) => r.token_ms)).toEqual([
      [12, 24],
      [24, 26],
      [39, 41],
    ]);
    expect(records[2].turn_index).toBe(1);
    expect(records[2].session_id).toBe(records[0].session_id);
  });

  it('replays a trace in closed loop in file order, ignoring timestamps', () => {
    const { records } = runCore(
      {
        engine: fixedEngine(),
        traffic: { source: traceSource, load: closedLoop(1), stop: { requests: 2 } },
      },
      traceRows([
        [500, 100, 2],
        [0, 300, 1],
        [7, 50, 1],
      ]),
    );
    expect(records.map((r) => [r.sent_ms, r.input_tokens])).toEqual([
      [0, 100],
      [14, 300],
    ]);
  });

  it('draws Poisson gaps from the seed: same seed same gaps, mean and shape of an exponential', () => {
    const run = (seed: number) =>
      runCore({
        engine: { workers: { aggregated: { timing: { type: 'fixed', prefill_ms: 0.01, decode_ms: 0 } } } },
        traffic: { source: synthetic(10, 1), load: { type: 'poisson', requests_per_second: 100, seed }, stop: { requests: 20000 } },
      }).records.map((r) => r.sent_ms);
    const a = run(7);
    expect(run(7)).toEqual(a);
    expect(run(8)).not.toEqual(a);
    expect(a[0]).toBe(0);
    const gaps = a.slice(1).map((t, i) => t - a[i]);
    const mean = gaps.reduce((x, y) => x + y, 0) / gaps.length;
    expect(mean).toBeGreaterThan(10 * 0.97);
    expect(mean).toBeLessThan(10 * 1.03);
    // P(gap < mean) = 1 - 1/e for an exponential.
    const below = gaps.filter((g) => g < 10).length / gaps.length;
    expect(below).toBeGreaterThan(0.632 - 0.015);
    expect(below).toBeLessThan(0.632 + 0.015);
  });

  it('stops at requests_per_load_unit x concurrency, rounded', () => {
    const { summary } = runCore({
      engine: fixedEngine(),
      traffic: { source: synthetic(10, 2), load: closedLoop(3), stop: { requests_per_load_unit: 2.5 } },
    });
    expect(summary.run.request_count).toBe(8);
  });

  it('leaves the first warmup_requests out of every metric', () => {
    const { summary } = runCore({
      engine: fixedEngine(),
      traffic: { source: synthetic(100, 2), load: closedLoop(1), stop: { requests: 3 } },
      report: { warmup_requests: 1 },
    });
    expect(summary.run.request_count).toBe(2);
    expect(summary.metrics.time_to_first_token?.count).toBe(2);
    // Duration from the first valid send (14) to the last valid receipt (42).
    expect(summary.run.benchmark_duration_s).toBeCloseTo(0.028, 12);
  });

  it('with a time cap, records nothing after it and leaves unfinished requests incomplete', () => {
    // Cap 0.015 s: R0 gets tokens at 12 and 14 of 4; the pass ending at 16 is after the cap.
    const { records, summary } = runCore({
      engine: fixedEngine(),
      traffic: { source: synthetic(100, 4), load: closedLoop(1), stop: { max_virtual_time_seconds: 0.015 } },
    });
    expect(records[0].status).toBe('incomplete');
    expect(records[0].token_ms).toEqual([12, 14]);
    expect(summary.run.request_count).toBe(0);
    expect(summary.run.incomplete_request_count).toBe(1);
  });
});

describe('report', () => {
  it('computes AIPerf request-level ITL and keeps pooled token gaps separately', () => {
    // Trace: R0 ISL 100 OSL 3, R1 ISL 100 OSL 5 in one batch: gaps 2, 2 and 2, 2, 2, 2.
    const { summary } = runCore(
      {
        engine: fixedEngine(),
        traffic: { source: traceSource, load: closedLoop(2), stop: { requests: 2 } },
      },
      traceRows([
        [0, 100, 3],
        [0, 100, 5],
      ]),
    );
    expect(summary.metrics.inter_token_latency?.avg).toBe(2);
    expect(summary.metrics.token_gap?.count).toBe(6);
    expect(summary.metrics.output_token_throughput_per_user?.avg).toBe(500);
    expect(summary.metrics.output_sequence_length?.avg).toBe(4);
    // e2e throughput per request: 3 / 0.016 and 5 / 0.020.
    expect(summary.metrics.e2e_output_token_throughput?.avg).toBeCloseTo((3 / 0.016 + 5 / 0.02) / 2, 9);
  });
});

describe('timing providers', () => {
  it('stops the run with an error naming the provider when a pass time is negative or not finite', async () => {
    const { resolveRun } = await import('../src/config/resolve.js');
    const { Simulation } = await import('../src/core/simulation.js');
    const { config } = await import('./helpers/core-run.js');
    for (const bad of [-1, NaN, Infinity]) {
      const run = resolveRun(config({ traffic: { stop: { requests: 1 } } }), null);
      run.pools[0].timing = { type: 'fixed', prefillMs: bad, decodeMs: 0 };
      expect(() => new Simulation(run).run()).toThrow(new RegExp(`timing provider 'fixed' returned ${bad} ms`));
    }
  });

  it('gives the polynomial provider its documented coefficients', () => {
    // One request, ISL 1000, OSL 2, unlimited KV (u = 0): prefill pass 4.209989e-7*1e6 +
    // 15.18344 + 16.50142 = 32.10586 ms emits token 1; a decode pass max(1, 5.74) = 5.74 ms.
    const { records } = runCore({
      engine: { workers: { aggregated: { timing: { type: 'polynomial' } } } },
      traffic: { source: synthetic(1000, 2), load: closedLoop(1), stop: { requests: 1 } },
    });
    expect(records[0].token_ms[0]).toBeCloseTo(0.4209989 + 15.18344 + 16.50142, 9);
    expect(records[0].token_ms[1] - records[0].token_ms[0]).toBeCloseTo(5.74, 9);
  });
});

describe('linear timing with a decode-request exponent', () => {
  it('charges decode_request_us x B^p per pass', () => {
    // Four requests decode together: 1 ms x 4^0.5 = 2 ms per decode pass (prefill 1 us/token:
    // 400 tokens -> 0.4 ms for the first pass, which has no decoding request yet).
    const { records } = runCore({
      engine: {
        workers: { aggregated: { timing: { type: 'linear', prefill_token_us: 1, decode_request_us: 1000, decode_request_exponent: 0.5 } } },
      },
      traffic: { source: synthetic(100, 3), load: closedLoop(4), stop: { requests: 4 } },
    });
    expect(records[0].token_ms[0]).toBeCloseTo(0.4, 12);
    expect(records[0].token_ms[1]).toBeCloseTo(2.4, 12);
    expect(records[0].token_ms[2]).toBeCloseTo(4.4, 12);
  });
});

describe('linear timing with a prefill overlap', () => {
  // Request A (ISL 100, OSL 5) at 0 ms, B (ISL 400, OSL 1) at 5 ms; base 2 ms, 10 us per prefill
  // token, nothing else. R is the rest of a pass (base and decode terms), F its prefill terms.
  const run = (overlap: number) =>
    runCore(
      {
        engine: { workers: { aggregated: { timing: { type: 'linear', base_ms: 2, prefill_token_us: 10, prefill_overlap: overlap } } } },
        traffic: { source: traceSource, load: { type: 'trace_timestamps' }, stop: { requests: 2 } },
      },
      traceRows([
        [0, 100, 5],
        [5, 400, 1],
      ]),
    );

  it('0: the plain sum R + F', () => {
    // A's prefill 0-3 (2 + 1); decode 3-5; B arrives at 5 and joins the pass at 5: A decodes and
    // B prefills, 2 + 4 = 6 (5-11); then A decodes 11-13, 13-15.
    const { records } = run(0);
    expect(records[0].token_ms).toEqual([3, 5, 11, 13, 15]);
    expect(records[1].token_ms).toEqual([11]);
  });

  it('1: the larger of the two, max(R, F)', () => {
    // A's prefill max(2, 1) = 2 (0-2); decodes 2-4, 4-6 (B arrives at 5, waits); A's decode with
    // B's prefill max(2, 4) = 4 (6-10); A decodes 10-12.
    const { records } = run(1);
    expect(records[0].token_ms).toEqual([2, 4, 6, 10, 12]);
    expect(records[1].token_ms).toEqual([10]);
  });

  it('0.5: R + F - 0.5 min(R, F)', () => {
    // A's prefill 3 - 0.5 = 2.5; decodes 2.5-4.5, 4.5-6.5; with B's prefill 6 - 1 = 5 (6.5-11.5);
    // A decodes 11.5-13.5.
    const { records } = run(0.5);
    expect(records[0].token_ms).toEqual([2.5, 4.5, 6.5, 11.5, 13.5]);
    expect(records[1].token_ms).toEqual([11.5]);
  });

  it('lies between the larger of prefill and the rest and their sum, and falls as the overlap grows', () => {
    const cost = fc.double({ min: 0, max: 1000, noNaN: true });
    fc.assert(
      fc.property(
        fc.record({ base_ms: cost, prefill_token_us: cost, prefill_pair_ns: cost, decode_request_us: cost, decode_kv_token_ns: cost }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.record({ prefillTokens: fc.nat(20000), prefillPairs: fc.nat(1e8), decodeRequests: fc.nat(512), decodeKvTokens: fc.nat(1e6) }),
        (c, h, v) => {
          const view = {
            ...v,
            emittedTokens: v.decodeRequests,
            workerTokens: v.prefillTokens + v.decodeRequests,
            kvBlocksUsed: 0,
            kvBlocksTotal: 0,
          };
          const time = (overlap: number) =>
            createPassTime(timingSpec({ type: 'linear', ...c, decode_request_exponent: 1, prefill_overlap: overlap }))(view);
          const rest = c.base_ms + (c.decode_request_us * v.decodeRequests) / 1e3 + (c.decode_kv_token_ns * v.decodeKvTokens) / 1e6;
          const prefill = (c.prefill_token_us * v.prefillTokens) / 1e3 + (c.prefill_pair_ns * v.prefillPairs) / 1e6;
          const t = time(h);
          const tol = 1e-9 * (rest + prefill + 1);
          expect(t).toBeGreaterThanOrEqual(Math.max(rest, prefill) - tol);
          expect(t).toBeLessThanOrEqual(rest + prefill + tol);
          expect(time(0)).toBeCloseTo(rest + prefill, 6);
          expect(time(1)).toBeCloseTo(Math.max(rest, prefill), 6);
          expect(time(Math.min(1, h + 0.25))).toBeLessThanOrEqual(t + tol);
        },
      ),
      { numRuns: 300, seed: 7 },
    );
  });

  it('is an error outside [0, 1], naming the file and the field', () => {
    expect(() =>
      runCore({
        engine: { workers: { aggregated: { timing: { type: 'linear', base_ms: 1, prefill_overlap: 1.5 } } } },
        traffic: { source: synthetic(10, 1), load: closedLoop(1), stop: { requests: 1 } },
      }),
    ).toThrow('test.yaml: engine.workers.aggregated.timing.prefill_overlap: must be a number in [0, 1]');
  });
});

describe('closed-loop ramp-up', () => {
  it('starts slot k at k x ramp_up_ms / concurrency', () => {
    // Ramp 30 ms over 3 slots: slots start at 0, 10, 20. R0: pass 0-12 (token 1). R1 arrives
    // at 10 and joins the pass at 12 (R0 decode + R1 prefill: 12 ms): R0's token 2 and R1's
    // token 1 at 24. R2 arrives at 20 and joins the pass at 24 (R1 decode + R2 prefill): 36;
    // then R2 decodes alone: 38.
    const { records } = runCore({
      engine: fixedEngine(),
      traffic: { source: synthetic(100, 2), load: { type: 'concurrency', concurrency: 3, ramp_up_ms: 30 }, stop: { requests: 3 } },
    });
    expect(records.map((r) => r.sent_ms)).toEqual([0, 10, 20]);
    expect(records.map((r) => r.token_ms)).toEqual([
      [12, 24],
      [24, 36],
      [36, 38],
    ]);
  });
});
