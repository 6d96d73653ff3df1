/**
 * Names of the metrics a score is computed on (docs/scoring.md): an AIPerf tag and a
 * statistic, `time_to_first_token.p90`, `request_latency.p99`; a single-value metric by its
 * tag alone, `output_token_throughput`. Short aliases are accepted on the command line
 * (`ttft.p90`, `itl`, `tpot`) and turned into the canonical name.
 */
import { canonicalTag, getMetricInfo } from '../io/read-aiperf-tags.js';
import { AIPERF_STATS, type AiperfStat } from '../io/read-aiperf-types.js';

/** TTFT avg / p50 / p90, ITL (TPOT) avg, output token throughput (the usual accuracy table of a serving simulator). */
export const DEFAULT_SCORE_METRICS = [
  'time_to_first_token.avg',
  'time_to_first_token.p50',
  'time_to_first_token.p90',
  'inter_token_latency.avg',
  'output_token_throughput',
] as const;

const SHORT_NAMES: Readonly<Record<string, string>> = {
  ttft: 'time_to_first_token',
  ttst: 'time_to_second_token',
  itl: 'inter_token_latency',
  tpot: 'inter_token_latency',
  latency: 'request_latency',
  e2e_latency: 'request_latency',
  icl: 'inter_chunk_latency',
  token_gap: 'inter_chunk_latency',
  throughput: 'output_token_throughput',
  output_throughput: 'output_token_throughput',
  request_rate_achieved: 'request_throughput',
  duration: 'benchmark_duration',
};

export interface MetricName {
  /** Canonical name: `tag.stat`, or the bare tag of a single-value metric. */
  id: string;
  tag: string;
  stat: AiperfStat;
  isSingle: boolean;
}

const STATS = new Set<string>(AIPERF_STATS);

/** Parses a metric name; throws with the accepted forms when it is not one. */
export function parseMetricName(name: string): MetricName {
  const text = name.trim();
  const dot = text.lastIndexOf('.');
  let tagPart = text;
  let statPart: string | undefined;
  if (dot > 0 && STATS.has(text.slice(dot + 1))) {
    tagPart = text.slice(0, dot);
    statPart = text.slice(dot + 1);
  } else if (dot > 0) {
    throw new Error(`metric "${name}": unknown statistic "${text.slice(dot + 1)}" (one of ${AIPERF_STATS.join(', ')})`);
  }
  const tag = canonicalTag(SHORT_NAMES[tagPart.toLowerCase()] ?? tagPart);
  if (!/^[a-z0-9_]+$/.test(tag)) throw new Error(`metric "${name}": expected TAG or TAG.STAT, e.g. time_to_first_token.p90`);
  const info = getMetricInfo(tag);
  const isSingle = info?.kind === 'single';
  if (isSingle) {
    if (statPart !== undefined && statPart !== 'avg') throw new Error(`metric "${name}": ${tag} is a single value; it has no ${statPart}`);
    return { id: tag, tag, stat: 'avg', isSingle: true };
  }
  const stat = (statPart ?? 'avg') as AiperfStat;
  return { id: `${tag}.${stat}`, tag, stat, isSingle: false };
}

/** Parses a comma-separated list of metric names, dropping repeats. */
export function parseMetricList(list: readonly string[]): MetricName[] {
  const seen = new Set<string>();
  const names: MetricName[] = [];
  for (const item of list.flatMap((entry) => entry.split(','))) {
    if (item.trim() === '') continue;
    const parsed = parseMetricName(item);
    if (seen.has(parsed.id)) continue;
    seen.add(parsed.id);
    names.push(parsed);
  }
  return names;
}

/** Unit of a metric name for tables and charts. */
export function unitOfMetric(metric: MetricName): string {
  if (metric.stat === 'count') return 'requests';
  return getMetricInfo(metric.tag)?.unit ?? '';
}
