/**
 * docs/client-path.md: all-zero client-path costs give exactly the same output as no block at all,
 * checked on every workload of the replay benchmark (each at its shape, with one request per
 * closed-loop slot and at most 12,000 requests to keep the suite fast).
 */
import { describe, expect, it } from 'vitest';
import { WORKLOADS } from '../bench/workloads.js';
import { parseRunConfig } from '../src/config/load.js';
import type { RunConfig } from '../src/config/types.js';
import { replay } from '../src/replay.js';

function scaled(name: string): RunConfig {
  const config = parseRunConfig(WORKLOADS[name](), `${name}.yaml`);
  const load = config.traffic.load;
  const perSlot = load.type === 'concurrency' ? load.concurrency : 12_000;
  config.traffic.stop = { requests: Math.min(perSlot, 12_000) };
  return config;
}

function withoutClientPath(config: RunConfig): RunConfig {
  const plain = structuredClone(config);
  delete plain.engine.tokenization;
  delete plain.engine.detokenization;
  delete plain.traffic.load.response_overhead;
  return plain;
}

function withZeroCosts(config: RunConfig): RunConfig {
  const zero = withoutClientPath(config);
  zero.engine.tokenization = { workers: 3, base_ms: 0, per_input_us: 0 };
  zero.engine.detokenization = { workers: 4, base_ms: 0, per_output_us: 0 };
  zero.traffic.load.response_overhead = { base_ms: 0, per_output_token_us: 0, per_inflight_us: 0 };
  return zero;
}

/** Everything but the host timings and the config echo. */
function outcome(config: RunConfig): string {
  const { summary, requests } = replay(config, { baseDir: '.', perRequest: true });
  const { wall_time_ms: _wall, us_per_output_token: _speed, ...simulator } = summary.simulator;
  return JSON.stringify({ metrics: summary.metrics, run: summary.run, stages: summary.ttft_stages, simulator, requests });
}

describe('all-zero client-path costs on every benchmark workload', () => {
  it.each(Object.keys(WORKLOADS))('%s: identical to no client-path blocks', (name) => {
    const config = scaled(name);
    expect(outcome(withZeroCosts(config))).toBe(outcome(withoutClientPath(config)));
  });
});
