/**
 * Priming a pool thread's JIT. Each pool thread is its own V8 isolate and optimizes the replay core
 * afresh. Left alone, it optimizes the loop on the first point's type feedback, then throws that
 * code away whenever a later point takes a path the first did not (the event heap that a closed
 * loop at concurrency 1 never uses, several detokenization servers, a second config object of
 * another map): in `npm run bench:sweep`'s grid that was 22 deoptimizations and 160 ms of
 * optimizing compiles per thread. So a pool thread first replays the tiny runs below, about 25 ms
 * in all, before its first point: the feedback then already covers the core's main paths when V8
 * optimizes, and the thread compiles about half as much.
 *
 * The runs are validated by the main thread (`primerConfigs`) and reach the pool threads as
 * `workerData` (see pool-task.ts, which replays them; this module stays out of the threads, so
 * they do not load the config loader). Their results are discarded, and they change no point's
 * result: a replay keeps no state between runs (only scratch buffers, see core/scratch.ts).
 */
import { loadRunConfigFromObject } from '../config/load.js';
import type { RunConfig } from '../config/types.js';

const base = {
  engine: {
    model: 'jit-primer',
    workers: {
      aggregated: {
        scheduler: { max_batched_tokens: 4096, max_sequences: 128, chunked_prefill: true },
        timing: { type: 'linear', base_ms: 10, prefill_token_us: 40, prefill_pair_ns: 1, decode_request_us: 20, decode_kv_token_ns: 30 },
      },
    },
    detokenization: { workers: 1, base_ms: 2, per_output_us: 50 },
  },
  traffic: {
    source: { type: 'synthetic', input_tokens: 400, output_tokens: 16, random_range_ratio: 0.5, seed: 7 },
    load: { type: 'concurrency', concurrency: 1 },
    stop: { requests: 64 },
  },
};

/** Closed loops at concurrency x detokenization servers: the FIFO lane alone, then the heap as well. */
const SHAPES: ReadonlyArray<readonly [concurrency: number, detokServers: number]> = [
  [1, 1],
  [4, 3],
  [64, 8],
  [16, 2],
];

/** The raw run configs of the primer (one per shape). */
export function primerRawConfigs(): Array<Record<string, unknown>> {
  return SHAPES.map(([concurrency, workers]) => ({
    engine: { ...base.engine, detokenization: { ...base.engine.detokenization, workers } },
    traffic: { ...base.traffic, load: { type: 'concurrency', concurrency } },
  }));
}

/** The primer's runs, validated. */
export function primerConfigs(): RunConfig[] {
  return primerRawConfigs().map((raw, i) => loadRunConfigFromObject(raw, `jit primer ${i}`));
}
