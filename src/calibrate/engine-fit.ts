/**
 * The engine fit proper (docs/calibration.md, "Engine (end to end)"): find the `linear` timing
 * coefficients (and optionally a client-path delay) for which the replay core reproduces the
 * chosen metrics of the training points. Synchronous and deterministic: a Levenberg-Marquardt
 * search (`ml-levenberg-marquardt`) over the logarithms of the free coefficients (so every cost
 * stays positive), with a fixed start, step and iteration budget; residuals are relative
 * (`sim / measured - 1`), so the loss is scale-free like the MAPE it is reported as.
 *
 * Which coefficients are free depends on what the training points can tell apart:
 * - base_ms and one decode slope always (ITL at two or more concurrencies). With a decode
 *   exponent p < 1 (`decodeExponent`, fixed per model family: `model-family.ts`) the slope is
 *   the sublinear term `decode_request_us x B^p`, and decode_kv_token_ns is free only when the
 *   points' context lengths differ; with p = 1 the slope is decode_kv_token_ns, and
 *   decode_request_us is free only when the context lengths differ (several ISL/OSL);
 * - prefill_token_us always; prefill_pair_ns only when the points' ISLs differ;
 * - the client delay when asked (`fitClient`): the part of TTFT that does not hold the engine.
 */
import { roleOf } from '../config/roles.js';
import { levenbergMarquardt } from 'ml-levenberg-marquardt';
import type { RunConfig } from '../config/types.js';
import type { ReplaySummary } from '../core/report-types.js';
import { replay, replayPrepared } from '../replay.js';
import type { MetricName } from '../score/metric-names.js';
import { metricsOfSummary, metricValue, type PointKey } from '../score/points.js';
import { pointConfig, type EngineConstants, type SimLoadOptions } from './sim-load.js';
import { linearSwap, resolvePoint, swapTiming } from './timing-swap.js';

export type ConstantName = Exclude<keyof EngineConstants, 'decode_request_exponent' | 'prefill_overlap'>;

/** The constants a linear fit may move, in the order its outputs list them. */
export const LINEAR_CONSTANTS: readonly ConstantName[] = [
  'base_ms',
  'prefill_token_us',
  'prefill_pair_ns',
  'decode_request_us',
  'decode_kv_token_ns',
  'client_delay_ms',
];

export interface TrainingPoint {
  key: PointKey;
  /** Measured values by metric id (`time_to_first_token.avg`). */
  measured: Record<string, number>;
}

export interface EngineFitTask {
  base: RunConfig;
  /** Folder relative paths of the base config resolve against. */
  baseDir: string;
  train: TrainingPoint[];
  metrics: MetricName[];
  load: SimLoadOptions;
  fitClient: boolean;
  /** Share of the first point's TTFT overhead put on the engine's prefill at the start (rest: client delay). */
  prefillShare: number;
  /**
   * Prior on the ratio prefill_token_us / base_ms (us per prefill token per ms of a decode
   * step's fixed cost), as an extra residual `weight x ln(ratio / value)`; applied when both are
   * free and the client delay is fitted (the split it settles). Absent: no prior.
   */
  prefillPrior?: { ratio: number; weight: number };
  /** Weight of each metric's relative residuals in the loss (metric id -> weight; default 1). */
  metricWeights?: Record<string, number>;
  /** Weight of each training point's residuals, aligned with `train` (default 1 each). */
  pointWeights?: number[];
  /** Exponent p of the decoding-request term (fixed during the fit; 1 = affine in the batch). */
  decodeExponent?: number;
  /** Roofline overlap of prefill with the rest of a pass (`prefill_overlap`, fixed during the fit; 0 = the sum). */
  prefillOverlap?: number;
  maxIterations?: number;
  /**
   * Iterations of each refining search (3 % then 1 % finite-difference steps) run after the
   * coarse one, each kept only if it lowers the loss; 0 (default): none. Worth it when the
   * simulated runs are long enough for the metrics to be smooth at that scale.
   */
  refineIterations?: number;
}

export interface EngineFitResult {
  constants: EngineConstants;
  free: ConstantName[];
  /** Mean APE (%) over training points and metrics at the result. */
  trainMape: number;
  /** The minimized loss: sum of squared residuals (relative errors, and the prior's residual when used). */
  loss: number;
  /** Per training point and metric: simulated and measured values. */
  trainValues: Array<{ key: PointKey; metric: string; sim: number; measured: number }>;
  iterations: number;
  replays: number;
  prefillShare: number;
  wallMs: number;
}

function mean(values: readonly number[]): number {
  return values.reduce((s, v) => s + v, 0) / Math.max(1, values.length);
}

function numberKey(key: PointKey, name: string): number | undefined {
  const value = key[name];
  return typeof value === 'number' ? value : undefined;
}

/** Which constants the training points can identify (see the module comment). */
export function freeConstants(train: ReadonlyArray<Pick<TrainingPoint, 'key'>>, fitClient: boolean, decodeExponent = 1): ConstantName[] {
  const isl = new Set(train.map((p) => numberKey(p.key, 'isl')));
  const ctx = new Set(train.map((p) => (numberKey(p.key, 'isl') ?? 0) + (numberKey(p.key, 'osl') ?? 0) / 2));
  const free: ConstantName[] = ['base_ms'];
  if (decodeExponent < 1) {
    free.push('decode_request_us');
    if (ctx.size > 1) free.push('decode_kv_token_ns');
  } else {
    free.push('decode_kv_token_ns');
    if (ctx.size > 1) free.push('decode_request_us');
  }
  free.push('prefill_token_us');
  if (isl.size > 1) free.push('prefill_pair_ns');
  if (fitClient) free.push('client_delay_ms');
  return free;
}

/** A start from the measured values: a line through ITL against per-rank batch, and TTFT's rest. */
export function startConstants(
  task: Pick<EngineFitTask, 'base' | 'train' | 'load' | 'fitClient' | 'prefillShare' | 'decodeExponent' | 'prefillOverlap'>,
): EngineConstants {
  const exponent = task.decodeExponent ?? 1;
  const parallelism = roleOf(task.base.engine, 'aggregated').parallelism;
  const ranks = parallelism.attention_data * parallelism.replicas;
  // The mean drawn length relative to the point's: the middle of [ratio x top, top], or the point's own.
  const jitter = task.load.lengths === 'mean' ? 1 : (1 + task.load.rangeRatio) / 2;
  const source = task.base.traffic.source;
  const defaultIsl = source.type === 'synthetic' ? source.input_tokens : 1024;
  const defaultOsl = source.type === 'synthetic' ? source.output_tokens : 128;
  const rows = task.train
    .map((p) => ({
      batch: Math.max(1, (numberKey(p.key, 'concurrency') ?? 1) / ranks) ** exponent,
      ctx: ((numberKey(p.key, 'isl') ?? defaultIsl) + (numberKey(p.key, 'osl') ?? defaultOsl) / 2) * jitter,
      isl: (numberKey(p.key, 'isl') ?? defaultIsl) * jitter,
      itl: p.measured['inter_token_latency.avg'],
      ttft: p.measured['time_to_first_token.avg'],
    }))
    .sort((a, b) => a.batch - b.batch);
  const withItl = rows.filter((r) => Number.isFinite(r.itl));
  let baseMs = 5;
  let perRequestMs = 0.05;
  if (withItl.length >= 2) {
    const first = withItl[0];
    const last = withItl[withItl.length - 1];
    const slope = last.batch > first.batch ? (last.itl - first.itl) / (last.batch - first.batch) : 0;
    perRequestMs = Math.max(slope, first.itl * 0.005);
    baseMs = Math.max(first.itl - perRequestMs * first.batch, first.itl * 0.2);
  } else if (withItl.length === 1) {
    baseMs = withItl[0].itl * 0.8;
    perRequestMs = (withItl[0].itl * 0.2) / withItl[0].batch;
  }
  const ctx = mean(rows.map((r) => r.ctx));
  const first = rows.find((r) => Number.isFinite(r.ttft));
  const itl0 = withItl[0]?.itl ?? baseMs;
  const rest = first ? Math.max(first.ttft - 1.5 * itl0, first.ttft * 0.1) : 50;
  const share = task.fitClient ? task.prefillShare : 1;
  const isl = first?.isl ?? 1024;
  // perRequestMs is per unit of batch^p: on decode_request_us when p < 1, else per KV token.
  return {
    base_ms: baseMs,
    decode_kv_token_ns: exponent < 1 ? 0 : (perRequestMs / ctx) * 1e6,
    decode_request_us: exponent < 1 ? perRequestMs * 1e3 : 0,
    decode_request_exponent: exponent,
    prefill_overlap: task.prefillOverlap ?? 0,
    prefill_token_us: ((rest * share) / isl) * 1e3,
    prefill_pair_ns: 0,
    client_delay_ms: task.fitClient ? rest * (1 - share) : 0,
  };
}

/** Metric values of a replay's summary for the given metrics (NaN where the summary has none). */
function metricsOf(summary: ReplaySummary, key: PointKey, metrics: readonly MetricName[]): Record<string, number> {
  const point = { source: '', key, metrics: metricsOfSummary(summary) };
  const out: Record<string, number> = {};
  for (const metric of metrics) out[metric.id] = metricValue(point, metric) ?? NaN;
  return out;
}

/** Simulated metric values of one point with given constants, its config built and resolved afresh. */
export function simulatePoint(
  task: Pick<EngineFitTask, 'base' | 'baseDir' | 'load'>,
  key: PointKey,
  constants: EngineConstants,
  metrics: readonly MetricName[],
): Record<string, number> {
  const { summary } = replay(pointConfig(task.base, key, constants, task.load), { baseDir: task.baseDir });
  return metricsOf(summary, key, metrics);
}

/** How a fit replays its training points: each one's metric values (by metric id) with given constants, in `train` order. */
export type TrainingReplay = (constants: EngineConstants) => Array<Record<string, number>>;

/**
 * The fit's replays: each training point resolved once (with the start's constants, no client
 * delay), then replayed with only the constants' timing and client delay swapped in
 * (`timing-swap.ts`): the same numbers as `configReplay`, without building, validating and
 * resolving the point's config at every evaluation.
 */
export function swappedReplay(task: EngineFitTask): TrainingReplay {
  const template = { ...startConstants(task), client_delay_ms: 0 };
  const points = task.train.map((p) => resolvePoint(task.base, task.baseDir, p.key, template, task.load));
  return (constants) =>
    points.map((point) => {
      const run = swapTiming(point.prepared.run, linearSwap(constants, point.prepared.run));
      return metricsOf(replayPrepared(point.config, { ...point.prepared, run }).summary, point.key, task.metrics);
    });
}

/** The fit's replays with each point's config built and resolved afresh at every evaluation (`simulatePoint`). */
export function configReplay(task: EngineFitTask): TrainingReplay {
  return (constants) => task.train.map((point) => simulatePoint(task, point.key, constants, task.metrics));
}

export function fitEngine(task: EngineFitTask, replayTraining: TrainingReplay = swappedReplay(task)): EngineFitResult {
  const started = performance.now();
  const start = startConstants(task);
  const exponent = task.decodeExponent ?? 1;
  const free = freeConstants(task.train, task.fitClient, exponent);
  // Coefficients that start at 0 start from a small share of the slope they split with.
  if (exponent >= 1 && free.includes('decode_request_us')) start.decode_request_us = start.decode_kv_token_ns * 1e-3 * 100;
  if (exponent < 1 && free.includes('decode_kv_token_ns')) start.decode_kv_token_ns = (start.decode_request_us * 1e3) / 100 / 2000;
  if (free.includes('prefill_pair_ns')) start.prefill_pair_ns = (start.prefill_token_us * 1e3) / 2000;
  const prior =
    task.prefillPrior && task.fitClient && free.includes('prefill_token_us') && free.includes('base_ms') ? task.prefillPrior : undefined;
  const residualIndex: Array<{ point: number; metric: MetricName }> = [];
  task.train.forEach((point, index) => {
    for (const metric of task.metrics)
      if (Number.isFinite(point.measured[metric.id]) && point.measured[metric.id] > 0) residualIndex.push({ point: index, metric });
  });
  if (residualIndex.length === 0) throw new Error('no measured value to fit on in the training points');
  let replays = 0;
  const cache = new Map<string, number[]>();
  const constantsOf = (x: readonly number[]): EngineConstants => {
    const c = { ...start };
    free.forEach((name, i) => (c[name] = Math.exp(x[i])));
    return c;
  };
  const ratios = (x: readonly number[]): number[] => {
    const cacheKey = x.map((v) => v.toPrecision(12)).join(',');
    const hit = cache.get(cacheKey);
    if (hit) return hit;
    const constants = constantsOf(x);
    const sims = replayTraining(constants);
    replays += sims.length;
    const out = residualIndex.map(({ point, metric }) => {
      const value = sims[point][metric.id] / task.train[point].measured[metric.id];
      return Number.isFinite(value) ? value : 1e3;
    });
    if (prior) out.push(1 + prior.weight * Math.log(constants.prefill_token_us / constants.base_ms / prior.ratio));
    cache.set(cacheKey, out);
    return out;
  };
  const x0 = free.map((name) => Math.log(Math.max(start[name], 1e-9)));
  const n = residualIndex.length + (prior ? 1 : 0);
  const weights = [
    ...residualIndex.map(({ point, metric }) => (task.metricWeights?.[metric.id] ?? 1) * (task.pointWeights?.[point] ?? 1)),
    ...(prior ? [1] : []),
  ];
  const weighted = (r: readonly number[]): number[] => r.map((v, i) => 1 + weights[i] * (v - 1));
  // The library wants at least 2 data points; a single residual is repeated (same minimum).
  const count = Math.max(2, n);
  const lossOf = (x: readonly number[]) => weighted(ratios(x)).reduce((sum, r) => sum + (r - 1) ** 2, 0);
  const search = (initialValues: number[], gradientDifference: number, maxIterations: number) =>
    levenbergMarquardt(
      { x: Array.from({ length: count }, (_, i) => i), y: Array.from({ length: count }, () => 1) },
      (x) => {
        const r = weighted(ratios(x));
        return (i) => r[i % n];
      },
      {
        initialValues,
        gradientDifference,
        damping: 0.01,
        maxIterations,
        errorTolerance: 1e-5,
        minValues: x0.map((v) => v - 14),
        maxValues: x0.map((v) => v + 8),
      },
    );
  // A 10 % step in log space: wide enough to see past the small jumps that reordered events put
  // in the metrics, narrow enough for the local slope. It stalls in long shallow valleys (the
  // client delay against the prefill cost), which the smaller steps of the refining searches
  // follow when the metrics are smooth at their scale.
  let result = search(x0, 0.1, task.maxIterations ?? 25);
  for (const step of task.refineIterations ? [0.03, 0.01] : []) {
    const refined = search(result.parameterValues, step, task.refineIterations as number);
    if (lossOf(refined.parameterValues) < lossOf(result.parameterValues))
      result = { ...refined, iterations: result.iterations + refined.iterations };
  }
  const constants = constantsOf(result.parameterValues);
  const final = ratios(result.parameterValues);
  const trainValues = residualIndex.map(({ point, metric }, i) => ({
    key: task.train[point].key,
    metric: metric.id,
    measured: task.train[point].measured[metric.id],
    sim: final[i] * task.train[point].measured[metric.id],
  }));
  return {
    constants,
    free,
    trainMape: mean(final.slice(0, residualIndex.length).map((r) => Math.abs(r - 1) * 100)),
    loss: lossOf(result.parameterValues),
    trainValues,
    iterations: result.iterations,
    replays,
    prefillShare: task.prefillShare,
    wallMs: performance.now() - started,
  };
}
