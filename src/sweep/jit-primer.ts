/**
 * Priming a pool thread's JIT. Each pool thread is its own V8 isolate and optimizes the replay core
 * afresh. Left alone, it optimizes the loop on its first point's type feedback, then throws that
 * code away whenever a later point takes a path the first did not: the event heap that a closed
 * loop at concurrency 1 never uses, several detokenization servers, a config object of another
 * map. On one thread's half of `npm run bench:sweep`'s grid, V8's `--trace-opt` and `--trace-deopt`
 * counted 22 deoptimizations and 83 optimizing compiles, paid again by every thread of the pool
 * (with the primer: 1 and 35).
 *
 * So before its first point a pool thread replays shrunken copies of a few of the sweep's own
 * points, spread over the plan (the first, the last and two between): at most 64 requests each
 * (never more than the point sends), at most 16 output tokens per request, about 25 ms in all on
 * a cold thread. By the time V8 optimizes, the feedback covers the paths the sweep takes. The
 * copies come from the sweep itself because feedback from paths it never takes costs: a fixed set
 * of primer runs that added an open loop, the client path and preemption to closed loops made the
 * bench grid's 2-thread runs about 4 % slower than closed loops alone (alternating runs).
 *
 * The primer rides on the tasks (`PointTask.primer`) until every pool thread has reported priming
 * (`PointTaskResult.primed`). Its results are discarded, and it changes no point's result: a replay
 * keeps no state between runs apart from scratch buffers whose contents are never read before
 * being written (core/scratch.ts); `test/sweep-run.test.ts` compares primed and unprimed sweeps.
 */
import type { RunConfig } from '../config/types.js';

/** Points of the sweep a primer copies. */
export const PRIMER_POINTS = 4;
/** Requests per primer run at most. */
export const PRIMER_REQUESTS = 64;
/** At most this many output tokens per request of a synthetic source. */
export const PRIMER_OUTPUT_TOKENS = 16;

/** Requests a run sends when it stops on a count (docs/config.md `stop`); Infinity under a time cap. */
export function requestsOf(config: RunConfig): number {
  const stop = config.traffic.stop;
  if ('requests' in stop) return stop.requests;
  if ('requests_per_load_unit' in stop) {
    const load = config.traffic.load;
    const unit = load.type === 'concurrency' ? load.concurrency : 'requests_per_second' in load ? load.requests_per_second : NaN;
    if (Number.isFinite(unit)) return Math.max(1, Math.round(stop.requests_per_load_unit * unit));
  }
  return Infinity;
}

/**
 * A copy of a run that stops early (PRIMER_REQUESTS requests, or the run's own count if smaller)
 * and generates short outputs: the same paths for little work.
 */
export function shrinkForPrimer(config: RunConfig): RunConfig {
  const copy = structuredClone(config);
  copy.traffic.stop = { requests: Math.min(PRIMER_REQUESTS, requestsOf(config)) };
  copy.report.warmup_requests = 0;
  const source = copy.traffic.source;
  if (source.type === 'synthetic') source.output_tokens = Math.min(source.output_tokens, PRIMER_OUTPUT_TOKENS);
  if (source.type === 'synthetic-session') source.output_tokens_per_turn = Math.min(source.output_tokens_per_turn, PRIMER_OUTPUT_TOKENS);
  return copy;
}

/**
 * Which of n points a primer copies: up to PRIMER_POINTS, evenly spread, the first and the last
 * among them, in order (plan order puts the first axis's extremes at the ends).
 */
export function primerPicks(n: number): number[] {
  const count = Math.min(PRIMER_POINTS, n);
  const picks = new Set<number>();
  for (let k = 0; k < count; k++) picks.add(count === 1 ? 0 : Math.round((k * (n - 1)) / (count - 1)));
  return [...picks];
}

/**
 * The primer of a sweep: shrunken copies of the points `primerPicks` chooses among those with a
 * synthetic source (points that replay a trace are not copied).
 */
export function primerFor(points: readonly RunConfig[]): RunConfig[] {
  const synthetic = points.filter((p) => p.traffic.source.type !== 'trace');
  return primerPicks(synthetic.length).map((i) => shrinkForPrimer(synthetic[i]));
}
