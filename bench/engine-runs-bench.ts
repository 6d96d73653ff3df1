/**
 * `npm run bench:engine-runs [-- RUN_DIR...] [--json]`: real vLLM runs replayed with their own
 * layer profiles, measured against replayed.
 *
 * A run is a folder in the format of `data/engine-runs/` (docs/request-logs.md): `requests.jsonl`
 * and `meta.json` of a vLLM run, and `profiler/` with the layer-wise profile of the same model,
 * GPU and vLLM version. Each is replayed as `servesim calibrate pass-time --profile RUN/profiler
 * --log RUN` does it: the pass-time model built from the profile, the engine from meta.json, the
 * requests at their queue times. Printed per run: mean TTFT, TPOT and latency, measured and
 * replayed, the error of the mean (target: within 5 %) and the mean per-request error. Without
 * arguments, every run shipped in data/engine-runs/. Exits 1 when a mean misses the target.
 * Run after `npm run build`.
 */
import { readdirSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runProfilePassTime } from '../src/calibrate/profile-command.js';
import { isFolder, isRegularFile } from '../src/io/read-text.js';
import { benchEnvironment, describeEnvironment } from './environment.js';

const here = dirname(fileURLToPath(import.meta.url));
/** The repository root, from bench/ or from dist/bench/. */
const ROOT = resolve(here, basename(dirname(here)) === 'dist' ? '../..' : '..');
const TARGET_PCT = 5;
const METRICS = [
  ['ttft', 'TTFT'],
  ['tpot', 'TPOT'],
  ['latency', 'latency'],
] as const;

interface MetricFigures {
  measured_mean_ms: number;
  replayed_mean_ms: number;
  mean_error_pct: number;
  request_mape_pct: number;
}

function shippedRuns(): string[] {
  const dir = join(ROOT, 'data', 'engine-runs');
  return readdirSync(dir)
    .sort()
    .map((name) => join(dir, name))
    .filter((path) => isFolder(path) && isRegularFile(join(path, 'requests.jsonl')) && isFolder(join(path, 'profiler')));
}

function main(): number {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const runs = args.filter((arg) => arg !== '--json');
  const dirs = runs.length > 0 ? runs.map((run) => resolve(run)) : shippedRuns();
  const results: Array<{ run: string; requests: number; metrics: Record<string, MetricFigures>; met: boolean }> = [];
  for (const dir of dirs) {
    const shown = relative(process.cwd(), dir) || '.';
    const outcome = runProfilePassTime({ profile: join(shown, 'profiler'), log: shown });
    const replay = outcome.fitJson.replay as Record<string, unknown>;
    const metrics = Object.fromEntries(METRICS.map(([key]) => [key, replay[key] as MetricFigures]));
    const met = METRICS.every(([key]) => Math.abs(metrics[key].mean_error_pct) <= TARGET_PCT);
    results.push({ run: shown, requests: replay.requests_compared as number, metrics, met });
  }
  const environment = benchEnvironment();
  if (json) {
    process.stdout.write(`${JSON.stringify({ target_pct: TARGET_PCT, runs: results, environment }, null, 2)}\n`);
  } else {
    const width = Math.max(10, ...results.map((result) => result.run.length)) + 2;
    const lines = [
      `real vLLM runs replayed with their own layer profiles (target: each mean within ${TARGET_PCT} %)`,
      `${'run'.padEnd(width)}${'metric'.padEnd(9)}${'measured ms'.padStart(13)}${'replayed ms'.padStart(13)}${'error %'.padStart(9)}${'per-request MAPE %'.padStart(20)}`,
    ];
    for (const result of results) {
      for (const [key, label] of METRICS) {
        const m = result.metrics[key];
        lines.push(
          `${(key === 'ttft' ? result.run : '').padEnd(width)}${label.padEnd(9)}${m.measured_mean_ms.toFixed(1).padStart(13)}${m.replayed_mean_ms.toFixed(1).padStart(13)}${`${m.mean_error_pct >= 0 ? '+' : ''}${m.mean_error_pct.toFixed(1)}`.padStart(9)}${m.request_mape_pct.toFixed(1).padStart(20)}`,
        );
      }
      lines.push(`${''.padEnd(width)}${result.requests} requests; ${result.met ? 'within' : 'NOT within'} ${TARGET_PCT} %`);
    }
    lines.push('', describeEnvironment(environment));
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  return results.every((result) => result.met) ? 0 : 1;
}

process.exitCode = main();
