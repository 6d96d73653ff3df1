/**
 * The calibrate commands end to end through the CLI (compiled: `npm run build` first), on the
 * example inputs of `calibration/`: exit codes, printed coefficients and written files.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const CLI = join(import.meta.dirname, '..', 'dist', 'src', 'cli', 'main.js');
const ROOT = join(import.meta.dirname, '..');

function run(args: string[]) {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('servesim calibrate (CLI)', () => {
  it('fits response overhead on the real concurrency-1 AIPerf run and says the slope is not identifiable', () => {
    const out = mkdtempSync(join(tmpdir(), 'servesim-cal-'));
    const r = run(['calibrate', 'response-overhead', '--aiperf', 'calibration/aiperf-mlx-qwen3-0.6b-c1', '--out', out]);
    expect(r.code).toBe(0);
    const fit = JSON.parse(readFileSync(join(out, 'fit.json'), 'utf8'));
    expect(fit.coefficients.base_ms.value).toBeGreaterThan(1.3);
    expect(fit.coefficients.base_ms.value).toBeLessThan(1.5);
    expect(fit.coefficients.per_output_token_us.status).toBe('not identifiable: fixed at 0');
    expect(r.stdout).toContain('not identifiable');
    expect(readFileSync(join(out, 'snippet.yaml'), 'utf8')).toContain('response_overhead:');
    expect(readFileSync(join(out, 'fit.svg'), 'utf8')).toContain('<svg');
  });

  it('fits detokenization (two-term) and pass time from the example inputs', () => {
    const detok = run(['calibrate', 'detokenization', '--input', 'calibration/detokenization-jobs.csv']);
    expect(detok.code).toBe(0);
    expect(detok.stdout).toMatch(/base_ms\s+2\.85 ms/);
    const pass = run([
      'calibrate',
      'pass-time',
      '--input',
      'calibration/splitwise-perf-model.csv',
      '--layout',
      'prefill-decode',
      '--select',
      'model=llama2-70b',
      '--select',
      'hardware=h100-80gb',
      '--select',
      'tensor_parallel=4',
      '--holdout',
      '0.2',
    ]);
    expect(pass.code).toBe(0);
    expect(pass.stdout).toContain('held out 42 rows');
    expect(pass.stdout).toContain('type: linear');
  });

  it('names the file and line of a bad input row (exit status 2)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'servesim-cal-'));
    const file = join(dir, 'jobs.csv');
    writeFileSync(file, 'pass_end_ms,server,outputs,received_ms\n1,0,2,3\n2,0,x,4\n');
    const r = run(['calibrate', 'detokenization', '--input', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}:3`);
    expect(r.stderr).toContain('outputs: expected a number');
  });

  it('fits the engine on the three lowest B200 points (with refining searches) and scores the other two', () => {
    const out = mkdtempSync(join(tmpdir(), 'servesim-cal-'));
    const r = run([
      'calibrate',
      'engine',
      '--config',
      'calibration/minimax-m25-b200-tp4.base.yaml',
      '--measured',
      'data/silicon/dynosim-b200-minimax-m25-tp4-isl1k-osl1k.csv',
      '--select',
      'source=hardware',
      '--train',
      'lowest:3',
      '--threads',
      '2',
      '--refine',
      '3',
      '--form',
      'linear',
      '--out',
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const fit = JSON.parse(readFileSync(join(out, 'fit.json'), 'utf8'));
    expect(fit.train.map((k: { concurrency: number }) => k.concurrency)).toEqual([4, 8, 16]);
    expect(fit.holdout.points.map((k: { concurrency: number }) => k.concurrency)).toEqual([32, 64]);
    // 6.3 % with the defaults (21 % with uniform point weights; this sweep's ITL bends less than
    // most MoE sweeps, see docs/calibration.md): a bound on gross errors, not a target.
    expect(fit.holdout.metrics['inter_token_latency.avg'].mape).toBeLessThan(30);
    expect(fit.method.decode_request_exponent).toEqual({ value: 0.5, source: 'model family default (MiniMaxAI/MiniMax-M2.5)' });
    expect(fit.method.prefill_overlap).toEqual({ value: 0, source: 'default' });
    expect(fit.method.point_weights.scheme).toBe('load rank');
    expect(fit.method.point_weights.weights.map((w: { weight: number }) => w.weight)).toEqual([0.5, 1, 1.5]);
    expect(fit.coefficients.prefill_overlap.status).toContain('fixed at 0');
    expect(fit.method.prefill_prior.ratio).toBe(5);
    expect(fit.method.refine_iterations).toBe(3);
    expect(fit.coefficients.base_ms.unit).toBe('ms');
    expect(typeof fit.wall_ms).toBe('number');
    expect(readFileSync(join(out, 'fitted-config.yaml'), 'utf8')).toContain('type: linear');
    expect(readFileSync(join(out, 'score', 'report.html'), 'utf8')).toContain('<html');
  }, 240_000);

  it('fits the physics form when asked: efficiency factors beside the catalog values, their movement, errors and held flags', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'servesim-cal-')), 'engine');
    const r = run([
      'calibrate',
      'engine',
      '--config',
      'calibration/minimax-m25-b200-tp4.base.yaml',
      '--measured',
      'data/silicon/dynosim-b200-minimax-m25-tp4-isl1k-osl1k.csv',
      '--select',
      'source=hardware',
      '--threads',
      '2',
      '--form',
      'roofline',
      '--out',
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('engine fit (physics form)');
    expect(r.stdout).toMatch(/factor +fitted +catalog +moved % +SE %/);
    const fit = JSON.parse(readFileSync(join(out, 'fit.json'), 'utf8'));
    expect(fit.form).toBe('roofline');
    expect(Object.keys(fit.efficiency)).toEqual(expect.arrayContaining(['compute', 'memory', 'frontend_ms']));
    expect(fit.efficiency.compute.catalog).toBeGreaterThan(0);
    expect(fit.form_choice).toEqual({ requested: 'roofline', form: 'roofline', reason: '--form roofline' });
    // A bf16-free FP8 model never reads the FP4 peak: the points cannot inform it, and it is held.
    expect(fit.efficiency.fp4_compute).toMatchObject({ held_at_catalog: true, se_pct: null, moved_pct: 0 });
    const moved = Object.values(fit.efficiency as Record<string, { held_at_catalog: boolean; se_pct: number | null }>).filter(
      (f) => !f.held_at_catalog,
    );
    expect(moved.length).toBeGreaterThan(0);
    for (const f of moved) expect(f.se_pct).toBeGreaterThan(0);
    expect(fit.holdout.points.map((k: { concurrency: number }) => k.concurrency)).toEqual([32, 64]);
    const fitted = readFileSync(join(out, 'fitted-config.yaml'), 'utf8');
    expect(fitted).toContain('type: roofline');
    expect(fitted).toContain('efficiency:');
  }, 60_000);
});
