/**
 * Reader of AIPerf's summary CSV (`profile_export_aiperf.csv`, GenAI-Perf's
 * `profile_export_genai_perf.csv`), docs/aiperf-files.md: section 1 `Metric,<stats>` (rows
 * `Header (unit)`), a blank line, section 2 `Metric,Value`, and in the newest layout a GPU
 * telemetry section after two blank lines. Columns are mapped by header text, never by
 * position; rows by header, never by order. Errors name the file and the line.
 */
import { readTextFile } from './read-text.js';
import { basename } from 'node:path';
import { parse } from 'csv-parse/sync';
import { AiperfInputError } from './read-aiperf-errors.js';
import { parseNumberText } from './read-aiperf-json.js';
import { getMetricInfo, metricValueProblem, tagFromHeaderCell } from './read-aiperf-tags.js';
import {
  AIPERF_STATS,
  type AiperfLayout,
  type AiperfMetric,
  type AiperfStat,
  type AiperfSummary,
  type AiperfTelemetryRow,
} from './read-aiperf-types.js';

interface CsvLine {
  cells: string[];
  line: number;
}

const STAT_SET = new Set<string>(AIPERF_STATS);
const TELEMETRY_ID_COLUMNS = new Set(['endpoint', 'gpu_index', 'gpu_name', 'gpu_uuid', 'metric']);

export function readAiperfCsv(file: string): AiperfSummary {
  return parseAiperfCsv(readTextFile(file), file);
}

/** Splits a CSV text into records with their line numbers; blank lines are kept as `[]`. */
export function parseCsvLines(text: string, file: string): CsvLine[] {
  let records: Array<{ record: string[]; info: { lines: number } }>;
  try {
    records = parse(text.replace(/^\uFEFF/, ''), {
      relax_column_count: true,
      skip_empty_lines: false,
      info: true,
    }) as unknown as Array<{ record: string[]; info: { lines: number } }>;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const lineMatch = /(?:line|lines) (\d+)/i.exec(message);
    throw new AiperfInputError(file, lineMatch ? { line: Number(lineMatch[1]) } : undefined, `not a valid CSV file (${message})`);
  }
  return records.map(({ record, info }) => ({
    cells: record.length === 1 && record[0].trim() === '' ? [] : record,
    line: info.lines,
  }));
}

function layoutFromStatHeader(statColumns: string[], file: string): AiperfLayout {
  if (basename(file).includes('genai_perf')) return 'genai-perf';
  const sumIndex = statColumns.indexOf('sum');
  if (sumIndex >= 0) return statColumns.indexOf('max') >= 0 && sumIndex > statColumns.indexOf('max') ? 'count-sum' : 'flat-versioned';
  if (statColumns.includes('p10')) return 'flat';
  if (statColumns.includes('p1')) return 'records';
  return 'genai-perf';
}

export function parseAiperfCsv(text: string, file: string): AiperfSummary {
  const lines = parseCsvLines(text, file);
  let index = 0;
  const skipBlank = (): number => {
    let blanks = 0;
    while (index < lines.length && lines[index].cells.length === 0) {
      index++;
      blanks++;
    }
    return blanks;
  };
  skipBlank();
  if (index >= lines.length)
    throw new AiperfInputError(file, { line: 1 }, 'the file is empty; expected the statistics section "Metric,avg,min,max,..."');
  const header = lines[index];
  const headerCells = header.cells.map((cell) => cell.trim());
  if (headerCells[0] !== 'Metric' || headerCells.length < 2 || headerCells[1] === 'Value') {
    throw new AiperfInputError(
      file,
      { line: header.line },
      `expected the statistics section header "Metric,avg,min,max,...", got "${header.cells.join(',')}"`,
    );
  }
  const statColumns = headerCells.slice(1).map((cell) => cell.toLowerCase());
  for (const [offset, column] of statColumns.entries()) {
    if (!STAT_SET.has(column)) {
      throw new AiperfInputError(
        file,
        { line: header.line },
        `unknown statistic column "${headerCells[offset + 1]}" (known: ${AIPERF_STATS.join(', ')})`,
      );
    }
  }
  const layout = layoutFromStatHeader(statColumns, file);
  index++;
  const metrics: Record<string, AiperfMetric> = {};
  while (index < lines.length && lines[index].cells.length > 0) {
    const row = lines[index];
    const metric = parseStatRow(row, statColumns, 'distribution', file);
    metrics[metric.tag] = metric;
    index++;
  }
  const lastLine = index > 0 ? lines[index - 1].line : 1;
  skipBlank();
  if (index >= lines.length) {
    throw new AiperfInputError(
      file,
      { line: lastLine },
      'the file ends without the single-value section "Metric,Value" (missing section?)',
    );
  }
  const valueHeader = lines[index];
  if (valueHeader.cells.length < 2 || valueHeader.cells[0].trim() !== 'Metric' || valueHeader.cells[1].trim() !== 'Value') {
    throw new AiperfInputError(
      file,
      { line: valueHeader.line },
      `expected the single-value section header "Metric,Value", got "${valueHeader.cells.join(',')}"`,
    );
  }
  index++;
  while (index < lines.length && lines[index].cells.length > 0) {
    const row = lines[index];
    if (row.cells.length < 2) throw new AiperfInputError(file, { line: row.line }, `expected "Header,value", got "${row.cells.join(',')}"`);
    const metric = parseStatRow({ cells: row.cells.slice(0, 2), line: row.line }, ['avg'], 'single', file);
    if (metric.stats.avg === undefined) throw new AiperfInputError(file, { line: row.line }, `"${row.cells[0]}" has no value`);
    metrics[metric.tag] = metric;
    index++;
  }
  const telemetry: AiperfTelemetryRow[] = [];
  skipBlank();
  if (index < lines.length) {
    const sectionHeader = lines[index];
    if (sectionHeader.cells[0]?.trim() === 'Endpoint') {
      index++;
      telemetry.push(...parseTelemetrySection(lines, sectionHeader, index, file));
    }
    // Any other trailing section (a newer AIPerf's addition) is not needed for scoring.
  }
  return {
    file,
    format: 'csv',
    layout,
    schemaVersion: undefined,
    aiperfVersion: undefined,
    metrics,
    inputConfig: undefined,
    cliCommand: undefined,
    errorSummary: [],
    telemetry,
    wasCancelled: undefined,
  };
}

function parseStatRow(row: CsvLine, statColumns: string[], kind: AiperfMetric['kind'], file: string): AiperfMetric {
  const first = row.cells[0]?.trim() ?? '';
  if (first === '') throw new AiperfInputError(file, { line: row.line }, 'a metric row has no header in its first cell');
  if (row.cells.length !== statColumns.length + 1) {
    throw new AiperfInputError(
      file,
      { line: row.line },
      `"${first}" has ${row.cells.length} cells; the section header has ${statColumns.length + 1}`,
    );
  }
  const parsed = tagFromHeaderCell(first);
  const info = getMetricInfo(parsed.tag);
  const unit = info?.unit ?? parsed.unit ?? '';
  const stats: Partial<Record<AiperfStat, number>> = {};
  for (const [offset, column] of statColumns.entries()) {
    const cell = row.cells[offset + 1];
    const value = parseNumberText(cell);
    if (value === undefined) {
      const trimmed = cell.trim();
      if (trimmed === '') {
        // Empty cells of an error-adjusted row are infinite statistics (docs/aiperf-files.md).
        if (parsed.isAdjusted) stats[column as AiperfStat] = Infinity;
        continue;
      }
      if (/^(nan|n\/a|none|null)$/i.test(trimmed)) continue;
      throw new AiperfInputError(file, { line: row.line }, `"${first}" ${column}: expected a number, got "${cell}"`);
    }
    const problem = metricValueProblem(parsed.tag, value);
    if (problem !== null) throw new AiperfInputError(file, { line: row.line }, `"${first}" ${column}: ${problem}`);
    stats[column as AiperfStat] = value;
  }
  return { tag: parsed.tag, unit, kind, stats };
}

function parseTelemetrySection(lines: CsvLine[], header: CsvLine, start: number, file: string): AiperfTelemetryRow[] {
  const columns = header.cells.map((cell) => cell.trim());
  const lower = columns.map((cell) => cell.toLowerCase());
  const columnOf = (name: string): number => lower.indexOf(name);
  for (const required of ['endpoint', 'gpu_index', 'metric']) {
    if (columnOf(required) < 0)
      throw new AiperfInputError(file, { line: header.line }, `the GPU telemetry section has no "${required}" column`);
  }
  const rows: AiperfTelemetryRow[] = [];
  for (let index = start; index < lines.length && lines[index].cells.length > 0; index++) {
    const row = lines[index];
    if (row.cells.length !== columns.length) {
      throw new AiperfInputError(
        file,
        { line: row.line },
        `a GPU telemetry row has ${row.cells.length} cells; its header has ${columns.length}`,
      );
    }
    const cell = (name: string): string => (columnOf(name) >= 0 ? row.cells[columnOf(name)].trim() : '');
    const parsed = tagFromHeaderCell(cell('metric'));
    const stats: Partial<Record<AiperfStat, number>> = {};
    const labels: Record<string, string> = {};
    for (const [column, name] of lower.entries()) {
      if (STAT_SET.has(name)) {
        const value = parseNumberText(row.cells[column]);
        if (value === undefined && row.cells[column].trim() !== '') {
          throw new AiperfInputError(file, { line: row.line }, `GPU telemetry ${name}: expected a number, got "${row.cells[column]}"`);
        }
        if (value !== undefined) stats[name as AiperfStat] = value;
      } else if (!TELEMETRY_ID_COLUMNS.has(name)) {
        labels[columns[column]] = row.cells[column].trim();
      }
    }
    rows.push({
      endpoint: cell('endpoint'),
      gpuIndex: cell('gpu_index'),
      gpuName: cell('gpu_name'),
      gpuUuid: cell('gpu_uuid'),
      metric: cell('metric'),
      unit: parsed.unit,
      labels,
      stats,
    });
  }
  return rows;
}
