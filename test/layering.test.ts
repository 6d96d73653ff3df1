/**
 * The layering of src/ (src/README.md) is enforced by the linter: an import from a layer above
 * fails `npm run lint`. These lint lines of code as if they stood in real source files, with the
 * layering rule exactly as eslint.config.js configures it (without the type-aware rules, which
 * need the whole program and are not what is checked here).
 */
import { ESLint, type Linter } from 'eslint';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module without types
import { LAYERS, layeringConfig } from '../eslint.config.js';

const ROOT = join(import.meta.dirname, '..');

const eslint = new ESLint({
  cwd: ROOT,
  overrideConfigFile: true,
  overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...(layeringConfig() as Linter.Config[])],
});

/** Rule ids and messages of `code` linted as the file `path`. */
async function lint(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, path) });
  return result.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('the layering of src/', () => {
  it.each([
    ['src/core/fnv.ts', '../config/load.js', 'core may import only core'],
    ['src/core/timing.ts', '../replay.js', 'core may import only core'],
    ['src/io/read-text.ts', '../sweep/pool.js', 'config, catalog, io may import only core, config, catalog, io'],
    ['src/config/resolve.ts', '../replay-run.js', 'config, catalog, io may import only'],
    ['src/replay.ts', './sweep/plan.js', 'replay.ts, replay-run.ts may import only'],
    ['src/sweep/plan.ts', '../score/points.js', 'sweep may import only'],
    ['src/score/pair.ts', '../calibrate/arguments.js', 'score may import only'],
    ['src/calibrate/holdout.ts', '../plan/slo.js', 'calibrate may import only'],
    ['src/plan/slo.ts', '../workflow/quickstart.js', 'plan may import only'],
    ['src/plan/plan-output.ts', '../cli/format-table.js', 'plan may import only'],
    ['src/workflow/quickstart.ts', '../cli/cli.js', 'workflow may import only'],
    ['src/cli/main.ts', '../index.js', null],
  ])('%s importing %s: %s', async (file, specifier, expected) => {
    const messages = await lint(file, `import * as m from '${specifier}';\nexport const used = m;\n`);
    if (expected === null) expect(messages).toEqual([]);
    else
      expect(messages).toEqual([
        expect.stringMatching(new RegExp(`^import-x/no-restricted-paths: .*${expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`)),
      ]);
  });

  it('allows every layer below and the own layer', async () => {
    expect(
      await lint(
        'src/calibrate/holdout.ts',
        "import * as a from '../score/points.js';\nimport * as b from '../sweep/pool.js';\nimport * as c from '../replay.js';\nimport * as d from '../io/paths.js';\nimport * as e from '../core/stats.js';\nimport * as f from './nnls.js';\nexport const used = [a, b, c, d, e, f];\n",
      ),
    ).toEqual([]);
    expect(
      await lint(
        'src/io/read-text.ts',
        "import * as a from '../config/errors.js';\nimport * as b from '../catalog/schema.js';\nexport const used = [a, b];\n",
      ),
    ).toEqual([]);
  });

  it('fails an import it cannot resolve, which the layering rule would otherwise pass unchecked', async () => {
    expect(await lint('src/core/fnv.ts', "import * as m from '../config/no-such-module.js';\nexport const used = m;\n")).toEqual([
      expect.stringMatching(/^import-x\/no-unresolved: /),
    ]);
  });

  it('places every folder and file of src/ in a layer (a new one is importable by none until placed)', () => {
    const entries = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
      .filter((e) => e.isDirectory() || e.name.endsWith('.ts'))
      .map((e) => e.name)
      .sort();
    expect(entries).toEqual((LAYERS as string[][]).flat().sort());
  });

  it('keeps Node modules out of the core, not out of the rest', async () => {
    const code = "import { readFileSync } from 'node:fs';\nexport const used = readFileSync;\n";
    expect(await lint('src/core/fnv.ts', code)).toEqual([expect.stringMatching(/^import-x\/no-nodejs-modules: /)]);
    expect(await lint('src/io/read-text.ts', code)).toEqual([]);
  });

  it('is part of the lint configuration of every source file', async () => {
    const real = new ESLint({ cwd: ROOT });
    for (const file of ['src/core/fnv.ts', 'src/score/pair.ts', 'src/cli/main.ts']) {
      const config = (await real.calculateConfigForFile(join(ROOT, file))) as Linter.Config;
      expect(config.rules?.['import-x/no-restricted-paths'], file).toEqual([
        2,
        expect.objectContaining({ zones: layeringConfig()[0].rules['import-x/no-restricted-paths'][1].zones }),
      ]);
      expect(config.rules?.['import-x/no-unresolved'], file).toEqual([2]);
    }
    const core = (await real.calculateConfigForFile(join(ROOT, 'src/core/fnv.ts'))) as Linter.Config;
    expect(core.rules?.['import-x/no-nodejs-modules']).toEqual([2]);
  });
});
