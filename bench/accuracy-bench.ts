/**
 * `npm run bench:accuracy [-- --per-stratum K] [--backends B,B] [--policy own|vllm] [--check-set] [--ablation] [--refine N] [--json] [--points]
 * [--prior-ratio R] [--prior-weight W] [--prefill-overlap H] [--point-weights uniform|W,W,W] [--exponents MOE,DENSE] [--oracle]
 * [--train-points N] [--score-above K] [--kv auto|unlimited]`: held-out accuracy of the
 * engine fit on real silicon (docs/calibration.md; docs/calibration.md).
 *
 * Deployments: from `data/silicon/aic-silicon-sample.csv` (`silicon-deployments.ts`), every
 * aggregated deployment with 5 or more concurrency points and OSL <= 1024 (longer outputs cost
 * minutes of replay per fit), split into six strata (vLLM, SGLang, TensorRT-LLM x dense, MoE);
 * from each stratum K deployments (default 3) evenly spaced in label order. The rule does not
 * look at any result. Each is fitted on its three lowest concurrency points and scored on the
 * rest (TTFT avg and ITL avg MAPE), saturated points included; held-out points of a cold-start
 * stall (`COLD_STALL_RULE`, the zero-shot bench's rule) are listed apart and not scored. Then the B200 MiniMax-M2.5 sweep of
 * `data/silicon/dynosim-b200-minimax-m25-tp4-isl1k-osl1k.csv`, whose `mocker` and `aic` rows
 * (two other simulators) are scored on the same held-out points.
 *
 * `--check-set` runs instead the deployments of `--per-stratum K` (default 8) that the benchmark
 * does not use, without the dynosim sweep (35 deployments at K = 8): the set the decode exponents
 * and the prefill prior were chosen on. `--ablation` reruns everything with one simulated-load option changed at a time and prints
 * the overall held-out MAPEs of each variant. `--refine N` gives every fit N iterations of refining
 * searches (`calibrate engine --refine`). `--points` prints every deployment's fitted constants and
 * its points (measured, simulated, signed error). `--prior-ratio`, `--prior-weight` and
 * `--prefill-overlap` change the prefill prior and the roofline overlap of every fit, and
 * `--point-weights` the weights of the training points' residuals, and `--exponents` the decode
 * exponents of the two model families (the
 * experiments of docs/calibration.md). `--oracle` fits every deployment on all its points and
 * scores the same held-out points: the error the model's form leaves when extrapolation is taken
 * out of the question. `--train-points N` fits on the N lowest points instead of 3 (and scores the
 * rest): what one more measured load point buys. `--score-above K` scores only the points above
 * each sweep's K lowest, to compare such fits on the same points (`--train-points 3 --score-above
 * 4` against `--train-points 4`). Every fit replays with the catalog's KV capacity and the KV
 * flags and parallelism its deployment was launched with where that launch is known, unlimited KV
 * where it is not; `--kv unlimited` replays every linear fit with unlimited KV (`KV`). Run after
 * `npm run build`.
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { calibrateEngine, FitPool, PREFILL_PRIOR, type EngineCalibration } from '../src/calibrate/engine-calibration.js';
import {
  deploymentBaseConfig,
  readSiliconDeployments,
  saturatedConcurrencies,
  SATURATION_TTFT_JUMP,
  type SiliconDeployment,
} from '../src/calibrate/silicon-deployments.js';
import { resolveSimLoad, type SimLoadOptions } from '../src/calibrate/sim-load.js';
import { isMixtureOfExperts } from '../src/calibrate/model-family.js';
import { readTable } from '../src/calibrate/read-table.js';
import { parseMetricList } from '../src/score/metric-names.js';
import type { ScorePoint } from '../src/score/points.js';
import { PointPool } from '../src/sweep/pool.js';
import { COLD_STALL_RULE, zeroShotBench } from './accuracy-zero-shot.js';
import { benchEnvironment, describeEnvironment, JSON_OUTPUT, say } from './environment.js';
import { launchKnown, measuredSetup, TrajectoryPool } from '../src/calibrate/catalog-calibration.js';
import { calibrateRoofline, type RooflineCalibration } from '../src/calibrate/roofline-calibration.js';
import { catalogBaseConfig, coldStallConcurrencies, type LaunchSettings } from '../src/calibrate/silicon-deployments.js';
import { chooseForm, fitFormsFileText, type FitFormsRow } from '../src/calibrate/form-choice.js';
import { stratumOf } from '../src/catalog/accuracy.js';
import { writeOutputFile } from '../src/io/write-output.js';
import { ConfigError } from '../src/config/errors.js';
import type { RunConfig } from '../src/config/types.js';

/**
 * `--form roofline`: fit each deployment with physics (the catalog's efficiency factors, each held
 * near the catalog's value) instead of free linear coefficients. `--form compare`: fit every
 * deployment both ways, print the held-out errors of both side by side per stratum with the form
 * `calibrate engine --form auto` would choose (`chooseForm`), and with `--write-forms FILE`
 * write that table (`data/engine-fit-forms.yaml`).
 */
const FORM = process.argv.includes('--form') ? process.argv[process.argv.indexOf('--form') + 1] : 'linear';
if (!['linear', 'roofline', 'compare'].includes(FORM)) throw new Error(`--form ${FORM}: expected linear, roofline or compare`);
const WRITE_FORMS = process.argv.includes('--write-forms') ? process.argv[process.argv.indexOf('--write-forms') + 1] : undefined;
let trajectoryPool: TrajectoryPool | undefined;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SAMPLE = join(ROOT, 'data/silicon/aic-silicon-sample.csv');
const DYNOSIM = join(ROOT, 'data/silicon/dynosim-b200-minimax-m25-tp4-isl1k-osl1k.csv');
const METRICS = parseMetricList(['time_to_first_token.avg', 'inter_token_latency.avg']);
const TTFT = 'time_to_first_token.avg';
const ITL = 'inter_token_latency.avg';

function argValue(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

interface Case {
  label: string;
  stratum: string;
  deployment: Pick<
    SiliconDeployment,
    'model' | 'modelPath' | 'backend' | 'precision' | 'expert' | 'system' | 'tp' | 'attentionDp' | 'isl' | 'osl'
  >;
  points: ScorePoint[];
  /** Concurrencies reported apart: cold-start stalls (`COLD_STALL_RULE`), not scored. */
  apart: number[];
  /**
   * How its highest point was launched (parallelism that ran, KV flags), for the KV capacity;
   * `known`: whether the launch is known (`launchKnown`) rather than read from the sample's columns.
   */
  launch?: { tp: number; attentionDp: number; expert: number; kvCache?: LaunchSettings['kvCache']; known: boolean };
}

/**
 * `--policy own` (the default) replays each deployment with its own backend's scheduler;
 * `--policy vllm` with vLLM's whatever the backend (how the benchmark ran before the SGLang and
 * TensorRT-LLM schedulers). `--backends sglang,trtllm` keeps those backends' strata only.
 */
const POLICY = process.argv.includes('--policy') ? process.argv[process.argv.indexOf('--policy') + 1] : 'own';
const BACKENDS = process.argv.includes('--backends')
  ? String(process.argv[process.argv.indexOf('--backends') + 1]).split(',')
  : ['vllm', 'sglang', 'trtllm'];

/**
 * A linear fit's base config: the catalog's KV capacity where the deployment's launch is known
 * (`--kv unlimited`: unlimited everywhere); unlimited where it is not, or where the weights leave
 * no room for KV in the catalog's reading, and the bench says so for the latter.
 */
function linearBase(c: Case): RunConfig {
  const backend = POLICY === 'own' ? c.deployment.backend : 'vllm';
  if (KV === 'unlimited' || c.launch?.known !== true) return deploymentBaseConfig(c.deployment, { backend });
  try {
    return deploymentBaseConfig(c.deployment, { backend, kv: 'auto', launch: c.launch });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    say(`${c.label}: KV capacity from the catalog refused (${error.message}); fitted with unlimited KV\n`);
    return deploymentBaseConfig(c.deployment, { backend });
  }
}

/** The parallelism and KV flags a deployment's highest point ran with (`measuredSetup`), and whether they are known. */
function launchOf(d: SiliconDeployment): NonNullable<Case['launch']> {
  const last = d.points.length - 1;
  const setup = measuredSetup(d, last);
  return {
    tp: setup.tp,
    attentionDp: setup.attentionDp,
    expert: setup.expert,
    ...(setup.launch.kvCache ? { kvCache: setup.launch.kvCache } : {}),
    known: launchKnown(d, last),
  };
}

export function selectCases(perStratum: number): Case[] {
  const all = readSiliconDeployments(SAMPLE, 5).filter((d) => d.osl <= 1024);
  const cases: Case[] = [];
  for (const backend of BACKENDS) {
    for (const moe of [false, true]) {
      const stratum = all.filter((d) => d.backend === backend && d.moe === moe);
      const k = Math.min(perStratum, stratum.length);
      for (let i = 0; i < k; i++) {
        const d = stratum[Math.floor((i * stratum.length) / k)];
        cases.push({
          label: d.label,
          stratum: `${backend} ${moe ? 'MoE' : 'dense'}`,
          deployment: d,
          launch: launchOf(d),
          points: d.points,
          apart: coldStallConcurrencies(d),
        });
      }
    }
  }
  return cases;
}

interface Variant {
  name: string;
  load: SimLoadOptions;
  fitClient: boolean;
  /** Overrides the model-family decode exponent. */
  decodeExponent?: number;
  prefillPrior?: { ratio: number; weight: number } | null;
  /** Overrides the default prefill overlap (`prefill_overlap`). */
  prefillOverlap?: number;
  /** Overrides the default point weights (null: uniform). */
  pointWeights?: number[] | null;
}

/** `--exponents MOE,DENSE`: the decode exponents of the two model families, for every fit. */
function familyExponent(model: string): { decodeExponent?: number } {
  const index = process.argv.indexOf('--exponents');
  if (index < 0) return {};
  const [moe, dense] = String(process.argv[index + 1])
    .split(',')
    .map(Number);
  return { decodeExponent: isMixtureOfExperts(model) ? moe : dense };
}

function variants(ablation: boolean): Variant[] {
  const base = resolveSimLoad({});
  const priorRatio = argValue('--prior-ratio', NaN);
  const priorWeight = argValue('--prior-weight', NaN);
  const prior =
    Number.isFinite(priorRatio) || Number.isFinite(priorWeight)
      ? {
          prefillPrior: {
            ratio: Number.isFinite(priorRatio) ? priorRatio : PREFILL_PRIOR.ratio,
            weight: Number.isFinite(priorWeight) ? priorWeight : PREFILL_PRIOR.weight,
          },
        }
      : {};
  const overlapArg = argValue('--prefill-overlap', NaN);
  const overlap = Number.isFinite(overlapArg) ? { prefillOverlap: overlapArg } : {};
  const weightsArg = process.argv.indexOf('--point-weights');
  const weights =
    weightsArg < 0
      ? {}
      : {
          pointWeights:
            process.argv[weightsArg + 1] === 'uniform'
              ? null
              : String(process.argv[weightsArg + 1])
                  .split(',')
                  .map(Number),
        };
  // --oracle fits on every point with uniform weights unless told otherwise.
  const oracleWeights = ORACLE && weightsArg < 0 ? { pointWeights: null } : {};
  const list: Variant[] = [{ name: 'defaults', load: base, fitClient: true, ...prior, ...overlap, ...weights, ...oracleWeights }];
  if (!ablation) return list;
  list.push({ name: 'fixed lengths (range ratio 1)', load: { ...base, rangeRatio: 1 }, fitClient: true });
  list.push({ name: 'first wave left out (warmup)', load: { ...base, warmup: 'first-wave' }, fitClient: true });
  list.push({ name: '4 requests per slot', load: { ...base, requestsPerSlot: 4 }, fitClient: true });
  list.push({ name: 'no client delay (all TTFT on the engine)', load: base, fitClient: false });
  list.push({ name: 'decode exponent 1 (affine in the batch)', load: base, fitClient: true, decodeExponent: 1 });
  list.push({ name: 'no prefill prior', load: base, fitClient: true, prefillPrior: null });
  list.push({ name: 'prefill overlap 1 (roofline: max of prefill and the rest)', load: base, fitClient: true, prefillOverlap: 1 });
  list.push({ name: 'uniform point weights', load: base, fitClient: true, pointWeights: null });
  return list;
}

interface Row {
  label: string;
  stratum: string;
  points: string;
  ttft: number | null;
  itl: number | null;
  heldOut: number;
  apes: { ttft: number[]; itl: number[] };
  /** The same, without the saturated points (`saturatedConcurrencies`). */
  unsaturated: { ttft: number[]; itl: number[] };
  /** Held-out concurrencies where the measured sweep is saturated. */
  saturated: number[];
  /** Held-out concurrencies reported apart (`Case.apart`), not scored. */
  apart: number[];
  wallMs: number;
}

/** `--oracle`: fit on every point, and score the points the benchmark holds out (what the model can reach at best). */
const ORACLE = process.argv.includes('--oracle');
/**
 * Each fitted deployment's KV capacity: by default (`--kv auto`) sized from the catalog's model,
 * GPU and precision with the KV flags and parallelism its highest point was launched with
 * (`launchOf`), as `calibrate engine` sizes it for a base config that names a catalog model and
 * GPU, where that launch is known, and unlimited where it is not; `--kv unlimited`: unlimited for
 * every deployment (a request never waits for KV). docs/benchmarks.md, "KV capacity in the fits".
 */
const KV: 'auto' | 'unlimited' =
  process.argv.includes('--kv') && process.argv[process.argv.indexOf('--kv') + 1] === 'unlimited' ? 'unlimited' : 'auto';
/** `--train-points N`: the lowest N concurrency points are the training points (3 by default). */
const TRAIN_POINTS = Math.max(1, Math.floor(argValue('--train-points', 3)));
/**
 * `--score-above K`: score only the points above each sweep's K lowest (default: above the
 * training points), so that fits on different numbers of points can be compared on the same points.
 */
const SCORE_ABOVE = Math.max(TRAIN_POINTS, Math.floor(argValue('--score-above', TRAIN_POINTS)));

/** Concurrencies of a sweep's `count` lowest points (points sorted by concurrency). */
const lowestConcurrencies = (points: readonly ScorePoint[], count: number) =>
  new Set(points.slice(0, count).map((p) => Number(p.key.concurrency)));

function heldOutApes(
  calibration: Pick<EngineCalibration, 'train' | 'trainScore' | 'score'>,
  skip: ReadonlySet<number> = new Set(),
): { ttft: number[]; itl: number[] } {
  const ttft: number[] = [];
  const itl: number[] = [];
  const lowest = new Set(
    calibration.train
      .map((p) => Number(p.key.concurrency))
      .sort((a, b) => a - b)
      .slice(0, TRAIN_POINTS),
  );
  const points = ORACLE ? calibration.trainScore.points.filter((p) => !lowest.has(Number(p.key.concurrency))) : calibration.score.points;
  for (const point of points) {
    if (point.ape === null || skip.has(Number(point.key.concurrency))) continue;
    if (point.metric === TTFT) ttft.push(point.ape);
    if (point.metric === ITL) itl.push(point.ape);
  }
  return { ttft, itl };
}

const mean = (v: readonly number[]) => (v.length === 0 ? null : v.reduce((s, x) => s + x, 0) / v.length);
const fmt = (v: number | null, d = 1) => (v === null ? '-' : v.toFixed(d));

function dynosimPoints(source: string): ScorePoint[] {
  const table = readTable(DYNOSIM);
  return table.rows
    .filter((row) => row.cells.source === source)
    .map((row) => ({
      source: `${DYNOSIM}:${row.line}`,
      key: { concurrency: Number(row.cells.concurrency), isl: 1024, osl: 1024 },
      metrics: { time_to_first_token: { avg: Number(row.cells.ttft_ms) }, inter_token_latency: { avg: Number(row.cells.tpot_ms) } },
    }))
    .sort((a, b) => a.key.concurrency - b.key.concurrency);
}

function linearConstants(calibration: EngineCalibration): string {
  const k = calibration.best.constants;
  return `base_ms ${k.base_ms.toFixed(3)}, prefill_token_us ${k.prefill_token_us.toFixed(2)}, prefill_pair_ns ${k.prefill_pair_ns.toFixed(4)}, decode_request_us ${k.decode_request_us.toFixed(1)} (p ${k.decode_request_exponent ?? 1}), decode_kv_token_ns ${k.decode_kv_token_ns.toFixed(3)}, client_delay_ms ${k.client_delay_ms.toFixed(1)}`;
}

async function runVariant(
  variant: Variant,
  cases: Case[],
  fitPool: FitPool,
  pointPool: PointPool,
  withDynosim: boolean,
  form: 'linear' | 'roofline',
): Promise<{ rows: Row[]; b200: EngineCalibration | RooflineCalibration | undefined }> {
  const b200Points = dynosimPoints('hardware');
  const all = [
    ...cases,
    ...(withDynosim
      ? [
          {
            label: 'vllm 0.17.0 MiniMax-M2.5 b200_sxm fp8 1024/1024 tp4 (dynosim sweep)',
            stratum: 'vllm MoE',
            deployment: {
              model: 'MiniMax-M2.5',
              modelPath: 'MiniMaxAI/MiniMax-M2.5',
              backend: 'vllm',
              precision: 'fp8',
              expert: 1,
              system: 'b200_sxm',
              tp: 4,
              attentionDp: 1,
              isl: 1024,
              osl: 1024,
            },
            points: b200Points,
            apart: [],
          },
        ]
      : []),
  ];
  const trainIndices = (c: Case) => (ORACLE ? c.points.map((_, k) => k) : Array.from({ length: TRAIN_POINTS }, (_, k) => k));
  const results: Array<EngineCalibration | RooflineCalibration> = await Promise.all(
    all.map((c) =>
      form === 'roofline'
        ? calibrateRoofline({
            // The physics form always sizes KV from the catalog; by default with the launch's KV flags too where it is known.
            base:
              KV === 'unlimited' || c.launch?.known !== true
                ? catalogBaseConfig(c.deployment)
                : catalogBaseConfig(
                    { ...c.deployment, tp: c.launch.tp, attentionDp: c.launch.attentionDp, expert: c.launch.expert },
                    undefined,
                    c.launch.kvCache !== undefined ? { kvCache: c.launch.kvCache } : {},
                  ),
            baseDir: ROOT,
            measured: c.points,
            trainIndices: trainIndices(c),
            metrics: METRICS,
            load: variant.load,
            pointPool,
            trajectoryPool: trajectoryPool,
          })
        : calibrateEngine({
            base: linearBase(c),
            baseDir: ROOT,
            measured: c.points,
            trainIndices: ORACLE ? c.points.map((_, k) => k) : Array.from({ length: TRAIN_POINTS }, (_, k) => k),
            metrics: METRICS,
            load: variant.load,
            fitClient: variant.fitClient,
            ...(variant.decodeExponent !== undefined ? { decodeExponent: variant.decodeExponent } : familyExponent(c.deployment.model)),
            ...(variant.prefillPrior !== undefined ? { prefillPrior: variant.prefillPrior } : {}),
            ...(variant.prefillOverlap !== undefined ? { prefillOverlap: variant.prefillOverlap } : {}),
            ...(variant.pointWeights !== undefined ? { pointWeights: variant.pointWeights } : {}),
            refineIterations: argValue('--refine', 0),
            fitPool,
            pointPool,
          }),
    ),
  );
  const rows = results.map((calibration, i) => {
    const c = all[i];
    const low = lowestConcurrencies(c.points, SCORE_ABOVE);
    const heldOutC = new Set(c.points.slice(SCORE_ABOVE).map((p) => Number(p.key.concurrency)));
    // Held-out points no engine model can explain are reported apart, as the zero-shot bench does.
    const apart = c.apart.filter((x) => heldOutC.has(x));
    const apes = heldOutApes(calibration, new Set([...low, ...apart]));
    const saturated = saturatedConcurrencies(c.points).filter((x) => heldOutC.has(x) && !apart.includes(x));
    return {
      unsaturated: heldOutApes(calibration, new Set([...low, ...apart, ...saturated])),
      saturated,
      apart,
      label: c.label,
      stratum: c.stratum,
      points: `${c.points.map((p) => p.key.concurrency).join(',')}`,
      ttft: mean(apes.ttft),
      itl: mean(apes.itl),
      heldOut: c.points.length - SCORE_ABOVE,
      apes,
      wallMs: calibration.wallMs,
    };
  });
  if (process.argv.includes('--points')) {
    results.forEach((calibration, i) => {
      const fitted =
        'form' in calibration
          ? `efficiency ${Object.entries(calibration.factors)
              .map(([name, v]) => `${name} ${Number((v as number).toPrecision(3))}`)
              .join(', ')}`
          : linearConstants(calibration);
      say(`\n${all[i].label}\n  fitted: ${fitted}\n  C      TTFT meas    sim     err %   ITL meas    sim     err %\n`);
      const byC = new Map<number, Record<string, { sim: number | null; measured: number | null; held: boolean }>>();
      for (const [held, score] of [
        [false, calibration.trainScore],
        [true, calibration.score],
      ] as const) {
        for (const p of score.points) {
          const c = Number(p.key.concurrency);
          byC.set(c, { ...(byC.get(c) ?? {}), [p.metric]: { sim: p.sim, measured: p.measured, held } });
        }
      }
      for (const [c, m] of [...byC].sort((a, b) => a[0] - b[0])) {
        const cell = (x: { sim: number | null; measured: number | null } | undefined) =>
          x && x.sim !== null && x.measured !== null
            ? `${x.measured.toFixed(2).padStart(9)} ${x.sim.toFixed(2).padStart(8)} ${(((x.sim - x.measured) / x.measured) * 100).toFixed(1).padStart(7)}`
            : ''.padStart(26);
        say(`  ${String(c).padEnd(5)} ${cell(m[TTFT])}  ${cell(m[ITL])}${m[TTFT]?.held ? '' : '  (train)'}\n`);
      }
    });
  }
  return { rows, b200: withDynosim ? results[results.length - 1] : undefined };
}

function otherSimulatorMape(source: string, heldOut: readonly ScorePoint[]): { ttft: number; itl: number } {
  const predicted = dynosimPoints(source);
  const ttft: number[] = [];
  const itl: number[] = [];
  for (const point of heldOut) {
    const p = predicted.find((q) => q.key.concurrency === point.key.concurrency);
    if (!p) continue;
    ttft.push(
      (Math.abs((p.metrics.time_to_first_token.avg as number) - (point.metrics.time_to_first_token.avg as number)) /
        (point.metrics.time_to_first_token.avg as number)) *
        100,
    );
    itl.push(
      (Math.abs((p.metrics.inter_token_latency.avg as number) - (point.metrics.inter_token_latency.avg as number)) /
        (point.metrics.inter_token_latency.avg as number)) *
        100,
    );
  }
  return { ttft: mean(ttft) as number, itl: mean(itl) as number };
}

/** One form's held-out errors per stratum of a set of deployments. */
interface StratumErrors {
  roofline: { ttft_mape: number; itl_mape: number };
  linear: { ttft_mape: number; itl_mape: number };
  points: number;
  deployments: number;
}

/** Both forms on `cases`: per stratum label, their errors; and every held-out error of each form. */
async function bothForms(
  variant: Variant,
  cases: Case[],
  fitPool: FitPool,
  pointPool: PointPool,
): Promise<{
  strata: Map<string, StratumErrors>;
  all: Record<'roofline' | 'linear', { ttft: number[]; itl: number[] }>;
  /** Deployments with held-out points reported apart (`Row.apart`). */
  apart: Array<{ label: string; concurrencies: number[] }>;
}> {
  const linear = (await runVariant(variant, cases, fitPool, pointPool, false, 'linear')).rows;
  const roofline = (await runVariant(variant, cases, fitPool, pointPool, false, 'roofline')).rows;
  const strata = new Map<string, StratumErrors>();
  const all = { roofline: { ttft: [] as number[], itl: [] as number[] }, linear: { ttft: [] as number[], itl: [] as number[] } };
  for (const stratum of [...new Set(cases.map((c) => c.stratum))]) {
    const of = (list: Row[]) => list.filter((r) => r.stratum === stratum);
    const pick = (list: Row[], key: 'ttft' | 'itl') => of(list).flatMap((r) => r.apes[key]);
    for (const form of ['roofline', 'linear'] as const) {
      all[form].ttft.push(...pick(form === 'roofline' ? roofline : linear, 'ttft'));
      all[form].itl.push(...pick(form === 'roofline' ? roofline : linear, 'itl'));
    }
    strata.set(stratumOf(stratum.split(' ')[0], stratum.endsWith('MoE')), {
      roofline: { ttft_mape: mean(pick(roofline, 'ttft')) ?? 0, itl_mape: mean(pick(roofline, 'itl')) ?? 0 },
      linear: { ttft_mape: mean(pick(linear, 'ttft')) ?? 0, itl_mape: mean(pick(linear, 'itl')) ?? 0 },
      points: pick(linear, 'ttft').length,
      deployments: of(linear).length,
    });
  }
  const apart = linear.filter((r) => r.apart.length > 0).map((r) => ({ label: r.label, concurrencies: r.apart }));
  return { strata, all, apart };
}

/**
 * `--form compare`: both forms on the same deployments, per stratum, and the choice of `--form
 * auto`; with `checkCases` (`--write-forms`) the same on the check set, which the choice must
 * also pass.
 */
async function compareForms(
  variant: Variant,
  cases: Case[],
  fitPool: FitPool,
  pointPool: PointPool,
  checkCases: Case[] | null,
): Promise<void> {
  const started = performance.now();
  const bench = await bothForms(variant, cases, fitPool, pointPool);
  const check = checkCases === null ? null : await bothForms(variant, checkCases, fitPool, pointPool);
  const rows: FitFormsRow[] = [];
  const cell = (e: StratumErrors) =>
    `${String(e.points).padStart(6)}  ${fmt(e.roofline.ttft_mape).padStart(13)}  ${fmt(e.roofline.itl_mape).padStart(5)}   ${fmt(e.linear.ttft_mape).padStart(13)}  ${fmt(e.linear.itl_mape).padStart(5)}`;
  say(`\n${'stratum'.padEnd(18)}  set    points  physics TTFT %  ITL %   linear TTFT %  ITL %   auto\n`);
  for (const [label, errors] of bench.strata) {
    const checked = check?.strata.get(label);
    const form = chooseForm(errors, checked);
    rows.push({ stratum: label, form, ...errors, ...(checked === undefined ? {} : { check: checked }) });
    say(`${label.padEnd(18)}  bench  ${cell(errors)}   ${form}\n`);
    if (checked !== undefined) say(`${''.padEnd(18)}  check  ${cell(checked)}\n`);
  }
  for (const [name, set] of [
    ['benchmark', bench],
    ['check set', check],
  ] as const) {
    if (set === null) continue;
    const { all } = set;
    say(
      `overall, ${name}: physics TTFT ${fmt(mean(all.roofline.ttft))} %, ITL ${fmt(mean(all.roofline.itl))} %; linear TTFT ${fmt(mean(all.linear.ttft))} %, ITL ${fmt(mean(all.linear.itl))} % over ${all.linear.ttft.length} held-out points (targets per stratum: 10 %, 5 %)\n`,
    );
  }
  const apartCount = (list: Array<{ concurrencies: number[] }>) => list.reduce((n, d) => n + d.concurrencies.length, 0);
  for (const [name, set] of [
    ['benchmark', bench],
    ['check set', check],
  ] as const) {
    if (set === null || set.apart.length === 0) continue;
    say(
      `reported apart, not scored (${name}, ${apartCount(set.apart)} held-out points): ${set.apart.map((d) => `${d.label}: C=${d.concurrencies.join(',')}`).join('; ')}\n`,
    );
  }
  if (bench.apart.length > 0 || (check?.apart.length ?? 0) > 0) say(`rule: ${COLD_STALL_RULE}\n`);
  say(`${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  if (WRITE_FORMS !== undefined) {
    const basis =
      `engine-fit benchmark: ${cases.length} silicon deployments (${TRAIN_POINTS} lowest concurrencies fitted, every other point scored, saturated ones included; ` +
      `held-out points of a cold-start stall reported apart, not scored: ${apartCount(bench.apart)} here, ${apartCount(check?.apart ?? [])} in the check set); ` +
      `check set: ${checkCases?.length ?? 0} other deployments, fitted and scored alike`;
    writeOutputFile(WRITE_FORMS, fitFormsFileText(rows, basis));
    say(`wrote ${WRITE_FORMS}\n`);
  }
}

async function main(): Promise<void> {
  // --check-set: the deployments of --per-stratum K (default 8) that the benchmark (3 per
  // stratum) does not use, without the dynosim sweep: a second set to choose or confirm defaults on.
  const checkSet = process.argv.includes('--check-set');
  const perStratum = argValue('--per-stratum', checkSet ? 8 : 3);
  const ablation = process.argv.includes('--ablation');
  const environment = benchEnvironment();
  let document: Record<string, unknown> | undefined;
  const threads = argValue('--threads', availableParallelism());
  const benchmarkLabels = new Set(selectCases(3).map((c) => c.label));
  const cases = checkSet ? selectCases(perStratum).filter((c) => !benchmarkLabels.has(c.label)) : selectCases(perStratum);
  const fitPool = new FitPool(threads);
  const pointPool = new PointPool({ poolThreads: threads });
  if (FORM !== 'linear') trajectoryPool = new TrajectoryPool(threads);
  const summary: Array<{
    variant: string;
    ttft: number | null;
    itl: number | null;
    points: number;
    ttftUnsat: number | null;
    itlUnsat: number | null;
  }> = [];
  try {
    say(
      `accuracy of the engine fit: ${cases.length} silicon deployments (${perStratum} per stratum${checkSet ? ", check set: without the benchmark's" : ''})${checkSet ? '' : ' + the B200 dynosim sweep'}; ${ORACLE ? 'fit on all points (--oracle)' : `fit on the ${TRAIN_POINTS} lowest concurrencies`}, scored on ${SCORE_ABOVE === TRAIN_POINTS && !ORACLE ? 'the rest' : `the points above the ${SCORE_ABOVE} lowest`}; KV ${KV === 'auto' ? 'from the catalog where the launch is known, else unlimited' : 'unlimited'}; ${threads} threads\n${describeEnvironment(environment)}\n`,
    );
    for (const variant of variants(ablation)) {
      const started = performance.now();
      if (FORM === 'compare') {
        // Writing the table needs the check set too: the default must hold on both.
        const checkCases = WRITE_FORMS !== undefined && !checkSet ? selectCases(8).filter((c) => !benchmarkLabels.has(c.label)) : null;
        await compareForms(variant, cases, fitPool, pointPool, checkCases);
        continue;
      }
      const { rows, b200 } = await runVariant(
        variant,
        cases,
        fitPool,
        pointPool,
        !checkSet && BACKENDS.includes('vllm'),
        FORM as 'linear' | 'roofline',
      );
      const wall = performance.now() - started;
      const ttftAll = rows.flatMap((r) => r.apes.ttft);
      const itlAll = rows.flatMap((r) => r.apes.itl);
      summary.push({
        variant: variant.name,
        ttft: mean(ttftAll),
        itl: mean(itlAll),
        points: ttftAll.length,
        ttftUnsat: mean(rows.flatMap((r) => r.unsaturated.ttft)),
        itlUnsat: mean(rows.flatMap((r) => r.unsaturated.itl)),
      });
      if (variant.name !== 'defaults') {
        say(
          `\nvariant "${variant.name}": held-out TTFT avg MAPE ${fmt(mean(ttftAll))} %, ITL avg MAPE ${fmt(mean(itlAll))} % over ${ttftAll.length} points (${(wall / 1000).toFixed(0)} s)\n`,
        );
        continue;
      }
      document = {
        rows: rows.map(({ apes: _a, unsaturated: _u, ...r }) => r),
        overall: { ttft: mean(ttftAll), itl: mean(itlAll), points: ttftAll.length },
      };
      const width = Math.max(...rows.map((r) => r.label.length), 10);
      say(
        `\n${'deployment'.padEnd(width)}  ${'stratum'.padEnd(12)}  ${'points (concurrency)'.padEnd(28)}  ${'TTFT avg MAPE %'.padStart(15)}  ${'ITL avg MAPE %'.padStart(14)}  fit s  saturated (measured); reported apart\n`,
      );
      for (const r of rows) {
        const notes = [r.saturated.length > 0 ? `from C=${r.saturated[0]}` : '', r.apart.length > 0 ? `apart: C=${r.apart.join(',')}` : ''];
        say(
          `${r.label.padEnd(width)}  ${r.stratum.padEnd(12)}  ${r.points.padEnd(28)}  ${fmt(r.ttft).padStart(15)}  ${fmt(r.itl).padStart(14)}  ${(r.wallMs / 1000).toFixed(1).padStart(5)}  ${notes.filter((n) => n !== '').join('; ')}\n`,
        );
      }
      const b200Low = lowestConcurrencies(dynosimPoints('hardware'), SCORE_ABOVE);
      const heldOut = (b200?.holdout ?? []).filter((p) => !b200Low.has(Number(p.key.concurrency)));
      for (const source of b200 ? ['mocker', 'aic'] : []) {
        const m = otherSimulatorMape(source, heldOut);
        say(
          `${`  same B200 held-out points, ${source} (other simulator)`.padEnd(width)}  ${''.padEnd(12)}  ${heldOut
            .map((p) => p.key.concurrency)
            .join(',')
            .padEnd(28)}  ${fmt(m.ttft).padStart(15)}  ${fmt(m.itl).padStart(14)}\n`,
        );
      }
      const apartCount = rows.reduce((n, r) => n + r.apart.length, 0);
      if (apartCount > 0) say(`reported apart, not scored (${apartCount} held-out points): ${COLD_STALL_RULE}\n`);
      const ttftUnsat = rows.flatMap((r) => r.unsaturated.ttft);
      const itlUnsat = rows.flatMap((r) => r.unsaturated.itl);
      say(
        `\noverall (point-weighted over ${ttftAll.length} held-out points of ${rows.length} deployments): TTFT avg MAPE ${fmt(mean(ttftAll))} %, ITL avg MAPE ${fmt(mean(itlAll))} %   (targets: 10 %, 5 %)\n`,
      );
      say(
        `without saturated points (measured TTFT growing > ${SATURATION_TTFT_JUMP}x as fast as the concurrency from the next lower point, and above; ${ttftAll.length - ttftUnsat.length} points): TTFT avg MAPE ${fmt(mean(ttftUnsat))} %, ITL avg MAPE ${fmt(mean(itlUnsat))} % over ${ttftUnsat.length} points\n`,
      );
      const byStratum = new Map<string, Row[]>();
      for (const r of rows) byStratum.set(r.stratum, [...(byStratum.get(r.stratum) ?? []), r]);
      say(`by stratum: all held-out points | without saturated points\n`);
      for (const [stratum, list] of byStratum) {
        say(
          `  ${stratum.padEnd(12)} TTFT ${fmt(mean(list.flatMap((r) => r.apes.ttft))).padStart(6)} %  ITL ${fmt(mean(list.flatMap((r) => r.apes.itl))).padStart(6)} %  (${list.flatMap((r) => r.apes.ttft).length} points)` +
            `  |  TTFT ${fmt(mean(list.flatMap((r) => r.unsaturated.ttft))).padStart(6)} %  ITL ${fmt(mean(list.flatMap((r) => r.unsaturated.itl))).padStart(6)} %  (${list.flatMap((r) => r.unsaturated.ttft).length} points)\n`,
        );
      }
      say(`wall time ${(wall / 1000).toFixed(0)} s\n`);
    }
    if (ablation) {
      say('\nsimulated-load options, overall held-out MAPE:\n');
      say(`  ${''.padEnd(42)} all held-out points     | without saturated points\n`);
      for (const s of summary)
        say(
          `  ${s.variant.padEnd(42)} TTFT ${fmt(s.ttft).padStart(6)} %  ITL ${fmt(s.itl).padStart(6)} %  |  TTFT ${fmt(s.ttftUnsat).padStart(6)} %  ITL ${fmt(s.itlUnsat).padStart(6)} %\n`,
        );
    }
  } finally {
    await fitPool.destroy();
    await pointPool.destroy();
    await trajectoryPool?.destroy();
  }
  if (JSON_OUTPUT) {
    const options = { form: FORM, check_set: checkSet, per_stratum: perStratum, threads, argv: process.argv.slice(2) };
    process.stdout.write(`${JSON.stringify({ bench: 'accuracy', environment, options, ...document, variants: summary }, null, 2)}\n`);
  }
}

if (process.argv.includes('--zero-shot')) await zeroShotBench();
else await main();
