/**
 * What a pool thread does with one point, apart from the replay itself (which is passed in): on
 * the thread's first task that carries a primer, the primer runs (jit-primer.ts); the replay; the
 * split of the summary into its deterministic part and its wall-time fields; and with `--aiperf`
 * the point's AIPerf artifacts.
 *
 * The point arrives resolved: the main thread parsed its config and read its trace once for the
 * whole sweep, and posts the run description (`PreparedRun`, plain data) with the task.
 */
import type { RunConfig } from '../config/types.js';
import type { ReplaySummary, RequestRecord } from '../core/report-types.js';
import type { PreparedRun } from '../replay-run.js';
import { writeAiperfArtifacts } from '../io/write-aiperf-artifacts.js';
import { splitWallTime, type PointSummary } from './point-summary.js';

export interface PointTask {
  id: string;
  /** The effective config: echoed in the summary, labels the AIPerf artifacts. */
  config: RunConfig;
  /** The point's run description, resolved in the main thread. */
  run: PreparedRun;
  /** With `sweep --aiperf`: the folder to write this point's AIPerf artifacts into. */
  aiperfDir?: string;
  /** Runs to replay and discard before this point if the thread has not primed yet (jit-primer.ts). */
  primer?: PrimerRun[];
}

/** One run of a primer: its config and its run description. */
export interface PrimerRun {
  config: RunConfig;
  run: PreparedRun;
}

export interface PointTaskResult {
  summary: PointSummary;
  /** The simulator's wall-time fields (`wall_time_ms`, `us_per_output_token`). */
  wall: Record<string, number>;
  /** Present when this task primed its thread. */
  primed?: true;
}

export type ReplayFn = (
  config: RunConfig,
  run: PreparedRun,
  opts: { perRequest?: boolean },
) => { summary: ReplaySummary; requests?: RequestRecord[] };

/** Replays each primer run and discards it; a run that throws is skipped (each point reports its own errors). */
function prime(primer: readonly PrimerRun[], replayFn: ReplayFn): void {
  for (const { config, run } of primer) {
    try {
      replayFn(config, run, {});
    } catch {
      // Only the JIT's warm-up is lost.
    }
  }
}

/**
 * A runner of one thread's points: it primes on the first task that carries a primer and never
 * again (whether a thread has primed is the runner's state; pool-task.ts makes one per thread).
 */
export function createPointRunner(replayFn: ReplayFn): (task: PointTask) => PointTaskResult {
  let primed = false;
  return (task) => {
    const primes = !primed && task.primer !== undefined;
    if (primes) {
      primed = true;
      prime(task.primer as PrimerRun[], replayFn);
    }
    const aiperf = task.aiperfDir !== undefined;
    const { summary, requests } = replayFn(task.config, task.run, { perRequest: aiperf });
    // AIPerf's files are written by the pool thread, so they cost the main thread nothing.
    if (aiperf) writeAiperfArtifacts(task.aiperfDir as string, summary, requests, task.config);
    return primes ? { ...splitWallTime(summary), primed: true } : splitWallTime(summary);
  };
}
