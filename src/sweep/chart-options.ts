/**
 * The `chart` key of a sweep file (docs/sweeps.md, "The chart"): what `sweep.svg` draws.
 *
 * By default each headline metric against the first swept key, one line per combination of the
 * other keys. `x` and `y` choose other metrics; with a metric on x, each line is drawn through
 * its points in the order of the swept key `along`, each point labelled with its value of it:
 * throughput against latency per GPU type, say, its points ordered by concurrency.
 */
import { METRIC_TAGS, METRIC_UNITS, STAT_NAMES, type ReplaySummary } from '../core/report-types.js';

/** What a sweep file's `chart` key holds, checked. */
export interface ChartOptions {
  /** A swept key, or a metric name. */
  x?: string;
  /** Metric names, one panel each. */
  y?: string[];
  /** With a metric on x: the swept key that orders and labels each line's points. */
  along?: string;
}

/** Run-level rates of a summary (`summary.run`), and each per GPU of the deployment. */
const RUN_RATES = ['request_throughput', 'output_token_throughput', 'input_token_throughput', 'total_token_throughput'] as const;
const RATE_UNITS: Record<(typeof RUN_RATES)[number], string> = {
  request_throughput: 'requests/s',
  output_token_throughput: 'tokens/s',
  input_token_throughput: 'tokens/s',
  total_token_throughput: 'tokens/s',
};

type Summary = Pick<ReplaySummary, 'metrics' | 'run'> & { deployment?: { gpus?: number | null } };

export interface ChartMetric {
  name: string;
  unit: string;
  get: (summary: Summary) => number | undefined;
}

/** The metric of a name (`inter_token_latency.avg`, `output_token_throughput_per_gpu`), or null. */
export function chartMetric(name: string): ChartMetric | null {
  const perGpu = name.endsWith('_per_gpu');
  const rate = RUN_RATES.find((r) => r === (perGpu ? name.slice(0, -'_per_gpu'.length) : name));
  if (rate !== undefined) {
    return {
      name,
      unit: perGpu ? `${RATE_UNITS[rate]}/GPU` : RATE_UNITS[rate],
      get: (summary) => {
        const value = summary.run?.[rate];
        if (!perGpu) return value;
        const gpus = summary.deployment?.gpus;
        return value === undefined || typeof gpus !== 'number' || !(gpus > 0) ? undefined : value / gpus;
      },
    };
  }
  const dot = name.lastIndexOf('.');
  const tag = METRIC_TAGS.find((t) => t === name.slice(0, dot));
  const stat = STAT_NAMES.find((s) => s === name.slice(dot + 1));
  if (dot < 0 || tag === undefined || stat === undefined) return null;
  return { name, unit: METRIC_UNITS[tag], get: (summary) => summary.metrics?.[tag]?.[stat] };
}

/** How to name the metrics in a message. */
export const METRIC_NAME_HELP =
  `a metric of the summary: ${METRIC_TAGS.slice(0, 4).join(', ')}, ... with a statistic ` +
  `(.avg, .p50, .p90, ...), or ${RUN_RATES.join(', ')} (each also _per_gpu)`;

/** A problem with a `chart` value: the dotted path below `chart` and the message. */
export interface ChartOptionIssue {
  path: string;
  message: string;
}

/**
 * Checks a raw `chart` mapping against the sweep's swept keys; returns the options or the first
 * issue. `repeat` is not a swept key here (repeats are averaged).
 */
export function parseChartOptions(raw: unknown, sweptKeys: readonly string[]): ChartOptions | ChartOptionIssue {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { path: 'chart', message: 'must be a mapping with x, y and along' };
  }
  const allowed = ['x', 'y', 'along'];
  const unknown = Object.keys(raw).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    return { path: 'chart', message: `unknown key ${unknown.map((k) => JSON.stringify(k)).join(', ')} (allowed: ${allowed.join(', ')})` };
  }
  const fields = raw as Record<string, unknown>;
  const keyList = sweptKeys.length > 0 ? sweptKeys.join(', ') : 'none';
  const options: ChartOptions = {};
  if (fields.x !== undefined) {
    if (typeof fields.x !== 'string' || (!sweptKeys.includes(fields.x) && chartMetric(fields.x) === null)) {
      return { path: 'chart.x', message: `must be a swept key (${keyList}) or ${METRIC_NAME_HELP}; got ${JSON.stringify(fields.x)}` };
    }
    options.x = fields.x;
  }
  if (fields.y !== undefined) {
    const list = Array.isArray(fields.y) ? fields.y : [fields.y];
    if (list.length === 0) return { path: 'chart.y', message: 'must name at least one metric' };
    for (const [i, name] of list.entries()) {
      if (typeof name !== 'string' || chartMetric(name) === null) {
        const path = Array.isArray(fields.y) ? `chart.y.${i}` : 'chart.y';
        return { path, message: `must be ${METRIC_NAME_HELP}; got ${JSON.stringify(name)}` };
      }
    }
    options.y = list as string[];
  }
  const xIsMetric = options.x !== undefined && !sweptKeys.includes(options.x);
  if (fields.along !== undefined) {
    if (typeof fields.along !== 'string' || !sweptKeys.includes(fields.along)) {
      return { path: 'chart.along', message: `must be a swept key (${keyList}); got ${JSON.stringify(fields.along)}` };
    }
    if (!xIsMetric) return { path: 'chart.along', message: 'is for a metric on x (chart.x); a swept key on x orders the points itself' };
    options.along = fields.along;
  } else if (xIsMetric) {
    return { path: 'chart.along', message: `is needed with a metric on x: the swept key that orders each line's points (${keyList})` };
  }
  return options;
}
