/**
 * A command loads what it needs when it runs (src/cli/commands/ hold the options, src/cli/actions/
 * and the layers below what the commands do, imported by their handlers): `servesim --help` and
 * every command's start-up load yargs and the option definitions only, and a replay loads the
 * config parser and the replay core, not the pool, the charts, the fits or the scoring. What
 * that buys in wall time is `npm run bench`'s start-up row.
 */
import { describe, expect, it } from 'vitest';
import { loadedBy } from './helpers/imports.js';

/** Packages only some commands need: the pool, charts, fits, tables. */
const HEAVY = [
  'piscina',
  'vega',
  'vega-lite',
  'ml-levenberg-marquardt',
  'ml-matrix',
  'ml-regression-multivariate-linear',
  'csv-parse',
  'csv-stringify',
];

describe("the command line's start-up", () => {
  it('reads the command line without yargs, to send a plain replay straight to the replay command', () => {
    expect(loadedBy('cli/main.ts')).toEqual({ modules: ['cli/main.ts', 'cli/replay-arguments.ts'], packages: [] });
  });

  it('loads yargs and the options of the commands, nothing that runs one', () => {
    const { modules, packages } = loadedBy('cli/cli.ts');
    expect(packages).toEqual(['yargs']);
    expect(modules.filter((m) => !m.startsWith('cli/commands/'))).toEqual([
      'cli/cli.ts',
      'cli/report-error.ts',
      'cli/stdout.ts',
      'config/errors.ts',
      'config/limits.ts',
      'io/format-number.ts',
    ]);
  });

  it('a replay loads the config parser and the replay core, not the pool, charts, fits or scores', () => {
    const { modules, packages } = loadedBy('cli/actions/replay.ts');
    expect(modules).toContain('config/load.ts');
    expect(modules).toContain('core/simulation.ts');
    expect(packages.filter((p) => HEAVY.includes(p))).toEqual([]);
    expect(modules.filter((m) => /^(sweep|score|calibrate|plan|workflow)\//.test(m))).toEqual([]);
  });
});
