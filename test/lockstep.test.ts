/**
 * Closed loops in lockstep (docs/replay-model.md, "Closed loops in lockstep"): with fixed lengths
 * the slots that start together stay together, every TTFT is the worked timeline's; a different
 * length breaks the pairs, and the request the budget cannot take waits a pass.
 */
import { describe, expect, it } from 'vitest';
import { runCore, traceRows } from './helpers/core-run.js';

// Fixed timing 10 / 2 ms, 4 slots, ISL 100, budget 202 without chunking: two prompts a pass.
const engine = {
  workers: {
    aggregated: {
      timing: { type: 'fixed', prefill_ms: 10, decode_ms: 2 },
      scheduler: { max_batched_tokens: 202, max_sequences: 256, chunked_prefill: false },
      kv_cache: { capacity: { type: 'unlimited' }, prefix_caching: false },
    },
  },
};

/** Per request: [sent, first token, every token received]. */
function timeline(run: ReturnType<typeof runCore>) {
  return run.records.map((r) => [run.result.table.sentMs[r.request_id], run.result.tokenReceivedMs![r.request_id]]);
}

describe('a closed loop of fixed lengths stays in lockstep', () => {
  it('keeps the pairs that start together, and every TTFT after the first wave is one prefill pass', () => {
    const run = runCore({
      engine,
      traffic: {
        source: { type: 'synthetic', input_tokens: 100, output_tokens: 3 },
        load: { type: 'concurrency', concurrency: 4 },
        stop: { requests: 12 },
      },
    });
    // The worked timeline: A, B prefilled in 0-12; C, D in 12-24 (with A, B decoding); a decode
    // pass 24-26 ends A and B; A', B' sent at 26 prefilled in 26-38 (C, D end); C', D' in 38-50;
    // the 26 ms cycle repeats.
    expect(timeline(run).slice(0, 8)).toEqual([
      [0, [12, 24, 26]],
      [0, [12, 24, 26]],
      [0, [24, 26, 38]],
      [0, [24, 26, 38]],
      [26, [38, 50, 52]],
      [26, [38, 50, 52]],
      [38, [50, 52, 64]],
      [38, [50, 52, 64]],
    ]);
    const ttft = run.records.slice(4).map((r) => r.time_to_first_token);
    expect(new Set(ttft)).toEqual(new Set([12]));
  });

  it('breaks up when one output is longer: a request the budget cannot take waits a pass', () => {
    // B (row 1) has 4 output tokens. A ends at 26 alone: A' (row 4) is prefilled alone in 26-38.
    // B, C and D end at 38: B', C' (rows 5, 6) fill the budget with A' decoding (1 + 200 tokens);
    // D' (row 7) waits for the pass 50-62 (3 decodes + 100): TTFT 24 instead of 12. With no
    // request left to send, decode-only passes of 2 ms follow: 62-64, 64-66.
    const rows = traceRows([
      [0, 100, 3],
      [0, 100, 4],
      [0, 100, 3],
      [0, 100, 3],
      [0, 100, 3],
      [0, 100, 3],
      [0, 100, 3],
      [0, 100, 3],
    ]);
    const run = runCore(
      {
        engine,
        traffic: {
          source: { type: 'trace', path: 'in-memory.jsonl' },
          load: { type: 'concurrency', concurrency: 4 },
          stop: { requests: 8 },
        },
      },
      rows,
    );
    const t = timeline(run);
    expect(t[1]).toEqual([0, [12, 24, 26, 38]]);
    expect(t[4]).toEqual([26, [38, 50, 62]]);
    expect(t[5]).toEqual([38, [50, 62, 64]]);
    expect(t[6]).toEqual([38, [50, 62, 64]]);
    expect(t[7]).toEqual([38, [62, 64, 66]]);
    expect(run.records[7].time_to_first_token).toBe(24);
  });
});
