/**
 * `servesim catalog [models|hardware] [--json]`: the options. What it does is in
 * `actions/catalog.ts`, loaded when the command runs.
 */
import type { Argv, CommandModule } from 'yargs';
import type { CatalogArgs } from '../actions/catalog.js';

export const catalogCommand: CommandModule<object, CatalogArgs> = {
  command: 'catalog [kind]',
  describe: 'List the models and GPUs of the catalog (for roofline timing and KV capacity auto)',
  builder: (yargs: Argv) =>
    yargs
      .positional('kind', { choices: ['models', 'hardware'] as const, describe: 'list only models or only hardware' })
      .option('json', { type: 'boolean', default: false, describe: 'print JSON instead of tables' }),
  handler: async (args) => {
    const { runCatalogCommand } = await import('../actions/catalog.js');
    runCatalogCommand(args);
  },
};
