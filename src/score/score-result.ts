/**
 * The score of a simulated sweep against measured points, as one plain object: what
 * `scores.json` holds and what every other output (terminal table, `scores.csv`,
 * `report.md`, `report.html`) is rendered from. Pure: no files are read or written here.
 */
import type { MetricName } from './metric-names.js';
import { unitOfMetric } from './metric-names.js';
import { compareKeys, groupRows, scorePairs, summarizeRows, type ScoreRow } from './mape.js';
import { keyText, type PairResult } from './pair.js';
import { metricValue, type PointKey, type ScorePoint } from './points.js';

export interface GroupScore {
  key: PointKey;
  mape: number | null;
  shape_error: number | null;
  points: number;
  baseline_mape?: number | null;
  baseline_shape_error?: number | null;
}

export interface MetricSummary {
  unit: string;
  mape: number | null;
  shape_error: number | null;
  /** Points scored. */
  points: number;
  /** Points matched but not scored (zero or missing values). */
  unscored: number;
  max_ape: number | null;
  baseline_mape?: number | null;
  baseline_shape_error?: number | null;
  baseline_points?: number;
  groups?: GroupScore[];
}

export interface PointScoreJson {
  key: PointKey;
  metric: string;
  sim: number | null;
  measured: number | null;
  error: number | null;
  ape: number | null;
  shape_ape: number | null;
  anchor: boolean;
  note: string | null;
  sim_source: string;
  measured_source: string;
  /** A training point of the model (`inputs.training`): in the MAPE only when `inputs.training.scored`. */
  train: boolean;
  baseline_sim?: number | null;
  baseline_error?: number | null;
  baseline_ape?: number | null;
}

export interface UnmatchedPoint {
  key: PointKey;
  source: string;
  reason?: string;
}

/** A point drawn on the charts: its keys and its value of each scored metric (null when it has none). */
export interface CurvePoint {
  key: PointKey;
  values: Record<string, number | null>;
  source: string;
}

/**
 * What the charts draw besides the scored pairs: every simulated point of each side, matched or
 * not (the model's curve over the whole load range it was run at), and the measured points left
 * out of the score as training points (`--train`: the points a model was fitted on).
 */
export interface ScoreCurves {
  sim: CurvePoint[];
  baseline?: CurvePoint[];
  training: CurvePoint[];
}

export interface ScoreResult {
  metrics: Record<string, MetricSummary>;
  points: PointScoreJson[];
  unmatched: {
    sim: UnmatchedPoint[];
    measured: UnmatchedPoint[];
    baseline?: UnmatchedPoint[];
  };
  match: {
    keys: string[];
    load_key: string | null;
    /** Simulated keys the measured side lacks that differ between matched simulated points. */
    variant_keys: string[];
    group_by: string[];
  };
  inputs: {
    sim: string;
    sim_label: string;
    measured: string[];
    measured_notes: string[];
    baseline?: string;
    baseline_label?: string;
    /** The `--train` condition that chose the training points, when one was given. */
    train?: string;
    /** Simulated points that ran on the placeholder pass times (no catalog model or GPU, no timing), and the first one's reason. */
    sim_placeholder?: { points: number; reason: string };
    /**
     * The measured points the simulated side was fitted on, when the score knows them (`--train`,
     * or the fit.json of the sweep's base config), where they came from, and whether the MAPE
     * counts them (only with `--train none`): they are marked in every table either way.
     */
    training?: TrainingPoints;
  };
  /** Absent when the score was built without them (the charts then draw the scored pairs only). */
  curves?: ScoreCurves;
}

export interface TrainingPoints {
  /** `--train lowest:3`, or the fit.json the sweep's base config came from. */
  source: string;
  keys: PointKey[];
  /** True when they are scored with the others (`--train none`); else listed and left out of the MAPE. */
  scored: boolean;
}

export interface BuildScoreInput {
  paired: PairResult;
  /**
   * The training points' pairs when they are left out of the MAPE: scored into rows marked
   * `train`, for the tables, and counted in no summary.
   */
  training?: PairResult;
  /** Keys of training points that are scored with the others (`--train none`): their rows are marked `train`. */
  scoredTrainingKeys?: readonly PointKey[];
  metrics: readonly MetricName[];
  groupBy: readonly string[];
  /** Simulated points that could not be scored at all (failed sweep points). */
  skippedSim: readonly UnmatchedPoint[];
  baseline?: { paired: PairResult; skipped: readonly UnmatchedPoint[] };
  inputs: ScoreResult['inputs'];
  /** Points for the charts only (`ScoreCurves`); none by default. */
  curves?: { sim: readonly ScorePoint[]; baseline?: readonly ScorePoint[]; training: readonly ScorePoint[] };
}

function curvePoints(points: readonly ScorePoint[], metrics: readonly MetricName[]): CurvePoint[] {
  return points.map((point) => ({
    key: point.key,
    values: Object.fromEntries(metrics.map((metric) => [metric.id, metricValue(point, metric) ?? null])),
    source: point.source,
  }));
}

/** Unmatched points ordered by their keys (load first), for readable listings. */
function unmatchedOf(points: readonly ScorePoint[]): UnmatchedPoint[] {
  const names = [...new Set(points.flatMap((point) => Object.keys(point.key)))];
  return [...points].sort((a, b) => compareKeys(a.key, b.key, names)).map((point) => ({ key: point.key, source: point.source }));
}

function rowJson(row: ScoreRow, train: boolean): PointScoreJson {
  return {
    key: row.key,
    metric: row.metric,
    sim: row.sim,
    measured: row.measured,
    error: row.error,
    ape: row.ape,
    shape_ape: row.shapeApe,
    anchor: row.isAnchor,
    note: row.note,
    sim_source: row.simSource,
    measured_source: row.measuredSource,
    train,
  };
}

/** True when every key of `wanted` has the same value in `key` (a fit's `{concurrency: 4}` names the point `{concurrency: 4, isl: 1024}`). */
export function keyMatches(key: PointKey, wanted: PointKey): boolean {
  return Object.entries(wanted).every(([name, value]) => name in key && (key[name] === value || Number(key[name]) === Number(value)));
}

/** The order of a score's rows within a metric: the curve keys, then the load key. */
function orderOf(paired: PairResult): string[] {
  const keyNames = [...paired.matchKeys, ...paired.variantKeys];
  const load = paired.loadKey;
  return load === undefined ? keyNames : [...keyNames.filter((name) => name !== load), load];
}

/** The join of a baseline row to a main row: same metric, same measured point, same variant keys. */
function joinText(row: ScoreRow, variantKeys: readonly string[]): string {
  return `${row.metric}#${row.measuredSource}#${keyText(
    row.key,
    variantKeys.filter((name) => name in row.key),
  )}`;
}

export function buildScore(input: BuildScoreInput): ScoreResult {
  const { paired, metrics, groupBy } = input;
  const keyNames = [...paired.matchKeys, ...paired.variantKeys];
  const rows = scorePairs(paired.pairs, metrics, keyNames, paired.loadKey);
  const baselineRows = input.baseline
    ? scorePairs(
        input.baseline.paired.pairs,
        metrics,
        [...input.baseline.paired.matchKeys, ...input.baseline.paired.variantKeys],
        input.baseline.paired.loadKey,
      )
    : [];
  const sharedVariants = input.baseline ? paired.variantKeys.filter((name) => input.baseline?.paired.variantKeys.includes(name)) : [];
  const baselineByJoin = new Map<string, ScoreRow>();
  for (const row of baselineRows) {
    const text = joinText(row, sharedVariants);
    if (!baselineByJoin.has(text)) baselineByJoin.set(text, row);
  }
  // Training rows that are left out of the MAPE: their APE is shown, no shape error (they are no curve's anchor).
  const trainingRows = input.training
    ? scorePairs(input.training.pairs, metrics, [...input.training.matchKeys, ...input.training.variantKeys], undefined)
    : [];
  const scoredTraining = input.scoredTrainingKeys ?? [];
  const ordered = metrics.flatMap((metric) =>
    [
      ...rows
        .filter((row) => row.metric === metric.id)
        .map((row) => ({ row, train: scoredTraining.some((key) => keyMatches(row.key, key)) })),
      ...trainingRows.filter((row) => row.metric === metric.id).map((row) => ({ row, train: true })),
    ].sort((a, b) => compareKeys(a.row.key, b.row.key, orderOf(paired))),
  );
  const points = ordered.map(({ row, train }) => {
    const json = rowJson(row, train);
    if (input.baseline) {
      const baseline = baselineByJoin.get(joinText(row, sharedVariants));
      json.baseline_sim = baseline?.sim ?? null;
      json.baseline_error = baseline?.error ?? null;
      json.baseline_ape = baseline?.ape ?? null;
    }
    return json;
  });
  const summaries: Record<string, MetricSummary> = {};
  for (const metric of metrics) {
    const metricRows = rows.filter((row) => row.metric === metric.id);
    const score = summarizeRows(metricRows);
    const summary: MetricSummary = {
      unit: unitOfMetric(metric),
      mape: score.mape,
      shape_error: score.shapeError,
      points: score.points,
      unscored: score.unscored,
      max_ape: score.maxApe,
    };
    const metricBaselineRows = baselineRows.filter((row) => row.metric === metric.id);
    if (input.baseline) {
      const baselineScore = summarizeRows(metricBaselineRows);
      summary.baseline_mape = baselineScore.mape;
      summary.baseline_shape_error = baselineScore.shapeError;
      summary.baseline_points = baselineScore.points;
    }
    if (groupBy.length > 0) {
      const baselineGroups = input.baseline ? groupRows(metricBaselineRows, groupBy) : [];
      summary.groups = groupRows(metricRows, groupBy).map((group) => {
        const groupScore = summarizeRows(group.rows);
        const out: GroupScore = { key: group.key, mape: groupScore.mape, shape_error: groupScore.shapeError, points: groupScore.points };
        if (input.baseline) {
          const match = baselineGroups.find((candidate) => keyText(candidate.key, groupBy) === keyText(group.key, groupBy));
          const baselineScore = match ? summarizeRows(match.rows) : undefined;
          out.baseline_mape = baselineScore?.mape ?? null;
          out.baseline_shape_error = baselineScore?.shapeError ?? null;
        }
        return out;
      });
    }
    summaries[metric.id] = summary;
  }
  const result: ScoreResult = {
    metrics: summaries,
    points,
    unmatched: {
      sim: [...unmatchedOf(paired.unmatched.sim), ...input.skippedSim],
      measured: unmatchedOf(paired.unmatched.measured),
    },
    match: { keys: paired.matchKeys, load_key: paired.loadKey ?? null, variant_keys: paired.variantKeys, group_by: [...groupBy] },
    inputs: input.inputs,
  };
  if (input.baseline) result.unmatched.baseline = [...unmatchedOf(input.baseline.paired.unmatched.sim), ...input.baseline.skipped];
  if (input.curves) {
    result.curves = {
      sim: curvePoints(input.curves.sim, metrics),
      ...(input.curves.baseline ? { baseline: curvePoints(input.curves.baseline, metrics) } : {}),
      training: curvePoints(input.curves.training, metrics),
    };
  }
  return result;
}

export interface LimitCheck {
  metric: string;
  maxMape: number;
  mape: number | null;
  passed: boolean;
  message: string;
}

/** `--max-mape METRIC=X`: a metric above its limit (or with nothing scored) fails, named. */
export function checkLimits(result: ScoreResult, limits: ReadonlyArray<{ metric: string; maxMape: number }>): LimitCheck[] {
  return limits.map(({ metric, maxMape }) => {
    const summary = result.metrics[metric];
    const mape = summary?.mape ?? null;
    if (mape === null) {
      return {
        metric,
        maxMape,
        mape,
        passed: false,
        message: `${metric}: no point was scored, so its MAPE cannot be held to ${maxMape} %`,
      };
    }
    const passed = mape <= maxMape;
    return {
      metric,
      maxMape,
      mape,
      passed,
      message: passed
        ? `${metric}: MAPE ${mape.toFixed(2)} % <= ${maxMape} %`
        : `${metric}: MAPE ${mape.toFixed(2)} % is above the limit ${maxMape} %`,
    };
  });
}
