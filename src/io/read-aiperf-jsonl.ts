/**
 * Reader of AIPerf's per-request `profile_export.jsonl` (docs/aiperf-files.md), every layout: the
 * newest metadata (`credit_issued_ns`, `request_start_ns`, `request_end_ns`), the early
 * `timestamp_ns` plus per-record `min_request_timestamp`/`max_response_timestamp`.
 *
 * Timestamps are nanoseconds since the epoch (~1.8e18 > 2^53), so JSON.parse would round
 * them. Node 20's JSON.parse has no access to a number's source text, so the digits of the
 * timestamp keys are captured from the line with a regex and read as BigInt. The regex
 * cannot match inside a JSON string: a quote there is escaped, so `"request_start_ns"`
 * followed by `:` only occurs as a real key.
 */
import { readTextFile } from './read-text.js';
import { AiperfInputError, describeValue, parseJsonText } from './read-aiperf-errors.js';
import { canonicalTag } from './read-aiperf-tags.js';
import type { AiperfRequestError, AiperfRequestRecord } from './read-aiperf-types.js';

const TIMESTAMP_KEYS = [
  'credit_issued_ns',
  'request_start_ns',
  'request_ack_ns',
  'request_end_ns',
  'timestamp_ns',
  'min_request_timestamp',
  'max_response_timestamp',
] as const;
type TimestampKey = (typeof TIMESTAMP_KEYS)[number];

const TIMESTAMP_PATTERN = new RegExp(`"(${TIMESTAMP_KEYS.join('|')})"\\s*:\\s*(?:\\{[^{}]*?"value"\\s*:\\s*)?(-?\\d+)(?![\\d.eE])`, 'g');

/** Aggregate contributions that early layouts put in every record; not per-request metrics. */
const AGGREGATE_CONTRIBUTIONS = new Set(['request_count', 'error_request_count', 'min_request_timestamp', 'max_response_timestamp']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Exact integer digits of the timestamp keys of one JSONL line (first occurrence of each). */
export function captureTimestamps(lineText: string): Map<TimestampKey, bigint> {
  const found = new Map<TimestampKey, bigint>();
  TIMESTAMP_PATTERN.lastIndex = 0;
  for (let match = TIMESTAMP_PATTERN.exec(lineText); match !== null; match = TIMESTAMP_PATTERN.exec(lineText)) {
    const key = match[1] as TimestampKey;
    if (!found.has(key)) found.set(key, BigInt(match[2]));
  }
  return found;
}

export function readAiperfJsonl(file: string): AiperfRequestRecord[] {
  return parseAiperfJsonl(readTextFile(file), file);
}

export function parseAiperfJsonl(text: string, file: string): AiperfRequestRecord[] {
  const records: AiperfRequestRecord[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const lineText = lines[index].replace(/\r$/, '');
    if (lineText.trim() === '') continue;
    records.push(parseRecordLine(lineText, index + 1, file));
  }
  return records;
}

function timestampOf(
  key: TimestampKey,
  container: Record<string, unknown> | undefined,
  exact: Map<TimestampKey, bigint>,
  line: number,
  keyPath: string,
  file: string,
): bigint | undefined {
  if (!container || !(key in container)) return undefined;
  let value = container[key];
  if (isObject(value)) value = value.value;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new AiperfInputError(file, { line, key: keyPath }, `expected a timestamp in nanoseconds, got ${describeValue(value)}`);
  }
  // A value written as a float (1.7e18) cannot be exact anyway; round it.
  return exact.get(key) ?? BigInt(Math.round(value));
}

function parseRecordLine(lineText: string, line: number, file: string): AiperfRequestRecord {
  const parsed = parseJsonText(lineText, file, line);
  if (!isObject(parsed)) throw new AiperfInputError(file, { line }, `expected a JSON object per line, got ${describeValue(parsed)}`);
  const metadata = parsed.metadata;
  if (!isObject(metadata))
    throw new AiperfInputError(file, { line, key: 'metadata' }, `expected an object, got ${describeValue(metadata)}`);
  const metricsBlock = parsed.metrics ?? {};
  if (!isObject(metricsBlock))
    throw new AiperfInputError(file, { line, key: 'metrics' }, `expected an object, got ${describeValue(metricsBlock)}`);
  const exact = captureTimestamps(lineText);
  const metrics: Record<string, number | number[]> = {};
  for (const [rawTag, entry] of Object.entries(metricsBlock)) {
    if (AGGREGATE_CONTRIBUTIONS.has(rawTag)) continue;
    const value = isObject(entry) ? entry.value : entry;
    if (value === undefined || value === null) continue;
    if (typeof value === 'number') {
      metrics[canonicalTag(rawTag)] = value;
    } else if (Array.isArray(value) && value.every((item) => typeof item === 'number')) {
      metrics[canonicalTag(rawTag)] = value;
    } else {
      throw new AiperfInputError(
        file,
        { line, key: `metrics.${rawTag}.value` },
        `expected a number or a list of numbers, got ${describeValue(value)}`,
      );
    }
  }
  const requestStartNs =
    timestampOf('request_start_ns', metadata, exact, line, 'metadata.request_start_ns', file) ??
    timestampOf('timestamp_ns', metadata, exact, line, 'metadata.timestamp_ns', file) ??
    timestampOf('min_request_timestamp', metricsBlock, exact, line, 'metrics.min_request_timestamp', file);
  const requestEndNs =
    timestampOf('request_end_ns', metadata, exact, line, 'metadata.request_end_ns', file) ??
    timestampOf('max_response_timestamp', metricsBlock, exact, line, 'metrics.max_response_timestamp', file);
  return {
    line,
    conversationId: optionalText(metadata.conversation_id),
    turnIndex: typeof metadata.turn_index === 'number' ? metadata.turn_index : undefined,
    sessionNum: typeof metadata.session_num === 'number' ? metadata.session_num : undefined,
    workerId: optionalText(metadata.worker_id),
    phase: optionalText(metadata.benchmark_phase ?? metadata.credit_phase),
    wasCancelled: typeof metadata.was_cancelled === 'boolean' ? metadata.was_cancelled : undefined,
    creditIssuedNs: timestampOf('credit_issued_ns', metadata, exact, line, 'metadata.credit_issued_ns', file),
    requestStartNs,
    requestAckNs: timestampOf('request_ack_ns', metadata, exact, line, 'metadata.request_ack_ns', file),
    requestEndNs,
    error: parseRecordError(parsed.error, line, file),
    metrics,
  };
}

function optionalText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

function parseRecordError(value: unknown, line: number, file: string): AiperfRequestError | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value))
    throw new AiperfInputError(file, { line, key: 'error' }, `expected an error object or null, got ${describeValue(value)}`);
  return {
    code: typeof value.code === 'number' ? value.code : undefined,
    type: typeof value.type === 'string' ? value.type : undefined,
    message: typeof value.message === 'string' ? value.message : undefined,
  };
}

/** True for a record AIPerf counts in its metrics: no error, not cancelled, not warmup. */
export function isValidRecord(record: AiperfRequestRecord): boolean {
  return record.error === null && record.wasCancelled !== true && record.phase !== 'warmup';
}
