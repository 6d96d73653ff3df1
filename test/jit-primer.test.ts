/**
 * The pool threads' JIT primer (src/sweep/jit-primer.ts): its runs are valid, replay without
 * error, and cover the paths they are there for (the event heap and several detokenization
 * servers). That priming changes no result is checked on the real pool in sweep-run.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { replay } from '../src/replay.js';
import { primerConfigs, primerRawConfigs } from '../src/sweep/jit-primer.js';

describe('jit primer', () => {
  it('validates, and each run replays its requests in well under the cost of a point', () => {
    const configs = primerConfigs();
    expect(configs).toHaveLength(primerRawConfigs().length);
    let outputTokens = 0;
    for (const config of configs) {
      const { summary } = replay(config, { baseDir: '.' });
      expect(summary.run.request_count).toBe(64);
      outputTokens += summary.simulator.output_tokens;
    }
    // Small: about 25 ms for the four runs on a cold thread, against tens of ms per point.
    expect(outputTokens).toBeLessThanOrEqual(4 * 64 * 16);
  });

  it('runs closed loops from concurrency 1 to 64 over 1 to 8 detokenization servers', () => {
    const shapes = primerConfigs().map((c) => [c.traffic.load.type === 'concurrency' ? c.traffic.load.concurrency : 0, c.engine.detokenization?.workers]);
    expect(shapes.map(([c]) => c)).toContain(1);
    expect(Math.max(...shapes.map(([c]) => c as number))).toBe(64);
    expect(new Set(shapes.map(([, w]) => w)).size).toBeGreaterThan(2);
  });
});
