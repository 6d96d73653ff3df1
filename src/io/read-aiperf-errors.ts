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
 * placed at its end.
 */
export function parseJsonText(text: string, file: string, baseLine = 1): unknown {
  try {
    return JSON.parse(text);
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
}

/** A value as error messages show it (strings quoted, containers named). */
export function describeValue(value: unknown): string {
  return formatValue(value);
}
