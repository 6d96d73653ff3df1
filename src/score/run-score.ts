/**
 * `servesim score`: read both sides, match, score, write the report, print the table and
 * hold the MAPEs to their limits (docs/scoring.md). The CLI command only parses arguments and
 * calls `runScore`.
 */
import { statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parseMappingArguments } from '../io/read-tabular.js';
import { formatSelection, parseSelection, type ColumnSelection } from '../io/selection.js';
import { DEFAULT_SCORE_METRICS, parseMetricList, parseMetricName, type MetricName } from './metric-names.js';
import { selectTraining, TrainSelectionError } from './train-select.js';
import { PairError, keyText, pairPoints, selectPoints, type PairResult } from './pair.js';
import { CANONICAL_KEYS, type ScorePoint } from './points.js';
import { isPointTable, readMeasuredPoints, readSimPoints, shortPath, tabularColumnsOf, type SimSide } from './score-inputs.js';
import { formatScoresJson, formatTerminalTable, writeScoreReport } from './score-report.js';
import { terminalPath } from '../io/paths.js';
import {
  buildScore,
  checkLimits,
  keyMatches,
  type LimitCheck,
  type ScoreResult,
  type TrainingPoints,
  type UnmatchedPoint,
} from './score-result.js';
import { checkOutputDir, writeOutputFiles } from '../io/write-output.js';
import { formatLogComparison } from './log-compare.js';
import { scoreLogRequests } from './log-requests.js';
import { formatKey, missingMetrics } from './points.js';
import { getMetricInfo } from '../io/read-aiperf-tags.js';

export interface ScoreOptions {
  /** Simulated side: a sweep folder, replay results or AIPerf artifact folders. */
  sim: string;
  /** Measured side: AIPerf artifact folders (or folders of them) and tabular CSV files. */
  measured: readonly string[];
  /** `column=value`: keep measured rows (CSV columns) and points (keys) with these values. */
  select?: readonly string[];
  /** `column=target` mappings for tabular CSVs. */
  map?: readonly string[];
  /** Metric names, comma-separated lists allowed; the default set when empty. */
  metrics?: readonly string[];
  /** Keys to group MAPEs by, comma-separated lists allowed. */
  groupBy?: readonly string[];
  /** Output folder; `<sim>/score` by default. */
  out?: string;
  /** `METRIC=X`: fail when the metric's MAPE is above X percent. */
  maxMape?: readonly string[];
  /**
   * Measured points the simulated side was fitted on (`calibrate engine --train` forms:
   * `lowest:3`, `concurrency=4|8|16`, ...): marked `train` in every table, drawn on the charts
   * as training points, left out of every MAPE. Without it, a sweep whose base config came with
   * a fit.json (`calibrate engine` writes both) gives the fit's training points; `none` scores
   * every point, the fit's training points still marked.
   */
  train?: string;
  /** A second simulated sweep to put beside the first (before/after). */
  baseline?: string;
  /** When `sim` (or `baseline`) is a CSV table of predicted points: the conditions that choose its rows. */
  simSelect?: readonly string[];
  baselineSelect?: readonly string[];
  simLabel?: string;
  baselineLabel?: string;
  /** Where the table goes (stdout by default). */
  print?: (text: string) => void;
  /** Print `scores.json`'s object instead of the table (for scripts and CI). */
  json?: boolean;
}

export interface ScoreOutcome {
  result: ScoreResult;
  limits: LimitCheck[];
  files: string[];
  outDir: string;
  /** 0: scored and within limits; 1: a limit failed or nothing matched. */
  exitCode: number;
  /** Why the exit code is not 0. */
  failures: string[];
}

/** A usage error of the score command (bad argument), exit status 2. */
export class ScoreUsageError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'ScoreUsageError';
  }
}

function splitList(items: readonly string[] | undefined): string[] {
  return (items ?? [])
    .flatMap((item) => item.split(','))
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** `--select` conditions, in the forms `calibrate --train` takes (`io/selection.ts`). */
export function parseSelections(items: readonly string[] | undefined, flag = '--select'): ColumnSelection[] {
  return (items ?? []).map((item) => {
    const selection = parseSelection(item);
    if (selection === null) {
      throw new ScoreUsageError(
        `${flag} ${item}: expected COLUMN=VALUE, COLUMN=V1|V2, COLUMN!=VALUE or COLUMN<=NUMBER (also <, >, >=), e.g. concurrency=10|50|100`,
      );
    }
    return selection;
  });
}

export function parseLimits(items: readonly string[] | undefined): Array<{ metric: MetricName; maxMape: number }> {
  return (items ?? []).map((item) => {
    const equals = item.lastIndexOf('=');
    const value = equals > 0 ? Number(item.slice(equals + 1)) : NaN;
    if (equals <= 0 || !Number.isFinite(value) || value < 0) {
      throw new ScoreUsageError(`--max-mape ${item}: expected METRIC=PERCENT, e.g. time_to_first_token.avg=10`);
    }
    try {
      return { metric: parseMetricName(item.slice(0, equals)), maxMape: value };
    } catch (error) {
      throw new ScoreUsageError(`--max-mape ${item}: ${(error as Error).message}`);
    }
  });
}

function unknownSelection(selection: ColumnSelection): string {
  return `--select ${formatSelection(selection)}: no measured CSV column and no point key is called ${selection.column}`;
}

function labelOf(path: string): string {
  return basename(resolve(path)) || path;
}

function skippedOf(side: SimSide): UnmatchedPoint[] {
  return side.skipped.map((point) => ({ key: {}, source: point.source, reason: point.reason }));
}

function pair(sim: ScorePoint[], measured: ScorePoint[]): PairResult {
  try {
    return pairPoints(sim, measured);
  } catch (error) {
    if (error instanceof PairError) throw new ScoreUsageError(error.message);
    throw error;
  }
}

/** ` (rows source=mocker)` after a side read from a table's chosen rows. */
function rowsNote(selections: readonly ColumnSelection[]): string {
  return selections.length > 0 ? ` (rows ${selections.map(formatSelection).join(', ')})` : '';
}

/** `--sim-select` / `--baseline-select`: only for a side read from a CSV table. */
function sideSelections(flag: string, path: string | undefined, items: readonly string[] | undefined): ColumnSelection[] {
  if (items === undefined || items.length === 0) return [];
  if (path === undefined || !isPointTable(path)) {
    throw new ScoreUsageError(`${flag}: chooses rows of a CSV table of predicted points; ${path ?? 'no such side'} is not one`);
  }
  return parseSelections(items, flag);
}

/**
 * The measured points the simulated side was fitted on, and the rest: `--train EXPR` names them;
 * without it, the fit.json of the sweep's base config does (`SimSide.fit`); `--train none` scores
 * every point, the fit's training points marked. Training points are left out of the scored
 * points unless `scored`.
 */
function splitTraining(
  points: ScorePoint[],
  expr: string | undefined,
  fit: SimSide['fit'],
): { scored: ScorePoint[]; training: ScorePoint[]; known: TrainingPoints | undefined } {
  if (expr === 'none' || (expr === undefined && fit !== undefined)) {
    const training = fit === undefined ? [] : points.filter((point) => fit.train.some((key) => keyMatches(point.key, key)));
    if (training.length === 0) return { scored: points, training: [], known: undefined };
    const known: TrainingPoints = { source: fit!.file, keys: training.map((point) => point.key), scored: expr === 'none' };
    if (known.scored) return { scored: points, training: [], known };
    const scored = points.filter((point) => !training.includes(point));
    if (scored.length === 0) {
      throw new ScoreUsageError(
        `the fit's training points (${fit!.file}) are every measured point; none is left to score (--train none scores them)`,
      );
    }
    return { scored, training, known };
  }
  if (expr === undefined) return { scored: points, training: [], known: undefined };
  let indices: number[];
  try {
    indices = selectTraining(
      points.map((point) => point.key),
      expr,
    );
  } catch (error) {
    if (error instanceof TrainSelectionError) throw new ScoreUsageError(error.message);
    throw error;
  }
  const chosen = new Set(indices);
  const scored = points.filter((_, index) => !chosen.has(index));
  if (scored.length === 0) throw new ScoreUsageError(`--train ${expr}: names every measured point; none is left to score`);
  const training = points.filter((_, index) => chosen.has(index));
  return { scored, training, known: { source: `--train ${expr}`, keys: training.map((point) => point.key), scored: false } };
}

/** Simulated points that match a training point are neither scored nor unmatched: they are drawn only. */
function withoutTraining(paired: PairResult, training: readonly ScorePoint[]): PairResult {
  if (training.length === 0) return paired;
  const trainingKeys = new Set(training.map((point) => keyText(point.key, paired.matchKeys)));
  return {
    ...paired,
    unmatched: {
      ...paired.unmatched,
      sim: paired.unmatched.sim.filter((point) => !trainingKeys.has(keyText(point.key, paired.matchKeys))),
    },
  };
}

/** The training points paired with the simulated points, for their rows; none when no simulated point matches. */
function pairTraining(sim: ScorePoint[], training: ScorePoint[]): PairResult | undefined {
  try {
    const paired = pairPoints(sim, training);
    return paired.pairs.length > 0 ? paired : undefined;
  } catch (error) {
    if (error instanceof PairError) return undefined;
    throw error;
  }
}

/** `concurrency 16, 32; isl 512` over some points: the values of their keys, for messages. */
function describeKeys(points: readonly ScorePoint[], names: readonly string[]): string {
  if (points.length === 0) return 'no points';
  const shown = names.map((name) => {
    const values = [
      ...new Set(
        points
          .map((point) => point.key[name])
          .filter((value) => value !== undefined)
          .map(String),
      ),
    ];
    values.sort((a, b) => Number(a) - Number(b) || (a < b ? -1 : a > b ? 1 : 0));
    return `${name} ${values.slice(0, 8).join(', ')}${values.length > 8 ? ', ...' : ''}`;
  });
  return `${points.length} point${points.length === 1 ? '' : 's'} (${shown.join('; ')})`;
}

/** The error when no simulated point matches a measured one: what was looked for and what was found. */
function noMatch(
  sim: readonly ScorePoint[],
  measured: readonly ScorePoint[],
  matchKeys: readonly string[],
  options: ScoreOptions,
): ScoreUsageError {
  const names = matchKeys.length > 0 ? matchKeys : [...new Set([...sim, ...measured].flatMap((point) => Object.keys(point.key)))];
  const example = sim[0] === undefined ? '' : `; e.g. ${formatKey(sim[0].key, names)} is not measured`;
  return new ScoreUsageError(
    `no simulated point matches a measured point on ${names.join(', ')}: ${options.sim} has ${describeKeys(sim, names)};` +
      ` ${options.measured.join(', ')} has ${describeKeys(measured, names)}${example}`,
  );
}

export async function runScore(options: ScoreOptions): Promise<ScoreOutcome> {
  const print = options.print ?? ((text: string) => process.stdout.write(text));
  if (options.out !== undefined) checkOutputDir(options.out);
  const selections = parseSelections(options.select);
  let mapping: Record<string, string>;
  let metrics: MetricName[];
  try {
    mapping = parseMappingArguments(options.map ?? []);
    metrics = parseMetricList(splitList(options.metrics).length > 0 ? splitList(options.metrics) : [...DEFAULT_SCORE_METRICS]);
  } catch (error) {
    throw new ScoreUsageError((error as Error).message);
  }
  const limits = parseLimits(options.maxMape);
  for (const limit of limits) if (!metrics.some((metric) => metric.id === limit.metric.id)) metrics.push(limit.metric);
  const groupBy = splitList(options.groupBy);

  const simSelect = sideSelections('--sim-select', options.sim, options.simSelect);
  const sim = readSimPoints(options.sim, { mapping, select: simSelect });
  const baselineSelect = sideSelections('--baseline-select', options.baseline, options.baselineSelect);
  const baseline = options.baseline !== undefined ? readSimPoints(options.baseline, { mapping, select: baselineSelect }) : undefined;
  // A selection must name a CSV column or a key; checked before the rows are read, so that a
  // misspelt column is reported as such rather than as the duplicates it leaves.
  const hasTables = options.measured.some((path) => path.endsWith('.csv'));
  if (hasTables) {
    const known = new Set<string>([
      ...CANONICAL_KEYS,
      ...Object.values(mapping),
      ...tabularColumnsOf(options.measured),
      ...[...sim.points, ...(baseline?.points ?? [])].flatMap((point) => Object.keys(point.key)),
    ]);
    for (const selection of selections) {
      if (!known.has(selection.column)) throw new ScoreUsageError(unknownSelection(selection));
    }
  }
  const measured = readMeasuredPoints(options.measured, { mapping, select: selections });

  // Selections apply to CSV columns (done by the reader) and to point keys on both sides.
  for (const selection of selections) {
    const usedOnColumn = measured.appliedSelections.some((applied) => applied.column === selection.column);
    const isKey = [...sim.points, ...measured.points, ...(baseline?.points ?? [])].some((point) => selection.column in point.key);
    if (!usedOnColumn && !isKey) throw new ScoreUsageError(unknownSelection(selection));
  }
  const simPoints = selectPoints(sim.points, selections);
  const selectedMeasured = selectPoints(measured.points, selections);
  const selected = selections.map(formatSelection).join(' and ');
  if (selectedMeasured.length === 0)
    throw new ScoreUsageError(`no measured point in ${options.measured.join(', ')}${selections.length > 0 ? ` with ${selected}` : ''}`);
  if (simPoints.length === 0) {
    const why = sim.skipped.length > 0 ? ` (${sim.skipped.length} skipped: ${sim.skipped[0].reason})` : '';
    throw new ScoreUsageError(`no simulated point to score in ${options.sim}${selections.length > 0 ? ` with ${selected}` : ''}${why}`);
  }
  const { scored: measuredPoints, training, known } = splitTraining(selectedMeasured, options.train, sim.fit);
  const baselinePoints = baseline ? selectPoints(baseline.points, selections) : undefined;
  const paired = withoutTraining(pair(simPoints, measuredPoints), training);
  const trainingPaired = training.length > 0 ? pairTraining(simPoints, training) : undefined;
  // Nothing to score is an input error: nothing is written.
  if (paired.pairs.length === 0) throw noMatch(simPoints, measuredPoints, paired.matchKeys, options);
  // A metric no measured point has is reported unscored; it is an error when AIPerf has no such
  // metric (a misspelt name), or when no metric at all can be scored.
  const { missing, found } = missingMetrics(measuredPoints, metrics);
  const unknown = missing.filter((metric) => getMetricInfo(metric.tag) === undefined);
  if (unknown.length > 0 || (missing.length > 0 && missing.length === metrics.length)) {
    const shown = found.slice(0, 12).join(', ') + (found.length > 12 ? ', ...' : '');
    throw new ScoreUsageError(
      `no measured point has ${(unknown.length > 0 ? unknown : missing).map((m) => m.id).join(', ')} (in ${options.measured.join(', ')}: ${shown || 'no metric'}); ` +
        'name metrics the measured side has with --metrics, or map a column to one with --map COLUMN=METRIC',
    );
  }
  const baselinePaired = baselinePoints ? withoutTraining(pair(baselinePoints, measuredPoints), training) : undefined;
  const knownKeys = new Set([...paired.matchKeys, ...paired.variantKeys, ...simPoints.flatMap((point) => Object.keys(point.key))]);
  for (const name of groupBy) {
    if (!knownKeys.has(name))
      throw new ScoreUsageError(`--group-by ${name}: not a key of the simulated points (keys: ${[...knownKeys].join(', ')})`);
  }

  const result = buildScore({
    paired,
    ...(trainingPaired === undefined ? {} : { training: trainingPaired }),
    ...(known?.scored === true ? { scoredTrainingKeys: known.keys } : {}),
    metrics,
    groupBy,
    skippedSim: skippedOf(sim),
    baseline: baseline && baselinePaired ? { paired: baselinePaired, skipped: skippedOf(baseline) } : undefined,
    curves: { sim: simPoints, ...(baselinePoints ? { baseline: baselinePoints } : {}), training },
    inputs: {
      sim: shortPath(options.sim) + rowsNote(simSelect),
      sim_label: options.simLabel ?? labelOf(options.sim),
      measured: options.measured.map(shortPath),
      measured_notes: measured.notes,
      ...placeholderOf(simPoints),
      ...(options.train !== undefined ? { train: options.train } : {}),
      ...(known !== undefined ? { training: known } : {}),
      ...(options.baseline !== undefined
        ? {
            baseline: shortPath(options.baseline) + rowsNote(baselineSelect),
            baseline_label:
              options.baselineLabel ?? (labelOf(options.baseline) === labelOf(options.sim) ? 'baseline' : labelOf(options.baseline)),
          }
        : {}),
    },
  });
  const checks = checkLimits(
    result,
    limits.map((limit) => ({ metric: limit.metric.id, maxMape: limit.maxMape })),
  );
  const outDir = options.out ?? (statSync(options.sim).isDirectory() ? join(options.sim, 'score') : join(dirname(options.sim), 'score'));
  // A log and the per-request records of its replay: scored request by request too.
  const perRequest = scoreLogRequests(options.sim, options.measured);
  const written = await writeScoreReport(outDir, result, checks);
  if (perRequest !== null) {
    const file = join(outDir, 'requests.csv');
    writeOutputFiles([[file, perRequest.csv]]);
    written.files.push(file);
  }
  if (options.json === true) {
    print(formatScoresJson(result));
  } else {
    print(formatTerminalTable(result, checks));
    if (perRequest !== null)
      print(
        `\nper request, ${shortPath(perRequest.records)} against ${shortPath(perRequest.log)}:\n${formatLogComparison(perRequest.comparison)}`,
      );
    print(
      `report: ${join(terminalPath(outDir), 'report.html')} (also scores.csv, scores.json, report.md${perRequest !== null ? ', requests.csv' : ''})\n`,
    );
  }
  const failures = checks.filter((check) => !check.passed).map((check) => check.message);
  return { result, limits: checks, files: written.files, outDir, exitCode: failures.length > 0 ? 1 : 0, failures };
}

/** How many simulated points ran on the placeholder pass times, and why (the first one's reason); nothing when none did. */
function placeholderOf(points: readonly ScorePoint[]): { sim_placeholder?: { points: number; reason: string } } {
  const on = points.filter((point) => point.placeholder !== undefined);
  return on.length === 0 ? {} : { sim_placeholder: { points: on.length, reason: on[0].placeholder as string } };
}
