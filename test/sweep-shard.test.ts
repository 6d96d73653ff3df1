import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ShardError, isInShard, parseShard, resolveShard, shardFromEnv } from '../src/sweep/shard.js';

describe('shards', () => {
  it('parses I/N with a 0-based index', () => {
    expect(parseShard('0/4')).toEqual({ index: 0, count: 4 });
    expect(parseShard(' 3 / 4 ')).toEqual({ index: 3, count: 4 });
    expect(() => parseShard('4/4')).toThrow(/0-based, 0\.\.3/);
    expect(() => parseShard('1/0')).toThrow(/at least 1/);
    expect(() => parseShard('a/b')).toThrow(ShardError);
  });

  it('splits a plan into disjoint slices that cover it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 17 }), (points, count) => {
        const owners = Array.from({ length: points }, (_, i) =>
          Array.from({ length: count }, (_, s) => s).filter((s) => isInShard(i, { index: s, count })),
        );
        expect(owners.every((o) => o.length === 1)).toBe(true);
        const sizes = Array.from({ length: count }, (_, s) => owners.filter((o) => o[0] === s).length);
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      }),
    );
    expect(isInShard(5, undefined)).toBe(true);
  });

  it('reads the shard of a Slurm job array, with its MIN and STEP', () => {
    expect(shardFromEnv({ SLURM_ARRAY_TASK_ID: '2', SLURM_ARRAY_TASK_COUNT: '4' })).toEqual({ index: 2, count: 4 });
    expect(shardFromEnv({ SLURM_ARRAY_TASK_ID: '5', SLURM_ARRAY_TASK_MIN: '1', SLURM_ARRAY_TASK_COUNT: '8' })).toEqual({
      index: 4,
      count: 8,
    });
    expect(
      shardFromEnv({ SLURM_ARRAY_TASK_ID: '6', SLURM_ARRAY_TASK_MIN: '0', SLURM_ARRAY_TASK_STEP: '2', SLURM_ARRAY_TASK_COUNT: '4' }),
    ).toEqual({ index: 3, count: 4 });
    expect(() => shardFromEnv({ SLURM_ARRAY_TASK_ID: '2' })).toThrow(/SLURM_ARRAY_TASK_COUNT is not/);
    expect(() => shardFromEnv({ SLURM_ARRAY_TASK_ID: '4', SLURM_ARRAY_TASK_COUNT: '4' })).toThrow(/out of range/);
  });

  it('reads the shard of a Kubernetes Indexed Job with the count from the command line', () => {
    expect(shardFromEnv({ JOB_COMPLETION_INDEX: '3' }, 5)).toEqual({ index: 3, count: 5 });
    expect(() => shardFromEnv({ JOB_COMPLETION_INDEX: '3' })).toThrow(/--shard-count/);
    expect(() => shardFromEnv({})).toThrow(/no shard in the environment/);
  });

  it('takes --shard, --shard auto, or --shard-count alone', () => {
    expect(resolveShard(undefined, undefined, { SLURM_ARRAY_TASK_ID: '1', SLURM_ARRAY_TASK_COUNT: '2' })).toBeUndefined();
    expect(resolveShard('1/3', undefined, {})).toEqual({ index: 1, count: 3 });
    expect(resolveShard('auto', undefined, { SLURM_ARRAY_TASK_ID: '1', SLURM_ARRAY_TASK_COUNT: '2' })).toEqual({ index: 1, count: 2 });
    expect(resolveShard(undefined, 6, { JOB_COMPLETION_INDEX: '5' })).toEqual({ index: 5, count: 6 });
    expect(() => resolveShard('1/3', 4, {})).toThrow(/disagree/);
  });
});
