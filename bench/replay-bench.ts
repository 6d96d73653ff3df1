/**
 * Replay-core benchmark: host time per output token and peak memory on the workloads of the
 * replay issue. Each workload runs in a fresh child process so that peak RSS is its own.
 *
 *   npm run bench                     table
 *   npm run bench -- --json           one JSON document: the rows, the client path's cost, and the
 *                                     commit and machine they were measured on (bench/environment.ts)
 *   npm run bench -- --only closed-1k run some workloads (comma-separated; `startup` is the
 *                                     start-up row alone)
 *
 * The start-up row times whole processes: `servesim --help` and a one-request replay of the
 * README's first config, against `node -e 0` in the same run, all three without
 * NODE_EXTRA_CA_CERTS (bench/environment.ts, STARTUP_UNSET).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../src/catalog/load.js';
import { parseRunConfig } from '../src/config/load.js';
import { replay } from '../src/replay.js';
import { benchEnvironment, describeEnvironment, startupEnvironment } from './environment.js';
import { WORKLOADS } from './workloads.js';

export interface BenchRow {
  workload: string;
  requests: number;
  output_tokens: number;
  wall_ms: number;
  us_per_output_token: number;
  peak_rss_mb: number;
  preemptions: number;
}

const REPEATS = 5;

/** Whole-process runs per command of the start-up row; each command's median is reported. */
const STARTUP_RUNS = 9;

export interface StartupRow {
  runs: number;
  node_ms: number;
  help_ms: number;
  replay_ms: number;
  /** The variables of STARTUP_UNSET that were set in the bench's environment, and were not in the commands'. */
  unset: string[];
  /** help_ms and replay_ms over node_ms: what a machine's speed and load change least. */
  help_vs_node: number;
  replay_vs_node: number;
  /** The aim, where `node -e 0` takes about 60 ms: --help within 100 ms, a one-request replay within 120 ms. */
  target_help_ms: number;
  target_replay_ms: number;
}

/**
 * Start-up: the wall time of whole processes, each command run in turn (node, help, replay,
 * node, ...) so that a machine's drift touches all three alike, and the median of each.
 */
function startupRow(): StartupRow {
  const root = packageRoot();
  const bin = join(root, 'bin', 'servesim.js');
  const config = join(root, 'sweeps', 'configs', 'qwen3-32b-h100-tp2.yaml');
  const commands: Record<'node' | 'help' | 'replay', string[]> = {
    node: ['-e', '0'],
    help: [bin, '--help'],
    replay: [bin, 'replay', config, '--set', 'traffic.stop={requests: 1}'],
  };
  const { env, unset } = startupEnvironment();
  const times: Record<keyof typeof commands, number[]> = { node: [], help: [], replay: [] };
  for (let run = -1; run < STARTUP_RUNS; run++) {
    for (const name of Object.keys(commands) as (keyof typeof commands)[]) {
      const started = performance.now();
      const child = spawnSync(process.execPath, commands[name], { cwd: root, encoding: 'utf8', env });
      const ms = performance.now() - started;
      if (child.status !== 0) throw new Error(`start-up: ${commands[name].join(' ')} failed:\n${child.stderr}`);
      if (run >= 0) times[name].push(ms); // run -1 warms the file cache
    }
  }
  const median = (xs: number[]) => round([...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1], 1);
  const node = median(times.node);
  return {
    runs: STARTUP_RUNS,
    node_ms: node,
    help_ms: median(times.help),
    replay_ms: median(times.replay),
    unset,
    help_vs_node: round(median(times.help) / node, 2),
    replay_vs_node: round(median(times.replay) / node, 2),
    target_help_ms: 100,
    target_replay_ms: 120,
  };
}

function describeStartup(row: StartupRow): string {
  return (
    `start-up (whole processes, median of ${row.runs}): node -e 0 ${row.node_ms} ms; ` +
    `servesim --help ${row.help_ms} ms (${row.help_vs_node} x node -e 0; aim: ${row.target_help_ms} ms where node -e 0 takes 60); ` +
    `a one-request replay ${row.replay_ms} ms (${row.replay_vs_node} x; aim: ${row.target_replay_ms} ms)` +
    (row.unset.length > 0 ? `; all three without ${row.unset.join(', ')}` : '')
  );
}

function runOne(name: string): BenchRow {
  const config = parseRunConfig(WORKLOADS[name](), `${name}.yaml`);
  // Two warm-up runs of the same shape (at most 50,000 requests each) let V8 optimize the loop
  // with the workload's own type feedback before the measured runs.
  const warm = structuredClone(config);
  const stop = warm.traffic.stop;
  if ('requests' in stop) warm.traffic.stop = { requests: Math.min(stop.requests, 50_000) };
  replay(warm, { baseDir: '.' });
  replay(warm, { baseDir: '.' });
  // The median of REPEATS measured runs (host time varies run to run). No forced GC between
  // runs: a forced full collection makes the next run up to twice as slow on this engine, which
  // is not how a replay runs in a sweep.
  const runs = [];
  for (let i = 0; i < REPEATS; i++) runs.push(replay(config, { baseDir: '.' }).summary);
  runs.sort((a, b) => a.simulator.wall_time_ms - b.simulator.wall_time_ms);
  const summary = runs[(REPEATS - 1) >> 1];
  return {
    workload: name,
    requests: summary.run.request_count + summary.run.error_request_count,
    output_tokens: summary.simulator.output_tokens,
    wall_ms: round(summary.simulator.wall_time_ms, 1),
    us_per_output_token: round(summary.simulator.us_per_output_token, 4),
    peak_rss_mb: round(process.resourceUsage().maxRSS / 1024, 1),
    preemptions: summary.simulator.preemptions,
  };
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function main(): void {
  const args = process.argv.slice(2);
  const childIndex = args.indexOf('--child');
  if (childIndex >= 0) {
    process.stdout.write(JSON.stringify(runOne(args[childIndex + 1])) + '\n');
    return;
  }
  const json = args.includes('--json');
  const environment = benchEnvironment();
  const onlyIndex = args.indexOf('--only');
  const names = onlyIndex >= 0 ? args[onlyIndex + 1].split(',') : ['startup', ...Object.keys(WORKLOADS)];
  const startup = names.includes('startup') ? startupRow() : null;
  const rows: BenchRow[] = [];
  for (const name of names.filter((n) => n !== 'startup')) {
    if (!(name in WORKLOADS)) throw new Error(`unknown workload '${name}'; known: startup, ${Object.keys(WORKLOADS).join(', ')}`);
    rows.push(runChild(name));
  }
  const overhead = names.includes('closed-1k') && names.includes('closed-1k-client-path') ? clientPathOverhead() : null;
  if (json) {
    process.stdout.write(`${JSON.stringify({ bench: 'replay', environment, startup, rows, client_path_overhead: overhead }, null, 2)}\n`);
    return;
  }
  console.log(describeEnvironment(environment));
  if (startup) console.log(`${describeStartup(startup)}\n`);
  if (rows.length === 0) return;
  const header = ['workload', 'requests', 'output_tokens', 'wall_ms', 'us_per_output_token', 'peak_rss_mb', 'preemptions'] as const;
  const table = [header.map(String), ...rows.map((r) => header.map((h) => String(r[h])))];
  const widths = header.map((_, i) => Math.max(...table.map((line) => line[i].length)));
  for (const line of table) console.log(line.map((cell, i) => cell.padStart(widths[i])).join('  '));
  if (overhead) {
    console.log(
      `\nclient path: closed-1k-client-path costs ${((overhead.median_ratio - 1) * 100).toFixed(1)} % more host time per output token than closed-1k ` +
        `(median of ${overhead.pairs} back-to-back pairs; pair ratios ${overhead.ratios.map((r) => r.toFixed(3)).join(' ')})`,
    );
  }
}

function runChild(name: string): BenchRow {
  const self = fileURLToPath(import.meta.url);
  const child = spawnSync(process.execPath, [self, '--child', name], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (child.status !== 0) throw new Error(`workload ${name} failed:\n${child.stderr}`);
  return JSON.parse(child.stdout.trim().split('\n').pop() as string) as BenchRow;
}

/**
 * The client path's extra cost as the median ratio of back-to-back pairs of runs: host speed
 * drifts over seconds on a shared machine, so adjacent runs compare better than two medians.
 */
function clientPathOverhead(pairs = 7): { pairs: number; median_ratio: number; ratios: number[] } {
  const ratios: number[] = [];
  for (let i = 0; i < pairs; i++) {
    const plain = runChild('closed-1k').us_per_output_token;
    const withClientPath = runChild('closed-1k-client-path').us_per_output_token;
    ratios.push(withClientPath / plain);
  }
  ratios.sort((a, b) => a - b);
  return { pairs, median_ratio: round(ratios[(pairs - 1) >> 1], 4), ratios: ratios.map((r) => round(r, 4)) };
}

main();
