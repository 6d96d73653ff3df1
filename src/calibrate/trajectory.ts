/**
 * A replay's trajectory, for the catalog fit: which passes each measured request waited through
 * before its first token and between its first and last, as weights on the passes. With the
 * schedule held fixed, a metric is then a weighted sum of pass times,
 *   TTFT avg = TTFT(replay) + sum_j u_j (tau'(x_j) - tau(x_j)) + (frontend' - frontend),
 *   ITL avg  = ITL(replay)  + sum_j w_j (tau'(x_j) - tau(x_j)),
 * exact for the factors the replay ran with and a first-order guide near them: the fit changes
 * factors on these sums (microseconds each) and replays again to move the schedule
 * (docs/hardware-and-models.md, "How the factors are fitted").
 *
 * u_j: for every request counted in TTFT avg, the share of pass j that falls between its arrival
 * at the engine queue and its first token, over the request count. w_j: for every request counted
 * in ITL avg, the share of pass j between its first and last token, over (output tokens - 1) and
 * the request count. Passes with the same prefill tokens and decoding requests are binned (their
 * other features averaged), which keeps a trajectory to a few hundred bins.
 */
import { resolveRun } from '../config/resolve.js';
import { Status, type RequestTable } from '../core/request-table.js';
import { Simulation } from '../core/simulation.js';
import { buildSummary } from '../core/report.js';
import type { RunConfig } from '../config/types.js';
import type { ResolvedRun } from '../core/run.js';

/** Numbers per bin in `Trajectory.bins`. */
export const BIN_FIELDS = 8;
/**
 * Offsets of a bin's fields: prefill tokens, decoding requests, mean prefill pairs, mean decode KV
 * tokens, mean emitted tokens, u, w, mean worker tokens (every attention-DP rank's).
 */
export const BIN = { prefill: 0, decode: 1, pairs: 2, kv: 3, emitted: 4, ttftWeight: 5, itlWeight: 6, workerTokens: 7 } as const;

export interface Trajectory {
  /** The replay's TTFT avg and ITL avg (ms), as its summary reports them (null: no such request). */
  ttftMs: number | null;
  itlMs: number | null;
  /** Passes binned: BIN_FIELDS numbers per bin. */
  bins: number[];
  /** Passes run. */
  passes: number;
  /** Mean prompt tokens of the requests counted in TTFT avg. */
  meanPromptTokens: number;
  /** Mean number of other requests in flight when a request counted in TTFT avg was sent. */
  meanInflightAtSend: number;
}

interface PassLog {
  start: number[];
  end: number[];
  prefill: number[];
  decode: number[];
  pairs: number[];
  kv: number[];
  emitted: number[];
  workerTokens: number[];
}

function newLog(): PassLog {
  return { start: [], end: [], prefill: [], decode: [], pairs: [], kv: [], emitted: [], workerTokens: [] };
}

/** Index of the first pass of `log` ending after `t` (passes of one worker are in time order). */
function firstEndingAfter(log: PassLog, t: number): number {
  let lo = 0;
  let hi = log.end.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (log.end[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Adds weight x (share of each pass inside [from, to]) to `weights`. */
function spread(log: PassLog, weights: Float64Array, from: number, to: number, x: number): void {
  for (let j = firstEndingAfter(log, from); j < log.end.length && log.start[j] < to; j++) {
    const length = log.end[j] - log.start[j];
    if (length <= 0) continue;
    const inside = Math.min(to, log.end[j]) - Math.max(from, log.start[j]);
    if (inside > 0) weights[j] += (x * inside) / length;
  }
}

export function recordTrajectory(config: RunConfig): Trajectory {
  if (config.traffic.source.type === 'trace') throw new Error('a trajectory is recorded for synthetic traffic only');
  return recordRunTrajectory(resolveRun(config, null));
}

/** The trajectory of a resolved run of synthetic traffic (a fit's point with its timing swapped: `timing-swap.ts`). */
export function recordRunTrajectory(run: ResolvedRun): Trajectory {
  if (run.source.kind === 'trace') throw new Error('a trajectory is recorded for synthetic traffic only');
  const logs: PassLog[] = [];
  // The fits read the means only: no pooled token gaps (no `token_gap` in the summary).
  const result = new Simulation(run, {
    tokenGaps: false,
    onPass: (worker, start, end, view) => {
      const log = (logs[worker] ??= newLog());
      log.start.push(start);
      log.end.push(end);
      log.prefill.push(view.prefillTokens);
      log.decode.push(view.decodeRequests);
      log.pairs.push(view.prefillPairs);
      log.kv.push(view.decodeKvTokens);
      log.emitted.push(view.emittedTokens);
      log.workerTokens.push(view.workerTokens);
    },
  }).run();
  const summary = buildSummary(run, result);
  result.gaps.release();

  const t = result.table;
  const ttftWeights = logs.map((log) => new Float64Array(log.end.length));
  const itlWeights = logs.map((log) => new Float64Array(log.end.length));
  let ttftCount = 0;
  let itlCount = 0;
  let promptSum = 0;
  const counted: number[] = [];
  for (let id = 0; id < result.requestCount; id++) {
    if (t.sentMs[id] !== t.sentMs[id] || t.isWarmup[id] === 1 || t.status[id] !== Status.Completed || t.received[id] === 0) continue;
    counted.push(id);
    ttftCount++;
    promptSum += t.prompt[id];
    if (t.received[id] >= 2) itlCount++;
  }
  for (let id = 0; id < result.requestCount; id++) {
    if (t.sentMs[id] !== t.sentMs[id] || t.isWarmup[id] === 1 || t.status[id] !== Status.Completed || t.received[id] === 0) continue;
    const worker = Math.floor(t.rank[id] / run.pools[0].ranksPerWorker);
    const log = logs[worker];
    if (log === undefined) continue;
    spread(log, ttftWeights[worker], t.tokenizedMs[id], t.firstEmittedMs[id], 1 / ttftCount);
    const count = t.received[id];
    if (count >= 2) spread(log, itlWeights[worker], t.firstReceivedMs[id], t.lastReceivedMs[id], 1 / (count - 1) / itlCount);
  }

  // Bin by (prefill tokens, decoding requests); weights add, other features average.
  const bins = new Map<number, number[]>();
  let passes = 0;
  logs.forEach((log, worker) => {
    for (let j = 0; j < log.end.length; j++) {
      passes++;
      const u = ttftWeights[worker][j];
      const w = itlWeights[worker][j];
      if (u === 0 && w === 0) continue;
      const key = log.prefill[j] * 1_048_576 + log.decode[j];
      let bin = bins.get(key);
      if (bin === undefined) {
        bin = [log.prefill[j], log.decode[j], 0, 0, 0, 0, 0, 0, 0];
        bins.set(key, bin);
      }
      bin[2] += log.pairs[j];
      bin[3] += log.kv[j];
      bin[4] += log.emitted[j];
      bin[5] += u;
      bin[6] += w;
      bin[7] += log.workerTokens[j];
      bin[8] += 1;
    }
  });
  const flat: number[] = [];
  for (const bin of [...bins.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1])) {
    const n = bin[8];
    flat.push(bin[0], bin[1], bin[2] / n, bin[3] / n, bin[4] / n, bin[5], bin[6], bin[7] / n);
  }
  return {
    ttftMs: summary.metrics.time_to_first_token?.avg ?? null,
    itlMs: summary.metrics.inter_token_latency?.avg ?? null,
    bins: flat,
    passes,
    meanPromptTokens: ttftCount > 0 ? promptSum / ttftCount : 0,
    meanInflightAtSend: meanInflightAtSend(result.table, result.requestCount, counted),
  };
}

/**
 * Mean, over the counted requests, of the requests in flight (sent, whole response not yet
 * received) at each one's send, itself left out: a sweep over sends and response ends in time
 * order (an end at the same instant as a send is counted first, as the replay frees the slot first).
 */
function meanInflightAtSend(t: RequestTable, n: number, counted: readonly number[]): number {
  if (counted.length === 0) return 0;
  const events: Array<[number, number, number]> = [];
  for (let id = 0; id < n; id++) {
    if (t.sentMs[id] !== t.sentMs[id]) continue;
    events.push([t.sentMs[id], 1, id]);
    const end = t.responseReceivedMs[id];
    events.push([end === end ? end : Infinity, 0, id]);
  }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  const isCounted = new Uint8Array(n);
  for (const id of counted) isCounted[id] = 1;
  let inFlight = 0;
  let sum = 0;
  for (const [, kind, id] of events) {
    if (kind === 0) inFlight--;
    else {
      if (isCounted[id] === 1) sum += inFlight;
      inFlight++;
    }
  }
  return sum / counted.length;
}
