/**
 * Reading the plain CSV inputs of the direct fits: a header row, then one row per
 * observation. Columns are found by name (a mapping renames them); every cell a fit uses must
 * be a finite number, and a bad cell is an `InputError` naming the file, the line and the column.
 */
import { readTextFile } from '../io/read-text.js';
import { parse } from 'csv-parse/sync';
import { InputError } from '../config/errors.js';
import { matchesSelection, type ColumnSelection } from '../io/selection.js';

export interface TableRow {
  line: number;
  cells: Record<string, string>;
}

export interface Table {
  file: string;
  columns: string[];
  rows: TableRow[];
}

export function readTable(file: string): Table {
  return parseTable(readTextFile(file), file);
}

export function parseTable(text: string, file: string): Table {
  let records: Array<{ record: string[]; info: { lines: number } }>;
  try {
    records = parse(text.replace(/^\uFEFF/, ''), {
      relax_column_count: true,
      skip_empty_lines: true,
      info: true,
    }) as unknown as typeof records;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new InputError(file, Number(/line (\d+)/i.exec(message)?.[1] ?? 0), `not a valid CSV file (${message})`);
  }
  if (records.length === 0) throw new InputError(file, 1, 'the file is empty; expected a header row');
  const columns = records[0].record.map((cell) => cell.trim());
  const twice = columns.find((name, index) => name !== '' && columns.indexOf(name) !== index);
  if (twice !== undefined)
    throw new InputError(file, records[0].info.lines, `the header names the column "${twice}" twice; rename one of them`);
  const rows: TableRow[] = [];
  for (const { record, info } of records.slice(1)) {
    if (record.length !== columns.length)
      throw new InputError(file, info.lines, `the row has ${record.length} cells; the header has ${columns.length}`);
    const cells: Record<string, string> = {};
    columns.forEach((column, index) => (cells[column] = record[index].trim()));
    rows.push({ line: info.lines, cells });
  }
  return { file, columns, rows };
}

/** The column a role reads: the mapped name, else the default name; an error lists the columns. */
export function requireColumn(table: Table, name: string, role: string): string {
  if (!table.columns.includes(name)) {
    throw new InputError(
      table.file,
      1,
      `no column "${name}" for ${role} (columns: ${table.columns.join(', ')}); name it with --map ${role}=COLUMN`,
    );
  }
  return name;
}

/** A finite number from a cell; `nonNegative` also rejects values below 0. */
export function numberCell(table: Table, row: TableRow, column: string, nonNegative = true): number {
  const text = row.cells[column];
  const value = text === '' ? NaN : Number(text);
  if (!Number.isFinite(value)) throw new InputError(table.file, row.line, `${column}: expected a number, got "${text}"`);
  if (nonNegative && value < 0) throw new InputError(table.file, row.line, `${column}: expected a number >= 0, got ${text}`);
  return value;
}

/** Keeps the rows whose cells meet the selections (`column=value`, `column<=value`, ...: `io/selection.ts`). */
export function selectRows(table: Table, selections: readonly ColumnSelection[]): Table {
  for (const selection of selections) {
    if (!table.columns.includes(selection.column)) {
      throw new InputError(table.file, 1, `no column "${selection.column}" to select on (columns: ${table.columns.join(', ')})`);
    }
  }
  return { ...table, rows: table.rows.filter((row) => selections.every((s) => matchesSelection(row.cells[s.column], s))) };
}
