/**
 * A full disk, for real: a tiny tmpfs mounted for the test (needs root; the file is skipped
 * otherwise, and test/write-output.test.ts injects the same failure through the writers' file
 * system interface). Every command that writes outputs ends with one line naming the file and
 * exit status 1, leaves the previous complete file in place and no temporary file behind; the
 * files of one result (a replay's summary.json and requests.jsonl) appear together or not at all,
 * and a folder the command created for them is removed again; a sweep or a plan that cannot write
 * its lock leaves no lock; a sweep interrupted by the full disk resumes, once there is room, to the
 * bytes of an uninterrupted run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '..');
/** The built command line; SERVESIM_CLI points at another build (to see an older one fail). */
const CLI = process.env.SERVESIM_CLI ?? join(REPO, 'dist', 'src', 'cli', 'main.js');
const DETOK_JOBS = join(REPO, 'calibration', 'detokenization-jobs.csv');
const MLX = join(REPO, 'test', 'fixtures', 'aiperf', 'mlx-qwen3-0.6b-m1');
const SILICON_SAMPLE = join(REPO, 'data', 'silicon', 'aic-silicon-sample.csv');
const SMALL_PLAN = join(REPO, 'sweeps', 'plans', 'qwen3-8b-small.yaml');

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

/** Files under `dir` that are a write's temporary file (`name.<number>`); none when `dir` is gone. */
function temporaries(dir: string): string[] {
  const found: string[] = [];
  if (!existsSync(dir)) return found;
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

  it('replay --out at 8 to 64 KiB free: summary.json and requests.jsonl appear together or not at all', () => {
    writeFileSync(join(work, 'large.yaml'), config(3000));
    writeFileSync(join(work, 'small.yaml'), config(10));
    for (const left of [8, 16, 32, 64]) {
      // Into a new folder: nothing at all is left, not even the folder.
      const fresh = join(disk, `replay-${left}`);
      let free = fill(left * 1024);
      try {
        const run = servesim('replay', 'large.yaml', '--out', fresh, '--per-request');
        expect(run.code, `${left} KiB: ${run.stderr}`).toBe(1);
        expectOneLine(run.stderr, 'requests.jsonl');
        expect(existsSync(fresh), `${left} KiB`).toBe(false);
      } finally {
        free();
      }
      // Over an earlier complete pair: both stay as they were.
      const earlier = join(disk, `earlier-${left}`);
      expect(servesim('replay', 'small.yaml', '--out', earlier, '--per-request').code).toBe(0);
      const before = ['summary.json', 'requests.jsonl'].map((name) => readFileSync(join(earlier, name), 'utf8'));
      free = fill(left * 1024);
      try {
        expect(servesim('replay', 'large.yaml', '--out', earlier, '--per-request').code).toBe(1);
        expect(['summary.json', 'requests.jsonl'].map((name) => readFileSync(join(earlier, name), 'utf8'))).toEqual(before);
        expect(temporaries(earlier)).toEqual([]);
      } finally {
        free();
        rmSync(earlier, { recursive: true, force: true });
      }
    }
  });

  it('sweep and plan at 0 bytes free: one line naming the lock, exit 1, no lock and no folder left', () => {
    writeFileSync(join(work, 'base.yaml'), config(40));
    writeFileSync(join(work, 'sweep0.yaml'), 'base: base.yaml\ngrid:\n  traffic.load.concurrency: [1, 2]\n');
    const free = fill(0);
    try {
      for (const [args, out] of [
        [['sweep', 'sweep0.yaml', '--workers', '1'], join(disk, 'sweep0')],
        [['plan', SMALL_PLAN, '--workers', '1'], join(disk, 'plan0')],
      ] as const) {
        const run = servesim(...args, '--out', out);
        expect(run.code, run.stderr).toBe(1);
        expectOneLine(
          run.stderr
            .split('\n')
            .filter((line) => line.startsWith('error:'))
            .join('\n'),
          '.lock',
        );
        expect(run.stderr).not.toMatch(/^\s+at /m);
        expect(existsSync(out), out).toBe(false);
      }
    } finally {
      free();
    }
  });

  it('a read-only file system: one line naming the folder it could not make, EROFS, exit 1', () => {
    const readOnly = join(work, 'read-only');
    mkdirSync(readOnly, { recursive: true });
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,ro', 'tmpfs', readOnly]).status).toBe(0);
    try {
      writeFileSync(join(work, 'base.yaml'), config(40));
      writeFileSync(join(work, 'sweep-ro.yaml'), 'base: base.yaml\ngrid:\n  traffic.load.concurrency: [1, 2]\n');
      for (const args of [
        ['replay', 'base.yaml', '--out', join(readOnly, 'replay', 'deeper')],
        ['sweep', 'sweep-ro.yaml', '--workers', '1', '--out', join(readOnly, 'sweep')],
      ]) {
        const run = servesim(...args);
        expect(run.code, run.stderr).toBe(1);
        const lines = run.stderr.split('\n').filter((line) => line.trim() !== '');
        expect(lines).toHaveLength(1);
        // Not the ENOENT a recursive mkdir reports there.
        expect(lines[0]).toMatch(/^error: cannot write .*read-only\/(replay|sweep): the file system is read-only \(EROFS\)$/);
      }
    } finally {
      spawnSync('umount', [readOnly]);
    }
  });

  it('replay --aiperf: one line, exit 1, no half-written AIPerf file (into a new folder: no folder left)', () => {
    const out = join(disk, 'aiperf');
    writeFileSync(join(work, 'large.yaml'), config(3000));
    const free = fill(32 * 1024);
    try {
      const run = servesim('replay', 'large.yaml', '--out', out, '--aiperf');
      expect(run.code).toBe(1);
      expectOneLine(run.stderr, 'profile_export');
      expect(existsSync(out)).toBe(false);
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

  it('calibrate: one line, exit 1, no half-written fit (into a new folder: no folder left)', () => {
    const out = join(disk, 'fit');
    const free = fill(2 * 1024);
    try {
      const run = servesim('calibrate', 'detokenization', '--input', DETOK_JOBS, '--out', out);
      expect(run.code).toBe(1);
      expectOneLine(run.stderr, 'fit/');
      expect(existsSync(out)).toBe(false);
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
