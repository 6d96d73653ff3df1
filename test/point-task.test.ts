/**
 * What a pool thread does with a point (src/sweep/point-task.ts), without the pool: the runner
 * primes on the first task that carries a primer and never again, each runner (each thread) on
 * its own, and a point's result does not depend on whether its thread primed.
 */
import { describe, expect, it } from 'vitest';
import { loadRunConfigFromObject } from '../src/config/load.js';
import type { RunConfig } from '../src/config/types.js';
import { prepareRun } from '../src/replay.js';
import { replayPrepared, type PreparedRun } from '../src/replay-run.js';
import { createPointRunner, type PointTask, type ReplayFn } from '../src/sweep/point-task.js';

function task(id: string, concurrency: number, primer?: number[]): PointTask {
  const config = (c: number): RunConfig =>
    loadRunConfigFromObject(
      {
        engine: { model: `m${c}` },
        traffic: {
          source: { type: 'synthetic', input_tokens: 32, output_tokens: 4, random_range_ratio: 1, seed: 0 },
          load: { type: 'concurrency', concurrency: c },
          stop: { requests: 8 },
        },
      },
      'run.yaml',
    );
  const prepared = (c: number): PreparedRun => prepareRun(config(c), { baseDir: '.' });
  return {
    id,
    config: config(concurrency),
    run: prepared(concurrency),
    ...(primer ? { primer: primer.map((c) => ({ config: config(c), run: prepared(c) })) } : {}),
  };
}

/** The real replay, recording the model of each config it is given. */
function recorded(): { replayFn: ReplayFn; models: string[] } {
  const models: string[] = [];
  return { models, replayFn: (config, run, opts) => (models.push(config.engine.model), replayPrepared(config, run, opts)) };
}

describe('a pool thread point runner', () => {
  it('primes once, on the first task that carries a primer, and says so in that result only', () => {
    const { replayFn, models } = recorded();
    const run = createPointRunner(replayFn);
    expect(run(task('a', 1)).primed).toBeUndefined();
    expect(models).toEqual(['m1']);
    expect(run(task('b', 2, [7, 8])).primed).toBe(true);
    expect(models).toEqual(['m1', 'm7', 'm8', 'm2']);
    expect(run(task('c', 3, [7, 8])).primed).toBeUndefined();
    expect(models).toEqual(['m1', 'm7', 'm8', 'm2', 'm3']);
  });

  it('keeps each runner to itself, as each thread loads its own', () => {
    const first = recorded();
    const second = recorded();
    createPointRunner(first.replayFn)(task('a', 1, [5]));
    expect(createPointRunner(second.replayFn)(task('a', 1, [5])).primed).toBe(true);
    expect(second.models).toEqual(['m5', 'm1']);
  });

  it('gives a point the same summary primed or not', () => {
    const primed = createPointRunner(recorded().replayFn)(task('a', 4, [1, 2]));
    const plain = createPointRunner(recorded().replayFn)(task('a', 4));
    expect(JSON.stringify(primed.summary)).toBe(JSON.stringify(plain.summary));
  });
});
