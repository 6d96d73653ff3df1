/**
 * `servesim calibrate catalog [--measured CSV] [--write FILE]`: the options. What it does is in
 * `actions/calibrate-catalog.ts`, loaded when the command runs.
 */
import type { Argv, CommandModule } from 'yargs';
import type { CatalogFitArgs } from '../actions/calibrate-catalog.js';

export const CATALOG_SAMPLE = 'data/silicon/aic-silicon-sample.csv';

export const calibrateCatalogCommand: CommandModule<object, CatalogFitArgs> = {
  command: 'catalog',
  describe: "Fit the catalog's efficiency factors (roofline timing) on measured points of many deployments",
  builder: (y: Argv) =>
    y
      .option('measured', {
        type: 'string',
        describe: `closed-loop points in the silicon sample's columns [default: the bundled ${CATALOG_SAMPLE}]`,
      })
      .option('write', { type: 'string', describe: 'write the table to FILE (data/efficiency.yaml is the one roofline timing reads)' })
      .option('rounds', { type: 'number', default: 3, describe: 'rounds of replays and fits' })
      .option('max-osl', { type: 'number', describe: 'only deployments with at most this many output tokens (faster)' })
      .option('requests-per-slot', { type: 'number', describe: 'simulated requests per concurrency slot [default: 10]' })
      .option('threads', { type: 'number', describe: 'pool threads [default: cores]' })
      .option('json', { type: 'boolean', default: false, describe: 'print the table as JSON (also with --write)' }),
  handler: async (argv) => {
    const { runCatalogFit } = await import('../actions/calibrate-catalog.js');
    process.stdout.write(await runCatalogFit(argv, (line) => process.stderr.write(`${line}\n`)));
  },
};
