/**
 * Reader of Mooncake trace JSONL (docs/replay-model.md, "Traffic"): one JSON object per line with
 * `timestamp` (ms), `input_length`, `output_length`, `hash_ids` (one id per block_size
 * prompt tokens), optional `session_id`, `delay` (ms) and `priority` (an integer, lower first,
 * for vLLM's priority scheduling). Rows come back as columns.
 * Every line is checked; a bad line is an `InputError` naming the file and line, unless
 * `skipInvalid` is set, in which case it is counted in `skipped`.
 *
 * Accepted on purpose: unknown keys (ignored), `null` for the optional keys (same as
 * absent), CRLF line ends, timestamps in any order (file order is kept; the replay sorts
 * by timestamp when it needs to), a UTF-8 byte-order mark. Rejected: blank lines anywhere but the
 * final newline, a line that is not UTF-8 text or holds a NUL byte, a line longer than any row
 * can be (`maxTraceLineBytes`, refused before it is parsed), lengths above
 * MAX_TOKENS_PER_REQUEST and times above MAX_TRACE_MS (docs/config.md, "Limits").
 */
import { InputError, formatValue } from '../config/errors.js';
import { MAX_TEXT_FILE_BYTES, MAX_TOKENS_PER_REQUEST, MAX_TRACE_MS, formatCount, formatFileSize } from '../config/limits.js';
import type { TraceRows } from '../core/run.js';
import { forEachLine, lineBytesProblem } from './read-text.js';

/**
 * The trace as the replay core takes it (`TraceRows`: rows kept, valid ones in file order, at
 * most `limit`; `delayMs` 0 where absent), plus what only the reader knows.
 */
export interface MooncakeTrace extends TraceRows {
  /** The file as the caller named it. */
  path: string;
  /** Row r's hash ids are `hashIds[hashIdOffsets[r] .. hashIdOffsets[r + 1])`; length rows + 1. */
  hashIdOffsets: Int32Array;
  hashIds: Int32Array;
  /** Each row's `priority` (0 where absent), or null when no row has one. */
  priority: Int32Array | null;
  /** Lines skipped as invalid (only with `skipInvalid`). */
  skipped: number;
}

export interface ReadMooncakeOptions {
  /** Count bad lines in `skipped` instead of throwing. */
  skipInvalid?: boolean;
  /** Stop after this many valid rows (the rest of the file is not read). */
  limit?: number;
  /** Tokens per hash id; `hash_ids` must have ceil(input_length / blockSize) entries. Default 512. */
  blockSize?: number;
  /** File label of errors; default `path` as given. */
  label?: string;
}

export const MOONCAKE_BLOCK_SIZE = 512;
const INT32_MAX = 2 ** 31 - 1;

/**
 * The longest line a trace row can take at `blockSize`: every hash id of the longest prompt
 * (MAX_TOKENS_PER_REQUEST tokens) written with 10 digits and a few bytes of separator, plus room
 * for the other keys. A longer line cannot hold a valid row and is refused before it is parsed
 * (parsing 26 million ids took 16 s and 1.1 GB to find the count wrong).
 */
export function maxTraceLineBytes(blockSize: number): number {
  return Math.min(MAX_TEXT_FILE_BYTES, 64 * 1024 + 16 * maxHashIds(blockSize));
}

function maxHashIds(blockSize: number): number {
  return Math.ceil(MAX_TOKENS_PER_REQUEST / blockSize);
}

function longLineReason(blockSize: number): string {
  return `the longest row a trace can have at block_size ${blockSize}, with ${formatCount(maxHashIds(blockSize))} hash ids`;
}

/**
 * Reads and checks a Mooncake trace file, line by line (the file is never held whole; reading
 * stops after `limit` rows). A line longer than `maxTraceLineBytes` is refused unparsed.
 */
export function readMooncakeTrace(path: string, opts: ReadMooncakeOptions = {}): MooncakeTrace {
  const label = opts.label ?? path;
  const builder = new TraceBuilder({ ...opts, label });
  forEachLine(path, label, maxTraceLineBytes(builder.blockSize), longLineReason(builder.blockSize), (bytes, line) =>
    builder.addLine(bytes, line),
  );
  const trace = builder.finish();
  trace.path = path;
  return trace;
}

/** Grows typed arrays by doubling; `finish` trims them to the rows kept. */
class Columns {
  capacity = 1024;
  timestampMs = new Float64Array(this.capacity);
  inputLength = new Int32Array(this.capacity);
  outputLength = new Int32Array(this.capacity);
  delayMs = new Float64Array(this.capacity);
  priority = new Int32Array(this.capacity);
  hashIdOffsets = new Int32Array(this.capacity + 1);
  hashIds = new Int32Array(16 * 1024);
  hashIdCount = 0;

  ensureRow(row: number): void {
    if (row < this.capacity) return;
    this.capacity *= 2;
    this.timestampMs = grow(this.timestampMs, this.capacity);
    this.inputLength = grow(this.inputLength, this.capacity);
    this.outputLength = grow(this.outputLength, this.capacity);
    this.delayMs = grow(this.delayMs, this.capacity);
    this.priority = grow(this.priority, this.capacity);
    this.hashIdOffsets = grow(this.hashIdOffsets, this.capacity + 1);
  }

  ensureHashIds(extra: number): void {
    const needed = this.hashIdCount + extra;
    if (needed <= this.hashIds.length) return;
    let size = this.hashIds.length * 2;
    while (size < needed) size *= 2;
    this.hashIds = grow(this.hashIds, size);
  }
}

function grow<T extends Float64Array | Int32Array>(array: T, size: number): T {
  const bigger = new (array.constructor as { new (n: number): T })(size);
  bigger.set(array);
  return bigger;
}

/** Rows as they are read, line by line; `finish` gives the trace. */
class TraceBuilder {
  readonly label: string;
  readonly blockSize: number;
  private readonly limit: number;
  private readonly skipInvalid: boolean;
  private readonly cols = new Columns();
  private readonly sessionIds: string[] = [];
  private readonly row: RowParser;
  private hasSession = false;
  private hasPriority = false;
  private rows = 0;
  private skipped = 0;

  constructor(opts: ReadMooncakeOptions) {
    this.label = opts.label ?? '<trace>';
    this.blockSize = opts.blockSize ?? MOONCAKE_BLOCK_SIZE;
    this.limit = opts.limit ?? Infinity;
    this.skipInvalid = opts.skipInvalid ?? false;
    if (!Number.isInteger(this.blockSize) || this.blockSize < 1)
      throw new RangeError(`blockSize must be a positive integer, got ${this.blockSize}`);
    this.row = new RowParser(this.blockSize);
  }

  /** Adds one line's bytes (without its LF); returns false once `limit` rows are kept. */
  addLine(raw: Buffer, lineNo: number): boolean {
    if (this.rows >= this.limit) return false;
    // A UTF-8 byte-order mark is not part of the first line.
    const bytes = lineNo === 1 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? raw.subarray(3) : raw;
    const bytesProblem = lineBytesProblem(bytes);
    let text = bytesProblem === null ? bytes.toString('utf8') : '';
    if (text.endsWith('\r')) text = text.slice(0, -1);
    const problem = bytesProblem ?? this.row.parse(text);
    if (problem !== null) {
      if (!this.skipInvalid) throw new InputError(this.label, lineNo, problem);
      this.skipped++;
      return true;
    }
    const { cols, row, rows } = this;
    cols.ensureRow(rows);
    cols.timestampMs[rows] = row.timestampMs;
    cols.inputLength[rows] = row.inputLength;
    cols.outputLength[rows] = row.outputLength;
    cols.delayMs[rows] = row.delayMs;
    cols.priority[rows] = row.priority;
    if (row.hasPriority) this.hasPriority = true;
    const ids = row.hashIds;
    cols.ensureHashIds(ids.length);
    for (let k = 0; k < ids.length; k++) cols.hashIds[cols.hashIdCount + k] = ids[k];
    cols.hashIdCount += ids.length;
    cols.hashIdOffsets[rows + 1] = cols.hashIdCount;
    this.sessionIds.push(row.sessionId);
    if (row.sessionId !== '') this.hasSession = true;
    this.rows++;
    return this.rows < this.limit;
  }

  finish(): MooncakeTrace {
    const { cols, rows, skipped } = this;
    if (rows === 0) {
      const why = skipped > 0 ? ` (all ${skipped} lines were invalid and skipped)` : '';
      throw new InputError(this.label, 0, `the trace has no rows${why}`);
    }
    return {
      path: this.label,
      rows,
      timestampMs: cols.timestampMs.slice(0, rows),
      inputLength: cols.inputLength.slice(0, rows),
      outputLength: cols.outputLength.slice(0, rows),
      sessionId: this.hasSession ? this.sessionIds : null,
      delayMs: cols.delayMs.slice(0, rows),
      hashIdOffsets: cols.hashIdOffsets.slice(0, rows + 1),
      hashIds: cols.hashIds.slice(0, cols.hashIdCount),
      priority: this.hasPriority ? cols.priority.slice(0, rows) : null,
      skipped,
    };
  }
}

/**
 * Parses Mooncake JSONL bytes (or text) held in memory, with the rules `readMooncakeTrace`
 * applies to a file. `opts.label` names the source in errors; the returned `path` is that label.
 */
export function parseMooncakeTrace(input: Buffer | string, opts: ReadMooncakeOptions = {}): MooncakeTrace {
  const builder = new TraceBuilder(opts);
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  const maxLine = maxTraceLineBytes(builder.blockSize);
  let pos = 0;
  let lineNo = 0;
  while (pos < bytes.length) {
    const newline = bytes.indexOf(10, pos);
    const end = newline < 0 ? bytes.length : newline;
    lineNo++;
    if (end - pos > maxLine) {
      throw new InputError(
        builder.label,
        lineNo,
        `is longer than ${formatFileSize(maxLine)} (${longLineReason(builder.blockSize)}); it is not parsed`,
      );
    }
    if (!builder.addLine(bytes.subarray(pos, end), lineNo)) break;
    pos = end + 1;
  }
  return builder.finish();
}

/** Checks one line; on success its fields hold the row, on failure `parse` returns the reason. */
class RowParser {
  timestampMs = 0;
  inputLength = 0;
  outputLength = 0;
  delayMs = 0;
  sessionId = '';
  priority = 0;
  hasPriority = false;
  hashIds: number[] = [];

  constructor(private readonly blockSize: number) {}

  parse(text: string): string | null {
    if (text.trim() === '') return 'empty line (only the final newline may end a line with nothing on it)';
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return `not valid JSON (${err instanceof Error ? err.message : String(err)})`;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return `must be a JSON object, got ${formatValue(value)}`;
    }
    const obj = value as Record<string, unknown>;

    const timestamp = obj.timestamp;
    if (typeof timestamp !== 'number' || !Number.isFinite(timestamp) || timestamp < 0) {
      return field('timestamp', timestamp, 'must be a finite non-negative number');
    }
    if (timestamp > MAX_TRACE_MS) return field('timestamp', timestamp, `must be at most ${MAX_TRACE_MS} ms (the limit on trace times)`);
    const input = obj.input_length;
    if (!isIntIn(input, 1)) return field('input_length', input, 'must be a positive integer');
    if (input > MAX_TOKENS_PER_REQUEST) return field('input_length', input, TOKENS_LIMIT);
    const output = obj.output_length;
    if (!isIntIn(output, 0)) return field('output_length', output, 'must be a non-negative integer');
    if (output > MAX_TOKENS_PER_REQUEST) return field('output_length', output, TOKENS_LIMIT);

    const hashIds = obj.hash_ids;
    if (!Array.isArray(hashIds)) return field('hash_ids', hashIds, 'must be a list of non-negative integers');
    const expected = Math.ceil(input / this.blockSize);
    if (hashIds.length !== expected) {
      return `hash_ids: has ${hashIds.length} ids, expected ceil(${input} / ${this.blockSize}) = ${expected}`;
    }
    for (let k = 0; k < hashIds.length; k++) {
      if (!isIntIn(hashIds[k], 0)) return field(`hash_ids.${k}`, hashIds[k], 'must be an integer in [0, 2^31)');
    }

    const session = obj.session_id;
    let sessionId = '';
    if (typeof session === 'string' && session !== '') sessionId = session;
    else if (typeof session === 'number' && Number.isSafeInteger(session)) sessionId = String(session);
    else if (session !== undefined && session !== null) {
      return field('session_id', session, 'must be a non-empty string or an integer');
    }

    const delay = obj.delay;
    let delayMs = 0;
    if (typeof delay === 'number' && Number.isFinite(delay) && delay >= 0 && delay <= MAX_TRACE_MS) delayMs = delay;
    else if (typeof delay === 'number' && delay > MAX_TRACE_MS)
      return field('delay', delay, `must be at most ${MAX_TRACE_MS} ms (the limit on trace times)`);
    else if (delay !== undefined && delay !== null) return field('delay', delay, 'must be a finite non-negative number');

    const priority = obj.priority;
    if (
      priority !== undefined &&
      priority !== null &&
      !(typeof priority === 'number' && Number.isInteger(priority) && Math.abs(priority) <= INT32_MAX)
    ) {
      return field('priority', priority, 'must be an integer (lower runs first)');
    }

    this.timestampMs = timestamp;
    this.inputLength = input;
    this.priority = typeof priority === 'number' ? priority : 0;
    this.hasPriority = typeof priority === 'number';
    this.outputLength = output;
    this.hashIds = hashIds as number[];
    this.sessionId = sessionId;
    this.delayMs = delayMs;
    return null;
  }
}

const TOKENS_LIMIT = `must be at most ${formatCount(MAX_TOKENS_PER_REQUEST)} (the limit on tokens per request)`;

function isIntIn(value: unknown, min: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= INT32_MAX;
}

function field(name: string, value: unknown, rule: string): string {
  return value === undefined ? `${name}: is required (${rule})` : `${name}: ${rule}, got ${formatValue(value)}`;
}
