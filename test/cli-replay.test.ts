/** `servesim replay` and `servesim schema` as a user runs them (the built CLI in dist/). */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const CLI = join(import.meta.dirname, '..', 'dist', 'src', 'cli', 'main.js');
const FIXTURES = join(import.meta.dirname, 'fixtures', 'cli');

function servesim(...args: string[]) {
  const out = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

describe('servesim replay', () => {
  it('prints an AIPerf-style table and exits 0', () => {
    const { code, stdout } = servesim('replay', join(FIXTURES, 'run.yaml'));
    expect(code).toBe(0);
    expect(stdout).toMatch(/Time to First Token \(ms\)\s+12\.00/);
    expect(stdout).toContain('Request Count (requests)');
  });

  it('prints the summary JSON with --json, with the effective config', () => {
    const { code, stdout } = servesim('replay', join(FIXTURES, 'run.yaml'), '--json', '--set', 'traffic.load.concurrency=1');
    expect(code).toBe(0);
    const summary = JSON.parse(stdout);
    expect(Object.keys(summary)).toEqual(['metrics', 'run', 'ttft_stages', 'simulator', 'deployment', 'config']);
    expect(summary.config.traffic.load.concurrency).toBe(1);
    expect(summary.metrics.time_to_first_token.count).toBe(6);
    expect(Object.keys(summary.metrics.time_to_first_token)).toEqual([
      'unit',
      'avg',
      'min',
      'max',
      'p1',
      'p5',
      'p10',
      'p25',
      'p50',
      'p75',
      'p90',
      'p95',
      'p99',
      'std',
      'count',
    ]);
  });

  it('writes summary.json, requests.jsonl and AIPerf artifacts to --out', () => {
    const dir = mkdtempSync(join(tmpdir(), 'servesim-cli-'));
    const { code } = servesim('replay', join(FIXTURES, 'run.yaml'), '--out', dir, '--per-request', '--aiperf');
    expect(code).toBe(0);
    const lines = readFileSync(join(dir, 'requests.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(6);
    expect(lines[0].token_ms).toEqual([12, 14, 16, 18]);
    expect(lines[0].status).toBe('completed');
    expect(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')).run.request_count).toBe(6);
    const aiperf = join(dir, 'servesim-Qwen_Qwen3-32B-concurrency2');
    for (const f of ['profile_export_aiperf.json', 'profile_export_aiperf.csv', 'profile_export.jsonl'])
      expect(existsSync(join(aiperf, f))).toBe(true);
  });

  it('exits 2 and names the file and field of a bad config', () => {
    const { code, stderr } = servesim('replay', join(FIXTURES, 'run.yaml'), '--set', 'engine.workers.aggregated.scheduler.max_sequences=0');
    expect(code).toBe(2);
    expect(stderr).toContain(
      'run.yaml (with --set engine.workers.aggregated.scheduler.max_sequences=0): engine.workers.aggregated.scheduler.max_sequences: must be a positive integer, got 0',
    );
  });

  it('exits 2 and names the file and line of a bad trace row', () => {
    const { code, stderr } = servesim('replay', join(FIXTURES, 'bad-trace.yaml'));
    expect(code).toBe(2);
    expect(stderr).toMatch(/bad-trace\.jsonl:2: input_length/);
  });

  it('skips bad trace rows with --skip-invalid-rows, and says how many', () => {
    const { code, stdout, stderr } = servesim('replay', join(FIXTURES, 'bad-trace.yaml'), '--skip-invalid-rows', '--json');
    expect(code).toBe(0);
    expect(stderr).toContain('skipped 1 invalid row(s) of bad-trace.jsonl');
    const summary = JSON.parse(stdout);
    expect(summary.input).toEqual({ trace: 'bad-trace.jsonl', trace_rows: 1, skipped_trace_rows: 1 });
    expect(summary.run.request_count).toBe(1);
  });

  it('exits 2 for a missing config file', () => {
    const { code, stderr } = servesim('replay', join(FIXTURES, 'nope.yaml'));
    expect(code).toBe(2);
    expect(stderr).toContain('nope.yaml');
  });

  it('exits 2 for a run whose every request would be rejected, before it runs', () => {
    const { code, stderr } = servesim(
      'replay',
      join(FIXTURES, 'run.yaml'),
      '--set',
      'engine.context_length=10',
      '--set',
      'traffic.stop={max_virtual_time_seconds: 1}',
    );
    expect(code).toBe(2);
    expect(stderr).toContain(
      'run.yaml (with --set engine.context_length=10): engine.context_length: is 10, but every prompt has at least 100 tokens',
    );
  });
});

describe('servesim schema', () => {
  it('prints a JSON Schema of run configs', () => {
    const { code, stdout } = servesim('schema');
    expect(code).toBe(0);
    const schema = JSON.parse(stdout);
    expect(schema.properties.engine).toBeDefined();
    expect(schema.properties.traffic).toBeDefined();
  });

  it('lists the commands in --help', () => {
    const { code, stdout } = servesim('--help');
    expect(code).toBe(0);
    expect(stdout).toContain('servesim replay <config>');
  });
});
