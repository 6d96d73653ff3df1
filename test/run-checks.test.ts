/**
 * The checks a run must pass before it starts (src/config/run-checks.ts): the engine start-up
 * checks shared with vLLM, the bound on the requests a time-capped run sends (a law over random
 * configs: the replay never sends more), and the memory estimate (against the memory measured).
 */
import { roleOf } from '../src/config/roles.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/errors.js';
import { loadRunConfigFromObject, parseRunConfig } from '../src/config/load.js';
import {
  PREFIX_BYTES_PER_REQUEST,
  RECORD_BYTES_PER_REQUEST,
  RECORD_BYTES_PER_TOKEN,
  TABLE_BYTES_PER_REQUEST,
  budgetFloor,
  checkEngineStartup,
  checkRunResources,
  estimateRun,
  memoryBudget,
} from '../src/config/run-checks.js';
import { rooflineOf } from '../src/config/deployment.js';
import { buildRequestRecords } from '../src/core/report.js';
import { resolveRun } from '../src/config/resolve.js';
import { Simulation } from '../src/core/simulation.js';
import { thrownBy } from './helpers/errors.js';

const ROLE = 'engine.workers.aggregated';
const role = (extra: Record<string, unknown>) => ({ engine: { workers: { aggregated: extra } } });

function issuesOf(raw: unknown): string[] {
  return thrownBy(() => loadRunConfigFromObject(raw, 'run.yaml'), ConfigError).issues.map((issue) => issue.message);
}

describe('engine start-up checks (as vLLM)', () => {
  it('refuses max_batched_tokens below max_sequences, at max_batched_tokens', () => {
    expect(issuesOf(role({ scheduler: { max_batched_tokens: 100, max_sequences: 256 } }))).toEqual([
      `run.yaml: ${ROLE}.scheduler.max_batched_tokens: is 100, below max_sequences (256); vLLM refuses to start when max_num_batched_tokens is below max_num_seqs. Raise it to at least 256 or lower max_sequences`,
    ]);
    // Equal is fine, and a budget below the block size is fine when it is at least max_sequences.
    expect(() => loadRunConfigFromObject(role({ scheduler: { max_batched_tokens: 8, max_sequences: 8 } }), 'run.yaml')).not.toThrow();
  });

  it('refuses a budget below context_length without chunked prefill', () => {
    const raw = (chunked: boolean) => ({
      engine: { context_length: 4096, ...role({ scheduler: { max_batched_tokens: 2048, chunked_prefill: chunked } }).engine },
    });
    expect(issuesOf(raw(false))[0]).toMatch(/max_batched_tokens: is 2048, below context_length \(4096\) with chunked_prefill: false/);
    // With chunked prefill on, vLLM starts: so does servesim.
    expect(() => loadRunConfigFromObject(raw(true), 'run.yaml')).not.toThrow();
  });

  it('refuses a KV pool that cannot hold context_length, or one request of the source', () => {
    // 10 blocks of 16 tokens = 160 tokens per rank.
    const pool = { kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks: 10 } } };
    expect(
      issuesOf({ engine: { context_length: 161, ...role(pool).engine }, traffic: { source: { input_tokens: 100, output_tokens: 4 } } })[0],
    ).toBe(
      `run.yaml: ${ROLE}.kv_cache.capacity: holds 160 tokens per rank (10 blocks of 16), fewer than context_length (161); vLLM refuses to start when the KV cache cannot hold one request of max_model_len. Give the pool more blocks or lower engine.context_length`,
    );
    expect(() =>
      loadRunConfigFromObject(
        { engine: { context_length: 160, ...role(pool).engine }, traffic: { source: { input_tokens: 100, output_tokens: 4 } } },
        'run.yaml',
      ),
    ).not.toThrow();
    // context_length max: the largest request (prompt + output) must fit: 150 + 10 = 160 does, 151 + 10 does not.
    expect(() =>
      loadRunConfigFromObject({ ...role(pool), traffic: { source: { input_tokens: 150, output_tokens: 10 } } }, 'run.yaml'),
    ).not.toThrow();
    expect(issuesOf({ ...role(pool), traffic: { source: { input_tokens: 151, output_tokens: 10 } } })[0]).toMatch(
      /kv_cache\.capacity: holds 160 tokens per rank .*fewer than one request of the source \(151 prompt \+ 10 output tokens\)/,
    );
  });

  it('refuses a run whose every prompt reaches context_length, not one where only some do', () => {
    expect(issuesOf({ engine: { context_length: 1024 }, traffic: { source: { input_tokens: 1024, output_tokens: 8 } } })[0]).toMatch(
      /engine\.context_length: is 1,024, but every prompt has at least 1,024 tokens: every request would be rejected/,
    );
    // Lengths in [floor(2000 x 0.5), 2000] = [1000, 2000]: the shortest fits 1024.
    expect(() =>
      loadRunConfigFromObject(
        { engine: { context_length: 1024 }, traffic: { source: { input_tokens: 2000, output_tokens: 8, random_range_ratio: 0.5 } } },
        'run.yaml',
      ),
    ).not.toThrow();
  });

  it('is not applied by the core config parser (the core can simulate what vLLM refuses)', () => {
    const raw = role({ scheduler: { max_batched_tokens: 8, max_sequences: 256 } });
    expect(() => parseRunConfig(raw, 'run.yaml')).not.toThrow();
    expect(checkEngineStartup(parseRunConfig(raw, 'run.yaml'))).toHaveLength(1);
  });
});

describe('the request bound of a time-capped run', () => {
  it('is the slots x the cap / the shortest cycle for a closed loop (fixed timing, worked numbers)', () => {
    // Shortest request: prefill 10 ms + 8 outputs x 2 ms = 26 ms; response overhead 4 ms: 30 ms a cycle.
    const config = parseRunConfig(
      {
        ...role({ timing: { type: 'fixed', prefill_ms: 10, decode_ms: 2 } }),
        traffic: {
          source: { input_tokens: 64, output_tokens: 8 },
          load: { concurrency: 3, response_overhead: { base_ms: 4 } },
          stop: { max_virtual_time_seconds: 3 },
        },
      },
      'run.yaml',
    );
    // 3 slots x (3000 / 30 + 1) = 303.
    expect(estimateRun(config).requests).toBe(303);
  });

  it('is rate x cap for a constant rate, and mean + 6 sd for Poisson', () => {
    const constant = parseRunConfig(
      { traffic: { load: { type: 'constant_rate', requests_per_second: 50 }, stop: { max_virtual_time_seconds: 2 } } },
      'r',
    );
    expect(estimateRun(constant).requests).toBe(101);
    const poisson = parseRunConfig(
      { traffic: { load: { type: 'poisson', requests_per_second: 50 }, stop: { max_virtual_time_seconds: 2 } } },
      'r',
    );
    expect(estimateRun(poisson).requests).toBe(Math.ceil(100 + 6 * 10) + 1);
  });

  it('is never below what the replay sends (random small configs)', () => {
    const cost = fc.oneof(fc.constant(0), fc.double({ min: 0.01, max: 3, noNaN: true }));
    fc.assert(
      fc.property(
        fc.record({
          input: fc.integer({ min: 1, max: 600 }),
          output: fc.integer({ min: 0, max: 12 }),
          ratio: fc.oneof(fc.constant(1), fc.double({ min: 0.1, max: 1, noNaN: true })),
          timing: fc.oneof(
            fc.record({ type: fc.constant('fixed'), prefill_ms: cost, decode_ms: fc.double({ min: 0.05, max: 3, noNaN: true }) }),
            fc.record({
              type: fc.constant('linear'),
              base_ms: fc.double({ min: 0.05, max: 2, noNaN: true }),
              prefill_token_us: cost,
              prefill_pair_ns: cost,
              decode_request_us: cost,
              decode_kv_token_ns: cost,
              prefill_overlap: fc.double({ min: 0, max: 1, noNaN: true }),
            }),
            fc.constant({ type: 'polynomial' }),
            // Roofline timing of a catalog model (dense and mixture-of-experts), with small host costs.
            fc.record({
              type: fc.constant('roofline'),
              model: fc.constantFrom('qwen3-0.6b', 'llama-3.1-8b', 'qwen3-30b-a3b'),
              efficiency: fc.record({ pass_overhead_ms: cost, per_request_us: cost, collective_us: cost, per_layer_us: cost }),
            }),
          ),
          frontend: fc.oneof(fc.constant('auto' as const), cost),
          load: fc.oneof(
            fc.record({ type: fc.constant('concurrency'), concurrency: fc.integer({ min: 1, max: 20 }) }),
            fc.record({
              type: fc.constant('poisson'),
              requests_per_second: fc.integer({ min: 1, max: 3000 }),
              seed: fc.integer({ min: 0, max: 50 }),
            }),
            fc.record({ type: fc.constant('constant_rate'), requests_per_second: fc.integer({ min: 1, max: 3000 }) }),
          ),
          overhead: cost,
          tokenization: cost,
          capS: fc.double({ min: 0.01, max: 0.5, noNaN: true }),
          contextLength: fc.oneof(fc.constant('max' as const), fc.integer({ min: 50, max: 800 })),
        }),
        (a) => {
          const { model, ...timing } = a.timing as { model?: string };
          const raw = {
            engine: {
              ...(model !== undefined ? { model, hardware: 'h100_sxm', workers: { aggregated: { timing } } } : role({ timing }).engine),
              context_length: a.contextLength,
              frontend: { base_ms: a.frontend },
              ...(a.tokenization > 0 ? { tokenization: { base_ms: a.tokenization } } : {}),
            },
            traffic: {
              source: { input_tokens: a.input, output_tokens: a.output, random_range_ratio: a.ratio, seed: 1 },
              // A response overhead keeps a closed loop of instant rejections from stalling.
              load: { ...a.load, response_overhead: { base_ms: a.overhead + 0.01 } },
              stop: { max_virtual_time_seconds: a.capS },
            },
          };
          let config;
          try {
            config = loadRunConfigFromObject(raw, 'run.yaml');
          } catch {
            return; // refused up front (every request rejected): nothing to compare
          }
          const result = new Simulation(resolveRun(config, null)).run();
          expect(result.requestCount).toBeLessThanOrEqual(estimateRun(config).requests);
        },
      ),
      { numRuns: 200, seed: 19 },
    );
  });

  it('bounds a closed loop of roofline passes by what every pass costs at least', () => {
    const config = loadRunConfigFromObject(
      {
        engine: {
          model: 'llama-3.1-8b',
          hardware: 'h100_sxm',
          frontend: { base_ms: 0, per_input_us: 0 },
          workers: { aggregated: { timing: { type: 'roofline' } } },
        },
        traffic: {
          source: { input_tokens: 128, output_tokens: 16 },
          load: { concurrency: 8 },
          stop: { max_virtual_time_seconds: 10 },
        },
      },
      'run.yaml',
    );
    // Each of a request's 16 passes reads the dense and output-projection weights once and pays
    // the collectives' latency and the host's pass cost: a slot sends at most 10 s / that + 1.
    const c = rooflineOf(config.engine, roleOf(config.engine, 'aggregated'));
    const passMs = c.gemmWeightMs + c.lmHeadWeightMs + c.commFixedMs + c.passOverheadMs;
    expect(passMs).toBeGreaterThan(0);
    expect(estimateRun(config).requests).toBeCloseTo(8 * (10_000 / (16 * passMs) + 1), 6);
  });

  it('refuses a cap the load could never fill, naming max_virtual_time_seconds', () => {
    const raw = {
      ...role({ timing: { type: 'fixed', prefill_ms: 0.5, decode_ms: 0.1 } }),
      traffic: { source: { input_tokens: 64, output_tokens: 8 }, load: { concurrency: 1000 }, stop: { max_virtual_time_seconds: 1e6 } },
    };
    // 1,000 x (10^9 ms / 1.3 ms + 1) = 769,230,770,230.8 requests.
    expect(issuesOf(raw)[0]).toBe(
      'run.yaml: traffic.stop.max_virtual_time_seconds: lets the load send up to 769,230,770,231 requests before the run stops, more than the limit of 1,000,000,000; lower it, or stop by traffic.stop.requests',
    );
  });
});

describe('the memory estimate', () => {
  it('adds up the replay columns as written out', () => {
    const config = parseRunConfig({ traffic: { source: { input_tokens: 10, output_tokens: 100 }, stop: { requests: 1000 } } }, 'r');
    const estimate = estimateRun(config);
    // 1,000 requests x 130 bytes; 100,000 gaps x 8 bytes x 2 (the selection's copy); one rank of
    // 256 sequences: 256 x 4 x 2 for its queues, 256 x 4 for the pass outputs.
    expect(TABLE_BYTES_PER_REQUEST).toBe(130);
    expect(estimate.tableBytes).toBe(1000 * 130 + 100_000 * 8 * 2 + 256 * 4 * 2 + 256 * 4);
    expect(estimate.recordBytes).toBe(0);
    expect(estimateRun(config, { perRequest: true }).recordBytes).toBe(1000 * RECORD_BYTES_PER_REQUEST + 100_000 * RECORD_BYTES_PER_TOKEN);
  });

  it('does not underestimate the heap that per-request records take (measured)', () => {
    const requests = 20_000;
    const raw = { traffic: { source: { input_tokens: 32, output_tokens: 64 }, load: { concurrency: 64 }, stop: { requests } } };
    const config = parseRunConfig(raw, 'r');
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    const result = new Simulation(resolveRun(config, null), { recordTokens: true }).run();
    const records = buildRequestRecords(result);
    const used = process.memoryUsage().heapUsed - before;
    expect(records).toHaveLength(requests);
    expect(used).toBeLessThan(estimateRun(config, { perRequest: true }).recordBytes);
  });

  it('adds the prefix cache of a session source: groups, their slabs and the per-request books', () => {
    const session = { type: 'synthetic-session', turns: 3, new_input_tokens_per_turn: 100, output_tokens_per_turn: 20 };
    const raw = { traffic: { source: session, load: { concurrency: 4 }, stop: { requests: 1000 } } };
    // At most 1,000 / 3 -> 334 whole sessions plus one per slot: 338 groups; a session's stream is
    // 3 x 120 = 360 tokens, 23 blocks of 16, plus one: 24 keys. One rank, unlimited pool. All of
    // it grows by doubling: 3 x (books, group index, slabs).
    expect(PREFIX_BYTES_PER_REQUEST).toBe(20);
    expect(estimateRun(parseRunConfig(raw, 'r')).prefixCacheBytes).toBe(3 * (1000 * 20 + 338 * 4 + 338 * 24 * 4));
    // Two ranks with 100 blocks each: each indexes every group and holds at most 100 slabs.
    const limited = { ...raw, ...role({ parallelism: { replicas: 2 }, kv_cache: { capacity: { type: 'fixed', blocks: 100 } } }) };
    expect(estimateRun(parseRunConfig(limited, 'r')).prefixCacheBytes).toBe(3 * (1000 * 20 + 2 * 338 * 4 + 2 * 100 * 24 * 4));
    // Nothing shared: no prefix cache.
    const off = { ...raw, ...role({ kv_cache: { prefix_caching: false } }) };
    expect(estimateRun(parseRunConfig(off, 'r')).prefixCacheBytes).toBe(0);
    expect(estimateRun(parseRunConfig({}, 'r')).prefixCacheBytes).toBe(0);
  });

  it('adds the prefix cache of a trace: its hash ids, and kv_aware routing per rank', () => {
    const raw = {
      engine: {
        router: { type: 'kv_aware' },
        workers: { aggregated: { parallelism: { replicas: 4 }, kv_cache: { capacity: { type: 'fixed', blocks: 100 } } } },
      },
      traffic: { source: { type: 'trace', path: 't.jsonl' } },
    };
    // 3 rows with 2 hash ids each; blocks of 512 trace tokens hold 32 engine blocks of 16.
    const trace = {
      rows: 3,
      inputLength: Int32Array.of(900, 900, 900),
      outputLength: Int32Array.of(1, 1, 1),
      hashIdOffsets: Int32Array.of(0, 2, 4, 6),
    };
    // Sized once: 4 ranks x 6 groups x 4 bytes (index) and x 4 (router). Grown: 3 x (3 requests x
    // 20, 4 x 6 slabs of 32 keys).
    expect(estimateRun(parseRunConfig(raw, 'r'), { trace }).prefixCacheBytes).toBe(4 * 6 * 4 * 2 + 3 * (3 * 20 + 4 * 6 * 32 * 4));
    expect(estimateRun(parseRunConfig(raw, 'r'), { trace: { ...trace, hashIdOffsets: undefined } }).prefixCacheBytes).toBe(0);
  });

  it('refuses a prefix cache that would not fit, naming prefix_caching', () => {
    const session = { type: 'synthetic-session', turns: 2, new_input_tokens_per_turn: 4000, output_tokens_per_turn: 100 };
    const raw = { traffic: { source: session, load: { concurrency: 64 }, stop: { requests: 1_000_000 } } };
    const config = parseRunConfig(raw, 'r');
    const { tableBytes, prefixCacheBytes } = estimateRun(config);
    // 500,064 sessions of 8,200 tokens: 514 keys each, 3 x about 1.06 GB, above the replay's own columns.
    expect(prefixCacheBytes).toBe(3 * (1_000_000 * 20 + 500_064 * 4 + 500_064 * 514 * 4));
    const budget = { offHeapBytes: tableBytes + prefixCacheBytes / 2, heapBytes: 4e9 };
    const [violation] = checkRunResources(config, { budget });
    expect(violation.path).toBe(`${ROLE}.kv_cache.prefix_caching`);
    expect(violation.reason).toMatch(
      /^the prefix cache of 1 rank over 1,000,000 requests of 100 output tokens needs about 3\.2 GB of memory/,
    );
    expect(violation.reason).toContain('turn it off (prefix_caching: false)');
    const off = parseRunConfig({ ...raw, ...role({ kv_cache: { prefix_caching: false } }) }, 'r');
    expect(checkRunResources(off, { budget })).toEqual([]);
  });

  it('refuses records that would not fit the heap, naming the flag and the knob', () => {
    const config = parseRunConfig({ traffic: { source: { output_tokens: 1024 }, stop: { requests: 5_000_000 } } }, 'r');
    const [violation] = checkRunResources(config, { perRequestFlag: '--per-request', budget: { offHeapBytes: 16e9, heapBytes: 4e9 } });
    // 5e6 x 700 + 5.12e9 tokens x 24 bytes = 126.4 GB.
    expect(violation).toEqual({
      path: 'traffic.stop.requests',
      reason:
        "5,000,000 requests of 1,024 output tokens with --per-request keep every token's times in memory: about 126.4 GB, more than the 4.0 GB of JS heap this process may use; lower it, drop --per-request, or raise the heap (NODE_OPTIONS=--max-old-space-size=MB)",
    });
    expect(checkRunResources(config, { budget: { offHeapBytes: 16e9, heapBytes: 4e9 } })).toEqual([]);
  });

  it('asks the machine for its memory only for a run larger than what this process already holds, with the same verdicts', () => {
    const floor = budgetFloor();
    const budget = memoryBudget();
    expect(floor.offHeapBytes).toBeGreaterThan(0);
    expect(floor.offHeapBytes).toBeLessThanOrEqual(budget.offHeapBytes);
    expect(floor.heapBytes).toBeLessThanOrEqual(budget.heapBytes);
    // Below the floor, between the floor and the machine's budget, and above the machine's budget.
    const configOf = (requests: number) => parseRunConfig({ traffic: { source: { output_tokens: 64 }, stop: { requests } } }, 'r');
    const requestsOver = (bytes: number) => {
      let requests = 1;
      while (estimateRun(configOf(requests)).tableBytes <= bytes) requests *= 2;
      return requests;
    };
    const verdicts = [1, requestsOver(floor.offHeapBytes), requestsOver(budget.offHeapBytes)].map((requests) => {
      const config = configOf(requests);
      const found = checkRunResources(config);
      expect(found).toEqual(checkRunResources(config, { budget }));
      return [estimateRun(config).tableBytes > floor.offHeapBytes, found.length];
    });
    expect(verdicts).toEqual([
      [false, 0],
      [true, 0],
      [true, 1],
    ]);
  });
});
