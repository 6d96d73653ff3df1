/**
 * The files of a sweep directory and the records in them.
 *
 * - `points.jsonl` is an append log: one full line per finished point, written with one append
 *   as the point finishes, so a kill loses nothing that had finished. At a clean end it is
 *   rewritten (atomically) in plan order, one line per point, so that its bytes do not depend on
 *   the number of pool threads or the finish order. Every field of a line is deterministic.
 * - `timings.jsonl` holds what is not deterministic: wall times, one line per attempt.
 * - `plan.json` lists the points in plan order with their ids and overrides.
 */
import { appendFileSync, existsSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { formatValue } from '../config/errors.js';
import { InputError } from '../config/errors.js';
import { readInputBytes } from '../io/read-text.js';
import { outputError, writeOutputFile } from '../io/write-output.js';
import type { PointSummary } from './point-summary.js';
import type { ChartOptions } from './chart-options.js';
import type { Overrides, PlanOutline, SweepFit } from './plan.js';

export const PLAN_FILE = 'plan.json';
export const POINTS_FILE = 'points.jsonl';
export const TIMINGS_FILE = 'timings.jsonl';
export const SUMMARY_FILE = 'summary.csv';
export const CHART_FILE = 'sweep.svg';
export const SHARD_FILE = 'shard.json';

export type PointStatus = 'ok' | 'failed' | 'timeout';

/** One line of `points.jsonl`. */
export interface PointRecord {
  id: string;
  overrides: Overrides;
  status: PointStatus;
  summary: PointSummary | null;
  error: string | null;
}

/** One line of `timings.jsonl`. */
export interface TimingRecord {
  id: string;
  status: PointStatus;
  /** Wall time of the point as seen by the sweep (dispatch to result), ms. */
  wall_ms: number;
  /** The simulator's own wall-time fields, when the point finished. */
  simulator: Record<string, number> | null;
  /** Present when the point's pool thread primed its JIT just before it (included in wall_ms). */
  primed?: true;
}

/** The JSON line for a record (fixed key order). */
export function formatPointLine(record: PointRecord): string {
  const ordered: PointRecord = {
    id: record.id,
    overrides: record.overrides,
    status: record.status,
    summary: record.summary,
    error: record.error,
  };
  return `${JSON.stringify(ordered)}\n`;
}

/** A sweep folder that cannot be used as it is (a damaged record, plans that differ): bad input, exit status 2. */
export class ResultsError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'ResultsError';
  }
}

// What a record must hold before it is trusted: its result goes into summary.csv, charts and
// scores, and a resumed sweep does not run it again.
const cell = z.number().nullable();
const statsSchema = z.looseObject({ unit: z.string(), approximate: z.boolean().optional() }).catchall(cell);
// The run's counts and rates are numbers where present (records of earlier versions may lack one).
const runFields = Object.fromEntries(
  ['error_request_count', 'incomplete_request_count', 'benchmark_duration_s', 'request_throughput', 'output_token_throughput'].map(
    (name) => [name, cell.optional()],
  ),
);
const summarySchema = z.looseObject({
  metrics: z.record(z.string(), statsSchema),
  run: z.looseObject({ request_count: cell, ...runFields }),
  ttft_stages: z.record(z.string(), cell).optional(),
  simulator: z.record(z.string(), z.unknown()).optional(),
});
const base = { id: z.string().min(1), overrides: z.record(z.string(), z.unknown()) };
const recordSchema = z.discriminatedUnion('status', [
  z.looseObject({ ...base, status: z.literal('ok'), summary: summarySchema, error: z.null().optional() }),
  z.looseObject({ ...base, status: z.enum(['failed', 'timeout']), summary: z.null().optional(), error: z.string() }),
]);

/** What is wrong with a parsed line as a point record (`summary.metrics.x.avg: expected a number, got "fast"`), or null. */
export function pointRecordProblem(value: unknown): string | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return `expected a point record {id, overrides, status, summary, error}, got ${formatValue(value)}`;
  const parsed = recordSchema.safeParse(value, { reportInput: true });
  if (parsed.success) return null;
  const issue = parsed.error.issues[0];
  const path = issue.path.map(String).join('.');
  let reason: string;
  if (issue.code === 'invalid_union' || (issue.code === 'invalid_value' && path === 'status')) {
    reason = `must be ok, failed or timeout, got ${formatValue((value as { status?: unknown }).status)}`;
  } else if (issue.code === 'invalid_type') {
    const expected =
      issue.expected === 'record' || issue.expected === 'object' ? 'a mapping' : issue.expected === 'null' ? 'null' : `a ${issue.expected}`;
    reason = `expected ${expected}, got ${formatValue(issue.input)}`;
  } else {
    reason = issue.message;
  }
  return `${path === '' ? 'status' : path}: ${reason}`;
}

export interface ReadPointsResult {
  /** Every record in file order (a point run twice appears twice; the last one counts). */
  records: PointRecord[];
  /** The 1-based line of each record. */
  lines: number[];
  /** Bytes of an incomplete last line (a write cut short by a kill), 0 if none. */
  tornBytes: number;
}

/**
 * Reads `points.jsonl`. An incomplete last line (no newline, not valid JSON) is the trace of a
 * write cut short and is left out; with `repair`, it is also cut from the file so that appends
 * start on a fresh line. Any other bad line, and any record that is not a whole point record
 * (`pointRecordProblem`), is an error naming the file, the line and the field.
 */
export function readPoints(file: string, repair = false): ReadPointsResult {
  if (!existsSync(file)) return { records: [], lines: [], tornBytes: 0 };
  const text = readOwnFile(file);
  const records: PointRecord[] = [];
  const lines: number[] = [];
  let start = 0;
  let line = 0;
  let tornBytes = 0;
  while (start < text.length) {
    line++;
    const end = text.indexOf('\n', start);
    const isLast = end === -1;
    const body = isLast ? text.slice(start) : text.slice(start, end);
    if (body.trim() !== '') {
      let parsed: unknown;
      let ok = true;
      try {
        parsed = JSON.parse(body);
      } catch {
        ok = false;
      }
      if (ok) {
        const problem = pointRecordProblem(parsed);
        if (problem !== null) throw new ResultsError(`${file}:${line}: ${problem}; the record is damaged (remove or fix this line)`);
        records.push(parsed as PointRecord);
        lines.push(line);
        if (isLast && repair) appendFileSync(file, '\n');
      } else if (isLast) {
        tornBytes = Buffer.byteLength(body);
        if (repair) truncateSync(file, Buffer.byteLength(text) - tornBytes);
      } else {
        throw new ResultsError(`${file}:${line}: not a point record; the file is damaged (remove or fix this line)`);
      }
    }
    if (isLast) break;
    start = end + 1;
  }
  return { records, lines, tornBytes };
}

/**
 * The text of a file a sweep wrote (plan.json, points.jsonl, timings.jsonl), read through the
 * checked reader (a regular file, within the size limit). Bytes are not checked as UTF-8 here: a
 * torn last line is the readers' to judge.
 */
export function readOwnFile(file: string): string {
  return readInputBytes(file, file).toString('utf8');
}

/** The last record of each id. */
export function latestById(records: PointRecord[]): Map<string, PointRecord> {
  const byId = new Map<string, PointRecord>();
  for (const record of records) byId.set(record.id, record);
  return byId;
}

/** Appends one line; a failed append (a full disk) is an `OutputError` naming the file (a torn line is dropped on resume). */
function appendLine(file: string, line: string): void {
  try {
    appendFileSync(file, line);
  } catch (err) {
    throw outputError(file, err);
  }
}

export function appendPoint(file: string, record: PointRecord): void {
  // One append of one full line: a process killed after this call returns has the line on disk.
  appendLine(file, formatPointLine(record));
}

export function appendTiming(file: string, timing: TimingRecord): void {
  appendLine(file, `${JSON.stringify(timing)}\n`);
}

/** Writes a file through a temporary name and a rename, so a reader never sees half of it (io/write-output.ts). */
export function writeFileAtomic(file: string, content: string): void {
  writeOutputFile(file, content);
}

/**
 * Rewrites `points.jsonl` with one line per point: plan points in plan order, then, with
 * `others: 'keep'`, the records of ids outside this plan in their original order (a capacity
 * plan's log keeps replays an earlier search ran). A sweep's log is its results: `'drop'` leaves
 * records of ids outside the plan (an earlier version of the sweep file, a line from elsewhere)
 * out, so that the file is what a fresh run of the plan writes. Returns the ids left out.
 */
export function compactPoints(file: string, plan: PlanOutline, records: PointRecord[], others: 'keep' | 'drop' = 'keep'): string[] {
  const byId = latestById(records);
  const planIds = new Set(plan.points.map((p) => p.id));
  let out = '';
  for (const point of plan.points) {
    const record = byId.get(point.id);
    if (record !== undefined) out += formatPointLine(record);
  }
  const outside = [...byId.keys()].filter((id) => !planIds.has(id));
  if (others === 'keep') for (const id of outside) out += formatPointLine(byId.get(id) as PointRecord);
  writeFileAtomic(file, out);
  return others === 'keep' ? [] : outside;
}

/** The note for records a sweep's rewrite of `points.jsonl` left out (`compactPoints`), or null. */
export function droppedRecordsNote(file: string, ids: readonly string[]): string | null {
  if (ids.length === 0) return null;
  const shown = ids.slice(0, 5).join(', ') + (ids.length > 5 ? `, ... (${ids.length - 5} more)` : '');
  return `${file}: dropped ${ids.length} record(s) of points not in this sweep (${shown}): not results of it`;
}

/** The deterministic content of `plan.json`. */
export interface PlanFile {
  name: string;
  axes: string[];
  log2_axes: string[];
  points: Array<{ index: number; id: string; overrides: Overrides }>;
  /** The sweep file's `chart`, when it has one. */
  chart?: ChartOptions;
  /** The fit the base config came from (`PlanOutline.fit`); absent otherwise. */
  fit?: SweepFit;
}

export function planFileContent(plan: PlanOutline): string {
  const content: PlanFile = {
    name: plan.name,
    axes: plan.axes,
    log2_axes: plan.log2Axes,
    points: plan.points.map((p) => ({ index: p.index, id: p.id, overrides: p.overrides })),
    ...(plan.chart === undefined ? {} : { chart: plan.chart }),
    ...(plan.fit === undefined ? {} : { fit: plan.fit }),
  };
  return `${JSON.stringify(content, null, 2)}\n`;
}

export function readPlanFile(dir: string): PlanFile {
  const file = join(dir, PLAN_FILE);
  let text: string;
  try {
    text = readOwnFile(file);
  } catch (err) {
    if (err instanceof InputError && err.reason === 'no such file') {
      throw new ResultsError(`${file}: missing; is ${dir} a sweep output directory?`);
    }
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as PlanFile;
    if (!Array.isArray(parsed.points) || !Array.isArray(parsed.axes)) throw new Error('bad shape');
    return parsed;
  } catch {
    throw new ResultsError(`${file}: not a sweep plan`);
  }
}

export function outlineFromPlanFile(file: PlanFile): PlanOutline {
  return {
    name: file.name,
    axes: file.axes,
    log2Axes: file.log2_axes ?? [],
    points: file.points.map((p) => ({ index: p.index, id: p.id, overrides: p.overrides })),
    ...(file.chart === undefined ? {} : { chart: file.chart }),
    ...(file.fit === undefined ? {} : { fit: file.fit }),
  };
}
