/**
 * Where a plan's replays run. The search hands over one round of replays at a time and reads
 * their summaries; an executor says only how they are run. `PoolExecutor` runs them on the sweep
 * pool (Piscina threads, the sweep's compiled pool task), each resolved in the main thread as a
 * sweep point is; `InProcessExecutor` runs them one after another in this thread (tests, and
 * plans too small to be worth starting threads for).
 */
import type { RunConfig } from '../config/types.js';
import { prepareRun, replayPrepared, type PreparedRun } from '../replay.js';
import { primerFor } from '../sweep/jit-primer.js';
import type { PrimerRun } from '../sweep/point-task.js';
import { expectedCosts } from '../sweep/point-cost.js';
import { PointPool, describeError, type PointOutcome } from '../sweep/pool.js';
import { splitWallTime, type PointSummary } from '../sweep/results.js';

export interface ReplayJob {
  id: string;
  config: RunConfig;
}

export type ReplayOutcome =
  | { status: 'ok'; summary: PointSummary; wall: Record<string, number> | null; wallMs: number; primed?: true }
  | { status: 'failed'; error: string; wallMs: number };

export interface ReplayExecutor {
  /** Runs the jobs; `done` is called once per job as it finishes (any order). Resolves when all are done or stopped. */
  run(jobs: readonly ReplayJob[], done: (job: ReplayJob, outcome: ReplayOutcome) => void): Promise<void>;
  /** Stops: running jobs are dropped (`done` is not called for them), no new one starts. */
  stop(): void;
  close(): Promise<void>;
}

/** Resolves a job in this thread, or says why it cannot be (a trace that cannot be read). */
function prepare(job: ReplayJob, baseDir: string): PreparedRun | string {
  try {
    return prepareRun(job.config, { baseDir });
  } catch (err) {
    return describeError(err);
  }
}

export interface PoolExecutorOptions {
  poolThreads: number;
  baseDir: string;
  taskFilename?: string;
}

/** Points per pool thread in a round from which the threads are primed (as a sweep does). */
const PRIMED_JOBS_PER_THREAD = 4;

export class PoolExecutor implements ReplayExecutor {
  readonly #pool: PointPool;
  readonly #baseDir: string;
  #stopped = false;
  #primedThreads = 0;

  constructor(options: PoolExecutorOptions) {
    this.#pool = new PointPool({ poolThreads: options.poolThreads, taskFilename: options.taskFilename });
    this.#baseDir = options.baseDir;
  }

  get poolThreads(): number {
    return this.#pool.poolThreads;
  }

  async run(jobs: readonly ReplayJob[], done: (job: ReplayJob, outcome: ReplayOutcome) => void): Promise<void> {
    // Longest first (requests x output tokens), so that a round does not end on one long replay
    // while the other threads wait.
    const costs = expectedCosts(jobs.map((job) => job.config));
    const order = jobs.map((_, i) => i).sort((a, b) => costs[b] - costs[a] || a - b);
    const threads = this.#pool.poolThreads;
    const primer =
      this.#primedThreads < threads && jobs.length >= PRIMED_JOBS_PER_THREAD * threads
        ? primerFor(order.map((i) => jobs[i].config)).flatMap((config): PrimerRun[] => {
            const run = prepare({ id: '', config }, this.#baseDir);
            return typeof run === 'string' ? [] : [{ config, run }];
          })
        : undefined;
    let next = 0;
    // Two jobs per thread in flight: one running, one queued behind it, so no thread waits for
    // this loop between replays.
    const lanes = Array.from({ length: Math.min(jobs.length, threads * 2) }, async () => {
      while (next < order.length && !this.#stopped) {
        const job = jobs[order[next++]];
        const prepared = prepare(job, this.#baseDir);
        const withPrimer = primer !== undefined && this.#primedThreads < threads;
        const outcome: PointOutcome =
          typeof prepared === 'string'
            ? { status: 'failed', error: prepared, wallMs: 0 }
            : await this.#pool.run({ id: job.id, config: job.config, run: prepared, ...(withPrimer ? { primer } : {}) });
        if (outcome.status === 'stopped' || this.#stopped) continue;
        if (outcome.status === 'ok') {
          if (outcome.result.primed === true) this.#primedThreads++;
          done(job, {
            status: 'ok',
            summary: outcome.result.summary,
            wall: outcome.result.wall,
            wallMs: outcome.wallMs,
            ...(outcome.result.primed === true ? { primed: true as const } : {}),
          });
        } else {
          done(job, { status: 'failed', error: outcome.error, wallMs: outcome.wallMs });
        }
      }
    });
    await Promise.all(lanes);
  }

  stop(): void {
    this.#stopped = true;
    this.#pool.stop();
  }

  close(): Promise<void> {
    return this.#pool.destroy();
  }
}

/** Runs every replay in this thread, in the order given. */
export class InProcessExecutor implements ReplayExecutor {
  readonly #baseDir: string;
  #stopped = false;

  constructor(baseDir: string) {
    this.#baseDir = baseDir;
  }

  async run(jobs: readonly ReplayJob[], done: (job: ReplayJob, outcome: ReplayOutcome) => void): Promise<void> {
    for (const job of jobs) {
      if (this.#stopped) return;
      const started = performance.now();
      const prepared = prepare(job, this.#baseDir);
      let outcome: ReplayOutcome;
      if (typeof prepared === 'string') {
        outcome = { status: 'failed', error: prepared, wallMs: 0 };
      } else {
        try {
          const { summary, wall } = splitWallTime(replayPrepared(job.config, prepared).summary);
          outcome = { status: 'ok', summary, wall, wallMs: performance.now() - started };
        } catch (err) {
          outcome = { status: 'failed', error: describeError(err), wallMs: performance.now() - started };
        }
      }
      done(job, outcome);
      // Lets a stop signal (Ctrl-C) in between replays.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  stop(): void {
    this.#stopped = true;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
