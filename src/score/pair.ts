/**
 * Matching simulated points with measured points (docs/scoring.md). Points match on the keys
 * both sides have (concurrency or request rate, ISL, OSL, any other key present on every
 * point of both sides); numbers compare to 12 significant digits. Several simulated points
 * may match one measured point (they differ in a key the measured side lacks, e.g. a swept
 * engine knob): each is scored, and the caller is told which keys tell them apart. Two
 * measured points with the same keys are an error. Nothing is dropped silently: every point
 * that matches nothing is listed.
 */
import { matchesSelection, type ColumnSelection } from '../io/selection.js';
import { CANONICAL_KEYS, LOAD_KEYS, formatKey, keyValueText, type PointKey, type ScorePoint } from './points.js';

export interface PointPair {
  sim: ScorePoint;
  measured: ScorePoint;
}

export interface PairResult {
  pairs: PointPair[];
  unmatched: { sim: ScorePoint[]; measured: ScorePoint[] };
  /** Keys the points were matched on, canonical ones first. */
  matchKeys: string[];
  /** The load axis of curves (concurrency or request_rate), if points are matched on one. */
  loadKey: string | undefined;
  /** Simulated keys not on the measured side whose values differ between simulated points. */
  variantKeys: string[];
}

export class PairError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PairError';
  }
}

function keysOnEvery(points: readonly ScorePoint[]): Set<string> {
  if (points.length === 0) return new Set();
  const names = new Set(Object.keys(points[0].key));
  for (const point of points.slice(1)) for (const name of names) if (!(name in point.key)) names.delete(name);
  return names;
}

function orderKeys(names: Iterable<string>): string[] {
  const list = [...names];
  const canonical = CANONICAL_KEYS.filter((name) => list.includes(name));
  return [...canonical, ...list.filter((name) => !(CANONICAL_KEYS as readonly string[]).includes(name)).sort()];
}

export function keyText(key: PointKey, names: readonly string[]): string {
  return names.map((name) => `${name}=${keyValueText(key[name])}`).join('|');
}

/** Keeps the points whose keys meet the selections that name one of their keys. */
export function selectPoints(points: readonly ScorePoint[], selections: readonly ColumnSelection[]): ScorePoint[] {
  return points.filter((point) =>
    selections.every((selection) => !(selection.column in point.key) || matchesSelection(point.key[selection.column], selection)),
  );
}

/** Keys of the simulated points that take more than one value among them. */
function varyingKeys(points: readonly ScorePoint[], names: Iterable<string>): string[] {
  const varying: string[] = [];
  for (const name of names) {
    const values = new Set(points.map((point) => (name in point.key ? keyValueText(point.key[name]) : '')));
    if (values.size > 1) varying.push(name);
  }
  return varying.sort();
}

export function pairPoints(sim: readonly ScorePoint[], measured: readonly ScorePoint[]): PairResult {
  const simKeys = keysOnEvery(sim);
  const measuredKeys = keysOnEvery(measured);
  const matchKeys = orderKeys([...simKeys].filter((name) => measuredKeys.has(name)));
  if (sim.length > 0 && measured.length > 0 && matchKeys.length === 0) {
    throw new PairError(
      `no key to match on: simulated points have ${[...simKeys].join(', ') || 'no keys'}; measured points have ${[...measuredKeys].join(', ') || 'no keys'}`,
    );
  }
  const measuredByKey = new Map<string, ScorePoint>();
  for (const point of measured) {
    const text = keyText(point.key, matchKeys);
    const earlier = measuredByKey.get(text);
    if (earlier) {
      throw new PairError(
        `two measured points have the same keys (${formatKey(point.key, matchKeys)}): ${earlier.source} and ${point.source}; select one with --select KEY=VALUE or pass one of them`,
      );
    }
    measuredByKey.set(text, point);
  }
  const pairs: PointPair[] = [];
  const unmatchedSim: ScorePoint[] = [];
  const used = new Set<string>();
  for (const point of sim) {
    const text = keyText(point.key, matchKeys);
    const match = measuredByKey.get(text);
    if (match) {
      pairs.push({ sim: point, measured: match });
      used.add(text);
    } else {
      unmatchedSim.push(point);
    }
  }
  const unmatchedMeasured = measured.filter((point) => !used.has(keyText(point.key, matchKeys)));
  const loadKey = LOAD_KEYS.find((name) => matchKeys.includes(name));
  const otherSimKeys = new Set<string>();
  for (const point of sim) for (const name of Object.keys(point.key)) if (!matchKeys.includes(name)) otherSimKeys.add(name);
  return {
    pairs,
    unmatched: { sim: unmatchedSim, measured: unmatchedMeasured },
    matchKeys,
    loadKey,
    variantKeys: varyingKeys(
      pairs.map((pair) => pair.sim),
      otherSimKeys,
    ),
  };
}
