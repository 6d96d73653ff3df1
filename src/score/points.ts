/**
 * A load point as scoring sees it, simulated or measured: the keys it is matched on
 * (`concurrency` or `request_rate`, `isl`, `osl`, any swept config key) and its metrics as
 * AIPerf statistics by tag. Values in AIPerf's display units (ms, tokens/sec, sec).
 */
import type { RunConfig } from '../config/types.js';
import type { ReplaySummary } from '../core/report-types.js';
import type { AiperfLoad, AiperfMetric, AiperfStat } from '../io/read-aiperf-types.js';
import type { MetricName } from './metric-names.js';

export type KeyValue = number | string;
export type PointKey = Record<string, KeyValue>;
export type PointMetrics = Record<string, Partial<Record<AiperfStat, number>>>;

export interface ScorePoint {
  /** Where the point came from, for listings: `sweep/points.jsonl:3`, a run folder, `file.csv:12`. */
  source: string;
  key: PointKey;
  metrics: PointMetrics;
  /** The length spread a measured run asked for (AIPerf's stddev of ISL and OSL), when it says. */
  spread?: { islStddev?: number; oslStddev?: number };
  /** A measured run that repeated its prompts: its dataset's entries and its request count (AIPerf's --num-dataset-entries). */
  dataset?: { entries: number; requests?: number };
  /** A simulated point that ran on the placeholder pass times: its summary's reason (`accuracy.stratum`). */
  placeholder?: string;
}

/** The load keys, in the order tables show them. */
export const LOAD_KEYS = ['concurrency', 'request_rate'] as const;
export const CANONICAL_KEYS = ['concurrency', 'request_rate', 'isl', 'osl'] as const;

/** Config paths that are the canonical keys under another name. */
const CANONICAL_PATHS: Readonly<Record<string, string>> = {
  'traffic.load.concurrency': 'concurrency',
  'traffic.load.requests_per_second': 'request_rate',
  'traffic.source.input_tokens': 'isl',
  'traffic.source.output_tokens': 'osl',
  'traffic.source.new_input_tokens_per_turn': 'isl',
  'traffic.source.output_tokens_per_turn': 'osl',
};

/** The canonical name of a swept key (`traffic.load.concurrency` -> `concurrency`). */
export function canonicalKeyName(name: string): string {
  return CANONICAL_PATHS[name] ?? name;
}

/** A key value as a comparable number or string (booleans and objects as text). */
export function toKeyValue(value: unknown): KeyValue {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    const trimmed = value.trim();
    return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : value;
  }
  if (typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** Text of a key value for matching: numbers to 12 significant digits, so 0.1+0.2 equals 0.3. */
export function keyValueText(value: KeyValue): string {
  return typeof value === 'number' ? String(Number(value.toPrecision(12))) : value;
}

export function formatKey(key: PointKey, names: readonly string[] = Object.keys(key)): string {
  return names
    .filter((name) => name in key)
    .map((name) => `${name}=${keyValueText(key[name])}`)
    .join(', ');
}

/** The key a vLLM request log is matched on: the name of its folder (docs/request-logs.md). */
export function logKeyOf(path: string): string {
  const parts = path.split(/[\\/]+/).filter((part) => part !== '' && part !== '.');
  if (parts.length > 0 && parts[parts.length - 1] === 'requests.jsonl') parts.pop();
  return parts.length > 0 ? parts[parts.length - 1] : path;
}

/** The canonical keys of a run config: load, ISL and OSL where the source fixes them. */
export function keysOfConfig(config: RunConfig): PointKey {
  const key: PointKey = {};
  const load = config.traffic?.load;
  if (load?.type === 'concurrency') key.concurrency = load.concurrency;
  else if (load?.type === 'poisson' || load?.type === 'constant_rate') key.request_rate = load.requests_per_second;
  const source = config.traffic?.source;
  if (source?.type === 'synthetic') {
    key.isl = source.input_tokens;
    key.osl = source.output_tokens;
  } else if (source?.type === 'synthetic-session') {
    key.isl = source.new_input_tokens_per_turn;
    key.osl = source.output_tokens_per_turn;
  } else if (source?.type === 'trace' && source.format === 'vllm-log') {
    key.log = logKeyOf(source.path);
  }
  return key;
}

/** The keys of an AIPerf run from its load parameters. */
export function keysOfAiperfLoad(load: AiperfLoad): PointKey {
  const key: PointKey = {};
  if (load.concurrency !== undefined) key.concurrency = load.concurrency;
  if (load.requestRate !== undefined) key.request_rate = load.requestRate;
  if (load.isl !== undefined) key.isl = load.isl;
  if (load.osl !== undefined) key.osl = load.osl;
  return key;
}

/**
 * The metrics of a replay summary under AIPerf's tags: per-request statistics as they are
 * (`token_gap` is AIPerf's `inter_chunk_latency`), run values as single values.
 */
export function metricsOfSummary(summary: Pick<ReplaySummary, 'metrics' | 'run'>): PointMetrics {
  const metrics: PointMetrics = {};
  for (const [tag, stats] of Object.entries(summary.metrics ?? {})) {
    if (!stats) continue;
    const { unit: _unit, approximate: _approximate, ...rest } = stats;
    const values: Partial<Record<AiperfStat, number>> = { ...rest };
    if (typeof stats.avg === 'number' && typeof stats.count === 'number') values.sum = stats.avg * stats.count;
    metrics[tag === 'token_gap' ? 'inter_chunk_latency' : tag] = values;
  }
  const run = summary.run;
  if (run) {
    const single = (tag: string, value: number | undefined): void => {
      if (typeof value === 'number') metrics[tag] = { avg: value };
    };
    single('request_count', run.request_count);
    single('error_request_count', run.error_request_count);
    single('benchmark_duration', run.benchmark_duration_s);
    single('request_throughput', run.request_throughput);
    single('output_token_throughput', run.output_token_throughput);
    single('input_token_throughput', run.input_token_throughput);
    single('total_token_throughput', run.total_token_throughput);
  }
  return metrics;
}

export function metricsOfAiperf(metrics: Record<string, AiperfMetric>): PointMetrics {
  const out: PointMetrics = {};
  for (const [tag, metric] of Object.entries(metrics)) out[tag] = { ...metric.stats };
  return out;
}

/** The value of a metric at a point; undefined when the point does not report it. */
export function metricValue(point: ScorePoint, metric: MetricName): number | undefined {
  const value = point.metrics[metric.tag]?.[metric.stat];
  return typeof value === 'number' && !Number.isNaN(value) ? value : undefined;
}

/**
 * Of `metrics`, the ones no point has a value of, with the metric names the points do have (for
 * the message that says what was looked for and what was found).
 */
export function missingMetrics(points: readonly ScorePoint[], metrics: readonly MetricName[]): { missing: MetricName[]; found: string[] } {
  const missing = metrics.filter((metric) => !points.some((point) => metricValue(point, metric) !== undefined));
  const found = new Set<string>();
  for (const point of points) {
    for (const [tag, stats] of Object.entries(point.metrics)) {
      for (const [stat, value] of Object.entries(stats ?? {}))
        if (typeof value === 'number') found.add(stat === 'avg' && Object.keys(stats ?? {}).length === 1 ? tag : `${tag}.${stat}`);
    }
  }
  return { missing, found: [...found].sort() };
}
