/**
 * The engine fit with physics (`calibrate engine --form roofline`), the physics form of
 * `fit-form.ts`: the efficiency factors of one deployment, each held near the catalog's value
 * for its GPU and backend by a prior, fitted to the training points; then judged by the held-out
 * protocol (`held-out.ts`: every measured point replayed with them, the held-out ones scored).
 * With ten factors and a prior on each, three load points pin them down where five free linear
 * coefficients could not (docs/calibration.md, "Two forms").
 *
 * Rounds: replay the training points with the current factors (each point resolved once, the
 * factors' timing swapped in: `timing-swap.ts`) and record their trajectories, fit the factors on
 * the trajectories (`catalog-fit.ts`), again.
 */
import { availableParallelism } from 'node:os';
import { effectiveEfficiency, deploymentOf } from '../config/deployment.js';
import type { RunConfig } from '../config/types.js';
import type { Deployment } from '../catalog/deployment.js';
import { EFFICIENCY_NAMES, type EfficiencyFactors } from '../catalog/efficiency.js';
import { metricValue, type PointKey, type ScorePoint } from '../score/points.js';
import { PointPool } from '../sweep/pool.js';
import { TrajectoryPool } from './catalog-calibration.js';
import {
  FACTOR_BOUNDS,
  factorTransform,
  fitByRounds,
  isShare,
  ParameterLayout,
  parameterInformation,
  toTransformed,
  type FitPoint,
} from './catalog-fit.js';
import type { FitForm } from './fit-form.js';
import { runHeldOut, type HeldOutInput, type HeldOutScore } from './held-out.js';
import { resolvePoint, rooflineSwap, swapTiming } from './timing-swap.js';
import { roleOf } from '../config/roles.js';

/**
 * Prior standard deviations in the fit's transformed space: shares of a peak (logit) and the
 * ratios of one peak to another (log: the FP8 and FP4 peaks' shares against the dense one, the
 * expert kernels' against the dense GEMMs), which kernels reach alike on any model; costs (log:
 * host and client costs, which differ by engine version and serving stack by factors of several).
 */
export const DEPLOYMENT_PRIOR_SD = { share: 0.5, ratio: 0.5, cost: 1.5 } as const;

const RATIOS = new Set<string>(['fp8_compute', 'fp4_compute', 'moe']);

/** The prior standard deviation of one factor in a deployment fit. */
export function deploymentPriorSd(name: (typeof EFFICIENCY_NAMES)[number]): number {
  return isShare(name) ? DEPLOYMENT_PRIOR_SD.share : RATIOS.has(name) ? DEPLOYMENT_PRIOR_SD.ratio : DEPLOYMENT_PRIOR_SD.cost;
}

/**
 * Noise of a measured mean, as a standard deviation of its log: two runs of one load point differ
 * by a few percent in TTFT avg and ITL avg. The log errors are divided by it, so that a 20 %
 * miss at a training point (4 noise units) outweighs moving a factor by one prior standard
 * deviation; unscaled, the priors held every factor at the catalog's value.
 */
export const MEASUREMENT_NOISE = 0.05;

/**
 * A factor is held at the catalog's value when the training points tell less of it than this
 * share of what the prior does (posterior standard deviation above HELD_SHRINK x the prior's):
 * moving it would only follow the noise.
 */
export const HELD_SHRINK = 0.9;

/** One factor of a physics fit: its value, the catalog's, and how well the points pin it down. */
export interface FactorReport {
  value: number;
  catalog: number;
  /** Relative movement from the catalog's value, %. */
  movedPct: number;
  /** Standard error of the fitted value, % of the value (posterior, correlations included). */
  sePct: number;
  /** Whether the points could not pin it down and it was held at the catalog's value. */
  held: boolean;
}

/** The measured points and training indices (`HeldOutInput`), and the physics form's options. */
export interface RooflineCalibrationInput extends HeldOutInput {
  rounds?: number;
  threads?: number;
  pointPool?: PointPool;
  trajectoryPool?: TrajectoryPool;
}

/** A physics fit and what the held-out protocol measured of it (`HeldOutScore`). */
export interface RooflineCalibration extends HeldOutScore {
  form: 'roofline';
  factors: EfficiencyFactors;
  /** The catalog's factors for the GPU and backend (the priors' centres) and where they came from. */
  catalogFactors: EfficiencyFactors;
  catalogSource: string;
  rounds: Array<{ trainMapeReplayed: { ttft: number; itl: number }; iterations: number }>;
  /** Per factor (EFFICIENCY_NAMES): movement, standard error, held or not. */
  report: Record<string, FactorReport>;
  replays: number;
  wallMs: number;
}

/** The base config with its timing set to roofline with these factors (every one written). */
export function withFactors(base: RunConfig, factors: EfficiencyFactors): RunConfig {
  const config = structuredClone(base);
  roleOf(config.engine, 'aggregated').timing = { type: 'roofline', efficiency: { ...factors } };
  config.engine.frontend = { base_ms: 'auto', per_input_us: 'auto', per_inflight_us: 'auto' };
  return config;
}

function keyOf(point: ScorePoint): PointKey {
  return point.key;
}

/** What the physics form's fit returns: the factors, each one's report, the rounds and the replays they took. */
export type PhysicsFit = Pick<RooflineCalibration, 'factors' | 'rounds' | 'report' | 'replays'>;

/**
 * The physics form (`FitForm`): the efficiency factors of one deployment (EFFICIENCY_NAMES), in
 * the catalog fit's transforms (`factorTransform`: logit for shares, log for costs, bounded
 * logit for the two frontend costs measurements bound), each with a prior at the catalog's value
 * (`deploymentPriorSd`); fitted by rounds of trajectory recordings on the trajectory pool and a
 * fit on the trajectories (`fitByRounds`). A factor the first round's trajectories barely inform
 * is held at the catalog's value.
 */
export function physicsForm(
  input: Pick<RooflineCalibrationInput, 'base' | 'baseDir' | 'metrics' | 'load' | 'rounds'>,
  catalog: EfficiencyFactors,
  deployment: Deployment,
): FitForm<PhysicsFit> {
  const form: FitForm<PhysicsFit> = {
    name: 'roofline',
    charts: false,
    parameters: () =>
      EFFICIENCY_NAMES.map((name) => ({
        name,
        centre: catalog[name],
        transform: factorTransform(name),
        priorSd: deploymentPriorSd(name),
        free: true,
      })),
    swap(values, point) {
      const factors = { ...catalog };
      EFFICIENCY_NAMES.forEach((name, j) => (factors[name] = values[j]));
      return rooflineSwap(point.config, factors);
    },
    async fit(train, pools) {
      if (pools.trajectory === undefined) throw new Error('the physics form records trajectories on a trajectory pool');
      const trajectories = pools.trajectory;
      const ttftMetric = input.metrics.find((m) => m.id === 'time_to_first_token.avg');
      const itlMetric = input.metrics.find((m) => m.id === 'inter_token_latency.avg');
      const layout = new ParameterLayout([], [], []);
      const centre = toTransformed(catalog);
      const sd = EFFICIENCY_NAMES.map((name) => deploymentPriorSd(name));
      const rounds: RooflineCalibration['rounds'] = [];
      let replays = 0;
      // Each training point resolved once; a round records it with the round's factors swapped in.
      const resolved = train.map((p) => resolvePoint(withFactors(input.base, catalog), input.baseDir, keyOf(p), null, input.load));
      const record = (x: readonly number[]): Promise<FitPoint[]> => {
        const current = layout.factors(x, '', '');
        return Promise.all(
          train.map(async (p, i) => {
            const trajectory = await trajectories.run({
              run: swapTiming(
                resolved[i].prepared.run,
                form.swap(
                  EFFICIENCY_NAMES.map((name) => current[name]),
                  resolved[i],
                ),
              ),
            });
            replays++;
            // A metric the training point does not have is matched to the prediction itself (no pull).
            const ttft = (ttftMetric && metricValue(p, ttftMetric)) || null;
            const itl = (itlMetric && metricValue(p, itlMetric)) || null;
            return {
              label: 'train',
              family: '',
              model: deployment.model.id,
              hardware: deployment.hardware.id,
              backend: deployment.backend,
              concurrency: typeof p.key.concurrency === 'number' ? p.key.concurrency : 0,
              deployment,
              measured: { ttftMs: ttft ?? trajectory.ttftMs ?? 1, itlMs: itl ?? trajectory.itlMs ?? 1 },
              trajectory,
              recordedWith: current,
            };
          }),
        );
      };
      let heldSet: ReadonlySet<number> = new Set();
      const result = await fitByRounds(record, layout, {
        start: centre,
        rounds: input.rounds ?? 3,
        prior: { centre, sd },
        robustScale: Infinity,
        noise: MEASUREMENT_NOISE,
        held: (startPoints) => {
          const info = parameterInformation(startPoints, layout, centre, sd, MEASUREMENT_NOISE);
          heldSet = new Set(info.flatMap((v, j) => (v.posteriorSd > HELD_SHRINK * v.priorSd ? [j] : [])));
          return heldSet;
        },
        log: (r) => {
          let ttftErr = 0;
          let itlErr = 0;
          for (const p of r.points) {
            ttftErr += Math.abs((p.trajectory.ttftMs ?? 0) / p.measured.ttftMs - 1);
            itlErr += Math.abs((p.trajectory.itlMs ?? 0) / p.measured.itlMs - 1);
          }
          rounds.push({
            trainMapeReplayed: { ttft: (100 * ttftErr) / r.points.length, itl: (100 * itlErr) / r.points.length },
            iterations: r.iterations,
          });
        },
      });
      const factors = layout.factors(result.x, '', '');
      const info = parameterInformation(result.points, layout, result.x, sd, MEASUREMENT_NOISE);
      const report: Record<string, FactorReport> = {};
      EFFICIENCY_NAMES.forEach((name, j) => {
        const value = factors[name];
        // From the transformed space to the value: d log(value) = sd for a cost, (1 - share) sd for a share (logit).
        const bound = FACTOR_BOUNDS[name];
        const slope = bound !== undefined ? 1 - value / bound : isShare(name) ? 1 - value : 1;
        report[name] = {
          value,
          catalog: catalog[name],
          movedPct: (value / catalog[name] - 1) * 100,
          sePct: heldSet.has(j) ? 0 : info[j].posteriorSd * slope * 100,
          held: heldSet.has(j),
        };
      });
      return { result: { factors, rounds, report, replays }, replay: { base: withFactors(input.base, factors), constants: null } };
    },
  };
  return form;
}

export async function calibrateRoofline(input: RooflineCalibrationInput): Promise<RooflineCalibration> {
  const started = performance.now();
  const role = roleOf(input.base.engine, 'aggregated');
  const { deployment } = deploymentOf(input.base.engine, role);
  if (deployment === null) throw new Error('the physics form needs engine.model and engine.hardware in the catalog');
  const catalog = effectiveEfficiency(input.base.engine, role, deployment.hardware.id);
  const trajectories = input.trajectoryPool ?? new TrajectoryPool(input.threads);
  const points = input.pointPool ?? new PointPool({ poolThreads: input.threads ?? availableParallelism() });
  try {
    const form = physicsForm(input, catalog.factors, deployment);
    const { result, ...scored } = await runHeldOut(form, input, { point: points, trajectory: trajectories });
    return {
      form: 'roofline',
      factors: result.factors,
      catalogFactors: catalog.factors,
      catalogSource: catalog.source,
      ...scored,
      rounds: result.rounds,
      report: result.report,
      replays: result.replays + scored.simulated.length,
      wallMs: performance.now() - started,
    };
  } finally {
    if (input.trajectoryPool === undefined) await trajectories.destroy();
    if (input.pointPool === undefined) await points.destroy();
  }
}
