#!/usr/bin/env node
/**
 * The servesim executable: runs `cli.ts`'s `main` on the process's arguments and exits with its
 * status. A plain replay command line goes to the replay command directly, without loading yargs
 * (replay-arguments.ts).
 */
import { plainReplayArguments } from './replay-arguments.js';

const replay = plainReplayArguments(process.argv.slice(2));
if (replay !== undefined) {
  const { runReplayMain } = await import('./actions/replay.js');
  process.exitCode = await runReplayMain(replay);
} else {
  const [{ hideBin }, { main }] = await Promise.all([import('yargs/helpers'), import('./cli.js')]);
  process.exitCode = await main(hideBin(process.argv));
}
