/**
 * Reading the plain CSV inputs of the direct fits: a header row, then one row per
 * observation. Columns are found by name (a mapping renames them); every cell a fit uses must
 * be a finite number, and a bad cell is an `InputError` naming the file, the line and the column.
 */
import type { Table, TableRow } from '../io/csv-table.js';
import { InputError } from '../config/errors.js';
import { matchesSelection, type ColumnSelection } from '../io/selection.js';

export { parseTable, readTable, type Table, type TableRow } from '../io/csv-table.js';

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
