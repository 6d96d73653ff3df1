/**
 * `npm run bench:plan [-- --workers N] [--runs K] [--json]`: the wall time of a capacity plan.
 *
 * The plan is `sweeps/plans/llama-3.1-70b-gpus.yaml`: Llama-3.1-70B over H100, H200 and B200,
 * tensor parallel 1, 2, 4 or 8, four max_sequences values and every replica count that fits in 8
 * GPUs (180 candidates), ISL 1024 / OSL 1024, 5 minutes of Poisson arrivals per replay. Each run
 * starts from an empty output folder (no replay reused) on `--workers` pool threads (2 by
 * default); a last run on the folder of the first shows what a finished plan costs to rewrite
 * (every replay read from its log). The load average before and after each run is printed with
 * the figures: other processes on the machine make a run slower, never faster. The CPU time of
 * the process (every thread) is printed too: it moves far less with the load, and divided by the
 * pool threads it is about the wall time of the plan on that many idle cores (the replays keep the
 * threads busy; the main thread's work between rounds is a few percent of it).
 * Run after `npm run build` (the pool runs the compiled pool task).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runPlan, type RunPlanResult } from '../src/plan/run-plan.js';

const here = dirname(fileURLToPath(import.meta.url));
/** The repository root, from bench/ or from dist/bench/. */
const ROOT = resolve(here, basename(dirname(here)) === 'dist' ? '../..' : '..');
const PLAN = join(ROOT, 'sweeps', 'plans', 'llama-3.1-70b-gpus.yaml');
const TARGET_S = 60;

interface RunFigures {
  wall_s: number;
  /** CPU time of the process, every thread (the pool's included): what the plan costs whatever else runs. */
  cpu_s: number;
  load_before: number;
  load_after: number;
  replays: number;
  reused: number;
}

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  const value = at === -1 ? NaN : Number(process.argv[at + 1]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

async function timed(outDir: string, workers: number): Promise<{ figures: RunFigures; result: RunPlanResult }> {
  const before = loadavg()[0];
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const result = await runPlan({ planFile: PLAN, outDir, poolThreads: workers, note: () => {} });
  const cpu = process.cpuUsage(cpuBefore);
  const wall = (performance.now() - started) / 1000;
  return {
    figures: {
      wall_s: Number(wall.toFixed(2)),
      cpu_s: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
      load_before: Number(before.toFixed(2)),
      load_after: Number(loadavg()[0].toFixed(2)),
      replays: result.counts.replays,
      reused: result.reused,
    },
    result,
  };
}

async function main(): Promise<void> {
  const workers = option('--workers', 2);
  const runs = option('--runs', 1);
  const asJson = process.argv.includes('--json');
  const dir = mkdtempSync(join(tmpdir(), 'servesim-plan-bench-'));
  try {
    const fresh: RunFigures[] = [];
    let first: RunPlanResult | undefined;
    for (let i = 0; i < runs; i++) {
      const { figures, result } = await timed(join(dir, `run-${i}`), workers);
      fresh.push(figures);
      first ??= result;
      if (!asJson) {
        process.stdout.write(
          `run ${i + 1}: ${figures.wall_s} s, ${figures.cpu_s} s of CPU (${figures.replays} replays; load average ${figures.load_before} before, ${figures.load_after} after)\n`,
        );
      }
    }
    const rewrite = (await timed(join(dir, 'run-0'), workers)).figures;
    const plan = first as RunPlanResult;
    const best = Math.min(...fresh.map((f) => f.wall_s));
    const cpuOfBest = (fresh.find((f) => f.wall_s === best) as RunFigures).cpu_s;
    const summary = {
      plan: 'sweeps/plans/llama-3.1-70b-gpus.yaml',
      workers,
      cpu_model: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      candidates: plan.counts.candidates,
      does_not_fit: plan.counts.does_not_fit,
      searched: plan.counts.searched,
      pruned: plan.counts.pruned,
      replays: plan.counts.replays,
      best: plan.best?.id ?? null,
      runs: fresh,
      best_wall_s: best,
      target_s: TARGET_S,
      rewrite_from_log: rewrite,
    };
    if (asJson) {
      process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
      return;
    }
    process.stdout.write(
      `plan ${summary.plan}: ${summary.candidates} candidates (${summary.does_not_fit} do not fit, ${summary.searched} searched, ` +
        `${summary.pruned} pruned), ${summary.replays} replays, best ${summary.best}\n` +
        `wall time on ${workers} pool threads (${summary.cores} cores, ${summary.cpu_model}): ${best} s` +
        `${runs > 1 ? ` (best of ${runs})` : ''}; target under ${TARGET_S} s: ${best < TARGET_S ? 'met' : 'NOT met'}\n` +
        `CPU time ${cpuOfBest} s, spread over ${workers} pool threads: about ${Number((cpuOfBest / workers).toFixed(1))} s of wall time on ${workers} idle cores` +
        `${best >= TARGET_S && cpuOfBest / workers < TARGET_S ? ' (the machine is busy: run again when it is not)' : ''}\n` +
        `rewriting the finished plan from its log: ${rewrite.wall_s} s, ${rewrite.cpu_s} s of CPU (${rewrite.reused} of ${rewrite.replays} replays reused)\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
