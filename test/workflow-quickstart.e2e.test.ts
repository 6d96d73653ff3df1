/**
 * `npm start` (servesim quickstart) end to end through the compiled CLI: it fits, sweeps,
 * scores, writes the HTML report and prints where it is with the headline MAPEs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const CLI = join(import.meta.dirname, '..', 'dist', 'src', 'cli', 'main.js');

describe('servesim quickstart', () => {
  it('runs the whole workflow on the shipped data and prints the report path and held-out MAPE', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'servesim-qs-'));
    const r = spawnSync(process.execPath, [CLI, 'quickstart', '--threads', '2'], { cwd, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/held-out MAPE: TTFT avg \d+\.\d %, ITL avg \d+\.\d %/);
    expect(r.stdout).toContain('report: quickstart-output/report/report.html');
    const out = join(cwd, 'quickstart-output');
    expect(readFileSync(join(out, 'report', 'report.html'), 'utf8')).toContain('<html');
    expect(existsSync(join(out, 'sweep', 'summary.csv'))).toBe(true);
    const fit = JSON.parse(readFileSync(join(out, 'fit', 'fit.json'), 'utf8'));
    expect(fit.holdout.points).toHaveLength(2);
    const scores = JSON.parse(readFileSync(join(out, 'report', 'scores.json'), 'utf8'));
    // The held-out points are scored; the training points have rows too, marked train.
    const loads = (train: boolean) =>
      scores.points
        .filter((p: { train: boolean }) => p.train === train)
        .map((p: { key: { concurrency: number } }) => p.key.concurrency)
        .sort((a: number, b: number) => a - b);
    expect(loads(false)).toEqual([32, 32, 64, 64]);
    expect(loads(true)).toEqual([4, 4, 8, 8, 16, 16]);
    // The sweep replays the fitted config at the held-out loads, so its headline is the fit's held-out error.
    const holdout = fit.holdout.metrics as Record<string, { mape: number }>;
    expect(r.stdout).toContain(
      `held-out MAPE: TTFT avg ${holdout['time_to_first_token.avg'].mape.toFixed(1)} %, ITL avg ${holdout['inter_token_latency.avg'].mape.toFixed(1)} %`,
    );

    // Again in the same folder, whose sweep log now also holds a point of an earlier fit at c=32.
    const log = join(out, 'sweep', 'points.jsonl');
    const line32 = readFileSync(log, 'utf8')
      .split('\n')
      .find((l) => l.includes('"traffic.load.concurrency":32')) as string;
    const stale = line32.replace(/"id":"[0-9a-f]+"/, '"id":"000000000000"').replace(/"avg":\d+\.?\d*/g, '"avg":1');
    writeFileSync(log, `${readFileSync(log, 'utf8')}${stale}\n`);
    const again = spawnSync(process.execPath, [CLI, 'quickstart', '--threads', '2'], { cwd, encoding: 'utf8' });
    expect(again.status, again.stderr).toBe(0);
    const withoutWallTime = (text: string) => text.replace(/\(\d+\.\d s\)/, '');
    expect(withoutWallTime(again.stdout)).toBe(withoutWallTime(r.stdout));
  }, 90_000);
});
