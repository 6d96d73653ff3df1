/**
 * A CSV table: a header row, then one row per record. Cells are trimmed, a row whose cell count
 * differs from the header's and a header naming a column twice are `InputError`s naming the
 * file and the line.
 */
import { parse } from 'csv-parse/sync';
import { InputError } from '../config/errors.js';
import { readTextFile } from './read-text.js';

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

/** `expected` says what an empty file should have started with (a header row by default). */
export function parseTable(text: string, file: string, expected = 'a header row'): Table {
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
  if (records.length === 0) throw new InputError(file, 1, `the file is empty; expected ${expected}`);
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
