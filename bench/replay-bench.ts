/**
 * Replay-core benchmark: host time per output token and peak memory on the workloads of the
 * replay issue. Each workload runs in a fresh child process so that peak RSS is its own.
 *
 *   npm run bench                     table
 *   npm run bench -- --json           one JSON object per line
 *   npm run bench -- --only closed-1k run some workloads (comma-separated)
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseRunConfig } from '../src/config/load.js';
import { replay } from '../src/replay.js';

const LINEAR = {
  type: 'linear',
  base_ms: 5,
  prefill_token_us: 60,
  prefill_pair_ns: 0.5,
  decode_request_us: 40,
  decode_kv_token_ns: 30,
};

const SCHEDULER = { max_batched_tokens: 8192, max_sequences: 256, chunked_prefill: true };

function closed(concurrency: number, requests: number) {
  return {
    engine: { workers: { aggregated: { scheduler: SCHEDULER, timing: LINEAR } } },
    traffic: {
      source: { type: 'synthetic', input_tokens: 512, output_tokens: 128 },
      load: { type: 'concurrency', concurrency },
      stop: { requests },
    },
  };
}

const CLIENT_PATH = {
  tokenization: { workers: 4, base_ms: 0.3, per_input_us: 1 },
  detokenization: { workers: 4, base_ms: 0.2, per_output_us: 20 },
};

export const WORKLOADS: Record<string, () => unknown> = {
  'closed-1k': () => closed(1024, 1024 * 4),
  'closed-1k-client-path': () => {
    const cfg = closed(1024, 1024 * 4) as { engine: Record<string, unknown>; traffic: { load: Record<string, unknown> } };
    Object.assign(cfg.engine, CLIENT_PATH);
    cfg.traffic.load.response_overhead = { base_ms: 1.4, per_output_token_us: 3.65 };
    return cfg;
  },
  'closed-4k': () => closed(4096, 4096 * 4),
  'closed-16k': () => closed(16384, 16384 * 4),
  'poisson-overload': () => ({
    engine: {
      workers: {
        aggregated: {
          scheduler: SCHEDULER,
          // 4,000 blocks of 16 tokens: about 100 requests of 640 tokens, far below 256 sequences.
          kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 4000 } },
          timing: LINEAR,
        },
      },
    },
    traffic: {
      source: { type: 'synthetic', input_tokens: 512, output_tokens: 128 },
      load: { type: 'poisson', requests_per_second: 400, seed: 42 },
      stop: { requests: 400 * 60 },
    },
  }),
  million: () => closed(256, 1_000_000),
};

export interface BenchRow {
  workload: string;
  requests: number;
  output_tokens: number;
  wall_ms: number;
  us_per_output_token: number;
  peak_rss_mb: number;
  preemptions: number;
}

const REPEATS = 3;

function runOne(name: string): BenchRow {
  const config = parseRunConfig(WORKLOADS[name](), `${name}.yaml`);
  // One warm-up run on a small slice lets V8 optimize the loop before the measured run.
  const warm = structuredClone(config);
  warm.traffic.stop = { requests: 2000 };
  replay(warm, { baseDir: '.' });
  // The median of REPEATS measured runs (host time varies a few percent run to run).
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
  const onlyIndex = args.indexOf('--only');
  const names = onlyIndex >= 0 ? args[onlyIndex + 1].split(',') : Object.keys(WORKLOADS);
  const self = fileURLToPath(import.meta.url);
  const rows: BenchRow[] = [];
  for (const name of names) {
    if (!(name in WORKLOADS)) throw new Error(`unknown workload '${name}'; known: ${Object.keys(WORKLOADS).join(', ')}`);
    const child = spawnSync(process.execPath, [self, '--child', name], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (child.status !== 0) throw new Error(`workload ${name} failed:\n${child.stderr}`);
    const row = JSON.parse(child.stdout.trim().split('\n').pop() as string) as BenchRow;
    rows.push(row);
    if (json) process.stdout.write(JSON.stringify(row) + '\n');
  }
  if (json) return;
  const header = ['workload', 'requests', 'output_tokens', 'wall_ms', 'us_per_output_token', 'peak_rss_mb', 'preemptions'] as const;
  const table = [header.map(String), ...rows.map((r) => header.map((h) => String(r[h])))];
  const widths = header.map((_, i) => Math.max(...table.map((line) => line[i].length)));
  for (const line of table) console.log(line.map((cell, i) => cell.padStart(widths[i])).join('  '));
}

main();
