/**
 * Command-line arguments of the calibrate commands: `ROLE=COLUMN` renames and `COLUMN=VALUE`
 * selections. A malformed argument is a usage error (exit status 2) naming it.
 */

import { parseSelection, type ColumnSelection } from '../io/selection.js';

export class CalibrateUsageError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'CalibrateUsageError';
  }
}

function splitPair(item: string, flag: string, example: string): [string, string] {
  const equals = item.indexOf('=');
  if (equals <= 0 || equals === item.length - 1) throw new CalibrateUsageError(`${flag} ${item}: expected ${example}`);
  return [item.slice(0, equals).trim(), item.slice(equals + 1).trim()];
}

export function parseRoleMapping(items: readonly string[] | undefined): Record<string, string> {
  const mapping: Record<string, string> = {};
  for (const item of items ?? []) {
    const [role, column] = splitPair(item, '--map', 'ROLE=COLUMN, e.g. duration_ms=step_time');
    mapping[role] = column;
  }
  return mapping;
}

/** `--holdout`: a share of the rows in [0, 1) (none when undefined). */
export function checkHoldout(holdout: number | undefined): void {
  if (holdout === undefined) return;
  if (!(Number.isFinite(holdout) && holdout >= 0 && holdout < 1)) {
    throw new CalibrateUsageError(`--holdout ${holdout}: must be the share of rows held out, in [0, 1) (e.g. 0.2)`);
  }
}

/** A fit that cannot be trusted: refused (exit status 2) unless `--force`, when its reasons become notes. */
export function refuseUntrusted(input: string, reasons: readonly string[], force: boolean | undefined, notes: string[]): void {
  if (reasons.length === 0) return;
  if (force === true) {
    for (const reason of reasons) notes.push(`forced past a check: ${reason}`);
    return;
  }
  throw new CalibrateUsageError(
    `${input}: the fit cannot be trusted: ${reasons[0]}\nfix the input, or pass --force to write the fit anyway`,
  );
}

/** `--select` conditions (`io/selection.ts`): `COLUMN=VALUE`, `COLUMN=V1|V2`, `COLUMN!=V`, `COLUMN<=N` ... */
export function parseSelectionArgs(items: readonly string[] | undefined): ColumnSelection[] {
  return (items ?? []).map((item) => {
    const selection = parseSelection(item);
    if (selection === null) {
      throw new CalibrateUsageError(
        `--select ${item}: expected COLUMN=VALUE, COLUMN=V1|V2, COLUMN!=VALUE or COLUMN<=NUMBER (also <, >, >=), e.g. model=llama2-70b`,
      );
    }
    return selection;
  });
}
