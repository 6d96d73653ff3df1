/**
 * Measured points from a plain CSV table (docs/scoring.md), such as the silicon CSVs in
 * `data/silicon/`: one row per load point, columns mapped by name to keys (concurrency,
 * request rate, ISL, OSL, any other) and to metrics (`time_to_first_token.avg`, ...), rows
 * filtered by column values to select one deployment. Errors name the file and the line.
 */
import { parse } from 'csv-parse/sync';
import { AiperfInputError } from './read-aiperf-errors.js';
import { parseNumberText } from './read-aiperf-json.js';
import { canonicalTag, getMetricInfo, metricValueProblem } from './read-aiperf-tags.js';
import { readTextFile } from './read-text.js';
import { matchesSelection, type ColumnSelection } from './selection.js';

/**
 * Column names recognised without a mapping: the silicon sample (`batch_size`,
 * `silicon_ttft_ms`, `silicon_tpot_ms`) and the digital-twin comparison (`concurrency`,
 * `ttft_ms`, `tpot_ms`). TPOT is the mean time per output token after the first, which is
 * AIPerf's inter-token latency.
 */
export const DEFAULT_TABULAR_MAPPING: Readonly<Record<string, string>> = {
  batch_size: 'concurrency',
  concurrency: 'concurrency',
  request_rate: 'request_rate',
  isl: 'isl',
  osl: 'osl',
  silicon_ttft_ms: 'time_to_first_token.avg',
  ttft_ms: 'time_to_first_token.avg',
  silicon_tpot_ms: 'inter_token_latency.avg',
  tpot_ms: 'inter_token_latency.avg',
  itl_ms: 'inter_token_latency.avg',
};

export type { ColumnSelection } from './selection.js';

export interface TabularPoint {
  file: string;
  /** 1-based line of the row. */
  line: number;
  key: Record<string, number | string>;
  /** Metric values by metric name (`time_to_first_token.avg`); null where the cell is empty. */
  metrics: Record<string, number | null>;
}

export interface TabularRead {
  file: string;
  columns: string[];
  /** The mapping used: column -> key name or metric name. */
  mapping: Record<string, string>;
  points: TabularPoint[];
  /** Rows left out by the selection. */
  skippedRows: number;
  /** The selections applied (on columns of this file). */
  appliedSelections: ColumnSelection[];
}

export interface ReadTabularOptions {
  /** column -> target; replaces the default mapping for the columns it names. */
  mapping?: Record<string, string>;
  /** Keep only rows whose cells meet these conditions (`selection.ts`; numbers compared as numbers). */
  select?: readonly ColumnSelection[];
  /** Use only the explicit mapping, not the default column names. */
  explicitOnly?: boolean;
  /** A selection on a column the file does not have: an error (default), or left to the caller. */
  unknownSelectColumns?: 'error' | 'ignore';
}

/**
 * Why a value cannot be the load key `target` (a concurrency is a whole number of slots, a request
 * rate a positive number, ISL and OSL token counts 0 or more), or null; other keys are free.
 */
function loadKeyProblem(target: string, value: number | undefined): string | null {
  const finite = value !== undefined && Number.isFinite(value);
  if (target === 'concurrency') return finite && Number.isInteger(value) && value >= 1 ? null : 'must be a positive whole number';
  if (target === 'request_rate') return finite && value > 0 ? null : 'must be a positive number (requests per second)';
  if (target === 'isl' || target === 'osl') return finite && value >= 0 ? null : 'must be a number of tokens, 0 or more';
  return null;
}

/** True when a mapping target names a metric (`tag.stat` or a known tag) rather than a key. */
export function isMetricTarget(target: string): boolean {
  if (target.includes('.')) return true;
  const info = getMetricInfo(canonicalTag(target));
  return info !== undefined && target !== 'concurrency';
}

/** `column=target` -> {column: target}; errors name the argument. */
export function parseMappingArguments(items: readonly string[]): Record<string, string> {
  const mapping: Record<string, string> = {};
  for (const item of items) {
    const equals = item.indexOf('=');
    if (equals <= 0 || equals === item.length - 1)
      throw new Error(`--map ${item}: expected COLUMN=TARGET, e.g. batch_size=concurrency or silicon_ttft_ms=time_to_first_token.avg`);
    mapping[item.slice(0, equals).trim()] = item.slice(equals + 1).trim();
  }
  return mapping;
}

/** The header row of a CSV file (trimmed cells). */
export function readTabularColumns(file: string): string[] {
  const text = readTextFile(file);
  const firstLine = text.slice(0, text.search(/\r?\n|$/));
  const [header]: string[][] = parse(firstLine, { relax_column_count: true });
  return (header ?? []).map((cell) => cell.trim());
}

export function readTabularPoints(file: string, options: ReadTabularOptions = {}): TabularRead {
  return parseTabularPoints(readTextFile(file), file, options);
}

export function parseTabularPoints(text: string, file: string, options: ReadTabularOptions = {}): TabularRead {
  let records: Array<{ record: string[]; info: { lines: number } }>;
  try {
    records = parse(text.replace(/^\uFEFF/, ''), { relax_column_count: true, skip_empty_lines: true, info: true }) as unknown as Array<{
      record: string[];
      info: { lines: number };
    }>;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const lineMatch = /line (\d+)/i.exec(message);
    throw new AiperfInputError(file, lineMatch ? { line: Number(lineMatch[1]) } : undefined, `not a valid CSV file (${message})`);
  }
  if (records.length === 0) throw new AiperfInputError(file, undefined, 'the file is empty; expected a header row');
  const header = records[0];
  const columns = header.record.map((cell) => cell.trim());
  const twice = columns.find((name, index) => name !== '' && columns.indexOf(name) !== index);
  if (twice !== undefined) {
    throw new AiperfInputError(file, { line: header.info.lines }, `the header names the column "${twice}" twice; rename one of them`);
  }
  const columnIndex = new Map(columns.map((name, index) => [name, index]));
  const mapping: Record<string, string> = {};
  if (!options.explicitOnly) {
    for (const [column, target] of Object.entries(DEFAULT_TABULAR_MAPPING)) if (columnIndex.has(column)) mapping[column] = target;
  }
  for (const [column, target] of Object.entries(options.mapping ?? {})) {
    if (!columnIndex.has(column)) {
      throw new AiperfInputError(
        file,
        { line: header.info.lines },
        `no column "${column}" to map to ${target} (columns: ${columns.join(', ')})`,
      );
    }
    // An explicit target replaces a default one of the same column or of the same target.
    for (const [other, otherTarget] of Object.entries(mapping)) if (otherTarget === target && other !== column) delete mapping[other];
    mapping[column] = target;
  }
  const select = (options.select ?? []).filter(
    (selection) => options.unknownSelectColumns !== 'ignore' || columnIndex.has(selection.column),
  );
  for (const selection of select) {
    if (!columnIndex.has(selection.column)) {
      throw new AiperfInputError(
        file,
        { line: header.info.lines },
        `no column "${selection.column}" to select on (columns: ${columns.join(', ')})`,
      );
    }
  }
  const byTarget = new Map<string, string>();
  for (const [column, target] of Object.entries(mapping)) {
    const other = byTarget.get(target);
    if (other !== undefined) {
      throw new AiperfInputError(
        file,
        { line: header.info.lines },
        `the columns "${other}" and "${column}" both read as ${target}; say which one with --map ${other}=${target} (or drop one)`,
      );
    }
    byTarget.set(target, column);
  }
  const keyColumns = Object.entries(mapping).filter(([, target]) => !isMetricTarget(target));
  const metricColumns = Object.entries(mapping).filter(([, target]) => isMetricTarget(target));
  if (keyColumns.length === 0) {
    throw new AiperfInputError(
      file,
      { line: header.info.lines },
      `no column maps to a load key (concurrency, request_rate, isl, osl); map one with --map COLUMN=concurrency`,
    );
  }
  if (metricColumns.length === 0) {
    throw new AiperfInputError(
      file,
      { line: header.info.lines },
      'no column maps to a metric; map one with --map COLUMN=time_to_first_token.avg',
    );
  }
  if (records.length === 1) {
    throw new AiperfInputError(file, { line: header.info.lines }, 'has a header and no rows: no measured point in it');
  }
  const points: TabularPoint[] = [];
  let skippedRows = 0;
  const rowsByKey = new Map<string, { line: number; cells: string[] }>();
  for (const { record, info } of records.slice(1)) {
    const line = info.lines;
    if (record.length !== columns.length) {
      throw new AiperfInputError(file, { line }, `the row has ${record.length} cells; the header has ${columns.length}`);
    }
    if (!select.every((selection) => matchesSelection(record[columnIndex.get(selection.column) as number].trim(), selection))) {
      skippedRows++;
      continue;
    }
    const key: Record<string, number | string> = {};
    for (const [column, target] of keyColumns) {
      const cell = record[columnIndex.get(column) as number].trim();
      if (cell === '') throw new AiperfInputError(file, { line }, `${column}: the key ${target} is empty`);
      const value = parseNumberText(cell);
      const problem = loadKeyProblem(target, value);
      if (problem !== null) throw new AiperfInputError(file, { line }, `${column}: the key ${target} ${problem}, got "${cell}"`);
      key[target] = value ?? cell;
    }
    const metrics: Record<string, number | null> = {};
    for (const [column, target] of metricColumns) {
      const cell = record[columnIndex.get(column) as number].trim();
      if (cell === '') {
        metrics[target] = null;
        continue;
      }
      const value = parseNumberText(cell);
      if (value === undefined) throw new AiperfInputError(file, { line }, `${column}: expected a number, got "${cell}"`);
      const problem = metricValueProblem(target.split('.')[0], value);
      if (problem !== null) throw new AiperfInputError(file, { line }, `${column}: ${target} ${problem}`);
      metrics[target] = value;
    }
    const keyText = JSON.stringify(Object.entries(key).sort());
    const earlier = rowsByKey.get(keyText);
    if (earlier) {
      const differing = columns.filter((_, index) => earlier.cells[index] !== record[index] && !mapping[columns[index]]);
      const keyShown = Object.entries(key)
        .map(([name, value]) => `${name}=${value}`)
        .join(', ');
      throw new AiperfInputError(
        file,
        { line },
        `the same point (${keyShown}) as line ${earlier.line}; select one deployment with --select COLUMN=VALUE` +
          (differing.length > 0 ? ` (columns that differ: ${differing.slice(0, 8).join(', ')})` : ''),
      );
    }
    rowsByKey.set(keyText, { line, cells: record });
    points.push({ file, line, key, metrics });
  }
  return { file, columns, mapping, points, skippedRows, appliedSelections: select };
}
