/**
 * `summary.csv`: one row per point in plan order, whatever order the points finished in.
 * Columns: id, status, one per swept key, one per metric statistic (`<tag>.<stat>` for every tag
 * of the report, present or not, so that every sweep has the same metric columns), the run-level
 * numbers (`run.<name>`), the TTFT stages (`ttft_stages.<name>`), how far such a prediction may be
 * off (`accuracy.<name>`, points with roofline timing), and the error. A point with no result yet
 * has status `pending` and empty cells.
 */
import { stringify } from 'csv-stringify/sync';
import { METRIC_TAGS, STAT_NAMES } from '../core/report-types.js';
import type { OutlinePoint, PlanOutline } from './plan.js';
import type { PointRecord } from './results.js';

const STAT_COLUMNS = [...STAT_NAMES, 'count'] as const;

const RUN_FIELDS = [
  'request_count',
  'error_request_count',
  'incomplete_request_count',
  'benchmark_duration_s',
  'request_throughput',
  'output_token_throughput',
  'input_token_throughput',
  'total_token_throughput',
  'worker_seconds',
  'gpu_hours',
] as const;

const TTFT_STAGE_FIELDS = [
  'mean_frontend_ms',
  'mean_tokenization_ms',
  'mean_queue_ms',
  'mean_prefill_ms',
  'mean_detokenization_ms',
] as const;

const ACCURACY_FIELDS = ['stratum', 'ttft_mape', 'itl_mape', 'points'] as const;

export function summaryColumns(axes: string[]): string[] {
  const columns = ['id', 'status', ...axes];
  for (const tag of METRIC_TAGS) for (const stat of STAT_COLUMNS) columns.push(`${tag}.${stat}`);
  for (const field of RUN_FIELDS) columns.push(`run.${field}`);
  for (const field of TTFT_STAGE_FIELDS) columns.push(`ttft_stages.${field}`);
  for (const field of ACCURACY_FIELDS) columns.push(`accuracy.${field}`);
  columns.push('error');
  return columns;
}

/**
 * A cell as text: numbers to 12 significant digits (a replay's sums carry float noise in the
 * last of JavaScript's 17, `12.000000000000002`, which no measurement can tell), objects as JSON,
 * absent as empty.
 */
export function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(toCsvPrecision(value)) : String(value);
  if (typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** A number to the 12 significant digits the CSV keeps. */
function toCsvPrecision(value: number): number {
  return Number(value.toPrecision(12));
}

/**
 * A metric's statistics as written: when every value was the same to the 12 digits kept (min and
 * max agree), its average is that value and its spread exactly 0, not the rounding noise of the
 * replay's clock and of summing n copies (a std of 7.6e-13 ms on a TTFT of 69.3 ms).
 */
function cleanStats(stats: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (stats === undefined || typeof stats.min !== 'number' || typeof stats.max !== 'number') return stats;
  if (toCsvPrecision(stats.min) !== toCsvPrecision(stats.max)) return stats;
  return { ...stats, avg: stats.min, std: 0 };
}

function row(axes: string[], point: OutlinePoint, record: PointRecord | undefined): string[] {
  const cells: string[] = [point.id, record?.status ?? 'pending'];
  for (const axis of axes) cells.push(cellText(point.overrides[axis]));
  const summary = record?.summary ?? null;
  for (const tag of METRIC_TAGS) {
    const stats = cleanStats(summary?.metrics?.[tag] as Record<string, unknown> | undefined);
    for (const stat of STAT_COLUMNS) cells.push(cellText(stats?.[stat]));
  }
  const run = summary?.run as Record<string, unknown> | undefined;
  for (const field of RUN_FIELDS) cells.push(cellText(run?.[field]));
  const stages = summary?.ttft_stages as Record<string, unknown> | undefined;
  for (const field of TTFT_STAGE_FIELDS) cells.push(cellText(stages?.[field]));
  const accuracy = summary?.accuracy as Record<string, unknown> | undefined;
  for (const field of ACCURACY_FIELDS) cells.push(cellText(accuracy?.[field]));
  cells.push(cellText(record?.error));
  return cells;
}

/**
 * The CSV text for the given points (all of the plan, or one shard's slice), in plan order.
 * `byId` holds the latest record of each id.
 */
export function summaryCsv(plan: PlanOutline, points: OutlinePoint[], byId: Map<string, PointRecord>): string {
  const rows = [...points].sort((a, b) => a.index - b.index).map((p) => row(plan.axes, p, byId.get(p.id)));
  return stringify(rows, { header: true, columns: summaryColumns(plan.axes), eof: true });
}
