/**
 * A corpus of bad inputs, written as a new user would trip over them: configs, traces, AIPerf
 * and CSV files, catalog files, calibration inputs, sweep files and state, plan files, and command-line flags,
 * in eleven classes (296 cases). Every case must end with
 *   - exit status 2 (bad input),
 *   - a message naming the file and the dotted field or the line (or the flag at fault),
 *   - no stack trace (no `    at ` line, no raw `Error:` / `RangeError:` prefix), one line plus at
 *     most one line on what to do (a config with many wrong fields lists up to ten, then a count;
 *     `calibrate` without a target lists the targets),
 *   - nothing written: the case's folder (inputs, and the --out folder when there is one) is
 *     byte for byte what it was before,
 *   - in under 2 s (scaled up by the load average when the machine is busier than its cores).
 *
 * How it runs: 296 Node starts would cost more CPU than the checks themselves on a shared 2-core
 * machine, so every case runs in this process through the command line's own entry
 * (`src/cli/cli.ts` `main`: argv in, exit status out, no process.exit inside), with the working
 * folder, exit code and output streams swapped per call (test/helpers/cli-in-process.ts). The 35
 * cases marked `child` also run as a real `node dist/src/cli/main.js` process, which checks the
 * real exit status, what a user sees on stderr and the bound with Node's start included. The 8
 * marked `processOnly` (special files: a FIFO, /dev/zero) run only as a process: an older build
 * hangs on them, and only a process can be killed out of a hang.
 * SERVESIM_BAD_INPUTS_PROCESSES=1 runs every case as a process (a hang is killed after 20 s), and
 * SERVESIM_CLI=path runs them against another build (how the count of cases that failed before
 * the fixes was measured). Needs `npm run build` (sweep pools run compiled code). A full disk
 * (exit status 1) is in test/output-faults.e2e.test.ts.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess, type CliRun } from './helpers/cli-in-process.js';

const REPO = resolve(import.meta.dirname, '..');
/** The built command line; SERVESIM_CLI points the process runs at another build (to measure an older one). */
const CLI = process.env.SERVESIM_CLI ?? join(REPO, 'dist', 'src', 'cli', 'main.js');
const MLX = join(REPO, 'test', 'fixtures', 'aiperf', 'mlx-qwen3-0.6b-m1');
const SILICON = join(REPO, 'data', 'silicon', 'dynosim-b200-minimax-m25-tp4-isl1k-osl1k.csv');
const ENGINE_BASE = join(REPO, 'calibration', 'minimax-m25-b200-tp4.base.yaml');
const DETOK_JOBS = join(REPO, 'calibration', 'detokenization-jobs.csv');
const SPLITWISE = join(REPO, 'calibration', 'splitwise-perf-model.csv');
const MLX_C1_RUN = join(REPO, 'calibration', 'aiperf-mlx-qwen3-0.6b-c1');

/**
 * The time bound of every case: 2 s on a machine that is not busy. The machines this runs on are
 * shared: when the 1-minute load average is above the number of cores, each process gets a share
 * of a core, so the bound is scaled by load / cores (read once, when the file starts; the factor
 * is printed with a failing case).
 */
const LOAD_FACTOR = Math.max(1, loadavg()[0] / availableParallelism());
const BOUND_MS = 2000 * LOAD_FACTOR;

type Cls =
  | 'silent wrong numbers'
  | 'impossible sizes'
  | 'engine start-up checks'
  | 'bytes'
  | 'paths'
  | 'calibration inputs'
  | 'scoring'
  | 'sweep files and flags'
  | 'sweep state'
  | 'plan files'
  | 'large YAML'
  | 'serve';

type FileBody = string | Buffer;

interface Case {
  cls: Cls;
  name: string;
  /** Files written into the case folder before the run (relative path -> content); a function when they need the shared fixtures. */
  files?: Record<string, FileBody> | (() => Record<string, FileBody>);
  /** Folders or files copied into the case folder (relative destination -> absolute source). */
  copy?: Record<string, string>;
  argv: string[];
  /** What stderr must contain: the file and the dotted field or the line (or the flag). */
  expect: Array<string | RegExp>;
  /** Also run as a real process. */
  child?: boolean;
  /** Most stderr lines allowed (default 2: the error and one line on what to do). */
  maxLines?: number;
  /** Environment variables set for the run (e.g. SERVESIM_CATALOG, relative to the case folder). */
  env?: Record<string, string>;
  /** Special files made in the case folder: a FIFO, or a symlink to a target (e.g. `/dev/zero`). */
  special?: Record<string, 'fifo' | { symlink: string }>;
  /** Run only as a real process (where a hang is killed), never in this process. */
  processOnly?: boolean;
}

// ---- small builders ----------------------------------------------------------------------

/** A run config as YAML (JSON is YAML) from an object. */
const yaml = (value: unknown): string => `${JSON.stringify(value, null, 1)}\n`;
/** A run config with fixed timing, short requests and a few of them, plus `extra` merged in (a source of another type replaces the short one). */
function run(extra: Record<string, unknown> = {}): string {
  const type = (extra as { traffic?: { source?: { type?: string } } }).traffic?.source?.type;
  const source = type === undefined || type === 'synthetic' ? { input_tokens: 64, output_tokens: 8 } : {};
  return yaml(merge({ traffic: { source, stop: { requests: 20 } } }, extra));
}
function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const left = out[key];
    out[key] =
      left !== null &&
      typeof left === 'object' &&
      !Array.isArray(left) &&
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value)
        ? merge(left as Record<string, unknown>, value as Record<string, unknown>)
        : value;
  }
  return out;
}
const role = (extra: Record<string, unknown>) => ({ engine: { workers: { aggregated: extra } } });
const source = (extra: Record<string, unknown>) => ({ traffic: { source: extra } });
const load = (extra: Record<string, unknown>) => ({ traffic: { load: extra } });
const stop = (extra: Record<string, unknown>) => ({ traffic: { stop: extra } });
const replay = (file = 'run.yaml', ...more: string[]) => ['replay', file, '--out', 'out', ...more];
/** A Mooncake trace row. */
const row = (input: number, output: number, timestamp = 0, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    timestamp,
    input_length: input,
    output_length: output,
    hash_ids: Array.from({ length: Math.ceil(input / 512) }, (_, k) => k),
    ...extra,
  });
const traceConfig = (extra: Record<string, unknown> = {}) =>
  run(merge({ traffic: { source: { type: 'trace', path: 'trace.jsonl' }, stop: { requests: 3 } } }, extra));
const sweepFile = (body: Record<string, unknown>) => yaml({ base: 'run.yaml', ...body });
const TWO = 2 ** 31;

/** A roofline run of a catalog model and GPU, plus `extra`. */
const rooflineRun = (extra: Record<string, unknown> = {}) =>
  run(
    merge(
      { engine: { model: 'meta-llama/Llama-3.1-8B', hardware: 'h100_sxm', workers: { aggregated: { timing: { type: 'roofline' } } } } },
      extra,
    ),
  );
/** The bundled H100 entry with `edit` applied to its text: a catalog file of one's own. */
const gpuEntry = (edit: (text: string) => string) => edit(readFileSync(join(REPO, 'data', 'hardware', 'h100_sxm.yaml'), 'utf8'));
/** The bundled Llama-3.1-8B entry with `edit` applied to its text: a model entry of one's own that replaces it. */
const modelEntry = (edit: (text: string) => string) => edit(readFileSync(join(REPO, 'data', 'models', 'llama-3.1-8b.yaml'), 'utf8'));
/** The silicon sample's header, and a row of it with `mode` and `batch_size` set. */
const SILICON_SAMPLE = join(REPO, 'data', 'silicon', 'aic-silicon-sample.csv');
const siliconRows = (mode: string) => {
  const [header, first] = readFileSync(SILICON_SAMPLE, 'utf8').split('\n');
  const columns = header.split(',');
  const cells = first.split(',');
  // silicon_data_source holds no comma in the sample's rows: columns and cells line up.
  cells[columns.indexOf('mode')] = mode;
  return `${header}\n${cells.join(',')}\n`;
};

const PASSES_HEADER = 'duration_ms,prefill_tokens,prefill_pairs,decode_requests,decode_kv_tokens';
/** Pass rows that fit a linear model well: (prefill tokens, decode requests) on a grid. */
function passRows(n: number, extraColumns: (i: number) => string[] = () => []): string[] {
  const rows: string[] = [];
  for (let i = 0; i < n; i++) {
    const p = (i % 4) * 512;
    const b = 1 + ((i * 7) % 13);
    const kv = b * (700 + 37 * i);
    const pairs = (p * p) / 2;
    const ms = 5 + 0.02 * p + 0.00001 * pairs + 0.3 * b + 0.0001 * kv;
    rows.push([ms.toFixed(4), p, pairs, b, kv, ...extraColumns(i)].join(','));
  }
  return rows;
}

// ---- shared fixtures (built once) ---------------------------------------------------------

const shared = mkdtempSync(join(tmpdir(), 'servesim-bad-shared-'));
/** Replay summaries at concurrency 1, 2, 4, 8 (ISL 512, OSL 128): a simulated side for score. */
const SIM = join(shared, 'sim');
/** Replay summaries at concurrency 16 and 32: matches none of the measured points. */
const SIM_ELSEWHERE = join(shared, 'sim-elsewhere');
/** A finished sweep folder (plan.json, points.jsonl of two ok points). */
const SWEEP_DIR = join(shared, 'sweep-out');
const SWEEP_FILES = join(shared, 'sweep-files');

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const cfg = join(shared, 'sim.yaml');
  writeFileSync(cfg, run({ engine: { model: 'Qwen/Qwen3-0.6B' }, ...source({ input_tokens: 512, output_tokens: 128 }) }));
  for (const [dir, levels] of [
    [SIM, [1, 2, 4, 8]],
    [SIM_ELSEWHERE, [16, 32]],
  ] as const) {
    for (const c of levels) {
      const result = await runCliInProcess(['replay', cfg, '--set', `traffic.load.concurrency=${c}`, '--out', join(dir, `c${c}`)], shared);
      if (result.code !== 0) throw new Error(`fixture replay failed: ${result.stderr}`);
    }
  }
  mkdirSync(SWEEP_FILES, { recursive: true });
  writeFileSync(join(SWEEP_FILES, 'run.yaml'), run());
  writeFileSync(join(SWEEP_FILES, 'sweep.yaml'), sweepFile({ grid: { 'traffic.load.concurrency': [1, 2] } }));
  const swept = await runCliInProcess(['sweep', join(SWEEP_FILES, 'sweep.yaml'), '--out', SWEEP_DIR, '--workers', '1'], shared);
  if (swept.code !== 0) throw new Error(`fixture sweep failed: ${swept.stderr}`);
}, 60_000);
afterAll(() => rmSync(shared, { recursive: true, force: true }));

/** The lines of the fixture sweep's points.jsonl, as objects. */
function sweepRecords(): Array<Record<string, unknown>> {
  return readFileSync(join(SWEEP_DIR, 'points.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
/** A copy of the fixture sweep folder with its points.jsonl replaced. */
function damagedSweep(mutate: (records: Array<Record<string, unknown>>) => string): Record<string, FileBody> {
  return {
    'sweep-out/plan.json': readFileSync(join(SWEEP_DIR, 'plan.json')),
    'sweep-out/points.jsonl': mutate(sweepRecords()),
  };
}
/** The concurrency-2 AIPerf export of the fixture, rewritten as a run at a request rate of 2/s. */
function openLoopExport(): string {
  const exported = JSON.parse(readFileSync(join(MLX, 'concurrency2', 'profile_export_aiperf.json'), 'utf8')) as {
    input_config: { phases: Array<Record<string, unknown>> };
  };
  exported.input_config.phases = exported.input_config.phases.map(({ concurrency: _, ...phase }) => ({
    ...phase,
    type: 'request_rate',
    request_rate: 2,
  }));
  return JSON.stringify(exported);
}
/** The concurrency-1 AIPerf export of the fixture with `edit` applied. */
function aiperfJsonWith(edit: (doc: Record<string, Record<string, unknown>>) => void): string {
  const doc = JSON.parse(readFileSync(join(MLX, 'concurrency1', 'profile_export_aiperf.json'), 'utf8')) as Record<
    string,
    Record<string, unknown>
  >;
  edit(doc);
  return JSON.stringify(doc, null, 2);
}
const lines = (records: unknown[]) => records.map((r) => `${typeof r === 'string' ? r : JSON.stringify(r)}\n`).join('');

// ---- the corpus --------------------------------------------------------------------------

const cases: Case[] = [];
const add = (cls: Cls, list: Array<Omit<Case, 'cls'>>) => cases.push(...list.map((c) => ({ cls, ...c })));

add('silent wrong numbers', [
  {
    name: 'input_tokens of 2^31',
    files: { 'run.yaml': run(source({ input_tokens: TWO })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.source.input_tokens'],
    child: true,
  },
  {
    name: 'output_tokens of 2^31',
    files: { 'run.yaml': run(source({ output_tokens: TWO })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.source.output_tokens'],
  },
  {
    name: 'input_tokens of 2^53 - 1',
    files: { 'run.yaml': run(source({ input_tokens: 2 ** 53 - 1 })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.source.input_tokens'],
  },
  {
    name: 'output_tokens of 2^32',
    files: { 'run.yaml': run(source({ output_tokens: 2 ** 32 })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.source.output_tokens'],
  },
  {
    name: 'session new_input_tokens_per_turn of 2^31',
    files: {
      'run.yaml': run({
        traffic: { source: { type: 'synthetic-session', turns: 2, new_input_tokens_per_turn: TWO, output_tokens_per_turn: 4 } },
      }),
    },
    argv: replay(),
    expect: ['run.yaml', 'traffic.source.new_input_tokens_per_turn'],
  },
  {
    name: 'session output_tokens_per_turn of 2^31',
    files: {
      'run.yaml': run({
        traffic: { source: { type: 'synthetic-session', turns: 2, new_input_tokens_per_turn: 8, output_tokens_per_turn: TWO } },
      }),
    },
    argv: replay(),
    expect: ['run.yaml', 'traffic.source.output_tokens_per_turn'],
  },
  {
    name: 'a session whose last turn resends 10^10 tokens',
    files: {
      'run.yaml': run({
        traffic: { source: { type: 'synthetic-session', turns: 100000, new_input_tokens_per_turn: 100000, output_tokens_per_turn: 0 } },
      }),
    },
    argv: replay(),
    expect: ['run.yaml', 'traffic.source.turns'],
  },
  {
    name: 'max_sequences of 2^31',
    files: { 'run.yaml': run(role({ scheduler: { max_sequences: TWO } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.scheduler.max_sequences'],
  },
  {
    name: 'max_batched_tokens of 2^31',
    files: { 'run.yaml': run(role({ scheduler: { max_batched_tokens: TWO } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.scheduler.max_batched_tokens'],
  },
  {
    name: 'block_size of 2^31',
    files: { 'run.yaml': run(role({ kv_cache: { block_size: TWO } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.kv_cache.block_size'],
  },
  {
    name: 'fixed KV blocks of 2^31',
    files: { 'run.yaml': run(role({ kv_cache: { capacity: { type: 'fixed', blocks: TWO } } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.kv_cache.capacity.blocks'],
  },
  {
    name: 'context_length of 2^31',
    files: { 'run.yaml': run({ engine: { context_length: TWO } }) },
    argv: replay(),
    expect: ['run.yaml', 'engine.context_length'],
  },
  {
    name: 'trace block_size of 2^31',
    files: { 'run.yaml': traceConfig(source({ block_size: TWO })), 'trace.jsonl': `${row(100, 4)}\n` },
    argv: replay(),
    expect: ['run.yaml', 'traffic.source.block_size'],
  },
  {
    name: 'synthetic seed of 2^32 (aliases seed 0)',
    files: { 'run.yaml': run(source({ seed: 2 ** 32, random_range_ratio: 0.5 })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.source.seed'],
  },
  {
    name: 'poisson seed of 2^53',
    files: { 'run.yaml': run(load({ type: 'poisson', requests_per_second: 10, seed: 2 ** 53 })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.load.seed'],
  },
  {
    name: 'detokenization chunk_outputs of 2^31',
    files: { 'run.yaml': run({ engine: { detokenization: { base_ms: 0.1, chunk_outputs: TWO } } }) },
    argv: replay(),
    expect: ['run.yaml', 'engine.detokenization.chunk_outputs'],
  },
  {
    name: 'warmup_requests of 2^31 under a time cap',
    files: {
      'run.yaml': yaml({
        traffic: { source: { input_tokens: 64, output_tokens: 8 }, stop: { max_virtual_time_seconds: 1 } },
        report: { warmup_requests: TWO },
      }),
    },
    argv: replay(),
    expect: ['run.yaml', 'report.warmup_requests'],
  },
  {
    name: 'requests of 2^31',
    files: { 'run.yaml': run(stop({ requests: TWO })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.stop.requests'],
  },
  {
    name: 'a memory KV pool of more than 2^31 blocks',
    files: {
      'run.yaml': run(role({ kv_cache: { capacity: { type: 'memory', gpu_memory_gib: 80, weights_gib: 10, kv_bytes_per_token: 1e-6 } } })),
    },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.kv_cache.capacity'],
  },
  {
    name: 'a trace row of 2^31 - 1 input tokens',
    files: {
      'run.yaml': traceConfig(),
      'trace.jsonl': `${row(100, 4)}\n${JSON.stringify({ timestamp: 1, input_length: TWO - 1, output_length: 4, hash_ids: [] })}\n`,
    },
    argv: replay(),
    expect: ['trace.jsonl:2', 'input_length'],
  },
  {
    name: 'a trace row of 2^31 - 1 output tokens',
    files: { 'run.yaml': traceConfig(), 'trace.jsonl': `${row(100, TWO - 1)}\n` },
    argv: replay(),
    expect: ['trace.jsonl:1', 'output_length'],
  },
  {
    name: '--set input_tokens of 2^31',
    files: { 'run.yaml': run() },
    argv: replay('run.yaml', '--set', `traffic.source.input_tokens=${TWO}`),
    expect: ['run.yaml (with --set traffic.source.input_tokens=2147483648)', 'traffic.source.input_tokens'],
  },
  {
    name: 'a sweep grid value of 2^31 input tokens',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({ grid: { 'traffic.source.input_tokens': [64, TWO] } }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'traffic.source.input_tokens'],
    maxLines: 3,
  },
  {
    name: 'replicas of 2^31',
    files: { 'run.yaml': run(role({ parallelism: { replicas: TWO } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.parallelism.replicas'],
  },
  {
    name: 'attention_data of 2^31',
    files: { 'run.yaml': run(role({ parallelism: { attention_data: TWO } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.parallelism.attention_data'],
  },
  {
    name: 'tokenization workers of 2^31',
    files: { 'run.yaml': run({ engine: { tokenization: { workers: TWO, base_ms: 1 } } }) },
    argv: replay(),
    expect: ['run.yaml', 'engine.tokenization.workers'],
  },
  {
    name: 'detokenization workers of 2^31',
    files: { 'run.yaml': run({ engine: { detokenization: { workers: TWO, base_ms: 1 } } }) },
    argv: replay(),
    expect: ['run.yaml', 'engine.detokenization.workers'],
  },
  {
    name: 'concurrency of 2^31',
    files: { 'run.yaml': run(load({ concurrency: TWO })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.load.concurrency'],
  },
  {
    name: 'a calibration base config with 2^31 input tokens',
    files: { 'base.yaml': run(source({ input_tokens: TWO })) },
    argv: ['calibrate', 'engine', '--config', 'base.yaml', '--measured', SILICON, '--select', 'source=hardware', '--out', 'out'],
    expect: ['base.yaml', 'traffic.source.input_tokens'],
  },
  {
    name: 'an engine.precision that is not one',
    files: { 'run.yaml': rooflineRun({ engine: { precision: 'fp6' } }) },
    argv: replay(),
    expect: ['run.yaml', 'engine.precision', 'bf16, fp8, fp4, int4', 'fp6'],
  },
  {
    name: 'SERVESIM_CATALOG naming a folder that does not exist',
    env: { SERVESIM_CATALOG: 'no-such-catalog' },
    files: { 'run.yaml': rooflineRun() },
    argv: replay(),
    expect: ['SERVESIM_CATALOG', 'no-such-catalog', 'no such folder'],
    child: true,
  },
  {
    name: 'SERVESIM_CATALOG naming a file',
    env: { SERVESIM_CATALOG: 'run.yaml' },
    files: { 'run.yaml': rooflineRun() },
    argv: ['catalog'],
    expect: ['SERVESIM_CATALOG', 'run.yaml', 'not a folder'],
  },
  {
    name: "a catalog GPU of one's own with a negative bandwidth",
    env: { SERVESIM_CATALOG: 'catalog' },
    files: {
      'catalog/hardware/my_gpu.yaml': gpuEntry((t) =>
        t
          .replace('id: h100_sxm', 'id: my_gpu')
          .replace(/^name: .*$/m, 'name: My GPU')
          .replace(/^aliases: .*$/m, 'aliases: []')
          .replace(/bandwidth_gb_per_s: 3350/, 'bandwidth_gb_per_s: -3350'),
      ),
      'run.yaml': rooflineRun({ engine: { hardware: 'my_gpu' } }),
    },
    argv: replay(),
    expect: ['catalog/hardware/my_gpu.yaml', 'memory.bandwidth_gb_per_s', '-3350'],
    child: true,
  },
]);

// YAML tags: the YAML library turned an unknown tag into a plain string without a word (and
// printed a raw Node warning for one in --set).
add('silent wrong numbers', [
  {
    name: 'a run config value with a custom tag',
    files: { 'run.yaml': 'engine: {model: !mytag m}\ntraffic: {source: {input_tokens: 64, output_tokens: 8}, stop: {requests: 20}}\n' },
    argv: replay(),
    expect: ['run.yaml:1', '!mytag', 'not supported'],
  },
  {
    name: 'a run config value with !!js/function',
    files: {
      'run.yaml':
        'engine: {model: m}\ntraffic:\n  source: {input_tokens: !!js/function "function () { return 64 }", output_tokens: 8}\n  stop: {requests: 20}\n',
    },
    argv: replay(),
    expect: ['run.yaml:3', '!!js/function', 'not supported'],
  },
  {
    name: 'a --set value with !!js/function',
    files: { 'run.yaml': run() },
    argv: replay('run.yaml', '--set', 'engine.model=!!js/function "x"'),
    expect: ['--set', 'engine.model', '!!js/function', 'not supported'],
    child: true,
  },
  {
    name: 'a sweep file with a custom tag',
    files: { 'run.yaml': run(), 'sweep.yaml': 'base: run.yaml\ngrid:\n  traffic.load.concurrency: !range [1, 4]\n' },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml:3', '!range', 'not supported'],
  },
]);

add('impossible sizes', [
  {
    name: 'concurrency of 10^9',
    files: { 'run.yaml': run(load({ concurrency: 1e9 })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.load.concurrency'],
    child: true,
  },
  {
    name: 'requests of 2^53 - 1',
    files: { 'run.yaml': run(stop({ requests: 2 ** 53 - 1 })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.stop.requests'],
    child: true,
  },
  {
    name: 'requests of 10^9 (memory)',
    files: { 'run.yaml': run(stop({ requests: 1e9 })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.stop.requests', /GB/],
  },
  {
    name: 'an input length of 10^12 tokens',
    files: { 'run.yaml': run(source({ input_tokens: 1e12 })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.source.input_tokens'],
  },
  {
    name: 'an output length of 10^12 tokens',
    files: { 'run.yaml': run(source({ output_tokens: 1e12 })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.source.output_tokens'],
  },
  {
    name: 'a time cap of 10^300 s',
    files: { 'run.yaml': yaml(merge(source({ input_tokens: 64, output_tokens: 8 }), stop({ max_virtual_time_seconds: 1e300 }))) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.stop.max_virtual_time_seconds'],
    child: true,
  },
  {
    name: 'a closed loop that cannot end under its time cap',
    files: {
      'run.yaml': yaml(
        merge(
          merge(
            merge(source({ input_tokens: 64, output_tokens: 8 }), load({ concurrency: 1000 })),
            stop({ max_virtual_time_seconds: 1e6 }),
          ),
          role({ timing: { prefill_ms: 0.5, decode_ms: 0.1 } }),
        ),
      ),
    },
    argv: replay(),
    expect: ['run.yaml', 'traffic.stop.max_virtual_time_seconds'],
  },
  {
    name: 'a Poisson load of 10^6 requests/s for 10^5 s',
    files: { 'run.yaml': yaml(merge(load({ type: 'poisson', requests_per_second: 1e6 }), stop({ max_virtual_time_seconds: 1e5 }))) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.stop.max_virtual_time_seconds'],
  },
  {
    name: 'prefill_ms of 1e308',
    files: { 'run.yaml': run(role({ timing: { prefill_ms: 1e308 } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.timing.prefill_ms'],
    child: true,
  },
  {
    name: 'decode_ms of 1e308',
    files: { 'run.yaml': run(role({ timing: { decode_ms: 1e308 } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.timing.decode_ms'],
  },
  {
    name: 'linear base_ms of 1e308',
    files: { 'run.yaml': run(role({ timing: { type: 'linear', base_ms: 1e308 } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.timing.base_ms'],
  },
  {
    name: 'linear prefill_pair_ns of 1e300',
    files: { 'run.yaml': run(role({ timing: { type: 'linear', base_ms: 1, prefill_pair_ns: 1e300 } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.timing.prefill_pair_ns'],
  },
  {
    name: 'response_overhead.base_ms of 1e308',
    files: { 'run.yaml': run(load({ response_overhead: { base_ms: 1e308 } })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.load.response_overhead.base_ms'],
  },
  {
    name: 'tokenization base_ms of 1e308',
    files: { 'run.yaml': run({ engine: { tokenization: { base_ms: 1e308 } } }) },
    argv: replay(),
    expect: ['run.yaml', 'engine.tokenization.base_ms'],
  },
  {
    name: 'detokenization per_output_us of 1e308',
    files: { 'run.yaml': run({ engine: { detokenization: { per_output_us: 1e308 } } }) },
    argv: replay(),
    expect: ['run.yaml', 'engine.detokenization.per_output_us'],
  },
  {
    name: 'inter_turn_delay_ms of 1e308',
    files: {
      'run.yaml': run({
        traffic: {
          source: {
            type: 'synthetic-session',
            turns: 2,
            new_input_tokens_per_turn: 8,
            output_tokens_per_turn: 4,
            inter_turn_delay_ms: 1e308,
          },
        },
      }),
    },
    argv: replay(),
    expect: ['run.yaml', 'traffic.source.inter_turn_delay_ms'],
  },
  {
    name: 'ramp_up_ms of 1e308',
    files: { 'run.yaml': run(load({ ramp_up_ms: 1e308 })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.load.ramp_up_ms'],
  },
  {
    name: 'gpu_memory_gib of 1e308',
    files: {
      'run.yaml': run(
        role({ kv_cache: { capacity: { type: 'memory', gpu_memory_gib: 1e308, weights_gib: 10, kv_bytes_per_token: 1000 } } }),
      ),
    },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.kv_cache.capacity.gpu_memory_gib'],
  },
  {
    name: 'weights_gib of 1e308',
    files: {
      'run.yaml': run(
        role({ kv_cache: { capacity: { type: 'memory', gpu_memory_gib: 80, weights_gib: 1e308, kv_bytes_per_token: 1000 } } }),
      ),
    },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.kv_cache.capacity.weights_gib'],
  },
  {
    name: 'kv_bytes_per_token of 1e-300',
    files: {
      'run.yaml': run(
        role({ kv_cache: { capacity: { type: 'memory', gpu_memory_gib: 80, weights_gib: 10, kv_bytes_per_token: 1e-300 } } }),
      ),
    },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.kv_cache.capacity'],
  },
  {
    name: 'a Poisson rate of 1e-300 requests/s',
    files: { 'run.yaml': run(load({ type: 'poisson', requests_per_second: 1e-300 })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.load.requests_per_second'],
  },
  {
    name: 'a constant rate of 1e300 requests/s',
    files: { 'run.yaml': run(load({ type: 'constant_rate', requests_per_second: 1e300 })) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.load.requests_per_second'],
  },
  {
    name: 'a trace speedup of 1e-300',
    files: {
      'run.yaml': traceConfig(load({ type: 'trace_timestamps', speedup: 1e-300 })),
      'trace.jsonl': `${row(100, 4)}\n${row(100, 4, 5)}\n`,
    },
    argv: replay(),
    expect: ['run.yaml', 'traffic.load.speedup'],
  },
  {
    name: 'requests_per_load_unit of 1e300',
    files: { 'run.yaml': yaml(merge(source({ input_tokens: 64, output_tokens: 8 }), stop({ requests_per_load_unit: 1e300 }))) },
    argv: replay(),
    expect: ['run.yaml', 'traffic.stop.requests_per_load_unit'],
  },
  {
    name: 'replicas of 10^6',
    files: { 'run.yaml': run(role({ parallelism: { replicas: 1e6 } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.parallelism.replicas'],
  },
  {
    name: 'tensor of 10^9',
    files: { 'run.yaml': run(role({ parallelism: { tensor: 1e9 } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.parallelism.tensor'],
  },
  {
    name: 'max_sequences of 10^7 on 64 attention-DP ranks',
    files: { 'run.yaml': run(role({ scheduler: { max_sequences: 1e7, max_batched_tokens: 1e7 }, parallelism: { attention_data: 64 } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.scheduler.max_sequences'],
  },
  {
    name: 'detokenization workers of 10^6',
    files: { 'run.yaml': run({ engine: { detokenization: { workers: 1e6, base_ms: 0.1 } } }) },
    argv: replay(),
    expect: ['run.yaml', 'engine.detokenization.workers'],
  },
  {
    name: '5 million requests with --per-request',
    files: { 'run.yaml': run(merge(stop({ requests: 5e6 }), source({ output_tokens: 1024 }))) },
    argv: replay('run.yaml', '--per-request'),
    expect: ['run.yaml', 'traffic.stop.requests', '--per-request', /GB/],
    child: true,
  },
  {
    name: '3 million requests with --aiperf',
    files: { 'run.yaml': run(merge(stop({ requests: 3e6 }), source({ output_tokens: 512 }))) },
    argv: replay('run.yaml', '--aiperf'),
    expect: ['run.yaml', 'traffic.stop.requests', '--aiperf'],
  },
  {
    name: 'a trace timestamp of 1e308 ms',
    files: { 'run.yaml': traceConfig(), 'trace.jsonl': `${row(100, 4, 1e308)}\n` },
    argv: replay(),
    expect: ['trace.jsonl:1', 'timestamp'],
  },
  {
    name: 'a trace delay of 1e308 ms',
    files: { 'run.yaml': traceConfig(), 'trace.jsonl': `${row(100, 4, 0, { delay: 1e308, session_id: 's' })}\n` },
    argv: replay(),
    expect: ['trace.jsonl:1', 'delay'],
  },
  {
    name: 'a sweep point with concurrency 10^9',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': [1, 1e9] } }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'traffic.load.concurrency'],
    maxLines: 3,
  },
  {
    name: 'parallelism.expert that does not divide the GPUs',
    files: { 'run.yaml': rooflineRun(role({ parallelism: { tensor: 4, expert: 3 } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.parallelism.expert', 'divide'],
  },
  {
    name: 'parallelism.expert past its limit',
    files: { 'run.yaml': run(role({ parallelism: { expert: 100_000 } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.parallelism.expert', '4,096'],
  },
  {
    name: 'a roofline efficiency cost past the limit on costs',
    files: { 'run.yaml': rooflineRun(role({ timing: { type: 'roofline', efficiency: { pass_overhead_ms: 1e12 } } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.timing.efficiency.pass_overhead_ms', '1,000,000,000'],
  },
  {
    name: 'an engine.frontend cost past the limit on costs',
    files: { 'run.yaml': run({ engine: { frontend: { base_ms: 1e12 } } }) },
    argv: replay(),
    expect: ['run.yaml', 'engine.frontend.base_ms', '1,000,000,000'],
  },
  {
    // 52 MB on one line: parsing it took 16 s and 1.1 GB to find the count wrong.
    name: 'a trace line of 26 million hash ids',
    files: () => ({
      'run.yaml': traceConfig(),
      'trace.jsonl': Buffer.concat([
        Buffer.from(`${row(600, 5)}\n{"timestamp": 1, "input_length": 600, "output_length": 5, "hash_ids": [`),
        Buffer.alloc(26_000_000 * 2, '0,'),
        Buffer.from('0]}\n'),
      ]),
    }),
    argv: replay(),
    expect: ['trace.jsonl:2', 'longer than 3.0 MiB', 'block_size 512'],
    child: true,
  },
]);

add('engine start-up checks', [
  {
    name: 'max_batched_tokens below max_sequences',
    files: { 'run.yaml': run(role({ scheduler: { max_batched_tokens: 8, max_sequences: 256 } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.scheduler.max_batched_tokens', 'max_sequences'],
    child: true,
  },
  {
    name: 'max_batched_tokens below the block size',
    files: { 'run.yaml': run(role({ scheduler: { max_batched_tokens: 4 } })) },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.scheduler.max_batched_tokens'],
  },
  {
    name: 'a fixed KV pool smaller than context_length',
    files: {
      'run.yaml': run(merge({ engine: { context_length: 4096 } }, role({ kv_cache: { capacity: { type: 'fixed', blocks: 10 } } }))),
    },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.kv_cache.capacity'],
  },
  {
    name: "a fixed KV pool smaller than one request's prompt",
    files: {
      'run.yaml': run(
        merge(source({ input_tokens: 1024, output_tokens: 128 }), role({ kv_cache: { capacity: { type: 'fixed', blocks: 10 } } })),
      ),
    },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.kv_cache.capacity'],
  },
  {
    name: 'a memory KV pool smaller than one request',
    files: {
      'run.yaml': run(
        merge(
          source({ input_tokens: 4096, output_tokens: 128 }),
          role({ kv_cache: { capacity: { type: 'memory', gpu_memory_gib: 1, weights_gib: 0.85, kv_bytes_per_token: 1e6 } } }),
        ),
      ),
    },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.kv_cache.capacity'],
  },
  {
    name: 'every request longer than context_length',
    files: { 'run.yaml': run({ engine: { context_length: 1024 }, ...source({ input_tokens: 2048 }) }) },
    argv: replay(),
    expect: ['run.yaml', 'engine.context_length'],
    child: true,
  },
  {
    name: "every session's first turn longer than context_length",
    files: {
      'run.yaml': run({
        engine: { context_length: 100 },
        traffic: { source: { type: 'synthetic-session', turns: 3, new_input_tokens_per_turn: 200, output_tokens_per_turn: 4 } },
      }),
    },
    argv: replay(),
    expect: ['run.yaml', 'engine.context_length'],
  },
  {
    name: 'every trace row longer than context_length',
    files: { 'run.yaml': traceConfig({ engine: { context_length: 50 } }), 'trace.jsonl': `${row(100, 4)}\n${row(200, 4, 1)}\n` },
    argv: replay(),
    expect: ['trace.jsonl', 'engine.context_length'],
  },
  {
    name: 'a prompt larger than max_batched_tokens without chunked prefill',
    files: {
      'run.yaml': run(merge(source({ input_tokens: 1024 }), role({ scheduler: { max_batched_tokens: 512, chunked_prefill: false } }))),
    },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.scheduler.max_batched_tokens'],
  },
  {
    name: 'max_batched_tokens below context_length without chunked prefill',
    files: {
      'run.yaml': run(
        merge({ engine: { context_length: 4096 } }, role({ scheduler: { max_batched_tokens: 2048, chunked_prefill: false } })),
      ),
    },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.scheduler.max_batched_tokens', 'context_length'],
  },
  {
    name: 'a trace row larger than max_batched_tokens without chunked prefill',
    files: {
      'run.yaml': traceConfig(role({ scheduler: { max_batched_tokens: 512, chunked_prefill: false } })),
      'trace.jsonl': `${row(100, 4)}\n${row(1000, 4, 1)}\n`,
    },
    argv: replay(),
    expect: ['trace.jsonl:2', 'max_batched_tokens'],
  },
  {
    name: 'random lengths whose shortest prompt exceeds context_length',
    files: { 'run.yaml': run({ engine: { context_length: 2048 }, ...source({ input_tokens: 4000, random_range_ratio: 0.9 }) }) },
    argv: replay(),
    expect: ['run.yaml', 'engine.context_length'],
  },
  {
    name: 'a sweep point with max_batched_tokens below max_sequences',
    files: {
      'run.yaml': run(),
      'sweep.yaml': sweepFile({ grid: { 'engine.workers.aggregated.scheduler.max_batched_tokens': [8192, 16] } }),
    },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'max_batched_tokens'],
    maxLines: 3,
  },
  {
    name: "a KV pool smaller than a session's last turn",
    files: {
      'run.yaml': run({
        traffic: { source: { type: 'synthetic-session', turns: 4, new_input_tokens_per_turn: 100, output_tokens_per_turn: 50 } },
        ...role({ kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 20 } } }),
      }),
    },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.kv_cache.capacity'],
  },
  {
    name: 'weights larger than the GPUs',
    files: {
      'run.yaml': run(
        role({
          parallelism: { tensor: 2 },
          kv_cache: { capacity: { type: 'memory', gpu_memory_gib: 80, weights_gib: 200, kv_bytes_per_token: 1000 } },
        }),
      ),
    },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.kv_cache.capacity'],
  },
  {
    name: 'an auto KV pool whose weights do not fit the GPUs',
    files: {
      'run.yaml': run({
        engine: {
          model: 'deepseek-ai/DeepSeek-R1',
          hardware: 'h100_sxm',
          workers: { aggregated: { kv_cache: { capacity: { type: 'auto' } } } },
        },
      }),
    },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.kv_cache.capacity', 'no room', 'GiB of weights'],
    child: true,
  },
  {
    name: 'an auto KV pool smaller than context_length',
    files: {
      'run.yaml': run({
        engine: {
          model: 'meta-llama/Llama-3.1-8B',
          hardware: 'h100_sxm',
          context_length: 100_000_000,
          workers: { aggregated: { kv_cache: { capacity: { type: 'auto' } } } },
        },
      }),
    },
    argv: replay(),
    expect: ['run.yaml', 'engine.workers.aggregated.kv_cache.capacity', 'context_length', 'vLLM'],
  },
]);

const invalidUtf8 = (before: string, after: string) =>
  Buffer.concat([Buffer.from(before), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from(after)]);
const withNul = (before: string, after: string) => Buffer.concat([Buffer.from(before), Buffer.from([0]), Buffer.from(after)]);
const deepFlow = (levels: number) => `engine:\n  model: ${'['.repeat(levels)}1${']'.repeat(levels)}\n`;
const deepBlock = (levels: number) => {
  let text = 'engine:\n';
  for (let i = 1; i <= levels; i++) text += `${' '.repeat(i)}k${i}:\n`;
  return `${text}${' '.repeat(levels + 1)}v: 1\n`;
};
const manyKeys = (n: number, indent = '') => Array.from({ length: n }, (_, i) => `${indent}key_${i}: ${i}`).join('\n') + '\n';

add('bytes', [
  {
    name: 'a config with invalid UTF-8 on line 3',
    files: { 'run.yaml': invalidUtf8('engine:\n  model: x\n  hardware: "', '"\n') },
    argv: replay(),
    expect: ['run.yaml:3', /UTF-8/],
    child: true,
  },
  {
    name: 'a config with a NUL byte on line 2',
    files: { 'run.yaml': withNul('engine:\n  model: a', 'b\n') },
    argv: replay(),
    expect: ['run.yaml:2', /NUL/],
  },
  {
    name: 'a trace with invalid UTF-8 on line 2',
    files: {
      'run.yaml': traceConfig(),
      'trace.jsonl': invalidUtf8(
        `${row(100, 4)}\n{"timestamp": 1, "session_id": "`,
        `", "input_length": 10, "output_length": 1, "hash_ids": [0]}\n`,
      ),
    },
    argv: replay(),
    expect: ['trace.jsonl:2', /UTF-8/],
  },
  {
    name: 'a trace with a NUL byte on line 3',
    files: { 'run.yaml': traceConfig(), 'trace.jsonl': withNul(`${row(100, 4)}\n${row(100, 4, 1)}\n${row(100, 4, 2)}`, '\n') },
    argv: replay(),
    expect: ['trace.jsonl:3', /NUL/],
  },
  {
    name: 'a 50 MB config of unknown keys',
    files: { 'run.yaml': `engine:\n${manyKeys(2_500_000, '  ')}` },
    argv: replay(),
    expect: ['run.yaml', /MiB|KiB/],
    child: true,
  },
  {
    name: 'a config nested 3,000 levels deep (flow)',
    files: { 'run.yaml': deepFlow(3000) },
    argv: replay(),
    expect: ['run.yaml', /nest|deep/],
  },
  {
    name: 'a config nested 100 levels deep (block)',
    files: { 'run.yaml': deepBlock(100) },
    argv: replay(),
    expect: ['run.yaml', /nest|deep/],
  },
  {
    name: 'a sweep file nested 3,000 levels deep',
    files: { 'run.yaml': run(), 'sweep.yaml': `base: run.yaml\nset:\n  engine.model: ${'['.repeat(3000)}1${']'.repeat(3000)}\n` },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', /nest|deep/],
  },
  {
    name: 'a sweep file over the size limit',
    files: {
      'run.yaml': run(),
      'sweep.yaml': `base: run.yaml\ngrid:\n  traffic.load.concurrency: [${Array.from({ length: 1_200_000 }, (_, i) => i + 1).join(', ')}]\n`,
    },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', /MiB|KiB/],
  },
  {
    name: 'a config written in UTF-16',
    files: { 'run.yaml': Buffer.from(`\ufeffengine:\n  model: x\n`, 'utf16le') },
    argv: replay(),
    expect: ['run.yaml:1', /UTF-8|NUL/],
  },
  {
    name: 'a measured CSV with invalid UTF-8',
    files: { 'measured.csv': invalidUtf8('concurrency,ttft_ms\n1,10\n2,', '\n') },
    argv: ['score', '--sim', SIM, '--measured', 'measured.csv', '--out', 'out'],
    expect: ['measured.csv:3', /UTF-8/],
  },
  {
    name: 'a detokenization CSV with a NUL byte',
    files: { 'jobs.csv': withNul('pass_end_ms,server,outputs,received_ms\n1,0,4,2\n2,0,4', ',3\n') },
    argv: ['calibrate', 'detokenization', '--input', 'jobs.csv', '--out', 'out'],
    expect: ['jobs.csv:3', /NUL/],
  },
  {
    name: 'an AIPerf JSON with invalid UTF-8',
    copy: { 'run1/profile_export.jsonl': join(MLX, 'concurrency1', 'profile_export.jsonl') },
    files: {
      'run1/profile_export_aiperf.json': invalidUtf8(
        readFileSync(join(MLX, 'concurrency1', 'profile_export_aiperf.json'), 'utf8').slice(0, 100),
        '"}',
      ),
    },
    argv: ['score', '--sim', SIM, '--measured', 'run1', '--out', 'out'],
    expect: ['profile_export_aiperf.json:', /UTF-8/],
  },
  {
    name: 'a config of binary bytes',
    files: { 'run.yaml': Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xff, 0xfe, 0x00]) },
    argv: replay(),
    expect: ['run.yaml:1'],
  },
  {
    name: 'a sweep base with invalid UTF-8',
    files: { 'run.yaml': invalidUtf8('engine:\n  model: "', '"\n'), 'sweep.yaml': sweepFile({}) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['run.yaml:2', /UTF-8/],
  },
  {
    name: 'a calibration base config with a NUL byte',
    files: { 'base.yaml': withNul('engine:\n  model: x\ntraffic:\n  source: {input_tokens: 10', '}\n') },
    argv: ['calibrate', 'engine', '--config', 'base.yaml', '--measured', SILICON, '--select', 'source=hardware', '--out', 'out'],
    expect: ['base.yaml:4', /NUL/],
  },
  {
    name: 'a CSV of gaps with invalid UTF-8',
    files: { 'gaps.csv': invalidUtf8('output_tokens,gap_ms\n10,1.5\n', ',2\n') },
    argv: ['calibrate', 'response-overhead', '--input', 'gaps.csv', '--out', 'out'],
    expect: ['gaps.csv:3', /UTF-8/],
  },
  {
    name: 'a catalog file that is not UTF-8',
    env: { SERVESIM_CATALOG: 'catalog' },
    files: {
      'catalog/hardware/my_gpu.yaml': Buffer.concat([
        Buffer.from(
          gpuEntry((t) =>
            t
              .replace('id: h100_sxm', 'id: my_gpu')
              .replace(/^aliases: .*$/m, 'aliases: []')
              .replace(/^name: .*$/m, 'name: My GPU'),
          ),
        ),
        Buffer.from([0x23, 0x20, 0xe9, 0x0a]),
      ]),
      'run.yaml': rooflineRun({ engine: { hardware: 'my_gpu' } }),
    },
    argv: replay(),
    expect: ['catalog/hardware/my_gpu.yaml:', 'UTF-8'],
  },
]);

add('paths', [
  {
    name: 'a config that does not exist',
    argv: replay('missing.yaml'),
    expect: ['missing.yaml', /no such file|does not exist/],
    child: true,
  },
  { name: 'a config that is a folder', files: { 'conf.d/x': 'x' }, argv: replay('conf.d'), expect: ['conf.d', /folder|directory/] },
  {
    name: 'a trace that does not exist',
    files: { 'run.yaml': traceConfig() },
    argv: replay(),
    expect: ['trace.jsonl', 'traffic.source.path'],
    child: true,
  },
  {
    name: 'a trace path that is a folder',
    files: { 'run.yaml': traceConfig(), 'trace.jsonl/x': 'x' },
    argv: replay(),
    expect: ['trace.jsonl', 'traffic.source.path'],
  },
  {
    name: '--out that is a file',
    files: { 'run.yaml': run(), out: 'not a folder\n' },
    argv: replay(),
    expect: ['--out', 'out'],
    child: true,
  },
  {
    name: '--out inside a file',
    files: { 'run.yaml': run(), file: 'x\n' },
    argv: ['replay', 'run.yaml', '--out', 'file/sub'],
    expect: ['--out', 'file'],
  },
  {
    name: '--aiperf with --out that is a file',
    files: { 'run.yaml': run(), out: 'x\n' },
    argv: replay('run.yaml', '--aiperf'),
    expect: ['--out', 'out'],
  },
  { name: 'a sweep file that does not exist', argv: ['sweep', 'nope.yaml', '--out', 'out'], expect: ['nope.yaml'] },
  {
    name: 'a sweep base that does not exist',
    files: { 'sweep.yaml': yaml({ base: 'missing.yaml' }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'base', 'missing.yaml'],
  },
  {
    name: 'sweep --out that is a file',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({}), out: 'x\n' },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['--out', 'out'],
  },
  {
    name: 'score --sim that does not exist',
    files: {},
    argv: ['score', '--sim', 'nosim', '--measured', join(MLX, 'concurrency1'), '--out', 'out'],
    expect: ['nosim'],
  },
  {
    name: 'score --measured that does not exist',
    argv: ['score', '--sim', SIM, '--measured', 'nomeasured', '--out', 'out'],
    expect: ['nomeasured'],
  },
  {
    name: 'score --out that is a file',
    files: { out: 'x\n' },
    argv: ['score', '--sim', SIM, '--measured', MLX, '--out', 'out'],
    expect: ['--out', 'out'],
  },
  {
    name: 'score --baseline that does not exist',
    argv: ['score', '--sim', SIM, '--measured', MLX, '--baseline', 'nobase', '--out', 'out'],
    expect: ['nobase'],
  },
  {
    name: 'calibrate --input that does not exist',
    argv: ['calibrate', 'detokenization', '--input', 'nojobs.csv', '--out', 'out'],
    expect: ['nojobs.csv'],
  },
  {
    name: 'calibrate --input that is a folder',
    files: { 'passes/x': 'x' },
    argv: ['calibrate', 'pass-time', '--input', 'passes', '--out', 'out'],
    expect: ['passes', /folder|directory/],
  },
  {
    name: 'calibrate --out that is a file',
    files: { out: 'x\n' },
    argv: ['calibrate', 'detokenization', '--input', DETOK_JOBS, '--out', 'out'],
    expect: ['--out', 'out'],
  },
  {
    name: 'calibrate engine --config that does not exist',
    argv: ['calibrate', 'engine', '--config', 'nobase.yaml', '--measured', SILICON, '--select', 'source=hardware', '--out', 'out'],
    expect: ['nobase.yaml'],
  },
  {
    name: 'calibrate engine --out that is a file',
    files: { out: 'x\n' },
    argv: ['calibrate', 'engine', '--config', ENGINE_BASE, '--measured', SILICON, '--select', 'source=hardware', '--out', 'out'],
    expect: ['--out', 'out'],
  },
  { name: 'sweep merge of a folder that does not exist', argv: ['sweep', 'merge', 'nodir', '--out', 'out'], expect: ['nodir'] },
  {
    name: 'sweep merge --out that is a file',
    files: { out: 'x\n' },
    argv: ['sweep', 'merge', SWEEP_DIR, '--out', 'out'],
    expect: ['--out', 'out'],
  },
  {
    name: 'calibrate response-overhead --aiperf that does not exist',
    argv: ['calibrate', 'response-overhead', '--aiperf', 'norun', '--out', 'out'],
    expect: ['norun'],
  },
  {
    name: 'an engine.model not in the catalog with roofline timing',
    files: { 'run.yaml': rooflineRun({ engine: { model: 'acme/no-such-model-7b' } }) },
    argv: replay(),
    expect: ['run.yaml', 'engine.model', 'acme/no-such-model-7b', 'not in the catalog', 'servesim catalog models'],
    child: true,
  },
  {
    name: 'an engine.hardware not in the catalog with capacity auto written',
    files: {
      'run.yaml': run({
        engine: { model: 'qwen3-8b', hardware: 'tpu-v9', workers: { aggregated: { kv_cache: { capacity: { type: 'auto' } } } } },
      }),
    },
    argv: replay(),
    expect: ['run.yaml', 'engine.hardware', 'tpu-v9', 'not in the catalog'],
  },
  {
    name: 'a catalog model whose stated parameters disagree with its architecture',
    files: {
      'run.yaml': rooflineRun(),
      'catalog/models/llama-3.1-8b.yaml': modelEntry((t) => t.replace('layers: 32', 'layers: 80')),
    },
    env: { SERVESIM_CATALOG: 'catalog' },
    argv: replay(),
    expect: [join('catalog', 'models', 'llama-3.1-8b.yaml'), 'parameters.total', '3 %'],
  },
  {
    name: 'a catalog model with more KV heads than heads',
    files: {
      'run.yaml': rooflineRun(),
      'catalog/models/llama-3.1-8b.yaml': modelEntry((t) => t.replace('kv_heads: 8', 'kv_heads: 64')),
    },
    env: { SERVESIM_CATALOG: 'catalog' },
    argv: replay(),
    expect: [join('catalog', 'models', 'llama-3.1-8b.yaml'), 'architecture.attention.kv_heads', 'at most heads'],
  },
  // Special files: reading a device never ends and reading a FIFO waits for a writer; each path
  // must be a regular file, checked before it is read. Run as processes only: an older build
  // hangs on them, which only a process can be killed out of.
  {
    name: 'a sweep base of /dev/zero',
    files: { 'sweep.yaml': yaml({ base: '/dev/zero' }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'base', '/dev/zero', 'not a regular file'],
    processOnly: true,
  },
  {
    name: 'a sweep base of /dev/urandom',
    files: { 'sweep.yaml': yaml({ base: '/dev/urandom' }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'base', '/dev/urandom', 'not a regular file'],
    processOnly: true,
  },
  {
    name: 'a run config that is a FIFO',
    special: { 'run.yaml': 'fifo' },
    argv: replay(),
    expect: ['run.yaml', 'FIFO', 'not a regular file'],
    processOnly: true,
  },
  {
    name: 'a trace that is a FIFO',
    files: { 'run.yaml': traceConfig() },
    special: { 'trace.jsonl': 'fifo' },
    argv: replay(),
    expect: ['run.yaml', 'traffic.source.path', 'trace.jsonl', 'FIFO'],
    processOnly: true,
  },
  {
    name: 'a trace that is a symlink to /dev/urandom',
    files: { 'run.yaml': traceConfig() },
    special: { 'trace.jsonl': { symlink: '/dev/urandom' } },
    argv: replay(),
    expect: ['run.yaml', 'traffic.source.path', 'trace.jsonl', 'character device'],
    processOnly: true,
  },
  {
    name: 'a catalog model file that is a FIFO',
    special: { 'cat/models/x.yaml': 'fifo' },
    env: { SERVESIM_CATALOG: 'cat' },
    argv: ['catalog', 'models'],
    expect: [join('cat', 'models', 'x.yaml'), 'FIFO'],
    processOnly: true,
  },
  {
    name: 'a catalog of symlinks to /dev/zero',
    files: { 'run.yaml': rooflineRun() },
    special: {
      'cat/models/a.yaml': { symlink: '/dev/zero' },
      'cat/models/b.yaml': { symlink: '/dev/zero' },
      'cat/hardware/c.yaml': { symlink: '/dev/zero' },
    },
    env: { SERVESIM_CATALOG: 'cat' },
    argv: replay(),
    expect: [join('cat', 'models', 'a.yaml'), 'character device'],
    processOnly: true,
  },
  {
    name: 'score --measured that is a FIFO',
    special: { 'measured.csv': 'fifo' },
    argv: ['score', '--sim', SIM, '--measured', 'measured.csv', '--out', 'out'],
    expect: ['measured.csv', 'FIFO'],
    processOnly: true,
  },
]);

add('calibration inputs', [
  {
    name: 'a header-only detokenization CSV',
    files: { 'jobs.csv': 'pass_end_ms,server,outputs,received_ms\n' },
    argv: ['calibrate', 'detokenization', '--input', 'jobs.csv', '--out', 'out'],
    expect: ['jobs.csv', /no rows|no data/],
    child: true,
  },
  {
    name: 'an empty detokenization CSV',
    files: { 'jobs.csv': '' },
    argv: ['calibrate', 'detokenization', '--input', 'jobs.csv', '--out', 'out'],
    expect: ['jobs.csv'],
  },
  {
    name: '--holdout 1.5',
    argv: ['calibrate', 'detokenization', '--input', DETOK_JOBS, '--holdout', '1.5', '--out', 'out'],
    expect: ['--holdout', '1.5'],
    child: true,
  },
  {
    name: '--holdout -0.1',
    argv: ['calibrate', 'detokenization', '--input', DETOK_JOBS, '--holdout', '-0.1', '--out', 'out'],
    expect: ['--holdout', '-0.1'],
  },
  {
    name: '--holdout abc',
    argv: ['calibrate', 'detokenization', '--input', DETOK_JOBS, '--holdout', 'abc', '--out', 'out'],
    expect: ['--holdout'],
  },
  {
    name: '--holdout 1',
    argv: ['calibrate', 'pass-time', '--input', SPLITWISE, '--layout', 'prefill-decode', '--holdout', '1', '--out', 'out'],
    expect: ['--holdout'],
  },
  {
    name: 'response-overhead without an input flag',
    argv: ['calibrate', 'response-overhead', '--out', 'out'],
    expect: ['--aiperf', '--input'],
    child: true,
  },
  {
    name: 'response-overhead with both input flags',
    files: { 'gaps.csv': 'output_tokens,gap_ms\n1,2\n' },
    argv: ['calibrate', 'response-overhead', '--aiperf', MLX_C1_RUN, '--input', 'gaps.csv', '--out', 'out'],
    expect: ['--aiperf', '--input'],
  },
  {
    name: '--requests-per-slot 0',
    argv: [
      'calibrate',
      'engine',
      '--config',
      ENGINE_BASE,
      '--measured',
      SILICON,
      '--select',
      'source=hardware',
      '--requests-per-slot',
      '0',
      '--out',
      'out',
    ],
    expect: ['--requests-per-slot'],
    child: true,
  },
  {
    name: '--requests-per-slot -5',
    argv: [
      'calibrate',
      'engine',
      '--config',
      ENGINE_BASE,
      '--measured',
      SILICON,
      '--select',
      'source=hardware',
      '--requests-per-slot',
      '-5',
      '--out',
      'out',
    ],
    expect: ['--requests-per-slot'],
  },
  {
    name: '--range-ratio 1.5',
    argv: [
      'calibrate',
      'engine',
      '--config',
      ENGINE_BASE,
      '--measured',
      SILICON,
      '--select',
      'source=hardware',
      '--range-ratio',
      '1.5',
      '--out',
      'out',
    ],
    expect: ['--range-ratio'],
  },
  {
    name: '--threads 0',
    argv: [
      'calibrate',
      'engine',
      '--config',
      ENGINE_BASE,
      '--measured',
      SILICON,
      '--select',
      'source=hardware',
      '--threads',
      '0',
      '--out',
      'out',
    ],
    expect: ['--threads'],
  },
  {
    name: '--threads 1.5',
    argv: [
      'calibrate',
      'engine',
      '--config',
      ENGINE_BASE,
      '--measured',
      SILICON,
      '--select',
      'source=hardware',
      '--threads',
      '1.5',
      '--out',
      'out',
    ],
    expect: ['--threads'],
  },
  {
    name: '--refine -1',
    argv: [
      'calibrate',
      'engine',
      '--config',
      ENGINE_BASE,
      '--measured',
      SILICON,
      '--select',
      'source=hardware',
      '--refine',
      '-1',
      '--out',
      'out',
    ],
    expect: ['--refine'],
  },
  {
    name: 'a pass-time fit on one row',
    files: { 'passes.csv': `${PASSES_HEADER}\n${passRows(1).join('\n')}\n` },
    argv: ['calibrate', 'pass-time', '--input', 'passes.csv', '--out', 'out'],
    expect: ['passes.csv', '--force'],
    child: true,
  },
  {
    name: 'a pass-time fit on three rows for five constants',
    files: { 'passes.csv': `${PASSES_HEADER}\n${passRows(3).join('\n')}\n` },
    argv: ['calibrate', 'pass-time', '--input', 'passes.csv', '--out', 'out'],
    expect: ['passes.csv', '--force'],
  },
  {
    name: 'a CSV header naming a column twice',
    files: { 'passes.csv': `${PASSES_HEADER},prefill_tokens\n${passRows(20, (i) => [String(i)]).join('\n')}\n` },
    argv: ['calibrate', 'pass-time', '--input', 'passes.csv', '--out', 'out'],
    expect: ['passes.csv:1', 'prefill_tokens'],
  },
  {
    name: 'a pass-time fit on duplicated columns',
    files: {
      'passes.csv': `duration_ms,prefill_tokens,decode_requests,decode_kv_tokens\n${Array.from({ length: 20 }, (_, i) => `${(3 + 0.5 * i).toFixed(2)},0,${i + 1},${(i + 1) * 1000}`).join('\n')}\n`,
    },
    argv: ['calibrate', 'pass-time', '--input', 'passes.csv', '--out', 'out'],
    expect: ['passes.csv', 'decode_requests', 'decode_kv_tokens', '--force'],
  },
  {
    name: 'a pass-time fit over rows of two models',
    files: { 'passes.csv': `${PASSES_HEADER},model\n${passRows(24, (i) => [i % 2 === 0 ? 'llama-70b' : 'llama-7b']).join('\n')}\n` },
    argv: ['calibrate', 'pass-time', '--input', 'passes.csv', '--out', 'out'],
    expect: ['passes.csv', 'model', '--select', '--force'],
  },
  {
    name: 'an engine fit on one training point',
    argv: [
      'calibrate',
      'engine',
      '--config',
      ENGINE_BASE,
      '--measured',
      SILICON,
      '--select',
      'source=hardware',
      '--train',
      'lowest:1',
      // The physics form (the default for a catalog model and GPU) holds each factor near the catalog's value: one point does.
      '--form',
      'linear',
      '--out',
      'out',
    ],
    expect: ['--train', '--force'],
  },
  {
    name: '--train lowest:3 finding one point',
    argv: [
      'calibrate',
      'engine',
      '--config',
      ENGINE_BASE,
      '--measured',
      SILICON,
      '--select',
      'source=hardware',
      '--select',
      'concurrency=4',
      '--form',
      'linear',
      '--out',
      'out',
    ],
    expect: ['--train lowest:3', '1', '--force'],
  },
  {
    name: 'response-overhead on an open-loop run',
    copy: { 'run1/profile_export.jsonl': join(MLX, 'concurrency2', 'profile_export.jsonl') },
    files: {
      'run1/profile_export_aiperf.json': openLoopExport(),
    },
    argv: ['calibrate', 'response-overhead', '--aiperf', 'run1', '--out', 'out'],
    expect: ['run1', /open[- ]loop/, '--force'],
  },
  {
    name: 'a job received before its pass ended',
    files: { 'jobs.csv': 'pass_end_ms,server,outputs,received_ms\n1,0,4,2\n5,0,4,3\n' },
    argv: ['calibrate', 'detokenization', '--input', 'jobs.csv', '--out', 'out'],
    expect: ['jobs.csv:3', 'received_ms'],
  },
  {
    name: 'a job with a word for outputs',
    files: { 'jobs.csv': 'pass_end_ms,server,outputs,received_ms\n1,0,four,2\n' },
    argv: ['calibrate', 'detokenization', '--input', 'jobs.csv', '--out', 'out'],
    expect: ['jobs.csv:2', 'outputs'],
  },
  {
    name: 'a prefill-decode table without its columns',
    files: { 'perf.csv': 'model,prompt_size\nx,512\n' },
    argv: ['calibrate', 'pass-time', '--layout', 'prefill-decode', '--input', 'perf.csv', '--out', 'out'],
    expect: ['perf.csv:1', 'batch_size'],
  },
  {
    name: 'response-overhead on gaps all at one output length and load',
    files: { 'gaps.csv': 'output_tokens,gap_ms\n128,1.5\n128,1.7\n128,1.2\n' },
    argv: ['calibrate', 'response-overhead', '--input', 'gaps.csv', '--out', 'out'],
    expect: ['gaps.csv', 'one point', '--force'],
  },
  {
    name: 'a gap CSV with negative output tokens',
    files: { 'gaps.csv': 'output_tokens,gap_ms\n10,1.5\n-3,1.4\n' },
    argv: ['calibrate', 'response-overhead', '--input', 'gaps.csv', '--out', 'out'],
    expect: ['gaps.csv:3', 'output_tokens'],
  },
  {
    name: '--select on a column that does not exist',
    argv: ['calibrate', 'pass-time', '--layout', 'prefill-decode', '--input', SPLITWISE, '--select', 'gpu=a100', '--out', 'out'],
    expect: ['splitwise-perf-model.csv:1', 'gpu'],
  },
  {
    name: '--select matching no row',
    argv: ['calibrate', 'pass-time', '--layout', 'prefill-decode', '--input', SPLITWISE, '--select', 'model=nothing', '--out', 'out'],
    expect: ['splitwise-perf-model.csv', 'model=nothing'],
  },
  {
    name: 'a four-term fit without its columns',
    files: {
      'jobs.csv': `pass_end_ms,server,outputs,received_ms\n${Array.from({ length: 10 }, (_, i) => `${i * 10},0,${i + 1},${i * 10 + 1 + i * 0.1}`).join('\n')}\n`,
    },
    argv: ['calibrate', 'detokenization', '--input', 'jobs.csv', '--model', 'four-term', '--out', 'out'],
    expect: ['jobs.csv', 'first_outputs'],
  },
  {
    name: 'a malformed --map',
    argv: ['calibrate', 'detokenization', '--input', DETOK_JOBS, '--map', 'outputs', '--out', 'out'],
    expect: ['--map', 'outputs'],
  },
  {
    name: 'engine measured CSV without a metric column',
    files: { 'points.csv': 'concurrency,isl,osl,throughput_x\n1,1024,1024,5\n2,1024,1024,9\n' },
    argv: ['calibrate', 'engine', '--config', ENGINE_BASE, '--measured', 'points.csv', '--out', 'out'],
    expect: ['points.csv:1', 'metric'],
  },
  {
    name: 'a --train that is not an expression',
    argv: [
      'calibrate',
      'engine',
      '--config',
      ENGINE_BASE,
      '--measured',
      SILICON,
      '--select',
      'source=hardware',
      '--train',
      'the low ones',
      '--out',
      'out',
    ],
    expect: ['--train'],
  },
  {
    name: 'a score --train that is not an expression',
    argv: ['score', '--sim', SIM, '--measured', MLX, '--train', 'the low ones', '--out', 'out'],
    expect: ['--train the low ones', 'lowest:N'],
  },
  {
    name: 'engine --metrics naming no metric',
    argv: [
      'calibrate',
      'engine',
      '--config',
      ENGINE_BASE,
      '--measured',
      SILICON,
      '--select',
      'source=hardware',
      '--metrics',
      'time_to_first_byte.avg',
      '--out',
      'out',
    ],
    expect: ['time_to_first_byte'],
  },
  // The targets, what each fits and an example of each: the lines on what to do are the list.
  { name: 'calibrate without a target', argv: ['calibrate'], expect: [/argument|target/], maxLines: 16 },
  {
    name: 'response-overhead on a folder without a per-request export',
    files: { 'empty/readme.txt': 'x' },
    argv: ['calibrate', 'response-overhead', '--aiperf', 'empty', '--out', 'out'],
    expect: ['empty'],
  },
  {
    name: 'engine --set breaking the base config',
    argv: [
      'calibrate',
      'engine',
      '--config',
      ENGINE_BASE,
      '--measured',
      SILICON,
      '--select',
      'source=hardware',
      '--set',
      'traffic.load.concurrency=0',
      '--out',
      'out',
    ],
    expect: ['minimax-m25-b200-tp4.base.yaml', 'traffic.load.concurrency'],
  },
  {
    name: 'a header-only gap CSV',
    files: { 'gaps.csv': 'output_tokens,gap_ms\n' },
    argv: ['calibrate', 'response-overhead', '--input', 'gaps.csv', '--out', 'out'],
    expect: ['gaps.csv'],
  },
  {
    name: 'a holdout that leaves two rows for two constants',
    files: { 'gaps.csv': 'output_tokens,gap_ms\n10,1.5\n20,1.6\n30,1.7\n' },
    argv: ['calibrate', 'response-overhead', '--input', 'gaps.csv', '--holdout', '0.6', '--out', 'out'],
    expect: ['gaps.csv', '--force'],
  },
  {
    name: 'calibrate catalog on a file with no usable row',
    files: { 'points.csv': siliconRows('disagg') },
    argv: ['calibrate', 'catalog', '--measured', 'points.csv', '--write', 'efficiency.yaml'],
    expect: ['points.csv', 'no usable row'],
    child: true,
  },
  {
    name: "calibrate catalog on a file without the sample's columns",
    files: { 'points.csv': 'concurrency,ttft_ms,tpot_ms\n4,100,10\n' },
    argv: ['calibrate', 'catalog', '--measured', 'points.csv'],
    expect: ['points.csv:1', 'model_path'],
  },
  {
    name: 'calibrate catalog --rounds 0',
    argv: ['calibrate', 'catalog', '--rounds', '0'],
    expect: ['--rounds 0'],
  },
  {
    name: 'calibrate catalog --write naming a folder',
    files: { 'tables/readme.txt': 'x' },
    argv: ['calibrate', 'catalog', '--write', 'tables'],
    expect: ['--write tables', 'folder'],
  },
]);

add('scoring', [
  {
    name: 'a measured AIPerf JSON with a duplicated key',
    files: () => ({
      'run1/profile_export_aiperf.json': readFileSync(join(MLX, 'concurrency1', 'profile_export_aiperf.json'), 'utf8').replace(
        /("time_to_first_token": \{\n(\s*)"unit": "ms",)/,
        '$1\n$2"avg": 1,',
      ),
    }),
    argv: ['score', '--sim', SIM, '--measured', 'run1', '--out', 'out'],
    expect: [/profile_export_aiperf\.json:\d+: time_to_first_token\.avg: the key "avg" appears twice/],
  },
  {
    name: 'a measured AIPerf JSON with a negative time_to_first_token.avg',
    files: () => ({ 'run1/profile_export_aiperf.json': aiperfJsonWith((doc) => (doc.time_to_first_token.avg = -5)) }),
    argv: ['score', '--sim', SIM, '--measured', 'run1', '--out', 'out'],
    expect: ['profile_export_aiperf.json', 'time_to_first_token.avg', 'got -5'],
  },
  {
    name: 'a measured AIPerf JSON with a list in place of time_to_first_token',
    files: () => ({
      'run1/profile_export_aiperf.json': aiperfJsonWith((doc) => ((doc as Record<string, unknown>).time_to_first_token = [1, 2])),
    }),
    argv: ['score', '--sim', SIM, '--measured', 'run1', '--out', 'out'],
    expect: ['profile_export_aiperf.json', 'time_to_first_token', 'got a list'],
  },
  {
    name: 'a header-only measured CSV beside one with rows',
    files: { 'full.csv': 'concurrency,isl,osl,ttft_ms\n1,512,128,10\n', 'm.csv': 'concurrency,isl,osl,ttft_ms\n' },
    argv: ['score', '--sim', SIM, '--measured', 'full.csv', 'm.csv', '--out', 'out'],
    expect: ['m.csv:1', 'no rows'],
  },
  {
    name: 'a negative concurrency in a measured CSV',
    files: { 'm.csv': 'concurrency,isl,osl,ttft_ms\n1,512,128,10\n-2,512,128,11\n' },
    argv: ['score', '--sim', SIM, '--measured', 'm.csv', '--out', 'out'],
    expect: ['m.csv:3', 'concurrency', '"-2"'],
  },
  {
    name: 'a measured AIPerf JSON of another schema',
    files: { 'run1/profile_export_aiperf.json': '{"foo": 1}\n' },
    argv: ['score', '--sim', SIM, '--measured', 'run1', '--out', 'out'],
    expect: ['profile_export_aiperf.json'],
    child: true,
  },
  {
    name: 'a measured CSV without a metric column',
    files: { 'm.csv': 'concurrency,isl,osl\n1,512,128\n' },
    argv: ['score', '--sim', SIM, '--measured', 'm.csv', '--out', 'out'],
    expect: ['m.csv:1', 'metric'],
  },
  {
    name: 'a measured CSV with two columns for one metric',
    files: { 'm.csv': 'concurrency,isl,osl,ttft_ms,silicon_ttft_ms\n1,512,128,10,11\n' },
    argv: ['score', '--sim', SIM, '--measured', 'm.csv', '--out', 'out'],
    expect: ['m.csv:1', 'ttft_ms', 'silicon_ttft_ms'],
  },
  {
    name: 'a measured CSV header naming a column twice',
    files: { 'm.csv': 'concurrency,isl,osl,ttft_ms,ttft_ms\n1,512,128,10,11\n' },
    argv: ['score', '--sim', SIM, '--measured', 'm.csv', '--out', 'out'],
    expect: ['m.csv:1', 'ttft_ms'],
  },
  {
    name: 'a metric that does not exist',
    argv: ['score', '--sim', SIM, '--measured', MLX, '--metrics', 'time_to_last_token.avg', '--out', 'out'],
    expect: ['time_to_last_token'],
  },
  {
    name: 'a statistic that does not exist',
    argv: ['score', '--sim', SIM, '--measured', MLX, '--metrics', 'time_to_first_token.p42', '--out', 'out'],
    expect: ['p42'],
  },
  {
    name: 'no simulated point matches a measured one',
    argv: ['score', '--sim', SIM_ELSEWHERE, '--measured', MLX, '--out', 'out'],
    expect: ['concurrency', /16/, /1\b/],
    child: true,
  },
  {
    name: 'a sweep whose every point failed',
    files: () => damagedSweep((records) => lines(records.map((r) => ({ ...r, status: 'failed', summary: null, error: 'test: failed' })))),
    argv: ['score', '--sim', 'sweep-out', '--measured', MLX, '--out', 'out'],
    expect: ['sweep-out', /no simulated point|0 simulated/],
  },
  {
    name: 'a header-only measured CSV',
    files: { 'm.csv': 'concurrency,ttft_ms\n' },
    argv: ['score', '--sim', SIM, '--measured', 'm.csv', '--out', 'out'],
    expect: ['m.csv'],
  },
  {
    name: '--select on a column nobody has',
    argv: ['score', '--sim', SIM, '--measured', SILICON, '--select', 'gpu=b200', '--out', 'out'],
    expect: ['--select', 'gpu'],
  },
  {
    name: '--select matching no measured row',
    argv: ['score', '--sim', SIM, '--measured', SILICON, '--select', 'source=simulator', '--out', 'out'],
    expect: ['source=simulator'],
  },
  {
    name: 'a malformed --max-mape',
    argv: ['score', '--sim', SIM, '--measured', MLX, '--max-mape', 'ttft', '--out', 'out'],
    expect: ['--max-mape'],
  },
  {
    name: '--group-by a key nobody has',
    argv: ['score', '--sim', SIM, '--measured', MLX, '--group-by', 'gpu', '--out', 'out'],
    expect: ['--group-by', 'gpu'],
  },
  {
    name: '--sim that is a text file',
    files: { 'notes.txt': 'hello\n' },
    argv: ['score', '--sim', 'notes.txt', '--measured', MLX, '--out', 'out'],
    expect: ['notes.txt'],
  },
  {
    name: 'a measured CSV with a word for a metric',
    files: { 'm.csv': 'concurrency,isl,osl,ttft_ms\n1,512,128,fast\n' },
    argv: ['score', '--sim', SIM, '--measured', 'm.csv', '--out', 'out'],
    expect: ['m.csv:2', 'ttft_ms'],
  },
  {
    name: 'an empty measured folder',
    files: { 'runs/readme.txt': 'x' },
    argv: ['score', '--sim', SIM, '--measured', 'runs', '--out', 'out'],
    expect: ['runs'],
  },
  {
    name: 'a simulated points.jsonl with a damaged line',
    files: () => damagedSweep((records) => lines([records[0], '{"id": "abc', records[1]])),
    argv: ['score', '--sim', 'sweep-out', '--measured', MLX, '--out', 'out'],
    expect: ['points.jsonl:2'],
  },
  {
    name: 'a truncated measured AIPerf JSON',
    copy: { 'run1/profile_export.jsonl': join(MLX, 'concurrency1', 'profile_export.jsonl') },
    files: {
      'run1/profile_export_aiperf.json': readFileSync(join(MLX, 'concurrency1', 'profile_export_aiperf.json'), 'utf8').slice(0, 2000),
    },
    argv: ['score', '--sim', SIM, '--measured', 'run1', '--out', 'out'],
    expect: [/profile_export_aiperf\.json:\d+/],
  },
  {
    name: '--map from a column that does not exist',
    files: { 'm.csv': 'concurrency,isl,osl,ttft_ms\n1,512,128,10\n' },
    argv: ['score', '--sim', SIM, '--measured', 'm.csv', '--map', 'first_token=time_to_first_token.avg', '--out', 'out'],
    expect: ['m.csv:1', 'first_token'],
  },
  {
    name: '--map to a metric that does not exist',
    files: { 'm.csv': 'concurrency,isl,osl,first\n1,512,128,10\n' },
    argv: ['score', '--sim', SIM, '--measured', 'm.csv', '--map', 'first=time_to_first.avg', '--out', 'out'],
    expect: ['m.csv', 'time_to_first'],
  },
  {
    name: 'a summary.json that is not a replay summary',
    files: { 'sim/summary.json': '{"metrics": 1}\n' },
    argv: ['score', '--sim', 'sim', '--measured', MLX, '--out', 'out'],
    expect: ['summary.json', 'summary'],
  },
  {
    name: 'a measured CSV row with an empty key',
    files: { 'm.csv': 'concurrency,isl,osl,ttft_ms\n,512,128,10\n' },
    argv: ['score', '--sim', SIM, '--measured', 'm.csv', '--out', 'out'],
    expect: ['m.csv:2', 'concurrency'],
  },
]);

add('sweep files and flags', [
  {
    name: 'a grid of 10^6 points',
    files: {
      'run.yaml': run(),
      'sweep.yaml': sweepFile({
        grid: {
          'traffic.load.concurrency': { range: { min: 1, max: 1000, step: 1 } },
          'traffic.source.seed': { range: { min: 0, max: 999, step: 1 } },
        },
      }),
    },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'grid', /1,?000,?000/],
    child: true,
  },
  {
    name: 'repeats multiplying a grid past the limit',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': [1, 2, 4, 8, 16] }, repeats: 100000 }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'repeats'],
  },
  {
    name: '--workers 0',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({}) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out', '--workers', '0'],
    expect: ['--workers'],
  },
  {
    name: '--workers -1',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({}) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out', '--workers', '-1'],
    expect: ['--workers'],
  },
  {
    name: '--workers 1.5',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({}) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out', '--workers', '1.5'],
    expect: ['--workers'],
  },
  {
    name: '--workers abc',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({}) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out', '--workers', 'abc'],
    expect: ['--workers'],
  },
  {
    name: '--shard -1/2',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({}) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out', '--shard', '-1/2'],
    expect: ['--shard', '-1/2'],
    child: true,
  },
  {
    name: '--shard 2/2',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({}) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out', '--shard', '2/2'],
    expect: ['--shard', '2'],
  },
  {
    name: '--shard 1/0',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({}) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out', '--shard', '1/0'],
    expect: ['--shard'],
  },
  {
    name: '--shard x',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({}) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out', '--shard', 'x'],
    expect: ['--shard'],
  },
  {
    name: '--shard 1.5/2',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({}) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out', '--shard', '1.5/2'],
    expect: ['--shard'],
  },
  {
    name: '--shard-count 0',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({}) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out', '--shard', '0/1', '--shard-count', '0'],
    expect: ['--shard'],
  },
  {
    name: '--point-timeout 0',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({}) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out', '--point-timeout', '0'],
    expect: ['--point-timeout'],
  },
  {
    name: '--point-timeout -5',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({}) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out', '--point-timeout', '-5'],
    expect: ['--point-timeout'],
  },
  {
    name: '--point-timeout abc',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({}) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out', '--point-timeout', 'abc'],
    expect: ['--point-timeout'],
  },
  {
    name: 'an unknown top-level key',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({ grids: {} }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'grids'],
  },
  {
    name: 'an empty grid list',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': [] } }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'grid.traffic.load.concurrency'],
  },
  {
    name: 'a grid key that is not a dotted path',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({ grid: { 'traffic load': [1] } }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'grid.traffic load'],
  },
  {
    name: 'a range step of 0',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': { range: { min: 1, max: 4, step: 0 } } } }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'grid.traffic.load.concurrency.range'],
  },
  {
    name: 'a range max below min',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': { range: { min: 8, max: 4, step: 1 } } } }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'grid.traffic.load.concurrency.range'],
  },
  {
    name: 'a log2 range from 0',
    files: {
      'run.yaml': run(),
      'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': { range: { min: 0, max: 4, scale: 'log2' } } } }),
    },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'grid.traffic.load.concurrency.range'],
  },
  {
    name: 'zip lists of unequal lengths',
    files: {
      'run.yaml': run(),
      'sweep.yaml': sweepFile({ zip: { 'traffic.source.input_tokens': [1, 2], 'traffic.source.output_tokens': [1] } }),
    },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'zip.traffic.source.output_tokens'],
  },
  {
    name: 'one key in set and grid',
    files: {
      'run.yaml': run(),
      'sweep.yaml': sweepFile({ set: { 'traffic.load.concurrency': 1 }, grid: { 'traffic.load.concurrency': [1, 2] } }),
    },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'grid.traffic.load.concurrency'],
  },
  {
    name: 'repeats 0',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({ repeats: 0 }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'repeats'],
  },
  {
    name: 'repeats 1.5',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({ repeats: 1.5 }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'repeats'],
  },
  {
    name: 'a name with a space',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({ name: 'my sweep' }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'name'],
  },
  {
    name: 'a base that is a list',
    files: { 'sweep.yaml': yaml({ base: [1, 2] }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'base'],
  },
  {
    name: 'a point with concurrency 0',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': [1, 0] } }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'traffic.load.concurrency'],
    maxLines: 3,
  },
  {
    name: 'two identical points',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': [2, 2] } }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'point 1'],
    maxLines: 3,
  },
  {
    name: 'an empty sweep file',
    files: { 'sweep.yaml': '' },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'base'],
  },
  {
    name: 'a sweep file that is a list',
    files: { 'sweep.yaml': '- base: run.yaml\n' },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml'],
  },
  {
    name: 'a sweep file with a YAML syntax error',
    files: { 'run.yaml': run(), 'sweep.yaml': 'base: run.yaml\ngrid:\n  traffic.load.concurrency: [1, 2\n' },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: [/sweep\.yaml:\d/],
  },
  {
    name: 'a range of more than 100,000 values',
    files: {
      'run.yaml': run(),
      'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': { range: { min: 1, max: 1e6, step: 1 } } } }),
    },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'grid.traffic.load.concurrency.range'],
  },
  {
    name: 'sweep merge of two different sweeps',
    files: { 'other/plan.json': `${JSON.stringify({ name: 'other', axes: [], log2_axes: [], points: [] })}\n`, 'other/points.jsonl': '' },
    argv: ['sweep', 'merge', SWEEP_DIR, 'other', '--out', 'out'],
    expect: ['plan.json', 'other'],
  },
  {
    name: 'sweep merge of a folder that is not a sweep',
    files: { 'notasweep/x.txt': 'x' },
    argv: ['sweep', 'merge', 'notasweep', '--out', 'out'],
    expect: ['notasweep', 'plan.json'],
  },
  {
    name: 'a grid value of the wrong type',
    files: { 'run.yaml': run(), 'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': [1, { n: 2 }] } }) },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'traffic.load.concurrency'],
    maxLines: 3,
  },
  { name: 'sweep merge without --out', argv: ['sweep', 'merge', SWEEP_DIR], expect: ['out'] },
  { name: 'an unknown flag', files: { 'run.yaml': run() }, argv: replay('run.yaml', '--per-reqest'), expect: ['per-reqest'] },
]);

const lockOf = (pid: number, started: string) => `${JSON.stringify({ host: hostnameOf(), pid, started })}\n`;
function hostnameOf(): string {
  return spawnSync('hostname', { encoding: 'utf8' }).stdout.trim();
}

add('sweep state', [
  {
    name: 'an ok record without a summary',
    files: () => ({
      ...damagedSweep((records) => lines([records[0], { ...records[1], summary: null }])),
      'run.yaml': run(),
      'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': [1, 2] } }),
    }),
    argv: ['sweep', 'sweep.yaml', '--out', 'sweep-out'],
    expect: ['points.jsonl:2', 'summary'],
    child: true,
  },
  {
    name: 'a metric value of "fast"',
    files: () => ({
      ...damagedSweep((records) => {
        const summary = records[0].summary as { metrics: Record<string, Record<string, unknown>> };
        summary.metrics.time_to_first_token.avg = 'fast';
        return lines(records);
      }),
      'run.yaml': run(),
      'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': [1, 2] } }),
    }),
    argv: ['sweep', 'sweep.yaml', '--out', 'sweep-out'],
    expect: ['points.jsonl:1', 'summary.metrics.time_to_first_token.avg'],
  },
  {
    name: 'a record of an unknown status',
    files: () => ({
      ...damagedSweep((records) => lines([{ ...records[0], status: 'done' }, records[1]])),
      'run.yaml': run(),
      'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': [1, 2] } }),
    }),
    argv: ['sweep', 'sweep.yaml', '--out', 'sweep-out'],
    expect: ['points.jsonl:1', 'status'],
  },
  {
    name: 'a record whose overrides are a list',
    files: () => ({
      ...damagedSweep((records) => lines([records[0], { ...records[1], overrides: [1] }])),
      'run.yaml': run(),
      'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': [1, 2] } }),
    }),
    argv: ['sweep', 'sweep.yaml', '--out', 'sweep-out'],
    expect: ['points.jsonl:2', 'overrides'],
  },
  {
    name: 'a damaged line in the middle',
    files: () => ({
      ...damagedSweep((records) => lines([records[0], '{"id":', records[1]])),
      'run.yaml': run(),
      'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': [1, 2] } }),
    }),
    argv: ['sweep', 'sweep.yaml', '--out', 'sweep-out'],
    expect: ['points.jsonl:2'],
  },
  {
    name: 'score of a sweep with a metric value of "fast"',
    files: () =>
      damagedSweep((records) => {
        const summary = records[1].summary as { metrics: Record<string, Record<string, unknown>> };
        summary.metrics.inter_token_latency.avg = 'fast';
        return lines(records);
      }),
    argv: ['score', '--sim', 'sweep-out', '--measured', MLX, '--out', 'out'],
    expect: ['points.jsonl:2', 'summary.metrics.inter_token_latency.avg'],
  },
  {
    name: 'merge of a folder with an ok record without a summary',
    files: () => damagedSweep((records) => lines([{ ...records[0], summary: null }, records[1]])),
    argv: ['sweep', 'merge', 'sweep-out', '--out', 'out'],
    expect: ['points.jsonl:1', 'summary'],
  },
  {
    name: 'merge of two different ok results for one point',
    files: () => ({
      ...damagedSweep((records) => lines(records)),
      'other/plan.json': readFileSync(join(SWEEP_DIR, 'plan.json')),
      'other/points.jsonl': lines(
        sweepRecords().map((r, i) => {
          if (i !== 0) return r;
          const summary = structuredClone(r.summary) as { metrics: Record<string, Record<string, number>> };
          summary.metrics.time_to_first_token.avg += 1;
          return { ...r, summary };
        }),
      ),
    }),
    argv: ['sweep', 'merge', 'sweep-out', 'other', '--out', 'out'],
    expect: [join('sweep-out', 'points.jsonl'), join('other', 'points.jsonl')],
    child: true,
  },
  {
    name: "merge --out onto another sweep's folder",
    files: () => ({
      ...damagedSweep((records) => lines(records)),
      'out/plan.json': `${JSON.stringify({ name: 'other', axes: ['x'], log2_axes: [], points: [{ index: 0, id: 'aaaaaaaaaaaa', overrides: { x: 1 } }] }, null, 2)}\n`,
      'out/points.jsonl': '',
    }),
    argv: ['sweep', 'merge', 'sweep-out', '--out', 'out'],
    expect: ['--out', 'out', 'plan.json'],
  },
  {
    name: 'a folder locked by a running sweep',
    files: () => ({
      'run.yaml': run(),
      'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': [1, 2] } }),
      ...damagedSweep((records) => lines(records)),
    }),
    argv: ['sweep', 'sweep.yaml', '--out', 'sweep-out'],
    expect: [join('sweep-out', '.lock'), /in use|running/],
  },
  {
    name: 'merge with a damaged plan.json',
    files: { 'sweep-out/plan.json': '{"name": "x", "points": [', 'sweep-out/points.jsonl': '' },
    argv: ['sweep', 'merge', 'sweep-out', '--out', 'out'],
    expect: ['plan.json'],
  },
  {
    name: 'a record whose id is a number',
    files: () => ({
      ...damagedSweep((records) => lines([records[0], { ...records[1], id: 42 }])),
      'run.yaml': run(),
      'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': [1, 2] } }),
    }),
    argv: ['sweep', 'sweep.yaml', '--out', 'sweep-out'],
    expect: ['points.jsonl:2', 'id'],
  },
  {
    name: 'a record whose run counts are words',
    files: () => ({
      ...damagedSweep((records) => {
        const summary = records[1].summary as { run: Record<string, unknown> };
        summary.run.request_count = 'twenty';
        return lines(records);
      }),
      'run.yaml': run(),
      'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': [1, 2] } }),
    }),
    argv: ['sweep', 'sweep.yaml', '--out', 'sweep-out'],
    expect: ['points.jsonl:2', 'summary.run.request_count'],
  },
  {
    name: 'a record that is a list',
    files: () => ({
      ...damagedSweep((records) => lines([records[0], [1, 2]])),
      'run.yaml': run(),
      'sweep.yaml': sweepFile({ grid: { 'traffic.load.concurrency': [1, 2] } }),
    }),
    argv: ['sweep', 'sweep.yaml', '--out', 'sweep-out'],
    expect: ['points.jsonl:2'],
  },
]);

/** A small capacity plan (Qwen3-8B on an L40S, short requests and replays), plus `extra` merged in. */
const planFile = (extra: Record<string, unknown> = {}) =>
  yaml(
    merge(
      {
        model: 'Qwen/Qwen3-8B',
        hardware: { l40s: { price_per_gpu_hour: 0.9 } },
        traffic: { source: { input_tokens: 256, output_tokens: 32 } },
        slo: { time_to_first_token: { p90: 300 } },
        search: { max_sequences: [8] },
        rates: { duration_s: 20, min_requests: 200 },
      },
      extra,
    ),
  );
const plan = (...more: string[]) => ['plan', 'plan.yaml', '--out', 'out', ...more];
/** An earlier plan's results in `out/`, which a refused run must leave as they are. */
const earlierPlan = (points: string): Record<string, FileBody> => ({
  'out/plan.json': '{"name": "plan"}\n',
  'out/plan.csv': 'id\n',
  'out/points.jsonl': points,
});

add('plan files', [
  {
    name: 'a negative SLO limit',
    files: { 'plan.yaml': planFile({ slo: { time_to_first_token: { p90: -3 } } }) },
    argv: plan(),
    expect: ['plan.yaml', 'slo.time_to_first_token.p90', '-3'],
    child: true,
  },
  {
    name: 'only an inter-token latency bound',
    files: { 'plan.yaml': yaml({ ...JSON.parse(planFile()), slo: { inter_token_latency: { p90: 30 } } }) },
    argv: plan(),
    expect: ['plan.yaml', 'slo', /time_to_first_token or request_latency/],
  },
  {
    name: 'a model not in the catalog',
    files: { 'plan.yaml': planFile({ model: 'Qwen/Qwen9-1T' }) },
    argv: plan(),
    expect: ['plan.yaml', 'model', 'Qwen/Qwen9-1T'],
  },
  {
    name: 'a GPU not in the catalog',
    files: { 'plan.yaml': planFile({ hardware: { l40z: { price_per_gpu_hour: 1 } } }) },
    argv: plan(),
    expect: ['plan.yaml', 'hardware.l40z'],
  },
  {
    name: 'a price of zero',
    files: { 'plan.yaml': planFile({ hardware: { l40s: { price_per_gpu_hour: 0 } } }) },
    argv: plan(),
    expect: ['plan.yaml', 'hardware.l40s.price_per_gpu_hour'],
  },
  {
    name: 'a GPU budget of 10^6',
    files: { 'plan.yaml': planFile({ search: { gpu_budget: 1_000_000 } }) },
    argv: plan(),
    expect: ['plan.yaml', 'search.gpu_budget'],
  },
  {
    name: 'a search space of 60,000 candidates',
    files: { 'plan.yaml': planFile({ search: { gpu_budget: 60_000 } }) },
    argv: plan(),
    expect: ['plan.yaml', 'search', /60,000 candidates/],
    child: true,
  },
  {
    name: 'a tensor size of 2^31',
    files: { 'plan.yaml': planFile({ search: { tensor: [1, TWO] } }) },
    argv: plan(),
    expect: ['plan.yaml', 'search.tensor.1'],
  },
  {
    name: 'a seed of 2^32',
    files: { 'plan.yaml': planFile({ rates: { seed: 2 ** 32 } }) },
    argv: plan(),
    expect: ['plan.yaml', 'rates.seed'],
  },
  {
    name: 'replays of 10^7 s of arrivals',
    files: { 'plan.yaml': planFile({ rates: { duration_s: 1e7 } }) },
    argv: plan(),
    expect: ['plan.yaml', 'rates.duration_s'],
  },
  {
    name: 'input_tokens of 2^31',
    files: { 'plan.yaml': planFile({ traffic: { source: { input_tokens: TWO } } }) },
    argv: plan(),
    expect: ['plan.yaml', 'traffic.source.input_tokens'],
  },
  {
    name: 'a context_length shorter than every prompt',
    files: { 'plan.yaml': planFile({ engine: { context_length: 100 } }) },
    argv: plan(),
    expect: ['plan.yaml', 'engine.context_length'],
  },
  {
    name: 'an engine key the plan sets',
    files: { 'plan.yaml': planFile({ engine: { workers: { aggregated: { scheduler: { max_sequences: 64 } } } } }) },
    argv: plan(),
    expect: ['plan.yaml', 'engine.workers.aggregated.scheduler.max_sequences', 'search.max_sequences'],
  },
  {
    name: 'a disaggregated layout without its ratios',
    files: { 'plan.yaml': planFile({ search: { workers: ['aggregated', 'disaggregated'] } }) },
    argv: plan(),
    expect: ['plan.yaml', 'search.workers.1', 'ratios'],
    child: true,
  },
  {
    name: 'a prefill:decode ratio of 1:0',
    files: { 'plan.yaml': planFile({ search: { workers: [{ disaggregated: { ratios: ['1:0'] } }] } }) },
    argv: plan(),
    expect: ['plan.yaml', 'search.workers.0.disaggregated.ratios.0', '1:0'],
  },
  {
    name: 'a KV transfer with no disaggregated candidate',
    files: { 'plan.yaml': planFile({ engine: { kv_transfer: { latency_ms: 1 } } }) },
    argv: plan(),
    expect: ['plan.yaml', 'engine.kv_transfer', 'disaggregated'],
  },
  {
    name: 'disaggregated candidates on a GPU whose link the catalog does not give',
    files: { 'plan.yaml': planFile({ search: { workers: [{ disaggregated: { ratios: ['1:1'] } }] } }) },
    argv: plan(),
    expect: ['plan.yaml', 'engine.kv_transfer.bandwidth_gb_per_s', 'l40s-1p-tp1-1d-tp1-mbt8192-seq8'],
  },
  {
    name: 'an unknown engine key',
    files: { 'plan.yaml': planFile({ engine: { bogus: 1 } }) },
    argv: plan(),
    expect: ['plan.yaml', 'engine.bogus'],
  },
  {
    name: 'a disaggregated entry with an unknown key',
    files: { 'plan.yaml': planFile({ search: { workers: [{ disaggregated: { prefill_decode: ['1:3'] } }] } }) },
    argv: plan(),
    expect: ['plan.yaml', 'search.workers.0.disaggregated.prefill_decode', /unknown key/],
  },
  {
    name: 'a trace that does not exist',
    files: { 'plan.yaml': yaml({ ...JSON.parse(planFile()), traffic: { source: { type: 'trace', path: 'missing.jsonl' } } }) },
    argv: plan(),
    expect: ['plan.yaml', 'traffic.source.path', 'missing.jsonl'],
  },
  {
    name: 'a plan file that is a list',
    files: { 'plan.yaml': '- model: Qwen/Qwen3-8B\n' },
    argv: plan(),
    expect: ['plan.yaml', /mapping/],
  },
  {
    name: 'a plan file that does not exist',
    files: {},
    argv: ['plan', 'nowhere.yaml', '--out', 'out'],
    expect: ['nowhere.yaml'],
  },
  {
    name: '--workers 0 on a plan',
    files: { 'plan.yaml': planFile() },
    argv: plan('--workers', '0'),
    expect: ['--workers'],
  },
  {
    name: 'a plan --out that is a file',
    files: { 'plan.yaml': planFile(), out: 'not a folder\n' },
    argv: plan(),
    expect: ['--out', /is a file/],
  },
  {
    name: "a damaged line in an earlier plan's log",
    files: { 'plan.yaml': planFile(), ...earlierPlan('{"id": "x"\n{}\n') },
    argv: plan(),
    expect: [join('out', 'points.jsonl:1')],
    child: true,
  },
  {
    name: "a record of the wrong shape in an earlier plan's log",
    files: { 'plan.yaml': planFile(), ...earlierPlan(lines([{ id: 'abc', overrides: {}, status: 'ok', summary: null, error: null }])) },
    argv: plan(),
    expect: [join('out', 'points.jsonl:1'), 'summary'],
  },
  {
    name: 'a plan folder locked by a running plan',
    files: { 'plan.yaml': planFile(), ...earlierPlan('') },
    argv: plan(),
    expect: [join('out', '.lock'), 'in use by a running plan'],
  },
]);

const serve = (...more: string[]) => ['serve', 'run.yaml', '--port', '0', ...more];

add('serve', [
  {
    name: 'an unknown engine key',
    files: { 'run.yaml': run({ engine: { bogus: 1 } }) },
    argv: serve(),
    expect: ['run.yaml', 'engine.bogus'],
  },
  {
    name: 'serve --speed 0',
    files: { 'run.yaml': run() },
    argv: serve('--speed', '0'),
    expect: ['--speed'],
  },
  {
    name: 'serve --max-waiting 0',
    files: { 'run.yaml': run() },
    argv: serve('--max-waiting', '0'),
    expect: ['--max-waiting'],
  },
  {
    name: 'serve --tokenizer that is not JSON',
    files: { 'run.yaml': run(), 'tokenizer.json': 'not json\n' },
    argv: serve('--tokenizer', 'tokenizer.json'),
    expect: ['tokenizer.json', /not JSON/],
  },
  {
    name: 'serve --tokenizer that does not exist',
    files: { 'run.yaml': run() },
    argv: serve('--tokenizer', 'missing.json'),
    expect: ['missing.json', 'ENOENT'],
  },
]);

add('large YAML', [
  {
    name: 'a config of 40,000 unknown keys (over the size limit)',
    files: { 'run.yaml': `engine:\n${manyKeys(40_000, '  ')}` },
    argv: replay(),
    expect: ['run.yaml', /KiB/],
    child: true,
  },
  {
    // 12,000 keys took about 3 s before the duplicate-key check was made linear.
    name: 'a config of 12,000 unknown keys',
    files: { 'run.yaml': `engine:\n${manyKeys(12_000, '  ')}` },
    argv: replay(),
    expect: ['run.yaml', 'engine.key_0', /more problems/],
    child: true,
    maxLines: 11,
  },
  {
    name: 'a config of 12,000 unknown top-level keys',
    files: { 'run.yaml': manyKeys(12_000) },
    argv: replay(),
    expect: ['run.yaml', 'key_0'],
    maxLines: 11,
  },
  {
    name: 'a sweep file setting 10,000 keys',
    files: { 'run.yaml': run(), 'sweep.yaml': `base: run.yaml\nset:\n${manyKeys(10_000, '  ').replace(/key_/g, 'engine.key_')}` },
    argv: ['sweep', 'sweep.yaml', '--out', 'out'],
    expect: ['sweep.yaml', 'engine.key_0'],
    maxLines: 3,
  },
  {
    name: 'a model label of a 20,000-item list',
    files: { 'run.yaml': `engine:\n  model:\n${Array.from({ length: 20_000 }, (_, i) => `    - ${i}`).join('\n')}\n` },
    argv: replay(),
    expect: ['run.yaml', 'engine.model'],
  },
  {
    name: 'a config of aliases expanding exponentially',
    files: {
      'run.yaml': `a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n`,
    },
    argv: replay(),
    expect: ['run.yaml'],
  },
  {
    name: 'a 60 MB config',
    files: { 'run.yaml': `engine:\n  model: "${'x'.repeat(60 * 1024 * 1024)}"\n` },
    argv: replay(),
    expect: ['run.yaml', /MiB/],
  },
  {
    name: 'a config of two YAML documents',
    files: { 'run.yaml': 'engine: {model: a}\n---\nengine: {model: b}\n' },
    argv: replay(),
    expect: ['run.yaml:2', /documents/],
  },
]);

// ---- running a case -----------------------------------------------------------------------

/** Path -> sha256 of every file (and every folder, as a marker) under `dir`. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (path: string, rel: string): void => {
    const stat = lstatSync(path);
    if (stat.isDirectory()) {
      out.set(`${rel}/`, 'dir');
      for (const name of readdirSync(path).sort()) visit(join(path, name), rel === '' ? name : `${rel}/${name}`);
    } else if (stat.isSymbolicLink()) {
      out.set(rel, `symlink to ${readlinkSync(path)}`);
    } else if (!stat.isFile()) {
      out.set(rel, 'special file');
    } else {
      out.set(rel, createHash('sha256').update(readFileSync(path)).digest('hex'));
    }
  };
  visit(dir, '');
  return out;
}

function setUp(c: Case): string {
  const dir = mkdtempSync(join(tmpdir(), 'servesim-bad-'));
  for (const [rel, from] of Object.entries(c.copy ?? {})) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    cpSync(from, join(dir, rel), { recursive: true });
  }
  const files = typeof c.files === 'function' ? c.files() : (c.files ?? {});
  for (const [rel, body] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), body);
  }
  for (const [rel, kind] of Object.entries(c.special ?? {})) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    if (kind === 'fifo') execFileSync('mkfifo', [join(dir, rel)]);
    else symlinkSync(kind.symlink, join(dir, rel));
  }
  return dir;
}

/** The assertions every case shares; `label` names the run in failure messages. */
function checkOutcome(
  c: Case,
  result: Pick<CliRun, 'code' | 'stderr' | 'stdout' | 'ms'>,
  before: Map<string, string>,
  dir: string,
  label: string,
): void {
  const context = `${label}: ${c.cls}: ${c.name} (time bound ${Math.round(BOUND_MS)} ms, load factor ${LOAD_FACTOR.toFixed(2)})\nstderr: ${result.stderr.slice(0, 2000)}\nstdout: ${result.stdout.slice(0, 500)}`;
  expect(result.code, context).toBe(2);
  for (const wanted of c.expect) {
    if (typeof wanted === 'string') expect(result.stderr, context).toContain(wanted);
    else expect(result.stderr, context).toMatch(wanted);
  }
  expect(result.stderr, context).not.toMatch(/^\s+at /m);
  expect(result.stderr, context).not.toMatch(/(^|error: )(\w*Error|Error \[\w+\]): /m);
  const shown = result.stderr.split('\n').filter((line) => line.trim() !== '');
  expect(shown.length, context).toBeGreaterThanOrEqual(1);
  expect(shown.length, context).toBeLessThanOrEqual(c.maxLines ?? 2);
  expect(
    shown.every((line) => line.length <= 2000),
    context,
  ).toBe(true);
  expect(snapshot(dir), `${context}\n(something was written)`).toEqual(before);
  expect(result.ms, context).toBeLessThan(BOUND_MS);
}

/** Per-case extra set-up that the files alone cannot express. */
function prepare(c: Case, dir: string): () => void {
  if (c.name === 'a plan folder locked by a running plan') {
    writeFileSync(join(dir, 'out', '.lock'), lockOf(process.ppid, processStartTime(process.ppid)));
  }
  if (c.name === 'a folder locked by a running sweep') {
    // A live process on this host (the test runner's parent) whose start time matches the lock: the lock holds.
    writeFileSync(join(dir, 'sweep-out', '.lock'), lockOf(process.ppid, processStartTime(process.ppid)));
  }
  return () => {};
}

/** Sets a case's environment variables for an in-process run; returns what puts them back. */
function setEnv(env: Record<string, string> | undefined): () => void {
  const saved = Object.entries(env ?? {}).map(([name]) => [name, process.env[name]] as const);
  for (const [name, value] of Object.entries(env ?? {})) process.env[name] = value;
  return () => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

/** The start time of a process as the sweep's lock records it (see src/sweep/lock.ts). */
function processStartTime(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19];
}

/**
 * SERVESIM_BAD_INPUTS_PROCESSES=1 runs every case as a real process instead (slower; a case that
 * hangs is killed after 20 s instead of blocking this process).
 */
const ALL_PROCESSES = process.env.SERVESIM_BAD_INPUTS_PROCESSES === '1';

describe.skipIf(ALL_PROCESSES)('bad inputs: every case exits 2 with the file and field, no trace, nothing written, under 2 s', () => {
  it('has at least 150 cases, of every class', () => {
    const byClass = new Map<Cls, number>();
    for (const c of cases) byClass.set(c.cls, (byClass.get(c.cls) ?? 0) + 1);
    expect(cases.length).toBeGreaterThanOrEqual(150);
    expect([...byClass.keys()].sort()).toEqual(
      [
        'bytes',
        'calibration inputs',
        'engine start-up checks',
        'impossible sizes',
        'large YAML',
        'paths',
        'scoring',
        'silent wrong numbers',
        'sweep files and flags',
        'sweep state',
        'plan files',
        'serve',
      ].sort(),
    );
    const names = new Set(cases.map((c) => `${c.cls}: ${c.name}`));
    expect(names.size).toBe(cases.length);
  });

  for (const c of cases.filter((x) => x.processOnly !== true)) {
    it(`${c.cls}: ${c.name}`, async () => {
      const dir = setUp(c);
      try {
        const cleanup = prepare(c, dir);
        const before = snapshot(dir);
        const restoreEnv = setEnv(c.env);
        let result: CliRun;
        try {
          result = await runCliInProcess(c.argv, dir);
        } finally {
          restoreEnv();
        }
        cleanup();
        checkOutcome(c, result, before, dir, 'in-process');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe('bad inputs in a real process: exit status, no stack trace, under 2 s with the Node start', () => {
  for (const c of cases.filter((x) => ALL_PROCESSES || x.child === true || x.processOnly === true)) {
    it(`${c.cls}: ${c.name}`, () => {
      const dir = setUp(c);
      try {
        const cleanup = prepare(c, dir);
        const before = snapshot(dir);
        const started = performance.now();
        const out = spawnSync(process.execPath, [CLI, ...c.argv], {
          cwd: dir,
          env: { ...process.env, ...c.env },
          encoding: 'utf8',
          timeout: 20_000,
          // A sweep handles SIGTERM (it stops between points): a process stuck in a read would ignore it.
          killSignal: 'SIGKILL',
          maxBuffer: 64 * 1024 * 1024,
        });
        const ms = performance.now() - started;
        cleanup();
        checkOutcome(c, { code: out.status ?? -1, stdout: out.stdout, stderr: out.stderr, ms }, before, dir, 'process');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
