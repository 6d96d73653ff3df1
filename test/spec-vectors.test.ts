import { describe, expect, it } from 'vitest';
import { fixedEngine, runCore } from './helpers/core-run.js';

/** docs/replay-model.md, "Timing providers" test vectors: fixed timing 10/2 ms, unlimited KV, budget 8192, 256 sequences. */
function closed(input: number, output: number, concurrency: number, requests: number, engine: Record<string, unknown> = {}) {
  return {
    engine: { ...fixedEngine(), ...engine },
    traffic: {
      source: { type: 'synthetic', input_tokens: input, output_tokens: output },
      load: { type: 'concurrency', concurrency },
      stop: { requests },
    },
  };
}

describe('worked examples of docs/replay-model.md', () => {
  it('1 request, ISL 1024, OSL 4: tokens at 12, 14, 16, 18; TTFT 12; ITL 2; latency 18', () => {
    const { records, summary } = runCore(closed(1024, 4, 1, 1));
    expect(records[0].token_ms).toEqual([12, 14, 16, 18]);
    expect(summary.metrics.time_to_first_token?.avg).toBe(12);
    expect(summary.metrics.inter_token_latency?.avg).toBe(2);
    expect(summary.metrics.request_latency?.avg).toBe(18);
  });

  it('1 request, ISL 20000, OSL 2: chunks 8192, 8192, 3616 end at 10, 20, 32; tokens at 32, 34', () => {
    const { records, summary } = runCore(closed(20000, 2, 1, 1));
    expect(records[0].first_scheduled_ms).toBe(0);
    expect(records[0].token_emitted_ms).toEqual([32, 34]);
    expect(records[0].token_ms).toEqual([32, 34]);
    expect(summary.engine.passes).toBe(4);
  });

  it('1 request, OSL 0: no token, and not a valid record for TTFT', () => {
    const { records, summary } = runCore(closed(100, 0, 1, 1));
    expect(records[0].status).toBe('completed');
    expect(records[0].token_ms).toEqual([]);
    expect(records[0].time_to_first_token).toBeNull();
    expect(summary.metrics.time_to_first_token).toBeUndefined();
    expect(summary.run.request_count).toBe(0);
  });

  it('concurrency 2, three requests ISL 100 OSL 2: R1, R2 tokens at 12, 14; R3 sent at 14, tokens at 26, 28', () => {
    const { records } = runCore(closed(100, 2, 2, 3));
    expect(records.map((r) => r.token_ms)).toEqual([
      [12, 14],
      [12, 14],
      [26, 28],
    ]);
    expect(records[2].sent_ms).toBe(14);
    expect(records[2].time_to_first_token).toBe(12);
  });

  it('prompt >= context_length: rejected, an error record, received at the end of the pass where it reached the head', () => {
    // R0 (ISL 100) runs; R1 (ISL 100 >= context_length 50)... use lengths that differ by request:
    // with context_length 100 every 100-token prompt is rejected in the first pass, which is empty (0 ms).
    const { records, summary } = runCore(closed(100, 4, 1, 2, { context_length: 100 }));
    expect(records.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(records[0].response_received_ms).toBe(0);
    expect(summary.run.error_request_count).toBe(2);
    expect(summary.run.request_count).toBe(0);
  });
});
