/**
 * The catalog fit's pieces: trajectories (the passes each request waited through) reproduce the
 * replay's metrics, predict a nearby replay to first order, and the fit recovers known factors
 * from points the replay itself produced.
 */
import { roleOf } from '../src/config/roles.js';
import { describe, expect, it } from 'vitest';
import {
  fitByRounds,
  ParameterLayout,
  parameterInformation,
  predictPoint,
  toTransformed,
  type FitPoint,
} from '../src/calibrate/catalog-fit.js';
import { deploymentPriorSd, MEASUREMENT_NOISE } from '../src/calibrate/roofline-calibration.js';
import { measuredFactors } from '../src/calibrate/catalog-calibration.js';
import { loadCatalog } from '../src/catalog/load.js';
import { EFFICIENCY_NAMES } from '../src/catalog/efficiency.js';
import { catalogBaseConfig } from '../src/calibrate/silicon-deployments.js';
import { pointConfig, resolveSimLoad } from '../src/calibrate/sim-load.js';
import { BIN, BIN_FIELDS, recordTrajectory } from '../src/calibrate/trajectory.js';
import { deploymentOf } from '../src/config/deployment.js';
import { loadRunConfigFromObject } from '../src/config/load.js';
import { UNFITTED_EFFICIENCY, type EfficiencyFactors } from '../src/catalog/efficiency.js';

const deployment = {
  modelPath: 'Qwen/Qwen3-8B',
  system: 'h100_sxm',
  backend: 'vllm',
  precision: 'bf16',
  tp: 1,
  attentionDp: 1,
  expert: 1,
  isl: 512,
  osl: 32,
};
const load = resolveSimLoad({ requestsPerSlot: 4 });

function pointOf(factors: EfficiencyFactors, concurrency: number, measured?: { ttftMs: number; itlMs: number }, d = deployment): FitPoint {
  const config = pointConfig(catalogBaseConfig(d, factors), { concurrency, isl: d.isl, osl: d.osl }, null, load);
  const trajectory = recordTrajectory(config);
  const found = deploymentOf(config.engine, roleOf(config.engine, 'aggregated')).deployment;
  if (found === null) throw new Error('not in the catalog');
  return {
    label: `${d.modelPath} ${d.system}`,
    model: d.modelPath,
    hardware: d.system,
    backend: d.backend,
    family: '',
    concurrency,
    deployment: found,
    measured: measured ?? { ttftMs: trajectory.ttftMs ?? 0, itlMs: trajectory.itlMs ?? 0 },
    trajectory,
    recordedWith: factors,
  };
}

describe('trajectories', () => {
  it('at concurrency 1 the weighted pass times are TTFT and ITL exactly (no idle engine, no frontend)', () => {
    const factors = { ...UNFITTED_EFFICIENCY, frontend_ms: 0, frontend_us_per_token: 0 };
    const config = pointConfig(catalogBaseConfig(deployment, factors), { concurrency: 1, isl: 512, osl: 32 }, null, load);
    const trajectory = recordTrajectory(config);
    const point = pointOf(factors, 1);
    // Re-evaluate every bin's pass time and weigh it: predictPoint with a zero baseline shows the sums.
    const doubled = predictPoint(point, { ...factors, pass_overhead_ms: factors.pass_overhead_ms + 1 });
    // One more ms per pass adds the pass counts: TTFT waits one prefill pass, ITL one pass per token.
    expect(doubled.ttftMs - (trajectory.ttftMs as number)).toBeCloseTo(1, 9);
    expect(doubled.itlMs - (trajectory.itlMs as number)).toBeCloseTo(1, 9);
    let u = 0;
    let w = 0;
    for (let i = 0; i < trajectory.bins.length; i += BIN_FIELDS) {
      u += trajectory.bins[i + BIN.ttftWeight];
      w += trajectory.bins[i + BIN.itlWeight];
    }
    expect(u).toBeCloseTo(1, 9);
    expect(w).toBeCloseTo(1, 9);
  });

  it('predicts a replay with slower passes to first order', () => {
    // (A longer frontend also changes how often a request finds the engine busy, which a fixed
    // schedule cannot see: the rounds of replays take care of that.)
    const factors = { ...UNFITTED_EFFICIENCY, frontend_ms: 5 };
    const other = { ...factors, memory: factors.memory * 0.9 };
    for (const concurrency of [2, 16]) {
      const predicted = predictPoint(pointOf(factors, concurrency), other);
      const actual = pointOf(other, concurrency).trajectory;
      expect(Math.abs(predicted.ttftMs / (actual.ttftMs as number) - 1)).toBeLessThan(0.03);
      expect(Math.abs(predicted.itlMs / (actual.itlMs as number) - 1)).toBeLessThan(0.03);
    }
  });
});

describe('factors a GPU has measured', () => {
  it('take their measured value on that GPU whatever the parameters, and leave other GPUs to the fit', () => {
    const layout = new ParameterLayout(['b200_sxm', 'h100_sxm'], ['vllm'], ['h100_sxm|vllm'], [], { h100_sxm: { link: 0.65 } });
    const x = layout.start();
    const j = EFFICIENCY_NAMES.indexOf('link');
    // Move the global link and both GPUs' link effects: only the unmeasured GPU follows.
    x[j] += 1;
    const [, h100] = layout.blocks('h100_sxm', 'vllm');
    const [, b200] = layout.blocks('b200_sxm', 'vllm');
    x[h100 + j] -= 3;
    x[b200 + j] += 0.5;
    expect(layout.factors(x, 'h100_sxm', 'vllm').link).toBe(0.65);
    // logit: unfitted 0.5 -> z 0; z = 1 + 0.5 -> 1 / (1 + e^-1.5)
    expect(layout.factors(x, 'b200_sxm', 'vllm').link).toBeCloseTo(1 / (1 + Math.exp(-1.5)), 12);
    // The other factors of the measured GPU still come from the parameters.
    expect(layout.factors(x, 'h100_sxm', 'vllm').compute).toBe(layout.factors(x, 'b200_sxm', 'vllm').compute);
  });

  it("are the catalog GPUs' all-reduce shares, each in (0, 1]", () => {
    const measured = measuredFactors(loadCatalog().hardware);
    expect(measured.h100_sxm).toEqual({ link: 0.65 });
    expect(measured.b200_sxm).toEqual({ link: 0.47 });
    // PCIe cards and GPUs the tables do not cover keep the fitted link.
    expect(measured.l40s).toBeUndefined();
    for (const v of Object.values(measured)) {
      expect(v.link).toBeGreaterThan(0);
      expect(v.link).toBeLessThanOrEqual(1);
    }
  });
});

describe('the factor fit', () => {
  it('recovers the factors that produced the points, through rounds of replays', async () => {
    const truth: EfficiencyFactors = { ...UNFITTED_EFFICIENCY, compute: 0.35, memory: 0.85, frontend_ms: 30, pass_overhead_ms: 1 };
    const concurrencies = [1, 2, 4, 8, 16, 32, 64];
    const long = { ...deployment, isl: 4096, osl: 128 };
    const measured = [...concurrencies.map((c) => pointOf(truth, c)), ...concurrencies.map((c) => pointOf(truth, c, undefined, long))];
    const layout = new ParameterLayout([], [], []);
    const record = (x: readonly number[]) => {
      const current = layout.factors(x, '', '');
      return Promise.resolve(
        measured.map((m) => pointOf(current, m.concurrency, m.measured, m.trajectory.meanPromptTokens > 1000 ? long : deployment)),
      );
    };
    // Weak priors: noise-free points identify these factors without help.
    const fitted = await fitByRounds(record, layout, {
      start: layout.start(),
      rounds: 6,
      robustScale: Infinity,
      prior: { centre: layout.start(), sd: layout.start().map(() => 10) },
    });
    const factors = layout.factors(fitted.x, '', '');
    // What the points pin down comes back: the prefill compute (long prompts), the frontend (TTFT
    // at concurrency 1) and the weights read; a decode step's smaller parts (per-layer floor, pass
    // overhead, per-request cost) trade off against each other within one model.
    expect(Math.abs(factors.compute / truth.compute - 1)).toBeLessThan(0.05);
    expect(Math.abs(factors.frontend_ms / truth.frontend_ms - 1)).toBeLessThan(0.05);
    expect(Math.abs(factors.memory / truth.memory - 1)).toBeLessThan(0.1);
    // The replays at the fitted factors give back the measured metrics: on average within 3 %; a
    // point whose prompts sit on a chunk boundary (32 prompts of ~460 tokens against 8192 batched
    // tokens) moves in steps when the factors move a little, so single points are held to 15 %.
    const errors = { ttft: [] as number[], itl: [] as number[] };
    for (const m of measured) {
      const replayed = pointOf(factors, m.concurrency, undefined, m.trajectory.meanPromptTokens > 1000 ? long : deployment).trajectory;
      errors.ttft.push(Math.abs((replayed.ttftMs as number) / m.measured.ttftMs - 1));
      errors.itl.push(Math.abs((replayed.itlMs as number) / m.measured.itlMs - 1));
    }
    for (const list of [errors.ttft, errors.itl]) {
      expect(list.reduce((a, b) => a + b, 0) / list.length).toBeLessThan(0.03);
      expect(Math.max(...list)).toBeLessThan(0.15);
    }
  });

  it('moves the factors of one deployment from three points when the errors are read against the measurement noise', async () => {
    // The catalog says memory 0.85 and compute 0.55; the deployment reaches 0.6 and 0.35. Priors as
    // calibrate engine sets them (shares logit sd 0.5, costs log sd 1.5), three load points.
    const catalog: EfficiencyFactors = { ...UNFITTED_EFFICIENCY, frontend_ms: 5 };
    const truth: EfficiencyFactors = { ...catalog, compute: 0.35, memory: 0.6 };
    const long = { ...deployment, isl: 2048, osl: 64 };
    const measured = [1, 4, 16].map((c) => pointOf(truth, c, undefined, long));
    const layout = new ParameterLayout([], [], []);
    const centre = toTransformed(catalog);
    const sd = EFFICIENCY_NAMES.map((name) => deploymentPriorSd(name));
    const trainError = async (noise: number) => {
      const record = (x: readonly number[]) =>
        Promise.resolve(measured.map((m) => pointOf(layout.factors(x, '', ''), m.concurrency, m.measured, long)));
      const fitted = await fitByRounds(record, layout, { start: centre, rounds: 3, robustScale: Infinity, prior: { centre, sd }, noise });
      const errors = fitted.points.flatMap((p) => [
        Math.abs((p.trajectory.ttftMs as number) / p.measured.ttftMs - 1),
        Math.abs((p.trajectory.itlMs as number) / p.measured.itlMs - 1),
      ]);
      return errors.reduce((a, b) => a + b, 0) / errors.length;
    };
    const before = measured.map((m) => pointOf(catalog, m.concurrency, m.measured, long));
    const start = before.flatMap((p) => [
      Math.abs((p.trajectory.ttftMs as number) / p.measured.ttftMs - 1),
      Math.abs((p.trajectory.itlMs as number) / p.measured.itlMs - 1),
    ]);
    const startError = start.reduce((a, b) => a + b, 0) / start.length;
    expect(startError).toBeGreaterThan(0.2);
    // Read against the noise of a measured mean, the fit closes most of the gap; with raw log
    // errors (noise 1) the priors hold the factors near the catalog's.
    const withNoise = await trainError(MEASUREMENT_NOISE);
    const raw = await trainError(1);
    expect(withNoise).toBeLessThan(0.05);
    expect(raw).toBeGreaterThan(3 * withNoise);
  });

  it('tells what the points say of each factor: nothing of an unused one, (frontend / TTFT)^2 / noise^2 of the frontend', () => {
    const factors = { ...UNFITTED_EFFICIENCY, frontend_ms: 7 };
    const points = [1, 2].map((c) => pointOf(factors, c));
    const layout = new ParameterLayout([], [], []);
    const x = toTransformed(factors);
    const sd = x.map(() => 0.5);
    const noise = 0.05;
    const info = parameterInformation(points, layout, x, sd, noise);
    const at = (name: string) => info[EFFICIENCY_NAMES.indexOf(name as (typeof EFFICIENCY_NAMES)[number])];
    // A bf16 model never uses the FP4 peak: the posterior is the prior.
    expect(at('fp4_compute').dataOverPrior).toBe(0);
    expect(at('fp4_compute').posteriorSd).toBeCloseTo(0.5, 12);
    // The frontend adds frontend_ms to TTFT and nothing to ITL, and d frontend_ms / d log(frontend_ms)
    // = frontend_ms: d log TTFT / dz = 7 / TTFT at each point.
    const expected = points.reduce((s, p) => s + (7 / (p.trajectory.ttftMs as number)) ** 2, 0) / noise ** 2;
    expect(at('frontend_ms').dataOverPrior / 0.25).toBeCloseTo(expected, 3);
    // The points only ever narrow a factor.
    for (const v of info) expect(v.posteriorSd).toBeLessThanOrEqual(v.priorSd + 1e-12);
  });

  it('keeps a configuration from loading when its model is not in the catalog', () => {
    expect(() =>
      loadRunConfigFromObject({ engine: { model: 'my-model', workers: { aggregated: { timing: { type: 'roofline' } } } } }, 'run.yaml'),
    ).toThrow(/engine\.model: "my-model" is not in the catalog, which timing type roofline needs/);
  });
});
