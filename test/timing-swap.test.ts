/**
 * Fits replay each training point resolved once with only its timing swapped (timing-swap.ts).
 * That must be the replay of the edited config, to the byte: a swapped run equals a fresh
 * resolution of the config with those constants or factors (over random sets of them), its
 * replay and trajectory equal theirs, and a whole engine fit run both ways gives the same result.
 */
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isShare } from '../src/calibrate/catalog-fit.js';
import { configReplay, fitEngine, swappedReplay, type EngineFitTask } from '../src/calibrate/engine-fit.js';
import { withFactors } from '../src/calibrate/roofline-calibration.js';
import { pointConfig, resolveSimLoad, type EngineConstants } from '../src/calibrate/sim-load.js';
import { linearSwap, resolvePoint, rooflineSwap, swapTiming } from '../src/calibrate/timing-swap.js';
import { recordRunTrajectory, recordTrajectory } from '../src/calibrate/trajectory.js';
import { EFFICIENCY_NAMES, type EfficiencyFactors } from '../src/catalog/efficiency.js';
import { effectiveEfficiency } from '../src/config/deployment.js';
import { loadRunConfig } from '../src/config/load.js';
import { resolveRun } from '../src/config/resolve.js';
import { roleOf } from '../src/config/roles.js';
import { prepareRun, replayPrepared } from '../src/replay.js';
import { parseMetricList } from '../src/score/metric-names.js';

const BASE_FILE = join(import.meta.dirname, '..', 'calibration', 'minimax-m25-b200-tp4.base.yaml');
const { config: base, baseDir } = loadRunConfig(BASE_FILE);
const load = resolveSimLoad({ requestsPerSlot: 2 });
const KEY = { concurrency: 6, isl: 256, osl: 24 };
const METRICS = parseMetricList(['time_to_first_token.avg', 'inter_token_latency.avg']);

const positive = (min: number, max: number) => fc.double({ min, max, noNaN: true });
const arbConstants: fc.Arbitrary<EngineConstants> = fc.record({
  base_ms: positive(0.5, 20),
  prefill_token_us: positive(1, 80),
  prefill_pair_ns: fc.oneof(fc.constant(0), positive(0.001, 5)),
  decode_request_us: positive(1, 3000),
  decode_kv_token_ns: fc.oneof(fc.constant(0), positive(1, 500)),
  decode_request_exponent: fc.constantFrom(0.5, 0.8, 1),
  prefill_overlap: fc.constantFrom(0, 0.5),
  client_delay_ms: fc.oneof(fc.constant(0), positive(0.1, 120)),
});

const catalogFactors = effectiveEfficiency(base.engine, roleOf(base.engine, 'aggregated'), base.engine.hardware).factors;
/** Factors around the catalog's: shares scaled down (they stay shares), costs up or down. */
const arbFactors: fc.Arbitrary<EfficiencyFactors> = fc
  .array(positive(0.5, 1.5), { minLength: EFFICIENCY_NAMES.length, maxLength: EFFICIENCY_NAMES.length })
  .map((scales) => {
    const out = { ...catalogFactors };
    EFFICIENCY_NAMES.forEach((name, j) => (out[name] = catalogFactors[name] * (isShare(name) ? Math.min(1, scales[j]) : scales[j])));
    return out;
  });

/** The summary of a replay without its machine-dependent timings. */
function replayed(summary: ReturnType<typeof replayPrepared>['summary']) {
  return JSON.stringify({ metrics: summary.metrics, run: summary.run, ttft_stages: summary.ttft_stages, passes: summary.simulator.passes });
}

describe('a swapped run is a fresh resolution of the edited config', () => {
  // Resolved with some linear constants and no client delay, as the engine fit's template.
  const template = resolvePoint(base, baseDir, KEY, { ...fc.sample(arbConstants, { numRuns: 1, seed: 7 })[0], client_delay_ms: 0 }, load);

  it('linear constants and client delay', () => {
    fc.assert(
      fc.property(arbConstants, (constants) => {
        const swapped = swapTiming(template.prepared.run, linearSwap(constants, template.prepared.run));
        const fresh = prepareRun(pointConfig(base, KEY, constants, load), { baseDir }).run;
        expect(swapped).toStrictEqual(fresh);
      }),
      { numRuns: 40, seed: 1 },
    );
  });

  it('linear: the replays are the same', () => {
    // The second with a client delay, which moves the frontend's fixed cost.
    const sets = fc.sample(arbConstants, { numRuns: 3, seed: 2 }).map((c, i) => (i === 1 ? { ...c, client_delay_ms: 35 } : c));
    for (const constants of sets) {
      const config = pointConfig(base, KEY, constants, load);
      const fresh = replayPrepared(config, prepareRun(config, { baseDir })).summary;
      const run = swapTiming(template.prepared.run, linearSwap(constants, template.prepared.run));
      const swapped = replayPrepared(template.config, { ...template.prepared, run }).summary;
      expect(replayed(swapped)).toBe(replayed(fresh));
    }
  });

  const physics = resolvePoint(withFactors(base, catalogFactors), baseDir, KEY, null, load);

  it('efficiency factors (roofline coefficients and the frontend they set)', () => {
    fc.assert(
      fc.property(arbFactors, (factors) => {
        const swapped = swapTiming(physics.prepared.run, rooflineSwap(physics.config, factors));
        const fresh = resolveRun(pointConfig(withFactors(base, factors), KEY, null, load), null);
        expect(swapped).toStrictEqual(fresh);
      }),
      { numRuns: 40, seed: 3 },
    );
  });

  it('efficiency factors: the trajectories are the same', () => {
    for (const factors of fc.sample(arbFactors, { numRuns: 3, seed: 4 })) {
      const fresh = recordTrajectory(pointConfig(withFactors(base, factors), KEY, null, load));
      const swapped = recordRunTrajectory(swapTiming(physics.prepared.run, rooflineSwap(physics.config, factors)));
      expect(swapped).toStrictEqual(fresh);
    }
  });
});

describe('the engine fit', () => {
  it('gives the same result with swapped timing as with every config resolved afresh', () => {
    const task: EngineFitTask = {
      base,
      baseDir,
      train: [
        { key: { concurrency: 2, isl: 256, osl: 24 }, measured: { 'time_to_first_token.avg': 60, 'inter_token_latency.avg': 7.5 } },
        { key: { concurrency: 4, isl: 256, osl: 24 }, measured: { 'time_to_first_token.avg': 64, 'inter_token_latency.avg': 8.4 } },
        { key: { concurrency: 8, isl: 256, osl: 24 }, measured: { 'time_to_first_token.avg': 75, 'inter_token_latency.avg': 10.1 } },
      ],
      metrics: METRICS,
      load,
      fitClient: true,
      prefillShare: 0.75,
      prefillPrior: { ratio: 5, weight: 0.1 },
      decodeExponent: 0.5,
      pointWeights: [0.5, 1, 1.5],
      maxIterations: 4,
    };
    const swapped = fitEngine(task, swappedReplay(task));
    const fresh = fitEngine(task, configReplay(task));
    expect(swapped.replays).toBeGreaterThan(3 * 4);
    expect({ ...swapped, wallMs: 0 }).toStrictEqual({ ...fresh, wallMs: 0 });
  });
});
