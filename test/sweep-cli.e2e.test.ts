/**
 * `servesim sweep` in a real process: SIGKILL mid-sweep loses no finished point, Ctrl-C stops,
 * keeps what finished and says how to resume, and `sweep merge` from the command line.
 * Runs the compiled command line with the test pool task that makes points slow on request
 * (test/fixtures/sweep/cli-with-fault-task.mjs); needs `npm run build` first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { FAULT_CLI, ids, lines, read, requireBuild, RUN_CLI, useTempDirs, writeSweep } from './fixtures/sweep/helpers.js';

beforeAll(requireBuild);
const dir = useTempDirs();

interface Run {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

function cli(args: string[]): Run {
  const child = spawn(process.execPath, [FAULT_CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((res) =>
    child.on('exit', (code, signal) => res({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

/** Waits until `file` has at least `count` lines. */
async function waitForLines(file: string, count: number, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (existsSync(file) && lines(file).length >= count) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${file} did not reach ${count} lines`);
}

/** Eight points of about 250 ms each, run one at a time. */
const SLOW_SWEEP = `set:\n  engine.model: '__fault:sleep:250'\ngrid:\n  traffic.load.concurrency: [1, 2, 3, 4, 5, 6, 7, 8]\n`;

describe('servesim sweep (process)', () => {
  it('loses no finished point when killed with SIGKILL, and the rerun runs only the rest', async () => {
    const d = dir();
    const out = join(d, 'out');
    const sweep = writeSweep(d, SLOW_SWEEP);
    const first = cli(['sweep', sweep, '--out', out, '--workers', '1']);
    await waitForLines(join(out, 'points.jsonl'), 3);
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');

    const kept = ids(join(out, 'points.jsonl'));
    expect(kept.length).toBeGreaterThanOrEqual(3);
    expect(kept.length).toBeLessThan(8);

    const second = await cli(['sweep', sweep, '--out', out, '--workers', '2']).done;
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`8/8 points ok (${kept.length} already done, ${8 - kept.length} run)`);
    const attempts = ids(join(out, 'timings.jsonl'));
    for (const id of kept) expect(attempts.filter((a) => a === id)).toHaveLength(1);
    expect(lines(join(out, 'points.jsonl'))).toHaveLength(8);
  });

  it('stops on Ctrl-C, keeps what finished and prints how to resume', async () => {
    const d = dir();
    const out = join(d, 'out');
    const sweep = writeSweep(d, SLOW_SWEEP);
    const first = cli(['sweep', sweep, '--out', out, '--workers', '1']);
    await waitForLines(join(out, 'points.jsonl'), 2);
    first.child.kill('SIGINT');
    const stopped = await first.done;
    expect(stopped.code).toBe(130);
    const kept = ids(join(out, 'points.jsonl'));
    expect(kept.length).toBeGreaterThanOrEqual(2);
    expect(stopped.stderr).toContain(`interrupted; ${kept.length} of 8 points finished and are kept in ${out}`);
    expect(stopped.stderr).toContain(`resume with: npx servesim sweep ${sweep} --out ${out}\n`);
    expect(read(join(out, 'summary.csv')).match(/,pending,/g)).toHaveLength(8 - kept.length);

    const resumed = await cli(['sweep', sweep, '--out', out]).done;
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`(${kept.length} already done, ${8 - kept.length} run)`);
  });

  it('merges shard directories from the command line', async () => {
    const d = dir();
    const sweep = writeSweep(d, 'grid:\n  traffic.load.concurrency: [1, 2, 3]\n');
    const shards = await Promise.all(
      ['0/2', '1/2'].map((s, i) => cli(['sweep', sweep, '--out', join(d, `s${i}`), '--shard', s, '--workers', '1']).done),
    );
    expect(shards.map((s) => s.code)).toEqual([0, 0]);
    expect(shards[0].stdout).toContain('(shard 0/2: 2 of 3 points)');
    const merged = await cli(['sweep', 'merge', join(d, 's0'), join(d, 's1'), '--out', join(d, 'merged')]).done;
    expect(merged.code).toBe(0);
    expect(merged.stdout).toContain('3/3 points ok');
    const missing = await cli(['sweep', 'merge', join(d, 's0'), '--out', join(d, 'half')]).done;
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/1 points have no result in any directory/);
  });

  it('takes the shard from a Kubernetes Indexed Job index with --shard-count', async () => {
    const d = dir();
    const sweep = writeSweep(d, 'grid:\n  traffic.load.concurrency: [1, 2, 3]\n');
    const child = spawn(process.execPath, [RUN_CLI, 'sweep', sweep, '--out', join(d, 'k'), '--shard-count', '3', '--workers', '1'], {
      env: { ...process.env, JOB_COMPLETION_INDEX: '2' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    const code = await new Promise((res) => child.on('exit', res));
    expect(code).toBe(0);
    expect(stdout).toContain('(shard 2/3: 1 of 3 points)');
  });
});
