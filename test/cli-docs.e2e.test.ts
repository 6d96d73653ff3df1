/** docs/cli.md says what the built CLI accepts: every command's --help text appears in it. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without types
import { COMMANDS, helpText } from '../scripts/gen-cli-docs.mjs';

const docs = readFileSync(join(import.meta.dirname, '..', 'docs', 'cli.md'), 'utf8');

describe('docs/cli.md', () => {
  it.each((COMMANDS as string[][]).map((c) => [c.join(' ') || '(top level)', c]))(
    'has the current help of servesim %s (regenerate with node scripts/gen-cli-docs.mjs)',
    (_name, args) => {
      expect(docs).toContain(helpText(args));
    },
  );
});
