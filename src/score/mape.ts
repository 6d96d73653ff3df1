/**
 * The numbers of a score (docs/scoring.md), pure:
 * - per point and metric: the signed error `sim - measured` and
 *   `APE = |sim - measured| / |measured| * 100`; a zero or missing measured value (or a
 *   missing simulated one) is reported with a note and not scored;
 * - per metric: `MAPE`, the mean APE over the scored points (point-weighted);
 * - the shape error: per curve (points sharing every key but the load key), the lowest-load
 *   scored point is the anchor, and each other point's shape APE is the APE of
 *   `sim / sim_anchor` against `measured / measured_anchor`; the shape error is their mean
 *   (anchors, whose ratio is 1 on both sides by construction, are not counted);
 * - groups (`--group-by isl,osl`): MAPE and shape error recomputed from the group's points,
 *   never averaged from sub-MAPEs.
 */
import type { MetricName } from './metric-names.js';
import type { PointPair } from './pair.js';
import { keyValueText, metricValue, type KeyValue, type PointKey } from './points.js';

export interface ScoreRow {
  /** The simulated point's keys (match keys and any variant keys). */
  key: PointKey;
  metric: string;
  sim: number | null;
  measured: number | null;
  /** sim - measured, in the metric's unit. */
  error: number | null;
  /** Absolute percentage error; null when not scored (see `note`). */
  ape: number | null;
  /** APE of the value relative to its curve's anchor; null for anchors and unscored points. */
  shapeApe: number | null;
  isAnchor: boolean;
  /** Why a point is not scored: `measured is 0`, `no measured value`, `no simulated value`. */
  note: string | null;
  simSource: string;
  measuredSource: string;
}

export interface ApeResult {
  error: number | null;
  ape: number | null;
  note: string | null;
}

/** Signed error and APE of one simulated value against one measured value. */
export function apeOf(sim: number | null | undefined, measured: number | null | undefined): ApeResult {
  if (measured === null || measured === undefined || Number.isNaN(measured)) {
    return { error: null, ape: null, note: 'no measured value' };
  }
  if (sim === null || sim === undefined || Number.isNaN(sim)) return { error: null, ape: null, note: 'no simulated value' };
  if (!Number.isFinite(measured) || !Number.isFinite(sim)) return { error: null, ape: null, note: 'value not finite' };
  const error = sim - measured;
  if (measured === 0) return { error, ape: null, note: 'measured is 0' };
  return { error, ape: (Math.abs(error) / Math.abs(measured)) * 100, note: null };
}

function compareKeyValues(a: KeyValue | undefined, b: KeyValue | undefined): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a ?? '').localeCompare(String(b ?? ''));
}

/** Orders rows by the given key names (numbers numerically), for stable tables. */
export function compareKeys(a: PointKey, b: PointKey, names: readonly string[]): number {
  for (const name of names) {
    const order = compareKeyValues(a[name], b[name]);
    if (order !== 0) return order;
  }
  return 0;
}

/** One row per pair and metric, metrics in the order given, points ordered by key names. */
export function scorePairs(
  pairs: readonly PointPair[],
  metrics: readonly MetricName[],
  keyNames: readonly string[],
  loadKey: string | undefined,
): ScoreRow[] {
  const curveNames = keyNames.filter((name) => name !== loadKey);
  const order = loadKey === undefined ? [...keyNames] : [...curveNames, loadKey];
  const sorted = [...pairs].sort((a, b) => compareKeys(a.sim.key, b.sim.key, order));
  const rows: ScoreRow[] = [];
  for (const metric of metrics) {
    for (const pair of sorted) {
      const sim = metricValue(pair.sim, metric) ?? null;
      const measured = metricValue(pair.measured, metric) ?? null;
      const result = apeOf(sim, measured);
      rows.push({
        key: pair.sim.key,
        metric: metric.id,
        sim,
        measured,
        error: result.error,
        ape: result.ape,
        shapeApe: null,
        isAnchor: false,
        note: result.note,
        simSource: pair.sim.source,
        measuredSource: pair.measured.source,
      });
    }
  }
  assignShapeErrors(rows, loadKey);
  return rows;
}

/** The curve a row belongs to: its metric and every key except the load key. */
export function curveOf(row: ScoreRow, loadKey: string | undefined): string {
  const names = Object.keys(row.key)
    .filter((name) => name !== loadKey)
    .sort();
  return `${row.metric}|${names.map((name) => `${name}=${keyValueText(row.key[name])}`).join('|')}`;
}

/** Fills `shapeApe` and `isAnchor` of scored rows, curve by curve (rows changed in place). */
export function assignShapeErrors(rows: ScoreRow[], loadKey: string | undefined): void {
  if (loadKey === undefined) return;
  const curves = new Map<string, ScoreRow[]>();
  for (const row of rows) {
    row.shapeApe = null;
    row.isAnchor = false;
    if (row.ape === null || row.sim === null || row.measured === null || typeof row.key[loadKey] !== 'number') continue;
    const curve = curveOf(row, loadKey);
    let list = curves.get(curve);
    if (!list) curves.set(curve, (list = []));
    list.push(row);
  }
  for (const list of curves.values()) {
    list.sort((a, b) => (a.key[loadKey] as number) - (b.key[loadKey] as number));
    const anchor = list.find((row) => row.sim !== 0);
    if (!anchor || list.length < 2) continue;
    anchor.isAnchor = true;
    const simAnchor = anchor.sim as number;
    const measuredAnchor = anchor.measured as number;
    for (const row of list) {
      if (row === anchor || (row.key[loadKey] as number) < (anchor.key[loadKey] as number)) continue;
      row.shapeApe = apeOf((row.sim as number) / simAnchor, (row.measured as number) / measuredAnchor).ape;
    }
  }
}

export interface MetricScore {
  /** Mean APE over the scored points, %; null when no point is scored. */
  mape: number | null;
  /** Mean shape APE over the non-anchor points of curves with two or more points, %. */
  shapeError: number | null;
  /** Points scored (APE known). */
  points: number;
  /** Points matched but not scored (zero or missing values). */
  unscored: number;
  /** Largest APE and where, for the report. */
  maxApe: number | null;
}

function mean(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

/** MAPE and shape error of a set of rows (one metric), from the points themselves. */
export function summarizeRows(rows: readonly ScoreRow[]): MetricScore {
  const apes = rows.map((row) => row.ape).filter((ape): ape is number => ape !== null);
  const shapes = rows.map((row) => row.shapeApe).filter((ape): ape is number => ape !== null);
  return {
    mape: mean(apes),
    shapeError: mean(shapes),
    points: apes.length,
    unscored: rows.length - apes.length,
    maxApe: apes.length > 0 ? Math.max(...apes) : null,
  };
}

export interface RowGroup {
  key: PointKey;
  rows: ScoreRow[];
}

/** Rows split by the values of some keys, groups ordered by those values. */
export function groupRows(rows: readonly ScoreRow[], names: readonly string[]): RowGroup[] {
  const groups = new Map<string, RowGroup>();
  for (const row of rows) {
    const key: PointKey = {};
    for (const name of names) if (name in row.key) key[name] = row.key[name];
    const text = names.map((name) => (name in key ? keyValueText(key[name]) : '')).join('|');
    let group = groups.get(text);
    if (!group) groups.set(text, (group = { key, rows: [] }));
    group.rows.push(row);
  }
  return [...groups.values()].sort((a, b) => compareKeys(a.key, b.key, names));
}
