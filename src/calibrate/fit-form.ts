/**
 * A fit form: what an engine fit moves and how (docs/calibration.md, "How a fit runs"). Two
 * forms implement it: linear (`engine-calibration.ts`: the `linear` timing coefficients and a
 * client delay, free within wide bounds) and physics (`roofline-calibration.ts`: the catalog's
 * efficiency factors of one deployment, each with a prior at the catalog's value). The catalog fit
 * over many deployments (`catalog-fit.ts`) moves the same factors with the same transforms and
 * bounds (`factorTransform`), with priors shared across GPUs and backends instead.
 *
 * The flow of every form is the same (`held-out.ts`): the measured points are split into training
 * and held-out ones; the form fits on the training points, replaying each one resolved once with
 * its parameters' timing swapped in (`timing-swap.ts`); every measured point is then replayed
 * once with the fitted timing and the held-out ones are scored. What a fitted form reports (its
 * block of fit.json, its fitted config and snippet, its console lines) is a `FormReport`.
 */
import type { RunConfig } from '../config/types.js';
import type { ScorePoint } from '../score/points.js';
import type { PointPool } from '../sweep/pool.js';
import type { WorkerPool } from '../sweep/worker-pool.js';
import type { EngineFitResult, EngineFitTask } from './engine-fit.js';
import type { EngineConstants } from './sim-load.js';
import type { ResolvedPoint, TimingSwap } from './timing-swap.js';
import type { Trajectory } from './trajectory.js';
import type { TrajectoryTask } from './trajectory-task.js';

/**
 * How a parameter moves in the fit's search space z: `log`, value = e^z (a positive cost);
 * `logit`, value = 1 / (1 + e^-z) (a share of a peak, in (0, 1)); `bounded`, value =
 * bound / (1 + e^-z) (a cost held below what measurements show).
 */
export type ParameterTransform = { type: 'log' } | { type: 'logit' } | { type: 'bounded'; bound: number };

const logit = (v: number) => Math.log(v / (1 - v));

/** A value in the search space of its transform (clamped inside the transform's range). */
export function toSearchSpace(transform: ParameterTransform, value: number): number {
  switch (transform.type) {
    case 'bounded':
      return logit(Math.min(Math.max(value / transform.bound, 1e-6), 1 - 1e-6));
    case 'logit':
      return logit(Math.min(Math.max(value, 1e-9), 0.999999));
    case 'log':
      return Math.log(Math.max(value, 1e-9));
  }
}

/** The value of a point of the search space. */
export function fromSearchSpace(transform: ParameterTransform, z: number): number {
  switch (transform.type) {
    case 'bounded':
      return transform.bound / (1 + Math.exp(-z));
    case 'logit':
      return 1 / (1 + Math.exp(-z));
    case 'log':
      return Math.exp(z);
  }
}

/** One parameter of a form, for given training points. */
export interface FitParameter {
  name: string;
  /** Where the fit starts, and the prior's centre when it has one (natural units). */
  centre: number;
  transform: ParameterTransform;
  /** Standard deviation of the prior in the search space; null: no prior. */
  priorSd: number | null;
  /** The search's bounds, natural units (beyond the transform's own range). */
  bounds?: [number, number];
  /**
   * Whether the fit moves it; false: the training points cannot tell it apart and it stays at its
   * centre. (The physics form decides this from the first round's trajectories: `free` is true
   * for every factor here, and its result says which were held.)
   */
  free: boolean;
}

/** How every measured point is replayed once fitted: `pointConfig(base, key, constants, load)`. */
export interface FittedReplay {
  base: RunConfig;
  /** Constants `pointConfig` puts in (null: the base's own timing). */
  constants: EngineConstants | null;
}

/** The pools a fit runs on: the sweep's points, and the pools of the form's own tasks. */
export interface FitPools {
  point: PointPool;
  /** Engine fits, one task per start (the linear form). */
  fit?: WorkerPool<EngineFitTask, EngineFitResult>;
  /** Trajectory recordings (the physics form). */
  trajectory?: WorkerPool<TrajectoryTask, Trajectory>;
}

export interface FitForm<R> {
  readonly name: 'linear' | 'roofline';
  /** Whether the held-out report draws the fitted curve at every measured load with the training points. */
  readonly charts: boolean;
  /** The parameters for these training points: names, centres, priors or bounds, which are free. */
  parameters(train: readonly ScorePoint[]): FitParameter[];
  /** The timing (and frontend costs) that parameter values (natural units, in `parameters` order) give a point resolved for this form. */
  swap(values: readonly number[], point: ResolvedPoint): TimingSwap;
  /** Fits on the training points; the result, and how the measured points are replayed with it. */
  fit(train: ScorePoint[], pools: FitPools): Promise<{ result: R; replay: FittedReplay }>;
}

/**
 * What a fitted form reports: fit.json's block of the form (between `form_choice` and `inputs`),
 * the fitted config and the snippet, and the console's lines of its parameters. Each form builds
 * its own (engine-command.ts: the linear form in `runEngineCalibration`, the physics form in
 * `runRooflineCalibration`); `writeFormOutputs` there writes either the same way.
 */
export interface FormReport {
  /** The console's name of the form. */
  label: 'linear' | 'physics';
  /** Said after the command's name in the fitted files' header. */
  headerTag?: string;
  json: Record<string, unknown>;
  /** fitted-config.yaml: the base config with the fitted timing, under `header`. */
  fittedConfig: (header: string) => string;
  /** snippet.yaml's keys. */
  snippet: Record<string, unknown>;
  parameterLines: string[];
  /** Replays the fit took, for the console's first line. */
  replays: number;
}
