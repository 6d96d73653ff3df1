/**
 * Renders a score (`ScoreResult`) as the files and the table users read (docs/scoring.md):
 * `scores.json`, `scores.csv` (one row per point and metric), `report.md`, a self-contained
 * `report.html` (inline CSS and SVG charts, no script, nothing fetched), and the MAPE table
 * printed on the terminal.
 */
import { join } from 'node:path';
import { writeOutputFiles } from '../io/write-output.js';
import { stringify } from 'csv-stringify/sync';
import { renderScoreCharts, type ScoreCharts } from './charts.js';
import { formatKey, keyValueText, type PointKey } from './points.js';
import type { LimitCheck, MetricSummary, ScoreResult, UnmatchedPoint } from './score-result.js';

export const SCORE_FILES = {
  json: 'scores.json',
  csv: 'scores.csv',
  markdown: 'report.md',
  html: 'report.html',
} as const;

function fixed(value: number | null | undefined, digits = 2): string {
  return value === null || value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits);
}

/** A measured or simulated value with 4 significant digits (ms, tokens/s, ...). */
function valueText(value: number | null | undefined): string {
  if (value === null || value === undefined) return '-';
  if (!Number.isFinite(value)) return String(value);
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return value.toFixed(1);
  if (magnitude >= 1) return value.toPrecision(4);
  return value.toPrecision(3);
}

function change(before: number | null | undefined, after: number | null | undefined): string {
  if (before === null || before === undefined || after === null || after === undefined) return '-';
  const delta = after - before;
  return `${delta >= 0 ? '+' : ''}${delta.toFixed(2)}`;
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

function table(header: string[], rows: string[][], rightAligned: boolean[]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => pad(cell, widths[column], rightAligned[column]))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

function describeUnmatched(points: readonly UnmatchedPoint[], limit = 8): string {
  const shown = points.slice(0, limit).map((point) => `${formatKey(point.key) || point.source}${point.reason ? ` (${point.reason})` : ''}`);
  return shown.join('; ') + (points.length > limit ? `; and ${points.length - limit} more` : '');
}

function summaryColumns(result: ScoreResult): {
  header: string[];
  right: boolean[];
  row: (metric: string, summary: MetricSummary) => string[];
} {
  const hasBaseline = result.inputs.baseline !== undefined;
  const simLabel = result.inputs.sim_label;
  const baselineLabel = result.inputs.baseline_label ?? 'baseline';
  if (!hasBaseline) {
    return {
      header: ['metric', 'unit', 'points', 'MAPE %', 'shape %', 'max APE %'],
      right: [false, false, true, true, true, true],
      row: (metric, summary) => [
        metric,
        summary.unit,
        String(summary.points),
        fixed(summary.mape),
        fixed(summary.shape_error),
        fixed(summary.max_ape),
      ],
    };
  }
  return {
    header: [
      'metric',
      'unit',
      'points',
      `MAPE % ${baselineLabel}`,
      `MAPE % ${simLabel}`,
      'change',
      `shape % ${baselineLabel}`,
      `shape % ${simLabel}`,
    ],
    right: [false, false, true, true, true, true, true, true],
    row: (metric, summary) => [
      metric,
      summary.unit,
      String(summary.points),
      fixed(summary.baseline_mape),
      fixed(summary.mape),
      change(summary.baseline_mape, summary.mape),
      fixed(summary.baseline_shape_error),
      fixed(summary.shape_error),
    ],
  };
}

function groupLabel(key: PointKey): string {
  return formatKey(key) || '(no value)';
}

/** The MAPE table printed on the terminal, with groups, unmatched points and limit results. */
export function formatTerminalTable(result: ScoreResult, limits: readonly LimitCheck[] = []): string {
  const lines: string[] = [];
  const counted = countedRows(result);
  const scored = new Set(counted.filter((row) => row.ape !== null).map((row) => row.measured_source)).size;
  lines.push(
    `servesim score: ${result.inputs.sim_label} against ${scored} measured point${scored === 1 ? '' : 's'}, matched on ${result.match.keys.join(', ') || 'nothing'}`,
  );
  const training = trainingLine(result);
  if (training !== null) lines.push(training);
  const placeholder = placeholderNote(result);
  if (placeholder !== null) lines.push(`note: ${placeholder}`);
  if (result.match.variant_keys.length > 0) {
    lines.push(
      `note: simulated points also differ in ${result.match.variant_keys.join(', ')}, which the measured side lacks; MAPEs mix them (use --group-by)`,
    );
  }
  const columns = summaryColumns(result);
  lines.push(
    table(
      columns.header,
      Object.entries(result.metrics).map(([metric, summary]) => columns.row(metric, summary)),
      columns.right,
    ),
  );
  const groupBy = result.match.group_by;
  if (groupBy.length > 0) {
    const { header, rows, right } = groupTableRows(result);
    lines.push('');
    lines.push(`by ${groupBy.join(', ')}:`);
    lines.push(table(header, rows, right));
  }
  if (result.unmatched.sim.length > 0)
    lines.push(`unmatched simulated points (${result.unmatched.sim.length}): ${describeUnmatched(result.unmatched.sim)}`);
  if (result.unmatched.measured.length > 0)
    lines.push(`unmatched measured points (${result.unmatched.measured.length}): ${describeUnmatched(result.unmatched.measured)}`);
  if (result.unmatched.baseline && result.unmatched.baseline.length > 0) {
    lines.push(`unmatched baseline points (${result.unmatched.baseline.length}): ${describeUnmatched(result.unmatched.baseline)}`);
  }
  const notScored = counted.filter((row) => row.ape === null);
  if (notScored.length > 0) {
    const reasons = new Map<string, number>();
    for (const row of notScored) reasons.set(row.note ?? 'not scored', (reasons.get(row.note ?? 'not scored') ?? 0) + 1);
    lines.push(`not scored: ${[...reasons].map(([reason, count]) => `${count} x ${reason}`).join(', ')}`);
  }
  for (const limit of limits) lines.push(`${limit.passed ? 'ok' : 'FAIL'}: ${limit.message}`);
  return `${lines.join('\n')}\n`;
}

/** The rows the MAPEs count: all but the training points left out of them. */
function countedRows(result: ScoreResult): ScoreResult['points'] {
  return result.inputs.training?.scored === false ? result.points.filter((row) => !row.train) : result.points;
}

/** What the score says of the training points it knows, or null when it knows none. */
function trainingLine(result: ScoreResult): string | null {
  const training = result.inputs.training;
  if (training === undefined) return null;
  const names = [...new Set(training.keys.flatMap((key) => Object.keys(key)))];
  const where = training.source.startsWith('--train') ? training.source : `the fit's, from ${training.source}`;
  return training.scored
    ? `the MAPE includes the training points ${formatKeyList(training.keys, names)} (${where}), marked train in the tables`
    : `training points ${formatKeyList(training.keys, names)} (${where}): marked train in the tables, left out of the MAPE`;
}

/** `concurrency 4, 8, 16` (one key), or `concurrency=4, isl=1024; ...` (several). */
function formatKeyList(keys: readonly PointKey[], names: readonly string[]): string {
  if (names.length === 1) return `${names[0]} ${keys.map((key) => keyValueText(key[names[0]])).join(', ')}`;
  return keys.map((key) => names.map((name) => `${name}=${keyValueText(key[name])}`).join(', ')).join('; ');
}

function keyNamesOf(result: ScoreResult): string[] {
  return [...result.match.keys, ...result.match.variant_keys];
}

function numberCell(value: number | null | undefined): string {
  return value === null || value === undefined ? '' : String(value);
}

/** `scores.csv`: one row per point and metric; keys as columns; full precision. */
export function formatScoresCsv(result: ScoreResult): string {
  const keyNames = keyNamesOf(result);
  const hasBaseline = result.inputs.baseline !== undefined;
  const header = [
    ...keyNames,
    'metric',
    'unit',
    'sim',
    'measured',
    'error',
    'ape',
    'shape_ape',
    'anchor',
    'note',
    'train',
    ...(hasBaseline ? ['baseline_sim', 'baseline_error', 'baseline_ape'] : []),
    'sim_source',
    'measured_source',
  ];
  const rows = result.points.map((row) => [
    ...keyNames.map((name) => (name in row.key ? keyValueText(row.key[name]) : '')),
    row.metric,
    result.metrics[row.metric]?.unit ?? '',
    numberCell(row.sim),
    numberCell(row.measured),
    numberCell(row.error),
    numberCell(row.ape),
    numberCell(row.shape_ape),
    row.anchor ? 'true' : 'false',
    row.note ?? '',
    row.train ? 'true' : 'false',
    ...(hasBaseline ? [numberCell(row.baseline_sim), numberCell(row.baseline_error), numberCell(row.baseline_ape)] : []),
    row.sim_source,
    row.measured_source,
  ]);
  return stringify([header, ...rows]);
}

/**
 * Text from the inputs (labels, paths, keys, notes) as report.md shows it: HTML-escaped as
 * report.html escapes it (a Markdown viewer passes HTML through, so a label `<script>` would stay
 * a tag), and the characters that start Markdown markup (emphasis, code, links) backslash-escaped,
 * so the label reads as written.
 */
export function markdownText(text: string): string {
  return escapeHtml(text).replace(/[\\`*[\]~]/g, '\\$&');
}

/** A code span holding `text` as written, whatever backticks it has (Markdown shows a code span's text literally). */
function markdownCode(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

function markdownTable(header: string[], rows: string[][], right: boolean[]): string {
  const escape = (cell: string): string => markdownText(cell).replace(/\|/g, '\\|');
  return [
    `| ${header.map(escape).join(' | ')} |`,
    `|${right.map((isRight) => (isRight ? '---:' : '---')).join('|')}|`,
    ...rows.map((row) => `| ${row.map(escape).join(' | ')} |`),
  ].join('\n');
}

function pointTableRows(result: ScoreResult, metric: string): { header: string[]; rows: string[][]; right: boolean[] } {
  const keyNames = keyNamesOf(result);
  const hasBaseline = result.inputs.baseline !== undefined;
  const hasTraining = result.inputs.training !== undefined;
  const header = [
    ...keyNames,
    ...(hasTraining ? ['point'] : []),
    'sim',
    'measured',
    'error',
    'APE %',
    'shape APE %',
    ...(hasBaseline ? ['baseline', 'baseline APE %'] : []),
    'note',
  ];
  const rows = result.points
    .filter((row) => row.metric === metric)
    .map((row) => [
      ...keyNames.map((name) => (name in row.key ? keyValueText(row.key[name]) : '')),
      ...(hasTraining ? [row.train ? (result.inputs.training?.scored ? 'train (scored)' : 'train') : 'held out'] : []),
      valueText(row.sim),
      valueText(row.measured),
      valueText(row.error),
      fixed(row.ape),
      row.anchor ? 'anchor' : fixed(row.shape_ape),
      ...(hasBaseline ? [valueText(row.baseline_sim), fixed(row.baseline_ape)] : []),
      row.note ?? '',
    ]);
  const right = header.map((name, column) => column >= keyNames.length && name !== 'note' && name !== 'point');
  return { header, rows, right };
}

/** The MAPE of every metric per group of `--group-by`. */
function groupTableRows(result: ScoreResult): { header: string[]; rows: string[][]; right: boolean[] } {
  const hasBaseline = result.inputs.baseline !== undefined;
  const header = ['metric', result.match.group_by.join(', '), 'points', 'MAPE %', 'shape %', ...(hasBaseline ? ['baseline MAPE %'] : [])];
  const rows = Object.entries(result.metrics).flatMap(([metric, summary]) =>
    (summary.groups ?? []).map((group) => [
      metric,
      groupLabel(group.key),
      String(group.points),
      fixed(group.mape),
      fixed(group.shape_error),
      ...(hasBaseline ? [fixed(group.baseline_mape)] : []),
    ]),
  );
  return { header, rows, right: header.map((_, column) => column >= 2) };
}

/** The unmatched points of each side, one line each (the baseline's only with a baseline). */
function unmatchedLines(result: ScoreResult): string[] {
  const sides: Array<[string, readonly UnmatchedPoint[] | undefined]> = [
    ['simulated', result.unmatched.sim],
    ['measured', result.unmatched.measured],
    ['baseline', result.unmatched.baseline],
  ];
  const lines: string[] = [];
  for (const [name, points] of sides) {
    if (points !== undefined) lines.push(`${name} (${points.length}): ${points.length > 0 ? describeUnmatched(points, 50) : 'none'}`);
  }
  return lines;
}

const HOW_TO_READ = [
  '**APE** = |sim - measured| / measured x 100 for one point and metric; **error** = sim - measured (signed, in the unit of the metric).',
  '**MAPE** = the mean APE over the scored points of a metric (every point weighs the same). Group MAPEs are computed from their points.',
  '**shape %** (shape error): on each curve (points that share every key but the load), the lowest-load point is the anchor; each other point is scored on `value / anchor value`, simulated against measured, and the shape error is the mean of those APEs. It is low when the simulator gets the trend right even if it is off by a constant factor.',
  'A point whose measured value is 0 or missing is listed with a note and not scored. Points that match nothing are listed under "Unmatched".',
];

/** `report.md`. */
export function formatMarkdownReport(result: ScoreResult, limits: readonly LimitCheck[] = []): string {
  const out: string[] = [];
  // Every piece of text that comes from the inputs is escaped (markdownText, markdownCode).
  const text = markdownText;
  out.push(`# Score of ${text(result.inputs.sim_label)}`);
  out.push('');
  out.push(`- simulated: ${markdownCode(result.inputs.sim)}`);
  if (result.inputs.baseline) out.push(`- baseline: ${markdownCode(result.inputs.baseline)} (${text(result.inputs.baseline_label ?? '')})`);
  out.push(`- measured: ${result.inputs.measured.map(markdownCode).join(', ')}`);
  for (const note of result.inputs.measured_notes) out.push(`  - ${text(note)}`);
  out.push(
    `- matched on: ${text(result.match.keys.join(', '))}${result.match.load_key ? ` (load axis: ${text(result.match.load_key)})` : ''}`,
  );
  const training = trainingLine(result);
  if (training !== null) out.push(`- ${text(training)}`);
  if (result.match.variant_keys.length > 0)
    out.push(`- simulated points also differ in: ${text(result.match.variant_keys.join(', '))} (the measured side lacks these keys)`);
  const placeholder = placeholderNote(result);
  if (placeholder !== null) out.push(`- ${text(placeholder)}`);
  out.push('');
  out.push('## MAPE per metric');
  out.push('');
  const columns = summaryColumns(result);
  out.push(
    markdownTable(
      columns.header,
      Object.entries(result.metrics).map(([metric, summary]) => columns.row(metric, summary)),
      columns.right,
    ),
  );
  if (limits.length > 0) {
    out.push('');
    for (const limit of limits) out.push(`- ${limit.passed ? 'ok' : '**FAIL**'}: ${text(limit.message)}`);
  }
  if (result.match.group_by.length > 0) {
    out.push('');
    out.push(`## By ${text(result.match.group_by.join(', '))}`);
    out.push('');
    const { header, rows, right } = groupTableRows(result);
    out.push(markdownTable(header, rows, right));
  }
  for (const metric of Object.keys(result.metrics)) {
    out.push('');
    out.push(`## ${text(metric)} (${text(result.metrics[metric].unit || 'no unit')})`);
    out.push('');
    const { header, rows, right } = pointTableRows(result, metric);
    out.push(markdownTable(header, rows, right));
  }
  out.push('');
  out.push('## Unmatched');
  out.push('');
  for (const line of unmatchedLines(result)) out.push(`- ${text(line)}`);
  out.push('');
  out.push('## How to read this');
  out.push('');
  for (const line of HOW_TO_READ) out.push(`- ${line}`);
  out.push('');
  return out.join('\n');
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function htmlTable(header: string[], rows: string[][], right: boolean[]): string {
  const cell = (tag: string, text: string, column: number): string =>
    `<${tag}${right[column] ? ' class="num"' : ''}>${escapeHtml(text)}</${tag}>`;
  return [
    '<table>',
    `<thead><tr>${header.map((text, column) => cell('th', text, column)).join('')}</tr></thead>`,
    '<tbody>',
    ...rows.map((row) => `<tr>${row.map((text, column) => cell('td', text, column)).join('')}</tr>`),
    '</tbody></table>',
  ].join('\n');
}

function markdownInline(text: string): string {
  return escapeHtml(text)
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/`([^`]+)`/g, '<code>$1</code>');
}

export const STYLE = `
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1320px; padding: 0 1rem; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
th, td { border: 1px solid #ddd; padding: .25rem .5rem; text-align: left; }
th { background: #f4f4f4; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.charts { display: flex; flex-wrap: wrap; gap: 1rem; } .chart { border: 1px solid #eee; padding: .5rem; max-width: 100%; overflow-x: auto; }
.fail { color: #b00020; font-weight: bold; } .ok { color: #1b7f3b; }
ul.inputs li { margin: .15rem 0; } code { background: #f6f6f6; padding: 0 .2rem; }
details { margin: .5rem 0; } summary { cursor: pointer; font-weight: 600; }
`;

/** `report.html`: one file, inline CSS and SVG, no script and no external resource. */
export function formatHtmlReport(result: ScoreResult, charts: ScoreCharts, limits: readonly LimitCheck[] = []): string {
  const out: string[] = [];
  out.push('<!doctype html>');
  out.push('<html lang="en"><head><meta charset="utf-8">');
  out.push(`<title>${escapeHtml(`Score of ${result.inputs.sim_label}`)}</title>`);
  out.push(`<style>${STYLE}</style></head><body>`);
  out.push(`<h1>${escapeHtml(`Score of ${result.inputs.sim_label}`)}</h1>`);
  out.push('<ul class="inputs">');
  out.push(`<li>simulated: <code>${escapeHtml(result.inputs.sim)}</code></li>`);
  if (result.inputs.baseline)
    out.push(`<li>baseline: <code>${escapeHtml(result.inputs.baseline)}</code> (${escapeHtml(result.inputs.baseline_label ?? '')})</li>`);
  out.push(`<li>measured: ${result.inputs.measured.map((path) => `<code>${escapeHtml(path)}</code>`).join(', ')}<ul>`);
  for (const note of result.inputs.measured_notes) out.push(`<li>${escapeHtml(note)}</li>`);
  out.push('</ul></li>');
  out.push(
    `<li>matched on: ${escapeHtml(result.match.keys.join(', '))}${result.match.load_key ? ` (load axis: ${escapeHtml(result.match.load_key)})` : ''}</li>`,
  );
  if (result.match.variant_keys.length > 0)
    out.push(`<li>simulated points also differ in: ${escapeHtml(result.match.variant_keys.join(', '))}</li>`);
  const placeholder = placeholderNote(result);
  if (placeholder !== null) out.push(`<li>${escapeHtml(placeholder)}</li>`);
  const training = trainingLine(result);
  if (training !== null) out.push(`<li>${escapeHtml(training)}</li>`);
  out.push('</ul>');
  out.push('<h2>MAPE per metric</h2>');
  const columns = summaryColumns(result);
  out.push(
    htmlTable(
      columns.header,
      Object.entries(result.metrics).map(([metric, summary]) => columns.row(metric, summary)),
      columns.right,
    ),
  );
  if (limits.length > 0) {
    out.push('<ul>');
    for (const limit of limits)
      out.push(`<li class="${limit.passed ? 'ok' : 'fail'}">${limit.passed ? 'ok' : 'FAIL'}: ${escapeHtml(limit.message)}</li>`);
    out.push('</ul>');
  }
  if (result.match.group_by.length > 0) {
    out.push(`<h2>By ${escapeHtml(result.match.group_by.join(', '))}</h2>`);
    const { header, rows, right } = groupTableRows(result);
    out.push(htmlTable(header, rows, right));
  }
  out.push('<h2>Simulated and measured against load</h2>');
  out.push('<div class="charts">');
  for (const [metric, svg] of Object.entries(charts.metrics))
    out.push(`<div class="chart" data-metric="${escapeHtml(metric)}">${svg}</div>`);
  out.push('</div>');
  out.push('<h2>APE per point</h2>');
  out.push('<div class="charts">');
  if (charts.ape) out.push(`<div class="chart">${charts.ape}</div>`);
  else out.push('<p>No point was scored.</p>');
  out.push('</div>');
  out.push('<h2>Points</h2>');
  for (const metric of Object.keys(result.metrics)) {
    const { header, rows, right } = pointTableRows(result, metric);
    out.push(`<details open><summary>${escapeHtml(metric)} (${escapeHtml(result.metrics[metric].unit || 'no unit')})</summary>`);
    out.push(htmlTable(header, rows, right));
    out.push('</details>');
  }
  out.push('<h2>Unmatched</h2><ul>');
  for (const line of unmatchedLines(result)) out.push(`<li>${escapeHtml(line)}</li>`);
  out.push('</ul>');
  out.push('<h2>How to read this</h2><ul>');
  for (const line of HOW_TO_READ) out.push(`<li>${markdownInline(line)}</li>`);
  out.push('</ul>');
  out.push('</body></html>');
  return `${out.join('\n')}\n`;
}

/** `scores.json` text: the result with numbers as they are (JSON has no Infinity: null). */
export function formatScoresJson(result: ScoreResult): string {
  return `${JSON.stringify(result, (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? null : value), 2)}\n`;
}

export interface WrittenScoreReport {
  dir: string;
  files: string[];
}

/** The four files of a score report in `dir`, with their content (for `writeOutputFiles`). */
export async function scoreReportFiles(
  dir: string,
  result: ScoreResult,
  limits: readonly LimitCheck[] = [],
): Promise<Array<[string, string]>> {
  const charts = await renderScoreCharts(result);
  return [
    [join(dir, SCORE_FILES.json), formatScoresJson(result)],
    [join(dir, SCORE_FILES.csv), formatScoresCsv(result)],
    [join(dir, SCORE_FILES.markdown), formatMarkdownReport(result, limits)],
    [join(dir, SCORE_FILES.html), formatHtmlReport(result, charts, limits)],
  ];
}

/** Writes the four files into `dir` (created), together or not at all. */
export async function writeScoreReport(dir: string, result: ScoreResult, limits: readonly LimitCheck[] = []): Promise<WrittenScoreReport> {
  const files = await scoreReportFiles(dir, result, limits);
  writeOutputFiles(files);
  return { dir, files: files.map(([file]) => file) };
}

/** The words for simulated points that ran on the placeholder pass times: their MAPEs score placeholders, not a prediction. */
function placeholderNote(result: ScoreResult): string | null {
  const on = result.inputs.sim_placeholder;
  if (on === undefined) return null;
  return `${on.points} simulated point${on.points === 1 ? '' : 's'} ran on ${on.reason}; the MAPEs score those placeholders, not a prediction`;
}
