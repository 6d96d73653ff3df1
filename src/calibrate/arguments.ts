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
