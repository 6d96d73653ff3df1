/**
 * What `servesim sweep SWEEP.yaml [--out DIR] [--workers N] [--point-timeout S] [--shard I/N]` and
 * `servesim sweep merge DIR... --out DIR` do (docs/sweeps.md; their options are in
 * `commands/sweep.ts`): signal handling and messages; the work is in src/sweep/.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot, terminalPath } from '../../io/paths.js';
import { ConfigError, InputError } from '../../config/errors.js';
import { mergeSweeps } from '../../sweep/merge.js';
import { PlanError, formatOverrides } from '../../sweep/plan.js';
import { createProgress } from '../../sweep/progress.js';
import { readTextFile } from '../../io/read-text.js';
import { PLAN_FILE, POINTS_FILE, ResultsError, readOwnFile, readPoints } from '../../sweep/results.js';
import { runSweep, type RunSweepResult } from '../../sweep/run-sweep.js';
import { ShardError, formatShard, resolveShard, type Shard } from '../../sweep/shard.js';
import { SweepError } from '../../sweep/sweep-file.js';
import { PLACEHOLDER_HINT } from '../../config/load.js';

export interface SweepRunArgs {
  file: string;
  out?: string;
  workers?: number;
  pointTimeout?: number;
  shard?: string;
  shardCount?: number;
  aiperf?: boolean;
  json?: boolean;
}

export interface SweepMergeArgs {
  dirs: string[];
  out: string;
  json?: boolean;
}

/**
 * `--json`: the objects the command wrote, `{"plan": <plan.json>, "points": [<each line of
 * points.jsonl>]}`, for scripts and CI.
 */
export function sweepJson(outDir: string): string {
  const plan = JSON.parse(readOwnFile(join(outDir, PLAN_FILE))) as unknown;
  const { records } = readPoints(join(outDir, POINTS_FILE));
  return `${JSON.stringify({ plan, points: records }, null, 2)}\n`;
}

/**
 * A sweep file's description: the first paragraph of its leading comment (up to a blank comment
 * line, an indented line such as an example command, or the first key), as one line.
 */
export function sweepDescription(text: string): string {
  const words: string[] = [];
  for (const line of text.split('\n')) {
    const comment = /^#(.*)$/.exec(line);
    if (comment === null || comment[1].trim() === '' || /^\s{2,}/.test(comment[1])) break;
    words.push(comment[1].trim());
  }
  return words.join(' ');
}

/** `text` in lines of at most `width` characters, every line after the first indented by `indent` spaces. */
function wrap(text: string, width: number, indent: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

/** `servesim sweep` without a file: the shipped sweep files, each with its description, and an example. */
export function sweepTargetsText(): string {
  const dir = join(packageRoot(), 'sweeps');
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .sort();
  const nameWidth = Math.max(...files.map((name) => `sweeps/${name}`.length));
  const lines = files.map((name) => {
    const description = sweepDescription(readTextFile(join(dir, name)));
    return `  ${`sweeps/${name}`.padEnd(nameWidth)}  ${wrap(description, 106 - nameWidth, nameWidth + 4)}`;
  });
  return [
    'servesim sweep needs a sweep file. The examples shipped with servesim:',
    ...lines,
    '',
    'for example:',
    '  npx servesim sweep sweeps/concurrency-grid.yaml --out out/concurrency',
    '',
    'servesim sweep --help lists the options; docs/sweeps.md describes sweep files.',
    '',
  ].join('\n');
}

export interface SweepCommandDeps {
  /** Pool-task module; the shipped one (real replay) by default. */
  taskFilename?: string;
  stdout?: NodeJS.WritableStream & { isTTY?: boolean };
  stderr?: NodeJS.WritableStream & { isTTY?: boolean };
  env?: NodeJS.ProcessEnv;
}

/** Exit codes: 0 all points ok, 1 some failed (or missing after a merge), 2 bad input, 130 interrupted. */
export const EXIT_OK = 0;
export const EXIT_FAILED_POINTS = 1;
export const EXIT_BAD_INPUT = 2;
export const EXIT_INTERRUPTED = 130;

function isUserError(err: unknown): err is Error {
  return (
    err instanceof SweepError ||
    err instanceof PlanError ||
    err instanceof ShardError ||
    err instanceof ResultsError ||
    err instanceof ConfigError ||
    err instanceof InputError
  );
}

function quote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

function resumeCommand(args: SweepRunArgs, outDir: string, shard: Shard | undefined): string {
  const parts = ['npx', 'servesim', 'sweep', quote(args.file), '--out', quote(outDir)];
  if (shard !== undefined) parts.push('--shard', formatShard(shard));
  if (args.pointTimeout !== undefined) parts.push('--point-timeout', String(args.pointTimeout));
  if (args.aiperf) parts.push('--aiperf');
  return parts.join(' ');
}

function reportRun(
  result: RunSweepResult,
  args: SweepRunArgs,
  shard: Shard | undefined,
  elapsedS: number,
  out: (s: string) => void,
  err: (s: string) => void,
): number {
  const scope = shard === undefined ? '' : ` (shard ${formatShard(shard)}: ${result.slice} of ${result.planned} points)`;
  if (result.interrupted) {
    const done = result.ok + result.failed.length;
    err(
      `sweep ${result.name}${scope}: interrupted; ${done} of ${result.slice} points finished and are kept in ${terminalPath(result.outDir)}\n` +
        `resume with: ${resumeCommand(args, result.outDir, shard)}\n`,
    );
    return EXIT_INTERRUPTED;
  }
  (args.json === true ? err : out)(
    `sweep ${result.name}${scope}: ${result.ok}/${result.slice} points ok` +
      ` (${result.alreadyDone} already done, ${result.ran} run) in ${elapsedS.toFixed(1)} s; results in ${terminalPath(result.outDir)}\n`,
  );
  if (result.placeholder !== undefined) {
    (args.json === true ? err : out)(
      `not a prediction: ${result.placeholder.points} of ${result.ok} points ran on ${result.placeholder.reason}; ${PLACEHOLDER_HINT}\n`,
    );
  }
  if (args.json === true) out(sweepJson(result.outDir));
  if (result.failed.length > 0) {
    const lines = result.failed.map((f) => `  ${f.id}  point ${f.index} (${formatOverrides(f.overrides)}): ${f.status}: ${f.error}`);
    err(
      `sweep ${result.name}: ${result.failed.length} point${result.failed.length === 1 ? '' : 's'} failed:\n${lines.join('\n')}\n` +
        `failed ids: ${result.failed.map((f) => f.id).join(' ')}\n` +
        `re-run the same command to retry them: ${resumeCommand(args, result.outDir, shard)}\n`,
    );
    return EXIT_FAILED_POINTS;
  }
  if (result.pending > 0) {
    err(`sweep ${result.name}: ${result.pending} points have no result; resume with: ${resumeCommand(args, result.outDir, shard)}\n`);
    return EXIT_FAILED_POINTS;
  }
  return EXIT_OK;
}

/** Runs `servesim sweep FILE ...`; returns the exit code. Ctrl-C (or SIGTERM) stops cleanly, a second one exits at once. */
export async function runSweepCommand(args: SweepRunArgs, deps: SweepCommandDeps = {}): Promise<number> {
  const stdout = deps.stdout ?? process.stdout;
  const stderr = deps.stderr ?? process.stderr;
  const out = (s: string) => void stdout.write(s);
  const err = (s: string) => void stderr.write(s);
  const env = deps.env ?? process.env;

  let shard: Shard | undefined;
  try {
    shard = resolveShard(args.shard, args.shardCount, env);
    if (args.workers !== undefined && !(Number.isInteger(args.workers) && args.workers >= 1)) {
      throw new SweepError('--workers', '', `must be a positive integer, got ${args.workers}`);
    }
    if (args.pointTimeout !== undefined && !(args.pointTimeout > 0 && Number.isFinite(args.pointTimeout))) {
      throw new SweepError('--point-timeout', '', `must be a positive number of seconds, got ${args.pointTimeout}`);
    }
  } catch (e) {
    if (isUserError(e)) {
      err(`${e.message}\n`);
      return EXIT_BAD_INPUT;
    }
    throw e;
  }

  const stop = new AbortController();
  let signalCount = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signalCount++;
    if (signalCount > 1) process.exit(EXIT_INTERRUPTED);
    err(`\n${signal}: stopping; finished points are kept (press Ctrl-C again to quit at once)\n`);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const started = performance.now();
  try {
    const result = await runSweep({
      sweepFile: args.file,
      outDir: args.out,
      poolThreads: args.workers,
      pointTimeoutS: args.pointTimeout,
      shard,
      aiperf: args.aiperf === true,
      taskFilename: deps.taskFilename,
      progress: createProgress(stderr),
      stopSignal: stop.signal,
      note: (line) => err(`${line}\n`),
    });
    return reportRun(result, args, shard, (performance.now() - started) / 1000, out, err);
  } catch (e) {
    if (isUserError(e)) {
      err(`${e.message}\n`);
      return EXIT_BAD_INPUT;
    }
    throw e;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Runs `servesim sweep merge DIR... --out DIR`; returns the exit code. */
export async function runSweepMergeCommand(args: SweepMergeArgs, deps: SweepCommandDeps = {}): Promise<number> {
  const stdout = deps.stdout ?? process.stdout;
  const stderr = deps.stderr ?? process.stderr;
  try {
    const result = await mergeSweeps({ dirs: args.dirs, outDir: args.out, note: (line) => void stderr.write(`${line}\n`) });
    if (args.json === true) stdout.write(sweepJson(result.outDir));
    (args.json === true ? stderr : stdout).write(
      `sweep merge: ${args.dirs.length} ${args.dirs.length === 1 ? 'directory' : 'directories'}, ${result.ok}/${result.planned} points ok; results in ${terminalPath(result.outDir)}\n`,
    );
    let code = EXIT_OK;
    if (result.failed.length > 0) {
      stderr.write(
        `${result.failed.length} points failed:\n${result.failed.map((f) => `  ${f.id}  point ${f.index}: ${f.status}: ${f.error}`).join('\n')}\n` +
          `failed ids: ${result.failed.map((f) => f.id).join(' ')}\n`,
      );
      code = EXIT_FAILED_POINTS;
    }
    if (result.missing.length > 0) {
      stderr.write(
        `${result.missing.length} points have no result in any directory (a shard missing or unfinished): ` +
          `${result.missing.map((m) => m.id).join(' ')}\n`,
      );
      code = EXIT_FAILED_POINTS;
    }
    return code;
  } catch (e) {
    if (isUserError(e)) {
      stderr.write(`${e.message}\n`);
      return EXIT_BAD_INPUT;
    }
    throw e;
  }
}
