/**
 * The replay entry point: one run config in, one report out (spec replay.md). In two steps, so
 * that a sweep does the first in its main thread and posts the result to a pool thread:
 * `prepareRun` reads the trace a config names (cached per process by path, since sweeps
 * replay one trace many times) and compiles the config into the core's run description;
 * `replayPrepared` runs the simulation and builds the summary.
 */
import { statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { performance } from 'node:perf_hooks';
import { InputError } from './config/errors.js';
import type { RunConfig } from './config/types.js';
import { buildRequestRecords, buildSummary } from './core/report.js';
import type { ReplaySummary, RequestRecord } from './core/report-types.js';
import { resolveRun } from './config/resolve.js';
import type { ResolvedRun, TraceRows } from './core/run.js';
import { Simulation } from './core/simulation.js';
import { readMooncakeTrace, type MooncakeTrace } from './io/read-mooncake.js';

export interface ReplayOptions {
  /** Folder that relative paths in the config (the trace) are resolved against. */
  baseDir: string;
  /** Also build one record per request, with every token's emit and receive time. */
  perRequest?: boolean;
  /** Skip trace rows that cannot be used (counted in the summary's `input`) instead of failing. */
  skipInvalidTraceRows?: boolean;
}

export interface ReplayResult {
  summary: ReplaySummary;
  requests?: RequestRecord[];
}

type LoadedTrace = MooncakeTrace;
const traceCache = new Map<string, { key: string; rows: LoadedTrace }>();

function loadTrace(path: string, label: string, blockSize: number, skipInvalid: boolean): LoadedTrace {
  const stat = statSync(path);
  const key = `${stat.size}:${stat.mtimeMs}:${blockSize}:${skipInvalid}`;
  const cached = traceCache.get(path);
  if (cached && cached.key === key) return cached.rows;
  const rows = readMooncakeTrace(path, { blockSize, skipInvalid, label });
  traceCache.set(path, { key, rows });
  return rows;
}

/** With chunked prefill off, every prompt must fit one pass (spec §2): checked per trace row. */
function checkTracePrompts(config: RunConfig, trace: TraceRows, file: string): void {
  const scheduler = config.engine.workers.aggregated.scheduler;
  if (scheduler.chunked_prefill) return;
  for (let row = 0; row < trace.rows; row++) {
    if (trace.inputLength[row] > scheduler.max_batched_tokens) {
      throw new InputError(
        file,
        row + 1,
        `input_length: ${trace.inputLength[row]} tokens do not fit max_batched_tokens ${scheduler.max_batched_tokens} with chunked_prefill: false`,
      );
    }
  }
}

/** A run ready to replay: plain data, structured-cloneable (a sweep posts it to a pool thread). */
export interface PreparedRun {
  run: ResolvedRun;
  /** With a trace source: what the summary reports of the trace. */
  input?: { trace: string; trace_rows: number; skipped_trace_rows: number };
}

/** Reads what the config names (a trace) and compiles it; throws the input errors a replay would. */
export function prepareRun(config: RunConfig, options: Omit<ReplayOptions, 'perRequest'>): PreparedRun {
  let trace: LoadedTrace | null = null;
  let traceLabel = 'trace';
  const source = config.traffic.source;
  if (source.type === 'trace') {
    const path = resolvePath(options.baseDir, source.path);
    trace = loadTrace(path, source.path, source.block_size, options.skipInvalidTraceRows === true);
    traceLabel = source.path;
    checkTracePrompts(config, trace, source.path);
  }
  const run = resolveRun(config, trace, traceLabel);
  if (trace === null) return { run };
  return { run, input: { trace: traceLabel, trace_rows: trace.rows, skipped_trace_rows: trace.skipped } };
}

/** Replays a prepared run; `config` is echoed in the summary. */
export function replayPrepared(config: RunConfig, prepared: PreparedRun, options: { perRequest?: boolean } = {}): ReplayResult {
  const run = prepared.run;
  const perRequest = options.perRequest === true;
  const started = performance.now();
  const result = new Simulation(run, { recordTokens: perRequest }).run();
  const core = buildSummary(run, result);
  // The gap buffer goes back to this thread's cache for the next replay (core/scratch.ts).
  result.gaps.release();
  const wallMs = performance.now() - started;
  let outputTokens = 0;
  for (let id = 0; id < result.requestCount; id++) outputTokens += result.table.received[id];
  const summary: ReplaySummary = {
    metrics: core.metrics,
    run: core.run,
    ttft_stages: core.ttft_stages,
    ...(core.prefix_cache === undefined ? {} : { prefix_cache: core.prefix_cache }),
    simulator: {
      wall_time_ms: wallMs,
      us_per_output_token: outputTokens > 0 ? (wallMs * 1000) / outputTokens : 0,
      output_tokens: outputTokens,
      passes: core.engine.passes,
      preemptions: core.engine.preemptions,
      virtual_end_ms: core.engine.virtual_end_ms,
    },
    config,
  };
  if (prepared.input !== undefined) summary.input = prepared.input;
  return perRequest ? { summary, requests: buildRequestRecords(result) } : { summary };
}

export function replay(config: RunConfig, options: ReplayOptions): ReplayResult {
  return replayPrepared(config, prepareRun(config, options), options);
}
