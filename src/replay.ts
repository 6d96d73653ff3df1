/**
 * The replay entry point: one run config in, one report out (spec replay.md). Reads the
 * trace a config names (cached per process by path, since sweeps replay one trace many
 * times), compiles the config, runs the simulation and builds the summary.
 */
import { statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ConfigError, InputError } from './config/errors.js';
import { checkRunResources, everyTraceRowRejected } from './config/run-checks.js';
import type { RunConfig } from './config/types.js';
import { buildRequestRecords, buildSummary } from './core/report.js';
import type { ReplaySummary, RequestRecord } from './core/report-types.js';
import { resolveRun, type TraceRows } from './core/resolve.js';
import { Simulation } from './core/simulation.js';
import { readMooncakeTrace } from './io/read-mooncake.js';
import { unreadableReason } from './io/read-text.js';

export interface ReplayOptions {
  /** Folder that relative paths in the config (the trace) are resolved against. */
  baseDir: string;
  /** Also build one record per request, with every token's emit and receive time. */
  perRequest?: boolean;
  /** Skip trace rows that cannot be used (counted in the summary's `input`) instead of failing. */
  skipInvalidTraceRows?: boolean;
  /** The config file as the user named it, for errors (`config` by default). */
  label?: string;
  /** The option that asked for per-request records, named when they would not fit in memory. */
  perRequestFlag?: string;
  /** AIPerf's files will be written from the records (their JSONL lines are held too). */
  aiperf?: boolean;
}

export interface ReplayResult {
  summary: ReplaySummary;
  requests?: RequestRecord[];
}

type LoadedTrace = TraceRows & { skipped: number };
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

export function replay(config: RunConfig, options: ReplayOptions): ReplayResult {
  let trace: LoadedTrace | null = null;
  let traceLabel = 'trace';
  const label = options.label ?? 'config';
  const source = config.traffic.source;
  if (source.type === 'trace') {
    const path = resolvePath(options.baseDir, source.path);
    const unreadable = unreadableReason(path);
    if (unreadable !== null) throw new ConfigError(label, 'traffic.source.path', `${source.path}: ${unreadable} (looked for ${path})`);
    trace = loadTrace(path, source.path, source.block_size, options.skipInvalidTraceRows === true);
    traceLabel = source.path;
    checkTracePrompts(config, trace, source.path);
    const limit = 'requests' in config.traffic.stop ? config.traffic.stop.requests : trace.rows;
    const rejected = everyTraceRowRejected(config, trace, limit);
    if (rejected !== null) throw new ConfigError(label, 'engine.context_length', `${source.path}: ${rejected}`);
  }
  const perRequest = options.perRequest === true;
  const resources = checkRunResources(config, {
    trace,
    perRequestFlag: perRequest ? (options.perRequestFlag ?? 'per-request records') : undefined,
    aiperf: options.aiperf,
  });
  if (resources.length > 0) throw new ConfigError(label, resources[0].path, resources[0].reason);
  const run = resolveRun(config, trace, traceLabel);
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
  if (trace !== null) summary.input = { trace: traceLabel, trace_rows: trace.rows, skipped_trace_rows: trace.skipped };
  return perRequest ? { summary, requests: buildRequestRecords(result) } : { summary };
}
