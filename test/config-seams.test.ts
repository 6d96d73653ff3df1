/**
 * The config keys of the engine's seams: `engine.router` and `kv_cache.prefix_caching`. Both
 * stay out of the effective config unless written (so configs written before them keep their
 * echo and their sweep point ids), and resolve to the run description's router and prefix keys.
 */
import { roleOf } from '../src/config/roles.js';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/errors.js';
import { parseRunConfig } from '../src/config/load.js';
import { resolveRun } from '../src/config/resolve.js';
import { pointId } from '../src/sweep/plan.js';
import { thrownBy } from './helpers/errors.js';
import { traceRows } from './helpers/core-run.js';

const issuesOf = (raw: unknown) => thrownBy<ConfigError>(() => parseRunConfig(raw, 'run.yaml'), ConfigError).issues.map((i) => i.message);

describe('engine.router and kv_cache.prefix_caching', () => {
  it('are absent from the effective config unless written, so earlier configs keep their ids', () => {
    const config = parseRunConfig({}, 'run.yaml');
    expect(config.engine).not.toHaveProperty('router');
    expect(roleOf(config.engine, 'aggregated').kv_cache).not.toHaveProperty('prefix_caching');
    // The sweep point id the empty config has without these keys (the same config's id before
    // they existed: computed with that build).
    expect(pointId(config)).toBe('4642ec972bb6');
    const run = resolveRun(config, null);
    expect(run.pools[0].router).toEqual({ type: 'round_robin' });
  });

  it('fill the router block defaults and check its type and weight', () => {
    const config = parseRunConfig({ engine: { router: { type: 'kv_aware' } } }, 'run.yaml');
    expect(config.engine.router).toEqual({ type: 'kv_aware', overlap_score_weight: 1 });
    expect(resolveRun(config, null).pools[0].router).toEqual({ type: 'kv_aware', overlapScoreWeight: 1 });
    expect(parseRunConfig({ engine: { router: {} } }, 'run.yaml').engine.router).toEqual({ type: 'round_robin' });
    expect(issuesOf({ engine: { router: { type: 'random' } } })).toEqual([
      'run.yaml: engine.router.type: must be one of round_robin, least_loaded, kv_aware, got "random"',
    ]);
    expect(issuesOf({ engine: { router: { type: 'kv_aware', overlap_score_weight: -1 } } })).toEqual([
      'run.yaml: engine.router.overlap_score_weight: must be a finite non-negative number, got -1',
    ]);
    expect(issuesOf({ engine: { router: { type: 'least_loaded', overlap_score_weight: 1 } } })[0]).toContain(
      'engine.router.overlap_score_weight: unknown key for type least_loaded',
    );
    expect(issuesOf({ engine: { workers: { aggregated: { kv_cache: { prefix_caching: 'yes' } } } } })).toEqual([
      'run.yaml: engine.workers.aggregated.kv_cache.prefix_caching: must be true or false, got "yes"',
    ]);
  });

  it('key the prefix cache by session or by trace hash ids, and by nothing for synthetic prompts', () => {
    const synthetic = parseRunConfig({}, 'run.yaml');
    expect(resolveRun(synthetic, null).pools[0].kv.prefixCache).toBeNull();
    const session = parseRunConfig(
      { traffic: { source: { type: 'synthetic-session', turns: 3, new_input_tokens_per_turn: 100, output_tokens_per_turn: 20 } } },
      'run.yaml',
    );
    // A session's stream: 3 x (100 + 20) = 360 tokens, 23 blocks of 16, plus one.
    expect(resolveRun(session, null).pools[0].kv.prefixCache).toEqual({ kind: 'session', blocksPerSession: 24 });
    const off = parseRunConfig({ ...session, engine: { workers: { aggregated: { kv_cache: { prefix_caching: false } } } } }, 'run.yaml');
    expect(resolveRun(off, null).pools[0].kv.prefixCache).toBeNull();

    const trace = parseRunConfig({ traffic: { source: { type: 'trace', path: 't.jsonl', block_size: 4 } } }, 'run.yaml');
    // Rows: ids [1 2] (7 tokens: a partial second block), [1 2] (8: a full one), [1 3] (5).
    const rows = traceRows(
      [
        [0, 7, 1],
        [1, 8, 1],
        [2, 5, 1],
      ],
      [
        [1, 2],
        [1, 2],
        [1, 3],
      ],
    );
    const keys = resolveRun(trace, rows).pools[0].kv.prefixCache;
    if (keys === null || keys.kind !== 'trace') throw new Error('expected trace keys');
    // Hash id 1 at position 0 with 4 tokens is one group in all three rows; id 2 with 3 tokens and
    // with 4 tokens are two groups (a partial block never matches a fuller one); id 3 a fourth.
    expect(Array.from(keys.groups)).toEqual([0, 1, 0, 2, 0, 3]);
    expect(keys.groupCount).toBe(4);
    expect(Array.from(keys.rowOffsets)).toEqual([0, 2, 4, 6]);
    // A trace read without hash ids shares nothing.
    expect(resolveRun(trace, traceRows([[0, 7, 1]])).pools[0].kv.prefixCache).toBeNull();
  });
});
