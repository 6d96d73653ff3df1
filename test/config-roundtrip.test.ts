import { roleOf } from '../src/config/roles.js';
import fc from 'fast-check';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../src/config/load.js';
import { applySet } from '../src/config/set-override.js';

type Override = [path: string, value: unknown];

const ROLE = 'engine.workers.aggregated';
const cost = (max: number) => fc.double({ min: 0, max, noNaN: true, noDefaultInfinity: true });
const positive = (max: number) => fc.double({ min: 1e-6, max, noNaN: true, noDefaultInfinity: true });
const int = (min: number, max: number) => fc.integer({ min, max });
const maybe = (arb: fc.Arbitrary<Override[]>) => fc.oneof(fc.constant<Override[]>([]), arb);

/** Overrides that are valid alone and together (prompts stay below the smallest budget with chunking off). */
const overrides: fc.Arbitrary<Override[]> = fc
  .tuple(
    maybe(fc.string({ maxLength: 20 }).map((s): Override[] => [['engine.model', s]])),
    maybe(fc.string({ maxLength: 20 }).map((s): Override[] => [['engine.hardware', s]])),
    maybe(fc.oneof(fc.constant('max'), int(1, 1_000_000)).map((v): Override[] => [['engine.context_length', v]])),
    maybe(
      fc
        .record({ replicas: int(1, 8), tensor: int(1, 8), attention_data: int(1, 8) }, { requiredKeys: [] })
        .map((v): Override[] => [[`${ROLE}.parallelism`, v]]),
    ),
    maybe(
      fc.tuple(int(16_384, 65_536), int(1, 1024), fc.boolean()).map(([budget, seqs, chunked]): Override[] => [
        [`${ROLE}.scheduler.max_batched_tokens`, budget],
        [`${ROLE}.scheduler.max_sequences`, seqs],
        [`${ROLE}.scheduler.chunked_prefill`, chunked],
      ]),
    ),
    maybe(int(1, 64).map((v): Override[] => [[`${ROLE}.kv_cache.block_size`, v]])),
    maybe(
      fc
        .oneof(
          fc.constant({ type: 'unlimited' }),
          int(1, 1e6).map((blocks) => ({ type: 'fixed', blocks })),
          fc.record({
            type: fc.constant('memory'),
            gpu_memory_gib: fc.constantFrom(24, 40, 80, 141),
            memory_fraction: fc.double({ min: 0.8, max: 1, noNaN: true }),
            weights_gib: cost(10),
            kv_bytes_per_token: int(1024, 1 << 20),
          }),
        )
        .map((v): Override[] => [[`${ROLE}.kv_cache.capacity`, v]]),
    ),
    maybe(
      fc
        .oneof(
          fc.record({ type: fc.constant('fixed'), prefill_ms: cost(100), decode_ms: positive(10) }),
          fc.constant({ type: 'polynomial' }),
          fc.record(
            {
              type: fc.constant('linear'),
              base_ms: positive(20),
              prefill_token_us: cost(100),
              prefill_pair_ns: cost(1),
              decode_request_us: cost(100),
              decode_kv_token_ns: cost(10),
            },
            { requiredKeys: ['type', 'base_ms'] },
          ),
        )
        .map((v): Override[] => [[`${ROLE}.timing`, v]]),
    ),
    maybe(
      fc
        .record({ workers: int(1, 16), base_ms: cost(5), per_input_us: cost(5) }, { requiredKeys: [] })
        .map((v): Override[] => [['engine.tokenization', v]]),
    ),
    maybe(
      fc
        .record({ workers: int(1, 16), base_ms: cost(5), per_output_us: cost(5), chunk_outputs: int(1, 256) }, { requiredKeys: [] })
        .map((v): Override[] => [['engine.detokenization', v]]),
    ),
    fc.oneof(
      fc
        .tuple(
          fc.oneof(
            fc.record(
              {
                type: fc.constant('synthetic'),
                input_tokens: int(1, 8192),
                output_tokens: int(0, 4096),
                random_range_ratio: fc.double({ min: 0.01, max: 1, noNaN: true }),
                seed: int(0, 2 ** 31),
              },
              { requiredKeys: ['type'] },
            ),
            fc.record(
              {
                type: fc.constant('synthetic-session'),
                turns: int(1, 4),
                new_input_tokens_per_turn: int(1, 1000),
                output_tokens_per_turn: int(0, 1000),
                inter_turn_delay_ms: cost(1000),
              },
              { requiredKeys: ['type', 'turns', 'new_input_tokens_per_turn', 'output_tokens_per_turn'] },
            ),
          ),
          fc.oneof(
            fc.record({ type: fc.constant('concurrency'), concurrency: int(1, 512) }),
            fc.record({ type: fc.constant('poisson'), requests_per_second: positive(100), seed: int(0, 1000) }),
            fc.record({ type: fc.constant('constant_rate'), requests_per_second: positive(100) }),
          ),
        )
        .map(([source, load]): Override[] => [
          ['traffic.source', source],
          ['traffic.load', load],
        ]),
      fc.record({ path: fc.constantFrom('conv.jsonl', 'traces/a b.jsonl'), block_size: int(1, 1024) }).chain((source) =>
        fc
          .oneof(
            fc.record({ type: fc.constant('trace_timestamps'), speedup: positive(100) }),
            fc.record({ type: fc.constant('concurrency'), concurrency: int(1, 64) }),
          )
          .map((load): Override[] => [
            ['traffic.source', { type: 'trace', ...source }],
            ['traffic.load', load],
          ]),
      ),
    ),
    maybe(fc.record({ base_ms: cost(10), per_output_token_us: cost(10) }).map((v): Override[] => [['traffic.load.response_overhead', v]])),
    maybe(
      fc.oneof(
        int(2, 10_000).chain((requests) =>
          int(0, requests - 1).map((warmup): Override[] => [
            ['traffic.stop', { requests }],
            ['report.warmup_requests', warmup],
          ]),
        ),
        positive(3600).map((s): Override[] => [['traffic.stop', { max_virtual_time_seconds: s }]]),
      ),
    ),
  )
  .map((groups) => groups.flat());

describe('run config round trip', () => {
  it('gives the same RunConfig after YAML stringify and parse, for any valid overrides', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(overrides, (list) => {
        // The schema and its rules (the checks before a run, run-checks.ts, are not about the round trip).
        const raw = list.reduce<object>((current, [path, value]) => applySet(current, `${path}=${JSON.stringify(value)}`), {});
        const config = parseRunConfig(raw, 'property');
        const again = parseRunConfig(parseYaml(stringifyYaml(config)), 'property');
        expect(again).toEqual(config);
        expect(JSON.stringify(again)).toBe(JSON.stringify(config));
        expect(parseRunConfig(config, 'property')).toEqual(config);
        seen.add(`load:${config.traffic.load.type}`);
        seen.add(`source:${config.traffic.source.type}`);
        seen.add(`capacity:${roleOf(config.engine, 'aggregated').kv_cache.capacity.type}`);
        seen.add(`timing:${roleOf(config.engine, 'aggregated').timing.type}`);
        if (config.engine.detokenization !== undefined) seen.add('detokenization');
      }),
      { numRuns: 200 },
    );
    // Coverage guard: the property saw every kind of block, so it did not pass vacuously.
    expect([...seen].sort()).toEqual(
      [
        'capacity:fixed',
        'capacity:memory',
        'capacity:unlimited',
        'detokenization',
        'load:concurrency',
        'load:constant_rate',
        'load:poisson',
        'load:trace_timestamps',
        'source:synthetic',
        'source:synthetic-session',
        'source:trace',
        'timing:fixed',
        'timing:linear',
        'timing:polynomial',
      ].sort(),
    );
  });
});
