/**
 * Reader of AIPerf's summary JSON (`profile_export_aiperf.json`, GenAI-Perf's
 * `profile_export_genai_perf.json`) in every layout (docs/aiperf-files.md): metric blocks under
 * `records` (early AIPerf) or flat at the top level, stats mapped by key. Errors name the
 * file and the dotted key, or the line of a syntax error.
 */
import { basename } from 'node:path';
import { readTextFile } from './read-text.js';
import { AiperfInputError, describeValue, parseJsonText } from './read-aiperf-errors.js';
import { canonicalTag, getMetricInfo, metricValueProblem } from './read-aiperf-tags.js';
import {
  AIPERF_STATS,
  CSV_ROW_STATS,
  type AiperfLayout,
  type AiperfMetric,
  type AiperfStat,
  type AiperfSummary,
} from './read-aiperf-types.js';

/** Top-level keys of the flat layouts that are not metric blocks. */
const NON_METRIC_KEYS = new Set([
  'schema_version',
  'aiperf_version',
  'benchmark_id',
  'input_config',
  'run_info',
  'telemetry_data',
  'was_cancelled',
  'error_summary',
  'start_time',
  'end_time',
  'warmup_metrics',
  'runtime_submission_invalid_reasons',
  'server_metrics',
  'records',
]);

/** Stats an error-adjusted row of this layout has (those of a CSV row); the missing ones were infinite. */
const ADJUSTED_STATS = CSV_ROW_STATS;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads and parses one summary JSON file. */
export function readAiperfJson(file: string): AiperfSummary {
  return parseAiperfJson(readTextFile(file), file);
}

export function parseAiperfJson(text: string, file: string): AiperfSummary {
  const document = parseJsonText(text, file);
  if (!isObject(document)) {
    throw new AiperfInputError(file, { line: 1 }, `expected a JSON object of AIPerf metrics, got ${describeValue(document)}`);
  }
  const hasRecords = 'records' in document;
  let blocks: Record<string, unknown> = document;
  let keyPrefix = '';
  if (hasRecords) {
    if (!isObject(document.records)) {
      throw new AiperfInputError(file, { key: 'records' }, `expected an object of metric blocks, got ${describeValue(document.records)}`);
    }
    blocks = document.records;
    keyPrefix = 'records.';
  }
  const schemaVersion = optionalString(document, 'schema_version', file);
  const metrics: Record<string, AiperfMetric> = {};
  let hasCountSum = false;
  for (const [rawKey, block] of Object.entries(blocks)) {
    if (!hasRecords && NON_METRIC_KEYS.has(rawKey)) continue;
    if (!isObject(block)) {
      // A catalogued metric in the place of a block is a damaged file, not an unknown addition.
      if (hasRecords || getMetricInfo(canonicalTag(rawKey)) !== undefined) {
        throw new AiperfInputError(
          file,
          { key: keyPrefix + rawKey },
          `expected a metric block {unit, avg, ...}, got ${describeValue(block)}`,
        );
      }
      continue; // an unknown scalar at the top level of a newer layout
    }
    if (!('unit' in block) && !('avg' in block)) continue; // an unknown section, not a metric
    const metric = parseMetricBlock(rawKey, block, `${keyPrefix}${rawKey}`, file);
    if (metric.kind === 'distribution' && metric.stats.count !== undefined && metric.stats.sum !== undefined) hasCountSum = true;
    metrics[metric.tag] = metric;
  }
  if (Object.keys(metrics).length === 0) {
    throw new AiperfInputError(
      file,
      { line: 1 },
      'holds no metric block ({unit, avg, ...}, such as time_to_first_token): not an AIPerf summary export',
    );
  }
  const layout: AiperfLayout = basename(file).includes('genai_perf')
    ? 'genai-perf'
    : hasRecords
      ? 'records'
      : schemaVersion === undefined
        ? 'flat'
        : hasCountSum
          ? 'count-sum'
          : 'flat-versioned';
  for (const metric of Object.values(metrics)) {
    if (!metric.tag.startsWith('adj_')) continue;
    for (const stat of ADJUSTED_STATS) {
      if (metric.stats[stat] === undefined) metric.stats[stat] = Infinity;
    }
  }
  const runInfo = isObject(document.run_info) ? document.run_info : undefined;
  const inputConfig = document.input_config;
  const cliCommand =
    (runInfo && typeof runInfo.cli_command === 'string' ? runInfo.cli_command : undefined) ??
    (isObject(inputConfig) && typeof inputConfig.cli_command === 'string' ? inputConfig.cli_command : undefined);
  return {
    file,
    format: 'json',
    layout,
    schemaVersion,
    aiperfVersion: optionalString(document, 'aiperf_version', file),
    metrics,
    inputConfig,
    cliCommand,
    errorSummary: parseErrorSummary(document.error_summary, file),
    telemetry: [],
    wasCancelled: typeof document.was_cancelled === 'boolean' ? document.was_cancelled : undefined,
  };
}

function optionalString(document: Record<string, unknown>, key: string, file: string): string | undefined {
  const value = document[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  throw new AiperfInputError(file, { key }, `expected a string, got ${describeValue(value)}`);
}

function parseMetricBlock(rawTag: string, block: Record<string, unknown>, keyPath: string, file: string): AiperfMetric {
  const tag = canonicalTag(typeof block.tag === 'string' ? block.tag : rawTag);
  const info = getMetricInfo(tag);
  let unit = info?.unit ?? '';
  if (block.unit !== undefined && block.unit !== null) {
    if (typeof block.unit !== 'string')
      throw new AiperfInputError(file, { key: `${keyPath}.unit` }, `expected a unit string, got ${describeValue(block.unit)}`);
    unit = block.unit;
  }
  const stats: Partial<Record<AiperfStat, number>> = {};
  for (const stat of AIPERF_STATS) {
    const value = block[stat];
    if (value === undefined || value === null) continue;
    const parsed =
      typeof value === 'number' && !Number.isNaN(value) ? value : typeof value === 'string' ? parseNumberText(value) : undefined;
    if (parsed === undefined) {
      throw new AiperfInputError(file, { key: `${keyPath}.${stat}` }, `expected a number, got ${describeValue(value)}`);
    }
    const problem = metricValueProblem(tag, parsed);
    if (problem !== null) throw new AiperfInputError(file, { key: `${keyPath}.${stat}` }, problem);
    stats[stat] = parsed;
  }
  const hasSpread = Object.keys(stats).some((stat) => stat !== 'avg' && stat !== 'count');
  const kind: AiperfMetric['kind'] = info ? (info.kind === 'single' ? 'single' : 'distribution') : hasSpread ? 'distribution' : 'single';
  if (kind === 'single') {
    if (stats.avg === undefined)
      throw new AiperfInputError(file, { key: `${keyPath}.avg` }, 'a single-value metric needs its value in "avg"');
    return { tag, unit, kind, stats: { avg: stats.avg } };
  }
  return { tag, unit, kind, stats };
}

/** A number as GenAI-Perf or AIPerf prints it: `1,234.56`, `100.00`, `inf`; undefined if not one. */
export function parseNumberText(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  if (/^[+-]?inf(inity)?$/i.test(trimmed)) return trimmed.startsWith('-') ? -Infinity : Infinity;
  const plain = /^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$/.test(trimmed) ? trimmed.replace(/,/g, '') : trimmed;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(plain)) return undefined;
  return Number(plain);
}

function parseErrorSummary(value: unknown, file: string): AiperfSummary['errorSummary'] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new AiperfInputError(file, { key: 'error_summary' }, `expected a list, got ${describeValue(value)}`);
  return value.map((entry, index) => {
    if (!isObject(entry))
      throw new AiperfInputError(file, { key: `error_summary.${index}` }, `expected an object, got ${describeValue(entry)}`);
    const details = isObject(entry.error_details) ? entry.error_details : {};
    const count = entry.count;
    if (typeof count !== 'number')
      throw new AiperfInputError(file, { key: `error_summary.${index}.count` }, `expected a number, got ${describeValue(count)}`);
    return {
      type: typeof details.type === 'string' ? details.type : undefined,
      code: typeof details.code === 'number' ? details.code : undefined,
      message: typeof details.message === 'string' ? details.message : undefined,
      count,
    };
  });
}
