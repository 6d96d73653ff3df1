/**
 * The servesim command line as a function: argv in, exit status out, nothing that ends the
 * process. `main.ts` is the executable around it; tests call `main` in-process. Exit codes:
 * 0 ok, 2 bad config or input (the message names the file and the field or line), 1 anything
 * else (an output that cannot be written, a failed point, a bug). Commands set
 * process.exitCode themselves when they finish with a non-zero status of their own.
 */
import yargs, { type Argv } from 'yargs';
import { INPUT_ERROR_EXIT_CODE } from '../config/errors.js';
import { calibrateCommands } from './commands/calibrate.js';
import { catalogCommand } from './commands/catalog.js';
import { planCommand } from './commands/plan.js';
import { replayCommand } from './commands/replay.js';
import { schemaCommand } from './commands/schema.js';
import { scoreCommand } from './commands/score.js';
import { serveCommand } from './commands/serve.js';
import { makeSweepCommand, mergeHintCommand, type SweepCommandDeps } from './commands/sweep.js';
import { reportError } from './report-error.js';
import { logLine, stdoutColumns } from './stdout.js';

/** The process's arguments without node and the script, as yargs reads them (main.ts passes `main` these). */
export { hideBin } from 'yargs/helpers';

/**
 * `--shard -1/2` as `--shard=-1/2`: an option's value that starts with a dash and a digit but is
 * not a number would otherwise be read as short flags (`-1`, `-/`, `-2`) and reported as
 * "Unknown argument: 1" instead of a bad value of the option. Negative numbers already work.
 */
export function joinDashValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const next = argv[i + 1];
    if (/^--[a-z][\w-]*$/.test(arg) && next !== undefined && /^-\d/.test(next) && !Number.isFinite(Number(next))) {
      out.push(`${arg}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/**
 * yargs renders the whole help text before it runs a command's handler, to have it ready should
 * the handler fail; the `fail` handler below never shows help, and the rendering (the width of
 * every option's text) costs each command a noticeable part of its start-up. yargs has no option
 * to skip it, so its usage object's method is replaced by one that does nothing.
 */
function skipHelpRendering(parser: Argv): Argv {
  type Internal = { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } } };
  const usage = (parser as unknown as Internal).getInternalMethods?.().getUsageInstance?.();
  if (typeof usage?.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => {};
  return parser;
}

/**
 * yargs prints help and the version with `console.log`, whose first use builds `process.stdout`
 * (for a pipe, loading Node.js's stream and socket modules: a tenth of `servesim --help`'s
 * start-up). Its logger's `log` is replaced by one that writes the same text directly
 * (stdout.ts) and, as the original does, records that yargs has printed something.
 */
function printWithoutStreams(parser: Argv): Argv {
  type Logger = { log?: (...args: unknown[]) => void };
  type Internal = { getInternalMethods?: () => { getLoggerInstance?: () => Logger; setHasOutput?: () => void } };
  const internal = (parser as unknown as Internal).getInternalMethods?.();
  const logger = internal?.getLoggerInstance?.();
  const setHasOutput = internal?.setHasOutput;
  if (logger !== undefined && typeof logger.log === 'function' && typeof setHasOutput === 'function') {
    logger.log = (...args: unknown[]) => {
      logLine(...args);
      setHasOutput();
    };
  }
  return parser;
}

/** What the commands are given instead of their defaults: the sweep's pool task. */
export interface CliDeps {
  sweep?: SweepCommandDeps;
}

/** Runs one servesim command line (without the `node servesim` part) and returns its exit status. */
export async function main(argv: string[], deps: CliDeps = {}): Promise<number> {
  try {
    await printWithoutStreams(skipHelpRendering(yargs(joinDashValues(argv))))
      .scriptName('servesim')
      .usage('$0 <command> [options]\n\nPredict how an LLM serving deployment behaves, and how far the prediction is from measurements.')
      .command(replayCommand)
      .command(makeSweepCommand(deps.sweep))
      .command(schemaCommand)
      .command(calibrateCommands)
      .command(scoreCommand)
      .command(catalogCommand)
      .command(planCommand)
      .command(serveCommand)
      .command(mergeHintCommand)
      .demandCommand(1, 'name a command (servesim --help lists them)')
      .strict()
      .fail((msg, err) => {
        if (err) throw err;
        throw Object.assign(new Error(msg), { exitCode: INPUT_ERROR_EXIT_CODE });
      })
      .help()
      // yargs returns after --help and --version instead of ending the process (before which it
      // would build process.stdout and process.stderr to make them blocking): main's caller exits.
      .exitProcess(false)
      .wrap(Math.min(110, stdoutColumns() ?? 110))
      .parseAsync();
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    return reportError(err);
  }
}
