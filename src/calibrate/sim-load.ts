/**
 * How a measured load point is simulated (docs/calibration.md, "How a simulated point starts"): a
 * closed-loop point at concurrency C with the point's ISL/OSL becomes a synthetic source with
 * C slots. The options that move TTFT at high load are explicit:
 * - start: every slot sends its first request at t = 0 (the replay core's closed loop; AIPerf
 *   and vLLM's benchmark client with a concurrency limit do the same). With fixed lengths the
 *   first wave's prefills stay synchronized; length jitter spreads them out over the run.
 * - `rangeRatio`: lengths drawn in [ratio x L, L] (sglang bench_serving's random_range_ratio);
 *   1 = fixed lengths.
 * - `warmup`: `first-wave` leaves the first C requests (the synchronized wave) out of the
 *   metrics, the way a benchmark with a warmup phase would; `none` counts them.
 * - `requestsPerSlot`: requests sent per slot (stop = requestsPerSlot x C).
 * A point with `request_rate` instead of `concurrency` is simulated as a Poisson arrival process.
 */
import { parseRunConfig } from '../config/load.js';
import type { LinearTimingConfig, RunConfig } from '../config/types.js';
import { logKeyOf, type PointKey } from '../score/points.js';
import { roleOf } from '../config/roles.js';

export interface SimLoadOptions {
  requestsPerSlot: number;
  rangeRatio: number;
  warmup: 'none' | 'first-wave';
  seed: number;
  /**
   * What a point's ISL and OSL are: `upper`, the top of the drawn range (sglang bench_serving's
   * `--random-input-len` with its range ratio, how the silicon sweeps were run); `mean`, the mean
   * of the drawn lengths (AIPerf's `--synthetic-input-tokens-mean`).
   */
  lengths?: 'upper' | 'mean';
  /**
   * Silicon points only: replay each point with its launch's caps and its source's load generator
   * (lengths and requests per client, `SiliconProtocol`) when true or absent; with its launch and
   * requests per client but `rangeRatio`'s lengths for every point when `launch`; with the
   * engine's default caps, `rangeRatio` and `requestsPerSlot` for every point when false.
   */
  protocol?: boolean | 'launch';
  /**
   * Raise the scheduler's max_sequences to admit every client (`admit-all`, how fits ran before
   * engine caps were known), or keep the base config's (`engine`, the default).
   */
  admission?: 'engine' | 'admit-all';
  /**
   * Silicon points only, an experiment of the accuracy bench: replay the rows measured with AIPerf
   * (aiconfigurator's collection) with this fixed frontend, ms (no per-token or in-flight term),
   * whatever the factors say; the other rows keep the factors'.
   */
  aiperfFrontendMs?: number;
}

/** Defaults: how the silicon sweeps were measured (docs/calibration.md, "How a simulated point starts", with the ablation). */
export const DEFAULT_SIM_LOAD: SimLoadOptions = { requestsPerSlot: 10, rangeRatio: 0.8, warmup: 'none', seed: 0 };

export function resolveSimLoad(partial: Partial<SimLoadOptions> | undefined): SimLoadOptions {
  const out = { ...DEFAULT_SIM_LOAD };
  for (const [name, value] of Object.entries(partial ?? {})) if (value !== undefined) (out as Record<string, unknown>)[name] = value;
  if (!(out.requestsPerSlot > 0)) throw new RangeError(`requests per slot must be > 0, got ${out.requestsPerSlot}`);
  if (!(out.rangeRatio > 0 && out.rangeRatio <= 1)) throw new RangeError(`range ratio must be in (0, 1], got ${out.rangeRatio}`);
  return out;
}

/**
 * The simulated length spread of measured runs that state theirs (AIPerf's ISL and OSL stddev),
 * or undefined when any point does not say. AIPerf draws a length from a normal distribution;
 * the uniform range with the same mean and standard deviation is mean +- sqrt(3) x stddev, so
 * the range ratio is (mean - sqrt(3) sd) / (mean + sqrt(3) sd), from the prompt lengths (the
 * synthetic source has one ratio for both; the output lengths keep their mean). Stddev 0, the
 * AIPerf default, gives fixed lengths.
 */
export function spreadOfRuns(
  points: readonly { key: PointKey; spread?: { islStddev?: number; oslStddev?: number } }[],
): { rangeRatio: number; note: string } | undefined {
  const ratios: number[] = [];
  for (const point of points) {
    const sd = point.spread?.islStddev;
    const isl = point.key.isl;
    if (sd === undefined || typeof isl !== 'number') return undefined;
    const half = Math.sqrt(3) * sd;
    ratios.push(Math.min(1, Math.max(0.01, (isl - half) / (isl + half))));
  }
  if (ratios.length === 0) return undefined;
  const rangeRatio = Number((ratios.reduce((a, b) => a + b, 0) / ratios.length).toFixed(4));
  const sds = [...new Set(points.map((p) => p.spread?.islStddev))].join(', ');
  return {
    rangeRatio,
    note: `lengths as the measured runs asked for them: means ISL and OSL, ISL stddev ${sds} -> random_range_ratio ${rangeRatio}`,
  };
}

/**
 * The engine constants the engine fit sets: the `linear` timing block's coefficients (its exponent
 * and overlap are fixed, not fitted, and stand at their defaults 1 and 0 when absent) and a
 * client-path delay.
 */
export type EngineConstants = Omit<LinearTimingConfig, 'type' | 'decode_request_exponent' | 'prefill_overlap'> &
  Partial<Pick<LinearTimingConfig, 'decode_request_exponent' | 'prefill_overlap'>> & {
    /** Delay between sending and the server (client, HTTP, API server): engine.frontend.base_ms; 0 = none. */
    client_delay_ms: number;
  };

/** A config object as read from YAML, before validation. */
export type RawObject = Record<string, unknown>;

/** `parent[key]` when it is a mapping; otherwise a new empty mapping put there. */
export function childObject(parent: RawObject, key: string): RawObject {
  const value = parent[key];
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as RawObject;
  const created: RawObject = {};
  parent[key] = created;
  return created;
}

/** The `linear` timing block of fitted constants (fixed choices left out at their defaults). */
export function linearTimingOf(constants: EngineConstants): LinearTimingConfig {
  return {
    type: 'linear',
    base_ms: constants.base_ms,
    prefill_token_us: constants.prefill_token_us,
    prefill_pair_ns: constants.prefill_pair_ns,
    decode_request_us: constants.decode_request_us,
    decode_kv_token_ns: constants.decode_kv_token_ns,
    decode_request_exponent: constants.decode_request_exponent ?? 1,
    prefill_overlap: constants.prefill_overlap ?? 0,
  };
}

/** The timing block as written to files: exponent and overlap only when they differ from their defaults. */
function writtenTiming(constants: EngineConstants): RawObject {
  const { decode_request_exponent, prefill_overlap, ...rest } = linearTimingOf(constants);
  return {
    ...rest,
    ...(decode_request_exponent !== 1 ? { decode_request_exponent } : {}),
    ...(prefill_overlap !== 0 ? { prefill_overlap } : {}),
  };
}

/** Applies fitted constants to a config object (not validated here). */
export function withConstants(raw: RawObject, constants: EngineConstants): RawObject {
  const out = structuredClone(raw);
  const engine = childObject(out, 'engine');
  childObject(childObject(engine, 'workers'), 'aggregated').timing = writtenTiming(constants);
  if (constants.client_delay_ms > 0) engine.frontend = { ...childObject(engine, 'frontend'), base_ms: constants.client_delay_ms };
  return out;
}

/** The run config that simulates one measured point with given constants (null: the base config's own timing). */
export function pointConfig(base: RunConfig, key: PointKey, constants: EngineConstants | null, load: SimLoadOptions): RunConfig {
  const config = structuredClone(base);
  // Fitted constants and `admit-all` apply to aggregated workers; a disaggregated config keeps its pools' own.
  if (constants !== null) roleOf(config.engine, 'aggregated').timing = linearTimingOf(constants);
  if (constants !== null && constants.client_delay_ms > 0)
    config.engine.frontend = { ...config.engine.frontend, base_ms: constants.client_delay_ms };
  const source = config.traffic.source;
  // A vLLM request log is replayed as it was: its own requests at their own arrival times.
  if (typeof key.log === 'string' && source.type === 'trace' && source.format === 'vllm-log') {
    if (logKeyOf(source.path) !== key.log)
      throw new Error(`point log=${key.log}: the base config replays the log ${logKeyOf(source.path)}; give that log as --config`);
    return parseRunConfig(config, 'calibrate engine (simulated point)');
  }
  const isl = typeof key.isl === 'number' ? key.isl : source.type === 'synthetic' ? source.input_tokens : undefined;
  const osl = typeof key.osl === 'number' ? key.osl : source.type === 'synthetic' ? source.output_tokens : undefined;
  if (isl === undefined || osl === undefined)
    throw new Error(`point ${JSON.stringify(key)}: no isl/osl, and the base config's source is not synthetic`);
  // As means, a length is the middle of the drawn range [ratio x top, top].
  const top = (mean: number) => (load.lengths === 'mean' ? Math.max(1, Math.round((2 * mean) / (1 + load.rangeRatio))) : mean);
  // A base config's dataset of prompts (AIPerf's --num-dataset-entries) is kept: the measured
  // runs repeated their prompts, and so does every simulated point.
  const dataset =
    source.type === 'synthetic' && source.dataset_entries !== undefined
      ? { dataset_entries: source.dataset_entries, ...(source.dataset_sampling ? { dataset_sampling: source.dataset_sampling } : {}) }
      : {};
  config.traffic.source = {
    type: 'synthetic',
    input_tokens: top(isl),
    output_tokens: osl === 0 ? 0 : top(osl),
    random_range_ratio: load.rangeRatio,
    seed: load.seed,
    ...dataset,
  };
  const overhead = config.traffic.load.response_overhead;
  let unit: number;
  if (typeof key.concurrency === 'number') {
    unit = key.concurrency;
    config.traffic.load = {
      type: 'concurrency',
      concurrency: key.concurrency,
      ramp_up_ms: 0,
      ...(overhead ? { response_overhead: overhead } : {}),
    };
    // A benchmark at concurrency C on an engine that admits fewer sequences queues on the
    // engine, as the real one did; `admit-all` raises the limit to C instead.
    if (load.admission === 'admit-all') {
      const role = roleOf(config.engine, 'aggregated');
      role.scheduler.max_sequences = Math.max(
        role.scheduler.max_sequences,
        Math.ceil(key.concurrency / (role.parallelism.attention_data * role.parallelism.replicas)),
      );
    }
  } else if (typeof key.request_rate === 'number') {
    unit = key.request_rate;
    config.traffic.load = {
      type: 'poisson',
      requests_per_second: key.request_rate,
      seed: load.seed,
      ...(overhead ? { response_overhead: overhead } : {}),
    };
  } else {
    throw new Error(`point ${JSON.stringify(key)}: needs a concurrency or request_rate key`);
  }
  config.traffic.stop = { requests: Math.max(1, Math.round(load.requestsPerSlot * unit)) };
  config.report = {
    ...config.report,
    warmup_requests: load.warmup === 'first-wave' && typeof key.concurrency === 'number' ? key.concurrency : 0,
  };
  return parseRunConfig(config, 'calibrate engine (simulated point)');
}
