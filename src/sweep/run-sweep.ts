/**
 * Running a sweep (docs/sweeps.md): plan and validate every point, resume from what the
 * output directory already holds, run the rest on the pool, append each finished point as it
 * finishes, then write `summary.csv` and `sweep.svg` in plan order.
 *
 * Resume: a point counts as done when its latest line in `points.jsonl` has status ok. Failed and
 * timed-out points are run again on the next run (their earlier line stays in the log until the
 * end-of-run rewrite keeps only the latest line per point).
 */
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadRunConfigFromObject } from '../config/load.js';
import type { RunConfig } from '../config/types.js';
import { displayPath } from '../io/paths.js';
import { readTextFile } from '../io/read-text.js';
import { checkOutputDir, makeOutputDir, removeEmptyFolders, removeStaleTemporaries } from '../io/write-output.js';
import { takeLock } from './lock.js';
import { buildPlanInterruptibly, formatOverrides, type Plan, type PlanPoint, type SweepFit, type ValidateRunConfig } from './plan.js';
import { PointPool, defaultPoolThreadCount, describeError, type PointOutcome } from './pool.js';
import { silentProgress, type ProgressReporter } from './progress.js';
import {
  CHART_FILE,
  PLAN_FILE,
  POINTS_FILE,
  SHARD_FILE,
  SUMMARY_FILE,
  TIMINGS_FILE,
  appendPoint,
  appendTiming,
  compactPoints,
  droppedRecordsNote,
  latestById,
  planFileContent,
  readOwnFile,
  readPoints,
  writeFileAtomic,
  type PointRecord,
} from './results.js';
import { isInShard, type Shard } from './shard.js';
import { readSweepBase, readSweepFile } from './sweep-file.js';
import { summaryCsv } from './summary-csv.js';
import { aiperfFolderName } from '../io/write-aiperf-artifacts.js';
import { renderChart } from './chart.js';
import { primerFor } from './jit-primer.js';
import type { PrimerRun } from './point-task.js';
import { prepareRun, type PreparedRun } from '../replay.js';
import { expectedCosts } from './point-cost.js';

export interface RunSweepOptions {
  sweepFile: string;
  /** Output directory; `out/sweeps/<name>` under the current folder by default. */
  outDir?: string;
  /** Pool threads; as many as cores by default. */
  poolThreads?: number;
  /** Seconds a point may run before it is stopped and recorded as timed out. */
  pointTimeoutS?: number;
  shard?: Shard;
  /** Module run by each pool thread; the shipped pool task (real replay) by default. */
  taskFilename?: string;
  /** Run-config validator; `loadRunConfigFromObject` by default. */
  validate?: ValidateRunConfig;
  progress?: ProgressReporter;
  /** Aborting it stops the sweep: running points are dropped, finished ones kept. */
  stopSignal?: AbortSignal;
  /** Notes for the user (resumed points, repaired log); stderr by default. */
  note?: (line: string) => void;
  /** Draw `sweep.svg` (default true). */
  chart?: boolean;
  /** Prime the pool threads' JIT (jit-primer.ts; default true). False is for measuring what it saves. */
  prime?: boolean;
  /**
   * Also write each point's AIPerf artifacts to `aiperf/<point id>/<AIPerf folder name>/`
   * (`...-concurrency8`; the id keeps points that share a load apart).
   */
  aiperf?: boolean;
}

export interface FailedPoint {
  index: number;
  id: string;
  overrides: Record<string, unknown>;
  status: 'failed' | 'timeout';
  error: string;
}

export interface RunSweepResult {
  name: string;
  outDir: string;
  /** Points in the whole plan. */
  planned: number;
  /** Points in this run's slice (the whole plan without a shard). */
  slice: number;
  /** Slice points already done (status ok) before this run. */
  alreadyDone: number;
  /** Points run by this run (any outcome). */
  ran: number;
  ok: number;
  failed: FailedPoint[];
  /** Slice points with no result (the sweep was stopped before them). */
  pending: number;
  interrupted: boolean;
  timings: { planMs: number; runMs: number; writeMs: number };
  /** Slice points whose summary says they ran on the placeholder pass times (`accuracy.basis`), and the first one's reason. */
  placeholder?: { points: number; reason: string };
}

export function defaultOutDir(name: string): string {
  return join('out', 'sweeps', name);
}

const defaultValidate: ValidateRunConfig = (raw, label) => loadRunConfigFromObject(raw, label);

/** Points per pool thread from which the threads are primed (jit-primer.ts). */
const PRIMED_POINTS_PER_THREAD = 4;

/** Files of a sweep folder that are written through a temporary file (stale ones are removed on resume). */
const REWRITTEN_FILES = [PLAN_FILE, POINTS_FILE, TIMINGS_FILE, SUMMARY_FILE, CHART_FILE, SHARD_FILE];

/** A fit.json no larger than this is read for its training points (one is a few KiB). */
const MAX_FIT_BYTES = 16 * 1024 * 1024;

/**
 * The fit a base config file came from: the fit.json beside it that `calibrate engine` wrote with
 * it, when it lists the training points' keys; undefined for any other base (a fit.json that
 * cannot be read names no training points: the sweep does not depend on it).
 */
export function fitBeside(baseDir: string): SweepFit | undefined {
  const file = join(baseDir, 'fit.json');
  if (!existsSync(file)) return undefined;
  let train: unknown;
  try {
    train = (JSON.parse(readTextFile(file, file, MAX_FIT_BYTES)) as { train?: unknown }).train;
  } catch {
    return undefined;
  }
  const isKey = (key: unknown): key is Record<string, string | number> =>
    typeof key === 'object' &&
    key !== null &&
    !Array.isArray(key) &&
    Object.keys(key).length > 0 &&
    Object.values(key).every((value) => typeof value === 'number' || typeof value === 'string');
  if (!Array.isArray(train) || train.length === 0 || !train.every(isKey)) return undefined;
  return { file: displayPath(file), train };
}

/** Plans, validates and runs a sweep; throws `SweepError`/`PlanError` before running anything if the file or a point is invalid. */
export async function runSweep(options: RunSweepOptions): Promise<RunSweepResult> {
  const note = options.note ?? ((line: string) => process.stderr.write(`${line}\n`));
  const progress = options.progress ?? silentProgress;
  const t0 = performance.now();

  if (options.outDir !== undefined) checkOutputDir(options.outDir);
  const sweep = readSweepFile(options.sweepFile);
  const base = readSweepBase(sweep);
  const threads = poolThreadsFor(options, note);
  // A pool thread takes tens of ms to start (a Node bootstrap, then the replay core's modules).
  // A sweep into a fresh output folder (no points.jsonl yet) will run points, so its pool is
  // started here and its threads boot while the plan is built and validated; a resumed sweep
  // starts its pool once it knows how many points are left.
  const outDirOf = (name: string) => resolve(options.outDir ?? defaultOutDir(name));
  const pool =
    !existsSync(join(outDirOf(sweep.name), POINTS_FILE)) && options.stopSignal?.aborted !== true
      ? newPointPool(options, threads, Infinity)
      : undefined;
  try {
    const validate = options.validate ?? defaultValidate;
    const plan = await buildPlanInterruptibly({ sweep, baseRaw: base.raw, baseLabel: base.label, validate }, options.stopSignal);
    const fit = typeof sweep.base === 'string' ? fitBeside(base.baseDir) : undefined;
    if (plan !== null && fit !== undefined) plan.fit = fit;
    if (plan === null) {
      // Stopped while planning: nothing was run, nothing is written.
      const outDir = outDirOf(sweep.name);
      return {
        name: sweep.name,
        outDir,
        planned: 0,
        slice: 0,
        alreadyDone: 0,
        ran: 0,
        ok: 0,
        failed: [],
        pending: 0,
        interrupted: true,
        timings: { planMs: performance.now() - t0, runMs: 0, writeMs: 0 },
      };
    }
    const slice = plan.points.filter((p) => isInShard(p.index, options.shard));

    const outDir = outDirOf(plan.name);
    const created = makeOutputDir(outDir);
    try {
      const releaseLock = takeLock(outDir, note);
      try {
        const removed = removeStaleTemporaries(outDir, REWRITTEN_FILES);
        if (removed.length > 0)
          note(`${outDir}: removed ${removed.length} temporary file(s) an interrupted write left: ${removed.join(', ')}`);
        return await runInDir(options, plan, slice, base.baseDir, outDir, note, progress, t0, pool, threads);
      } finally {
        releaseLock();
      }
    } catch (err) {
      // A folder this run created and could not put a file in (a full disk) is removed again.
      if (created !== undefined) removeEmptyFolders(created);
      throw err;
    }
  } finally {
    // Destroyed whether or not it ran points (destroy is idempotent).
    await pool?.destroy();
  }
}

/**
 * Pool threads: one per core, or `--workers`, at most one per core (a replay keeps a core busy:
 * more threads only cost memory, about 5 MB each before any point runs, and switches).
 */
function poolThreadsFor(options: RunSweepOptions, note: (line: string) => void): number {
  const cores = defaultPoolThreadCount();
  if (options.poolThreads === undefined) return cores;
  if (options.poolThreads > cores) {
    note(`--workers ${options.poolThreads}: capped at ${cores}, the cores of this machine`);
    return cores;
  }
  return options.poolThreads;
}

/** The sweep's pool: `threads` threads, no more than `points`. */
function newPointPool(options: RunSweepOptions, threads: number, points: number): PointPool {
  return new PointPool({
    poolThreads: Math.min(threads, points),
    taskFilename: options.taskFilename,
    pointTimeoutS: options.pointTimeoutS,
  });
}

async function runInDir(
  options: RunSweepOptions,
  plan: Plan,
  slice: PlanPoint[],
  baseDir: string,
  outDir: string,
  note: (line: string) => void,
  progress: ProgressReporter,
  t0: number,
  /** A pool started before the plan was built, if any. */
  started: PointPool | undefined,
  threads: number,
): Promise<RunSweepResult> {
  // The records are checked before anything is written: a damaged folder is left as it was.
  const pointsPath = join(outDir, POINTS_FILE);
  const timingsPath = join(outDir, TIMINGS_FILE);
  const { records, tornBytes } = readPoints(pointsPath, true);
  if (tornBytes > 0) note(`${pointsPath}: dropped an incomplete last line (${tornBytes} bytes) left by an interrupted write`);

  const planPath = join(outDir, PLAN_FILE);
  const planText = planFileContent(plan);
  if (existsSync(planPath) && readOwnFile(planPath) !== planText) {
    note(`${planPath}: the plan changed since the last run; results of points still in it are kept`);
  }
  writeFileAtomic(planPath, planText);
  const shardPath = join(outDir, SHARD_FILE);
  if (options.shard === undefined) {
    rmSync(shardPath, { force: true });
  } else {
    const shardInfo = { index: options.shard.index, count: options.shard.count, points: slice.map((p) => p.id) };
    writeFileAtomic(shardPath, `${JSON.stringify(shardInfo, null, 2)}\n`);
  }

  const byId = latestById(records);
  const todo = slice.filter((p) => byId.get(p.id)?.status !== 'ok');
  const alreadyDone = slice.length - todo.length;
  if (alreadyDone > 0 && todo.length > 0) note(`resuming: ${alreadyDone} of ${slice.length} points already done`);
  const planMs = performance.now() - t0;

  const tRun = performance.now();
  let ran = 0;
  let interrupted = options.stopSignal?.aborted === true;
  // The ETA weighs points by their expected cost (requests x output tokens), not by count.
  const todoCosts = expectedCosts(todo.map((p) => p.config));
  const costs = new Map(todo.map((p, i) => [p.id, todoCosts[i]]));
  progress.start(
    slice.length,
    alreadyDone,
    [...costs.values()].reduce((sum, c) => sum + c, 0),
  );
  if (todo.length > 0 && !interrupted) {
    const pool = started ?? newPointPool(options, threads, todo.length);
    const onStop = () => {
      interrupted = true;
      pool.stop();
    };
    options.stopSignal?.addEventListener('abort', onStop);
    let next = 0;
    // With a time-out, one lane per pool thread keeps every thread busy without queueing, so a
    // point's time-out clock starts when the point starts. Without one, two lanes per thread keep
    // a point queued behind each running one: the pool hands it to the thread as soon as the
    // thread is free, instead of after this loop has recorded the finished point.
    const lanesPerThread = options.pointTimeoutS === undefined ? 2 : 1;
    // Each pool thread first replays shrunken copies of a few of these points, so that its JIT
    // optimizes on feedback from the paths the sweep takes (jit-primer.ts). Worth it when every
    // thread has several points to run; the copies ride on the tasks until each thread has primed.
    const primes = options.prime !== false && todo.length >= PRIMED_POINTS_PER_THREAD * pool.poolThreads;
    const primer = primes ? preparePrimer(primerFor(todo.map((p) => p.config)), baseDir) : undefined;
    let primedThreads = 0;
    const lanes = Array.from({ length: Math.min(todo.length, pool.poolThreads * lanesPerThread) }, async () => {
      while (next < todo.length && !interrupted) {
        const point = todo[next++];
        const aiperfDir = options.aiperf ? join(outDir, 'aiperf', point.id, aiperfFolderName(point.config)) : undefined;
        const withPrimer = primer !== undefined && primedThreads < pool.poolThreads;
        // The point is resolved here: its trace is read once by this thread for the whole sweep
        // (cached), and the pool thread gets the run description. A point that cannot be
        // resolved (a bad trace, a run too large for this machine) fails alone, as it did when
        // its pool thread read the trace. With --aiperf the point keeps per-request records.
        let prepared: PreparedRun | string;
        try {
          prepared = prepareRun(point.config, aiperfDir ? { baseDir, perRequest: true, perRequestFlag: '--aiperf' } : { baseDir });
        } catch (err) {
          prepared = describeError(err);
        }
        const outcome: PointOutcome =
          typeof prepared === 'string'
            ? { status: 'failed', error: prepared, wallMs: 0 }
            : await pool.run({
                id: point.id,
                config: point.config,
                run: prepared,
                ...(aiperfDir ? { aiperfDir } : {}),
                ...(withPrimer ? { primer } : {}),
              });
        if (outcome.status === 'stopped') continue;
        const primedHere = outcome.status === 'ok' && outcome.result.primed === true;
        if (primedHere) primedThreads++;
        const record: PointRecord =
          outcome.status === 'ok'
            ? { id: point.id, overrides: point.overrides, status: 'ok', summary: outcome.result.summary, error: null }
            : { id: point.id, overrides: point.overrides, status: outcome.status, summary: null, error: outcome.error };
        appendPoint(pointsPath, record);
        appendTiming(timingsPath, {
          id: point.id,
          status: record.status,
          wall_ms: Math.round(outcome.wallMs * 1000) / 1000,
          simulator: outcome.status === 'ok' ? outcome.result.wall : null,
          ...(primedHere ? { primed: true as const } : {}),
        });
        records.push(record);
        byId.set(record.id, record);
        ran++;
        progress.point({
          id: point.id,
          status: record.status,
          label: formatOverrides(point.overrides),
          error: record.error ?? undefined,
          cost: costs.get(point.id),
        });
      }
    });
    try {
      await Promise.all(lanes);
    } finally {
      options.stopSignal?.removeEventListener('abort', onStop);
      await pool.destroy();
    }
  }
  progress.end();
  const runMs = performance.now() - tRun;

  const tWrite = performance.now();
  // Stopped before a point ran: the files are as the last run left them (and a large plan's
  // summary and chart would only delay the exit).
  if (!(interrupted && ran === 0)) {
    const dropped = droppedRecordsNote(pointsPath, compactPoints(pointsPath, plan, records, 'drop'));
    if (dropped !== null) note(dropped);
    writeFileAtomic(join(outDir, SUMMARY_FILE), summaryCsv(plan, slice, byId));
    if (options.chart !== false) await writeChart(plan, slice, byId, join(outDir, CHART_FILE), note);
  }
  const writeMs = performance.now() - tWrite;

  const failed: FailedPoint[] = [];
  let ok = 0;
  let pending = 0;
  let placeholder: RunSweepResult['placeholder'];
  for (const point of slice) {
    const record = byId.get(point.id);
    if (record === undefined) pending++;
    else if (record.status === 'ok') {
      ok++;
      const accuracy = (record.summary as { accuracy?: { basis?: unknown; stratum?: unknown } } | null)?.accuracy;
      if (accuracy?.basis === 'placeholder') {
        placeholder = { points: (placeholder?.points ?? 0) + 1, reason: placeholder?.reason ?? String(accuracy.stratum) };
      }
    } else {
      failed.push({
        index: point.index,
        id: point.id,
        overrides: point.overrides,
        status: record.status,
        error: record.error ?? '',
      });
    }
  }
  return {
    name: plan.name,
    outDir,
    planned: plan.points.length,
    slice: slice.length,
    alreadyDone,
    ran,
    ok,
    failed,
    pending,
    interrupted,
    timings: { planMs, runMs, writeMs },
    ...(placeholder !== undefined ? { placeholder } : {}),
  };
}

/** A primer's runs resolved for the pool threads; a copy that cannot be resolved is left out (only the warm-up is lost). */
function preparePrimer(configs: RunConfig[], baseDir: string): PrimerRun[] {
  const runs: PrimerRun[] = [];
  for (const config of configs) {
    try {
      runs.push({ config, run: prepareRun(config, { baseDir }) });
    } catch {
      // Each point reports its own errors.
    }
  }
  return runs;
}

export async function writeChart(
  plan: Parameters<typeof renderChart>[0],
  points: Parameters<typeof renderChart>[1],
  byId: Map<string, PointRecord>,
  file: string,
  note: (line: string) => void,
): Promise<void> {
  try {
    const svg = await renderChart(plan, points, byId);
    if (svg === null) {
      rmSync(file, { force: true });
      note('no swept axis to draw against; no chart written');
    } else {
      writeFileAtomic(file, svg);
    }
  } catch (err) {
    note(`chart not written: ${(err as Error).message}`);
  }
}
