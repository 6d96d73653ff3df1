/**
 * How many requests a run sends (src/config/stop.ts), and that every place that states the count
 * states the one the replay sends: the AIPerf export's phase and command, a sweep's cost estimate,
 * the JIT primer and the resource check.
 */
import { describe, expect, it } from 'vitest';
import { loadRunConfigFromObject } from '../src/config/load.js';
import { estimateRun } from '../src/config/run-checks.js';
import { loadUnitOf, stopRequests } from '../src/config/stop.js';
import type { RunConfig } from '../src/config/types.js';
import { buildAiperfExport } from '../src/io/write-aiperf-artifacts.js';
import { replay } from '../src/replay.js';
import { shrinkForPrimer } from '../src/sweep/jit-primer.js';
import { expectedCost } from '../src/sweep/point-cost.js';

function config(load: Record<string, unknown>, stop: Record<string, unknown>): RunConfig {
  return loadRunConfigFromObject(
    {
      engine: { model: 'm' },
      traffic: { source: { type: 'synthetic', input_tokens: 64, output_tokens: 4, random_range_ratio: 1, seed: 0 }, load, stop },
    },
    'run.yaml',
  );
}

describe('the requests a run sends', () => {
  it('multiplies requests_per_load_unit by the slots or the rate and rounds to the nearest request, at least 1', () => {
    expect(loadUnitOf({ type: 'concurrency', concurrency: 3, ramp_up_ms: 0 })).toBe(3);
    expect(loadUnitOf({ type: 'poisson', requests_per_second: 2.5, seed: 0 })).toBe(2.5);
    expect(loadUnitOf({ type: 'trace_timestamps', speedup: 1 })).toBeNull();
    // 3 x 1.5 = 4.5 -> 5; 2.5 x 1.3 = 3.25 -> 3; 4 x 0.1 = 0.4 -> 1.
    expect(stopRequests(config({ type: 'concurrency', concurrency: 3 }, { requests_per_load_unit: 1.5 }).traffic)).toBe(5);
    expect(stopRequests(config({ type: 'poisson', requests_per_second: 2.5 }, { requests_per_load_unit: 1.3 }).traffic)).toBe(3);
    expect(stopRequests(config({ type: 'concurrency', concurrency: 4 }, { requests_per_load_unit: 0.1 }).traffic)).toBe(1);
    expect(stopRequests(config({ type: 'concurrency', concurrency: 4 }, { requests: 7 }).traffic)).toBe(7);
    expect(stopRequests(config({ type: 'concurrency', concurrency: 4 }, { max_virtual_time_seconds: 1 }).traffic)).toBeNull();
  });

  it.each([
    ['concurrency 3, 1.5 per slot', { type: 'concurrency', concurrency: 3 }, 5],
    ['Poisson 2.5/s, 1.3 per unit', { type: 'poisson', requests_per_second: 2.5, seed: 1 }, 3],
  ])('%s: the replay, the AIPerf export, the cost estimate and the resource check agree', (_name, load, sent) => {
    const run = config(load, { requests_per_load_unit: load.type === 'concurrency' ? 1.5 : 1.3 });
    const { summary, requests } = replay(run, { baseDir: '.', perRequest: true });
    expect(summary.run.request_count).toBe(sent);
    expect(requests).toHaveLength(sent);
    const exported = JSON.parse(buildAiperfExport(summary, requests, run).jsonText) as {
      input_config: { phases: Array<{ requests?: number }> };
      run_info: { cli_command: string };
    };
    expect(exported.input_config.phases.at(-1)?.requests).toBe(sent);
    expect(exported.run_info.cli_command).toContain(`--request-count ${sent}`);
    expect(expectedCost(run)).toBe(sent * 4);
    expect(estimateRun(run).requests).toBe(sent);
    expect(shrinkForPrimer(run).traffic.stop).toEqual({ requests: sent });
  });
});
