/**
 * How the command line reports an error that ends a command, and its exit status: 2 for a bad
 * config or input (the message names the file and the field or line), an error's own `exitCode`
 * when it has one, 1 with the stack for anything else. Shared by `cli.ts` and the replay command's
 * direct path (`actions/replay.ts`, `replay-arguments.ts`).
 */
import { ConfigError, INPUT_ERROR_EXIT_CODE, InputError } from '../config/errors.js';
import { formatCount } from '../config/limits.js';

/** Config problems listed one per line; past this many, the rest are counted (a wrong file can have thousands). */
const MAX_LISTED_ISSUES = 10;

/**
 * Whether `err` is a `ConfigError`: one of this module's class, or of a copy of it that the built
 * replay command holds (scripts/bundle-cli.mjs bundles that command into a file of its own), which
 * `instanceof` does not recognize. An `InputError` needs no such test: its report is the one any
 * error with an exit code gets.
 */
function isConfigError(err: unknown): err is ConfigError {
  return (
    err instanceof ConfigError ||
    (err instanceof Error && err.name === 'ConfigError' && Array.isArray((err as Partial<ConfigError>).issues))
  );
}

/** Writes what `err` says to stderr and returns the exit status it gives. */
export function reportError(err: unknown): number {
  if (isConfigError(err)) {
    for (const issue of err.issues.slice(0, MAX_LISTED_ISSUES)) process.stderr.write(`error: ${issue.message}\n`);
    const more = err.issues.length - MAX_LISTED_ISSUES;
    if (more > 0) process.stderr.write(`error: ... and ${formatCount(more)} more problems in ${err.file}\n`);
    return INPUT_ERROR_EXIT_CODE;
  }
  if (err instanceof InputError) {
    process.stderr.write(`error: ${err.message}\n`);
    return INPUT_ERROR_EXIT_CODE;
  }
  const e = err as { exitCode?: unknown; message?: unknown };
  if (typeof e?.exitCode === 'number' && typeof e.message === 'string') {
    process.stderr.write(`error: ${e.message}\n`);
    return e.exitCode;
  }
  process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return 1;
}
