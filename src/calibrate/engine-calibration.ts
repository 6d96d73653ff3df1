/**
 * The engine fit with its held-out protocol (docs/calibration.md): fit on the training points (several
 * fixed starts side by side on the fit pool, the lowest loss wins, ties to the first
 * start), simulate every measured point with the fitted constants on the sweep pool, and score
 * the held-out points with the scoring module. Used by `servesim calibrate engine`, by
 * `npm start` and by the accuracy benchmark. Files are written by the callers.
 */
import type { RunConfig } from '../config/types.js';
import type { MetricName } from '../score/metric-names.js';
import { pairPoints } from '../score/pair.js';
import { metricsOfSummary, metricValue, type PointKey, type ScorePoint } from '../score/points.js';
import { buildScore, type ScoreResult } from '../score/score-result.js';
import { prepareRun, type PreparedRun } from '../replay.js';
import { PointPool, describeError } from '../sweep/pool.js';
import { compiledModule, WorkerPool } from '../sweep/worker-pool.js';
import type { EngineFitResult, EngineFitTask, TrainingPoint } from './engine-fit.js';
import { defaultDecodeExponent } from './model-family.js';
import { pointConfig, type EngineConstants, type SimLoadOptions } from './sim-load.js';
import { roleOf } from '../config/roles.js';

/** A pool of engine fits: one task is one complete fit from one start (`fit-task.ts`). */
export class FitPool extends WorkerPool<EngineFitTask, EngineFitResult> {
  constructor(threads?: number) {
    super({ filename: compiledModule('calibrate/fit-task.js'), threads });
  }
}

/** Shares of the first point's TTFT overhead put on prefill at the starts (client delay: the rest). */
export const PREFILL_SHARE_STARTS = [0.25, 0.75] as const;

/**
 * The default prior on prefill_token_us / base_ms (`EngineFitTask.prefillPrior`): prefill is
 * compute-bound (about 2 x active parameters FLOPs per token) and a small decode step is bound by
 * reading the weights, so the ratio moves with FLOPs per byte of bandwidth. Ratio 5 is the median
 * of unconstrained fits on 23 silicon deployments outside the accuracy benchmark; weight 0.1 did
 * better than 0.3 there. It settles the split of TTFT between prefill and client delay that three
 * low points leave open (docs/calibration.md, "Prefill prior", with its measured effect).
 */
export const PREFILL_PRIOR = { ratio: 5, weight: 0.1 } as const;

/**
 * Default roofline overlap of prefill with the rest of a pass in the engine fit (docs/calibration.md,
 * "Prefill overlap", with how it was chosen).
 */
export const DEFAULT_PREFILL_OVERLAP = 0;

/** Weights of the metrics' relative residuals in the fit's loss (1 for every metric not listed). */
export const DEFAULT_METRIC_WEIGHTS: Record<string, number> = {};

export interface EngineCalibrationInput {
  base: RunConfig;
  baseDir: string;
  /** Measured points (keys and metrics), in input order. */
  measured: ScorePoint[];
  /** Indices into `measured` of the training points; the rest are held out. */
  trainIndices: number[];
  metrics: MetricName[];
  load: SimLoadOptions;
  fitClient: boolean;
  /** Prior on prefill_token_us / base_ms (`EngineFitTask.prefillPrior`); default PREFILL_PRIOR, null: none. */
  prefillPrior?: { ratio: number; weight: number } | null;
  /** Weights of the metrics' residuals in the loss (`EngineFitTask.metricWeights`); default DEFAULT_METRIC_WEIGHTS. */
  metricWeights?: Record<string, number>;
  /** Exponent of the decoding-request term; default: `decodeExponentOf(base)`. */
  decodeExponent?: number;
  /** Roofline overlap of prefill with the rest of a pass; default: `prefillOverlapOf(base)`. */
  prefillOverlap?: number;
  /**
   * Weights of the training points' residuals, in the order the training points have in
   * `measured`; default `loadRankWeights` of the training points, null: 1 each.
   */
  pointWeights?: number[] | null;
  threads?: number;
  /** Pools to reuse (the benchmark shares them across deployments); created and destroyed here otherwise. */
  fitPool?: FitPool;
  pointPool?: PointPool;
  maxIterations?: number;
  /** `EngineFitTask.refineIterations`; default 0. */
  refineIterations?: number;
}

/**
 * The decode exponent a fit uses: the base config's, when its `linear` timing sets one below 1;
 * else the default of the model's family (`model-family.ts`: mixture of experts 0.5, dense 0.8).
 */
export function decodeExponentOf(base: RunConfig): { value: number; source: string } {
  const timing = roleOf(base.engine, 'aggregated').timing;
  if (timing.type === 'linear' && timing.decode_request_exponent < 1)
    return { value: timing.decode_request_exponent, source: 'base config' };
  return { value: defaultDecodeExponent(base.engine.model), source: `model family default (${base.engine.model})` };
}

/**
 * The roofline overlap (`prefill_overlap`) a fit uses, fixed during the fit: the base config's when
 * its `linear` timing sets one above 0, else DEFAULT_PREFILL_OVERLAP.
 */
export function prefillOverlapOf(base: RunConfig): { value: number; source: string } {
  const timing = roleOf(base.engine, 'aggregated').timing;
  if (timing.type === 'linear' && timing.prefill_overlap > 0) return { value: timing.prefill_overlap, source: 'base config' };
  return { value: DEFAULT_PREFILL_OVERLAP, source: 'default' };
}

/**
 * Default weights of the training points' residuals: each point's rank by load (concurrency, else
 * request rate; equal loads share their mean rank), divided by the mean rank, so the weights
 * average 1 and the most loaded training point, the one the held-out points extrapolate from,
 * counts most (0.5, 1, 1.5 for three points). Points without a load key weigh 1. How chosen:
 * docs/calibration.md, "Point weights".
 */
export function loadRankWeights(train: readonly ScorePoint[]): number[] {
  const load = (p: ScorePoint) =>
    typeof p.key.concurrency === 'number' ? p.key.concurrency : typeof p.key.request_rate === 'number' ? p.key.request_rate : NaN;
  const loads = train.map(load);
  if (loads.some((x) => !Number.isFinite(x))) return train.map(() => 1);
  const ranks = loads.map((x) => {
    const below = loads.filter((y) => y < x).length;
    const equal = loads.filter((y) => y === x).length;
    return below + (equal + 1) / 2;
  });
  const meanRank = ranks.reduce((s, r) => s + r, 0) / ranks.length;
  return ranks.map((r) => r / meanRank);
}

export interface EngineCalibration {
  best: EngineFitResult;
  /** The decode exponent the fit used and where it came from. */
  decodeExponent: { value: number; source: string };
  /** The roofline overlap the fit used and where it came from. */
  prefillOverlap: { value: number; source: string };
  /** The weights of the training points' residuals (in training-point order) and how they were set. */
  pointWeights: { scheme: string; weights: number[] };
  /** The prefill prior (null: none) and metric weights the fit used. */
  prefillPrior: { ratio: number; weight: number } | null;
  metricWeights: Record<string, number>;
  fits: EngineFitResult[];
  train: ScorePoint[];
  holdout: ScorePoint[];
  /** Simulated points with the fitted constants (every measured point). */
  simulated: ScorePoint[];
  /** Score of the held-out points. */
  score: ScoreResult;
  /** Score of the training points (how well the fit itself matches). */
  trainScore: ScoreResult;
  /** Held-out MAPE by metric id (null when no held-out point has the metric). */
  holdoutMape: Record<string, number | null>;
  wallMs: number;
}

function trainingPoint(point: ScorePoint, metrics: readonly MetricName[]): TrainingPoint {
  const measured: Record<string, number> = {};
  for (const metric of metrics) {
    const value = metricValue(point, metric);
    if (value !== undefined) measured[metric.id] = value;
  }
  return { key: point.key, measured };
}

function describe(key: PointKey): string {
  return Object.entries(key)
    .map(([name, value]) => `${name}=${value}`)
    .join(',');
}

export async function simulatePoints(
  pool: PointPool,
  base: RunConfig,
  baseDir: string,
  keys: readonly PointKey[],
  constants: EngineConstants | null,
  load: SimLoadOptions,
): Promise<ScorePoint[]> {
  const outcomes = await Promise.all(
    keys.map((key) => {
      const config = pointConfig(base, key, constants, load);
      let run: PreparedRun;
      try {
        run = prepareRun(config, { baseDir });
      } catch (err) {
        return Promise.resolve({ status: 'failed' as const, error: describeError(err), wallMs: 0 });
      }
      return pool.run({ id: describe(key), config, run });
    }),
  );
  return outcomes.map((outcome, index) => {
    if (outcome.status !== 'ok')
      throw new Error(`simulating ${describe(keys[index])} failed: ${'error' in outcome ? outcome.error : outcome.status}`);
    return {
      source: `fitted model (${describe(keys[index])})`,
      key: { ...keys[index] },
      metrics: metricsOfSummary(outcome.result.summary),
    };
  });
}

export function scoreOf(
  simulated: readonly ScorePoint[],
  measured: readonly ScorePoint[],
  metrics: readonly MetricName[],
  label: string,
  /** For the charts: the fitted model at every measured load, and the points it was fitted on. */
  curves?: { sim: readonly ScorePoint[]; training: readonly ScorePoint[] },
): ScoreResult {
  const keyNames = new Set(measured.flatMap((p) => Object.keys(p.key)));
  const sim = simulated.filter((p) => measured.some((m) => [...keyNames].every((k) => String(m.key[k]) === String(p.key[k]))));
  return buildScore({
    paired: pairPoints(sim, measured),
    metrics,
    groupBy: [],
    skippedSim: [],
    ...(curves ? { curves } : {}),
    inputs: {
      sim: 'fitted model',
      sim_label: label,
      measured: [...new Set(measured.map((p) => p.source.replace(/:\d+$/, '')))],
      measured_notes: [],
    },
  });
}

export async function calibrateEngine(input: EngineCalibrationInput): Promise<EngineCalibration> {
  const started = performance.now();
  const trainSet = new Set(input.trainIndices);
  const train = input.measured.filter((_, i) => trainSet.has(i));
  const holdout = input.measured.filter((_, i) => !trainSet.has(i));
  if (train.length === 0) throw new Error('no training point: --train selected none of the measured points');
  const fitPool = input.fitPool ?? new FitPool(input.threads);
  const pointPool = input.pointPool ?? new PointPool({ poolThreads: input.threads ?? fitPool.threads });
  try {
    const exponent = input.decodeExponent !== undefined ? { value: input.decodeExponent, source: 'given' } : decodeExponentOf(input.base);
    const decodeExponent = exponent.value;
    const pointWeights =
      input.pointWeights === null
        ? { scheme: 'uniform', weights: train.map(() => 1) }
        : input.pointWeights !== undefined
          ? { scheme: 'given', weights: input.pointWeights }
          : { scheme: 'load rank', weights: loadRankWeights(train) };
    const overlap = input.prefillOverlap !== undefined ? { value: input.prefillOverlap, source: 'given' } : prefillOverlapOf(input.base);
    const shares = input.fitClient ? [...PREFILL_SHARE_STARTS] : [1];
    const tasks: EngineFitTask[] = shares.map((share) => ({
      base: input.base,
      baseDir: input.baseDir,
      train: train.map((p) => trainingPoint(p, input.metrics)),
      metrics: input.metrics,
      load: input.load,
      fitClient: input.fitClient,
      prefillShare: share,
      decodeExponent,
      prefillOverlap: overlap.value,
      pointWeights: pointWeights.weights,
      ...(input.prefillPrior === null ? {} : { prefillPrior: input.prefillPrior ?? PREFILL_PRIOR }),
      metricWeights: input.metricWeights ?? DEFAULT_METRIC_WEIGHTS,
      maxIterations: input.maxIterations,
      refineIterations: input.refineIterations,
    }));
    const fits = await Promise.all(tasks.map((task) => fitPool.run(task)));
    let best = fits[0];
    for (const fit of fits.slice(1)) if (fit.loss < best.loss) best = fit;
    const simulated = await simulatePoints(
      pointPool,
      input.base,
      input.baseDir,
      input.measured.map((p) => p.key),
      best.constants,
      input.load,
    );
    const score = scoreOf(simulated, holdout, input.metrics, 'fitted model', { sim: simulated, training: train });
    const trainScore = scoreOf(simulated, train, input.metrics, 'fitted model');
    const holdoutMape: Record<string, number | null> = {};
    for (const metric of input.metrics) holdoutMape[metric.id] = holdout.length > 0 ? (score.metrics[metric.id]?.mape ?? null) : null;
    return {
      best,
      decodeExponent: exponent,
      prefillOverlap: overlap,
      pointWeights,
      prefillPrior: tasks[0].prefillPrior ?? null,
      metricWeights: tasks[0].metricWeights ?? {},
      fits,
      train,
      holdout,
      simulated,
      score,
      trainScore,
      holdoutMape,
      wallMs: performance.now() - started,
    };
  } finally {
    if (input.fitPool === undefined) await fitPool.destroy();
    if (input.pointPool === undefined) await pointPool.destroy();
  }
}
