/**
 * Hand-derived timelines of each scheduler (docs/replay-model.md, "Schedulers"), with fixed
 * timing: a pass takes 10 ms if it has prefill tokens, plus 2 ms if it emits a token.
 */
import { describe, expect, it } from 'vitest';
import { runCore, traceRows } from './helpers/core-run.js';

function engine(backend: string, scheduler: Record<string, unknown>, kv: Record<string, unknown>) {
  return {
    backend,
    workers: { aggregated: { timing: { type: 'fixed', prefill_ms: 10, decode_ms: 2 }, scheduler, kv_cache: kv } },
  };
}

/** Per request: [sent, first token received, last token received] (ms). */
function times(run: ReturnType<typeof runCore>) {
  return run.records.map((r) => {
    const received = run.result.tokenReceivedMs![r.request_id];
    return [run.result.table.sentMs[r.request_id], received[0], received[received.length - 1]];
  });
}

describe('TensorRT-LLM guaranteed_no_evict against vLLM: KV of 100 blocks of 16, two requests 512 in / 512 out', () => {
  const traffic = {
    source: { type: 'synthetic', input_tokens: 512, output_tokens: 512 },
    load: { type: 'concurrency', concurrency: 2 },
    stop: { requests: 2 },
  };
  const kv = { block_size: 16, capacity: { type: 'fixed', blocks: 100 } };

  it('trtllm: the second request starts only after the first has finished (it cannot reserve 64 blocks beside 64)', () => {
    // Request 0 reserves ceil((512 + 512) / 16) = 64 blocks; 100 - 64 = 36 < 64, so request 1
    // waits. Request 0: prefill pass [0, 12) emits token 1, then 511 decode passes of 2 ms:
    // last token at 12 + 511 x 2 = 1034. Request 1 is admitted at 1034: first token at 1046,
    // last at 1046 + 1022 = 2068. Nothing is ever preempted.
    const run = runCore({ engine: engine('trtllm', {}, kv), traffic });
    expect(times(run)).toEqual([
      [0, 12, 1034],
      [0, 1046, 2068],
    ]);
    expect(run.result.preemptionCount).toBe(0);
  });

  it('vllm: both start at once and the newest is preempted when the pool runs out', () => {
    // Both prefill in [0, 12). After n decode steps each holds ceil((512 + n) / 16) blocks;
    // 2 x 50 = 100 at n = 288 (800 tokens); the step computing token 801 preempts request 1.
    const run = runCore({ engine: engine('vllm', {}, kv), traffic });
    const [r0, r1] = times(run);
    expect(r0[1]).toBe(12);
    expect(r1[1]).toBe(12);
    expect(run.result.preemptionCount).toBeGreaterThanOrEqual(1);
    // Request 0 runs undisturbed: 12 + 511 x 2.
    expect(r0[2]).toBe(1034);
    expect(r1[2]).toBeGreaterThan(1034);
  });

  it('trtllm max_utilization admits both at once like vLLM and pauses one', () => {
    const run = runCore({ engine: engine('trtllm', { capacity_policy: 'max_utilization' }, kv), traffic });
    const [r0, r1] = times(run);
    expect([r0[1], r1[1]]).toEqual([12, 12]);
    expect(run.result.preemptionCount).toBeGreaterThanOrEqual(1);
  });
});

describe('SGLang', () => {
  // Blocks of one token: the pool is exactly tokens.
  const kv = (blocks: number) => ({ block_size: 1, capacity: { type: 'fixed', blocks }, prefix_caching: false });
  const traceSource = { type: 'trace', path: 'mem.jsonl', block_size: 512 };
  const atTimestamps = { type: 'trace_timestamps' };

  it('admission reserves the expected output: new_token_ratio x remaining outputs of the running requests', () => {
    // Pool 2000 tokens. Request 0 (100 in, 1000 out) at 0: 100 + 1000 < 2000, admitted; its
    // prefill pass [0, 12) emits token 1, then decode passes of 2 ms. After k decode passes
    // (at 12 + 2k) it holds 100 + k tokens and the ratio is 0.7 - k (0.7 - 0.098) / 600.
    // Request 1 (400 in, 810 out) needs 400 + 810 = 1210 < 1900 - k - (999 - k) x ratio.
    // Sent at 12 (k = 0): 1900 - 999 x 0.7 = 1200.7 <= 1210, refused; the batch is full until
    // request 0 finishes at 12 + 999 x 2 = 2010, then prefill [2010, 2022): TTFT 2010.
    const early = runCore(
      { engine: engine('sglang', {}, kv(2000)), traffic: { source: traceSource, load: atTimestamps, stop: { requests: 2 } } },
      traceRows([
        [0, 100, 1000],
        [12, 400, 810],
      ]),
    );
    expect(times(early)).toEqual([
      [0, 12, 2010],
      [12, 2022, 2022 + 809 * 2],
    ]);
    // Sent at 212 (k = 100): ratio 0.7 - 100 x 0.602 / 600 = 0.59967, 1800 - 899 x 0.59967
    // = 1260.9 > 1210, admitted at once. Its prefill pass [212, 224) runs alone (request 0
    // gets no token in it), then both decode: request 0's token 102 comes at 226.
    const late = runCore(
      { engine: engine('sglang', {}, kv(2000)), traffic: { source: traceSource, load: atTimestamps, stop: { requests: 2 } } },
      traceRows([
        [0, 100, 1000],
        [212, 400, 810],
      ]),
    );
    const [r0, r1] = times(late);
    expect(r1[1] - r1[0]).toBe(12);
    const tokens0 = late.result.tokenReceivedMs![0];
    expect(tokens0[100]).toBe(212);
    expect(tokens0[101]).toBe(226);
    // Request 0 loses one 12 ms pass: 999 gaps of 2 ms plus 12.
    expect(r0[2]).toBe(12 + 999 * 2 + 12);
  });

  it('retracts the request with the fewest outputs when decode runs out of KV, and recomputes it later', () => {
    // Pool 2100 tokens. Request 0 (100 in, 1000 out) prefills in [0, 12). Request 1 (same
    // lengths) is sent at 12: 1100 < 2000 - 999 x 0.7 = 1300.7, admitted; prefill [12, 24).
    // Decode passes from 24 hold 2 x (100 + n) tokens after n passes: full at n = 950. In pass
    // 951 a block cannot be had: both have 951 outputs and 100-token prompts, so the later
    // request (1) is retracted; request 0 alone reaches 1000 outputs at 24 + 999 x 2 = 2022.
    // Request 1 waits (1051 + 1000 tokens do not fit beside request 0), is readmitted at 2022,
    // recomputes 1051 tokens in [2022, 2034) (token 952), then 48 decode passes: 2130.
    const run = runCore(
      { engine: engine('sglang', {}, kv(2100)), traffic: { source: traceSource, load: atTimestamps, stop: { requests: 2 } } },
      traceRows([
        [0, 100, 1000],
        [12, 100, 1000],
      ]),
    );
    expect(times(run)).toEqual([
      [0, 12, 2022],
      [12, 24, 2130],
    ]);
    expect(run.result.preemptionCount).toBe(1);
    const tokens1 = run.result.tokenReceivedMs![1];
    expect(tokens1[950]).toBe(1924);
    expect(tokens1[951]).toBe(2034);
  });

  it('lpm admits the request with the longest cached prefix first; fcfs in arrival order', () => {
    // max_sequences 1: one request at a time. Request 0 (hash ids 1, 2) runs in [0, 14) and
    // leaves its prompt blocks cached. Requests 1 (ids 3, 4; sent at 1) and 2 (ids 1, 2; sent
    // at 2) wait. lpm takes request 2 first (1008 tokens cached): tokens at 26 and 28, then
    // request 1 at 40 and 42. fcfs: request 1 at 26 and 28, request 2 at 40 and 42.
    const rows: Array<[number, number, number]> = [
      [0, 1024, 2],
      [1, 1024, 2],
      [2, 1024, 2],
    ];
    const hashes = [
      [1, 2],
      [3, 4],
      [1, 2],
    ];
    const prefixKv = { block_size: 16, capacity: { type: 'unlimited' } };
    const run = (order: string) =>
      runCore(
        {
          engine: engine('sglang', { max_sequences: 1, schedule_policy: order }, prefixKv),
          traffic: { source: traceSource, load: atTimestamps, stop: { requests: 3 } },
        },
        traceRows(rows, hashes),
      );
    expect(times(run('lpm'))).toEqual([
      [0, 12, 14],
      [1, 40, 42],
      [2, 26, 28],
    ]);
    expect(times(run('fcfs'))).toEqual([
      [0, 12, 14],
      [1, 26, 28],
      [2, 40, 42],
    ]);
  });
});

describe('vLLM priority', () => {
  it('admits the waiting request of lowest priority value first (trace column)', () => {
    // max_sequences 1. Request 0 runs in [0, 14). Then request 2 (priority 1) before request
    // 1 (priority 9): [14, 28) and [28, 42).
    const trace = traceRows([
      [0, 100, 2],
      [1, 100, 2],
      [2, 100, 2],
    ]);
    trace.priority = Int32Array.from([5, 9, 1]);
    const run = (order: string) =>
      runCore(
        {
          engine: engine('vllm', { max_sequences: 1, schedule_policy: order }, { capacity: { type: 'unlimited' } }),
          traffic: { source: { type: 'trace', path: 'mem.jsonl' }, load: { type: 'trace_timestamps' }, stop: { requests: 3 } },
        },
        trace,
      );
    expect(times(run('priority'))).toEqual([
      [0, 12, 14],
      [1, 40, 42],
      [2, 26, 28],
    ]);
    expect(times(run('fcfs'))).toEqual([
      [0, 12, 14],
      [1, 26, 28],
      [2, 40, 42],
    ]);
  });

  it('preempts the running request of largest priority value, not the newest', () => {
    // Pool 10 blocks of 16. Request 0 (priority 0, 16 in, 100 out) and request 1 (priority 7,
    // 16 in, 100 out) sent at 0; request 2 (priority 3) at 1. All three are running by the time
    // blocks run out; FCFS would preempt request 2 (the newest), priority preempts request 1.
    const trace = traceRows([
      [0, 16, 100],
      [0, 16, 100],
      [1, 16, 100],
    ]);
    trace.priority = Int32Array.from([0, 7, 3]);
    const run = runCore(
      {
        engine: engine(
          'vllm',
          { schedule_policy: 'priority' },
          { block_size: 16, capacity: { type: 'fixed', blocks: 10 }, prefix_caching: false },
        ),
        traffic: { source: { type: 'trace', path: 'mem.jsonl' }, load: { type: 'trace_timestamps' }, stop: { requests: 3 } },
      },
      trace,
    );
    const [r0, r1, r2] = times(run);
    expect(run.result.preemptionCount).toBeGreaterThanOrEqual(1);
    // Request 1 finishes last: it is the one sent back to recompute.
    expect(r1[2]).toBeGreaterThan(r2[2]);
    expect(r0[2]).toBeLessThan(r2[2]);
  });
});
