/**
 * The held-out protocol every engine fit is judged by (docs/calibration.md, "How a fit runs"):
 * split the measured points into training and held-out ones (`--train`), fit on the training
 * points, replay every measured point once with the fitted timing on the sweep's pool, and score
 * the held-out points (and, apart, the training points: how well the fit matches what it saw).
 * The fit itself is the form's (`fit-form.ts`); this is the same for every form.
 */
import type { RunConfig } from '../config/types.js';
import type { MetricName } from '../score/metric-names.js';
import { pairPoints } from '../score/pair.js';
import { metricsOfSummary, type PointKey, type ScorePoint } from '../score/points.js';
import { buildScore, type ScoreResult } from '../score/score-result.js';
import { prepareRun, type PreparedRun } from '../replay.js';
import { describeError, type PointPool } from '../sweep/pool.js';
import type { FitForm, FitPools, FittedReplay } from './fit-form.js';
import { pointConfig, type SimLoadOptions } from './sim-load.js';

/** The measured points of a held-out fit and which of them it trains on. */
export interface HeldOutInput {
  base: RunConfig;
  baseDir: string;
  /** Measured points (keys and metrics), in input order. */
  measured: ScorePoint[];
  /** Indices into `measured` of the training points; the rest are held out. */
  trainIndices: number[];
  metrics: MetricName[];
  load: SimLoadOptions;
}

/** What the protocol measured of a fit. */
export interface HeldOutScore {
  train: ScorePoint[];
  holdout: ScorePoint[];
  /** Simulated points with the fitted timing (every measured point, in input order). */
  simulated: ScorePoint[];
  /** Score of the held-out points. */
  score: ScoreResult;
  /** Score of the training points (how well the fit itself matches). */
  trainScore: ScoreResult;
  /** Held-out MAPE by metric id (null when no held-out point has the metric). */
  holdoutMape: Record<string, number | null>;
}

function describe(key: PointKey): string {
  return Object.entries(key)
    .map(([name, value]) => `${name}=${value}`)
    .join(',');
}

/** The training and held-out points; refused when `--train` selected none. */
export function splitTraining(input: Pick<HeldOutInput, 'measured' | 'trainIndices'>): { train: ScorePoint[]; holdout: ScorePoint[] } {
  const trainSet = new Set(input.trainIndices);
  const train = input.measured.filter((_, i) => trainSet.has(i));
  const holdout = input.measured.filter((_, i) => !trainSet.has(i));
  if (train.length === 0) throw new Error('no training point: --train selected none of the measured points');
  return { train, holdout };
}

/** Replays the points `keys` with a fitted timing on the pool, one task each. */
export async function simulatePoints(
  pool: PointPool,
  fitted: FittedReplay,
  baseDir: string,
  keys: readonly PointKey[],
  load: SimLoadOptions,
): Promise<ScorePoint[]> {
  const outcomes = await Promise.all(
    keys.map((key) => {
      const config = pointConfig(fitted.base, key, fitted.constants, load);
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

/** The score of simulated points against the measured ones they pair with. */
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

/**
 * The protocol: fits the form on the training points, replays every measured point with the
 * fitted timing on the pools' point pool, and scores the held-out points and the training points.
 */
export async function runHeldOut<R>(form: FitForm<R>, input: HeldOutInput, pools: FitPools): Promise<HeldOutScore & { result: R }> {
  const { train, holdout } = splitTraining(input);
  const { result, replay } = await form.fit(train, pools);
  const simulated = await simulatePoints(
    pools.point,
    replay,
    input.baseDir,
    input.measured.map((p) => p.key),
    input.load,
  );
  const score = scoreOf(simulated, holdout, input.metrics, 'fitted model', form.charts ? { sim: simulated, training: train } : undefined);
  const trainScore = scoreOf(simulated, train, input.metrics, 'fitted model');
  const holdoutMape: Record<string, number | null> = {};
  for (const metric of input.metrics) holdoutMape[metric.id] = holdout.length > 0 ? (score.metrics[metric.id]?.mape ?? null) : null;
  return { result, train, holdout, simulated, score, trainScore, holdoutMape };
}
