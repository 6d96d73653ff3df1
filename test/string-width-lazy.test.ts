/**
 * The bundled command line measures text with scripts/string-width-lazy.mjs in place of
 * string-width (it skips the real one's start-up for plain ASCII): it must give every string the
 * width the real one gives, ASCII or not. Bundled here as scripts/bundle-cli.mjs bundles it.
 */
import { build } from 'esbuild';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import stringWidth from 'string-width';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without types
import { lazyStringWidth } from '../scripts/bundle-cli.mjs';

const ROOT = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'servesim-string-width-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SAMPLES = [
  '',
  'servesim replay <config>',
  '  --set  override a key: --set engine.workers.aggregated.scheduler.max_sequences=512',
  '\u001b[31mred\u001b[39m text',
  'tab\there',
  'ü and é, µs',
  '中文字符',
  'emoji 🚀 and 👩‍👩‍👧',
  '×',
];

describe('the lazy string-width', () => {
  it('measures every string as string-width does', async () => {
    const entry = join(dir, 'entry.mjs');
    writeFileSync(entry, "import width from 'string-width';\nexport default width;\n");
    await build({
      entryPoints: [entry],
      outfile: join(dir, 'out.mjs'),
      bundle: true,
      format: 'esm',
      platform: 'node',
      absWorkingDir: ROOT,
      nodePaths: [join(ROOT, 'node_modules')],
      plugins: [lazyStringWidth],
      logLevel: 'silent',
    });
    const lazyWidth = ((await import(pathToFileURL(join(dir, 'out.mjs')).href)) as { default: (s: string) => number }).default;
    for (const sample of SAMPLES) expect(lazyWidth(sample), JSON.stringify(sample)).toBe(stringWidth(sample));
  });
});
