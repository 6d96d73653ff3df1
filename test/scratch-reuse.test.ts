/** Replays that reuse the thread's scratch buffers (core/scratch.ts) report exactly what fresh ones do. */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../src/config/load.js';
import { replay } from '../src/replay.js';

function summaryOf(raw: unknown): string {
  const { summary } = replay(parseRunConfig(raw, 'x.yaml'), { baseDir: '.' });
  const { wall_time_ms: _w, us_per_output_token: _u, ...simulator } = summary.simulator;
  return JSON.stringify({ ...summary, simulator });
}

const big = {
  engine: { detokenization: { workers: 3, base_ms: 0.5, per_output_us: 7 } },
  traffic: {
    source: { type: 'synthetic', input_tokens: 300, output_tokens: 90, random_range_ratio: 0.3, seed: 4 },
    load: { type: 'concurrency', concurrency: 40 },
    stop: { requests: 900 },
  },
};
const small = {
  traffic: {
    source: { type: 'synthetic', input_tokens: 50, output_tokens: 20 },
    load: { type: 'poisson', requests_per_second: 30 },
    stop: { requests: 40 },
  },
};

describe('scratch buffers reused between replays', () => {
  it('leave no trace of an earlier replay in a later one', () => {
    const first = summaryOf(big);
    const smallAfterBig = summaryOf(small);
    expect(summaryOf(big)).toBe(first);
    expect(summaryOf(small)).toBe(smallAfterBig);
    // A smaller replay after a larger one still reports only its own gaps.
    expect(JSON.parse(smallAfterBig).metrics.token_gap.count).toBe(40 * 19);
  });
});
