/**
 * `servesim sweep merge DIR... --out DIR`: folds the output directories of one sweep (its shards,
 * or runs on several machines) into one, identical to what a single run of the whole plan writes:
 * the same `plan.json`, `points.jsonl` (plan order, one line per point) and `summary.csv`.
 * Every directory must hold the same plan. When a point has results in several directories, an ok
 * one wins over a failed one, and the earlier directory on the command line wins among failed
 * ones; two ok results that differ are an error naming both (a point's result is deterministic, so
 * they come from different versions of servesim or a damaged file). `--out` may be one of the
 * directories merged, a folder that holds this sweep's results (merged in as the last input), or a
 * folder without sweep results: merging onto another sweep's folder
 * would overwrite its results.
 */
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { checkOutputDir, makeOutputDir } from '../io/write-output.js';
import { canonicalJson, type PlanOutline } from './plan.js';
import {
  CHART_FILE,
  PLAN_FILE,
  POINTS_FILE,
  SHARD_FILE,
  SUMMARY_FILE,
  TIMINGS_FILE,
  ResultsError,
  compactPoints,
  droppedRecordsNote,
  latestById,
  outlineFromPlanFile,
  planFileContent,
  readPlanFile,
  readOwnFile,
  readPoints,
  writeFileAtomic,
  type PointRecord,
} from './results.js';
import { summaryCsv } from './summary-csv.js';
import { writeChart } from './run-sweep.js';

export interface MergeOptions {
  dirs: string[];
  outDir: string;
  note?: (line: string) => void;
  chart?: boolean;
}

export interface MergeResult {
  outDir: string;
  planned: number;
  ok: number;
  failed: Array<{ index: number; id: string; status: string; error: string }>;
  /** Points with no result in any directory. */
  missing: Array<{ index: number; id: string }>;
}

export async function mergeSweeps(options: MergeOptions): Promise<MergeResult> {
  const note = options.note ?? ((line: string) => process.stderr.write(`${line}\n`));
  if (options.dirs.length === 0) throw new ResultsError('sweep merge: give at least one sweep output directory');
  const outDir = resolve(options.outDir);
  checkOutputDir(options.outDir);
  for (const dir of options.dirs) {
    if (!existsSync(dir)) throw new ResultsError(`${dir}: no such folder`);
  }
  const isInput = options.dirs.some((dir) => resolve(dir) === outDir);
  const dirs = [...options.dirs];
  if (!isInput && [PLAN_FILE, POINTS_FILE].some((name) => existsSync(join(outDir, name)))) {
    // An --out that already holds this sweep's results (an earlier merge) is merged into, as if it
    // were named last among the folders: nothing it holds is lost. Another sweep's is refused.
    const planOf = (dir: string) => planFileContent(outlineFromPlanFile(readPlanFile(dir)));
    const held = existsSync(join(outDir, PLAN_FILE)) ? join(options.outDir, PLAN_FILE) : join(options.outDir, POINTS_FILE);
    if (!existsSync(join(outDir, PLAN_FILE)) || planOf(options.outDir) !== planOf(options.dirs[0])) {
      throw new ResultsError(
        `--out ${options.outDir}: holds the results of another sweep (${held}); merge into a new folder, or name it among the folders to merge`,
      );
    }
    note(`--out ${options.outDir}: holds results of this sweep; they are merged in too`);
    dirs.push(options.outDir);
  }

  let plan: PlanOutline | undefined;
  let planText = '';
  let firstDir = '';
  const chosen = new Map<string, PointRecord>();
  /** Where each chosen record came from: `dir/points.jsonl:line`. */
  const origin = new Map<string, string>();
  let timings = '';
  for (const dir of dirs) {
    const outline = outlineFromPlanFile(readPlanFile(dir));
    const text = planFileContent(outline);
    if (plan === undefined) {
      plan = outline;
      planText = text;
      firstDir = dir;
    } else if (text !== planText) {
      throw new ResultsError(
        `${join(dir, PLAN_FILE)}: a different plan from ${join(firstDir, PLAN_FILE)}; only outputs of the same sweep can be merged`,
      );
    }
    const pointsFile = join(dir, POINTS_FILE);
    const { records, lines, tornBytes } = readPoints(pointsFile);
    if (tornBytes > 0) note(`${pointsFile}: left out an incomplete last line (${tornBytes} bytes)`);
    const lineOf = new Map<PointRecord, number>(records.map((record, i) => [record, lines[i]]));
    for (const [id, record] of latestById(records)) {
      const earlier = chosen.get(id);
      const here = `${pointsFile}:${lineOf.get(record) ?? 0}`;
      if (earlier !== undefined && earlier.status === 'ok' && record.status === 'ok') {
        if (canonicalJson(earlier.summary) !== canonicalJson(record.summary)) {
          throw new ResultsError(
            `point ${id} has two different ok results: ${origin.get(id) ?? '?'} and ${here}; a point's result is deterministic,` +
              ' so one comes from another version of servesim or a damaged file: remove the wrong line',
          );
        }
        continue;
      }
      if (earlier === undefined || (earlier.status !== 'ok' && record.status === 'ok')) {
        chosen.set(id, record);
        origin.set(id, here);
      }
    }
    const timingsPath = join(dir, TIMINGS_FILE);
    if (existsSync(timingsPath)) timings += readOwnFile(timingsPath);
  }
  if (plan === undefined) throw new ResultsError('sweep merge: nothing to merge');

  makeOutputDir(options.outDir);
  writeFileAtomic(join(outDir, PLAN_FILE), planText);
  rmSync(join(outDir, SHARD_FILE), { force: true });
  const records = [...chosen.values()];
  const dropped = droppedRecordsNote(join(outDir, POINTS_FILE), compactPoints(join(outDir, POINTS_FILE), plan, records, 'drop'));
  if (dropped !== null) note(dropped);
  // Wall times of every input, in command-line order (not deterministic; see results.ts).
  writeFileAtomic(join(outDir, TIMINGS_FILE), timings);
  writeFileAtomic(join(outDir, SUMMARY_FILE), summaryCsv(plan, plan.points, chosen));
  if (options.chart !== false) await writeChart(plan, plan.points, chosen, join(outDir, CHART_FILE), note);

  const result: MergeResult = { outDir, planned: plan.points.length, ok: 0, failed: [], missing: [] };
  for (const point of plan.points) {
    const record = chosen.get(point.id);
    if (record === undefined) result.missing.push({ index: point.index, id: point.id });
    else if (record.status === 'ok') result.ok++;
    else result.failed.push({ index: point.index, id: point.id, status: record.status, error: record.error ?? '' });
  }
  return result;
}
