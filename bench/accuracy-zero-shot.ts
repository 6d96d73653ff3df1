/**
 * `npm run bench:accuracy -- --zero-shot [--evaluate] [--all-points] [--rounds N] [--threads N] [--json]
 * [--write-efficiency FILE] [--write-accuracy FILE] [--disagg-only [--fitted]] [--max-clients N] [--first-token prefill|decode]
 * [--gap-entries N] [--gap-output-spread S] [--gap-output-tokens N]`: predicts every aggregated and
 * every disaggregated deployment of the silicon sample from the catalog alone and prints how far
 * the predictions are from the measurements (docs/hardware-and-models.md, "Accuracy with no
 * measurement of the deployment").
 *
 * Each point is replayed as it was measured (its clients, its load generator's lengths and
 * request count, the engine's default caps: `SiliconProtocol`). Leave one model out: the
 * efficiency factors that predict a model's points are fitted on every point of the other
 * models. `--evaluate` replays every point at the shipped factors instead (in sample, no fit: a
 * quick look while changing the model). Scope: every single-node point with OSL <= 1024
 * (`--all-points`: every point), saturated ones included; cold-start stalls
 * (`coldStallConcurrencies`) are reported apart with their rule. Prints MAPE of TTFT avg and ITL
 * avg by stratum (backend x dense/MoE), by concurrency band and signed, and by model.
 * `--write-accuracy FILE` writes the per-stratum table that replays quote (`data/accuracy.yaml`).
 *
 * Disaggregated deployments (`mode: disagg` rows: a prefill and a decode pool) are scored after
 * the aggregated ones, as strata of their own (`SGLang MoE disagg`), every point with OSL <= 1024
 * whatever its GPU count (`--all-points`: every point), saturated ones included, cold-start stalls
 * reported apart by the same rule. No disaggregated point informs any factor: each is replayed at
 * the factors that predict its model's aggregated points (leave one model out; with `--evaluate`,
 * the shipped factors). `--disagg-only` skips the aggregated deployments and replays the
 * disaggregated ones at the shipped factors (no fit). A replay's cost grows with its clients
 * (10 x C requests): `--max-clients N` replays only the disaggregated points of N clients or
 * fewer and counts the others. They are replayed with the first token from the decode worker
 * (`engine.kv_transfer.first_token: decode`), as the stacks they were measured behind stream it;
 * `--first-token prefill` replays them with the first token leaving the prefill worker. Points
 * whose worker counts neither the row nor its config entry gives are reported apart
 * (`UNKNOWN_WORKERS_RULE`). `--disagg-only --fitted` then fits every disaggregated deployment
 * that gives its worker counts on its three lowest points and scores the others
 * (`disagg-fit-task.ts`). `--gap-entries N` replays the gap-analysis rows with AIPerf's dataset of N
 * repeated prompts (its default is 100; the campaign does not say) and TensorRT-LLM's block reuse
 * off, as aiconfigurator launched it. `--gap-output-spread S` replays them with output lengths of
 * standard deviation S x OSL, `--gap-output-tokens N` with N tokens whatever the OSL (experiments: the
 * campaign's served lengths are not measured). `--aiperf-frontend MS` (with `--evaluate` or
 * `--disagg-only`) replays the rows measured with AIPerf with a fixed frontend of MS ms instead of
 * the fitted one, `--dense-frontend MS` (with `--evaluate`) the dense models' points with a
 * `frontend_ms` of MS, the rest of their factors as shipped (experiments:
 * docs/hardware-and-models.md, "How the factors are fitted"). The output also splits the points
 * by backend and measuring protocol, at light load and loaded.
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import {
  aggregatedPrediction,
  catalogPoints,
  costliestFirst,
  efficiencyFileText,
  efficiencyTableOf,
  recordPoints,
  replayCost,
  TrajectoryPool,
  userSweepLoad,
  lengthsLoad,
  zeroShot,
  zeroShotPoint,
  type MeasuredPoint,
  type ZeroShotPoint,
} from '../src/calibrate/catalog-calibration.js';
import { accuracyFileText, BACKEND_NAMES, stratumOf, type AccuracyRow, type LengthsKind } from '../src/catalog/accuracy.js';
import {
  coldStallConcurrencies,
  COLD_STALL_MIN_TTFT_MS,
  catalogBaseConfig,
  engineVersionOf,
  readSiliconDeployments,
  recipeLaunch,
  WARMUP_FROM,
  type LeftOutSeries,
} from '../src/calibrate/silicon-deployments.js';
import { measuredPointConfig, measuredPointOf, factorsFor, protocolLengths } from '../src/calibrate/catalog-calibration.js';
import { fitFactors, type FactorFit, type FitPoint } from '../src/calibrate/catalog-fit.js';
import { deploymentOf } from '../src/config/deployment.js';
import { roleOf } from '../src/config/roles.js';
import type { SimLoadOptions } from '../src/calibrate/sim-load.js';
import { resolveSimLoad } from '../src/calibrate/sim-load.js';
import { EFFICIENCY_NAMES, efficiencyFor, loadEfficiencyTable, type EfficiencyFactors } from '../src/catalog/efficiency.js';
import { packageRoot } from '../src/catalog/load.js';
import { writeOutputFile } from '../src/io/write-output.js';
import { benchEnvironment, describeEnvironment, JSON_OUTPUT, say } from './environment.js';
import { WorkerPool } from '../src/sweep/worker-pool.js';
import { fileURLToPath } from 'node:url';
import type { DisaggFitResult, DisaggFitTask } from './disagg-fit-task.js';

const argValue = (name: string, fallback: number) =>
  process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : fallback;
/** `--gap-entries N`: the gap-analysis rows replayed with AIPerf's dataset of N repeated prompts. */
const GAP_ENTRIES = ((n: number) => (Number.isInteger(n) && n > 0 ? n : undefined))(argValue('--gap-entries', NaN));
/** `--gap-output-spread S`: the gap-analysis rows replayed with output lengths of standard deviation S x OSL. */
const GAP_SPREAD = ((x: number) => (x > 0 && x < 1 ? x : undefined))(argValue('--gap-output-spread', NaN));
/** `--gap-output-tokens N`: the gap-analysis rows replayed with output lengths of standard deviation N tokens. */
const GAP_TOKENS = ((x: number) => (x > 0 && x < 1e6 ? x : undefined))(argValue('--gap-output-tokens', NaN));
const argText = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
/**
 * `--measured-link`: the fit holds `link` at each GPU's measured all-reduce share
 * (`interconnect.all_reduce_share` in its catalog file) instead of fitting it.
 */
const MEASURED_LINK = process.argv.includes('--measured-link');

/** Single-node: at most 8 GPUs (4 on GB200/GB300, whose nodes hold 4). */
export const singleNode = (p: { gpus: number; hardware: string }) => p.gpus <= (p.hardware === 'gb200' || p.hardware === 'gb300' ? 4 : 8);

/** The concurrency bands of the report. */
export const BANDS = [
  { name: 'c <= 16', max: 16 },
  { name: '17..64', max: 64 },
  { name: '65..256', max: 256 },
  { name: '> 256', max: Infinity },
] as const;

export interface Errors {
  ttft: number;
  itl: number;
  /** Mean signed error, %: positive = predicted above measured. */
  ttftSigned: number;
  itlSigned: number;
  n: number;
}

export function errorsOf(points: readonly ZeroShotPoint[]): Errors {
  let ttft = 0;
  let itl = 0;
  let ttftSigned = 0;
  let itlSigned = 0;
  for (const p of points) {
    const t = p.predicted.ttftMs / p.measured.ttftMs - 1;
    const l = p.predicted.itlMs / p.measured.itlMs - 1;
    ttft += Math.abs(t);
    itl += Math.abs(l);
    ttftSigned += t;
    itlSigned += l;
  }
  const n = Math.max(1, points.length);
  return {
    ttft: (100 * ttft) / n,
    itl: (100 * itl) / n,
    ttftSigned: (100 * ttftSigned) / n,
    itlSigned: (100 * itlSigned) / n,
    n: points.length,
  };
}

const pct = (v: number) => `${v.toFixed(1).padStart(6)} %`;
const signed = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(1)}`.padStart(6);
const cell = (e: Errors) => `${pct(e.ttft)} ${pct(e.itl)}   ${signed(e.ttftSigned)} ${signed(e.itlSigned)} ${String(e.n).padStart(5)}`;
const HEADER = `${'TTFT'.padStart(8)} ${'ITL'.padStart(8)}   ${'signed'.padStart(6)} ${'(%)'.padStart(6)} ${'n'.padStart(5)}`;

function groupBy<T>(items: readonly T[], key: (item: T) => string): [string, T[]][] {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const LENGTHS: readonly LengthsKind[] = ['fixed', 'drawn'];

/** The aggregated points by stratum and by the lengths their load generator drew (`vLLM dense, fixed`). */
function byLengths(points: readonly ZeroShotPoint[]): [string, ZeroShotPoint[]][] {
  return groupBy(points, (p) => `${stratumOf(p.backend, p.moe)}, ${p.lengths}`);
}

/**
 * A disaggregated row whose worker counts neither its columns nor the config entry it was
 * measured with give: the deployment is not known, so no replay of it is a prediction of it. Such
 * points are replayed with one worker per pool and reported apart with their figures.
 */
export const UNKNOWN_WORKERS_RULE =
  'deployment not known: neither the row nor the config entry it was measured with gives the worker counts (replayed with one prefill and one decode worker)';

/** Why a point is reported apart: a cold-start stall (`coldStallConcurrencies`), or its launch (`PointSetup.apart`). */
export const COLD_STALL_RULE =
  `cold-start stall: measured before ${WARMUP_FROM} (no warm-up), TTFT flat (<= 1.25x) from a concurrency to one at least ` +
  `twice as high while ITL rose >= 1.2x, TTFT >= ${COLD_STALL_MIN_TTFT_MS / 1000} s`;

/** The points of the scope, and those reported apart with the rule that puts them there. */
export function scopedPoints(all: boolean): {
  points: MeasuredPoint[];
  apart: { point: MeasuredPoint; why: string }[];
  skipped: { label: string; reason: string }[];
} {
  const { points, skipped } = catalogPoints(join(packageRoot(), 'data/silicon/aic-silicon-sample.csv'), {
    ...(all ? {} : { maxOsl: 1024 }),
    ...(GAP_ENTRIES !== undefined ? { gapEntries: GAP_ENTRIES } : {}),
    ...(GAP_SPREAD !== undefined ? { gapOutputSpread: GAP_SPREAD } : {}),
    ...(GAP_TOKENS !== undefined ? { gapOutputTokens: GAP_TOKENS } : {}),
  });
  const inScope = points.filter((p) => all || singleNode({ gpus: p.setup.tp * p.setup.attentionDp, hardware: p.hardware }));
  const stalls = new Map<string, Set<number>>();
  for (const p of inScope) if (!stalls.has(p.label)) stalls.set(p.label, new Set(coldStallConcurrencies(p.deployment)));
  const apart: { point: MeasuredPoint; why: string }[] = [];
  const kept: MeasuredPoint[] = [];
  for (const p of inScope) {
    const why = p.setup.apart ?? (stalls.get(p.label)?.has(p.concurrency) === true ? COLD_STALL_RULE : null);
    if (why === null) kept.push(p);
    else apart.push({ point: p, why });
  }
  return { points: kept, apart, skipped };
}

/** The disaggregated points of the scope, those reported apart, and what the reader or the catalog could not take. */
export function disaggPoints(
  all: boolean,
  maxClients = Infinity,
): {
  points: MeasuredPoint[];
  apart: { point: MeasuredPoint; why: string }[];
  skipped: { label: string; reason: string }[];
  leftOut: LeftOutSeries[];
  /** Points of the sample outside the scope (OSL > 1024), when not `all`. */
  outOfScope: number;
  /** Points above `maxClients` clients, not replayed. */
  overCap: number;
} {
  const leftOut: LeftOutSeries[] = [];
  const deployments = readSiliconDeployments(join(packageRoot(), 'data/silicon/aic-silicon-sample.csv'), 1, { mode: 'disagg', leftOut });
  const points: MeasuredPoint[] = [];
  const apart: { point: MeasuredPoint; why: string }[] = [];
  const skipped: { label: string; reason: string }[] = [];
  let outOfScope = 0;
  let overCap = 0;
  for (const d of deployments) {
    if (!all && d.osl > 1024) {
      outOfScope += d.points.length;
      continue;
    }
    const stalls = new Set(coldStallConcurrencies(d));
    d.points.forEach((p, i) => {
      const concurrency = Number(p.key.concurrency);
      if (concurrency > maxClients) {
        overCap++;
        return;
      }
      try {
        catalogBaseConfig(d, undefined, recipeLaunch(d.info[i].recipe, d.isl));
      } catch (err) {
        skipped.push({ label: `${d.label} c=${concurrency}`, reason: err instanceof Error ? err.message.split('\n')[0] : String(err) });
        return;
      }
      // Each pool's flags from the recipe the row's config entry names (data/silicon/disagg-flags.csv);
      // without one, the engines' defaults.
      const point = measuredPointOf(d, i, {
        tp: d.tp,
        attentionDp: d.attentionDp,
        expert: d.expert,
        launch: recipeLaunch(d.info[i].recipe, d.isl),
        apart: null,
      });
      const speculative = d.info[i].configWorkers?.speculative ?? 'none';
      if (stalls.has(concurrency)) apart.push({ point, why: COLD_STALL_RULE });
      else if (d.pools?.decode.workersFrom === 'unknown') apart.push({ point, why: UNKNOWN_WORKERS_RULE });
      else if (speculative !== 'none')
        apart.push({ point, why: `measured with speculative decoding (${speculative}), which the replay does not simulate` });
      else points.push(point);
    });
  }
  return { points, apart, skipped, leftOut, outOfScope, overCap };
}

/** `--first-token prefill|decode`: the disaggregated points replayed with that `engine.kv_transfer.first_token`. */
const FIRST_TOKEN = ((value) => {
  if (value !== undefined && value !== 'prefill' && value !== 'decode') throw new Error(`--first-token ${value}: prefill or decode`);
  return value;
})(argText('--first-token'));

/** Replays disaggregated points at the factors `factorsOf` gives (their config has a prefill and a decode pool). */
async function replayDisagg(
  pool: TrajectoryPool,
  list: readonly MeasuredPoint[],
  factorsOf: (p: MeasuredPoint) => EfficiencyFactors,
  load: SimLoadOptions,
): Promise<ZeroShotPoint[]> {
  return costliestFirst(list, replayCost, async (p) => {
    const config = measuredPointConfig(p, factorsOf(p), load);
    if (FIRST_TOKEN !== undefined) {
      config.engine.kv_transfer = {
        ...(config.engine.kv_transfer ?? { latency_ms: 0, max_local_prefill_tokens: 0 }),
        first_token: FIRST_TOKEN,
      };
    }
    const decode = deploymentOf(config.engine, roleOf(config.engine, 'decode')).deployment;
    if (decode === null) throw new Error(`${p.label}: not in the catalog`);
    const gpus = (['prefill', 'decode'] as const).reduce((sum, role) => {
      const q = roleOf(config.engine, role).parallelism;
      return sum + q.replicas * q.tensor * q.attention_data;
    }, 0);
    const t = await pool.record(config);
    return zeroShotPoint(p, { ttftMs: t.ttftMs ?? 0, itlMs: t.itlMs ?? 0 }, gpus, decode.model.architecture.moe !== undefined);
  });
}

/**
 * Leave one model out for the disaggregated points: each model's points at the factors fitted on
 * the aggregated points of the other models (from the trajectories of the fit on all of them, as
 * `zeroShot` does, whose fits `done` holds and are taken as they are); a model with no aggregated
 * point takes the fit on all of them.
 */
function leftOutFits(
  all: FactorFit,
  recorded: readonly FitPoint[],
  models: readonly string[],
  done: ReadonlyMap<string, FactorFit>,
): Map<string, FactorFit> {
  const fits = new Map<string, FactorFit>();
  for (const model of models) {
    const known = done.get(model);
    if (known !== undefined) {
      fits.set(model, known);
      continue;
    }
    const others = recorded.filter((p) => p.model !== model);
    fits.set(model, others.length === recorded.length ? all : fitFactors(others, all.layout, { start: all.x }));
  }
  return fits;
}

/** The disaggregated strata and their breakdowns (every point of the scope, saturated ones included). */
function reportDisagg(
  predictions: readonly ZeroShotPoint[],
  points: readonly MeasuredPoint[],
  apart: readonly { why: string; p: ZeroShotPoint }[],
  info: {
    skipped: readonly { label: string; reason: string }[];
    leftOut: readonly LeftOutSeries[];
    outOfScope: number;
    overCap: number;
  },
): void {
  const strata = groupBy(predictions, (p) => stratumOf(p.backend, p.moe, true));
  say(
    `\ndisaggregated deployments: ${predictions.length} points of ${new Set(predictions.map((p) => p.label)).size} deployments` +
      ` (${apart.length} reported apart, ${info.skipped.length} not buildable from the catalog, ${info.outOfScope} with OSL > 1024 out of scope,${info.overCap > 0 ? ` ${info.overCap} above --max-clients not replayed,` : ''}` +
      ` ${info.leftOut.reduce((n, l) => n + l.lines.length, 0)} rows repeating other rows)\n`,
  );
  say(`by stratum (MAPE, then mean signed error: + = predicted above measured)\n${'stratum'.padEnd(22)}${HEADER}\n`);
  for (const [name, list] of strata) say(`${name.padEnd(22)}${cell(errorsOf(list))}\n`);
  say(`${'all disaggregated'.padEnd(22)}${cell(errorsOf(predictions))}\n`);
  const byPoint = new Map(points.map((p, i) => [p, predictions[i]]));
  const split = (name: string, test: (p: MeasuredPoint) => boolean) => {
    const list = points.filter(test).map((p) => byPoint.get(p) as ZeroShotPoint);
    if (list.length > 0) say(`  ${name.padEnd(40)}${cell(errorsOf(list))}\n`);
  };
  const given = points.map((p, i) => [p, predictions[i]] as const).filter(([p]) => p.deployment.pools?.decode.workersGiven === true);
  say(`by stratum, rows that give their worker counts\n`);
  for (const [name, list] of groupBy(
    given.map(([, q]) => q),
    (q) => stratumOf(q.backend, q.moe, true),
  )) {
    say(`  ${name.padEnd(40)}${cell(errorsOf(list))}\n`);
  }
  say(`by what the rows say of the deployment\n`);
  // Where the worker counts come from: the row itself, InferenceX's master config
  // (data/silicon/disagg-workers.csv), or nowhere (one worker per pool assumed).
  split('worker counts given by the row', (p) => p.deployment.pools?.decode.workersFrom === 'row');
  split('worker counts from InferenceX config', (p) => p.deployment.pools?.decode.workersFrom === 'inferencex-config');
  split('worker counts not known (1 + 1 assumed)', (p) => p.deployment.pools?.decode.workersFrom === 'unknown');
  // Each pool's launch flags (data/silicon/disagg-flags.csv, disagg-db-flags.csv), or the defaults.
  split('launch flags known (recipe, name, settings)', (p) => p.setup.launch.pools !== undefined);
  split("launch flags not known (engines' defaults)", (p) => p.setup.launch.pools === undefined);
  split('series is one curve', (p) => p.deployment.mixed == null);
  split('series mixes runs (workers not given)', (p) => p.deployment.mixed != null);
  say(`by concurrency band\n`);
  for (const band of BANDS) {
    const lower = BANDS[BANDS.indexOf(band) - 1]?.max ?? 0;
    split(band.name, (p) => p.concurrency > lower && p.concurrency <= band.max);
  }
  say(`by model, GPU\n`);
  for (const [key, list] of groupBy(predictions, (p) => `${p.model} ${p.hardware}`)) say(`  ${key.padEnd(40)}${cell(errorsOf(list))}\n`);
  if (process.argv.includes('--points')) {
    say('\nevery disaggregated point (label, clients, measured and predicted TTFT / ITL ms)\n');
    for (const p of [...predictions].sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : a.concurrency - b.concurrency))) {
      say(
        `  ${p.label.padEnd(96)} c=${String(p.concurrency).padEnd(5)} ${p.measured.ttftMs.toFixed(0).padStart(7)} ${p.predicted.ttftMs.toFixed(0).padStart(7)}   ${p.measured.itlMs.toFixed(1).padStart(6)} ${p.predicted.itlMs.toFixed(1).padStart(6)}\n`,
      );
    }
  }
  say(`reported apart (${apart.length} points), by rule:\n`);
  for (const [why, list] of groupBy(apart, (x) => x.why)) {
    say(`  ${why}: ${list.length} points\n    ${'as replayed'.padEnd(36)}${cell(errorsOf(list.map((x) => x.p)))}\n`);
    for (const { p } of list) {
      say(
        `    ${p.label.padEnd(96)} c=${String(p.concurrency).padEnd(5)} TTFT measured ${p.measured.ttftMs.toFixed(0).padStart(7)} predicted ${p.predicted.ttftMs.toFixed(0).padStart(7)} ms\n`,
      );
    }
  }
  say(`not buildable from the catalog (${info.skipped.length} points), by reason:\n`);
  for (const [reason, list] of groupBy(info.skipped, (x) => x.reason)) {
    say(`  ${list.length} x ${reason}\n`);
    // With --points, which points: the sample's columns for them are what the catalog could not build.
    if (process.argv.includes('--points')) for (const { label } of list) say(`    ${label}\n`);
  }
  say(`rows not read as points (${info.leftOut.reduce((n, l) => n + l.lines.length, 0)}), by reason:\n`);
  for (const [reason, list] of groupBy(info.leftOut, (x) => x.reason.replace(/ as .*/, ' as another series'))) {
    say(`  ${list.reduce((n, l) => n + l.lines.length, 0)} rows of ${list.length} series: ${reason}\n`);
  }
  const worst = strata.reduce((m, [, list]) => Math.max(m, errorsOf(list).ttft), 0);
  const worstItl = strata.reduce((m, [, list]) => Math.max(m, errorsOf(list).itl), 0);
  say(`targets: every disaggregated stratum TTFT <= 30 %, ITL <= 15 % (worst stratum ${worst.toFixed(1)} / ${worstItl.toFixed(1)} %)\n`);
}

/** Training points of a fitted disaggregated deployment: its lowest concurrencies. */
const FIT_TRAIN_POINTS = 3;

/**
 * `--disagg-only --fitted`: every disaggregated deployment whose worker counts are known (from its
 * row or InferenceX's config) and that has more points than FIT_TRAIN_POINTS, fitted on its FIT_TRAIN_POINTS lowest concurrencies
 * (`disagg-fit-task.ts`: the two pools' pass-time scales and the frontend delay, from its
 * zero-shot factors) and scored on the others, saturated ones included.
 */
async function fittedDisagg(
  points: readonly MeasuredPoint[],
  factorsOf: (p: MeasuredPoint) => EfficiencyFactors,
  load: SimLoadOptions,
  threads: number,
): Promise<void> {
  const series = groupBy(
    points.filter((p) => (p.deployment.pools?.decode.workersFrom ?? 'unknown') !== 'unknown'),
    (p) => p.label,
  )
    .map(([label, list]) => [label, [...list].sort((a, b) => a.concurrency - b.concurrency)] as const)
    .filter(([, list]) => list.length > FIT_TRAIN_POINTS);
  const pool = new WorkerPool<DisaggFitTask, DisaggFitResult>({
    filename: fileURLToPath(new URL('./disagg-fit-task.js', import.meta.url)),
    threads,
  });
  let fits: DisaggFitResult[];
  try {
    fits = await Promise.all(
      series.map(([, list]) => pool.run({ points: [...list], train: FIT_TRAIN_POINTS, factors: factorsOf(list[0]), load })),
    );
  } finally {
    await pool.destroy();
  }
  const scored: ZeroShotPoint[] = [];
  say(
    `\nfitted on the ${FIT_TRAIN_POINTS} lowest points (prefill pass-time scale, decode fixed and per-batch scales, frontend delay), every other point scored: ` +
      `${series.length} deployments with known worker counts and more than ${FIT_TRAIN_POINTS} points\n`,
  );
  series.forEach(([label, list], k) => {
    const fit = fits[k];
    const engine = measuredPointConfig(list[0], factorsOf(list[0]), load).engine;
    const moe = deploymentOf(engine, roleOf(engine, 'decode')).deployment?.model.architecture.moe !== undefined;
    say(
      `  ${label.padEnd(96)} prefill x${fit.prefillScale.toFixed(2)} decode fixed x${fit.decodeFixedScale.toFixed(2)} per batch x${fit.decodeBatchScale.toFixed(2)} frontend ${fit.frontendMs.toFixed(0)} ms (${fit.iterations} iterations)\n`,
    );
    list.forEach((p, i) => {
      if (process.argv.includes('--points')) {
        const q = fit.predicted[i];
        say(
          `    c=${String(p.concurrency).padEnd(6)}${i < FIT_TRAIN_POINTS ? 'train' : 'held '} TTFT ${p.measured.ttftMs.toFixed(0).padStart(7)} -> ${q.ttftMs.toFixed(0).padStart(7)} ms` +
            `  ITL ${p.measured.itlMs.toFixed(2).padStart(7)} -> ${q.itlMs.toFixed(2).padStart(7)} ms\n`,
        );
      }
      if (i < FIT_TRAIN_POINTS) return;
      scored.push({
        label,
        model: p.model,
        hardware: p.hardware,
        backend: p.backend,
        moe,
        gpus: 0,
        lengths: protocolLengths(p.deployment.protocol),
        source: p.deployment.protocol.source,
        concurrency: p.concurrency,
        measured: p.measured,
        predicted: fit.predicted[i],
      });
    });
  });
  say(`by stratum, held-out points (MAPE, then mean signed error)\n${'stratum'.padEnd(24)}${HEADER}\n`);
  const strata = groupBy(scored, (p) => stratumOf(p.backend, p.moe, true));
  for (const [name, list] of strata) say(`${name.padEnd(24)}${cell(errorsOf(list))}\n`);
  say(`${'all'.padEnd(24)}${cell(errorsOf(scored))}\n`);
  say('targets: fitted on three points, every disaggregated stratum TTFT <= 10 %, ITL <= 5 %\n');
}

/**
 * `--dense-frontend MS`: a dense model's factors with `frontend_ms` at MS, a mixture-of-experts
 * model's (or any, without the option) as they are.
 */
export function withDenseFrontend(factors: EfficiencyFactors, moe: boolean, ms: number | undefined): EfficiencyFactors {
  return ms === undefined || moe ? factors : { ...factors, frontend_ms: ms };
}

/**
 * A frontend experiment's option (`--aiperf-frontend MS`, `--dense-frontend MS`): its ms, or
 * undefined when absent; an error when the run cannot take it (it replays at the shipped
 * factors, so only with `needs`) or it is not a number of ms >= 0.
 */
function frontendOption(name: string, allowed: boolean, needs: string): number | undefined {
  const text = argText(name);
  if (text === undefined) return undefined;
  if (!allowed) throw new Error(`${name} MS replays at the shipped factors: run it with ${needs}`);
  const ms = Number(text);
  if (!(ms >= 0)) throw new Error(`${name} ${text}: expected a number of ms >= 0`);
  return ms;
}

export async function zeroShotBench(): Promise<void> {
  const started = performance.now();
  const environment = benchEnvironment();
  const threads = argValue('--threads', availableParallelism());
  const evaluate = process.argv.includes('--evaluate');
  const disaggOnly = process.argv.includes('--disagg-only');
  if (disaggOnly && argText('--write-accuracy') !== undefined) {
    throw new Error('--write-accuracy needs the aggregated deployments too: run without --disagg-only');
  }
  const allPoints = process.argv.includes('--all-points');
  const { points, apart, skipped } = disaggOnly ? { points: [], apart: [], skipped: [] } : scopedPoints(allPoints);
  // `--max-clients N`: replay only the disaggregated points of N clients or fewer (the cost of a
  // replay grows with its clients; points above are counted, not scored).
  const disagg = disaggPoints(allPoints, argValue('--max-clients', Infinity));
  const aiperfFrontend = frontendOption('--aiperf-frontend', evaluate || disaggOnly, '--evaluate (or --disagg-only)');
  const denseFrontend = frontendOption('--dense-frontend', evaluate, '--evaluate');
  const load = resolveSimLoad({
    ...(process.argv.includes('--admit-all') ? { admission: 'admit-all' as const } : {}),
    ...(aiperfFrontend !== undefined ? { aiperfFrontendMs: aiperfFrontend } : {}),
  });
  const models = new Set(points.map((p) => p.model)).size;
  say(
    disaggOnly
      ? `zero-shot accuracy of the disaggregated deployments alone: ${disagg.points.length} points of ${new Set(disagg.points.map((p) => p.label)).size} deployments, replayed at the shipped factors (fitted on aggregated points only); each point as measured; ${threads} threads\n${describeEnvironment(environment)}\n`
      : `zero-shot accuracy: ${points.length} points of ${new Set(points.map((p) => p.label)).size} aggregated deployments, ${models} models` +
          ` (${apart.length} points reported apart${skipped.length > 0 ? `; ${skipped.length} deployments not buildable from the catalog` : ''});` +
          ` ${evaluate ? 'replayed at the shipped factors (in sample, no fit)' : 'leave one model out'}; each point as measured` +
          `${GAP_ENTRIES !== undefined ? ` (gap-analysis rows: a dataset of ${GAP_ENTRIES} prompts)` : ''}` +
          `${GAP_SPREAD !== undefined ? ` (gap-analysis rows: output lengths of standard deviation ${GAP_SPREAD} x OSL)` : ''}` +
          `${GAP_TOKENS !== undefined ? ` (gap-analysis rows: output lengths of standard deviation ${GAP_TOKENS} tokens)` : ''}${MEASURED_LINK ? " (link held at each GPU's measured all-reduce share)" : ''}` +
          `${aiperfFrontend !== undefined ? ` (rows measured with AIPerf: frontend ${aiperfFrontend} ms)` : ''}` +
          `${denseFrontend !== undefined ? ` (dense models: frontend_ms ${denseFrontend})` : ''}; ${threads} threads\n` +
          `${describeEnvironment(environment)}\n`,
  );
  const pool = new TrajectoryPool(threads);
  let predictions: ZeroShotPoint[];
  let apartPredictions: ZeroShotPoint[];
  let userFixed: ZeroShotPoint[];
  let userDrawn: ZeroShotPoint[];
  let lengthsFixed: ZeroShotPoint[];
  let lengthsDrawn: ZeroShotPoint[];
  // `--factor NAME=VALUE` (repeatable): an efficiency factor overridden for every pair.
  const overrides: Partial<EfficiencyFactors> = {};
  process.argv.forEach((arg, i) => {
    if (arg !== '--factor') return;
    const [name, value] = String(process.argv[i + 1]).split('=');
    if (!(EFFICIENCY_NAMES as readonly string[]).includes(name) || !Number.isFinite(Number(value)))
      throw new Error(`--factor ${process.argv[i + 1]}: NAME=VALUE with NAME one of ${EFFICIENCY_NAMES.join(', ')}`);
    overrides[name as keyof EfficiencyFactors] = Number(value);
  });
  // `--efficiency FILE`: replay at the factors of another table than the shipped one.
  const efficiencyPath = argText('--efficiency');
  const table = efficiencyPath !== undefined ? loadEfficiencyTable(efficiencyPath) : undefined;
  const shipped = (p: MeasuredPoint) =>
    withDenseFrontend(
      { ...efficiencyFor(p.hardware, p.backend, table, engineVersionOf(p.deployment)).factors, ...overrides },
      p.deployment.moe,
      denseFrontend,
    );
  // The dense vLLM deployments replayed as a user writes a zero-shot sweep of them (userSweepLoad):
  // fixed lengths (the synthetic source's default, AIPerf's), then lengths drawn in [0.8 L, L].
  const userPoints = points.filter((p) => p.backend === 'vllm' && !p.deployment.moe);
  // Each point of `list` replayed at the factors `factorsOf` gives, as `how` says.
  const replayWith = async (list: readonly MeasuredPoint[], factorsOf: (p: MeasuredPoint) => EfficiencyFactors, how: SimLoadOptions) =>
    (await recordPoints(pool, list, factorsOf, how)).map((r, i) => aggregatedPrediction(list[i], r));
  const replayAtShipped = (list: readonly MeasuredPoint[]) => replayWith(list, shipped, load);
  let disaggPredictions: ZeroShotPoint[];
  let disaggApart: ZeroShotPoint[];
  // The disaggregated points scored, then those reported apart, at the factors `factorsOf` gives.
  const replayDisaggAll = (factorsOf: (p: MeasuredPoint) => EfficiencyFactors) =>
    Promise.all([
      replayDisagg(pool, disagg.points, factorsOf, load),
      replayDisagg(
        pool,
        disagg.apart.map((a) => a.point),
        factorsOf,
        load,
      ),
    ]);
  // Fixed lengths, then lengths drawn in [0.8 L, L]: as a user writes the sweep, or with each point's launch.
  const replayAsUser = (factorsOf: (p: MeasuredPoint) => EfficiencyFactors) =>
    Promise.all([1, 0.8].map((ratio) => replayWith(userPoints, factorsOf, userSweepLoad(ratio))));
  const replayWithLengths = (factorsOf: (p: MeasuredPoint) => EfficiencyFactors) =>
    Promise.all([1, 0.8].map((ratio) => replayWith(points, factorsOf, lengthsLoad(ratio))));
  try {
    if (disaggOnly) {
      [disaggPredictions, disaggApart] = await replayDisaggAll(shipped);
      reportDisagg(
        disaggPredictions,
        disagg.points,
        disagg.apart.map((a, i) => ({ why: a.why, p: disaggApart[i] })),
        disagg,
      );
      if (process.argv.includes('--fitted')) await fittedDisagg(disagg.points, shipped, load, threads);
      say(`wall ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
      return;
    }
    if (evaluate) {
      [predictions, [disaggPredictions, disaggApart], apartPredictions, [userFixed, userDrawn], [lengthsFixed, lengthsDrawn]] =
        await Promise.all([
          replayAtShipped(points),
          replayDisaggAll(shipped),
          replayAtShipped(apart.map((a) => a.point)),
          replayAsUser(shipped),
          replayWithLengths(shipped),
        ]);
    } else {
      const result = await zeroShot(pool, points, load, {
        rounds: argValue('--rounds', 2),
        log: (line) => say(`  ${line}\n`),
        measuredLink: MEASURED_LINK,
      });
      predictions = result.predictions;
      const write = argText('--write-efficiency');
      if (write !== undefined) {
        writeOutputFile(
          write,
          efficiencyFileText(efficiencyTableOf(result.all, result.recorded), {
            points,
            rounds: result.rounds,
            load,
            source: 'data/silicon/aic-silicon-sample.csv',
            command: `\`npm run bench:accuracy -- --zero-shot --rounds ${result.rounds.length} --write-efficiency ${write}\` (every point in the bench's scope: single-node, OSL <= 1024)`,
          }),
        );
        say(`wrote ${write}\n`);
      }
      const fits = leftOutFits(
        result.all,
        result.recorded,
        [...new Set([...disagg.points, ...disagg.apart.map((a) => a.point), ...points].map((p) => p.model))],
        result.leftOut,
      );
      const leftOutFactors = (p: MeasuredPoint) => factorsFor(fits.get(p.model) as FactorFit, p.hardware, p.backend, p.family);
      [[disaggPredictions, disaggApart], apartPredictions, [userFixed, userDrawn], [lengthsFixed, lengthsDrawn]] = await Promise.all([
        replayDisaggAll(leftOutFactors),
        replayAtShipped(apart.map((a) => a.point)),
        replayAsUser(leftOutFactors),
        replayWithLengths(leftOutFactors),
      ]);
    }
  } finally {
    await pool.destroy();
  }

  const strata = groupBy(predictions, (p) => stratumOf(p.backend, p.moe));
  say(`\nby stratum (MAPE, then mean signed error: + = predicted above measured)\n${'stratum'.padEnd(16)}${HEADER}\n`);
  for (const [name, list] of strata) say(`${name.padEnd(16)}${cell(errorsOf(list))}\n`);
  const overall = errorsOf(predictions);
  say(`${'overall'.padEnd(16)}${cell(overall)}\n`);
  // The lengths the load generator drew: a replay of a closed loop quotes the row of its own (data/accuracy.yaml).
  say(`\nby stratum and lengths (fixed: every request the same lengths; drawn: spread)\n${'stratum'.padEnd(16)}${HEADER}\n`);
  for (const [name, list] of byLengths(predictions)) say(`${name.padEnd(16)}${cell(errorsOf(list))}\n`);
  say(`\nby concurrency band\n${'band'.padEnd(16)}${HEADER}\n`);
  for (const band of BANDS) {
    const lower = BANDS[BANDS.indexOf(band) - 1]?.max ?? 0;
    const list = predictions.filter((p) => p.concurrency > lower && p.concurrency <= band.max);
    if (list.length > 0) say(`${band.name.padEnd(16)}${cell(errorsOf(list))}\n`);
  }
  // Where the time missing at light load sits: by backend and by how the rows were measured.
  say(
    `\nby backend and measuring protocol (InferenceX: vLLM's benchmark client against the engine's own server; ` +
      `AIPerf: aiconfigurator's collection, through Dynamo's frontend), all points, 8 clients or fewer, 65 or more\n${'rows'.padEnd(30)}${HEADER}\n`,
  );
  const PROTOCOL_NAMES: Record<ZeroShotPoint['source'], string> = {
    inferencex: 'InferenceX',
    'gap-analysis': 'AIPerf',
    unknown: 'unknown',
  };
  for (const [name, list] of groupBy(predictions, (p) => `${BACKEND_NAMES[p.backend] ?? p.backend}, ${PROTOCOL_NAMES[p.source]}`)) {
    say(`${name.padEnd(30)}${cell(errorsOf(list))}\n`);
    for (const [band, keep] of [
      ['  <= 8 clients', (p: ZeroShotPoint) => p.concurrency <= 8],
      ['  >= 65 clients', (p: ZeroShotPoint) => p.concurrency >= 65],
    ] as const) {
      const some = list.filter(keep);
      if (some.length > 0) say(`${band.padEnd(30)}${cell(errorsOf(some))}\n`);
    }
  }
  const asUser = { fixed: errorsOf(userFixed), drawn: errorsOf(userDrawn) };
  say(
    `\nthe dense vLLM deployments as a user writes a zero-shot sweep of them (catalog model and GPU, the engine's ` +
      `default caps, KV from memory, 10 x C requests${evaluate ? '' : '; left one model out'})\n${'lengths'.padEnd(16)}${HEADER}\n`,
  );
  say(`${'fixed (AIPerf)'.padEnd(16)}${cell(asUser.fixed)}\n${'in [0.8 L, L]'.padEnd(16)}${cell(asUser.drawn)}\n`);
  // Every point replayed with the lengths of a synthetic source, whatever its load generator drew
  // (each with its launch): the `all_points` rows of data/accuracy.yaml, which a run of those lengths quotes.
  const replayedWith = [
    ['fixed', lengthsFixed],
    ['drawn', lengthsDrawn],
  ] as const;
  say(
    `\nevery point replayed with the same lengths, whatever its load generator drew (its launch, its clients; ` +
      `fixed: every request the requested lengths; drawn: in [0.8 L, L])\n${'stratum'.padEnd(28)}${HEADER}\n`,
  );
  for (const [kind, list] of replayedWith) {
    for (const [name, group] of groupBy(list, (p) => stratumOf(p.backend, p.moe)))
      say(`${`${name}, ${kind}`.padEnd(28)}${cell(errorsOf(group))}\n`);
  }
  if (process.argv.includes('--points')) {
    say('\nevery point (label, clients, measured and predicted TTFT / ITL ms)\n');
    for (const p of [...predictions].sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : a.concurrency - b.concurrency))) {
      say(
        `  ${p.label.padEnd(72)} c=${String(p.concurrency).padEnd(5)} ${p.measured.ttftMs.toFixed(0).padStart(7)} ${p.predicted.ttftMs.toFixed(0).padStart(7)}   ${p.measured.itlMs.toFixed(1).padStart(6)} ${p.predicted.itlMs.toFixed(1).padStart(6)}\n`,
      );
    }
  }
  say(`\nby model${evaluate ? '' : ' (left out of the fit that predicts it)'}\n`);
  for (const [model, list] of groupBy(predictions, (p) => p.model)) say(`  ${model.padEnd(38)}${cell(errorsOf(list))}\n`);
  say(`\nreported apart (${apartPredictions.length} points), by rule:\n`);
  const byRule = groupBy(
    apart.map((a, i) => ({ why: a.why, p: apartPredictions[i] })),
    (x) => x.why,
  );
  for (const [why, list] of byRule) {
    say(`  ${why}: ${list.length} points\n`);
    for (const { p } of list) {
      say(
        `    ${p.label.padEnd(70)} c=${String(p.concurrency).padEnd(5)} TTFT measured ${p.measured.ttftMs.toFixed(0).padStart(7)} predicted ${p.predicted.ttftMs.toFixed(0).padStart(7)} ms\n`,
      );
    }
  }
  const worst = strata.reduce((m, [, list]) => Math.max(m, errorsOf(list).ttft), 0);
  const worstItl = strata.reduce((m, [, list]) => Math.max(m, errorsOf(list).itl), 0);
  reportDisagg(
    disaggPredictions,
    disagg.points,
    disagg.apart.map((a, i) => ({ why: a.why, p: disaggApart[i] })),
    disagg,
  );
  say(
    `\ntargets (aggregated): overall TTFT <= 25 %, ITL <= 12 %; every stratum TTFT <= 40 %, ITL <= 20 % ` +
      `(worst stratum ${worst.toFixed(1)} / ${worstItl.toFixed(1)} %); a dense vLLM sweep as a user writes it TTFT <= 15 %, ITL <= 10 % ` +
      `(fixed lengths ${asUser.fixed.ttft.toFixed(1)} / ${asUser.fixed.itl.toFixed(1)} %); wall ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
  );
  const writeAccuracy = argText('--write-accuracy');
  if (writeAccuracy !== undefined) {
    const disaggStrata = groupBy(disaggPredictions, (p) => stratumOf(p.backend, p.moe, true));
    const row = (stratum: string, list: readonly ZeroShotPoint[], lengths?: LengthsKind, allPoints = false): AccuracyRow => {
      const e = errorsOf(list);
      return {
        stratum,
        ...(lengths !== undefined ? { lengths } : {}),
        ...(allPoints ? { all_points: true as const } : {}),
        ttft_mape: e.ttft,
        itl_mape: e.itl,
        points: e.n,
        deployments: new Set(list.map((p) => p.label)).size,
      };
    };
    const rows: AccuracyRow[] = [
      ...strata.flatMap(([stratum, list]) => [
        row(stratum, list),
        ...LENGTHS.flatMap((lengths) => {
          const narrowed = list.filter((p) => p.lengths === lengths);
          return narrowed.length > 0 ? [row(stratum, narrowed, lengths)] : [];
        }),
        ...replayedWith.flatMap(([lengths, list]) => {
          const group = list.filter((p) => stratumOf(p.backend, p.moe) === stratum);
          return group.length > 0 ? [row(stratum, group, lengths, true)] : [];
        }),
      ]),
      ...disaggStrata.map(([stratum, list]) => row(stratum, list)),
    ];
    writeOutputFile(writeAccuracy, accuracyFileText(rows, { basis: evaluate ? 'in-sample' : 'leave-one-model-out', overall }));
    say(`wrote ${writeAccuracy}\n`);
  }
  if (JSON_OUTPUT) {
    process.stdout.write(
      `${JSON.stringify(
        {
          bench: 'accuracy-zero-shot',
          mode: evaluate ? 'evaluate' : 'leave-one-model-out',
          environment,
          strata: Object.fromEntries(strata.map(([k, list]) => [k, errorsOf(list)])),
          bands: Object.fromEntries(
            BANDS.map((band, i) => [
              band.name,
              errorsOf(predictions.filter((p) => p.concurrency > (BANDS[i - 1]?.max ?? 0) && p.concurrency <= band.max)),
            ]),
          ),
          overall,
          apart: apartPredictions.map((p, i) => ({ ...p, why: apart[i].why })),
          disaggregated: {
            strata: Object.fromEntries(
              groupBy(disaggPredictions, (p) => stratumOf(p.backend, p.moe, true)).map(([k, list]) => [k, errorsOf(list)]),
            ),
            overall: errorsOf(disaggPredictions),
            apart: disaggApart.map((p, i) => ({ ...p, why: disagg.apart[i].why })),
            skipped: disagg.skipped,
          },
        },
        null,
        2,
      )}\n`,
    );
  }
}
