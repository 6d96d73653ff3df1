/**
 * `servesim score`: read both sides, match, score, write the report, print the table and
 * hold the MAPEs to their limits (toolkit.md §4). The CLI command only parses arguments and
 * calls `runScore`.
 */
import { statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { ColumnSelection } from '../io/read-tabular.js';
import { parseMappingArguments } from '../io/read-tabular.js';
import { DEFAULT_SCORE_METRICS, parseMetricList, parseMetricName, type MetricName } from './metric-names.js';
import { PairError, pairPoints, selectPoints, type PairResult } from './pair.js';
import { CANONICAL_KEYS, type ScorePoint } from './points.js';
import { readMeasuredPoints, readSimPoints, shortPath, tabularColumnsOf, type SimSide } from './score-inputs.js';
import { formatTerminalTable, writeScoreReport } from './score-report.js';
import { buildScore, checkLimits, type LimitCheck, type ScoreResult, type UnmatchedPoint } from './score-result.js';
import { checkOutputDir } from '../io/write-output.js';
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
  /** A second simulated sweep to put beside the first (before/after). */
  baseline?: string;
  simLabel?: string;
  baselineLabel?: string;
  /** Where the table goes (stdout by default). */
  print?: (text: string) => void;
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

export function parseSelections(items: readonly string[] | undefined): ColumnSelection[] {
  return (items ?? []).map((item) => {
    const equals = item.indexOf('=');
    if (equals <= 0) throw new ScoreUsageError(`--select ${item}: expected COLUMN=VALUE, e.g. model_path=MiniMaxAI/MiniMax-M2.5`);
    return { column: item.slice(0, equals).trim(), value: item.slice(equals + 1).trim() };
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
  return `--select ${selection.column}=${selection.value}: no measured CSV column and no point key is called ${selection.column}`;
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

  const sim = readSimPoints(options.sim);
  const baseline = options.baseline !== undefined ? readSimPoints(options.baseline) : undefined;
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
  const measuredPoints = selectPoints(measured.points, selections);
  const selected = selections.map((s) => `${s.column}=${s.value}`).join(' and ');
  if (measuredPoints.length === 0)
    throw new ScoreUsageError(`no measured point in ${options.measured.join(', ')}${selections.length > 0 ? ` with ${selected}` : ''}`);
  if (simPoints.length === 0) {
    const why = sim.skipped.length > 0 ? ` (${sim.skipped.length} skipped: ${sim.skipped[0].reason})` : '';
    throw new ScoreUsageError(`no simulated point to score in ${options.sim}${selections.length > 0 ? ` with ${selected}` : ''}${why}`);
  }
  const paired = pair(simPoints, measuredPoints);
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
  const baselinePaired = baseline ? pair(selectPoints(baseline.points, selections), measuredPoints) : undefined;
  const knownKeys = new Set([...paired.matchKeys, ...paired.variantKeys, ...simPoints.flatMap((point) => Object.keys(point.key))]);
  for (const name of groupBy) {
    if (!knownKeys.has(name))
      throw new ScoreUsageError(`--group-by ${name}: not a key of the simulated points (keys: ${[...knownKeys].join(', ')})`);
  }

  const result = buildScore({
    paired,
    metrics,
    groupBy,
    skippedSim: skippedOf(sim),
    baseline: baseline && baselinePaired ? { paired: baselinePaired, skipped: skippedOf(baseline) } : undefined,
    inputs: {
      sim: shortPath(options.sim),
      sim_label: options.simLabel ?? labelOf(options.sim),
      measured: options.measured.map(shortPath),
      measured_notes: measured.notes,
      ...(options.baseline !== undefined
        ? {
            baseline: shortPath(options.baseline),
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
  const written = await writeScoreReport(outDir, result, checks);
  print(formatTerminalTable(result, checks));
  print(`report: ${join(shortPath(outDir), 'report.html')} (also scores.csv, scores.json, report.md)\n`);
  const failures = checks.filter((check) => !check.passed).map((check) => check.message);
  return { result, limits: checks, files: written.files, outDir, exitCode: failures.length > 0 ? 1 : 0, failures };
}
