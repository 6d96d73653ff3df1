/**
 * The shipped vLLM run (data/engine-runs/vllm-rtx4090-llama-3.1-8b) through the built CLI: replayed
 * as a trace, scored against itself, its layer profile built into a pass-time model and replayed,
 * fitted by calibrate engine; bad logs and profiles exit 2 naming the file and line.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const RUN = 'data/engine-runs/vllm-rtx4090-llama-3.1-8b';
// The run's own means (summary.txt of its source): TTFT, TPOT, latency, ms.
const MEASURED = { ttft: 65456.6, tpot: 32.4, latency: 86578.3 };

function servesim(...args: string[]) {
  const out = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: ROOT });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

describe('a vLLM request log', () => {
  const out = mkdtempSync(join(tmpdir(), 'servesim-engine-runs-'));

  it('replays at its arrival times on the engine of its meta.json', () => {
    const { code, stdout, stderr } = servesim('replay', RUN, '--out', join(out, 'replay'), '--per-request', '--json');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const summary = JSON.parse(stdout);
    expect(summary.run.request_count).toBe(300);
    expect(summary.config.engine.workers.aggregated.kv_cache.capacity).toEqual({ type: 'fixed', blocks: 2588 });
    expect(summary.config.engine.workers.aggregated.scheduler.max_batched_tokens).toBe(2048);
    expect(summary.config.engine.model).toBe('meta-llama/Llama-3.1-8B');
    expect(existsSync(join(out, 'replay', 'requests.jsonl'))).toBe(true);
  });

  it('is scored against its replay, on the means and request by request', () => {
    const { code, stdout } = servesim('score', '--sim', join(out, 'replay'), '--measured', RUN, '--out', join(out, 'score'));
    expect(code).toBe(0);
    expect(stdout).toContain('matched on log');
    expect(stdout).toMatch(/TTFT mean\s+65456\.6/);
    const csv = readFileSync(join(out, 'score', 'requests.csv'), 'utf8')
      .trim()
      .split('\n');
    expect(csv).toHaveLength(301);
    expect(csv[1]).toMatch(/^"bench-0",1,689\.435,/);
  });

  it('replayed with the pass-time model of its own layer profile: each mean within 5 %', () => {
    const { code, stdout } = servesim(
      'calibrate',
      'pass-time',
      '--profile',
      `${RUN}/profiler`,
      '--log',
      RUN,
      '--json',
      '--out',
      join(out, 'profile'),
    );
    expect(code).toBe(0);
    const fit = JSON.parse(stdout);
    for (const metric of ['ttft', 'tpot', 'latency'] as const) {
      expect(fit.replay[metric].measured_mean_ms).toBeCloseTo(MEASURED[metric], 1);
      expect(Math.abs(fit.replay[metric].mean_error_pct)).toBeLessThan(5);
    }
    // The written model replays in a config of the user's.
    const config = join(out, 'profile', 'run.yaml');
    writeFileSync(
      config,
      `engine:\n  model: llama-3.1-8b\n  hardware: rtx_4090\n  workers:\n    aggregated:\n      timing: {type: profile, path: pass-time.json}\ntraffic:\n  source: {type: trace, format: vllm-log, path: ${join(ROOT, RUN)}}\n  load: {type: trace_timestamps}\n  stop: {requests: 20}\n`,
    );
    const replayed = servesim('replay', config, '--json');
    expect(replayed.stderr).toBe('');
    expect(JSON.parse(replayed.stdout).run.request_count).toBe(20);
  });

  it('fits calibrate engine (linear form) from the log', () => {
    const { code, stdout } = servesim(
      'calibrate',
      'engine',
      '--config',
      RUN,
      '--measured',
      RUN,
      '--train',
      'all',
      '--force',
      '--out',
      join(out, 'fit'),
      '--json',
    );
    expect(code).toBe(0);
    const fit = JSON.parse(stdout);
    expect(fit.train).toEqual([{ log: 'vllm-rtx4090-llama-3.1-8b' }]);
    // --form auto: the linear form, from the fit-form table (vLLM dense) or because a log is a trace.
    expect(fit.form_choice).toMatchObject({ requested: 'auto', form: 'linear' });
    expect(fit.train_fit.metrics['time_to_first_token.avg'].mape).toBeLessThan(5);
    // The fitted config names the log relative to its own folder: it replays from anywhere.
    const replayed = servesim('replay', join(out, 'fit', 'fitted-config.yaml'), '--json');
    expect(replayed.stderr).toBe('');
    expect(JSON.parse(replayed.stdout).run.request_count).toBe(300);
  }, 120_000);
});

describe('every shipped run, replayed with its own layer profile', () => {
  it('has each mean within 5 %, with the profiles of tensor-parallel, expert-parallel and skew-corrected runs', () => {
    const out = spawnSync(process.execPath, [join(ROOT, 'dist', 'bench', 'engine-runs-bench.js'), '--json'], {
      encoding: 'utf8',
      cwd: ROOT,
    });
    expect(out.stderr).toBe('');
    expect(out.status).toBe(0);
    const bench = JSON.parse(out.stdout) as {
      runs: Array<{ run: string; requests: number; metrics: Record<string, { mean_error_pct: number }>; met: boolean }>;
    };
    expect(bench.runs.map((r) => r.run)).toEqual([
      'data/engine-runs/vllm-rtx4090-llama-3.1-8b',
      'data/engine-runs/vllm-rtxpro6000-llama-3.1-8b',
      'data/engine-runs/vllm-rtxpro6000-qwen3-30b-a3b-dp2-ep2',
      'data/engine-runs/vllm-rtxpro6000-qwen3-32b-tp2',
    ]);
    for (const run of bench.runs) {
      expect(run.requests, run.run).toBe(300);
      for (const metric of ['ttft', 'tpot', 'latency'])
        expect(Math.abs(run.metrics[metric].mean_error_pct), `${run.run} ${metric}`).toBeLessThan(5);
      expect(run.met).toBe(true);
    }
  });
});

describe('bad logs and profiles exit 2 naming the file and the line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'servesim-engine-runs-bad-'));

  it('a log line whose first token comes before its queueing', () => {
    const log = join(dir, 'log');
    cpSync(join(ROOT, RUN), log, { recursive: true });
    const lines = readFileSync(join(log, 'requests.jsonl'), 'utf8').split('\n');
    const row = JSON.parse(lines[4]);
    row.first_token_ts = row.queued_ts - 1;
    lines[4] = JSON.stringify(row);
    writeFileSync(join(log, 'requests.jsonl'), lines.join('\n'));
    const { code, stderr, stdout } = servesim('replay', log);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(`${join(log, 'requests.jsonl')}:5: first_token_ts:`);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('a meta.json key of the wrong type', () => {
    const log = join(dir, 'meta');
    cpSync(join(ROOT, RUN), log, { recursive: true });
    const meta = JSON.parse(readFileSync(join(log, 'meta.json'), 'utf8'));
    meta.engine_kwargs.max_num_seqs = 'many';
    writeFileSync(join(log, 'meta.json'), JSON.stringify(meta));
    const { code, stderr } = servesim('replay', log);
    expect(code).toBe(2);
    expect(stderr).toContain(`${join(log, 'meta.json')}: engine_kwargs.max_num_seqs: must be a positive integer, got "many"`);
  });

  it('a profile row with a time that is not a number', () => {
    const profile = join(dir, 'profiler');
    cpSync(join(ROOT, RUN, 'profiler'), profile, { recursive: true });
    const file = join(profile, 'tp1', 'dense.csv');
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[9] = lines[9].replace(/,[^,\r]*(\r?)$/, ',n/a$1');
    writeFileSync(file, lines.join('\n'));
    const { code, stderr, stdout } = servesim('calibrate', 'pass-time', '--profile', profile);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(`${file}:10: time_us: expected a number of microseconds >= 0, got "n/a"`);
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
