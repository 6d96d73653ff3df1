/**
 * `--train EXPR`: which measured points the engine is fitted on; the others are held out and
 * scored. Forms: `lowest:N` / `highest:N` (by the load key, concurrency or request rate, then
 * ISL and OSL), `all`, or conditions on point keys joined by `and`: `concurrency<=16`,
 * `concurrency=4|8|16`, `isl!=8192`. Used by `calibrate engine` (the split is written into fit.json)
 * and by `score --train` (the training points are left out of the score).
 */
import type { PointKey } from './points.js';

/** A `--train` expression that cannot be used; the command that took it reports it as its usage error (exit status 2). */
export class TrainSelectionError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'TrainSelectionError';
  }
}

function loadOf(key: PointKey): number {
  const value = key.concurrency ?? key.request_rate;
  return typeof value === 'number' ? value : NaN;
}

function compare(a: PointKey, b: PointKey): number {
  return loadOf(a) - loadOf(b) || Number(a.isl ?? 0) - Number(b.isl ?? 0) || Number(a.osl ?? 0) - Number(b.osl ?? 0);
}

const CONDITION = /^\s*([A-Za-z_][\w.]*)\s*(<=|>=|!=|=|<|>)\s*(.+?)\s*$/;

function test(value: unknown, op: string, wanted: string): boolean {
  const alternatives = wanted.split('|').map((s) => s.trim());
  const asNumber = (v: unknown) => (typeof v === 'number' ? v : Number(v));
  switch (op) {
    case '=':
      return alternatives.some((w) => String(value) === w || asNumber(value) === Number(w));
    case '!=':
      return !alternatives.some((w) => String(value) === w || asNumber(value) === Number(w));
    case '<':
      return asNumber(value) < Number(wanted);
    case '<=':
      return asNumber(value) <= Number(wanted);
    case '>':
      return asNumber(value) > Number(wanted);
    default:
      return asNumber(value) >= Number(wanted);
  }
}

/** Indices of the training points among `keys`; the rest are held out. */
export function selectTraining(keys: readonly PointKey[], expr: string): number[] {
  const text = expr.trim();
  const ordered = keys.map((key, index) => ({ key, index })).sort((a, b) => compare(a.key, b.key) || a.index - b.index);
  const extreme = /^(lowest|highest):(\d+)$/.exec(text);
  if (extreme) {
    const n = Number(extreme[2]);
    if (n < 1) throw new TrainSelectionError(`--train ${expr}: N must be at least 1`);
    const list = extreme[1] === 'lowest' ? ordered : [...ordered].reverse();
    return list
      .slice(0, n)
      .map((entry) => entry.index)
      .sort((a, b) => a - b);
  }
  if (text === 'all') return keys.map((_, index) => index);
  const conditions = text.split(/\s+and\s+|\s*&&\s*/).map((part) => {
    const match = CONDITION.exec(part);
    if (!match)
      throw new TrainSelectionError(
        `--train ${expr}: expected lowest:N, highest:N, all, or KEY<=VALUE / KEY=V1|V2 conditions joined by "and"`,
      );
    return { name: match[1], op: match[2], value: match[3] };
  });
  for (const condition of conditions) {
    if (!keys.some((key) => condition.name in key)) {
      throw new TrainSelectionError(
        `--train ${expr}: no measured point has a key ${condition.name} (keys: ${[...new Set(keys.flatMap((key) => Object.keys(key)))].join(', ')})`,
      );
    }
  }
  return keys
    .map((key, index) => ({ key, index }))
    .filter(({ key }) => conditions.every((c) => c.name in key && test(key[c.name], c.op, c.value)))
    .map(({ index }) => index);
}
