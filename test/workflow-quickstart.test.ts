/**
 * `npm start` (servesim quickstart) end to end through the compiled CLI: it fits, sweeps,
 * scores, writes the HTML report and prints where it is with the headline MAPEs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
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
    expect(scores.points.map((p: { key: { concurrency: number } }) => p.key.concurrency).sort((a: number, b: number) => a - b)).toEqual([32, 32, 64, 64]);
  }, 90_000);
});
