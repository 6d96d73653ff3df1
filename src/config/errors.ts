/**
 * Errors for bad user input (docs/config.md): `ConfigError` names a config file and the
 * dotted path of a field, `InputError` names a data file and a 1-based line. The CLI exits
 * with `exitCode` (2) on both and prints `message` (or every entry of `issues`).
 */

/** Exit status the CLI uses for bad configs and bad input files. */
export const INPUT_ERROR_EXIT_CODE = 2;

/** One problem in a config, as shown to the user. */
export interface ConfigIssue {
  /** The file as the caller named it (e.g. `run.yaml`), without decoration. */
  file: string;
  /** Dotted path of the field, array indices as numbers (`a.b.0`); '' for the whole file. */
  path: string;
  /** What is wrong, e.g. `must be a positive integer, got 0`. */
  reason: string;
  /** The `--set` assignment that wrote this field, when one did. */
  setBy?: string;
  /** The full line: `run.yaml: engine.x: must be ...` or `run.yaml (with --set engine.x=0): engine.x: ...`. */
  message: string;
}

/** Builds the user-facing line for an issue. */
export function formatConfigIssue(file: string, path: string, reason: string, setBy?: string): string {
  const label = setBy === undefined ? file : `${file} (with --set ${setBy})`;
  return path === '' ? `${label}: ${reason}` : `${label}: ${path}: ${reason}`;
}

/** Makes a `ConfigIssue` with its message filled in. */
export function makeConfigIssue(file: string, path: string, reason: string, setBy?: string): ConfigIssue {
  const issue: ConfigIssue = { file, path, reason, message: formatConfigIssue(file, path, reason, setBy) };
  if (setBy !== undefined) issue.setBy = setBy;
  return issue;
}

/**
 * A config that cannot be used. `message`, `file`, `path` and `reason` describe the first
 * issue (issues are sorted by path); `issues` holds all of them.
 */
export class ConfigError extends Error {
  readonly exitCode = INPUT_ERROR_EXIT_CODE;
  readonly file: string;
  readonly path: string;
  readonly reason: string;
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]);
  constructor(file: string, path: string, reason: string, setBy?: string);
  constructor(fileOrIssues: string | readonly ConfigIssue[], path = '', reason = '', setBy?: string) {
    const issues = typeof fileOrIssues === 'string' ? [makeConfigIssue(fileOrIssues, path, reason, setBy)] : fileOrIssues;
    if (issues.length === 0) throw new TypeError('ConfigError needs at least one issue');
    const first = issues[0];
    super(first.message);
    this.name = 'ConfigError';
    this.file = first.file;
    this.path = first.path;
    this.reason = first.reason;
    this.issues = issues;
  }
}

/**
 * A data file (trace, measured run, config text) that cannot be used, naming the file and
 * the 1-based line: `conv.jsonl:17: input_length: must be a positive integer, got -3`.
 * `line` is 0 when the problem is the whole file (it cannot be read, it has no rows).
 */
export class InputError extends Error {
  readonly exitCode = INPUT_ERROR_EXIT_CODE;
  readonly file: string;
  readonly line: number;
  readonly reason: string;

  constructor(file: string, line: number, reason: string) {
    super(line > 0 ? `${file}:${line}: ${reason}` : `${file}: ${reason}`);
    this.name = 'InputError';
    this.file = file;
    this.line = line;
    this.reason = reason;
  }
}

/** Renders a user-supplied value for an error message: strings quoted, containers named. */
export function formatValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === 'number') return Object.is(value, -0) ? '0' : String(value);
  if (typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}
