/**
 * AIPerf's statistics (docs/aiperf-files.md), shared by the JSONL cross-check and the writer:
 * numpy-linear percentiles and population std (`core/stats.ts`) plus `sum`; error-adjusted
 * statistics over successes and one +Infinity per failure with numpy's `nearest` method;
 * and the run-level values AIPerf derives from the records.
 */
import { summarize } from '../core/stats.js';
import { isValidRecord } from './read-aiperf-jsonl.js';
import { getMetricInfo } from './read-aiperf-tags.js';
import type { AiperfMetric, AiperfRequestRecord, AiperfStat } from './read-aiperf-types.js';

export const PERCENTILE_STATS = ['p1', 'p5', 'p10', 'p25', 'p50', 'p75', 'p90', 'p95', 'p99'] as const;

/** avg, min, max, sum, p1..p99, std (population), count of the values. */
export function distributionStats(values: ArrayLike<number>): Partial<Record<AiperfStat, number>> {
  const stats = summarize(values);
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i];
  return { ...stats, sum };
}

/** numpy.percentile(sorted, q, method='nearest'): rank (q/100)(n-1) rounded half to even. */
export function percentileNearest(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  const h = (q / 100) * (n - 1);
  const floor = Math.floor(h);
  const fraction = h - floor;
  let rank = fraction > 0.5 ? floor + 1 : fraction < 0.5 ? floor : floor % 2 === 0 ? floor : floor + 1;
  rank = Math.min(Math.max(rank, 0), n - 1);
  return sorted[rank];
}

/**
 * Statistics of an error-adjusted metric (`adj_*`): the successes' values plus one +Infinity
 * per failed request; percentiles with numpy's `nearest` method; avg, max, sum and std are
 * infinite as soon as one request failed.
 */
export function adjustedStats(values: ArrayLike<number>, failedCount: number): Partial<Record<AiperfStat, number>> {
  const sorted = new Float64Array(values.length + failedCount);
  for (let i = 0; i < values.length; i++) sorted[i] = values[i];
  for (let i = values.length; i < sorted.length; i++) sorted[i] = Infinity;
  sorted.sort();
  const stats: Partial<Record<AiperfStat, number>> = {
    avg: failedCount > 0 ? Infinity : NaN,
    min: sorted[0],
    max: sorted[sorted.length - 1],
    sum: failedCount > 0 ? Infinity : NaN,
    std: failedCount > 0 ? Infinity : NaN,
    count: sorted.length,
  };
  for (const stat of PERCENTILE_STATS) stats[stat] = percentileNearest(sorted, Number(stat.slice(1)));
  return stats;
}

/** The four metrics AIPerf error-adjusts (docs/aiperf-files.md). */
export const ADJUSTED_TAGS = ['time_to_first_token', 'request_latency', 'inter_token_latency', 'decode_duration'] as const;

const NS_PER_S = 1_000_000_000n;

function creditToStartMs(record: AiperfRequestRecord): number | undefined {
  if (record.creditIssuedNs === undefined || record.requestStartNs === undefined) return undefined;
  return Number(record.requestStartNs - record.creditIssuedNs) / 1e6;
}

const DERIVED_FROM_COLUMNS: ReadonlyArray<readonly [string, (record: AiperfRequestRecord) => number | undefined]> = [
  ['credit_to_start_latency', creditToStartMs],
  [
    'effective_latency',
    (record) =>
      record.creditIssuedNs !== undefined && record.requestEndNs !== undefined
        ? Number(record.requestEndNs - record.creditIssuedNs) / 1e6
        : undefined,
  ],
];

/** Seconds between two nanosecond timestamps, the difference taken exactly. */
export function secondsBetween(startNs: bigint, endNs: bigint): number {
  const difference = endNs - startNs;
  return Number(difference / NS_PER_S) + Number(difference % NS_PER_S) / 1e9;
}

/**
 * The summary AIPerf would compute from these records: statistics of every per-request
 * metric over the valid records (lists flattened), `error_isl` over the failed ones, and the
 * run-level values. `benchmark_duration` is `max(start + request_latency) - min(start)` over
 * valid records, as AIPerf's `max_response_timestamp` is start + latency (docs/aiperf-files.md), with
 * the timestamps' differences taken exactly.
 */
export function summarizeAiperfRecords(records: readonly AiperfRequestRecord[]): Record<string, AiperfMetric> {
  const valid = records.filter(isValidRecord);
  const failed = records.filter((record) => record.error !== null && record.phase !== 'warmup');
  const values = new Map<string, number[]>();
  for (const record of valid) {
    for (const [tag, value] of Object.entries(record.metrics)) {
      if (tag === 'error_isl') continue;
      let list = values.get(tag);
      if (!list) values.set(tag, (list = []));
      if (Array.isArray(value)) list.push(...value);
      else list.push(value);
    }
  }
  // Metrics AIPerf derives from the metadata columns (docs/aiperf-files.md), when the lines lack them.
  for (const [tag, derive] of DERIVED_FROM_COLUMNS) {
    if (values.has(tag)) continue;
    const list = valid.map(derive).filter((value): value is number => value !== undefined);
    if (list.length > 0) values.set(tag, list);
  }
  const metrics: Record<string, AiperfMetric> = {};
  const unitOf = (tag: string): string => getMetricInfo(tag)?.unit ?? '';
  for (const [tag, list] of values) {
    if (list.length === 0) continue;
    metrics[tag] = { tag, unit: unitOf(tag), kind: 'distribution', stats: distributionStats(list) };
  }
  const errorIsl = failed.map((record) => record.metrics.error_isl).filter((value): value is number => typeof value === 'number');
  if (errorIsl.length > 0)
    metrics.error_isl = { tag: 'error_isl', unit: 'tokens', kind: 'distribution', stats: distributionStats(errorIsl) };
  const single = (tag: string, value: number): void => {
    metrics[tag] = { tag, unit: unitOf(tag), kind: 'single', stats: { avg: value } };
  };
  single('request_count', valid.length);
  if (failed.length > 0) {
    single('error_request_count', failed.length);
    single('completed_request_count', valid.length + failed.length);
    single('request_error_rate', (100 * failed.length) / (valid.length + failed.length));
    if (errorIsl.length > 0)
      single(
        'total_error_isl',
        errorIsl.reduce((a, b) => a + b, 0),
      );
  }
  const total = (tag: string): number | undefined => (metrics[tag] ? metrics[tag].stats.sum : undefined);
  const totalIsl = total('input_sequence_length');
  const totalOsl = total('output_sequence_length');
  if (totalIsl !== undefined) single('total_isl', totalIsl);
  if (totalOsl !== undefined) single('total_osl', totalOsl);
  let firstStartNs: bigint | undefined;
  let lastEndNs: bigint | undefined;
  for (const record of valid) {
    if (record.requestStartNs === undefined) continue;
    const latencyMs = record.metrics.request_latency;
    const endNs = typeof latencyMs === 'number' ? record.requestStartNs + BigInt(Math.round(latencyMs * 1e6)) : record.requestEndNs;
    if (endNs === undefined) continue;
    if (firstStartNs === undefined || record.requestStartNs < firstStartNs) firstStartNs = record.requestStartNs;
    if (lastEndNs === undefined || endNs > lastEndNs) lastEndNs = endNs;
  }
  if (firstStartNs !== undefined && lastEndNs !== undefined && lastEndNs > firstStartNs) {
    const durationS = secondsBetween(firstStartNs, lastEndNs);
    single('benchmark_duration', durationS);
    single('request_throughput', valid.length / durationS);
    if (totalOsl !== undefined) single('output_token_throughput', totalOsl / durationS);
    if (totalIsl !== undefined) single('input_token_throughput', totalIsl / durationS);
    if (totalIsl !== undefined && totalOsl !== undefined) single('total_token_throughput', (totalIsl + totalOsl) / durationS);
  }
  if (failed.length > 0 && valid.length > 0) {
    for (const tag of ADJUSTED_TAGS) {
      const list = values.get(tag);
      if (!list) continue;
      const perRequest = valid.map((record) => record.metrics[tag]).filter((value): value is number => typeof value === 'number');
      metrics[`adj_${tag}`] = {
        tag: `adj_${tag}`,
        unit: unitOf(tag),
        kind: 'distribution',
        stats: adjustedStats(perRequest, failed.length),
      };
    }
  }
  return metrics;
}
