/**
 * The replay entry point: one run config in, one report out (docs/replay-model.md). In two steps, so
 * that a sweep does the first in its main thread and posts the result to a pool thread:
 * `prepareRun` reads the trace a config names (cached per process by path, since sweeps
 * replay one trace many times) and compiles the config into the core's run description;
 * `replayPrepared` (replay-run.ts, which loads only the core: a pool thread needs nothing else)
 * runs the simulation and builds the summary.
 */
import { statSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { ConfigError, InputError } from './config/errors.js';
import { MAX_COST, formatCount } from './config/limits.js';
import { checkRunResources, everyTraceRowRejected } from './config/run-checks.js';
import { PLACEHOLDER_TIMING, isPlaceholderTiming, missingFromCatalog } from './config/load.js';
import type { RunConfig, TimingConfig, TraceSourceConfig } from './config/types.js';
import { accuracyFor, lengthsKindOf, type LengthsKind } from './catalog/accuracy.js';
import { measuredPointsOn } from './catalog/efficiency.js';
import type { Price } from './config/cost.js';
import { catalogPrice, deploymentOf, deploymentSummary } from './config/deployment.js';
import type { ReplaySummary } from './core/report-types.js';
import { resolveRun } from './config/resolve.js';
import type { ResolvedRun, TraceRows } from './core/run.js';
import { replayPrepared, type PreparedRun, type ReplayResult } from './replay-run.js';
import { readMooncakeTrace, type MooncakeTrace } from './io/read-mooncake.js';
import { entryRole, isDisaggregated, workerRoles } from './config/roles.js';
import { readVllmLog, type VllmLog } from './io/read-vllm-log.js';
import { isFolder, unreadableReason } from './io/read-text.js';
import { readProfileTiming } from './io/read-profile-timing.js';
import type { ProfileTiming } from './core/timing/profile.js';

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
  /**
   * The price of one GPU for an hour, for the summary's cost; by default the catalog's list price
   * of `engine.hardware`, and no cost when the catalog has none.
   */
  pricePerGpuHour?: number;
  /**
   * The tables of `timing: {type: profile}` already in memory (a model just built from a layer
   * profile): used instead of reading the file the config names.
   */
  profileTiming?: ProfileTiming;
}

export { replayPrepared, type PreparedRun, type ReplayResult } from './replay-run.js';

type LoadedTrace = MooncakeTrace | VllmLog;
const traceCache = new Map<string, { key: string; rows: LoadedTrace }>();

function loadTrace(path: string, label: string, source: TraceSourceConfig, skipInvalid: boolean): LoadedTrace {
  const stat = statSync(path);
  const key = `${source.format}:${stat.size}:${stat.mtimeMs}:${source.block_size}:${skipInvalid}`;
  const cached = traceCache.get(path);
  if (cached && cached.key === key) return cached.rows;
  const rows =
    source.format === 'vllm-log'
      ? readVllmLog(path, { blockTokens: source.block_size, skipInvalid, label })
      : readMooncakeTrace(path, { blockSize: source.block_size, skipInvalid, label });
  traceCache.set(path, { key, rows });
  return rows;
}

const profileCache = new Map<string, { key: string; spec: ProfileTiming }>();

/** The tables of `timing: {type: profile}`, read once per process per file version (sweeps time many points with one). */
function loadProfileTiming(config: RunConfig, baseDir: string, label: string): ProfileTiming | null {
  // One profile per run: the first role with profile timing names it, and the others must name the same file.
  const roles = workerRoles(config.engine).filter((role) => role.config.timing.type === 'profile');
  if (roles.length === 0) return null;
  const timing = roles[0].config.timing as Extract<TimingConfig, { type: 'profile' }>;
  for (const other of roles.slice(1)) {
    const otherPath = (other.config.timing as Extract<TimingConfig, { type: 'profile' }>).path;
    if (otherPath !== timing.path) {
      throw new ConfigError(
        label,
        `${other.path}.timing.path`,
        `names ${otherPath}; a run reads one profile (${roles[0].path}.timing.path is ${timing.path})`,
      );
    }
  }
  const path = resolvePath(baseDir, timing.path);
  const unreadable = unreadableReason(path);
  if (unreadable !== null)
    throw new ConfigError(label, `${roles[0].path}.timing.path`, `${timing.path}: ${unreadable} (looked for ${path})`);
  const stat = statSync(path);
  const key = `${stat.size}:${stat.mtimeMs}`;
  const cached = profileCache.get(path);
  if (cached && cached.key === key) return cached.spec;
  const spec = readProfileTiming(path, timing.path);
  profileCache.set(path, { key, spec });
  return spec;
}

/** With chunked prefill off, every prompt must fit one pass (docs/config.md): checked per trace row. */
function checkTracePrompts(config: RunConfig, trace: TraceRows, file: string): void {
  // Prompts are prefilled by the entry pool's workers (aggregated, or prefill).
  const scheduler = entryRole(config.engine).config.scheduler;
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

/**
 * Reads what the config names (a trace), checks the run before anything is allocated (every trace
 * row rejected, the request count and memory: config/run-checks.ts) and compiles it; throws the
 * input errors a replay would. `perRequest` (and `perRequestFlag`, `aiperf`) only size the memory
 * check: the records are built by `replayPrepared`.
 */
export function prepareRun(config: RunConfig, options: ReplayOptions): PreparedRun {
  let trace: LoadedTrace | null = null;
  let traceLabel = 'trace';
  const label = options.label ?? 'config';
  const source = config.traffic.source;
  if (source.type === 'trace') {
    let path = resolvePath(options.baseDir, source.path);
    let fileLabel = source.path;
    // A vLLM request log may be named by its folder: its requests.jsonl is the trace.
    if (source.format === 'vllm-log' && isFolder(path)) {
      path = join(path, 'requests.jsonl');
      fileLabel = join(source.path, 'requests.jsonl');
    }
    const unreadable = unreadableReason(path);
    if (unreadable !== null) throw new ConfigError(label, 'traffic.source.path', `${fileLabel}: ${unreadable} (looked for ${path})`);
    trace = loadTrace(path, fileLabel, source, options.skipInvalidTraceRows === true);
    traceLabel = source.path;
    checkTracePrompts(config, trace, source.path);
    const limit = 'requests' in config.traffic.stop ? config.traffic.stop.requests : trace.rows;
    const rejected = everyTraceRowRejected(config, trace, limit);
    if (rejected !== null) throw new ConfigError(label, 'engine.context_length', `${source.path}: ${rejected}`);
  }
  // Before anything is allocated: a run whose request count has no bound, or whose memory
  // (with the per-request records a flag asks for) would not fit this machine, is refused.
  const perRequest = options.perRequest === true;
  const resources = checkRunResources(config, {
    trace,
    perRequestFlag: perRequest ? (options.perRequestFlag ?? 'per-request records') : undefined,
    aiperf: options.aiperf,
  });
  if (resources.length > 0) throw new ConfigError(label, resources[0].path, resources[0].reason);
  const run = resolveRun(config, trace, options.profileTiming ?? loadProfileTiming(config, options.baseDir, label));
  // The entry pool's weights and KV per rank; the GPUs of every pool.
  const role = entryRole(config.engine).config;
  const blocks = run.pools[0].kv.blocksPerRank;
  const deployment = { ...deploymentSummary(config.engine, role, blocks > 0 ? blocks : null), gpus: runGpus(run) };
  const accuracy = predictionAccuracy(config);
  const price = priceOf(config, options);
  return {
    run,
    deployment,
    ...(trace === null ? {} : { input: { trace: traceLabel, trace_rows: trace.rows, skipped_trace_rows: trace.skipped } }),
    ...(accuracy !== undefined ? { accuracy } : {}),
    ...(price === null ? {} : { price }),
  };
}

/** The price a replay's cost is worked out at: the option's, else the catalog's list price of the GPU, else none. */
function priceOf(config: RunConfig, options: ReplayOptions): Price | null {
  const given = options.pricePerGpuHour;
  if (given === undefined) return catalogPrice(config.engine);
  if (!(Number.isFinite(given) && given > 0 && given <= MAX_COST)) {
    throw new InputError(
      '--price-per-gpu-hour',
      0,
      `must be a positive number (the price of one GPU for an hour) of at most ${formatCount(MAX_COST)}, got ${given}`,
    );
  }
  return { per_gpu_hour: given, source: '--price-per-gpu-hour' };
}

/**
 * How far a prediction from the catalog may be off (summary.json's `accuracy`): with roofline
 * timing, its stratum's row of data/accuracy.yaml (the leave-one-model-out benchmark). A config
 * that overrides efficiency factors is outside what the benchmark measured, and says so.
 */
export function predictionAccuracy(config: RunConfig): ReplaySummary['accuracy'] {
  const roles = workerRoles(config.engine).map((role) => role.config);
  if (!roles.every((role) => role.timing.type === 'roofline')) return placeholderAccuracy(config);
  const { deployment } = deploymentOf(config.engine, roles[0]);
  if (deployment === null) return undefined;
  const moe = deployment.model.architecture.moe !== undefined;
  const block = accuracyFor(
    config.engine.backend,
    moe,
    deployment.hardware.id,
    undefined,
    isDisaggregated(config.engine),
    lengthsOf(config),
  );
  const unmeasured =
    block.basis !== 'none' && measuredPointsOn(deployment.hardware.id, config.engine.backend) === 0
      ? {
          ...block,
          stratum: `${block.stratum}; none measured on ${deployment.hardware.id}`,
          basis: `${block.basis}; no point was measured on ${deployment.hardware.id} under ${config.engine.backend}: its factors are the fit's GPU and backend effects alone, and the figure is the error on the GPUs measured`,
        }
      : block;
  const overridden = roles.some((role) =>
    Object.values((role.timing.type === 'roofline' && role.timing.efficiency) || {}).some((v) => v !== undefined),
  );
  return overridden
    ? { ...unmeasured, basis: `${unmeasured.basis}; the config overrides efficiency factors, which that figure does not cover` }
    : unmeasured;
}

/**
 * A run on the placeholder pass times (its timing left out, its model or GPU not in the catalog)
 * predicts nothing of its deployment: summary.json's `accuracy` says so, and why (basis
 * `placeholder`). Any other timing the config gives is the user's own, and carries no block.
 */
function placeholderAccuracy(config: RunConfig): ReplaySummary['accuracy'] {
  const missing = missingFromCatalog(config.engine.model, config.engine.hardware);
  if (missing === null) return undefined;
  if (!workerRoles(config.engine).some(({ config: role }) => isPlaceholderTiming(role.timing))) return undefined;
  return {
    basis: 'placeholder',
    stratum: `placeholder pass times (fixed ${PLACEHOLDER_TIMING.prefill_ms} ms with prefill work, ${PLACEHOLDER_TIMING.decode_ms} ms otherwise): ${missing}`,
    ttft_mape: null,
    itl_mape: null,
    points: 0,
  };
}

/**
 * How a run's synthetic source draws lengths (`fixed`: every request the configured prompt and
 * output length; `drawn`: a range ratio below 1 or a standard deviation spreads them), or undefined
 * for a trace or session source, whose lengths are the recorded ones.
 */
export function lengthsOf(config: RunConfig): LengthsKind | undefined {
  const source = config.traffic.source;
  if (source.type !== 'synthetic') return undefined;
  return lengthsKindOf(source.random_range_ratio, source.input_tokens_stddev ?? 0, source.output_tokens_stddev ?? 0);
}

/** GPUs of every pool of a run. */
export function runGpus(run: ResolvedRun): number {
  let gpus = 0;
  for (const pool of run.pools) gpus += pool.replicas * pool.gpusPerWorker;
  return gpus;
}

export function replay(config: RunConfig, options: ReplayOptions): ReplayResult {
  return replayPrepared(config, prepareRun(config, options), options);
}
