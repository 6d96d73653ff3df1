/**
 * `servesim sweep SWEEP.yaml [--out DIR] [--workers N] [--point-timeout S] [--shard I/N]` and
 * `servesim sweep merge DIR... --out DIR` (docs/sweeps.md): the options. What they do is in
 * `actions/sweep.ts`, loaded when a command runs.
 */
import type { Argv, CommandModule } from 'yargs';
import type { SweepMergeArgs, SweepRunArgs } from '../actions/sweep.js';

export interface SweepCommandDeps {
  /** Pool-task module; the shipped one (real replay) by default. */
  taskFilename?: string;
  stdout?: NodeJS.WritableStream & { isTTY?: boolean };
  stderr?: NodeJS.WritableStream & { isTTY?: boolean };
  env?: NodeJS.ProcessEnv;
}

/** The yargs command; `deps` lets tests swap the pool task and streams. */
export function makeSweepCommand(deps: SweepCommandDeps = {}): CommandModule {
  const mergeCommand: CommandModule<object, SweepMergeArgs> = {
    command: 'merge <dirs..>',
    describe: 'Merge sweep output directories (shards) into one, as if run on one machine',
    builder: (y: Argv) =>
      y
        .positional('dirs', { type: 'string', array: true, demandOption: true, describe: 'sweep output directories' })
        .option('out', {
          type: 'string',
          demandOption: true,
          describe: 'directory for the merged results',
        })
        .option('json', { type: 'boolean', default: false, describe: 'print the plan and the points written, as JSON' }),
    handler: async (argv) => {
      const { runSweepMergeCommand } = await import('../actions/sweep.js');
      process.exitCode = await runSweepMergeCommand({ dirs: argv.dirs, out: argv.out, json: argv.json }, deps);
    },
  };
  const runCommand: CommandModule<object, Omit<SweepRunArgs, 'file'> & { file?: string }> = {
    command: '$0 [file]',
    describe: 'Run every point of a sweep file on a pool of threads',
    builder: (y: Argv) =>
      y
        .positional('file', { type: 'string', describe: 'sweep file (YAML); without one, the shipped examples are listed' })
        .option('out', { type: 'string', describe: 'output directory [default: out/sweeps/<name>]' })
        .option('workers', { type: 'number', describe: 'pool threads [default: number of cores]' })
        .option('point-timeout', { type: 'number', describe: 'seconds a point may run before it is recorded as timed out' })
        .option('shard', {
          type: 'string',
          describe: 'run slice I of N (0-based, I/N), or "auto" to read it from Slurm array / Kubernetes Indexed Job variables',
        })
        .option('shard-count', {
          type: 'number',
          describe: 'number of shards, with the index from JOB_COMPLETION_INDEX (or SLURM_ARRAY_TASK_ID)',
        })
        .option('aiperf', {
          type: 'boolean',
          default: false,
          describe: "also write each point's AIPerf files to OUT/aiperf/<point id>/<AIPerf folder name>/",
        })
        .option('json', { type: 'boolean', default: false, describe: 'print the plan and the points written, as JSON' }),
    handler: async (argv) => {
      const { EXIT_BAD_INPUT, runSweepCommand, sweepTargetsText } = await import('../actions/sweep.js');
      if (argv.file === undefined) {
        (deps.stderr ?? process.stderr).write(sweepTargetsText());
        process.exitCode = EXIT_BAD_INPUT;
        return;
      }
      process.exitCode = await runSweepCommand(
        {
          file: argv.file,
          out: argv.out,
          workers: argv.workers,
          pointTimeout: argv.pointTimeout,
          shard: argv.shard,
          shardCount: argv.shardCount,
          aiperf: argv.aiperf,
          json: argv.json,
        },
        deps,
      );
    },
  };
  return {
    command: 'sweep',
    describe: 'Run a sweep over a grid of run configs, or merge sweep results',
    builder: (y: Argv) => y.command(mergeCommand).command(runCommand),
    handler: () => {},
  };
}

/** What `servesim merge` says, with or without --help: the command is `servesim sweep merge`. */
export const MERGE_HINT =
  'servesim has no merge command: sweep results are merged with servesim sweep merge DIR... --out DIR (servesim sweep merge --help lists its options)';

/**
 * `servesim merge ...`: not a command (merging is `sweep merge`), but one a user reaches for after
 * reading "merge"; it says which command merges instead of printing the top-level help. Hidden
 * from the command list.
 */
export const mergeHintCommand: CommandModule = {
  command: 'merge [args..]',
  describe: false,
  builder: (y: Argv) => y.usage(MERGE_HINT).strict(false),
  handler: () => {
    process.stderr.write(`error: ${MERGE_HINT}\n`);
    process.exitCode = 2;
  },
};
