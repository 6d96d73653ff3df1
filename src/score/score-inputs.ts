/**
 * The two sides of a score, read from disk (docs/scoring.md):
 * - simulated: a sweep folder (`points.jsonl`, with `plan.json` for the swept keys), a
 *   folder of replay results (`summary.json` files), or AIPerf artifact folders written by
 *   `--aiperf`;
 * - measured: AIPerf artifact folders (every layout), a tabular CSV with a column mapping, or a
 *   vLLM request log (one point of its finished requests).
 * Errors name the file and the line or key.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { RunConfig } from '../config/types.js';
import type { ReplaySummary } from '../core/report-types.js';
import { displayPath } from '../io/paths.js';
import { findAiperfRunDirs, readAiperfRun, type AiperfRun } from '../io/read-aiperf.js';
import { AiperfInputError, parseJsonText } from '../io/read-aiperf-errors.js';
import { summarizeValues } from '../core/stats.js';
import { isVllmLog, readVllmLog, type VllmLog } from '../io/read-vllm-log.js';
import { inputPathKind, isFolder, isRegularFile, readInputHead, readTextFile } from '../io/read-text.js';
import { readTabularColumns, readTabularPoints, type TabularRead } from '../io/read-tabular.js';
import { formatSelection, type ColumnSelection } from '../io/selection.js';
import { pointRecordProblem } from '../sweep/results.js';
import { parseMetricName } from './metric-names.js';
import {
  canonicalKeyName,
  keysOfAiperfLoad,
  keysOfConfig,
  logKeyOf,
  metricsOfAiperf,
  metricsOfSummary,
  toKeyValue,
  type PointKey,
  type PointMetrics,
  type ScorePoint,
} from './points.js';

export interface SkippedPoint {
  source: string;
  reason: string;
}

export interface SimSide {
  /** What was read: `sweep`, `replay results`, `aiperf runs`, or `table` (another simulator's predicted points). */
  kind: 'sweep' | 'replay results' | 'aiperf runs' | 'table';
  path: string;
  points: ScorePoint[];
  /** Points that could not be scored (failed, timed out), with the reason. */
  skipped: SkippedPoint[];
  /** Swept keys (plan axes) in their canonical names. */
  axes: string[];
  /** A sweep of a fitted config: its fit.json and the training points' keys (plan.json's `fit`). */
  fit?: { file: string; train: PointKey[] };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readJsonFile(file: string): unknown {
  return parseJsonText(readTextFile(file), file);
}

function simPointFromSummary(
  summary: unknown,
  overrides: Record<string, unknown>,
  axes: readonly string[],
  source: string,
  file: string,
  line?: number,
): ScorePoint {
  if (!isObject(summary) || !isObject(summary.metrics) || !isObject(summary.run)) {
    throw new AiperfInputError(file, { line, key: 'summary' }, 'expected a replay summary with "metrics" and "run"');
  }
  const config = (isObject(summary.config) ? summary.config : {}) as unknown as RunConfig;
  const key: PointKey = keysOfConfig(config);
  for (const axis of axes.length > 0 ? axes : Object.keys(overrides)) {
    const name = canonicalKeyName(axis);
    if (name in key || !(axis in overrides)) continue;
    key[name] = toKeyValue(overrides[axis]);
  }
  const accuracy = isObject(summary.accuracy) ? summary.accuracy : undefined;
  const placeholder = accuracy?.basis === 'placeholder' ? String(accuracy.stratum) : undefined;
  return {
    source,
    key,
    metrics: metricsOfSummary(summary as unknown as ReplaySummary),
    ...(placeholder !== undefined ? { placeholder } : {}),
  };
}

/**
 * A sweep folder: `points.jsonl` (last line of each id counts) and `plan.json`'s axes. When
 * `plan.json` lists the plan's points, a record of any other id (a point of an earlier version of
 * the sweep file, which the sweep keeps in its log) is skipped, not scored.
 */
export function readSweepPoints(dir: string): SimSide {
  const pointsFile = join(dir, 'points.jsonl');
  let axes: string[] = [];
  let planIds: Set<string> | null = null;
  let fit: SimSide['fit'];
  const planFile = join(dir, 'plan.json');
  if (existsSync(planFile)) {
    const plan = readJsonFile(planFile);
    if (isObject(plan) && Array.isArray(plan.axes)) axes = plan.axes.filter((axis): axis is string => typeof axis === 'string');
    if (isObject(plan) && Array.isArray(plan.points)) {
      planIds = new Set(plan.points.flatMap((point) => (isObject(point) && typeof point.id === 'string' ? [point.id] : [])));
    }
    if (isObject(plan) && isObject(plan.fit) && typeof plan.fit.file === 'string' && Array.isArray(plan.fit.train)) {
      const train = plan.fit.train.filter(isObject).map((key) => canonicalKeys(key));
      if (train.length > 0) fit = { file: plan.fit.file, train };
    }
  }
  const lines = readTextFile(pointsFile).split('\n');
  const byId = new Map<string, { record: Record<string, unknown>; line: number }>();
  for (let index = 0; index < lines.length; index++) {
    const text = lines[index];
    if (text.trim() === '') continue;
    const record = parseJsonText(text, pointsFile, index + 1);
    const problem = pointRecordProblem(record);
    if (problem !== null || !isObject(record) || typeof record.id !== 'string') {
      throw new AiperfInputError(
        pointsFile,
        { line: index + 1 },
        `${problem ?? 'expected a point record {id, overrides, status, summary}'}; the record is damaged`,
      );
    }
    byId.set(record.id, { record, line: index + 1 });
  }
  const points: ScorePoint[] = [];
  const skipped: SkippedPoint[] = [];
  for (const [id, { record, line }] of byId) {
    const source = `${displayPath(pointsFile)}:${line} (${id})`;
    if (planIds !== null && !planIds.has(id)) {
      skipped.push({ source, reason: `not in ${displayPath(planFile)} (a point of an earlier version of the sweep file)` });
      continue;
    }
    const overrides = isObject(record.overrides) ? record.overrides : {};
    if (record.status !== 'ok' || !isObject(record.summary)) {
      const error = typeof record.error === 'string' ? `: ${record.error}` : '';
      skipped.push({ source, reason: `status ${String(record.status)}${error}` });
      continue;
    }
    points.push(simPointFromSummary(record.summary, overrides, axes, source, pointsFile, line));
  }
  return { kind: 'sweep', path: dir, points, skipped, axes: axes.map(canonicalKeyName), ...(fit === undefined ? {} : { fit }) };
}

/** A fit's training point key (`{concurrency: 4}`) in the score's canonical key names. */
function canonicalKeys(key: Record<string, unknown>): PointKey {
  const out: PointKey = {};
  for (const [name, value] of Object.entries(key)) {
    if (typeof value === 'number' || typeof value === 'string') out[canonicalKeyName(name)] = value;
  }
  return out;
}

function findSummaryFiles(dir: string, depth = 3): string[] {
  if (existsSync(join(dir, 'summary.json'))) return [join(dir, 'summary.json')];
  if (depth === 0) return [];
  const found: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const child = join(dir, name);
    if (isFolder(child)) found.push(...findSummaryFiles(child, depth - 1));
  }
  return found;
}

export interface ReadSimOptions {
  /** For a table: the column mapping (as for measured tables). */
  mapping?: Record<string, string>;
  /** For a table: the rows that hold this side's predictions (`source=mocker`). */
  select?: readonly ColumnSelection[];
}

/** True for a CSV table of points (not an AIPerf summary CSV). */
export function isPointTable(path: string): boolean {
  return isRegularFile(path) && path.endsWith('.csv') && !isAiperfSummaryCsv(path);
}

/**
 * The simulated side: a sweep folder (has `points.jsonl`), a folder of replay results
 * (`summary.json` files at or under it), AIPerf artifact folders written with `--aiperf`, or a
 * CSV table of another simulator's predicted points, read like a measured table (its rows
 * chosen with `select`), so that peers are scored on the same measured points.
 */
export function readSimPoints(path: string, options: ReadSimOptions = {}): SimSide {
  const kind = inputPathKind(path);
  if (isPointTable(path)) {
    const table = readTabularPoints(path, { mapping: options.mapping, select: options.select });
    for (const [column, target] of Object.entries(table.mapping)) parseMetricNameIfMetric(target, path, column);
    return { kind: 'table', path, points: pointsOfTable(table), skipped: [], axes: [] };
  }
  if (kind === 'folder' && existsSync(join(path, 'points.jsonl'))) return readSweepPoints(path);
  if (kind === 'file' && basename(path) === 'points.jsonl') return readSweepPoints(join(path, '..'));
  const summaries =
    kind === 'file' && path.endsWith('.json') && basename(path) === 'summary.json'
      ? [path]
      : kind === 'folder'
        ? findSummaryFiles(path)
        : [];
  if (summaries.length > 0) {
    const points = summaries.map((file) => simPointFromSummary(readJsonFile(file), {}, [], displayPath(file), file));
    return { kind: 'replay results', path, points, skipped: [], axes: [] };
  }
  if (kind === 'file' && !/(_aiperf|_genai_perf)\.(json|csv)$/.test(basename(path))) {
    throw new AiperfInputError(
      path,
      undefined,
      'not a simulated side: give a sweep folder (points.jsonl), replay results (summary.json), AIPerf artifact folders or a CSV table of predicted points',
    );
  }
  const runs = findAiperfRunDirs(path);
  if (runs.length === 0) {
    throw new AiperfInputError(
      path,
      undefined,
      'no simulated points here: expected a sweep folder (points.jsonl), replay results (summary.json), AIPerf artifact folders or a CSV table of predicted points',
    );
  }
  return { kind: 'aiperf runs', path, points: runs.map((dir) => pointOfAiperfRun(readAiperfRun(dir))), skipped: [], axes: [] };
}

function pointOfAiperfRun(run: AiperfRun): ScorePoint {
  const point: ScorePoint = {
    source: displayPath(run.dir),
    key: keysOfAiperfLoad(run.load),
    metrics: metricsOfAiperf(run.summary.metrics),
  };
  if (run.load.islStddev !== undefined || run.load.oslStddev !== undefined)
    point.spread = {
      ...(run.load.islStddev !== undefined ? { islStddev: run.load.islStddev } : {}),
      ...(run.load.oslStddev !== undefined ? { oslStddev: run.load.oslStddev } : {}),
    };
  if (run.load.datasetEntries !== undefined)
    point.dataset = {
      entries: run.load.datasetEntries,
      ...(run.load.requestCount !== undefined ? { requests: run.load.requestCount } : {}),
    };
  return point;
}

export interface MeasuredSide {
  points: ScorePoint[];
  /** How each input was read, for the report: AIPerf layout and load sources, or the column mapping. */
  notes: string[];
  /** Selections that were applied to CSV columns (the rest apply to point keys). */
  appliedSelections: ColumnSelection[];
}

export interface ReadMeasuredOptions {
  /** Column mapping for tabular CSVs (column -> key or metric name). */
  mapping?: Record<string, string>;
  select?: readonly ColumnSelection[];
}

/** True for a CSV that is an AIPerf/GenAI-Perf summary rather than a table of points. */
function isAiperfSummaryCsv(file: string): boolean {
  const name = basename(file);
  if (name.endsWith('_aiperf.csv') || name.endsWith('_genai_perf.csv')) return true;
  const head = readInputHead(file, file, 200).toString('utf8');
  return /^\uFEFF?Metric,/.test(head);
}

function pointsOfTable(table: TabularRead): ScorePoint[] {
  return table.points.map((row) => {
    const metrics: PointMetrics = {};
    for (const [name, value] of Object.entries(row.metrics)) {
      if (value === null) continue;
      const metric = parseMetricName(name);
      (metrics[metric.tag] ??= {})[metric.stat] = value;
    }
    return { source: `${displayPath(row.file)}:${row.line}`, key: row.key, metrics };
  });
}

/** Columns of the tabular CSVs among the measured paths (AIPerf folders have none). */
export function tabularColumnsOf(paths: readonly string[]): string[] {
  const columns: string[] = [];
  for (const path of paths) {
    if (isRegularFile(path) && path.endsWith('.csv') && !isAiperfSummaryCsv(path)) columns.push(...readTabularColumns(path));
  }
  return columns;
}

export function readMeasuredPoints(paths: readonly string[], options: ReadMeasuredOptions = {}): MeasuredSide {
  const points: ScorePoint[] = [];
  const notes: string[] = [];
  const applied: ColumnSelection[] = [];
  for (const path of paths) {
    if (inputPathKind(path) === 'file' && path.endsWith('.csv') && !isAiperfSummaryCsv(path)) {
      const table = readTabularPoints(path, { mapping: options.mapping, select: options.select, unknownSelectColumns: 'ignore' });
      for (const [column, target] of Object.entries(table.mapping)) parseMetricNameIfMetric(target, path, column);
      applied.push(...table.appliedSelections);
      const selection = table.appliedSelections.map(formatSelection).join(', ');
      notes.push(
        `${displayPath(path)}: ${table.points.length} rows` +
          (selection ? ` selected by ${selection} (${table.skippedRows} left out)` : '') +
          `; columns ${Object.entries(table.mapping)
            .map(([column, target]) => `${column} -> ${target}`)
            .join(', ')}`,
      );
      points.push(...pointsOfTable(table));
      continue;
    }
    if (isVllmLog(path)) {
      const log = readVllmLog(path);
      notes.push(
        `${displayPath(path)}: vLLM request log, ${log.rows - log.unfinished} finished requests` +
          (log.unfinished > 0 ? ` (${log.unfinished} unfinished, not scored)` : '') +
          (log.rejected > 0 ? ` (${log.rejected} never queued, not scored)` : '') +
          '; TTFT, TPOT (as inter_token_latency) and latency from queued_ts',
      );
      points.push(pointOfVllmLog(log, displayPath(path)));
      continue;
    }
    for (const dir of findAiperfRunDirs(path)) {
      const run = readAiperfRun(dir);
      const sources = Object.entries(run.load.sources)
        .filter(([field]) => field !== 'model' && field !== 'requestCount')
        .map(([field, source]) => `${field} from ${source}`)
        .join(', ');
      notes.push(
        `${displayPath(dir)}: AIPerf ${run.summary.layout} layout (${run.summary.format}); ${sources || 'no load parameters found'}`,
      );
      points.push(pointOfAiperfRun(run));
    }
  }
  return { points, notes, appliedSelections: applied };
}

/**
 * A vLLM request log as one measured point (docs/request-logs.md): the statistics of its finished
 * requests' TTFT, TPOT and latency under AIPerf's names (`time_to_first_token`,
 * `inter_token_latency`, `request_latency`), keyed `log` by its folder's name, as its replay is.
 */
export function pointOfVllmLog(log: VllmLog, source: string): ScorePoint {
  const metrics: PointMetrics = {};
  const add = (tag: string, values: Float64Array): void => {
    const finite = Float64Array.from(Array.from(values).filter((v, i) => log.finished[i] === 1 && Number.isFinite(v)));
    if (finite.length === 0) return;
    const { avg, min, max, p1, p5, p10, p25, p50, p75, p90, p95, p99, std, count } = summarizeValues(finite);
    metrics[tag] = { avg, min, max, p1, p5, p10, p25, p50, p75, p90, p95, p99, std, count };
  };
  add('time_to_first_token', log.ttftMs);
  add('inter_token_latency', log.tpotMs);
  add('request_latency', log.latencyMs);
  metrics.request_count = { avg: log.rows - log.unfinished };
  return { source, key: { log: logKeyOf(source) }, metrics };
}

function parseMetricNameIfMetric(target: string, file: string, column: string): void {
  if (!target.includes('.')) return;
  try {
    parseMetricName(target);
  } catch (error) {
    throw new AiperfInputError(file, undefined, `column ${column}: ${(error as Error).message}`);
  }
}

/** A path as reports show it: never absolute (`io/paths.ts`). */
export function shortPath(path: string): string {
  return displayPath(path);
}
