/**
 * The fit forms (fit-form.ts): the search-space transforms, the linear and physics forms'
 * parameters for given training points, the catalog fit moving the same factors the same way,
 * and each form's swap giving the run a fresh resolution of the edited config gives.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toTransformed } from '../src/calibrate/catalog-fit.js';
import { linearForm } from '../src/calibrate/engine-calibration.js';
import { fromSearchSpace, toSearchSpace, type ParameterTransform } from '../src/calibrate/fit-form.js';
import { physicsForm, withFactors } from '../src/calibrate/roofline-calibration.js';
import { pointConfig, resolveSimLoad, type EngineConstants } from '../src/calibrate/sim-load.js';
import { resolvePoint, swapTiming } from '../src/calibrate/timing-swap.js';
import { EFFICIENCY_NAMES } from '../src/catalog/efficiency.js';
import { deploymentOf, effectiveEfficiency } from '../src/config/deployment.js';
import { loadRunConfig } from '../src/config/load.js';
import { resolveRun } from '../src/config/resolve.js';
import { roleOf } from '../src/config/roles.js';
import { prepareRun } from '../src/replay.js';
import { parseMetricList } from '../src/score/metric-names.js';
import type { ScorePoint } from '../src/score/points.js';

const { config: base, baseDir } = loadRunConfig(join(import.meta.dirname, '..', 'calibration', 'minimax-m25-b200-tp4.base.yaml'));
const load = resolveSimLoad({ requestsPerSlot: 2 });
const KEY = { concurrency: 6, isl: 256, osl: 24 };
const METRICS = parseMetricList(['time_to_first_token.avg', 'inter_token_latency.avg']);
const role = roleOf(base.engine, 'aggregated');
const deployment = deploymentOf(base.engine, role).deployment!;
const catalog = effectiveEfficiency(base.engine, role, deployment.hardware.id).factors;

const point = (concurrency: number, ttft: number, itl: number): ScorePoint => ({
  source: 'measured.csv',
  key: { concurrency, isl: 256, osl: 24 },
  metrics: { time_to_first_token: { avg: ttft }, inter_token_latency: { avg: itl } },
});
const train = [point(2, 60, 7.5), point(4, 64, 8.4), point(8, 75, 10.1)];

describe('search-space transforms', () => {
  it('are the log, the logit and the logit under a bound, and invert', () => {
    expect(toSearchSpace({ type: 'log' }, Math.E)).toBeCloseTo(1, 12);
    expect(toSearchSpace({ type: 'logit' }, 0.5)).toBe(0);
    expect(toSearchSpace({ type: 'logit' }, 0.75)).toBeCloseTo(Math.log(3), 12);
    expect(toSearchSpace({ type: 'bounded', bound: 2 }, 1)).toBe(0);
    expect(fromSearchSpace({ type: 'bounded', bound: 113 }, 0)).toBe(56.5);
    const cases: Array<[ParameterTransform, number]> = [
      [{ type: 'log' }, 0.0042],
      [{ type: 'logit' }, 0.87],
      [{ type: 'bounded', bound: 113 }, 58.3],
    ];
    for (const [transform, value] of cases) expect(fromSearchSpace(transform, toSearchSpace(transform, value))).toBeCloseTo(value, 10);
  });
});

describe('the physics form', () => {
  const form = physicsForm({ base, baseDir, metrics: METRICS, load }, catalog, deployment);
  const parameters = form.parameters(train);

  it('has every efficiency factor, centred at the catalog value, with its prior', () => {
    expect(parameters.map((p) => p.name)).toEqual([...EFFICIENCY_NAMES]);
    expect(parameters.map((p) => p.centre)).toEqual(EFFICIENCY_NAMES.map((name) => catalog[name]));
    const byName = Object.fromEntries(parameters.map((p) => [p.name, p]));
    expect(byName.compute.transform).toEqual({ type: 'logit' });
    expect(byName.collective_us.transform).toEqual({ type: 'log' });
    expect(byName.frontend_us_per_inflight.transform).toEqual({ type: 'bounded', bound: 113 });
    expect(byName.compute.priorSd).toBe(0.5);
    expect(byName.fp8_compute.priorSd).toBe(0.5);
    expect(byName.pass_overhead_ms.priorSd).toBe(1.5);
  });

  it('moves the factors as the catalog fit does', () => {
    const shifted = { ...catalog, compute: 0.41, frontend_us_per_inflight: 77, per_layer_us: 12.5 };
    expect(parameters.map((p) => toSearchSpace(p.transform, shifted[p.name as keyof typeof shifted]))).toEqual(toTransformed(shifted));
  });

  it('swaps in the timing a fresh resolution of the factors gives', () => {
    const resolved = resolvePoint(withFactors(base, catalog), baseDir, KEY, null, load);
    const factors = { ...catalog, memory: catalog.memory * 0.8, frontend_ms: 55, moe: catalog.moe * 1.2 };
    const swapped = swapTiming(
      resolved.prepared.run,
      form.swap(
        EFFICIENCY_NAMES.map((name) => factors[name]),
        resolved,
      ),
    );
    expect(swapped).toStrictEqual(resolveRun(pointConfig(withFactors(base, factors), KEY, null, load), null));
  });
});

describe('the linear form', () => {
  const form = linearForm({ base, baseDir, metrics: METRICS, load, fitClient: true }, 0.5, 0);

  it('frees what points of one ISL and OSL can tell apart, the client delay with it', () => {
    const parameters = form.parameters(train);
    // Exponent 0.5 < 1: the decode slope is decode_request_us; one context length and one ISL
    // leave decode_kv_token_ns and prefill_pair_ns out.
    expect(parameters.filter((p) => p.free).map((p) => p.name)).toEqual([
      'base_ms',
      'prefill_token_us',
      'decode_request_us',
      'client_delay_ms',
    ]);
    for (const p of parameters) {
      expect(p.transform).toEqual({ type: 'log' });
      expect(p.priorSd).toBeNull();
    }
    // The first start: ITL's line through the lowest and highest point against the batch^0.5.
    const slope = (10.1 - 7.5) / (Math.sqrt(8) - Math.sqrt(2));
    const baseMs = parameters.find((p) => p.name === 'base_ms')!;
    expect(baseMs.centre).toBeCloseTo(7.5 - slope * Math.sqrt(2), 10);
    expect(baseMs.bounds![0]).toBeCloseTo(baseMs.centre * Math.exp(-14), 20);
  });

  it('swaps in the timing and client delay a fresh resolution of the constants gives', () => {
    const template: EngineConstants = {
      base_ms: 5,
      prefill_token_us: 20,
      prefill_pair_ns: 0,
      decode_request_us: 900,
      decode_kv_token_ns: 0,
      decode_request_exponent: 0.5,
      prefill_overlap: 0,
      client_delay_ms: 0,
    };
    const resolved = resolvePoint(base, baseDir, KEY, template, load);
    const constants = { ...template, base_ms: 7.25, prefill_token_us: 14, decode_request_us: 1500, client_delay_ms: 42 };
    const names = form.parameters(train).map((p) => p.name);
    expect(names).toEqual(['base_ms', 'prefill_token_us', 'prefill_pair_ns', 'decode_request_us', 'decode_kv_token_ns', 'client_delay_ms']);
    const values = names.map((name) => constants[name as keyof EngineConstants] as number);
    expect(swapTiming(resolved.prepared.run, form.swap(values, resolved))).toStrictEqual(
      prepareRun(pointConfig(base, KEY, constants, load), { baseDir }).run,
    );
  });
});
