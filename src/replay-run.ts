/**
 * Replaying a prepared run (replay.ts prepares it): the simulation and the summary. A sweep's pool
 * threads load this module and the replay core only; configs, traces and the catalog stay in the
 * main thread.
 */
import { costSummary, type Price } from './config/cost.js';
import type { RunConfig } from './config/types.js';
import { buildRequestRecords, buildSummary } from './core/report.js';
import type { ReplaySummary, RequestRecord } from './core/report-types.js';
import type { ResolvedRun } from './core/run.js';
import { Simulation } from './core/simulation.js';

export interface ReplayResult {
  summary: ReplaySummary;
  requests?: RequestRecord[];
}

/** A run ready to replay: plain data, structured-cloneable (a sweep posts it to a pool thread). */
export interface PreparedRun {
  run: ResolvedRun;
  /** What the summary says of the deployment (GPUs, weights, KV cache), worked out from the catalog. */
  deployment: ReplaySummary['deployment'];
  /** With a trace source: what the summary reports of the trace. */
  input?: { trace: string; trace_rows: number; skipped_trace_rows: number };
  /** With roofline timing: the accuracy its stratum's measurements give (summary.json's `accuracy`). */
  accuracy?: ReplaySummary['accuracy'];
  /** The price per GPU-hour the summary's cost is worked out at; absent when none is known (no cost then). */
  price?: Price;
}

/** Replays a prepared run; `config` is echoed in the summary. */
export function replayPrepared(config: RunConfig, prepared: PreparedRun, options: { perRequest?: boolean } = {}): ReplayResult {
  const run = prepared.run;
  const perRequest = options.perRequest === true;
  // process.hrtime rather than performance.now(): node:perf_hooks is a dozen of Node.js's own
  // modules to load, a few milliseconds of a one-request replay's start-up.
  const started = process.hrtime.bigint();
  const result = new Simulation(run, { recordTokens: perRequest }).run();
  const core = buildSummary(run, result);
  // The gap buffer goes back to this thread's cache for the next replay (core/scratch.ts).
  result.gaps.release();
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  let outputTokens = 0;
  for (let id = 0; id < result.requestCount; id++) outputTokens += result.table.received[id];
  const summary: ReplaySummary = {
    metrics: core.metrics,
    run: core.run,
    ttft_stages: core.ttft_stages,
    ...(core.prefix_cache === undefined ? {} : { prefix_cache: core.prefix_cache }),
    ...(core.pools === undefined ? {} : { pools: core.pools }),
    ...(core.kv_transfer === undefined ? {} : { kv_transfer: core.kv_transfer }),
    simulator: {
      wall_time_ms: wallMs,
      us_per_output_token: outputTokens > 0 ? (wallMs * 1000) / outputTokens : 0,
      output_tokens: outputTokens,
      passes: core.engine.passes,
      preemptions: core.engine.preemptions,
      virtual_end_ms: core.engine.virtual_end_ms,
    },
    deployment: prepared.deployment,
    ...(prepared.accuracy !== undefined ? { accuracy: prepared.accuracy } : {}),
    ...(prepared.price === undefined
      ? {}
      : { cost: costSummary(prepared.price, prepared.deployment.gpus, core.run.output_token_throughput) }),
    config,
  };
  if (prepared.input !== undefined) summary.input = prepared.input;
  return perRequest ? { summary, requests: buildRequestRecords(result) } : { summary };
}
