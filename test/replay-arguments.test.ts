/**
 * The replay command's direct path (src/cli/replay-arguments.ts): a line it takes gets the
 * arguments yargs would give the command's handler, with the command's own option definitions;
 * every other line is left to yargs.
 */
import fc from 'fast-check';
import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import type { ReplayArgs } from '../src/cli/actions/replay.js';
import { replayCommand } from '../src/cli/commands/replay.js';
import { plainReplayArguments } from '../src/cli/replay-arguments.js';

/** What yargs gives the replay handler for `argv` (cli.ts's parser, the handler replaced), or the error it stops at. */
async function yargsArguments(argv: string[]): Promise<ReplayArgs | { error: string }> {
  let got: ReplayArgs | undefined;
  try {
    await yargs(argv)
      .command({ ...replayCommand, handler: (args) => void (got = args) })
      .strict()
      .fail((msg, err) => {
        throw err ?? new Error(msg);
      })
      .help()
      .exitProcess(false)
      .parseAsync();
  } catch (err) {
    return { error: (err as Error).message };
  }
  if (got === undefined) return { error: 'the handler did not run' };
  const { config, set, out, perRequest, json, aiperf, skipInvalidRows, pricePerGpuHour } = got;
  return Object.fromEntries(
    Object.entries({ config, set, out, perRequest, json, aiperf, skipInvalidRows, pricePerGpuHour }).filter(([, v]) => v !== undefined),
  ) as unknown as ReplayArgs;
}

describe("the replay command's direct path", () => {
  it('takes a plain replay line, with the arguments yargs gives', async () => {
    const lines = [
      ['replay', 'run.yaml'],
      ['replay', 'sweeps/configs/qwen3-32b-h100-tp2.yaml', '--set', 'traffic.stop={requests: 1}'],
      ['replay', 'run.yaml', '--json', '--set', 'a.b=1', '--set', 'c=x y', '--out', 'dir', '--per-request'],
      ['replay', 'run.yaml', '--aiperf', '--skip-invalid-rows', '--out', 'o'],
      ['replay', '42', '--set', '7'],
    ];
    for (const argv of lines) {
      const args = plainReplayArguments(argv);
      expect(args, argv.join(' ')).toBeDefined();
      expect(args).toEqual(await yargsArguments(argv));
    }
    expect(plainReplayArguments(['replay', 'r.yaml', '--set', 'a=1', '--json', '--set', 'b=2'])).toEqual({
      config: 'r.yaml',
      set: ['a=1', 'b=2'],
      perRequest: false,
      json: true,
      aiperf: false,
      skipInvalidRows: false,
    });
  });

  it('leaves every other line to yargs', () => {
    const lines = [
      [],
      ['replay'],
      ['sweep', 'run.yaml'],
      ['replay', '--help'],
      ['replay', 'run.yaml', '--help'],
      ['replay', 'run.yaml', '--version'],
      ['replay', '--json', 'run.yaml'],
      ['replay', '', '--json'],
      ['replay', 'run.yaml', 'other.yaml'],
      ['replay', 'run.yaml', '--set'],
      ['replay', 'run.yaml', '--set', 'a=1', 'b=2'],
      ['replay', 'run.yaml', '--set', '-1'],
      ['replay', 'run.yaml', '--set', ''],
      ['replay', 'run.yaml', '--set=a=1'],
      ['replay', 'run.yaml', '--json', '--json'],
      ['replay', 'run.yaml', '--out', 'a', '--out', 'b'],
      ['replay', 'run.yaml', '--no-json'],
      ['replay', 'run.yaml', '--json=true'],
      ['replay', 'run.yaml', '--perRequest'],
      ['replay', 'run.yaml', '--price-per-gpu-hour', '2'],
      ['replay', 'run.yaml', '--'],
      ['replay', 'run.yaml', '-j'],
      ['replay', 'run.yaml', '--unknown'],
      ['replay', 'run.yaml', 'constructor'],
      ['replay', 'run.yaml', '__proto__'],
    ];
    for (const argv of lines) expect(plainReplayArguments(argv), argv.join(' ')).toBeUndefined();
  });

  it('agrees with yargs on generated lines', async () => {
    const token = fc.constantFrom(
      '--set',
      '--out',
      '--json',
      '--per-request',
      '--aiperf',
      '--skip-invalid-rows',
      '--no-json',
      '--help',
      '--',
      'run.yaml',
      'a.b=1',
      'x=[1, 2]',
      '0x10',
      '1e3',
      '-3',
      'true',
      '',
      ' ',
    );
    // The config mostly plain (else every line is left to yargs), the rest from the options and values.
    const config = fc.oneof({ arbitrary: fc.constant('run.yaml'), weight: 4 }, { arbitrary: token, weight: 1 });
    await fc.assert(
      fc.asyncProperty(config, fc.array(token, { maxLength: 6 }), async (first, rest) => {
        const argv = ['replay', first, ...rest];
        const args = plainReplayArguments(argv);
        if (args !== undefined) expect(args).toEqual(await yargsArguments(argv));
      }),
      { numRuns: 1000, seed: 7 },
    );
  });
});
