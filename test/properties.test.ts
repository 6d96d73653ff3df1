/**
 * The laws of the replay core (test/helpers/core-laws.ts) on a hundred random configs, for the unit
 * suite; properties.e2e.test.ts checks three times as many. Seed 2's configs include a run that
 * preempts (about one config in a hundred does).
 */
import { describeCoreLaws } from './helpers/core-laws.js';

describeCoreLaws({
  laws: 100,
  lawsSeed: 2,
  determinism: 15,
  determinismSeed: 8,
  zeroCosts: 15,
  zeroCostsSeed: 12,
  atLeast: { completedWithTokens: 500, preemptingRuns: 1, rejected: 4 },
});
