/**
 * The bundled command line gives yargs scripts/assert-lazy.mjs in place of Node.js's assert module
 * (the real one loads only when a check fails): its checks must pass and fail as the real ones do,
 * with the real module's error. Bundled here as scripts/bundle-cli.mjs bundles yargs.
 */
import { build } from 'esbuild';
import * as assert from 'node:assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without types
import { lazyAssert } from '../scripts/bundle-cli.mjs';

const ROOT = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'servesim-assert-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Check = (actual: unknown, expected: unknown, message?: string) => void;

/** What a check throws, or undefined when it passes. */
function thrown(
  check: Check,
  actual: unknown,
  expected: unknown,
  message?: string,
): { name: string; code: unknown; message: string } | undefined {
  try {
    check(actual, expected, message);
    return undefined;
  } catch (error) {
    const e = error as Error & { code?: unknown };
    return { name: e.name, code: e.code, message: e.message };
  }
}

const CASES: [unknown, unknown, string | undefined][] = [
  [1, 1, undefined],
  [1, 2, undefined],
  ['string', 'string', 'must be a string'],
  ['number', 'string', 'must be a string'],
  [NaN, NaN, undefined],
  [0, -0, undefined],
  [undefined, null, 'x'],
  [{}, {}, undefined],
];

describe('the lazy assert', () => {
  it("passes and fails yargs' checks as Node.js's assert does, with its error", async () => {
    const outfile = join(dir, 'shim.mjs');
    await build({
      entryPoints: [join(ROOT, 'node_modules', 'yargs', 'lib', 'platform-shims', 'esm.mjs')],
      outfile,
      bundle: true,
      format: 'esm',
      platform: 'node',
      absWorkingDir: ROOT,
      banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
      plugins: [lazyAssert],
      logLevel: 'silent',
    });
    expect(readFileSync(outfile, 'utf8')).not.toMatch(/from\s*["'](node:)?assert["']/);
    const shim = ((await import(pathToFileURL(outfile).href)) as { default: { assert: { strictEqual: Check; notStrictEqual: Check } } })
      .default;
    for (const [actual, expected, message] of CASES) {
      const label = `${String(actual)} vs ${String(expected)}`;
      expect(thrown(shim.assert.strictEqual, actual, expected, message), `strictEqual ${label}`).toEqual(
        thrown(assert.strictEqual, actual, expected, message),
      );
      expect(thrown(shim.assert.notStrictEqual, actual, expected, message), `notStrictEqual ${label}`).toEqual(
        thrown(assert.notStrictEqual, actual, expected, message),
      );
    }
  });
});
