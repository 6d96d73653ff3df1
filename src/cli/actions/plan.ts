/**
 * What `servesim plan PLAN.yaml [--out DIR] [--workers N] [--json]` does (docs/planning.md; its
 * options are in `commands/plan.ts`): signal handling and messages; the work is in src/plan/.
 */
import { join, relative } from 'node:path';
import { countsLine } from '../../plan/plan-output.js';
import { runPlan } from '../../plan/run-plan.js';
import { ResultsError } from '../../sweep/results.js';
import { SweepError } from '../../sweep/sweep-file.js';

/** What a test may swap: the pool task and the streams. */
export interface PlanCommandDeps {
  taskFilename?: string;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

export interface PlanArgs {
  file: string;
  out?: string;
  workers?: number;
  json?: boolean;
}

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_BAD_INPUT = 2;
export const EXIT_INTERRUPTED = 130;

function quote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** A path as the user can type it from the current folder. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' || rel.startsWith('..') ? path : rel;
}

/** Runs `servesim plan FILE ...`; returns the exit code. Ctrl-C (or SIGTERM) stops cleanly, a second one exits at once. */
export async function runPlanCommand(args: PlanArgs, deps: PlanCommandDeps = {}): Promise<number> {
  const out = (s: string) => void (deps.stdout ?? process.stdout).write(s);
  const err = (s: string) => void (deps.stderr ?? process.stderr).write(s);
  if (args.workers !== undefined && !(Number.isInteger(args.workers) && args.workers >= 1)) {
    err(`--workers: must be a positive integer, got ${args.workers}\n`);
    return EXIT_BAD_INPUT;
  }
  const stop = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (++signals > 1) process.exit(EXIT_INTERRUPTED);
    err(`\n${signal}: stopping; finished replays are kept (press Ctrl-C again to quit at once)\n`);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const result = await runPlan({
      planFile: args.file,
      outDir: args.out,
      poolThreads: args.workers,
      taskFilename: deps.taskFilename,
      stopSignal: stop.signal,
      note: (line) => err(`${line}\n`),
      progress: (line) => err(`${line}\n`),
    });
    const resume = ['npx', 'servesim', 'plan', quote(args.file), '--out', quote(shown(result.outDir))].join(' ');
    if (result.interrupted) {
      err(`plan ${result.name}: interrupted; ${result.logged} replays are kept in ${shown(result.outDir)}\nresume with: ${resume}\n`);
      return EXIT_INTERRUPTED;
    }
    const say = args.json === true ? err : out;
    say(`plan ${result.name}: ${countsLine(result.counts, result.reused)} in ${(result.wallMs / 1000).toFixed(1)} s\n\n`);
    if (result.ranked.length > 0) say(`${result.top}\n\n`);
    if (result.frontiers !== '') say(`${result.frontiers}\n\n`);
    say(`${result.why}\n`);
    if (result.best !== null) {
      say(`\nreplay it: npx servesim replay ${quote(shown(join(result.outDir, result.best.config)))}\n`);
    }
    say(`results in ${shown(result.outDir)} (plan.json, plan.csv, report.html)\n`);
    if (args.json === true) out(`${JSON.stringify(result.json, null, 2)}\n`);
    const failed = result.rows.filter((row) => row.status === 'failed');
    if (failed.length > 0) {
      err(
        `${failed.length} candidate${failed.length === 1 ? '' : 's'} failed:\n${failed.map((row) => `  ${row.id}: ${row.reason}`).join('\n')}\n` +
          `re-run the same command to retry them: ${resume}\n`,
      );
      return EXIT_FAILED;
    }
    return EXIT_OK;
  } catch (e) {
    // Config and input errors go to the command line's own report (one line per field, at most ten).
    if (e instanceof SweepError || e instanceof ResultsError) {
      err(`error: ${e.message}\n`);
      return EXIT_BAD_INPUT;
    }
    throw e;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
