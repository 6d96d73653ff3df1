/**
 * `servesim replay RUN.yaml [--set k=v]... [--out DIR] [--per-request] [--json] [--aiperf]`: the
 * options. What it does is in `actions/replay.ts`, loaded when the command runs, so that the
 * other commands and `--help` do not pay for the config parser and the replay core.
 */
import type { Argv, CommandModule } from 'yargs';
import type { ReplayArgs } from '../actions/replay.js';

export const replayCommand: CommandModule<object, ReplayArgs> = {
  command: 'replay <config>',
  describe: 'Replay one run config and print what AIPerf would measure',
  builder: (yargs: Argv) =>
    yargs
      .positional('config', {
        type: 'string',
        demandOption: true,
        describe:
          'run config (YAML), or a vLLM request log (its folder with requests.jsonl and meta.json) replayed at its own arrival times',
      })
      .option('set', {
        type: 'string',
        array: true,
        default: [],
        describe: 'override a key: --set engine.workers.aggregated.scheduler.max_sequences=512',
      })
      .option('out', { type: 'string', describe: 'write DIR/summary.json (and requests.jsonl with --per-request)' })
      .option('per-request', { type: 'boolean', default: false, describe: 'also write DIR/requests.jsonl, one line per request' })
      .option('json', { type: 'boolean', default: false, describe: 'print the summary JSON instead of the table' })
      .option('skip-invalid-rows', {
        type: 'boolean',
        default: false,
        describe: 'skip trace rows that cannot be used instead of stopping at the first; the count is printed and kept in the summary',
      })
      .option('price-per-gpu-hour', {
        type: 'number',
        describe:
          "price of one GPU for an hour, for the cost per hour and per million output tokens [default: the catalog's list price of engine.hardware]",
      })
      .option('aiperf', {
        type: 'boolean',
        default: false,
        describe: "also write AIPerf's files (profile_export_aiperf.json/.csv, profile_export.jsonl) in DIR/<AIPerf folder name>",
      }) as unknown as Argv<ReplayArgs>,
  handler: async (args) => {
    const { runReplayCommand } = await import('../actions/replay.js');
    await runReplayCommand(args);
  },
};
