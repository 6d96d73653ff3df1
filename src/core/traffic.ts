/**
 * Traffic helpers of the replay loop (docs/replay-model.md, "Traffic"), pure functions of the resolved run:
 * synthetic lengths from the seeded stream, the send order of a trace, and the size of the run's
 * pooled token-gap buffer.
 */
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import type { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import type { ResolvedRun } from './run.js';
import { FOLD_AT } from './token-gaps.js';

export type Rng = ReturnType<typeof xoroshiro128plus>;

/** Sentinel for "no session continues": a synthetic request or a trace row of its own. */
export const NO_NEXT = -1;

/** An upper bound of the run's pooled token gaps, capped at the fold limit (a default when unknown). */
export function expectedGaps(run: ResolvedRun): number {
  if (!Number.isFinite(run.maxRequests)) return 1 << 16;
  const source = run.source;
  let tokens = 0;
  if (source.kind === 'trace') {
    for (let row = 0; row < run.maxRequests; row++) tokens += source.trace.outputLength[row];
  } else {
    tokens = run.maxRequests * source.outputTokens;
  }
  return Math.max(1024, Math.min(FOLD_AT, tokens));
}

/**
 * A synthetic length: fixed when ratio is 1, otherwise uniform over the integers
 * [max(min, floor(length * ratio)), length] (the random_range_ratio of sglang's bench_serving).
 */
export function drawLength(rng: Rng, length: number, ratio: number, min: number): number {
  if (ratio >= 1) return length;
  const lo = Math.max(min, Math.floor(length * ratio));
  return lo >= length ? length : uniformInt(rng, lo, length);
}

/** Normal draws reach at most this many standard deviations above the mean (AIPerf's are unbounded). */
export const NORMAL_LENGTH_SPAN = 4;

/**
 * A synthetic length drawn as AIPerf draws it with a standard deviation: normal of mean `mean`
 * and standard deviation `sd` (Box-Muller on two uniforms of the stream), rounded, within
 * [min, floor(mean + 4 sd)] (min is 1 for AIPerf's positive lengths).
 */
export function drawNormalLength(rng: Rng, mean: number, sd: number, min: number): number {
  const u = 1 - uniformFloat64(rng);
  const v = uniformFloat64(rng);
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  const value = Math.round(mean + sd * z);
  const max = Math.floor(mean + NORMAL_LENGTH_SPAN * sd);
  return value < min ? min : value > max ? max : value;
}

/**
 * Orders a trace for sending. Without session replay (closed or open loop), every row up to
 * `limit` is its own unit, in file order. With trace_timestamps, rows sharing a session id
 * form one session: its first row is sent at its timestamp, each later row after the previous
 * one is acted on plus its `delay`; sessions start in timestamp order (file order on ties).
 */
export function buildTraceOrder(
  rows: number,
  limit: number,
  trace: { timestampMs: Float64Array; sessionId: string[] | null },
  bySession: boolean,
): { starts: Int32Array; nextInSession: Int32Array | null; sessionIndex: Int32Array; turnIndex: Int32Array } {
  const n = Math.min(rows, limit);
  const sessionIndex = new Int32Array(n);
  const turnIndex = new Int32Array(n);
  if (!bySession) {
    const starts = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      starts[i] = i;
      sessionIndex[i] = i;
    }
    return { starts, nextInSession: null, sessionIndex, turnIndex };
  }
  const nextInSession = new Int32Array(n).fill(NO_NEXT);
  const lastOfSession = new Map<string, number>();
  const startList: number[] = [];
  for (let i = 0; i < n; i++) {
    const session = trace.sessionId === null ? '' : trace.sessionId[i];
    const prev = session === '' ? undefined : lastOfSession.get(session);
    if (prev === undefined) {
      sessionIndex[i] = startList.length;
      startList.push(i);
    } else {
      nextInSession[prev] = i;
      sessionIndex[i] = sessionIndex[prev];
      turnIndex[i] = turnIndex[prev] + 1;
    }
    if (session !== '') lastOfSession.set(session, i);
  }
  const ts = trace.timestampMs;
  startList.sort((a, b) => ts[a] - ts[b] || a - b);
  return { starts: Int32Array.from(startList), nextInSession, sessionIndex, turnIndex };
}
