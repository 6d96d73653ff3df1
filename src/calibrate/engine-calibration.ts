/**
 * The engine fit in the linear form of `fit-form.ts` (docs/calibration.md): fit on the training
 * points (several fixed starts side by side on the fit pool, the lowest loss wins, ties to the
 * first start), judged by the held-out protocol (`held-out.ts`: every measured point replayed
 * with the fitted constants on the sweep pool, the held-out ones scored). Used by `servesim
 * calibrate engine`, by `npm start` and by the accuracy benchmark. Files are written by the
 * callers.
 */
import type { RunConfig } from '../config/types.js';
import type { MetricName } from '../score/metric-names.js';
import { metricValue, type ScorePoint } from '../score/points.js';
import { PointPool } from '../sweep/pool.js';
import { compiledModule, WorkerPool } from '../sweep/worker-pool.js';
import {
  freeConstants,
  LINEAR_CONSTANTS,
  startConstants,
  type EngineFitResult,
  type EngineFitTask,
  type TrainingPoint,
} from './engine-fit.js';
import type { FitForm } from './fit-form.js';
import { runHeldOut, type HeldOutInput, type HeldOutScore } from './held-out.js';
import { defaultDecodeExponent } from './model-family.js';
import type { EngineConstants } from './sim-load.js';
import { linearSwap } from './timing-swap.js';
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

/** The measured points and training indices (`HeldOutInput`), and the linear form's options. */
export interface EngineCalibrationInput extends HeldOutInput {
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

/** A linear fit and what the held-out protocol measured of it (`HeldOutScore`: simulated points with the fitted constants, scores). */
export interface EngineCalibration extends HeldOutScore {
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

/** What the linear form's fit returns: every start's fit, the best, and the choices it was made with. */
export type LinearFit = Pick<EngineCalibration, 'best' | 'fits' | 'pointWeights' | 'prefillPrior' | 'metricWeights'>;

/**
 * The linear form (`FitForm`): the `linear` timing coefficients the training points can tell
 * apart (`freeConstants`) and, with `fitClient`, the client delay, each searched over its
 * logarithm within [start x e^-14, start x e^8], with no prior but the prefill one; fitted from
 * two starts side by side on the fit pool (`fit-task.ts`), the lowest loss wins.
 */
export function linearForm(
  input: Omit<EngineCalibrationInput, 'measured' | 'trainIndices' | 'threads' | 'fitPool' | 'pointPool'>,
  decodeExponent: number,
  prefillOverlap: number,
): FitForm<LinearFit> {
  const tasksFor = (train: readonly ScorePoint[]): { tasks: EngineFitTask[]; pointWeights: LinearFit['pointWeights'] } => {
    const pointWeights =
      input.pointWeights === null
        ? { scheme: 'uniform', weights: train.map(() => 1) }
        : input.pointWeights !== undefined
          ? { scheme: 'given', weights: input.pointWeights }
          : { scheme: 'load rank', weights: loadRankWeights(train) };
    const shares = input.fitClient ? [...PREFILL_SHARE_STARTS] : [1];
    const tasks = shares.map((share) => ({
      base: input.base,
      baseDir: input.baseDir,
      train: train.map((p) => trainingPoint(p, input.metrics)),
      metrics: input.metrics,
      load: input.load,
      fitClient: input.fitClient,
      prefillShare: share,
      decodeExponent,
      prefillOverlap,
      pointWeights: pointWeights.weights,
      ...(input.prefillPrior === null ? {} : { prefillPrior: input.prefillPrior ?? PREFILL_PRIOR }),
      metricWeights: input.metricWeights ?? DEFAULT_METRIC_WEIGHTS,
      maxIterations: input.maxIterations,
      refineIterations: input.refineIterations,
    }));
    return { tasks, pointWeights };
  };
  const names = (train: readonly ScorePoint[]) => freeConstants(train, input.fitClient, decodeExponent);
  return {
    name: 'linear',
    charts: true,
    parameters(train) {
      // The first start's constants (`fitEngine` runs each start from its own).
      const start = startConstants(tasksFor(train).tasks[0]);
      const free = new Set<string>(names(train));
      return LINEAR_CONSTANTS.map((name) => ({
        name,
        centre: start[name],
        transform: { type: 'log' },
        priorSd: null,
        bounds: [start[name] * Math.exp(-14), start[name] * Math.exp(8)],
        free: free.has(name),
      }));
    },
    swap(values, point) {
      const constants = { decode_request_exponent: decodeExponent, prefill_overlap: prefillOverlap } as EngineConstants;
      LINEAR_CONSTANTS.forEach((name, i) => (constants[name] = values[i]));
      return linearSwap(constants, point.prepared.run);
    },
    async fit(train, pools) {
      if (pools.fit === undefined) throw new Error('the linear form runs its starts on a fit pool');
      const { tasks, pointWeights } = tasksFor(train);
      const fitPool = pools.fit;
      const fits = await Promise.all(tasks.map((task) => fitPool.run(task)));
      let best = fits[0];
      for (const fit of fits.slice(1)) if (fit.loss < best.loss) best = fit;
      return {
        result: { best, fits, pointWeights, prefillPrior: tasks[0].prefillPrior ?? null, metricWeights: tasks[0].metricWeights ?? {} },
        replay: { base: input.base, constants: best.constants },
      };
    },
  };
}

export async function calibrateEngine(input: EngineCalibrationInput): Promise<EngineCalibration> {
  const started = performance.now();
  const fitPool = input.fitPool ?? new FitPool(input.threads);
  const pointPool = input.pointPool ?? new PointPool({ poolThreads: input.threads ?? fitPool.threads });
  try {
    const exponent = input.decodeExponent !== undefined ? { value: input.decodeExponent, source: 'given' } : decodeExponentOf(input.base);
    const overlap = input.prefillOverlap !== undefined ? { value: input.prefillOverlap, source: 'given' } : prefillOverlapOf(input.base);
    const form = linearForm(input, exponent.value, overlap.value);
    const { result, ...scored } = await runHeldOut(form, input, { point: pointPool, fit: fitPool });
    return {
      ...result,
      decodeExponent: exponent,
      prefillOverlap: overlap,
      ...scored,
      wallMs: performance.now() - started,
    };
  } finally {
    if (input.fitPool === undefined) await fitPool.destroy();
    if (input.pointPool === undefined) await pointPool.destroy();
  }
}
