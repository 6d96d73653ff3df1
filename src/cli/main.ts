#!/usr/bin/env node
/**
 * servesim command line. Exit codes: 0 ok, 2 bad config or input (the message names the file
 * and the field or line), 1 anything else. Commands set process.exitCode themselves when they
 * finish with a non-zero status of their own (a sweep with failed points).
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { ConfigError, INPUT_ERROR_EXIT_CODE, InputError } from '../config/errors.js';
import { calibrateCommands } from './commands/calibrate.js';
import { catalogCommand } from './commands/catalog.js';
import { planCommand } from './commands/plan.js';
import { replayCommand } from './commands/replay.js';
import { schemaCommand } from './commands/schema.js';
import { scoreCommand } from './commands/score.js';
import { makeSweepCommand } from './commands/sweep.js';

function reportError(err: unknown): number {
  if (err instanceof ConfigError) {
    for (const issue of err.issues) process.stderr.write(`error: ${issue.message}\n`);
    return INPUT_ERROR_EXIT_CODE;
  }
  if (err instanceof InputError) {
    process.stderr.write(`error: ${err.message}\n`);
    return INPUT_ERROR_EXIT_CODE;
  }
  const e = err as { exitCode?: unknown; message?: unknown };
  if (typeof e?.exitCode === 'number' && typeof e.message === 'string') {
    process.stderr.write(`error: ${e.message}\n`);
    return e.exitCode;
  }
  process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return 1;
}

export async function main(argv: string[]): Promise<number> {
  try {
    await yargs(argv)
      .scriptName('servesim')
      .usage('$0 <command> [options]\n\nPredict how an LLM serving deployment behaves, and how far the prediction is from measurements.')
      .command(replayCommand)
      .command(makeSweepCommand())
      .command(schemaCommand)
      .command(calibrateCommands)
      .command(scoreCommand)
      .command(catalogCommand)
      .command(planCommand)
      .demandCommand(1, 'name a command (servesim --help lists them)')
      .strict()
      .fail((msg, err) => {
        if (err) throw err;
        throw Object.assign(new Error(msg), { exitCode: INPUT_ERROR_EXIT_CODE });
      })
      .help()
      .wrap(Math.min(110, process.stdout.columns ?? 110))
      .parseAsync();
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    return reportError(err);
  }
}

const code = await main(hideBin(process.argv));
process.exitCode = code;
