/**
 * The catalog fit: the efficiency factors of every (GPU, backend) pair from measured load points
 * of many deployments at once, each point predicted from its model's architecture and its GPU's
 * datasheet. Factors are shared, not per deployment: for each factor k,
 *   z_k(h, b) = g_k + a_k(h) + c_k(b) + e_k(h, b)
 * in a transformed space (logit for shares, log for costs), with Gaussian priors pulling the GPU
 * effects a, the backend effects c and their interactions e towards 0 (so a pair measured on one
 * model stays close to what its GPU and backend say elsewhere) and g towards the unfitted
 * defaults. The loss is a Cauchy loss of the log errors of TTFT avg and ITL avg over the points
 * (quadratic for small errors, logarithmic for large ones, so a few points the model cannot
 * reach do not pull every factor), plus the priors, minimized by Levenberg-Marquardt (iteratively
 * reweighted) on predictions from fixed trajectories (`trajectory.ts`); the caller alternates
 * replays and fits.
 */
import { Matrix, solve } from 'ml-matrix';
import { createRooflinePassTime } from '../core/roofline.js';
import { rooflineCoefficients, type Deployment } from '../catalog/deployment.js';
import { EFFICIENCY_NAMES, UNFITTED_EFFICIENCY, type EfficiencyFactors } from '../catalog/efficiency.js';
import { fromSearchSpace, toSearchSpace, type ParameterTransform } from './fit-form.js';
import { BIN, BIN_FIELDS, type Trajectory } from './trajectory.js';

type FactorName = (typeof EFFICIENCY_NAMES)[number];
const FACTORS = EFFICIENCY_NAMES;
const K = FACTORS.length;
const SHARES = new Set<FactorName>(['compute', 'memory', 'link', 'attention']);

/**
 * Factors held within what real measurements show (value = bound x logistic(z)): a tokenizer
 * turns text into tokens at no more than 2 us a token (Hugging Face's fast tokenizers), and a
 * real AIPerf client measured 0.113 ms per other request in flight (docs/client-path.md); the
 * fit cannot grow them into stand-ins for queueing the engine model does not produce.
 */
export const FACTOR_BOUNDS: Partial<Record<FactorName, number>> = { frontend_us_per_token: 2, frontend_us_per_inflight: 113 };

/** Prior standard deviations (transformed space) of the global level, GPU, backend, pair and version-family effects. */
export const FIT_PRIORS = { global: 1.5, hardware: 0.5, backend: 0.5, pair: 0.3, family: 0.3 } as const;

/**
 * How far each factor may stray, as multipliers of FIT_PRIORS (transformed space): the kernels'
 * shares of the datasheet peaks are physics, close to what each GPU's kernels reach whatever the
 * model (HBM reads reach 80-90 % of the datasheet's bandwidth on every engine), so their levels
 * and effects are held closer than the host and client costs, which differ by engine, version
 * and serving stack by factors of several.
 */
export const FACTOR_PRIOR_SCALE: Readonly<Record<FactorName, number>> = {
  compute: 0.5,
  memory: 0.3,
  attention: 0.5,
  fp8_compute: 0.3,
  fp4_compute: 0.3,
  link: 0.6,
  collective_us: 0.8,
  pass_overhead_ms: 1,
  per_request_us: 1,
  per_layer_us: 1,
  layer_floor_us: 1,
  moe: 0.6,
  frontend_ms: 1,
  frontend_us_per_token: 1,
  frontend_us_per_inflight: 1,
};

/**
 * Scale of the Cauchy loss on log errors of the catalog fit: a point off by a factor e (172 %)
 * weighs half as much as a close one, so the few points the model cannot reach (a measured TTFT
 * ten times the prediction) do not pull every factor. Infinity = least squares.
 */
export const ROBUST_SCALE = 1;

/**
 * How a factor moves in the fit (`fit-form.ts`), here and in a deployment's physics fit: a bounded
 * logit below its bound (FACTOR_BOUNDS), a logit for a share, a log for a cost.
 */
export function factorTransform(name: FactorName): ParameterTransform {
  const bound = FACTOR_BOUNDS[name];
  if (bound !== undefined) return { type: 'bounded', bound };
  return SHARES.has(name) ? { type: 'logit' } : { type: 'log' };
}
const TRANSFORMS = FACTORS.map(factorTransform);
const toZ = (j: number, value: number): number => toSearchSpace(TRANSFORMS[j], value);
const fromZ = (j: number, z: number): number => fromSearchSpace(TRANSFORMS[j], z);

export interface FitPoint {
  /** Deployment label and the model it belongs to (for leave-one-model-out). */
  label: string;
  model: string;
  hardware: string;
  backend: string;
  /** The backend's version family (major.minor, `0.19`); '' when unknown. */
  family: string;
  concurrency: number;
  deployment: Deployment;
  measured: { ttftMs: number; itlMs: number };
  trajectory: Trajectory;
  /** The factors the trajectory was recorded with. */
  recordedWith: EfficiencyFactors;
}

/** Factors a GPU has from measurements of its own, not fitted: GPU id to factor values. */
export type MeasuredFactors = Readonly<Record<string, Partial<EfficiencyFactors>>>;

/**
 * Where each effect sits in the parameter vector: the global level, one block per GPU, per
 * backend, per (GPU, backend) pair measured and per (backend, version family) measured. A factor
 * measured for a GPU (`measured`) takes that value on the GPU whatever the parameters: the fit
 * does not move it there.
 */
export class ParameterLayout {
  readonly hardware: string[];
  readonly backends: string[];
  readonly pairs: string[];
  /** `backend|family` of the families measured. */
  readonly families: string[];
  readonly measured: MeasuredFactors;
  readonly size: number;

  constructor(
    hardware: readonly string[],
    backends: readonly string[],
    pairs: readonly string[],
    families: readonly string[] = [],
    measured: MeasuredFactors = {},
  ) {
    this.hardware = [...hardware].sort();
    this.backends = [...backends].sort();
    this.pairs = [...pairs].sort();
    this.families = [...families].sort();
    this.measured = measured;
    this.size = K * (1 + this.hardware.length + this.backends.length + this.pairs.length + this.families.length);
  }

  static of(
    points: readonly { hardware: string; backend: string; family?: string }[],
    hardware: readonly string[],
    backends: readonly string[],
    measured: MeasuredFactors = {},
  ): ParameterLayout {
    return new ParameterLayout(
      hardware,
      backends,
      [...new Set(points.map((p) => `${p.hardware}|${p.backend}`))],
      [...new Set(points.filter((p) => (p.family ?? '') !== '').map((p) => `${p.backend}|${p.family}`))],
      measured,
    );
  }

  /** Offsets of the five blocks a (GPU, backend, family) adds up (-1 where absent). */
  blocks(hardware: string, backend: string, family = ''): [number, number, number, number, number] {
    const h = this.hardware.indexOf(hardware);
    const b = this.backends.indexOf(backend);
    const p = this.pairs.indexOf(`${hardware}|${backend}`);
    const f = family === '' ? -1 : this.families.indexOf(`${backend}|${family}`);
    const base = K * (1 + this.hardware.length);
    const pairBase = base + K * this.backends.length;
    const familyBase = pairBase + K * this.pairs.length;
    return [0, h < 0 ? -1 : K * (1 + h), b < 0 ? -1 : base + K * b, p < 0 ? -1 : pairBase + K * p, f < 0 ? -1 : familyBase + K * f];
  }

  /** Prior standard deviation of parameter i: its block's, scaled by its factor's (FACTOR_PRIOR_SCALE). */
  priorSd(i: number): number {
    const block = Math.floor(i / K);
    const scale = FACTOR_PRIOR_SCALE[FACTORS[i % K]];
    if (block === 0) return FIT_PRIORS.global * scale;
    if (block <= this.hardware.length) return FIT_PRIORS.hardware * scale;
    if (block <= this.hardware.length + this.backends.length) return FIT_PRIORS.backend * scale;
    if (block <= this.hardware.length + this.backends.length + this.pairs.length) return FIT_PRIORS.pair * scale;
    return FIT_PRIORS.family * scale;
  }

  /** The parameter vector of the unfitted defaults (every effect 0). */
  start(): number[] {
    const x = new Array<number>(this.size).fill(0);
    FACTORS.forEach((name, k) => (x[k] = toZ(k, UNFITTED_EFFICIENCY[name])));
    return x;
  }

  factors(x: readonly number[], hardware: string, backend: string, family = ''): EfficiencyFactors {
    const blocks = this.blocks(hardware, backend, family);
    const out = {} as EfficiencyFactors;
    FACTORS.forEach((name, k) => {
      let z = 0;
      for (const offset of blocks) if (offset >= 0) z += x[offset + k];
      out[name] = fromZ(k, z);
    });
    const measured = this.measured[hardware];
    if (measured !== undefined) Object.assign(out, measured);
    return out;
  }
}

/** Weighted pass-time sums of a trajectory under factors: sum u tau and sum w tau. */
function passSums(point: FitPoint, factors: EfficiencyFactors): { ttft: number; itl: number } {
  const passTime = createRooflinePassTime(rooflineCoefficients(point.deployment, factors));
  const bins = point.trajectory.bins;
  const view = {
    prefillTokens: 0,
    prefillPairs: 0,
    decodeRequests: 0,
    decodeKvTokens: 0,
    emittedTokens: 0,
    workerTokens: 0,
    kvBlocksUsed: 0,
    kvBlocksTotal: 0,
  };
  let ttft = 0;
  let itl = 0;
  for (let i = 0; i < bins.length; i += BIN_FIELDS) {
    view.prefillTokens = bins[i + BIN.prefill];
    view.decodeRequests = bins[i + BIN.decode];
    view.prefillPairs = bins[i + BIN.pairs];
    view.decodeKvTokens = bins[i + BIN.kv];
    view.emittedTokens = bins[i + BIN.emitted];
    view.workerTokens = bins[i + BIN.workerTokens];
    const ms = passTime(view);
    ttft += bins[i + BIN.ttftWeight] * ms;
    itl += bins[i + BIN.itlWeight] * ms;
  }
  return { ttft, itl };
}

const baseSums = new WeakMap<FitPoint, { ttft: number; itl: number }>();

/** TTFT avg and ITL avg of a point under factors, with its schedule held at its trajectory. */
export function predictPoint(point: FitPoint, factors: EfficiencyFactors): { ttftMs: number; itlMs: number } {
  let base = baseSums.get(point);
  if (base === undefined) {
    base = passSums(point, point.recordedWith);
    baseSums.set(point, base);
  }
  const now = passSums(point, factors);
  const ttft0 = point.trajectory.ttftMs ?? 0;
  const itl0 = point.trajectory.itlMs ?? 0;
  return {
    ttftMs:
      ttft0 +
      (now.ttft - base.ttft) +
      (factors.frontend_ms - point.recordedWith.frontend_ms) +
      ((factors.frontend_us_per_token - point.recordedWith.frontend_us_per_token) * point.trajectory.meanPromptTokens) / 1000 +
      ((factors.frontend_us_per_inflight - point.recordedWith.frontend_us_per_inflight) * point.trajectory.meanInflightAtSend) / 1000,
    itlMs: itl0 + (now.itl - base.itl),
  };
}

/** Log errors of a point (TTFT, ITL); a prediction at or below 0 counts as 1 us. */
export function logErrors(point: FitPoint, factors: EfficiencyFactors): [number, number] {
  const p = predictPoint(point, factors);
  return [Math.log(Math.max(p.ttftMs, 1e-3) / point.measured.ttftMs), Math.log(Math.max(p.itlMs, 1e-3) / point.measured.itlMs)];
}

export interface FactorFit {
  layout: ParameterLayout;
  x: number[];
  /** Cauchy loss of the log errors over the points, and with the priors. */
  dataLoss: number;
  loss: number;
  iterations: number;
}

/**
 * Levenberg-Marquardt on the parameter vector (numerical derivatives; a point depends only on the
 * global block and its pair's GPU, backend and interaction blocks, so each derivative recomputes
 * only the points it touches).
 */
export function fitFactors(
  points: readonly FitPoint[],
  layout: ParameterLayout,
  options: {
    start?: readonly number[];
    maxIterations?: number;
    tolerance?: number;
    /** Centre and standard deviations of the priors (default: the unfitted defaults, FIT_PRIORS). */
    prior?: { centre: readonly number[]; sd: readonly number[] };
    /** Scale of the Cauchy loss (default ROBUST_SCALE; Infinity: least squares). */
    robustScale?: number;
    /**
     * Standard deviation of a measured value's log (its noise, default 1): the data residuals are
     * divided by it, so that they weigh against the priors as evidence of that precision.
     */
    noise?: number;
    /** Parameters held where they start (indices): the points cannot pin them down. */
    held?: ReadonlySet<number>;
  } = {},
): FactorFit {
  const n = layout.size;
  const prior = options.prior?.centre ?? layout.start();
  const sd = options.prior?.sd ?? Array.from({ length: n }, (_, i) => layout.priorSd(i));
  const scale = options.robustScale ?? ROBUST_SCALE;
  const robust = (v: number) => (Number.isFinite(scale) ? scale * scale * Math.log1p((v / scale) ** 2) : v * v);
  const noise = options.noise ?? 1;
  const held = options.held ?? new Set<number>();
  let x = [...(options.start ?? prior)];
  const maxIterations = options.maxIterations ?? 40;
  const tolerance = options.tolerance ?? 1e-6;
  const blocksOf = points.map((p) => layout.blocks(p.hardware, p.backend, p.family));

  const residualsAt = (params: readonly number[]): Float64Array => {
    const r = new Float64Array(points.length * 2);
    points.forEach((p, i) => {
      const [t, l] = logErrors(p, layout.factors(params, p.hardware, p.backend, p.family));
      r[2 * i] = t / noise;
      r[2 * i + 1] = l / noise;
    });
    return r;
  };
  const priorResiduals = (params: readonly number[]) => params.map((v, i) => (v - prior[i]) / sd[i]);
  const lossOf = (r: Float64Array, params: readonly number[]) => {
    let data = 0;
    for (const v of r) data += robust(v);
    let total = data;
    for (const v of priorResiduals(params)) total += v * v;
    return { data, total };
  };

  let r = residualsAt(x);
  let loss = lossOf(r, x);
  let lambda = 1e-2;
  let iterations = 0;
  let converged = false;
  const h = 1e-4;
  while (!converged && iterations < maxIterations) {
    iterations++;
    // Iteratively reweighted: each residual's weight is the Cauchy loss's at the current errors.
    const weight = Array.from(r, (v) => (Number.isFinite(scale) ? 1 / (1 + (v / scale) ** 2) : 1));
    // J^T J and J^T r, accumulated point by point over the parameters each point depends on.
    const jtj = Matrix.zeros(n, n);
    const jtr = new Float64Array(n);
    points.forEach((p, i) => {
      const idx: number[] = [];
      for (const offset of blocksOf[i]) if (offset >= 0) for (let k = 0; k < K; k++) idx.push(offset + k);
      const grads: [number, number][] = idx.map((j) => {
        const saved = x[j];
        x[j] = saved + h;
        const [t, l] = logErrors(p, layout.factors(x, p.hardware, p.backend, p.family));
        x[j] = saved;
        return [(t / noise - r[2 * i]) / h, (l / noise - r[2 * i + 1]) / h];
      });
      const wt = weight[2 * i];
      const wl = weight[2 * i + 1];
      for (let a = 0; a < idx.length; a++) {
        jtr[idx[a]] += wt * grads[a][0] * r[2 * i] + wl * grads[a][1] * r[2 * i + 1];
        for (let b = 0; b < idx.length; b++) {
          jtj.set(idx[a], idx[b], jtj.get(idx[a], idx[b]) + wt * grads[a][0] * grads[b][0] + wl * grads[a][1] * grads[b][1]);
        }
      }
    });
    const pr = priorResiduals(x);
    for (let j = 0; j < n; j++) {
      const w = 1 / sd[j];
      jtj.set(j, j, jtj.get(j, j) + w * w);
      jtr[j] += w * pr[j];
    }
    // A held parameter's row and column become the identity with no gradient: its step is 0.
    for (const j of held) {
      for (let k = 0; k < n; k++) {
        jtj.set(j, k, 0);
        jtj.set(k, j, 0);
      }
      jtj.set(j, j, 1);
      jtr[j] = 0;
    }
    let improved = false;
    for (let attempt = 0; attempt < 8; attempt++) {
      const a = jtj.clone();
      for (let j = 0; j < n; j++) a.set(j, j, a.get(j, j) * (1 + lambda) + 1e-12);
      const step = solve(a, Matrix.columnVector(Array.from(jtr, (v) => -v))).to1DArray();
      const trial = x.map((v, j) => v + step[j]);
      const rTrial = residualsAt(trial);
      const lTrial = lossOf(rTrial, trial);
      if (lTrial.total < loss.total) {
        const gain = loss.total - lTrial.total;
        x = trial;
        r = rTrial;
        loss = lTrial;
        lambda = Math.max(lambda / 3, 1e-7);
        improved = true;
        converged = gain < tolerance * Math.max(1, loss.total);
        break;
      }
      lambda *= 4;
    }
    if (!improved) converged = true;
  }
  return { layout, x, dataLoss: loss.data, loss: loss.total, iterations };
}

/** A factor set in the fit's transformed space (logit for shares, log for costs), in EFFICIENCY_NAMES order. */
export function toTransformed(factors: EfficiencyFactors): number[] {
  return FACTORS.map((name, k) => toZ(k, factors[name]));
}

/** Whether a factor is a share in (0, 1] (else a cost). */
export const isShare = (name: FactorName): boolean => SHARES.has(name);

/** One round of `fitByRounds`: the replayed loss after it, the step taken (0: none) and the points replayed at the factors kept. */
export interface FitRound {
  round: number;
  replayedLoss: number;
  accepted: boolean;
  step: number;
  iterations: number;
  points: readonly FitPoint[];
}

export interface FitRoundsOptions {
  start: readonly number[];
  rounds: number;
  prior?: { centre: readonly number[]; sd: readonly number[] };
  robustScale?: number;
  /** As in `fitFactors`. */
  noise?: number;
  /** As in `fitFactors`, or chosen from the points replayed at the start. */
  held?: ReadonlySet<number> | ((points: readonly FitPoint[]) => ReadonlySet<number>);
  /** Called after each round with its replayed loss and whether its step was taken. */
  log?: (round: FitRound) => void;
}

/**
 * Rounds of replays and fits: record every point's trajectory at the current factors, fit on the
 * trajectories, and take the fitted factors only if replaying at them lowers the loss the replays
 * themselves give (the fit's prediction holds near the schedule it was made on, not always at its
 * optimum); otherwise try half the step, then a quarter. Returns the best factors replayed and
 * their points.
 */
export async function fitByRounds(
  record: (x: readonly number[]) => Promise<FitPoint[]>,
  layout: ParameterLayout,
  options: FitRoundsOptions,
): Promise<{ x: number[]; points: FitPoint[]; loss: number; rounds: number }> {
  const scale = options.robustScale ?? ROBUST_SCALE;
  const noise = options.noise ?? 1;
  const prior = options.prior ?? { centre: layout.start(), sd: Array.from({ length: layout.size }, (_, i) => layout.priorSd(i)) };
  const replayedLoss = (points: readonly FitPoint[], x: readonly number[]) => {
    let loss = 0;
    for (const p of points) {
      for (const [sim, measured] of [
        [p.trajectory.ttftMs ?? 0, p.measured.ttftMs],
        [p.trajectory.itlMs ?? 0, p.measured.itlMs],
      ]) {
        const r = Math.log(Math.max(sim, 1e-3) / measured) / noise;
        loss += Number.isFinite(scale) ? scale * scale * Math.log1p((r / scale) ** 2) : r * r;
      }
    }
    x.forEach((v, i) => (loss += ((v - prior.centre[i]) / prior.sd[i]) ** 2));
    return loss;
  };
  let x = [...options.start];
  let points = await record(x);
  let loss = replayedLoss(points, x);
  const held = typeof options.held === 'function' ? options.held(points) : options.held;
  let rounds = 0;
  for (let round = 0; round < options.rounds; round++) {
    rounds++;
    const fit = fitFactors(points, layout, { start: x, prior, robustScale: scale, noise, ...(held ? { held } : {}) });
    let accepted = false;
    let step = 1;
    for (let attempt = 0; attempt < 3 && !accepted; attempt++, step /= 2) {
      const trial = x.map((v, i) => v + step * (fit.x[i] - v));
      const trialPoints = await record(trial);
      const trialLoss = replayedLoss(trialPoints, trial);
      if (trialLoss < loss) {
        x = trial;
        points = trialPoints;
        loss = trialLoss;
        accepted = true;
      }
    }
    options.log?.({ round, replayedLoss: loss, accepted, step: accepted ? step * 2 : 0, iterations: fit.iterations, points });
    if (!accepted) break;
  }
  return { x, points, loss, rounds };
}

/** What the points tell of each parameter, against what its prior says (`parameterInformation`). */
export interface ParameterInformation {
  /** Prior standard deviation (transformed space). */
  priorSd: number;
  /** Posterior standard deviation (transformed space): from (J^T J / noise^2 + prior precision)^-1. */
  posteriorSd: number;
  /** Information from the points alone over that of the prior (J^T J / noise^2 against 1 / sd^2, diagonal). */
  dataOverPrior: number;
}

/**
 * The Gauss-Newton information of the parameters at x: J of the log errors of every point (TTFT,
 * ITL) by central differences, scaled by the noise, with the priors' precision added; the
 * inverse's diagonal is each parameter's posterior variance (the standard error of the fit,
 * correlations with the other parameters included).
 */
export function parameterInformation(
  points: readonly FitPoint[],
  layout: ParameterLayout,
  x: readonly number[],
  sd: readonly number[],
  noise = 1,
): ParameterInformation[] {
  const n = layout.size;
  const h = 1e-4;
  const data = Matrix.zeros(n, n);
  const at = [...x];
  for (const p of points) {
    const idx: number[] = [];
    for (const offset of layout.blocks(p.hardware, p.backend, p.family)) if (offset >= 0) for (let k = 0; k < K; k++) idx.push(offset + k);
    const grads = idx.map((j) => {
      const saved = at[j];
      at[j] = saved + h;
      const up = logErrors(p, layout.factors(at, p.hardware, p.backend, p.family));
      at[j] = saved - h;
      const down = logErrors(p, layout.factors(at, p.hardware, p.backend, p.family));
      at[j] = saved;
      return [(up[0] - down[0]) / (2 * h * noise), (up[1] - down[1]) / (2 * h * noise)];
    });
    for (let a = 0; a < idx.length; a++)
      for (let b = 0; b < idx.length; b++)
        data.set(idx[a], idx[b], data.get(idx[a], idx[b]) + grads[a][0] * grads[b][0] + grads[a][1] * grads[b][1]);
  }
  const posterior = data.clone();
  for (let j = 0; j < n; j++) posterior.set(j, j, posterior.get(j, j) + 1 / (sd[j] * sd[j]));
  const covariance = solve(posterior, Matrix.eye(n, n));
  return Array.from({ length: n }, (_, j) => ({
    priorSd: sd[j],
    posteriorSd: Math.sqrt(Math.max(covariance.get(j, j), 0)),
    dataOverPrior: data.get(j, j) * sd[j] * sd[j],
  }));
}
