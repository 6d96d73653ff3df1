/**
 * Golden runs: full summaries of a few canonical configs, so that any change of behaviour shows
 * up as a diff to review. Regenerate with `UPDATE_GOLDEN=1 npx vitest run test/golden.test.ts`
 * only when a change of behaviour is intended (a spec change or a fixed bug), and say so in the
 * commit; test/golden/README.md says the same. The behaviours they combine are each pinned by
 * hand-derived tests and by the laws of test/helpers/core-laws.ts; a golden adds their interplay.
 */
import { roleOf } from '../src/config/roles.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { loadRunConfigFromObject } from '../src/config/load.js';
import type { RunConfig } from '../src/config/types.js';
import { replay } from '../src/replay.js';

const GOLDEN = join(import.meta.dirname, 'golden');
const ROOT = join(import.meta.dirname, '..');

const CASES: Record<string, { raw: unknown; sets?: string[] }> = {
  // A production trace at its timestamps on 8 replicas, with the whole client path (first 300 rows).
  'mooncake-conversation-300': {
    raw: { ...(readYaml('sweeps/configs/mooncake-conversation.yaml') as object) },
    sets: ['traffic.stop={requests: 300}', 'traffic.source.path=data/traces/mooncake_fast25_conversation_trace.jsonl'],
  },
  // Open-loop overload with a small KV pool: preemption, recompute, detokenization, tokenization.
  'poisson-overload-preempting': {
    raw: {
      engine: {
        workers: {
          aggregated: {
            parallelism: { attention_data: 2 },
            kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 600 } },
            timing: {
              type: 'linear',
              base_ms: 4,
              prefill_token_us: 50,
              prefill_pair_ns: 0.4,
              decode_request_us: 30,
              decode_kv_token_ns: 25,
            },
          },
        },
        tokenization: { workers: 2, base_ms: 0.2, per_input_us: 0.5 },
        detokenization: { workers: 2, base_ms: 0.3, per_output_us: 5, chunk_outputs: 16 },
      },
      traffic: {
        source: { type: 'synthetic', input_tokens: 700, output_tokens: 150, random_range_ratio: 0.5, seed: 3 },
        load: { type: 'poisson', requests_per_second: 60, seed: 9, response_overhead: { base_ms: 1.4, per_output_token_us: 3.65 } },
        stop: { requests: 800 },
      },
      report: { warmup_requests: 20 },
    },
  },
  // Multi-turn sessions in a closed loop with a ramp-up and a context limit.
  'sessions-closed-loop': {
    raw: {
      engine: { context_length: 1700, workers: { aggregated: { timing: { type: 'polynomial' } } } },
      traffic: {
        source: {
          type: 'synthetic-session',
          turns: 3,
          new_input_tokens_per_turn: 400,
          output_tokens_per_turn: 200,
          inter_turn_delay_ms: 250,
        },
        load: { type: 'concurrency', concurrency: 16, ramp_up_ms: 500 },
        stop: { requests: 300 },
      },
    },
  },
};

/** An example config as written (its relative trace path is replaced in CASES). */
function readYaml(path: string): unknown {
  return YAML.parse(readFileSync(join(ROOT, path), 'utf8'));
}

/** The summary without the host's wall-time fields (the only ones that change run to run). */
function deterministicSummary(name: string): string {
  const { raw, sets } = CASES[name];
  const config = loadRunConfigFromObject(raw, `${name}.yaml`, sets ?? []);
  const { summary } = replay(config, { baseDir: ROOT });
  const { wall_time_ms: _wall, us_per_output_token: _speed, ...simulator } = summary.simulator;
  return JSON.stringify({ ...summary, simulator }, null, 2) + '\n';
}

describe('golden runs', () => {
  it.each(Object.keys(CASES))('%s matches its golden summary', (name) => {
    const file = join(GOLDEN, `${name}.json`);
    const actual = deterministicSummary(name);
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, actual);
    expect(existsSync(file), `${file} is missing: run UPDATE_GOLDEN=1 npx vitest run test/golden.test.ts`).toBe(true);
    expect(actual).toBe(readFileSync(file, 'utf8'));
  });

  // The summaries these cases had before prefix caching (frozen, never regenerated): with
  // `prefix_caching: false` the replay gives them byte for byte, apart from the echoed setting
  // itself, and no `prefix_cache` block.
  it.each(['mooncake-conversation-300', 'sessions-closed-loop'])('%s without prefix caching matches its pre-cache summary', (name) => {
    const { raw, sets } = CASES[name];
    const config = loadRunConfigFromObject(raw, `${name}.yaml`, [
      ...(sets ?? []),
      'engine.workers.aggregated.kv_cache.prefix_caching=false',
    ]);
    const { summary } = replay(config, { baseDir: ROOT });
    expect(summary).not.toHaveProperty('prefix_cache');
    const echoed = summary.config as RunConfig;
    expect(roleOf(echoed.engine, 'aggregated').kv_cache.prefix_caching).toBe(false);
    delete roleOf(echoed.engine, 'aggregated').kv_cache.prefix_caching;
    const { wall_time_ms: _wall, us_per_output_token: _speed, ...simulator } = summary.simulator;
    const actual = JSON.stringify({ ...summary, simulator }, null, 2) + '\n';
    expect(actual).toBe(readFileSync(join(GOLDEN, `${name}-no-prefix-cache.json`), 'utf8'));
  });
});
