/**
 * `npm run bench:sweep [-- --json]`: the sweep pool's speed.
 *
 * 1. A 64-point grid (concurrency 1..128 x detokenization servers 1..8, 32,000 requests each as
 *    in a real sweep, or `--requests R` for a quick look) run end to end by `runSweep` with 1 pool thread and with one per core: wall
 *    times, points per second, parallel efficiency t1 / (tN x N), and the sweep's fixed phases
 *    (plan, then summary and chart) that no number of threads shortens.
 * 2. Pool overhead per point: 256 points that do almost no work (1 request, 1 output token) run
 *    through the pool on one thread, minus the same replays run in-process, per point.
 *
 * `--no-prime` runs the grid without priming the pool threads' JIT (src/sweep/jit-primer.ts), to
 * measure what priming saves.
 *
 * Each measurement is the best of `--runs K` (default 2) alternating runs, since other processes on
 * the machine can only make a run slower; the commit, the machine and the load average at the
 * start are printed and written with the figures (bench/environment.ts). An untimed sweep runs first, so that the main thread's one-off costs fall on no timed
 * run.
 * Run after `npm run build` (it runs the compiled pool task).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRunConfigFromObject } from '../src/config/load.js';
import { replay } from '../src/replay.js';
import { runSweep, type RunSweepResult } from '../src/sweep/run-sweep.js';
import { buildPlan } from '../src/sweep/plan.js';
import { parseSweepFile } from '../src/sweep/sweep-file.js';
import { benchEnvironment, describeEnvironment, type BenchEnvironment } from './environment.js';

/**
 * Requests per grid point: about 180 ms of replay a point on a 2-core virtual machine, the size of
 * a real sweep's points. Points of a few tens of ms measure the threads' start-up and JIT warm-up
 * more than the pool (docs/benchmarks.md, "The sweep pool").
 */
const DEFAULT_GRID_REQUESTS = 32_000;

const GRID_BASE = {
  engine: {
    model: 'bench',
    workers: {
      aggregated: {
        scheduler: { max_batched_tokens: 8192, max_sequences: 256, chunked_prefill: true },
        timing: { type: 'linear', base_ms: 12, prefill_token_us: 55, prefill_pair_ns: 1.3, decode_request_us: 30, decode_kv_token_ns: 48 },
      },
    },
    detokenization: { workers: 1, base_ms: 2.85, per_output_us: 61.6 },
  },
  traffic: {
    source: { type: 'synthetic', input_tokens: 512, output_tokens: 128, random_range_ratio: 0.5, seed: 1 },
    load: { type: 'concurrency', concurrency: 1 },
  },
};

/** The grid with `requests` requests per point (`--requests`). */
const gridSweep = (requests: number) => ({
  name: 'bench-grid-64',
  base: { ...GRID_BASE, traffic: { ...GRID_BASE.traffic, stop: { requests } } },
  grid: {
    'traffic.load.concurrency': { range: { min: 1, max: 128, scale: 'log2' } },
    'engine.detokenization.workers': [1, 2, 3, 4, 5, 6, 7, 8],
  },
});

const TINY_POINTS = 256;
const TINY_SWEEP = {
  name: 'bench-tiny',
  base: {
    engine: { model: 'tiny', workers: { aggregated: { timing: { type: 'fixed', prefill_ms: 1, decode_ms: 1 } } } },
    traffic: {
      source: { type: 'synthetic', input_tokens: 16, output_tokens: 1, random_range_ratio: 1, seed: 0 },
      load: { type: 'concurrency', concurrency: 1 },
      stop: { requests: 1 },
    },
  },
  grid: { 'traffic.source.seed': { range: { min: 0, max: TINY_POINTS - 1, step: 1 } } },
};

interface BenchResult {
  environment: BenchEnvironment;
  points: number;
  requests_per_point: number;
  /** Whether the pool threads primed their JIT (false with `--no-prime`). */
  primed: boolean;
  pool_threads: number;
  runs: number;
  /** Whole sweep (plan, pool, summary.csv, chart), best of `runs`. */
  t1_s: number;
  tN_s: number;
  points_per_s_1: number;
  points_per_s_N: number;
  parallel_efficiency: number;
  /** The pool phase alone (points dispatched, run and recorded). */
  pool_phase: { t1_s: number; tN_s: number; parallel_efficiency: number };
  /**
   * The phases before and after the pool phase, best of `runs`, with 1 thread and with N: building
   * and validating the plan (the pool threads boot meanwhile), and writing summary.csv and drawing
   * sweep.svg. Both runs pay them in full.
   */
  fixed_phases_ms: { plan_1: number; plan_N: number; write_1: number; write_N: number };
  /**
   * The efficiency split in two factors (their product is about the pool-phase efficiency):
   * how much slower the replays themselves ran with N at once than alone (sum of the
   * simulator's own wall times, 1 thread / N threads: cores sharing caches, memory and the
   * JIT's background threads), and how busy the pool kept the N threads (sum of replay
   * times / (N x pool phase)).
   */
  efficiency_factors: { replay_scaling: number; pool_busy: number };
  /**
   * Sum of the replay times with N threads over that with 1, per eighth of the plan in plan order
   * (each point's best over the runs): a slowdown in the first eighths and none later is each
   * pool thread's JIT warm-up; one spread over the plan is the cores slowing each other down.
   */
  replay_slowdown_by_plan_eighth: number[];
  pool_overhead_ms_per_point: number;
  overhead_detail: {
    points: number;
    pool_ms_per_point: number;
    in_process_ms_per_point: number;
  };
}

const round = (x: number, digits: number) => Number(x.toFixed(digits));

async function timedSweep(
  dir: string,
  sweepFile: string,
  out: string,
  poolThreads: number,
  prime = true,
): Promise<{ s: number; result: RunSweepResult; replayS: number; replayMsById: Map<string, number>; planIds: string[] }> {
  const started = performance.now();
  const result = await runSweep({ sweepFile, outDir: join(dir, out), poolThreads, prime, note: () => {} });
  const s = (performance.now() - started) / 1000;
  if (result.ok !== result.slice) throw new Error(`bench sweep ${out}: ${result.failed.length} points failed`);
  let replayMs = 0;
  const replayMsById = new Map<string, number>();
  for (const line of readFileSync(join(dir, out, 'timings.jsonl'), 'utf8').split('\n')) {
    if (line === '') continue;
    const timing = JSON.parse(line) as { id: string; simulator: { wall_time_ms: number } };
    replayMs += timing.simulator.wall_time_ms;
    replayMsById.set(timing.id, timing.simulator.wall_time_ms);
  }
  const planIds = (JSON.parse(readFileSync(join(dir, out, 'plan.json'), 'utf8')) as { points: Array<{ id: string }> }).points.map(
    (p) => p.id,
  );
  return { s, result, replayS: replayMs / 1000, replayMsById, planIds };
}

/** Per point, the smaller of its replay times in `into` and `from` (best of the runs). */
function keepFastest(into: Map<string, number>, from: Map<string, number>): void {
  for (const [id, ms] of from) into.set(id, Math.min(into.get(id) ?? Infinity, ms));
}

/**
 * Replay time with N threads over replay time with 1, per eighth of the plan (plan order: the
 * order points are handed out): where the N-thread replays lose their time.
 */
function slowdownByEighth(planIds: string[], one: Map<string, number>, many: Map<string, number>): number[] {
  const out: number[] = [];
  const size = Math.ceil(planIds.length / 8);
  for (let start = 0; start < planIds.length; start += size) {
    let a = 0;
    let b = 0;
    for (const id of planIds.slice(start, start + size)) {
      a += one.get(id) ?? 0;
      b += many.get(id) ?? 0;
    }
    out.push(round(b / a, 3));
  }
  return out;
}

/** In-process replay time of the tiny points, per point, after a warm-up pass. */
function inProcessMsPerPoint(sweepFile: string): number {
  const sweep = parseSweepFile(TINY_SWEEP, sweepFile);
  const plan = buildPlan({
    sweep,
    baseRaw: TINY_SWEEP.base,
    baseLabel: 'tiny',
    validate: (raw, label) => loadRunConfigFromObject(raw, label),
  });
  for (const point of plan.points) replay(point.config, { baseDir: '.' });
  const started = performance.now();
  for (const point of plan.points) replay(point.config, { baseDir: '.' });
  return (performance.now() - started) / plan.points.length;
}

async function main(): Promise<void> {
  const asJson = process.argv.includes('--json');
  const runsArg = process.argv.indexOf('--runs');
  const runs = runsArg === -1 ? 2 : Math.max(1, Number(process.argv[runsArg + 1]) || 1);
  const prime = !process.argv.includes('--no-prime');
  const requestsArg = process.argv.indexOf('--requests');
  const requests =
    requestsArg === -1 ? DEFAULT_GRID_REQUESTS : Math.max(1, Math.floor(Number(process.argv[requestsArg + 1]) || DEFAULT_GRID_REQUESTS));
  const cores = availableParallelism();
  const environment = benchEnvironment();
  const dir = mkdtempSync(join(tmpdir(), 'servesim-sweep-bench-'));
  try {
    const gridFile = join(dir, 'grid.yaml');
    writeFileSync(gridFile, JSON.stringify(gridSweep(requests)));
    const tinyFile = join(dir, 'tiny.yaml');
    writeFileSync(tinyFile, JSON.stringify(TINY_SWEEP));

    let t1 = Infinity;
    let tN = Infinity;
    let pool1 = Infinity;
    let poolN = Infinity;
    let replay1 = Infinity;
    let replayN = Infinity;
    let tinyPoolMs = Infinity;
    const fixed = { plan_1: Infinity, plan_N: Infinity, write_1: Infinity, write_N: Infinity };
    let points = 0;
    let tinyPoints = 0;
    const perPoint1 = new Map<string, number>();
    const perPointN = new Map<string, number>();
    let planIds: string[] = [];
    // An untimed sweep first, so that no timed run pays for the main thread's first plan, summary
    // and chart (loading vega, its JIT warm-up): those would fall on the first 1-thread run only.
    await timedSweep(dir, tinyFile, 'warm-up', 1);
    for (let r = 0; r < runs; r++) {
      const one = await timedSweep(dir, gridFile, `grid-1-${r}`, 1, prime);
      const many = await timedSweep(dir, gridFile, `grid-${cores}-${r}`, cores, prime);
      const tiny = await timedSweep(dir, tinyFile, `tiny-1-${r}`, 1);
      points = one.result.slice;
      planIds = one.planIds;
      keepFastest(perPoint1, one.replayMsById);
      keepFastest(perPointN, many.replayMsById);
      tinyPoints = tiny.result.slice;
      t1 = Math.min(t1, one.s);
      tN = Math.min(tN, many.s);
      pool1 = Math.min(pool1, one.result.timings.runMs / 1000);
      poolN = Math.min(poolN, many.result.timings.runMs / 1000);
      replay1 = Math.min(replay1, one.replayS);
      replayN = Math.min(replayN, many.replayS);
      tinyPoolMs = Math.min(tinyPoolMs, tiny.result.timings.runMs);
      fixed.plan_1 = Math.min(fixed.plan_1, one.result.timings.planMs);
      fixed.plan_N = Math.min(fixed.plan_N, many.result.timings.planMs);
      fixed.write_1 = Math.min(fixed.write_1, one.result.timings.writeMs);
      fixed.write_N = Math.min(fixed.write_N, many.result.timings.writeMs);
    }
    const poolMsPerPoint = tinyPoolMs / tinyPoints;
    const inProcess = inProcessMsPerPoint(tinyFile);

    const result: BenchResult = {
      environment,
      points,
      requests_per_point: requests,
      primed: prime,
      pool_threads: cores,
      runs,
      t1_s: round(t1, 3),
      tN_s: round(tN, 3),
      points_per_s_1: round(points / t1, 2),
      points_per_s_N: round(points / tN, 2),
      parallel_efficiency: round(t1 / (tN * cores), 3),
      pool_phase: { t1_s: round(pool1, 3), tN_s: round(poolN, 3), parallel_efficiency: round(pool1 / (poolN * cores), 3) },
      fixed_phases_ms: {
        plan_1: round(fixed.plan_1, 1),
        plan_N: round(fixed.plan_N, 1),
        write_1: round(fixed.write_1, 1),
        write_N: round(fixed.write_N, 1),
      },
      efficiency_factors: { replay_scaling: round(replay1 / replayN, 3), pool_busy: round(replayN / (cores * poolN), 3) },
      replay_slowdown_by_plan_eighth: slowdownByEighth(planIds, perPoint1, perPointN),
      pool_overhead_ms_per_point: round(poolMsPerPoint - inProcess, 3),
      overhead_detail: {
        points: tinyPoints,
        pool_ms_per_point: round(poolMsPerPoint, 3),
        in_process_ms_per_point: round(inProcess, 3),
      },
    };
    if (asJson) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return;
    }
    process.stdout.write(
      [
        `sweep bench: ${points}-point grid (concurrency 1..128 x detokenization servers 1..8, ${requests} requests each) on ${cores} cores` +
          (prime ? '' : ', pool threads not primed (--no-prime)'),
        `  ${describeEnvironment(environment)}; best of ${runs} runs`,
        `  1 pool thread:   ${result.t1_s.toFixed(2)} s, ${result.points_per_s_1.toFixed(2)} points/s`,
        `  ${cores} pool threads:  ${result.tN_s.toFixed(2)} s, ${result.points_per_s_N.toFixed(2)} points/s`,
        `  parallel efficiency t1 / (tN x ${cores}): ${result.parallel_efficiency.toFixed(3)}` +
          ` (pool phase alone: ${result.pool_phase.t1_s.toFixed(2)} s / ${result.pool_phase.tN_s.toFixed(2)} s, ${result.pool_phase.parallel_efficiency.toFixed(3)})`,
        `    fixed phases, 1 / ${cores} threads: plan ${result.fixed_phases_ms.plan_1.toFixed(0)} / ${result.fixed_phases_ms.plan_N.toFixed(0)} ms,` +
          ` summary and chart ${result.fixed_phases_ms.write_1.toFixed(0)} / ${result.fixed_phases_ms.write_N.toFixed(0)} ms`,
        `    = replays ${result.efficiency_factors.replay_scaling.toFixed(3)} as fast with ${cores} at once as alone` +
          ` x pool threads busy ${(result.efficiency_factors.pool_busy * 100).toFixed(1)}% of the pool phase`,
        `    replay time with ${cores} threads / with 1, by eighth of the plan in plan order: ${result.replay_slowdown_by_plan_eighth.map((x) => x.toFixed(2)).join(' ')}`,
        `  pool overhead per point: ${result.pool_overhead_ms_per_point.toFixed(3)} ms` +
          ` (${result.overhead_detail.points} points of 1 request, 1 output token: ${result.overhead_detail.pool_ms_per_point.toFixed(3)} ms/point on the pool` +
          ` - ${result.overhead_detail.in_process_ms_per_point.toFixed(3)} ms/point in-process)`,
        '',
      ].join('\n'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
