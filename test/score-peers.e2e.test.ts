/**
 * `servesim score` through the compiled CLI: another simulator's predicted rows as the simulated
 * side, `--select` value lists and comparisons, `--train`, `--json`, and reports free of
 * absolute paths.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const TABLE = 'data/silicon/dynosim-b200-minimax-m25-tp4-isl1k-osl1k.csv';

function score(args: string[]) {
  return spawnSync(process.execPath, [CLI, 'score', ...args], { cwd: ROOT, encoding: 'utf8' });
}

interface Scores {
  metrics: Record<string, { mape: number; points: number; baseline_mape?: number }>;
  points: Array<{ key: { concurrency: number }; metric: string; train: boolean; ape: number }>;
  curves: { sim: unknown[]; training: Array<{ key: { concurrency: number } }> };
  inputs: {
    measured: string[];
    measured_notes: string[];
    sim: string;
    baseline?: string;
    training?: { source: string; keys: Array<{ concurrency: number }>; scored: boolean };
  };
}

const ape = (sim: number, measured: number) => (Math.abs(sim - measured) / measured) * 100;

describe('servesim score against peers and with selections', () => {
  it('scores two other simulators on the same measured points, from the rows of one table', () => {
    const out = mkdtempSync(join(tmpdir(), 'servesim-peers-'));
    const r = score([
      ...['--sim', TABLE, '--sim-select', 'source=mocker', '--label', 'mocker'],
      ...['--baseline', TABLE, '--baseline-select', 'source=aic', '--baseline-label', 'aic'],
      ...['--measured', TABLE, '--select', 'source=hardware', '--select', 'concurrency=32|64'],
      ...['--metrics', 'ttft,itl', '--out', out, '--json'],
    ]);
    expect(r.status, r.stderr).toBe(0);
    const printed = JSON.parse(r.stdout) as Scores;
    // --json prints the object the command writes.
    expect(printed).toEqual(JSON.parse(readFileSync(join(out, 'scores.json'), 'utf8')));
    expect(printed.inputs).toMatchObject({ sim: `${TABLE} (rows source=mocker)`, baseline: `${TABLE} (rows source=aic)` });
    // The rows of the table at concurrency 32 and 64 (ttft_ms, tpot_ms), by hand:
    // hardware 146.0999 / 16.3156 and 220.4310 / 20.6377; mocker 148.0492 / 17.0569 and
    // 216.6858 / 22.1114; aic 142.4820 / 16.9440 and 167.7540 / 21.7330.
    const ttft = printed.metrics['time_to_first_token.avg'];
    const itl = printed.metrics['inter_token_latency.avg'];
    expect(ttft.points).toBe(2);
    expect(ttft.mape).toBeCloseTo((ape(148.0492, 146.0999) + ape(216.6858, 220.431)) / 2, 9);
    expect(itl.mape).toBeCloseTo((ape(17.0569, 16.3156) + ape(22.1114, 20.6377)) / 2, 9);
    expect(ttft.baseline_mape).toBeCloseTo((ape(142.482, 146.0999) + ape(167.754, 220.431)) / 2, 9);
    expect(itl.baseline_mape).toBeCloseTo((ape(16.944, 16.3156) + ape(21.733, 20.6377)) / 2, 9);
  });

  it('takes value lists and comparisons in --select, and --sim-select only for a table', () => {
    const out = mkdtempSync(join(tmpdir(), 'servesim-select-'));
    const base = ['--sim', TABLE, '--sim-select', 'source=mocker', '--measured', TABLE, '--metrics', 'ttft', '--out', out, '--json'];
    const atLeast16 = score([...base, '--select', 'source=hardware', '--select', 'concurrency>=16']);
    expect(atLeast16.status, atLeast16.stderr).toBe(0);
    expect((JSON.parse(atLeast16.stdout) as Scores).points.map((p) => p.key.concurrency)).toEqual([16, 32, 64]);
    const notListed = score([...base, '--select', 'source=hardware', '--select', 'concurrency!=4|64']);
    expect((JSON.parse(notListed.stdout) as Scores).points.map((p) => p.key.concurrency)).toEqual([8, 16, 32]);
    const bad = score([...base, '--select', 'concurrency<fast']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--select concurrency<fast: expected COLUMN=VALUE');
    const notATable = score(['--sim', 'sweeps', '--sim-select', 'source=mocker', '--measured', TABLE, '--select', 'source=hardware']);
    expect(notATable.status).toBe(2);
    expect(notATable.stderr).toContain('--sim-select: chooses rows of a CSV table of predicted points');
  });

  it('leaves --train points out of every MAPE, marks them in every table, draws them, and writes no absolute path', () => {
    const out = mkdtempSync(join(tmpdir(), 'servesim-train-'));
    const r = score([
      ...['--sim', resolve(ROOT, TABLE), '--sim-select', 'source=mocker'],
      ...['--measured', resolve(ROOT, TABLE), '--select', 'source=hardware', '--train', 'lowest:3'],
      ...['--metrics', 'ttft', '--out', out, '--json'],
    ]);
    expect(r.status, r.stderr).toBe(0);
    const scores = JSON.parse(r.stdout) as Scores;
    // Every measured point has its row; the three lowest are marked train and left out of the MAPE.
    expect(scores.points.map((p) => [p.key.concurrency, p.train])).toEqual([
      [4, true],
      [8, true],
      [16, true],
      [32, false],
      [64, false],
    ]);
    expect(scores.metrics['time_to_first_token.avg'].points).toBe(2);
    expect(scores.metrics['time_to_first_token.avg'].mape).toBeCloseTo((ape(148.0492, 146.0999) + ape(216.6858, 220.431)) / 2, 9);
    expect(scores.inputs.training).toEqual({
      source: '--train lowest:3',
      keys: [{ concurrency: 4 }, { concurrency: 8 }, { concurrency: 16 }],
      scored: false,
    });
    expect(r.stderr).toBe('');
    const csv = readFileSync(join(out, 'scores.csv'), 'utf8').trimEnd().split('\n');
    expect(csv[0].split(',')).toContain('train');
    expect(csv.slice(1).map((line) => line.split(',')[csv[0].split(',').indexOf('train')])).toEqual([
      'true',
      'true',
      'true',
      'false',
      'false',
    ]);
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain(
      '- training points concurrency 4, 8, 16 (--train lowest:3): marked train in the tables, left out of the MAPE',
    );
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toMatch(/\| 4 \| train \|/);
    expect(scores.curves.training.map((p) => p.key.concurrency)).toEqual([4, 8, 16]);
    expect(scores.curves.sim).toHaveLength(5);
    // The shipped table is named as the package names it, however it was given.
    expect(scores.inputs.measured).toEqual([TABLE]);
    for (const file of ['report.md', 'report.html', 'scores.json', 'scores.csv']) {
      const text = readFileSync(join(out, file), 'utf8');
      expect(text, file).not.toContain(ROOT);
      expect(text, file).not.toContain(tmpdir());
    }
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('measured, training (not scored)');
  });

  it("knows a fitted sweep's training points from the fit.json beside its base config, and marks them", () => {
    // The shipped sweep of the shipped engine fit: its base config is calibration/fitted/engine/fitted-config.yaml,
    // written by calibrate engine with the fit.json that lists the points it was fitted on.
    const fit = JSON.parse(readFileSync(join(ROOT, 'calibration/fitted/engine/fit.json'), 'utf8')) as {
      train: Array<{ concurrency: number }>;
    };
    const trained = fit.train.map((key) => key.concurrency);
    const sweepOut = mkdtempSync(join(tmpdir(), 'servesim-fitted-sweep-'));
    const sweep = spawnSync(process.execPath, [CLI, 'sweep', 'sweeps/minimax-b200-fitted.yaml', '--out', sweepOut], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(sweep.status, sweep.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(sweepOut, 'plan.json'), 'utf8')).fit).toEqual({
      file: 'calibration/fitted/engine/fit.json',
      train: fit.train,
    });
    const args = [
      '--sim',
      sweepOut,
      '--measured',
      TABLE,
      '--select',
      'source=hardware',
      '--map',
      'ttft_ms=time_to_first_token.avg',
      '--metrics',
      'ttft',
    ];
    const r = score([...args, '--out', join(sweepOut, 'score')]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `training points concurrency ${trained.join(', ')} (the fit's, from calibration/fitted/engine/fit.json): marked train in the tables, left out of the MAPE`,
    );
    const scores = JSON.parse(readFileSync(join(sweepOut, 'score', 'scores.json'), 'utf8')) as Scores;
    const rows = scores.points.filter((p) => p.metric === 'time_to_first_token.avg');
    expect(rows.filter((p) => p.train).map((p) => p.key.concurrency)).toEqual(trained);
    const heldOut = rows.filter((p) => !p.train);
    expect(scores.metrics['time_to_first_token.avg'].points).toBe(heldOut.length);
    expect(scores.metrics['time_to_first_token.avg'].mape).toBeCloseTo(heldOut.reduce((sum, p) => sum + p.ape, 0) / heldOut.length, 9);
    // --train none scores every point; the fit's are still marked, and the output says the MAPE includes them.
    const all = score([...args, '--train', 'none', '--out', join(sweepOut, 'score-all'), '--json']);
    expect(all.status, all.stderr).toBe(0);
    const allScores = JSON.parse(all.stdout) as Scores;
    expect(allScores.metrics['time_to_first_token.avg'].points).toBe(rows.length);
    expect(allScores.points.filter((p) => p.train).map((p) => p.key.concurrency)).toEqual(trained);
    expect(allScores.inputs.training?.scored).toBe(true);
  });
});
