/**
 * The error every reader of measured input throws: it names the file and
 * the line (JSONL, CSV) or the dotted key (JSON) where the input stops making sense.
 */

import { InputError, formatValue } from '../config/errors.js';

export { InputError } from '../config/errors.js';

export interface InputLocation {
  /** 1-based line number. */
  line?: number;
  /** 1-based column, with `line`. */
  column?: number;
  /** Dotted key path inside a JSON document, e.g. `records.ttft.avg`. */
  key?: string;
}

/**
 * The project's `InputError` (`file:line: reason`, exit status 2) with the JSON key and the
 * column, when known, at the head of the reason: `run.json: records.ttft.avg: expected a
 * number`, `run.jsonl:3: metadata.request_start_ns: ...`, `run.json:12: column 5: ...`.
 */
export class AiperfInputError extends InputError {
  readonly key: string | undefined;
  readonly column: number | undefined;

  constructor(file: string, where: InputLocation | undefined, reason: string) {
    const key = where?.key !== undefined ? `${where.key}: ` : '';
    const column = where?.column !== undefined ? `column ${where.column}: ` : '';
    super(file, where?.line ?? 0, `${key}${column}${reason}`);
    this.name = 'InputError';
    this.key = where?.key;
    this.column = where?.column;
  }
}

/** Line and column (1-based) of a character offset in a text. */
export function locateOffset(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/**
 * JSON.parse with an error that names the file, line and column. Node 20's messages carry
 * `position N` for most syntax errors and nothing for a truncated document, which is then
 * placed at its end. A key that appears twice in one object (JSON.parse keeps the last one without
 * a word) is an error naming the key's dotted path and line.
 */
export function parseJsonText(text: string, file: string, baseLine = 1): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const position = /position (\d+)/.exec(message);
    const offset = position ? Number(position[1]) : /end of JSON input/i.test(message) ? text.length : 0;
    const where = locateOffset(text, offset);
    const line = where.line + baseLine - 1;
    const endsEarly = /end of JSON input/i.test(message) || offset >= text.trimEnd().length;
    const reason = endsEarly ? `the JSON ends early (truncated file?): ${message}` : `not valid JSON (${message})`;
    throw new AiperfInputError(file, { line, column: where.column }, reason);
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== null) {
    throw new AiperfInputError(
      file,
      { line: duplicate.line + baseLine - 1, key: duplicate.path },
      `the key ${JSON.stringify(duplicate.key)} appears twice in one object (column ${duplicate.column}); remove one of them`,
    );
  }
  return value;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The first key that repeats a key of its own object in a JSON text that JSON.parse accepted:
 * its dotted path (array items by index), the key, and its 1-based line and column; null when
 * every object's keys are distinct. One pass over the text; strings are skipped with indexOf.
 * (A general JSON parser that reports keys, jsonc-parser 3.3.1, took 3.5 times as long as
 * JSON.parse on a 38 MB AIPerf JSONL; this pass costs a fraction of it.)
 */
export function findDuplicateKey(text: string): { path: string; key: string; line: number; column: number } | null {
  /** Open containers: an object's keys so far and its current key, or an array's current index. */
  const frames: Array<{ keys: Set<string> | null; child: string }> = [];
  let expectKey = false;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // The closing quote is the next one not escaped by an odd run of backslashes.
      let end = text.indexOf('"', i + 1);
      for (;;) {
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++;
        if (slashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      const top = frames[frames.length - 1];
      if (expectKey && top !== undefined && top.keys !== null) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (top.keys.has(key)) {
          const path = [...frames.slice(0, -1).map((frame) => frame.child), key].join('.');
          return { path, key, line, column: i - lineStart + 1 };
        }
        top.keys.add(key);
        top.child = key;
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b /* { */) {
      frames.push({ keys: new Set(), child: '' });
      expectKey = true;
    } else if (c === 0x5b /* [ */) {
      frames.push({ keys: null, child: '0' });
      expectKey = false;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      frames.pop();
    } else if (c === 0x2c /* , */) {
      const top = frames[frames.length - 1];
      if (top?.keys === null) top.child = String(Number(top.child) + 1);
      else expectKey = true;
    } else if (c === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return null;
}

/** A value as error messages show it (strings quoted, containers named). */
export function describeValue(value: unknown): string {
  return formatValue(value);
}
