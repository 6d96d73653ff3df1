/**
 * `npm run bench:accuracy -- --zero-shot [--evaluate] [--all-points] [--rounds N] [--threads N] [--json]
 * [--write-efficiency FILE] [--write-accuracy FILE]`: predicts every aggregated deployment of the
 * silicon sample from the catalog alone and prints how far the predictions are from the
 * measurements (docs/hardware-and-models.md, "Accuracy with no measurement of the deployment").
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
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import {
  catalogPoints,
  efficiencyFileText,
  efficiencyTableOf,
  recordPoints,
  replayedMetrics,
  TrajectoryPool,
  zeroShot,
  type MeasuredPoint,
  type ZeroShotPoint,
} from '../src/calibrate/catalog-calibration.js';
import { accuracyFileText, stratumOf, type AccuracyRow } from '../src/catalog/accuracy.js';
import { coldStallConcurrencies, COLD_STALL_MIN_TTFT_MS, engineVersionOf, WARMUP_FROM } from '../src/calibrate/silicon-deployments.js';
import { resolveSimLoad } from '../src/calibrate/sim-load.js';
import { EFFICIENCY_NAMES, efficiencyFor, loadEfficiencyTable, type EfficiencyFactors } from '../src/catalog/efficiency.js';
import { packageRoot } from '../src/catalog/load.js';
import { writeOutputFile } from '../src/io/write-output.js';
import { benchEnvironment, describeEnvironment, JSON_OUTPUT, say } from './environment.js';

const argValue = (name: string, fallback: number) =>
  process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : fallback;
const argText = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);

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
  const { points, skipped } = catalogPoints(join(packageRoot(), 'data/silicon/aic-silicon-sample.csv'), all ? {} : { maxOsl: 1024 });
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

export async function zeroShotBench(): Promise<void> {
  const started = performance.now();
  const environment = benchEnvironment();
  const threads = argValue('--threads', availableParallelism());
  const evaluate = process.argv.includes('--evaluate');
  const { points, apart, skipped } = scopedPoints(process.argv.includes('--all-points'));
  const load = resolveSimLoad(process.argv.includes('--admit-all') ? { admission: 'admit-all' } : {});
  const models = new Set(points.map((p) => p.model)).size;
  say(
    `zero-shot accuracy: ${points.length} points of ${new Set(points.map((p) => p.label)).size} aggregated deployments, ${models} models` +
      ` (${apart.length} points reported apart${skipped.length > 0 ? `; ${skipped.length} deployments not buildable from the catalog` : ''});` +
      ` ${evaluate ? 'replayed at the shipped factors (in sample, no fit)' : 'leave one model out'}; each point as measured; ${threads} threads\n` +
      `${describeEnvironment(environment)}\n`,
  );
  const pool = new TrajectoryPool(threads);
  let predictions: ZeroShotPoint[];
  let apartPredictions: ZeroShotPoint[];
  const toPrediction = (p: MeasuredPoint, predicted: { ttftMs: number; itlMs: number }, gpus: number, moe: boolean): ZeroShotPoint => ({
    label: p.label,
    model: p.model,
    hardware: p.hardware,
    backend: p.backend,
    moe,
    gpus,
    concurrency: p.concurrency,
    measured: p.measured,
    predicted,
  });
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
  const replayAtShipped = async (list: readonly MeasuredPoint[]) =>
    (
      await recordPoints(
        pool,
        list,
        (p) => ({ ...efficiencyFor(p.hardware, p.backend, table, engineVersionOf(p.deployment)).factors, ...overrides }),
        load,
      )
    ).map((r, i) =>
      toPrediction(
        list[i],
        replayedMetrics(r),
        r.deployment.tensor * r.deployment.attentionData,
        r.deployment.model.architecture.moe !== undefined,
      ),
    );
  try {
    if (evaluate) {
      predictions = await replayAtShipped(points);
    } else {
      const result = await zeroShot(pool, points, load, { rounds: argValue('--rounds', 2), log: (line) => say(`  ${line}\n`) });
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
    }
    apartPredictions = await replayAtShipped(apart.map((a) => a.point));
  } finally {
    await pool.destroy();
  }

  const strata = groupBy(predictions, (p) => stratumOf(p.backend, p.moe));
  say(`\nby stratum (MAPE, then mean signed error: + = predicted above measured)\n${'stratum'.padEnd(16)}${HEADER}\n`);
  for (const [name, list] of strata) say(`${name.padEnd(16)}${cell(errorsOf(list))}\n`);
  const overall = errorsOf(predictions);
  say(`${'overall'.padEnd(16)}${cell(overall)}\n`);
  say(`\nby concurrency band\n${'band'.padEnd(16)}${HEADER}\n`);
  for (const band of BANDS) {
    const lower = BANDS[BANDS.indexOf(band) - 1]?.max ?? 0;
    const list = predictions.filter((p) => p.concurrency > lower && p.concurrency <= band.max);
    if (list.length > 0) say(`${band.name.padEnd(16)}${cell(errorsOf(list))}\n`);
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
  say(
    `\ntargets: overall TTFT <= 25 %, ITL <= 12 %; every stratum TTFT <= 40 %, ITL <= 20 % ` +
      `(worst stratum ${worst.toFixed(1)} / ${worstItl.toFixed(1)} %); wall ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
  );
  const writeAccuracy = argText('--write-accuracy');
  if (writeAccuracy !== undefined) {
    const rows: AccuracyRow[] = strata.map(([stratum, list]) => {
      const e = errorsOf(list);
      return { stratum, ttft_mape: e.ttft, itl_mape: e.itl, points: e.n, deployments: new Set(list.map((p) => p.label)).size };
    });
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
        },
        null,
        2,
      )}\n`,
    );
  }
}
