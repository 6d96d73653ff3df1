/**
 * Reading an efficiency table (data/efficiency.yaml's format): each mistake named by its dotted
 * field, in the schema's own words where it has them and in zod's English otherwise, whichever
 * zod locale the process has.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { UNFITTED_EFFICIENCY, loadEfficiencyTable } from '../src/catalog/efficiency.js';
import { ConfigError } from '../src/config/errors.js';

const FACTORS = Object.entries(UNFITTED_EFFICIENCY)
  .map(([name, value]) => `  ${name}: ${value}`)
  .join('\n');

/** A table whose default is fine but for compute 0 and an unknown key, and whose one entry names its GPU with a number. */
const BAD_TABLE = `default:\n${FACTORS.replace('compute: 0.55', 'compute: 0')}\n  bogus: 3\nentries:\n  - hardware: 5\n${FACTORS.replaceAll('  ', '    ')}\n`;

function reasonsOf(text: string): string[] {
  const file = join(mkdtempSync(join(tmpdir(), 'servesim-efficiency-')), 'efficiency.yaml');
  writeFileSync(file, text);
  try {
    loadEfficiencyTable(file);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).exitCode).toBe(2);
    return (err as ConfigError).issues.map((issue) => `${issue.path}: ${issue.reason}`);
  }
  throw new Error('the table was accepted');
}

const locale = z.config().localeError;
afterEach(() => {
  z.config({ localeError: locale });
});

describe('loadEfficiencyTable', () => {
  const expected = [
    'default.compute: must be a number in (0, 1], got 0',
    'default: Unrecognized key: "bogus"',
    'entries.0.hardware: Invalid input: expected string, received number',
  ];

  it('names each mistake by its field', () => {
    expect(reasonsOf(BAD_TABLE)).toEqual(expected);
  });

  it('says the same without a zod locale set', () => {
    z.config({ localeError: undefined });
    expect(reasonsOf(BAD_TABLE)).toEqual(expected);
  });

  it('reads a good table', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'servesim-efficiency-')), 'efficiency.yaml');
    writeFileSync(file, `default:\n${FACTORS}\n`);
    expect(loadEfficiencyTable(file)).toEqual({ default: UNFITTED_EFFICIENCY, entries: [] });
  });
});
