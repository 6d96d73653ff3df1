/**
 * A full disk, for real: a tiny tmpfs mounted for the test (needs root; the file is skipped
 * otherwise, and test/write-output.test.ts injects the same failure through the writers' file
 * system interface). Every command that writes outputs ends with one line naming the file and
 * exit status 1, leaves the previous complete file in place and no temporary file behind; a sweep
 * interrupted by the full disk resumes, once there is room, to the bytes of an uninterrupted run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '..');
const CLI = join(REPO, 'dist', 'src', 'cli', 'main.js');
const DETOK_JOBS = join(REPO, 'calibration', 'detokenization-jobs.csv');
const MLX = join(REPO, 'test', 'fixtures', 'aiperf', 'mlx-qwen3-0.6b-m1');
const SILICON_SAMPLE = join(REPO, 'data', 'silicon', 'aic-silicon-sample.csv');

const work = mkdtempSync(join(tmpdir(), 'servesim-disk-'));
const disk = join(work, 'disk');
let mounted = false;

function mount(): boolean {
  if (process.getuid?.() !== 0) return false;
  mkdirSync(disk, { recursive: true });
  return spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', disk]).status === 0;
}

beforeAll(() => {
  mounted = mount();
});
afterAll(() => {
  if (mounted) spawnSync('umount', [disk]);
  rmSync(work, { recursive: true, force: true });
});

/** Fills the disk but `leftBytes`; returns a function that frees it again. */
function fill(leftBytes: number): () => void {
  const filler = join(disk, 'filler');
  const stat = statfsSync(disk);
  const free = stat.bavail * stat.bsize;
  writeFileSync(filler, Buffer.alloc(Math.max(0, free - leftBytes)));
  return () => rmSync(filler, { force: true });
}

function servesim(...args: string[]) {
  const out = spawnSync(process.execPath, [CLI, ...args], { cwd: work, encoding: 'utf8', timeout: 60_000 });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

/** The stderr of a failed write: one line, naming the file, ENOSPC, no stack trace. */
function expectOneLine(stderr: string, file: string): void {
  const lines = stderr.split('\n').filter((line) => line.trim() !== '');
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(
    new RegExp(`^error: cannot write .*${file.replace(/[.]/g, '\\.')}[^ ]*: no space left on the device \\(ENOSPC\\)`),
  );
  expect(stderr).not.toMatch(/^\s+at /m);
}

/** Files under `dir` that are a write's temporary file (`name.<number>`). */
function temporaries(dir: string): string[] {
  const found: string[] = [];
  const visit = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if (entry.isDirectory()) visit(join(d, entry.name));
      else if (/\.\d+(\.tmp)?$/.test(entry.name)) found.push(join(d, entry.name));
    }
  };
  visit(dir);
  return found;
}

const config = (requests: number) =>
  `engine: {model: m, workers: {aggregated: {timing: {type: fixed, prefill_ms: 10, decode_ms: 2}}}}\n` +
  `traffic: {source: {input_tokens: 64, output_tokens: 64}, load: {concurrency: 8}, stop: {requests: ${requests}}}\n`;

describe.skipIf(process.getuid?.() !== 0)('a full disk (tmpfs)', () => {
  it('mounts the tmpfs', () => {
    expect(mounted).toBe(true);
  });

  it('replay --per-request: one line, exit 1, the previous requests.jsonl kept', () => {
    const out = join(disk, 'replay');
    writeFileSync(join(work, 'small.yaml'), config(10));
    writeFileSync(join(work, 'large.yaml'), config(3000));
    expect(servesim('replay', 'small.yaml', '--out', out, '--per-request').code).toBe(0);
    const previous = readFileSync(join(out, 'requests.jsonl'), 'utf8');
    const free = fill(64 * 1024);
    try {
      const run = servesim('replay', 'large.yaml', '--out', out, '--per-request');
      expect(run.code).toBe(1);
      expectOneLine(run.stderr, 'requests.jsonl');
      expect(readFileSync(join(out, 'requests.jsonl'), 'utf8')).toBe(previous);
      expect(temporaries(out)).toEqual([]);
    } finally {
      free();
    }
  });

  it('replay --aiperf: one line, exit 1, no half-written AIPerf file', () => {
    const out = join(disk, 'aiperf');
    writeFileSync(join(work, 'large.yaml'), config(3000));
    const free = fill(32 * 1024);
    try {
      const run = servesim('replay', 'large.yaml', '--out', out, '--aiperf');
      expect(run.code).toBe(1);
      expectOneLine(run.stderr, 'profile_export');
      const folder = join(out, 'servesim-m-concurrency8');
      for (const name of existsSync(folder) ? readdirSync(folder) : []) {
        // What is there is whole: the JSON parses.
        if (name.endsWith('.json')) expect(() => JSON.parse(readFileSync(join(folder, name), 'utf8'))).not.toThrow();
      }
      expect(temporaries(out)).toEqual([]);
    } finally {
      free();
    }
  });

  it('a sweep stopped by a full disk keeps every finished point and resumes to the uninterrupted bytes', () => {
    const sweepFile = join(work, 'sweep.yaml');
    writeFileSync(join(work, 'base.yaml'), config(40));
    writeFileSync(sweepFile, 'base: base.yaml\ngrid:\n  traffic.load.concurrency: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n');
    const reference = join(work, 'reference');
    expect(servesim('sweep', sweepFile, '--out', reference, '--workers', '1').code).toBe(0);

    const out = join(disk, 'sweep');
    const free = fill(24 * 1024);
    let run;
    try {
      run = servesim('sweep', sweepFile, '--out', out, '--workers', '1');
    } finally {
      free();
    }
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /error: cannot write .*(points\.jsonl|timings\.jsonl|summary\.csv|plan\.json|sweep\.svg): no space left on the device \(ENOSPC\)/,
    );
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(temporaries(out)).toEqual([]);

    const resumed = servesim('sweep', sweepFile, '--out', out, '--workers', '1');
    expect(resumed.code, resumed.stderr).toBe(0);
    for (const name of ['plan.json', 'points.jsonl', 'summary.csv']) {
      expect(readFileSync(join(out, name), 'utf8'), name).toBe(readFileSync(join(reference, name), 'utf8'));
    }
  });

  it('score: one line, exit 1, the previous report kept', () => {
    const sim = join(work, 'sim');
    writeFileSync(
      join(work, 'c1.yaml'),
      config(20)
        .replace('input_tokens: 64, output_tokens: 64', 'input_tokens: 512, output_tokens: 128')
        .replace('concurrency: 8', 'concurrency: 1'),
    );
    expect(servesim('replay', 'c1.yaml', '--out', join(sim, 'c1')).code).toBe(0);
    const out = join(disk, 'score');
    const args = ['score', '--sim', sim, '--measured', join(MLX, 'concurrency1'), '--out', out];
    expect(servesim(...args).code).toBe(0);
    const previous = readFileSync(join(out, 'report.html'), 'utf8');
    const free = fill(4 * 1024);
    try {
      const run = servesim(...args);
      expect(run.code).toBe(1);
      expectOneLine(run.stderr, 'score/');
      expect(readFileSync(join(out, 'report.html'), 'utf8')).toBe(previous);
      expect(temporaries(out)).toEqual([]);
    } finally {
      free();
    }
  });

  it('calibrate: one line, exit 1, no half-written fit', () => {
    const out = join(disk, 'fit');
    const free = fill(2 * 1024);
    try {
      const run = servesim('calibrate', 'detokenization', '--input', DETOK_JOBS, '--out', out);
      expect(run.code).toBe(1);
      expectOneLine(run.stderr, 'fit/');
      for (const name of existsSync(out) ? readdirSync(out) : []) {
        if (name.endsWith('.json')) expect(() => JSON.parse(readFileSync(join(out, name), 'utf8'))).not.toThrow();
      }
      expect(temporaries(out)).toEqual([]);
    } finally {
      free();
    }
  });

  it('calibrate catalog --write: the error line, exit 1, the previous table kept', () => {
    // One measured point of a catalog deployment (Qwen3-235B-A22B FP8, TP2 on H200 under SGLang, concurrency 2).
    const [header, ...rows] = readFileSync(SILICON_SAMPLE, 'utf8').split('\n');
    const row = rows.find((line) => line.includes('h200_sxm_sglang_agg_4000x500_c2_tp2'));
    expect(row).toBeDefined();
    writeFileSync(join(work, 'one-point.csv'), `${header}\n${row}\n`);
    const table = join(disk, 'efficiency.yaml');
    const args = ['calibrate', 'catalog', '--measured', 'one-point.csv', '--rounds', '1', '--requests-per-slot', '2', '--write', table];
    expect(servesim(...args).code).toBe(0);
    const previous = readFileSync(table, 'utf8');
    const free = fill(2 * 1024);
    try {
      const run = servesim(...args);
      expect(run.code).toBe(1);
      // The fit's progress lines come first; the failed write is the one error line.
      const errors = run.stderr.split('\n').filter((line) => line.startsWith('error:'));
      expect(errors, run.stderr).toHaveLength(1);
      expectOneLine(errors[0], 'efficiency.yaml');
      expect(run.stderr).not.toMatch(/^\s+at /m);
      expect(readFileSync(table, 'utf8')).toBe(previous);
      expect(temporaries(disk)).toEqual([]);
    } finally {
      free();
    }
  });
});
