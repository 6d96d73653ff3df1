/**
 * Sweeps run on the real pool (the compiled point runner and the real replay, in the test pool
 * task that adds faults on request): byte identity across pool sizes and finish orders, resume,
 * faults, shards and merge.
 * Needs `npm run build` first.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runSweepCommand } from '../src/cli/actions/sweep.js';
import { mergeSweeps } from '../src/sweep/merge.js';
import { PlanError } from '../src/sweep/plan.js';
import type { ProgressReporter } from '../src/sweep/progress.js';
import { runSweep, type RunSweepOptions } from '../src/sweep/run-sweep.js';
import { FAULT_TASK, ids, lines, read, requireBuild, useTempDirs, writeSweep } from './fixtures/sweep/helpers.js';

beforeAll(requireBuild);
const dir = useTempDirs();

/** Every sweep here runs the pool task with faults on request (`engine.model: '__fault:...'`). */
const quiet = { note: () => {}, taskFilename: FAULT_TASK } satisfies Partial<RunSweepOptions>;
const OUTPUT_FILES = ['plan.json', 'points.jsonl', 'summary.csv', 'sweep.svg'];

/** Stops the sweep through its stop signal once `after` points have finished. */
function stopAfter(after: number): { progress: ProgressReporter; stopSignal: AbortSignal } {
  const controller = new AbortController();
  let done = 0;
  return {
    stopSignal: controller.signal,
    progress: { start() {}, end() {}, point: () => void (++done === after && controller.abort()) },
  };
}

describe('sweep run', () => {
  it('writes the same bytes with 1 and 2 pool threads, whatever order the points finish in', async () => {
    const d = dir();
    // Slow points first: with two threads the fast ones finish before them.
    const sweep = writeSweep(d, `grid:\n  engine.model: ['__fault:sleep:150', tiny]\n  traffic.load.concurrency: [1, 2, 4]\n`);
    const one = await runSweep({ ...quiet, sweepFile: sweep, outDir: join(d, 'one'), poolThreads: 1 });
    const two = await runSweep({ ...quiet, sweepFile: sweep, outDir: join(d, 'two'), poolThreads: 2 });
    expect(one.ok).toBe(6);
    expect(two.ok).toBe(6);

    const planOrder = ids(join(d, 'one', 'points.jsonl'));
    const finishOrderTwo = ids(join(d, 'two', 'timings.jsonl'));
    expect(ids(join(d, 'one', 'timings.jsonl'))).toEqual(planOrder);
    expect(finishOrderTwo).not.toEqual(planOrder);
    expect([...finishOrderTwo].sort()).toEqual([...planOrder].sort());
    for (const file of OUTPUT_FILES) expect(read(join(d, 'two', file)), file).toBe(read(join(d, 'one', file)));
    expect(read(join(d, 'one', 'summary.csv')).split('\n')).toHaveLength(1 + 6 + 1);
  });

  it('writes the same bytes whether or not the pool threads were primed (jit-primer.ts)', async () => {
    const d = dir();
    // The client path and a KV pool small enough to preempt: the paths with the most state.
    const base = {
      engine: {
        model: 'primed',
        workers: {
          aggregated: {
            kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 400 } },
            timing: { type: 'linear', base_ms: 8, prefill_token_us: 30, prefill_pair_ns: 1, decode_request_us: 25, decode_kv_token_ns: 40 },
          },
        },
        tokenization: { workers: 2, base_ms: 0.3, per_input_us: 0.5 },
        detokenization: { workers: 1, base_ms: 2, per_output_us: 60 },
      },
      traffic: {
        source: { type: 'synthetic', input_tokens: 300, output_tokens: 60, random_range_ratio: 0.5, seed: 3 },
        load: { type: 'concurrency', concurrency: 1, response_overhead: { base_ms: 1.4, per_output_token_us: 3.65 } },
        stop: { requests: 200 },
      },
    };
    const sweep = writeSweep(
      d,
      'grid:\n  traffic.load.concurrency: [1, 2, 8, 64]\n  engine.detokenization.workers: [1, 3]\n',
      'sweep.yaml',
      base,
    );
    const primed = await runSweep({ ...quiet, sweepFile: sweep, outDir: join(d, 'primed'), poolThreads: 2 });
    const plain = await runSweep({ ...quiet, sweepFile: sweep, outDir: join(d, 'plain'), poolThreads: 1, prime: false });
    expect(primed.ok).toBe(8);
    expect(plain.ok).toBe(8);
    const primedBy = lines(join(d, 'primed', 'timings.jsonl')).filter((l) => (JSON.parse(l) as { primed?: boolean }).primed === true);
    expect(primedBy).toHaveLength(2);
    expect(lines(join(d, 'plain', 'timings.jsonl')).some((l) => l.includes('"primed"'))).toBe(false);
    expect(read(join(d, 'primed', 'points.jsonl'))).toMatch(/"preemptions":[1-9]/);
    for (const file of OUTPUT_FILES) expect(read(join(d, 'primed', file)), file).toBe(read(join(d, 'plain', file)));
  });

  it('records each point line as it finishes, deterministic apart from timings.jsonl', async () => {
    const d = dir();
    const sweep = writeSweep(d, 'grid:\n  traffic.load.concurrency: [1, 3]\n');
    await runSweep({ ...quiet, sweepFile: sweep, outDir: join(d, 'a'), poolThreads: 2 });
    await runSweep({ ...quiet, sweepFile: sweep, outDir: join(d, 'b'), poolThreads: 1 });
    const line = JSON.parse(lines(join(d, 'a', 'points.jsonl'))[0]) as Record<string, unknown>;
    expect(Object.keys(line)).toEqual(['id', 'overrides', 'status', 'summary', 'error']);
    const simulator = (line.summary as { simulator: Record<string, unknown> }).simulator;
    expect(simulator).not.toHaveProperty('wall_time_ms');
    expect(simulator).toHaveProperty('output_tokens');
    expect(new Set(lines(join(d, 'a', 'points.jsonl')))).toEqual(new Set(lines(join(d, 'b', 'points.jsonl'))));
    const timing = JSON.parse(lines(join(d, 'a', 'timings.jsonl'))[0]) as Record<string, unknown>;
    expect(timing).toHaveProperty('wall_ms');
    expect((timing.simulator as Record<string, unknown>).wall_time_ms).toBeTypeOf('number');
  });

  it('resumes: points finished before a stop are not run again', async () => {
    const d = dir();
    const out = join(d, 'out');
    const sweep = writeSweep(d, 'grid:\n  traffic.load.concurrency: {range: {min: 1, max: 32, scale: log2}}\n');
    const first = await runSweep({ ...quiet, ...stopAfter(2), sweepFile: sweep, outDir: out, poolThreads: 1 });
    expect(first.interrupted).toBe(true);
    // The stop comes after the second point is recorded; a point the pool thread already finished
    // by then (the runner keeps one queued behind each running point) is kept too.
    expect(first.ok).toBeGreaterThanOrEqual(2);
    expect(first.ok).toBeLessThanOrEqual(3);
    expect(first.pending).toBe(6 - first.ok);
    expect(read(join(out, 'summary.csv'))).toContain(',pending,');

    const second = await runSweep({ ...quiet, sweepFile: sweep, outDir: out, poolThreads: 2 });
    expect(second.alreadyDone).toBe(first.ok);
    expect(second.ran).toBe(6 - first.ok);
    expect(second.ok).toBe(6);
    const attempts = ids(join(out, 'timings.jsonl'));
    expect(attempts).toHaveLength(6);
    expect(new Set(attempts).size).toBe(6);

    const third = await runSweep({ ...quiet, sweepFile: sweep, outDir: out });
    expect(third.ran).toBe(0);
    const whole = await runSweep({ ...quiet, sweepFile: sweep, outDir: join(d, 'whole'), poolThreads: 1 });
    expect(whole.ok).toBe(6);
    for (const file of OUTPUT_FILES) expect(read(join(out, file)), file).toBe(read(join(d, 'whole', file)));
  });

  it('records a throw, a pool thread exit and a time-out as failed while every other point completes', async () => {
    const d = dir();
    const out = join(d, 'out');
    const sweep = writeSweep(
      d,
      `grid:\n  engine.model: [tiny, '__fault:throw', '__fault:exit', '__fault:hang']\n  traffic.load.concurrency: [1, 2]\n`,
    );
    // 5 s: long enough for a point of the tiny model to finish on a loaded machine, short for a hang.
    const result = await runSweep({ ...quiet, sweepFile: sweep, outDir: out, poolThreads: 2, pointTimeoutS: 5 });
    expect(result.ok).toBe(2);
    const byIndex = new Map(result.failed.map((f) => [f.index, f]));
    expect([...byIndex.keys()]).toEqual([2, 3, 4, 5, 6, 7]);
    for (const i of [2, 3]) expect(byIndex.get(i)).toMatchObject({ status: 'failed', error: 'test fault: thrown by the point' });
    for (const i of [4, 5]) expect(byIndex.get(i)).toMatchObject({ status: 'failed', error: 'pool thread exited with code 7' });
    for (const i of [6, 7]) expect(byIndex.get(i)).toMatchObject({ status: 'timeout', error: 'timed out after 5 s (--point-timeout)' });

    const csv = read(join(out, 'summary.csv')).trimEnd().split('\n');
    expect(csv.slice(1).map((r) => r.split(',')[1])).toEqual(['ok', 'ok', 'failed', 'failed', 'failed', 'failed', 'timeout', 'timeout']);

    // Failed points are run again on the next run; finished ones are not.
    const again = await runSweep({ ...quiet, sweepFile: sweep, outDir: out, poolThreads: 2, pointTimeoutS: 5 });
    expect(again.alreadyDone).toBe(2);
    expect(again.ran).toBe(6);
    expect(lines(join(out, 'points.jsonl'))).toHaveLength(8);
  });

  it('exits non-zero and prints the failed ids', async () => {
    const d = dir();
    const sweep = writeSweep(d, `grid:\n  engine.model: [tiny, '__fault:throw']\n`);
    let stdout = '';
    let stderr = '';
    const code = await runSweepCommand(
      { file: sweep, out: join(d, 'out'), workers: 1 },
      {
        taskFilename: FAULT_TASK,
        stdout: { write: (s: string) => (stdout += s) } as never,
        stderr: { write: (s: string) => (stderr += s) } as never,
      },
    );
    expect(code).toBe(1);
    const failedId = ids(join(d, 'out', 'points.jsonl'))[1];
    expect(stdout).toContain('1/2 points ok');
    expect(stderr).toContain(`failed ids: ${failedId}\n`);
    expect(stderr).toContain(`${failedId}  point 1 (engine.model=__fault:throw): failed: test fault: thrown by the point`);
  });

  it('says how many points ran on the placeholder pass times, and nothing when the config gives the timing', async () => {
    const run = async (d: string, sweep: string) => {
      let stdout = '';
      const code = await runSweepCommand(
        { file: sweep, out: join(d, 'out'), workers: 1 },
        { taskFilename: FAULT_TASK, stdout: { write: (s: string) => (stdout += s) } as never, stderr: { write: () => true } as never },
      );
      expect(code).toBe(0);
      return stdout;
    };
    const d = dir();
    const base = { engine: { model: 'tiny' }, traffic: { stop: { requests: 4 } } };
    const untimed = writeSweep(d, `grid:\n  traffic.load.concurrency: [1, 2, 4]\n`, 'untimed.yaml', base);
    expect(await run(d, untimed)).toContain(
      'not a prediction: 3 of 3 points ran on placeholder pass times (fixed 10 ms with prefill work, 2 ms otherwise): model tiny is not in the catalog and no GPU is named;',
    );
    // Said again on a resumed run, whose points were all done before.
    expect(await run(d, untimed)).toContain('not a prediction: 3 of 3 points');
    const e = dir();
    expect(await run(e, writeSweep(e, `grid:\n  traffic.load.concurrency: [1, 2]\n`))).not.toContain('not a prediction');
  });

  it('validates every point before running anything', async () => {
    const d = dir();
    const out = join(d, 'out');
    const sweep = writeSweep(d, 'grid:\n  traffic.load.concurrency: [1, 0]\n');
    await expect(runSweep({ ...quiet, sweepFile: sweep, outDir: out })).rejects.toBeInstanceOf(PlanError);
    expect(existsSync(out)).toBe(false);
    let stderr = '';
    const code = await runSweepCommand(
      { file: sweep, out },
      { stdout: { write: () => true } as never, stderr: { write: (s: string) => (stderr += s) } as never },
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /1 of 2 points is invalid; nothing was run\.\n {2}point 1 \(traffic\.load\.concurrency=0\): traffic\.load\.concurrency: /,
    );
  });

  it('refuses an output directory another live sweep holds, and takes over a dead one or its own pid', async () => {
    const d = dir();
    const out = join(d, 'out');
    const sweep = writeSweep(d, 'grid:\n  traffic.load.concurrency: [1]\n');
    await runSweep({ ...quiet, sweepFile: sweep, outDir: out, poolThreads: 1 });
    // A live process of this host (the test runner's parent), in the lock format of earlier versions.
    writeFileSync(join(out, '.lock'), `${hostname()} ${process.ppid}\n`);
    await expect(runSweep({ ...quiet, sweepFile: sweep, outDir: out })).rejects.toThrow(/in use by a running sweep/);
    writeFileSync(join(out, '.lock'), `${hostname()} 2147483646\n`);
    await expect(runSweep({ ...quiet, sweepFile: sweep, outDir: out })).resolves.toMatchObject({ ok: 1 });
    expect(existsSync(join(out, '.lock'))).toBe(false);
    // This process's own pid, which it does not hold: left by an earlier process (a restart).
    writeFileSync(join(out, '.lock'), `${JSON.stringify({ host: hostname(), pid: process.pid, started: 'before the restart' })}\n`);
    await expect(runSweep({ ...quiet, sweepFile: sweep, outDir: out })).resolves.toMatchObject({ ok: 1 });
  });
});

describe('shards and merge', () => {
  it('runs disjoint slices that merge into the single-machine result', async () => {
    const d = dir();
    const sweep = writeSweep(d, `grid:\n  traffic.load.concurrency: [1, 2, 4, 8]\n  traffic.source.input_tokens: [16, 64]\n`);
    const whole = await runSweep({ ...quiet, sweepFile: sweep, outDir: join(d, 'whole'), poolThreads: 2 });
    expect(whole.ok).toBe(8);
    const shardIds: string[][] = [];
    for (let i = 0; i < 3; i++) {
      const r = await runSweep({
        ...quiet,
        sweepFile: sweep,
        outDir: join(d, `shard-${i}`),
        shard: { index: i, count: 3 },
        poolThreads: 1,
      });
      expect(r.slice).toBe(i < 2 ? 3 : 2);
      shardIds.push(ids(join(d, `shard-${i}`, 'points.jsonl')));
      expect(read(join(d, `shard-${i}`, 'plan.json'))).toBe(read(join(d, 'whole', 'plan.json')));
    }
    const all = shardIds.flat();
    expect(new Set(all).size).toBe(all.length);
    expect(new Set(all)).toEqual(new Set(ids(join(d, 'whole', 'points.jsonl'))));

    const merged = await mergeSweeps({ dirs: [0, 1, 2].map((i) => join(d, `shard-${i}`)), outDir: join(d, 'merged'), note: () => {} });
    expect(merged).toMatchObject({ planned: 8, ok: 8, failed: [], missing: [] });
    for (const file of OUTPUT_FILES) expect(read(join(d, 'merged', file)), file).toBe(read(join(d, 'whole', file)));

    const partial = await mergeSweeps({ dirs: [join(d, 'shard-0')], outDir: join(d, 'partial'), note: () => {} });
    expect(partial.missing).toHaveLength(5);
    expect(read(join(d, 'partial', 'summary.csv')).match(/,pending,/g)).toHaveLength(5);
  });

  it('refuses to merge outputs of different sweeps', async () => {
    const d = dir();
    const a = writeSweep(d, 'grid:\n  traffic.load.concurrency: [1]\n', 'a.yaml');
    const b = writeSweep(d, 'grid:\n  traffic.load.concurrency: [2]\n', 'b.yaml');
    await runSweep({ ...quiet, sweepFile: a, outDir: join(d, 'a'), poolThreads: 1, chart: false });
    await runSweep({ ...quiet, sweepFile: b, outDir: join(d, 'b'), poolThreads: 1, chart: false });
    await expect(mergeSweeps({ dirs: [join(d, 'a'), join(d, 'b')], outDir: join(d, 'm') })).rejects.toThrow(/a different plan/);
  });
});
