/**
 * `--select` conditions, shared by `score`, `calibrate engine` and `calibrate pass-time`, in the
 * same forms as `calibrate engine --train`: `COLUMN=VALUE`, a list of values `COLUMN=V1|V2|V3`,
 * `COLUMN!=V1|V2`, and the comparisons `COLUMN<V`, `<=`, `>`, `>=`. A condition applies to a
 * table's column (its rows) or to a point's key; numbers compare as numbers (`1024` equals
 * `1024.0`), other values as text.
 */
import { parseNumberText } from './read-aiperf-json.js';

export type SelectionOp = '=' | '!=' | '<' | '<=' | '>' | '>=';

export interface ColumnSelection {
  column: string;
  /** The value as written: one value, or alternatives joined by `|` for `=` and `!=`. */
  value: string;
  /** `=` when absent. */
  op?: SelectionOp;
}

const CONDITION = /^\s*([^<>=!|]+?)\s*(<=|>=|!=|=|<|>)\s*(.*?)\s*$/;

/** `concurrency<=16` -> {column: concurrency, op: <=, value: 16}; null when the text is no condition. */
export function parseSelection(text: string): ColumnSelection | null {
  const match = CONDITION.exec(text);
  if (!match || match[3] === '') return null;
  const op = match[2] as SelectionOp;
  if (op !== '=' && op !== '!=' && (match[3].includes('|') || parseNumberText(match[3]) === undefined)) return null;
  return { column: match[1], value: match[3], ...(op === '=' ? {} : { op }) };
}

/** The condition as it was written (`concurrency=4|8`). */
export function formatSelection(selection: ColumnSelection): string {
  return `${selection.column}${selection.op ?? '='}${selection.value}`;
}

function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string') return parseNumberText(value.trim());
  return undefined;
}

function equals(value: unknown, wanted: string): boolean {
  const text = typeof value === 'string' ? value.trim() : String(value);
  if (text === wanted) return true;
  const a = asNumber(value);
  const b = asNumber(wanted);
  return a !== undefined && b !== undefined && Number(a.toPrecision(12)) === Number(b.toPrecision(12));
}

/** Whether a cell or key value meets the condition. */
export function matchesSelection(value: unknown, selection: ColumnSelection): boolean {
  const op = selection.op ?? '=';
  if (op === '=' || op === '!=') {
    const hit = selection.value.split('|').some((wanted) => equals(value, wanted.trim()));
    return op === '=' ? hit : !hit;
  }
  const a = asNumber(value);
  const b = asNumber(selection.value);
  if (a === undefined || b === undefined) return false;
  switch (op) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    default:
      return a >= b;
  }
}
