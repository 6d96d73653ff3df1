/**
 * The laws of the replay core (test/helpers/core-laws.ts) on 300 random configs; properties.test.ts
 * checks a hundred in the unit suite. And the stall guard, which takes seconds to give up.
 */
import { describe, expect, it } from 'vitest';
import { describeCoreLaws, simulate } from './helpers/core-laws.js';

describeCoreLaws({
  laws: 300,
  lawsSeed: 20261201,
  determinism: 60,
  determinismSeed: 7,
  zeroCosts: 60,
  zeroCostsSeed: 11,
  atLeast: { completedWithTokens: 1001, preemptingRuns: 4, rejected: 4 },
});

describe('the replay core', () => {
  it('stops a run that makes no progress in virtual time with a clear error', () => {
    expect(() =>
      simulate({
        engine: { context_length: 10 },
        traffic: {
          source: { type: 'synthetic', input_tokens: 100, output_tokens: 1 },
          load: { type: 'concurrency', concurrency: 2 },
          stop: { max_virtual_time_seconds: 1 },
        },
      }),
    ).toThrow(/no progress in virtual time at 0 ms/);
  });
});
