/**
 * `servesim plan PLAN.yaml [--out DIR] [--workers N] [--json]` (docs/planning.md): the options.
 * What it does is in `actions/plan.ts`, loaded when the command runs.
 */
import type { Argv, CommandModule } from 'yargs';
import type { PlanArgs } from '../actions/plan.js';

export interface PlanCommandDeps {
  taskFilename?: string;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

export function makePlanCommand(deps: PlanCommandDeps = {}): CommandModule<object, PlanArgs> {
  return {
    command: 'plan <file>',
    describe:
      'Find the cheapest deployment that meets latency targets: every candidate GPU, parallelism and batch limit, searched for its max rate',
    builder: (y: Argv) =>
      y
        .positional('file', { type: 'string', demandOption: true, describe: 'plan file (YAML; docs/planning.md)' })
        .option('out', { type: 'string', describe: 'output directory [default: out/plans/<name>]' })
        .option('workers', { type: 'number', describe: 'pool threads [default: number of cores]' })
        .option('json', {
          type: 'boolean',
          default: false,
          describe: 'print plan.json on stdout (the summary goes to stderr)',
        }),
    handler: async (argv) => {
      const { runPlanCommand } = await import('../actions/plan.js');
      process.exitCode = await runPlanCommand({ file: argv.file, out: argv.out, workers: argv.workers, json: argv.json }, deps);
    },
  };
}

export const planCommand = makePlanCommand();
