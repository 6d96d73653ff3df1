/**
 * The memory estimate of the prefix cache (src/config/run-checks.ts) against what a replay takes,
 * measured in a child process of the built package started with --expose-gc, so that a full
 * collection can be called before each reading. The estimate's arithmetic is checked in
 * run-checks.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../src/config/load.js';
import { estimateRun } from '../src/config/run-checks.js';

const DIST = join(import.meta.dirname, '..', 'dist', 'src');
const role = (extra: Record<string, unknown>) => ({ engine: { workers: { aggregated: extra } } });

describe('the memory estimate', () => {
  it('does not underestimate the prefix cache (measured, in a process with a collector to call)', { timeout: 240_000 }, () => {
    // Typed-array memory of a run with the cache, against the same run without it, each after a
    // full collection: in a child process of the built package, started with --expose-gc.
    const session = { type: 'synthetic-session', turns: 4, new_input_tokens_per_turn: 200, output_tokens_per_turn: 50 };
    const cases = [
      { traffic: { source: session, load: { concurrency: 64 }, stop: { requests: 20_000 } } },
      { ...role({ parallelism: { replicas: 4 } }), traffic: { source: session, load: { concurrency: 256 }, stop: { requests: 40_000 } } },
    ];
    // One fresh process per run: buffers of an earlier run in the same process can be released
    // late and land in the next reading.
    const script = `
      const [{ parseRunConfig }, { resolveRun }, { Simulation }] = await Promise.all(
        ['config/load.js', 'config/resolve.js', 'core/simulation.js'].map((m) => import('${DIST}/' + m)));
      const raw = JSON.parse(process.argv[1]);
      global.gc();
      const before = process.memoryUsage().arrayBuffers;
      const simulation = new Simulation(resolveRun(parseRunConfig(raw, 'r'), null));
      simulation.run();
      global.gc();
      console.log(process.memoryUsage().arrayBuffers - before + (simulation ? 0 : 1));`;
    const once = (raw: unknown): number => {
      const child = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script, JSON.stringify(raw)], {
        encoding: 'utf8',
      });
      expect(child.stderr).toBe('');
      return Number(child.stdout.trim());
    };
    // Buffers the collector has not yet returned only ever add to a reading, so the least of three
    // readings is the one closest to what the run holds (a single reading varied by 2 MB under load).
    const arrays = (raw: unknown): number => Math.min(once(raw), once(raw), once(raw));
    const used = cases.map((raw) => {
      const off = structuredClone(raw) as { engine?: { workers?: { aggregated?: Record<string, unknown> } } };
      off.engine = { workers: { aggregated: { ...off.engine?.workers?.aggregated, kv_cache: { prefix_caching: false } } } };
      return arrays(raw) - arrays(off);
    });
    cases.forEach((raw, k) => {
      expect(used[k]).toBeGreaterThan(0);
      expect(used[k]).toBeLessThan(estimateRun(parseRunConfig(raw, 'r')).prefixCacheBytes);
    });
  });
});
