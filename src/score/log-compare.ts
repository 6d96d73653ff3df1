/**
 * A replay of a vLLM request log against the log itself (docs/request-logs.md): per request and
 * on the mean, TTFT, TPOT and latency as vLLM measured them and as the replay gives them.
 *
 * Both sides are the engine's own times, from the request's queueing: vLLM's `queued_ts`,
 * `first_token_ts`, `last_token_ts`, and the replay's `queued_ms` and the emit times of the first
 * and last output tokens (`token_emitted_ms`). TPOT is (last - first) / (output tokens - 1), for
 * requests of two or more output tokens. Only the requests the log saw finish are compared; a
 * request the replay did not finish is counted and left out of the means.
 */
import type { RequestRecord } from '../core/report-types.js';
import type { VllmLog } from '../io/read-vllm-log.js';

export const LOG_METRICS = ['ttft', 'tpot', 'latency'] as const;
export type LogMetric = (typeof LOG_METRICS)[number];

/** One request of the log: measured and replayed, ms (NaN where a side has no value). */
export interface LogRequestRow {
  requestId: string;
  line: number;
  measured: Record<LogMetric, number>;
  replayed: Record<LogMetric, number>;
}

export interface LogMetricComparison {
  /** Requests with a value on both sides. */
  requests: number;
  measuredMeanMs: number;
  replayedMeanMs: number;
  /** (replayed - measured) / measured of the means, %. */
  meanErrorPct: number;
  /** Mean over the requests of |replayed - measured| / measured, %. */
  requestMapePct: number;
}

export interface LogComparison {
  rows: LogRequestRow[];
  metrics: Record<LogMetric, LogMetricComparison>;
  /** Requests the log saw finish and the replay did not. */
  unfinishedInReplay: number;
  /** Requests the log did not see finish (not compared). */
  unfinishedInLog: number;
}

/** The replay's TTFT, TPOT and latency of one request (engine times from its queueing), ms. */
export function replayedTimes(record: RequestRecord): Record<LogMetric, number> {
  const emitted = record.token_emitted_ms;
  if (record.status !== 'completed' || record.queued_ms === null || emitted.length === 0) return { ttft: NaN, tpot: NaN, latency: NaN };
  const first = emitted[0];
  const last = emitted[emitted.length - 1];
  return {
    ttft: first - record.queued_ms,
    tpot: emitted.length > 1 ? (last - first) / (emitted.length - 1) : NaN,
    latency: last - record.queued_ms,
  };
}

/**
 * Compares a log with the per-request records of its replay. `records[i]` is the replay of the
 * log's row i (the replay numbers requests in trace order); a record count that differs is an error.
 */
export function compareWithLog(log: VllmLog, records: readonly RequestRecord[]): LogComparison {
  if (records.length !== log.rows)
    throw new RangeError(`the replay has ${records.length} requests and the log ${log.rows}: compare a log with its own replay`);
  const rows: LogRequestRow[] = [];
  let unfinishedInReplay = 0;
  for (let i = 0; i < log.rows; i++) {
    if (log.finished[i] !== 1) continue;
    const record = records[i];
    if (record.request_id !== i) throw new RangeError(`replay record ${i} is request ${record.request_id}; records must be in trace order`);
    const replayed = replayedTimes(record);
    if (Number.isNaN(replayed.ttft)) unfinishedInReplay++;
    rows.push({
      requestId: log.requestIds[i],
      line: log.lines[i],
      measured: { ttft: log.ttftMs[i], tpot: log.tpotMs[i], latency: log.latencyMs[i] },
      replayed,
    });
  }
  const metrics = {} as Record<LogMetric, LogMetricComparison>;
  for (const metric of LOG_METRICS) {
    let n = 0;
    let measured = 0;
    let replayed = 0;
    let ape = 0;
    let apeCount = 0;
    for (const row of rows) {
      const m = row.measured[metric];
      const r = row.replayed[metric];
      if (!Number.isFinite(m) || !Number.isFinite(r)) continue;
      n++;
      measured += m;
      replayed += r;
      if (m > 0) {
        ape += Math.abs(r - m) / m;
        apeCount++;
      }
    }
    const measuredMean = n > 0 ? measured / n : NaN;
    const replayedMean = n > 0 ? replayed / n : NaN;
    metrics[metric] = {
      requests: n,
      measuredMeanMs: measuredMean,
      replayedMeanMs: replayedMean,
      meanErrorPct: measuredMean > 0 ? ((replayedMean - measuredMean) / measuredMean) * 100 : NaN,
      requestMapePct: apeCount > 0 ? (ape / apeCount) * 100 : NaN,
    };
  }
  return { rows, metrics, unfinishedInReplay, unfinishedInLog: log.unfinished };
}

const LABELS: Record<LogMetric, string> = { ttft: 'TTFT', tpot: 'TPOT', latency: 'latency' };

function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}

/** The comparison as a table: per metric, the two means, the error of the mean and the per-request MAPE. */
export function formatLogComparison(comparison: LogComparison): string {
  const lines = [
    `${'metric'.padEnd(10)}${'measured ms'.padStart(14)}${'replayed ms'.padStart(14)}${'error %'.padStart(10)}${'per-request MAPE %'.padStart(21)}`,
  ];
  for (const metric of LOG_METRICS) {
    const m = comparison.metrics[metric];
    lines.push(
      `${`${LABELS[metric]} mean`.padEnd(10)}${fixed(m.measuredMeanMs, 1).padStart(14)}${fixed(m.replayedMeanMs, 1).padStart(14)}${`${m.meanErrorPct >= 0 ? '+' : ''}${fixed(m.meanErrorPct, 1)}`.padStart(10)}${fixed(m.requestMapePct, 1).padStart(21)}`,
    );
  }
  lines.push(
    `${comparison.rows.length} finished requests compared` +
      (comparison.unfinishedInReplay > 0 ? `; ${comparison.unfinishedInReplay} of them unfinished in the replay (left out)` : '') +
      (comparison.unfinishedInLog > 0 ? `; ${comparison.unfinishedInLog} unfinished in the log (not compared)` : ''),
  );
  return `${lines.join('\n')}\n`;
}
