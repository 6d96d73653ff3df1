/**
 * `SimulationOptions.tokenGaps: false` (the fits' replays): no pooled token gaps, so no
 * `token_gap` in the summary, and every per-request metric exactly as with them.
 */
import { describe, expect, it } from 'vitest';
import { buildSummary } from '../src/core/report.js';
import { resolveRun } from '../src/config/resolve.js';
import { Simulation } from '../src/core/simulation.js';
import { config, fixedEngine } from './helpers/core-run.js';

describe('a replay without pooled token gaps', () => {
  const raw = {
    engine: fixedEngine(),
    traffic: {
      source: { type: 'synthetic', input_tokens: 100, output_tokens: 5, output_tokens_stddev: 2, seed: 3 },
      load: { type: 'concurrency', concurrency: 3 },
      stop: { requests: 12 },
    },
    report: { warmup_requests: 2 },
  };
  const summaryOf = (tokenGaps: boolean) => {
    const run = resolveRun(config(raw), null);
    return buildSummary(run, new Simulation(run, { tokenGaps }).run());
  };

  it('reports no token_gap and the same per-request metrics', () => {
    const full = summaryOf(true);
    const lean = summaryOf(false);
    // With gaps: 10 measured requests of 3 to 9 outputs, each gap counted once.
    expect(full.metrics.token_gap?.count).toBe(full.metrics.output_sequence_length!.avg * 10 - 10);
    expect(lean.metrics).not.toHaveProperty('token_gap');
    const { token_gap: _, ...rest } = full.metrics;
    expect(lean.metrics).toEqual(rest);
    expect(lean.run).toEqual(full.run);
    expect(lean.ttft_stages).toEqual(full.ttft_stages);
  });
});
