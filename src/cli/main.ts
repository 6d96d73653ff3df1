#!/usr/bin/env node
/**
 * The servesim executable: runs `cli.ts`'s `main` on the process's arguments and exits with its
 * status. A plain replay command line goes to the replay command directly, without loading yargs
 * (replay-arguments.ts).
 *
 * The build writes this module twice (scripts/bundle-cli.mjs): as an ES module (dist/src/cli/main.js)
 * and as the CommonJS file the installed command runs (dist/src/cli/main.cjs, from bin/servesim.js),
 * in which a plain replay line loads no ES module at all. So no top-level await here.
 */
import { plainReplayArguments } from './replay-arguments.js';

async function run(argv: string[]): Promise<number> {
  const replay = plainReplayArguments(argv.slice(2));
  if (replay !== undefined) {
    const { runReplayMain } = await import('./actions/replay.js');
    return runReplayMain(replay);
  }
  const { hideBin, main } = await import('./cli.js');
  return main(hideBin(argv));
}

void run(process.argv).then((status) => {
  process.exitCode = status;
});
