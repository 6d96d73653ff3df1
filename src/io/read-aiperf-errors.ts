/**
 * The error every reader of measured input throws (STYLE §5.2 rule 8): it names the file and
 * the line (JSONL, CSV) or the dotted key (JSON) where the input stops making sense.
 */

export interface InputLocation {
  /** 1-based line number. */
  line?: number;
  /** 1-based column, with `line`. */
  column?: number;
  /** Dotted key path inside a JSON document, e.g. `records.ttft.avg`. */
  key?: string;
}

export class InputError extends Error {
  readonly file: string;
  readonly line: number | undefined;
  readonly key: string | undefined;

  constructor(file: string, where: InputLocation | undefined, message: string) {
    super(`${file}: ${formatLocation(where)}${message}`);
    this.name = 'InputError';
    this.file = file;
    this.line = where?.line;
    this.key = where?.key;
  }
}

function formatLocation(where: InputLocation | undefined): string {
  if (!where) return '';
  if (where.line !== undefined) {
    const column = where.column !== undefined ? ` column ${where.column}` : '';
    const key = where.key !== undefined ? ` (${where.key})` : '';
    return `line ${where.line}${column}${key}: `;
  }
  if (where.key !== undefined) return `${where.key}: `;
  return '';
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
    const reason = /end of JSON input/i.test(message) ? 'the JSON ends early (truncated file?)' : `not valid JSON (${message})`;
    throw new InputError(file, { line, column: where.column }, reason);
  }
}

export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return String(value);
}
