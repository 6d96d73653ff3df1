/**
 * What a pool thread does with one point, apart from the replay itself (which is passed in, so
 * that tests can drive the same code with a stand-in): on the thread's first task that carries a
 * primer, the primer runs (jit-primer.ts); the test-only fault hook; the replay; the split of the
 * summary into its deterministic part and its wall-time fields; and with `--aiperf` the point's
 * AIPerf artifacts.
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

/** Prefix of `engine.model` that asks for a fault, honoured only with SERVESIM_TEST_FAULTS=1. */
export const FAULT_PREFIX = '__fault:';

/**
 * Test-only fault hook. With `SERVESIM_TEST_FAULTS=1` in the environment and an `engine.model`
 * label of `__fault:throw`, `__fault:exit`, `__fault:hang` or `__fault:sleep:MS`, the pool thread
 * throws, exits (code 7), blocks forever, or sleeps MS ms before replaying. Without the variable
 * the label is just a label.
 */
export function applyTestFault(config: RunConfig): void {
  if (process.env.SERVESIM_TEST_FAULTS !== '1') return;
  const model = config.engine?.model;
  if (typeof model !== 'string' || !model.startsWith(FAULT_PREFIX)) return;
  const fault = model.slice(FAULT_PREFIX.length);
  if (fault === 'throw') throw new Error('test fault: thrown by the point');
  if (fault === 'exit') process.exit(7);
  if (fault === 'hang') {
    // Blocks without spinning; a terminated thread is woken and torn down.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  }
  const sleep = /^sleep:(\d+)$/.exec(fault);
  if (sleep !== null) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(sleep[1]));
}

/** Whether this thread (this module instance) has run a primer. */
let primed = false;

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

export function runPointTask(task: PointTask, replayFn: ReplayFn): PointTaskResult {
  const primes = !primed && task.primer !== undefined;
  if (primes) {
    primed = true;
    prime(task.primer as PrimerRun[], replayFn);
  }
  applyTestFault(task.config);
  const aiperf = task.aiperfDir !== undefined;
  const { summary, requests } = replayFn(task.config, task.run, { perRequest: aiperf });
  // AIPerf's files are written by the pool thread, so they cost the main thread nothing.
  if (aiperf) writeAiperfArtifacts(task.aiperfDir as string, summary, requests, task.config);
  return primes ? { ...splitWallTime(summary), primed: true } : splitWallTime(summary);
}
