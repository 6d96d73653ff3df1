/**
 * Reader of a vLLM per-request log (docs/request-logs.md): a folder with `requests.jsonl` and
 * optionally `meta.json` (as LLMServingSim's bench writes them), or a `requests.jsonl` alone.
 * One JSON object per line with `input_toks`, `output_toks` and vLLM's per-request timestamps
 * `queued_ts`, `scheduled_ts`, `first_token_ts`, `last_token_ts` (seconds on the engine's clock;
 * `arrival_time`, on another clock, and unknown keys are ignored).
 *
 * - **Arrival clock**: a request arrives at its `queued_ts`; the first arrival of the log is
 *   t = 0, the others are (queued_ts - first queued_ts) in ms.
 * - **Rejected** (no `queued_ts`: the engine never queued it, and the log has no time for it):
 *   not replayed and not scored, counted.
 * - **Unfinished** (queued, but no `first_token_ts` or no `last_token_ts`: aborted, or the run
 *   ended first): replayed at its arrival, since it held the engine, but not scored.
 * - **Finished**: replayed and scored: TTFT = first - queued, latency = last - queued, TPOT =
 *   (last - first) / (output_toks - 1) for two or more output tokens.
 *
 * Every line is checked: a bad line is an `InputError` naming the file and the line (or, with
 * `skipInvalid`, counted in `skipped`). The timestamps a line has must not go back in time
 * (queued <= scheduled <= first token <= last token).
 */
import { join } from 'node:path';
import { InputError, formatValue } from '../config/errors.js';
import { MAX_TOKENS_PER_REQUEST, MAX_TRACE_MS, formatCount } from '../config/limits.js';
import type { TraceRows } from '../core/run.js';
import { forEachLine, isFolder, isRegularFile, lineBytesProblem, readTextFile } from './read-text.js';

/** The longest line a log row can take: a handful of numbers and an id. */
export const MAX_LOG_LINE_BYTES = 64 * 1024;
const INT32_MAX = 2 ** 31 - 1;
const TIMESTAMPS = ['queued_ts', 'scheduled_ts', 'first_token_ts', 'last_token_ts'] as const;

/** The log's requests as a trace (the replayed rows, in file order), with what was measured of each. */
export interface VllmLog extends TraceRows {
  /** `requests.jsonl` as the caller can find it (the folder's file when a folder was given). */
  path: string;
  /** meta.json beside it, when there is one. */
  metaPath: string | null;
  /** The request ids of the replayed rows (`request_id`, else `line N`) and their lines. */
  requestIds: string[];
  lines: Int32Array;
  /** Synthetic prompt blocks: each row's own ids, so that no two requests share a prefix (`hashIds`). */
  hashIdOffsets: Int32Array;
  hashIds: Int32Array;
  blockTokens: number;
  /** Per replayed row, ms; NaN where not measured (an unfinished request; TPOT of one output token). */
  ttftMs: Float64Array;
  tpotMs: Float64Array;
  latencyMs: Float64Array;
  /** Per replayed row: 1 when the request finished (scored), 0 when unfinished. */
  finished: Uint8Array;
  unfinished: number;
  /** Requests never queued (not replayed), and the lines of the first few. */
  rejected: number;
  rejectedLines: number[];
  /** queued_ts of the first arrival, s (the log's t = 0). */
  clockZeroS: number;
  /** Lines skipped as invalid (only with `skipInvalid`). */
  skipped: number;
}

export interface ReadVllmLogOptions {
  skipInvalid?: boolean;
  /** File label of errors; default the path as found. */
  label?: string;
  /** Tokens per synthetic prompt block (the trace source's block_size); default 512. */
  blockTokens?: number;
}

/**
 * Where a log's `requests.jsonl` and `meta.json` are, for a folder or a file, and the simulator
 * config (`config.json`) its folder may carry beside them.
 */
export function findVllmLog(path: string): { requests: string; meta: string | null; cluster: string | null } {
  const folder = isFolder(path) ? path : join(path, '..');
  const requests = isFolder(path) ? join(path, 'requests.jsonl') : path;
  if (isFolder(path) && !isRegularFile(requests))
    throw new InputError(path, 0, 'is a folder without requests.jsonl; give a vLLM request log (its folder or its requests.jsonl)');
  const meta = join(folder, 'meta.json');
  const cluster = join(folder, 'config.json');
  return { requests, meta: isRegularFile(meta) ? meta : null, cluster: isRegularFile(cluster) ? cluster : null };
}

/** True when `path` looks like a vLLM request log: a folder with requests.jsonl whose first line has `queued_ts`, or such a file. */
export function isVllmLog(path: string): boolean {
  const file = isFolder(path) ? join(path, 'requests.jsonl') : path;
  if (!isRegularFile(file)) return false;
  let found = false;
  try {
    forEachLine(file, file, MAX_LOG_LINE_BYTES, 'a request log line', (bytes) => {
      const text = bytes.toString('utf8').trim();
      if (text === '') return true;
      // A JSON object starts with its brace: a config's first line (a comment, a key) is not
      // parsed, and throws nothing.
      if (text[0] !== '{') return false;
      try {
        const value = JSON.parse(text) as unknown;
        found = value !== null && typeof value === 'object' && 'queued_ts' in value && 'input_toks' in value;
      } catch {
        found = false;
      }
      return false;
    });
  } catch {
    return false;
  }
  return found;
}

interface Row {
  line: number;
  id: string;
  input: number;
  output: number;
  queued: number | null;
  first: number | null;
  last: number | null;
}

function field(name: string, value: unknown, rule: string): string {
  return value === undefined ? `${name}: is required (${rule})` : `${name}: ${rule}, got ${formatValue(value)}`;
}

function isIntIn(value: unknown, min: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= INT32_MAX;
}

/** One line as a row, or the reason it cannot be one. */
function parseLine(text: string, line: number): Row | string {
  if (text.trim() === '') return 'empty line (only the final newline may end a line with nothing on it)';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return `not valid JSON (${err instanceof Error ? err.message : String(err)})`;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `must be a JSON object, got ${formatValue(value)}`;
  const obj = value as Record<string, unknown>;
  const input = obj.input_toks;
  if (!isIntIn(input, 1)) return field('input_toks', input, 'must be a positive integer');
  if (input > MAX_TOKENS_PER_REQUEST) return field('input_toks', input, `must be at most ${formatCount(MAX_TOKENS_PER_REQUEST)}`);
  const output = obj.output_toks;
  if (!isIntIn(output, 0)) return field('output_toks', output, 'must be a non-negative integer');
  if (output > MAX_TOKENS_PER_REQUEST) return field('output_toks', output, `must be at most ${formatCount(MAX_TOKENS_PER_REQUEST)}`);
  const rawId = obj.request_id;
  let id = `line ${line}`;
  if (typeof rawId === 'string' && rawId !== '') id = rawId;
  else if (typeof rawId === 'number' && Number.isSafeInteger(rawId)) id = String(rawId);
  else if (rawId !== undefined && rawId !== null) return field('request_id', rawId, 'must be a non-empty string or an integer');
  const times: Array<number | null> = [];
  for (const name of TIMESTAMPS) {
    const t = obj[name];
    if (t === undefined || t === null) times.push(null);
    else if (typeof t !== 'number' || !Number.isFinite(t) || t < 0)
      return field(name, t, 'must be a finite non-negative number of seconds, or null');
    else if (t * 1000 > MAX_TRACE_MS) return field(name, t, `must be at most ${MAX_TRACE_MS / 1000} s (the limit on trace times)`);
    else times.push(t);
  }
  // A later timestamp needs the earlier ones, and none goes back in time.
  let previous = -1;
  for (let k = 0; k < TIMESTAMPS.length; k++) {
    const t = times[k];
    if (t === null) {
      const later = TIMESTAMPS.findIndex((_, j) => j > k && times[j] !== null);
      // A request that never got its first token has no last token; one never queued, no time at all.
      if (later >= 0)
        return `${TIMESTAMPS[later]}: is ${times[later]} but ${TIMESTAMPS[k]} is missing: a request reaches each stage after the one before`;
      continue;
    }
    if (previous >= 0 && t < (times[previous] as number))
      return `${TIMESTAMPS[k]}: ${t} is before ${TIMESTAMPS[previous]} ${times[previous]}: the timestamps of a request do not go back in time`;
    previous = k;
  }
  return { line, id, input, output, queued: times[0], first: times[2], last: times[3] };
}

/** Reads and checks a vLLM request log (a folder, or its requests.jsonl). */
export function readVllmLog(path: string, opts: ReadVllmLogOptions = {}): VllmLog {
  const found = findVllmLog(path);
  const label = opts.label ?? found.requests;
  const blockTokens = opts.blockTokens ?? 512;
  const rows: Row[] = [];
  const ids = new Map<string, number>();
  let skipped = 0;
  forEachLine(found.requests, label, MAX_LOG_LINE_BYTES, 'a request log line holds a few numbers', (raw, line) => {
    const bytes = line === 1 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? raw.subarray(3) : raw;
    const bytesProblem = lineBytesProblem(bytes);
    let text = bytesProblem === null ? bytes.toString('utf8') : '';
    if (text.endsWith('\r')) text = text.slice(0, -1);
    let row = bytesProblem ?? parseLine(text, line);
    if (typeof row !== 'string') {
      const before = ids.get(row.id);
      if (before !== undefined) row = `request_id: ${JSON.stringify(row.id)} is also the id of line ${before}; each request has its own`;
      else ids.set(row.id, line);
    }
    if (typeof row === 'string') {
      if (opts.skipInvalid !== true) throw new InputError(label, line, row);
      skipped++;
      return true;
    }
    rows.push(row);
    return true;
  });
  const replayed = rows.filter((r) => r.queued !== null);
  const rejectedRows = rows.filter((r) => r.queued === null);
  if (replayed.length === 0) {
    const why =
      rows.length === 0
        ? skipped > 0
          ? ` (all ${skipped} lines were invalid and skipped)`
          : ''
        : ` (none of its ${rows.length} requests has a queued_ts: none reached the engine)`;
    throw new InputError(label, 0, `the log has no request to replay${why}`);
  }
  const n = replayed.length;
  let zero = Infinity;
  for (const r of replayed) if ((r.queued as number) < zero) zero = r.queued as number;
  const log: VllmLog = {
    path: found.requests,
    metaPath: found.meta,
    rows: n,
    timestampMs: new Float64Array(n),
    inputLength: new Int32Array(n),
    outputLength: new Int32Array(n),
    sessionId: null,
    delayMs: new Float64Array(n),
    requestIds: [],
    lines: new Int32Array(n),
    hashIdOffsets: new Int32Array(n + 1),
    hashIds: new Int32Array(0),
    blockTokens,
    ttftMs: new Float64Array(n),
    tpotMs: new Float64Array(n),
    latencyMs: new Float64Array(n),
    finished: new Uint8Array(n),
    unfinished: 0,
    rejected: rejectedRows.length,
    rejectedLines: rejectedRows.slice(0, 5).map((r) => r.line),
    clockZeroS: zero,
    skipped,
  };
  let blocks = 0;
  replayed.forEach((r, i) => {
    const queued = r.queued as number;
    log.timestampMs[i] = (queued - zero) * 1000;
    log.inputLength[i] = r.input;
    log.outputLength[i] = r.output;
    log.requestIds.push(r.id);
    log.lines[i] = r.line;
    blocks += Math.ceil(r.input / blockTokens);
    log.hashIdOffsets[i + 1] = blocks;
    if (r.first !== null && r.last !== null) {
      log.finished[i] = 1;
      log.ttftMs[i] = (r.first - queued) * 1000;
      log.latencyMs[i] = (r.last - queued) * 1000;
      log.tpotMs[i] = r.output > 1 ? ((r.last - r.first) * 1000) / (r.output - 1) : NaN;
    } else {
      log.unfinished++;
      log.ttftMs[i] = NaN;
      log.latencyMs[i] = NaN;
      log.tpotMs[i] = NaN;
    }
  });
  // Each row's prompt blocks are its own: ids 0, 1, 2, ... in row order.
  log.hashIds = new Int32Array(blocks);
  for (let k = 0; k < blocks; k++) log.hashIds[k] = k;
  return log;
}

/** The text of a log's meta.json, parsed (an `InputError` naming it when it is not a JSON object). */
export function readVllmLogMetaJson(path: string, label = path): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(readTextFile(path, label, 16 * 1024 * 1024, 'meta.json'));
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(label, 0, `not valid JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InputError(label, 0, 'must be a JSON object');
  return value as Record<string, unknown>;
}
