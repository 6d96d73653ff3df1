/**
 * A synthetic source with a dataset of entries (AIPerf's --num-dataset-entries and
 * --dataset-sampling-strategy; docs/replay-model.md, "A dataset of prompts"): a hand timeline of
 * repeated prompts served from the prefix cache, laws of the three samplings over random
 * datasets, and the rule on sampling without entries.
 *
 * Timing in the timeline: linear, base 1 ms + 0.125 ms per prefill token (exact in binary), so a
 * pass that prefills P tokens takes 1 + P/8 ms and a decode pass 1 ms; no client path.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../src/config/load.js';
import { repeatedPromptsNote } from '../src/calibrate/engine-command.js';
import { pointConfig, resolveSimLoad } from '../src/calibrate/sim-load.js';
import { loadFromCliCommand, loadFromInputConfig } from '../src/io/read-aiperf-load.js';
import { readMeasuredPoints } from '../src/score/score-inputs.js';
import { runCore } from './helpers/core-run.js';

const LINEAR = { type: 'linear', base_ms: 1, prefill_token_us: 125 };

function closedLoop(source: Record<string, unknown>, requests: number, concurrency = 1, kv: Record<string, unknown> = {}) {
  return runCore({
    engine: { workers: { aggregated: { kv_cache: { block_size: 16, ...kv }, timing: LINEAR } } },
    traffic: {
      source: { type: 'synthetic', input_tokens: 64, output_tokens: 2, ...source },
      load: { type: 'concurrency', concurrency },
      stop: { requests },
    },
  });
}

describe('a dataset of prompts', () => {
  it('serves a repeated prompt from the prefix cache (hand timeline)', () => {
    // Two entries of 64 tokens, taken in order: R0 (entry 0) prefills 64 tokens in 1 + 64/8 = 9 ms,
    // token at 9, decodes its second at 10; R1 (entry 1) is sent at 10: 19, 20. R2 repeats entry 0:
    // R0 computed 65 tokens (prompt and first output), 4 full blocks; at most 63 tokens may come
    // from the cache, so 3 blocks (48) do and 16 are prefilled: 1 + 16/8 = 3 ms, tokens at 23, 24.
    // R3 repeats entry 1: 27, 28.
    const { records, summary } = closedLoop({ dataset_entries: 2, dataset_sampling: 'sequential' }, 4);
    expect(records.map((r) => r.token_ms)).toEqual([
      [9, 10],
      [19, 20],
      [23, 24],
      [27, 28],
    ]);
    expect(records.map((r) => [r.session_id, r.cached_tokens])).toEqual([
      [0, 0],
      [1, 0],
      [0, 48],
      [1, 48],
    ]);
    expect(summary.prefix_cache).toEqual({ hit_rate: 96 / 256, queries: 256, hits: 96, evictions: 0 });
  });

  it('shares nothing without a dataset, or with the prefix cache off', () => {
    // Every prompt its own: each request prefills 64 tokens, 9 ms, then 1 ms of decode.
    const own = closedLoop({}, 4);
    expect(own.records.map((r) => r.token_ms)).toEqual([
      [9, 10],
      [19, 20],
      [29, 30],
      [39, 40],
    ]);
    expect(own.summary.prefix_cache).toBeUndefined();
    const off = closedLoop({ dataset_entries: 2, dataset_sampling: 'sequential' }, 4, 1, { prefix_caching: false });
    expect(off.records.map((r) => r.token_ms[0])).toEqual([9, 19, 29, 39]);
  });

  it('takes entries as each sampling says, with one pair of lengths per entry, the same for a seed', () => {
    const arbitrary = fc.record({
      entries: fc.integer({ min: 1, max: 9 }),
      requests: fc.integer({ min: 1, max: 60 }),
      concurrency: fc.integer({ min: 1, max: 4 }),
      seed: fc.integer({ min: 0, max: 1000 }),
      sampling: fc.constantFrom('shuffle', 'sequential', 'random'),
    });
    fc.assert(
      fc.property(arbitrary, ({ entries, requests, concurrency, seed, sampling }) => {
        const source = {
          dataset_entries: entries,
          dataset_sampling: sampling,
          input_tokens: 300,
          input_tokens_stddev: 60,
          output_tokens: 6,
          output_tokens_stddev: 2,
          seed,
        };
        const { records } = closedLoop(source, requests, concurrency);
        const byId = [...records].sort((a, b) => a.request_id - b.request_id);
        const taken = byId.map((r) => r.session_id);
        expect(taken.every((e) => e >= 0 && e < entries)).toBe(true);
        if (sampling === 'sequential') expect(taken).toEqual(byId.map((_, i) => i % entries));
        if (sampling === 'shuffle') {
          // Every pass over the entries takes each exactly once.
          for (let start = 0; start < taken.length; start += entries) {
            const pass = taken.slice(start, start + entries);
            expect(new Set(pass).size).toBe(pass.length);
          }
        }
        // An entry is one prompt: every request of it has its lengths.
        const lengths = new Map<number, string>();
        for (const r of byId) {
          const pair = `${r.input_tokens}/${r.output_tokens}`;
          expect(lengths.get(r.session_id) ?? pair).toBe(pair);
          lengths.set(r.session_id, pair);
        }
        const again = closedLoop(source, requests, concurrency).records.sort((a, b) => a.request_id - b.request_id);
        expect(again.map((r) => [r.session_id, r.input_tokens, r.output_tokens])).toEqual(
          byId.map((r) => [r.session_id, r.input_tokens, r.output_tokens]),
        );
      }),
      { numRuns: 60 },
    );
  });

  it('shuffles each pass over the entries, and draws random entries with repeats within a pass', () => {
    const order = (sampling: string) =>
      closedLoop({ dataset_entries: 8, dataset_sampling: sampling, seed: 5 }, 24)
        .records.sort((a, b) => a.request_id - b.request_id)
        .map((r) => r.session_id);
    const shuffled = order('shuffle');
    const passes = [shuffled.slice(0, 8), shuffled.slice(8, 16), shuffled.slice(16, 24)];
    for (const pass of passes) expect([...pass].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // Not entry order, and a fresh order each pass.
    expect(passes[0]).not.toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(passes[1]).not.toEqual(passes[0]);
    // 24 independent draws of 8 entries: some pass of 8 repeats an entry (all three without a
    // repeat has probability (8!/8^8)^3 < 1e-7; the draw is fixed by the seed).
    const random = order('random');
    expect([0, 8, 16].some((start) => new Set(random.slice(start, start + 8)).size < 8)).toBe(true);
  });

  it('refuses a sampling without entries, and entries that are not a positive integer', () => {
    expect(() => parseRunConfig({ traffic: { source: { type: 'synthetic', dataset_sampling: 'random' } } }, 'run.yaml')).toThrow(
      "run.yaml: traffic.source.dataset_sampling: is random without dataset_entries: sampling chooses among a dataset's entries; set dataset_entries (AIPerf's --num-dataset-entries) or remove dataset_sampling",
    );
    expect(() => parseRunConfig({ traffic: { source: { type: 'synthetic', dataset_entries: 0 } } }, 'run.yaml')).toThrow(
      'run.yaml: traffic.source.dataset_entries: must be a positive integer',
    );
    expect(() =>
      parseRunConfig({ traffic: { source: { type: 'synthetic', dataset_entries: 4, dataset_sampling: 'cycle' } } }, 'run.yaml'),
    ).toThrow('run.yaml: traffic.source.dataset_sampling: must be shuffle, sequential or random');
  });
});

describe("a measured run's dataset", () => {
  it('is read from every layout that states it, and from a real run', () => {
    expect(loadFromInputConfig({ datasets: [{ name: 'main', entries: 100, prompts: { isl: { mean: 512 } } }] }).datasetEntries).toBe(100);
    expect(loadFromInputConfig({ input: { conversation: { num: 50 } } }).datasetEntries).toBe(50);
    expect(loadFromInputConfig({ num_dataset_entries: 20 }).datasetEntries).toBe(20);
    expect(loadFromCliCommand('aiperf profile --num-dataset-entries 30 --concurrency 4').datasetEntries).toBe(30);
    expect(loadFromInputConfig({ datasets: [{ name: 'main', prompts: { isl: { mean: 512 } } }] }).datasetEntries).toBeUndefined();
    // The bundled MLX run: 100 entries, 100 requests at concurrency 1 (no prompt sent twice).
    const { points } = readMeasuredPoints(['calibration/aiperf-mlx-qwen3-0.6b-c1']);
    expect(points[0].dataset).toEqual({ entries: 100, requests: 100 });
  });

  it('is noted when runs repeated prompts the base config does not, and kept from a base config that sets it', () => {
    const base = parseRunConfig({}, 'base.yaml');
    const repeated = [
      { source: 'runs/c8', dataset: { entries: 100, requests: 800 } },
      { source: 'runs/c1', dataset: { entries: 100, requests: 100 } },
    ];
    expect(repeatedPromptsNote(repeated, base)).toBe(
      "1 measured run repeated 100 prompts over more requests (runs/c8: 800 requests, AIPerf's --num-dataset-entries); with prefix caching the engine served the repeats from its cache. The simulated points send every prompt once: set traffic.source.dataset_entries in the base config to replay the repeats",
    );
    expect(repeatedPromptsNote([repeated[1]], base)).toBeNull();
    const withDataset = parseRunConfig({ traffic: { source: { dataset_entries: 100, dataset_sampling: 'random' } } }, 'base.yaml');
    expect(repeatedPromptsNote(repeated, withDataset)).toBeNull();
    const point = pointConfig(withDataset, { concurrency: 8, isl: 512, osl: 64 }, null, resolveSimLoad({ rangeRatio: 1 }));
    expect(point.traffic.source).toMatchObject({ type: 'synthetic', input_tokens: 512, dataset_entries: 100, dataset_sampling: 'random' });
  });
});
