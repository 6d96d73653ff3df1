/**
 * The replay command's direct path: `main.ts` runs a plain replay command line (the form the
 * README and most scripts write) without yargs, whose parser and option definitions cost a
 * one-request replay a sixth of its start-up. Plain means `replay CONFIG` followed only by
 * `--set VALUE`, `--out DIR` and the flags `--json`, `--per-request`, `--aiperf`,
 * `--skip-invalid-rows`, each flag and `--out` at most once, no value empty or starting with a
 * dash. For such a line the arguments are the ones yargs gives the command's handler
 * (test/replay-arguments.test.ts checks that on generated lines); any other line, `--help` and
 * every mistake among them, goes to yargs as before.
 */
import type { ReplayArgs } from './actions/replay.js';

const FLAGS = {
  '--json': 'json',
  '--per-request': 'perRequest',
  '--aiperf': 'aiperf',
  '--skip-invalid-rows': 'skipInvalidRows',
} as const;

/** A value yargs reads as it is written: not empty, not an option. */
function plainValue(token: string | undefined): token is string {
  return token !== undefined && token !== '' && !token.startsWith('-');
}

/** The replay command's arguments when `argv` (the process's, without node and the script) is a plain replay line; else undefined. */
export function plainReplayArguments(argv: readonly string[]): ReplayArgs | undefined {
  if (argv[0] !== 'replay' || !plainValue(argv[1])) return undefined;
  const args: ReplayArgs = { config: argv[1], set: [], perRequest: false, json: false, aiperf: false, skipInvalidRows: false };
  const seen = new Set<string>();
  for (let i = 2; i < argv.length; i++) {
    const token = argv[i];
    if (token === '--set' || token === '--out') {
      const value = argv[++i];
      if (!plainValue(value)) return undefined;
      if (token === '--set') {
        args.set.push(value);
        continue;
      }
      if (args.out !== undefined) return undefined;
      args.out = value;
    } else if (Object.hasOwn(FLAGS, token) && !seen.has(token)) {
      seen.add(token);
      args[FLAGS[token as keyof typeof FLAGS]] = true;
    } else {
      return undefined;
    }
  }
  return args;
}
