/**
 * Pool-thread entry (Piscina `filename`) of the accuracy bench's fit of one disaggregated
 * deployment on its lowest load points (`--disagg-only --fitted`).
 *
 * Four parameters, each a physical knob the zero-shot replay gets wrong by a deployment-wide
 * amount: the prefill pool's pass-time scale (how fast prompts are prefilled: TTFT), the decode
 * pool's fixed and per-batch scales (ITL at light load, and how it grows with the batch), and
 * the frontend's fixed delay (a constant in every TTFT). A pass-time scale k divides the roofline
 * shares (compute, memory, attention, link, and the experts' share `moe`, which is the most of a
 * large MoE model's decode pass through the touched experts' weights; each product capped at 1)
 * and multiplies the host costs
 * (collectives, pass overhead, per request, per layer), so every pass takes about k times as
 * long. On the decode pool the fixed scale takes the costs every pass pays whatever its batch
 * (the collectives' latency, the pass overhead, the per-layer launches) and the per-batch scale
 * the rest (the shares, which set the weight, expert and KV reads, and the cost per request):
 * the touched experts' weights, which grow with the batch, are most of a large MoE model's decode
 * pass. They are fitted by Levenberg-Marquardt (`ml-levenberg-marquardt`) over their logarithms
 * to the log ratios of predicted to measured TTFT avg and ITL avg at the
 * training points, each evaluation a full replay of every training point; then every point of
 * the deployment is replayed with them. A point is resolved once (`resolveDisaggPoint`); an
 * evaluation swaps in only its pools' timing and the frontend's costs (`swappedRun`), as
 * src/calibrate/timing-swap.ts does for aggregated fits: test/disagg-fit.test.ts checks that the
 * metrics equal a fresh resolution's.
 */
import { levenbergMarquardt } from 'ml-levenberg-marquardt';
import { measuredPointConfig, type MeasuredPoint } from '../src/calibrate/catalog-calibration.js';
import type { SimLoadOptions } from '../src/calibrate/sim-load.js';
import type { EfficiencyFactors } from '../src/catalog/efficiency.js';
import { frontendOf } from '../src/config/deployment.js';
import { resolveRun, timingSpec } from '../src/config/resolve.js';
import { roleOf } from '../src/config/roles.js';
import type { RunConfig } from '../src/config/types.js';
import type { ResolvedRun } from '../src/core/run.js';
import { buildSummary } from '../src/core/report.js';
import { Simulation } from '../src/core/simulation.js';

export interface DisaggFitTask {
  /** Every point of one deployment, by concurrency; the first `train` are fitted. */
  points: MeasuredPoint[];
  train: number;
  /** The factors of its zero-shot replay (the fit's start). */
  factors: EfficiencyFactors;
  load: SimLoadOptions;
}

export interface DisaggFitResult {
  prefillScale: number;
  decodeFixedScale: number;
  decodeBatchScale: number;
  frontendMs: number;
  iterations: number;
  /** Every point's predicted TTFT avg and ITL avg (ms) at the fitted parameters. */
  predicted: Array<{ ttftMs: number; itlMs: number }>;
}

const SHARES = ['compute', 'memory', 'attention', 'link', 'moe'] as const;
const HOST_COSTS = ['collective_us', 'pass_overhead_ms', 'per_request_us', 'per_layer_us', 'layer_floor_us'] as const;
/** The host costs a pass pays whatever its batch. */
const FIXED_COSTS = ['collective_us', 'pass_overhead_ms', 'per_layer_us', 'layer_floor_us'] as const;
/**
 * The scales stay within [1/5, 5] of the zero-shot pass times; the frontend delay within [0.1,
 * 1,000] ms (the shipped table's per-GPU values span 33-285 ms: a longer delay would absorb what
 * the pools should carry).
 */
const LOG_SCALE_BOUND = Math.log(5);
const LOG_FRONTEND = { min: Math.log(0.1), max: Math.log(1000) };

/** The factors with every pass about `k` times as long: shares divided by k (at most 1), host costs times k. */
export function scaledFactors(factors: EfficiencyFactors, k: number): EfficiencyFactors {
  const out = { ...factors };
  for (const name of SHARES) out[name] = Math.min(1, factors[name] / k);
  for (const name of HOST_COSTS) out[name] = factors[name] * k;
  return out;
}

/**
 * A point's config with the prefill pool's passes `x[0]` times as long, the decode pool's fixed
 * costs `x[1]` times and its per-batch costs `x[2]` times as large, and a frontend delay of `x[3]` ms.
 */
export function fittedPointConfig(p: MeasuredPoint, factors: EfficiencyFactors, load: SimLoadOptions, x: readonly number[]): RunConfig {
  return withScales(measuredPointConfig(p, factors, load), factors, x);
}

/** `config` with its pools' timing set for the parameters `x` (see `fittedPointConfig`); edited in place. */
function withScales(config: RunConfig, factors: EfficiencyFactors, x: readonly number[]): RunConfig {
  const [kp, kd, kb, frontendMs] = x;
  const decode = scaledFactors(factors, kb);
  for (const name of FIXED_COSTS) decode[name] = factors[name] * kd;
  roleOf(config.engine, 'prefill').timing = { type: 'roofline', efficiency: { ...scaledFactors(factors, kp), frontend_ms: frontendMs } };
  roleOf(config.engine, 'decode').timing = { type: 'roofline', efficiency: { ...decode, frontend_ms: frontendMs } };
  return config;
}

/** A measured point resolved once: its config and run at the zero-shot parameters. */
export interface ResolvedDisaggPoint {
  config: RunConfig;
  run: ResolvedRun;
}

export function resolveDisaggPoint(p: MeasuredPoint, factors: EfficiencyFactors, load: SimLoadOptions): ResolvedDisaggPoint {
  const config = fittedPointConfig(p, factors, load, [1, 1, 1, factors.frontend_ms]);
  return { config, run: resolveRun(config, null) };
}

/**
 * The point's run at the parameters `x`: each pool's timing and the frontend's costs as the config
 * layer works them out from the config with only its timing blocks changed (`timingSpec`,
 * `frontendOf`); the rest of the resolved run, which no timing block touches, shared.
 */
export function swappedRun(point: ResolvedDisaggPoint, factors: EfficiencyFactors, x: readonly number[]): ResolvedRun {
  const config = withScales(point.config, factors, x);
  const { engine } = config;
  const frontend = frontendOf({ engine });
  return {
    ...point.run,
    pools: point.run.pools.map((pool) => {
      if (pool.role !== 'prefill' && pool.role !== 'decode') return pool;
      const role = roleOf(engine, pool.role);
      return { ...pool, timing: timingSpec(role.timing, { engine, role }) };
    }),
    frontendBaseMs: frontend.baseMs,
    frontendPerTokenMs: frontend.perInputUs / 1e3,
    frontendPerInflightMs: frontend.perInflightUs / 1e3,
  };
}

/** TTFT avg and ITL avg (ms) of one replay. */
export function replayMetrics(config: RunConfig): { ttftMs: number; itlMs: number } {
  return runMetrics(resolveRun(config, null));
}

/** TTFT avg and ITL avg (ms) of one resolved run. */
export function runMetrics(run: ResolvedRun): { ttftMs: number; itlMs: number } {
  const result = new Simulation(run, {}).run();
  const summary = buildSummary(run, result);
  result.gaps.release();
  return { ttftMs: summary.metrics.time_to_first_token?.avg ?? NaN, itlMs: summary.metrics.inter_token_latency?.avg ?? NaN };
}

export default function disaggFitTask(task: DisaggFitTask): DisaggFitResult {
  const { points, factors, load } = task;
  const train = points.slice(0, task.train);
  const resolved = points.map((p) => resolveDisaggPoint(p, factors, load));
  const predict = (list: readonly MeasuredPoint[], x: readonly number[]) =>
    list.map((_, i) => runMetrics(swappedRun(resolved[i], factors, x.map(Math.exp))));
  // Residuals: log(predicted / measured) of TTFT then ITL at each training point; the data are 0.
  const n = 2 * train.length;
  const logRatios = (x: readonly number[]): number[] => {
    const out: number[] = [];
    predict(train, x).forEach((q, i) => {
      out.push(Math.log(q.ttftMs / train[i].measured.ttftMs), Math.log(q.itlMs / train[i].measured.itlMs));
    });
    return out.map((v) => (Number.isFinite(v) ? v : 10));
  };
  const x0 = [0, 0, 0, Math.log(Math.min(Math.max(factors.frontend_ms, 0.1), 1000))];
  const result = levenbergMarquardt(
    { x: Array.from({ length: n }, (_, i) => i), y: new Array<number>(n).fill(0) },
    (x) => {
      const r = logRatios(x);
      return (i) => r[i];
    },
    {
      initialValues: x0,
      // A 5 % step in log space: wide enough to see past the small jumps reordered events put in
      // the metrics.
      gradientDifference: 0.05,
      damping: 0.01,
      maxIterations: 20,
      errorTolerance: 1e-7,
      minValues: [-LOG_SCALE_BOUND, -LOG_SCALE_BOUND, -LOG_SCALE_BOUND, LOG_FRONTEND.min],
      maxValues: [LOG_SCALE_BOUND, LOG_SCALE_BOUND, LOG_SCALE_BOUND, LOG_FRONTEND.max],
    },
  );
  const x = result.parameterValues;
  return {
    prefillScale: Math.exp(x[0]),
    decodeFixedScale: Math.exp(x[1]),
    decodeBatchScale: Math.exp(x[2]),
    frontendMs: Math.exp(x[3]),
    iterations: result.iterations,
    predicted: predict(points, x),
  };
}
