import { roleOf } from '../src/config/roles.js';
import { defaultMemoryFraction } from '../src/config/deployment.js';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, InputError } from '../src/config/errors.js';
import { kvBlocksPerRank, largestSyntheticPromptTokens } from '../src/config/kv-capacity.js';
import { loadRunConfig, loadRunConfigFromObject, parseRunConfig, parseYamlText } from '../src/config/load.js';
import type { RunConfig } from '../src/config/types.js';
import { thrownBy } from './helpers/errors.js';

const FIXTURES = 'test/fixtures/config';

/** The message of the error `fn` throws (fails the test when it does not throw). */
const errorOf = (fn: () => unknown): ConfigError | InputError => thrownBy<ConfigError | InputError>(fn, ConfigError, InputError);

const DEFAULTS: RunConfig = {
  engine: {
    model: 'unknown',
    hardware: 'unknown',
    backend: 'vllm',
    context_length: 'max',
    frontend: { base_ms: 'auto', per_input_us: 'auto' },
    workers: {
      aggregated: {
        parallelism: { replicas: 1, tensor: 1, attention_data: 1, expert: 1 },
        scheduler: { max_batched_tokens: 8192, max_sequences: 256, chunked_prefill: true },
        kv_cache: { block_size: 16, dtype: 'auto', capacity: { type: 'unlimited' } },
        timing: { type: 'fixed', prefill_ms: 10, decode_ms: 2 },
      },
    },
  },
  traffic: {
    source: { type: 'synthetic', input_tokens: 1024, output_tokens: 128, random_range_ratio: 1, seed: 0 },
    load: { type: 'concurrency', concurrency: 10, ramp_up_ms: 0 },
    stop: { requests: 100 },
  },
  report: { warmup_requests: 0 },
};

describe('parseRunConfig defaults', () => {
  it('fills every default of spec section 2 for an empty config', () => {
    expect(parseRunConfig({}, 'run.yaml')).toEqual(DEFAULTS);
  });

  it('returns keys in schema order whatever the order in the file', () => {
    const config = parseRunConfig(
      { report: {}, traffic: { load: { concurrency: 3, type: 'concurrency' } }, engine: { hardware: 'x', model: 'y' } },
      'run.yaml',
    );
    expect(Object.keys(config)).toEqual(['engine', 'traffic', 'report']);
    expect(Object.keys(config.engine)).toEqual(['model', 'hardware', 'backend', 'context_length', 'frontend', 'workers']);
    expect(Object.keys(config.traffic.load)).toEqual(['type', 'concurrency', 'ramp_up_ms']);
  });

  it('returns a plain object that survives JSON unchanged', () => {
    const { config } = loadRunConfig(`${FIXTURES}/full.yaml`);
    expect(JSON.parse(JSON.stringify(config))).toEqual(config);
    expect(JSON.stringify(JSON.parse(JSON.stringify(config)))).toBe(JSON.stringify(config));
  });

  it('leaves optional blocks out when they are not written', () => {
    const config = parseRunConfig({}, 'run.yaml');
    expect('tokenization' in config.engine).toBe(false);
    expect('detokenization' in config.engine).toBe(false);
    expect('response_overhead' in config.traffic.load).toBe(false);
  });

  it('fills the defaults inside an optional block that is written empty', () => {
    const config = parseRunConfig(
      { engine: { tokenization: {}, detokenization: {} }, traffic: { load: { response_overhead: {} } } },
      'run.yaml',
    );
    expect(config.engine.tokenization).toEqual({ workers: 1, base_ms: 0, per_input_us: 0 });
    expect(config.engine.detokenization).toEqual({ workers: 1, base_ms: 0, per_output_us: 0 });
    expect(config.traffic.load).toEqual({
      type: 'concurrency',
      concurrency: 10,
      ramp_up_ms: 0,
      response_overhead: { base_ms: 0, per_output_token_us: 0 },
    });
  });

  it('defaults the type of a block with a type to its first option', () => {
    const config = parseRunConfig({ traffic: { load: { concurrency: 4 } } }, 'run.yaml');
    expect(config.traffic.load).toEqual({ type: 'concurrency', concurrency: 4, ramp_up_ms: 0 });
  });

  it.each([
    ['poisson', { type: 'poisson', requests_per_second: 2 }, { type: 'poisson', requests_per_second: 2, seed: 42 }],
    ['constant_rate', { type: 'constant_rate', requests_per_second: 2 }, { type: 'constant_rate', requests_per_second: 2 }],
  ])('fills the %s load defaults', (_name, load, expected) => {
    expect(parseRunConfig({ traffic: { load } }, 'run.yaml').traffic.load).toEqual(expected);
  });

  it('fills the trace source and trace_timestamps defaults', () => {
    const config = parseRunConfig(
      { traffic: { source: { type: 'trace', path: 'conv.jsonl' }, load: { type: 'trace_timestamps' } } },
      'run.yaml',
    );
    expect(config.traffic.source).toEqual({ type: 'trace', path: 'conv.jsonl', format: 'mooncake', block_size: 512 });
    expect(config.traffic.load).toEqual({ type: 'trace_timestamps', speedup: 1 });
  });

  it('fills the synthetic-session, linear timing and memory capacity defaults', () => {
    const config = parseRunConfig(
      {
        engine: {
          workers: {
            aggregated: {
              timing: { type: 'linear', base_ms: 1 },
              kv_cache: { capacity: { type: 'memory', gpu_memory_gib: 80, weights_gib: 16, kv_bytes_per_token: 131072 } },
            },
          },
        },
        traffic: {
          source: { type: 'synthetic-session', turns: 3, new_input_tokens_per_turn: 100, output_tokens_per_turn: 20 },
        },
      },
      'run.yaml',
    );
    const role = roleOf(config.engine, 'aggregated');
    expect(role.timing).toEqual({
      type: 'linear',
      base_ms: 1,
      prefill_token_us: 0,
      prefill_pair_ns: 0,
      decode_request_us: 0,
      decode_kv_token_ns: 0,
      decode_request_exponent: 1,
      prefill_overlap: 0,
    });
    expect(role.kv_cache.capacity).toEqual({
      type: 'memory',
      gpu_memory_gib: 80,
      memory_fraction: 0.9,
      weights_gib: 16,
      kv_bytes_per_token: 131072,
    });
    expect(config.traffic.source).toEqual({
      type: 'synthetic-session',
      turns: 3,
      new_input_tokens_per_turn: 100,
      output_tokens_per_turn: 20,
      inter_turn_delay_ms: 0,
    });
  });
});

type Raw = Record<string, unknown>;
const role = (aggregated: Raw): Raw => ({ engine: { workers: { aggregated } } });

describe('parseRunConfig rules', () => {
  it.each<[string, Raw, string]>([
    [
      'detokenization workers of 0',
      { engine: { detokenization: { workers: 0 } } },
      'run.yaml: engine.detokenization.workers: must be a positive integer, got 0',
    ],
    [
      'tokenization workers of 1.5',
      { engine: { tokenization: { workers: 1.5 } } },
      'run.yaml: engine.tokenization.workers: must be a positive integer, got 1.5',
    ],
    [
      'a negative tokenization cost',
      { engine: { tokenization: { per_input_us: -1 } } },
      'run.yaml: engine.tokenization.per_input_us: must be a finite non-negative number, got -1',
    ],
    [
      'chunk_outputs of 0',
      { engine: { detokenization: { chunk_outputs: 0 } } },
      'run.yaml: engine.detokenization.chunk_outputs: must be a positive integer, got 0',
    ],
    [
      'replicas of 0',
      role({ parallelism: { replicas: 0 } }),
      'run.yaml: engine.workers.aggregated.parallelism.replicas: must be a positive integer, got 0',
    ],
    [
      'tensor of -2',
      role({ parallelism: { tensor: -2 } }),
      'run.yaml: engine.workers.aggregated.parallelism.tensor: must be a positive integer, got -2',
    ],
    [
      'attention_data of 0',
      role({ parallelism: { attention_data: 0 } }),
      'run.yaml: engine.workers.aggregated.parallelism.attention_data: must be a positive integer, got 0',
    ],
    [
      'max_batched_tokens of 0',
      role({ scheduler: { max_batched_tokens: 0 } }),
      'run.yaml: engine.workers.aggregated.scheduler.max_batched_tokens: must be a positive integer, got 0',
    ],
    [
      'max_sequences of 0',
      role({ scheduler: { max_sequences: 0 } }),
      'run.yaml: engine.workers.aggregated.scheduler.max_sequences: must be a positive integer, got 0',
    ],
    [
      'chunked_prefill as a string',
      role({ scheduler: { chunked_prefill: 'yes' } }),
      'run.yaml: engine.workers.aggregated.scheduler.chunked_prefill: must be true or false, got "yes"',
    ],
    [
      'block_size of 0',
      role({ kv_cache: { block_size: 0 } }),
      'run.yaml: engine.workers.aggregated.kv_cache.block_size: must be a positive integer, got 0',
    ],
    [
      'fixed capacity of 0 blocks',
      role({ kv_cache: { capacity: { type: 'fixed', blocks: 0 } } }),
      'run.yaml: engine.workers.aggregated.kv_cache.capacity.blocks: must be a positive integer, got 0',
    ],
    [
      'fixed capacity without blocks',
      role({ kv_cache: { capacity: { type: 'fixed' } } }),
      'run.yaml: engine.workers.aggregated.kv_cache.capacity.blocks: is required (must be a positive integer)',
    ],
    [
      'an unknown capacity type',
      role({ kv_cache: { capacity: { type: 'paged' } } }),
      'run.yaml: engine.workers.aggregated.kv_cache.capacity.type: must be one of auto, unlimited, fixed, memory, got "paged"',
    ],
    [
      'memory_fraction above 1',
      role({
        kv_cache: {
          capacity: { type: 'memory', gpu_memory_gib: 80, memory_fraction: 1.5, weights_gib: 1, kv_bytes_per_token: 1 },
        },
      }),
      'run.yaml: engine.workers.aggregated.kv_cache.capacity.memory_fraction: must be a number in (0, 1], got 1.5',
    ],
    [
      'memory_fraction of 0',
      role({
        kv_cache: {
          capacity: { type: 'memory', gpu_memory_gib: 80, memory_fraction: 0, weights_gib: 1, kv_bytes_per_token: 1 },
        },
      }),
      'run.yaml: engine.workers.aggregated.kv_cache.capacity.memory_fraction: must be a number in (0, 1], got 0',
    ],
    [
      'a memory capacity the weights fill',
      role({
        kv_cache: {
          block_size: 16,
          capacity: { type: 'memory', gpu_memory_gib: 80, weights_gib: 72, kv_bytes_per_token: 131072 },
        },
      }),
      'run.yaml: engine.workers.aggregated.kv_cache.capacity: leaves no room for the KV cache: tensor 1 x 80 GiB' +
        ' x 0.9 - 72 GiB of weights gives 0 blocks of 16 tokens (need at least 1)',
    ],
    [
      'a negative fixed timing cost',
      role({ timing: { prefill_ms: -1 } }),
      'run.yaml: engine.workers.aggregated.timing.prefill_ms: must be a finite non-negative number, got -1',
    ],
    [
      'fixed timing with both costs 0',
      role({ timing: { type: 'fixed', prefill_ms: 0, decode_ms: 0 } }),
      'run.yaml: engine.workers.aggregated.timing: prefill_ms and decode_ms are both 0, so every pass would take' +
        ' 0 ms; set at least one above 0',
    ],
    [
      'linear timing with every coefficient 0',
      role({ timing: { type: 'linear' } }),
      'run.yaml: engine.workers.aggregated.timing: all linear coefficients are 0, so every pass would take 0 ms;' +
        ' set at least one above 0',
    ],
    [
      'an unknown timing type',
      role({ timing: { type: 'analytic' } }),
      'run.yaml: engine.workers.aggregated.timing.type: must be one of fixed, polynomial, linear, roofline, profile, got "analytic"',
    ],
    [
      'a synthetic prompt over the budget without chunked prefill',
      {
        ...role({ scheduler: { max_batched_tokens: 512, chunked_prefill: false } }),
        traffic: { source: { input_tokens: 513 } },
      },
      'run.yaml: engine.workers.aggregated.scheduler.max_batched_tokens: is 512, smaller than the prompt (513' +
        ' tokens) with chunked_prefill: false; such a request could never be scheduled',
    ],
    [
      'a session turn prompt over the budget without chunked prefill',
      {
        ...role({ scheduler: { max_batched_tokens: 900, chunked_prefill: false } }),
        traffic: {
          source: { type: 'synthetic-session', turns: 4, new_input_tokens_per_turn: 200, output_tokens_per_turn: 50 },
        },
      },
      "run.yaml: engine.workers.aggregated.scheduler.max_batched_tokens: is 900, smaller than the last session turn's" +
        ' prompt (950 tokens) with chunked_prefill: false; such a request could never be scheduled',
    ],
    ['context_length of 0', { engine: { context_length: 0 } }, 'run.yaml: engine.context_length: must be a positive integer or max, got 0'],
    [
      'context_length as another word',
      { engine: { context_length: 'unlimited' } },
      'run.yaml: engine.context_length: must be a positive integer or max, got "unlimited"',
    ],
    ['an unknown backend', { engine: { backend: 'tgi' } }, 'run.yaml: engine.backend: must be one of vllm, sglang, trtllm, got "tgi"'],
    ['a model that is a number', { engine: { model: 3 } }, 'run.yaml: engine.model: must be a string, got 3'],
    [
      'input_tokens of 0',
      { traffic: { source: { input_tokens: 0 } } },
      'run.yaml: traffic.source.input_tokens: must be a positive integer, got 0',
    ],
    [
      'output_tokens of -1',
      { traffic: { source: { output_tokens: -1 } } },
      'run.yaml: traffic.source.output_tokens: must be a non-negative integer, got -1',
    ],
    [
      'random_range_ratio of 0',
      { traffic: { source: { random_range_ratio: 0 } } },
      'run.yaml: traffic.source.random_range_ratio: must be a number in (0, 1], got 0',
    ],
    [
      'random_range_ratio above 1',
      { traffic: { source: { random_range_ratio: 1.01 } } },
      'run.yaml: traffic.source.random_range_ratio: must be a number in (0, 1], got 1.01',
    ],
    [
      'a session without turns',
      { traffic: { source: { type: 'synthetic-session', new_input_tokens_per_turn: 1, output_tokens_per_turn: 1 } } },
      'run.yaml: traffic.source.turns: is required (must be a positive integer)',
    ],
    [
      'a trace without a path',
      { traffic: { source: { type: 'trace' } } },
      'run.yaml: traffic.source.path: is required (must be a non-empty path)',
    ],
    [
      'a trace in another format',
      { traffic: { source: { type: 'trace', path: 'a.csv', format: 'azure' } } },
      'run.yaml: traffic.source.format: must be mooncake or vllm-log, got "azure"',
    ],
    [
      'concurrency of 0',
      { traffic: { load: { concurrency: 0 } } },
      'run.yaml: traffic.load.concurrency: must be a positive integer, got 0',
    ],
    [
      'poisson without requests_per_second',
      { traffic: { load: { type: 'poisson' } } },
      'run.yaml: traffic.load.requests_per_second: is required with type poisson (must be a positive finite number)',
    ],
    [
      'constant_rate without requests_per_second',
      { traffic: { load: { type: 'constant_rate' } } },
      'run.yaml: traffic.load.requests_per_second: is required with type constant_rate (must be a positive finite number)',
    ],
    [
      'requests_per_second of 0',
      { traffic: { load: { type: 'constant_rate', requests_per_second: 0 } } },
      'run.yaml: traffic.load.requests_per_second: must be a positive finite number, got 0',
    ],
    [
      'requests_per_second with a closed loop',
      { traffic: { load: { type: 'concurrency', requests_per_second: 3 } } },
      'run.yaml: traffic.load.requests_per_second: unknown key for type concurrency (allowed: type, concurrency,' +
        ' ramp_up_ms, response_overhead)',
    ],
    [
      'concurrency with poisson',
      { traffic: { load: { type: 'poisson', requests_per_second: 3, concurrency: 4 } } },
      'run.yaml: traffic.load.concurrency: unknown key for type poisson (allowed: type, requests_per_second, seed,' + ' response_overhead)',
    ],
    [
      'trace_timestamps with a synthetic source',
      { traffic: { load: { type: 'trace_timestamps' } } },
      'run.yaml: traffic.load.type: trace_timestamps needs a trace source, got source type synthetic',
    ],
    [
      'speedup of 0',
      { traffic: { source: { type: 'trace', path: 't.jsonl' }, load: { type: 'trace_timestamps', speedup: 0 } } },
      'run.yaml: traffic.load.speedup: must be a positive finite number, got 0',
    ],
    [
      'a negative response overhead',
      { traffic: { load: { response_overhead: { base_ms: -0.5 } } } },
      'run.yaml: traffic.load.response_overhead.base_ms: must be a finite non-negative number, got -0.5',
    ],
    [
      'an unknown load type',
      { traffic: { load: { type: 'burst' } } },
      'run.yaml: traffic.load.type: must be one of concurrency, poisson, constant_rate, trace_timestamps, got "burst"',
    ],
    [
      'no stop condition',
      { traffic: { stop: {} } },
      'run.yaml: traffic.stop: must set exactly one of requests, requests_per_load_unit, max_virtual_time_seconds, got none',
    ],
    [
      'two stop conditions',
      { traffic: { stop: { requests: 5, max_virtual_time_seconds: 10 } } },
      'run.yaml: traffic.stop: must set exactly one of requests, requests_per_load_unit, max_virtual_time_seconds,' +
        ' got requests, max_virtual_time_seconds',
    ],
    [
      'requests_per_load_unit with trace_timestamps',
      {
        traffic: {
          source: { type: 'trace', path: 't.jsonl' },
          load: { type: 'trace_timestamps' },
          stop: { requests_per_load_unit: 2 },
        },
      },
      'run.yaml: traffic.stop.requests_per_load_unit: has no load unit with trace_timestamps; use requests or' +
        ' max_virtual_time_seconds',
    ],
    ['a stop of 0 requests', { traffic: { stop: { requests: 0 } } }, 'run.yaml: traffic.stop.requests: must be a positive integer, got 0'],
    [
      'a stop time of -1 s',
      { traffic: { stop: { max_virtual_time_seconds: -1 } } },
      'run.yaml: traffic.stop.max_virtual_time_seconds: must be a positive finite number, got -1',
    ],
    ['a negative warmup', { report: { warmup_requests: -1 } }, 'run.yaml: report.warmup_requests: must be a non-negative integer, got -1'],
    [
      'a warmup as long as the run',
      { traffic: { stop: { requests: 10 } }, report: { warmup_requests: 10 } },
      'run.yaml: report.warmup_requests: is 10, not less than traffic.stop.requests (10); every request would be warmup',
    ],
    ['a config that is a list', [1, 2] as unknown as Raw, 'run.yaml: must be a mapping, got a list'],
    ['a block that is a number', { engine: 5 }, 'run.yaml: engine: must be a mapping, got 5'],
    ['a block that is null', { engine: { tokenization: null } }, 'run.yaml: engine.tokenization: must be a mapping, got null'],
    ['a typed block that is a string', { traffic: { load: 'closed' } }, 'run.yaml: traffic.load: must be a mapping, got "closed"'],
  ])('rejects %s with the file and dotted path', (_name, raw, message) => {
    const err = errorOf(() => parseRunConfig(raw, 'run.yaml'));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(message);
    expect(err.exitCode).toBe(2);
  });

  it('accepts a memory capacity with room for one block', () => {
    // (1 x 1 x 1 - 0.5) GiB / (2^25 bytes per token x 16 tokens) = 1 block.
    const config = parseRunConfig(
      role({
        kv_cache: {
          block_size: 16,
          capacity: { type: 'memory', gpu_memory_gib: 1, memory_fraction: 1, weights_gib: 0.5, kv_bytes_per_token: 2 ** 25 },
        },
      }),
      'run.yaml',
    );
    expect(kvBlocksPerRank(config.engine, roleOf(config.engine, 'aggregated'))).toBe(1);
  });

  it('accepts a prompt equal to the budget without chunked prefill', () => {
    const raw = { ...role({ scheduler: { max_batched_tokens: 1024, chunked_prefill: false } }) };
    expect(() => parseRunConfig(raw, 'run.yaml')).not.toThrow();
  });

  it('accepts requests_per_load_unit with a closed loop and a trace in closed loop', () => {
    expect(() => parseRunConfig({ traffic: { stop: { requests_per_load_unit: 2.5 } } }, 'run.yaml')).not.toThrow();
    expect(() =>
      parseRunConfig({ traffic: { source: { type: 'trace', path: 't.jsonl' }, load: { concurrency: 2 } } }, 'run.yaml'),
    ).not.toThrow();
  });
});

describe('parseRunConfig unknown keys', () => {
  it.each<[string, Raw, string]>([
    ['at the top', { engines: {} }, 'engines'],
    ['in engine', { engine: { gpus: 8 } }, 'engine.gpus'],
    ['in engine.workers', { engine: { workers: { aggregate: {} } } }, 'engine.workers.aggregate'],
    ['in the scheduler', role({ scheduler: { preemption_mode: 'swap' } }), 'engine.workers.aggregated.scheduler.preemption_mode'],
    [
      'in a capacity type',
      role({ kv_cache: { capacity: { type: 'fixed', blocks: 1, gib: 2 } } }),
      'engine.workers.aggregated.kv_cache.capacity.gib',
    ],
    ['in the polynomial timing', role({ timing: { type: 'polynomial', prefill_ms: 1 } }), 'engine.workers.aggregated.timing.prefill_ms'],
    [
      'in the response overhead',
      { traffic: { load: { response_overhead: { per_token_us: 1 } } } },
      'traffic.load.response_overhead.per_token_us',
    ],
    ['in stop', { traffic: { stop: { requests: 1, seconds: 3 } } }, 'traffic.stop.seconds'],
    ['in report', { report: { warmup: 1 } }, 'report.warmup'],
  ])('rejects an unknown key %s, naming its dotted path', (_name, raw, path) => {
    const err = errorOf(() => parseRunConfig(raw, 'run.yaml')) as ConfigError;
    expect(err.path).toBe(path);
    expect(err.message).toMatch(new RegExp(`^run\\.yaml: ${path.replaceAll('.', '\\.')}: unknown key`));
  });

  it('says the type was defaulted when a typed block omits it', () => {
    const err = errorOf(() => parseRunConfig(role({ kv_cache: { capacity: { blocks: 100 } } }), 'run.yaml'));
    expect(err.message).toBe(
      'run.yaml: engine.workers.aggregated.kv_cache.capacity.blocks: unknown key for the default type, which applies' +
        ' when type is omitted (allowed: type, gpu_memory_utilization, reserve_gib)',
    );
  });

  it('reports one issue per unknown key, sorted by path', () => {
    const err = errorOf(() => parseRunConfig({ report: { b: 1, a: 2 }, engine: { z: 1 } }, 'run.yaml')) as ConfigError;
    expect(err.issues.map((issue) => issue.path)).toEqual(['engine.z', 'report.a', 'report.b']);
    expect(err.path).toBe('engine.z');
  });
});

describe('parseRunConfig issues', () => {
  it('keeps every issue and reports the first by path in the message', () => {
    const err = errorOf(() => loadRunConfig(`${FIXTURES}/bad-fields.yaml`)) as ConfigError;
    const file = `${FIXTURES}/bad-fields.yaml`;
    expect(err.message).toBe(`${file}: engine.detokenization.workers: must be a positive integer, got 0`);
    expect(err.file).toBe(file);
    expect(err.path).toBe('engine.detokenization.workers');
    expect(err.reason).toBe('must be a positive integer, got 0');
    expect(err.issues.map((issue) => issue.message)).toEqual([
      `${file}: engine.detokenization.workers: must be a positive integer, got 0`,
      `${file}: engine.extra_key: unknown key (allowed: model, hardware, backend, backend_version, precision, context_length, frontend, workers,` +
        ' kv_transfer, router, tokenization, detokenization)',
      `${file}: traffic.load.requests_per_second: must be a positive finite number, got "abc"`,
    ]);
  });

  it.each<[string, unknown, string]>([
    ['a string for a count', 'abc', 'must be a positive integer, got "abc"'],
    ['a boolean for a count', true, 'must be a positive integer, got true'],
    ['a list for a count', [1], 'must be a positive integer, got a list'],
    ['a mapping for a count', { n: 1 }, 'must be a positive integer, got a mapping'],
    ['null for a count', null, 'must be a positive integer, got null'],
    ['a huge count', 2 ** 60, `must be a positive integer, got ${2 ** 60}`],
  ])('rejects %s with the value it got', (_name, value, reason) => {
    const err = errorOf(() => parseRunConfig({ traffic: { load: { concurrency: value } } }, 'run.yaml')) as ConfigError;
    expect(err.message).toBe(`run.yaml: traffic.load.concurrency: ${reason}`);
  });

  it.each<[string, unknown, string]>([
    ['a numeric string', '1.5', 'must be a finite non-negative number, got "1.5"'],
    ['NaN', Number.NaN, 'must be a finite non-negative number, got NaN'],
    ['Infinity', Number.POSITIVE_INFINITY, 'must be a finite non-negative number, got Infinity'],
  ])('rejects %s for a cost', (_name, value, reason) => {
    const err = errorOf(() => parseRunConfig({ engine: { tokenization: { base_ms: value } } }, 'run.yaml'));
    expect(err.message).toBe(`run.yaml: engine.tokenization.base_ms: ${reason}`);
  });
});

describe('loadRunConfig', () => {
  it('reads every block of a full config', () => {
    const { config, file, baseDir } = loadRunConfig(`${FIXTURES}/full.yaml`);
    expect(file).toBe(`${FIXTURES}/full.yaml`);
    expect(baseDir).toBe(resolve(FIXTURES));
    expect(config.engine.detokenization).toEqual({ workers: 1, base_ms: 0.2, per_output_us: 3, chunk_outputs: 128 });
    expect(config.traffic.load).toEqual({
      type: 'poisson',
      requests_per_second: 5,
      seed: 1,
      response_overhead: { base_ms: 1, per_output_token_us: 10 },
    });
    expect(config.traffic.stop).toEqual({ max_virtual_time_seconds: 600 });
    // (2 x 80 x 0.9 - 61) GiB = 83 GiB; 83 x 2^30 / (2^18 x 16) = 21248 blocks.
    expect(kvBlocksPerRank(config.engine, roleOf(config.engine, 'aggregated'))).toBe(21248);
  });

  it('keeps a trace path as written and gives the folder it is relative to', () => {
    const { config, baseDir } = loadRunConfig(`${FIXTURES}/trace-run.yaml`);
    expect(config.traffic.source).toEqual({
      type: 'trace',
      path: '../traces/mooncake-conversation-head200.jsonl',
      format: 'mooncake',
      block_size: 512,
    });
    expect(baseDir).toBe(resolve(FIXTURES));
  });

  it('reads an empty file as the all-defaults config', () => {
    expect(loadRunConfig(`${FIXTURES}/empty.yaml`).config).toEqual(DEFAULTS);
  });

  it('names the file and line of a YAML syntax error', () => {
    const err = errorOf(() => loadRunConfig(`${FIXTURES}/syntax-error.yaml`));
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).line).toBe(3);
    expect(err.message).toMatch(/^test\/fixtures\/config\/syntax-error\.yaml:3: invalid YAML: /);
    expect(err.exitCode).toBe(2);
  });

  it('names the line of a duplicated key', () => {
    const err = errorOf(() => loadRunConfig(`${FIXTURES}/duplicate-key.yaml`));
    expect(err.message).toBe(`${FIXTURES}/duplicate-key.yaml:3: invalid YAML: Map keys must be unique (column 3)`);
  });

  it('rejects YAML .inf and .nan costs', () => {
    const err = errorOf(() => loadRunConfig(`${FIXTURES}/non-finite.yaml`)) as ConfigError;
    expect(err.issues.map((issue) => issue.message)).toEqual([
      `${FIXTURES}/non-finite.yaml: engine.workers.aggregated.timing.decode_ms: must be a finite non-negative number, got NaN`,
      `${FIXTURES}/non-finite.yaml: engine.workers.aggregated.timing.prefill_ms: must be a finite non-negative number, got Infinity`,
    ]);
  });

  it('names a file that cannot be read', () => {
    const err = errorOf(() => loadRunConfig(`${FIXTURES}/missing.yaml`));
    expect(err).toBeInstanceOf(InputError);
    expect(err.message).toBe(`${FIXTURES}/missing.yaml: no such file`);
  });

  it('parses YAML text with a label', () => {
    expect(parseYamlText('a: 1\n', 'x.yaml')).toEqual({ a: 1 });
    expect(errorOf(() => parseYamlText('a: [1\n', 'x.yaml')).message).toMatch(/^x\.yaml:\d+: invalid YAML/);
  });
});

describe('loadRunConfigFromObject', () => {
  it('does not modify the object it is given', () => {
    const raw = { traffic: { load: { concurrency: 2 } } };
    const copy = structuredClone(raw);
    loadRunConfigFromObject(raw, 'sweep point', ['traffic.load.concurrency=3']);
    expect(raw).toEqual(copy);
  });

  it('labels errors with the label it is given', () => {
    expect(errorOf(() => loadRunConfigFromObject({ report: { x: 1 } }, 'sweep point 3')).message).toMatch(
      /^sweep point 3: report\.x: unknown key/,
    );
  });
});

describe('largestSyntheticPromptTokens', () => {
  it('is input_tokens, the last session turn, or null for a trace', () => {
    const config = parseRunConfig({}, 'run.yaml');
    expect(largestSyntheticPromptTokens(config.traffic.source)).toBe(1024);
    expect(
      largestSyntheticPromptTokens({
        type: 'synthetic-session',
        turns: 3,
        new_input_tokens_per_turn: 10,
        output_tokens_per_turn: 5,
        inter_turn_delay_ms: 0,
      }),
    ).toBe(40);
    expect(largestSyntheticPromptTokens({ type: 'trace', path: 'a', format: 'mooncake', block_size: 512 })).toBeNull();
  });
});

describe('parseRunConfig scheduler policies', () => {
  it('refuses a queue order or capacity policy the chosen scheduler does not have, naming why', () => {
    const err = errorOf(() => parseRunConfig(role({ scheduler: { schedule_policy: 'lpm' } }), 'run.yaml'));
    expect(err.message).toBe(
      "run.yaml: engine.workers.aggregated.scheduler.schedule_policy: lpm is SGLang's (--schedule-policy lpm), but engine.backend is vllm",
    );
    const trt = errorOf(() =>
      parseRunConfig(
        { engine: { backend: 'sglang', workers: { aggregated: { scheduler: { capacity_policy: 'max_utilization' } } } } },
        'run.yaml',
      ),
    );
    expect(trt.message).toBe(
      'run.yaml: engine.workers.aggregated.scheduler.capacity_policy: is read by the trtllm scheduler only, but engine.backend is sglang',
    );
    const order = errorOf(() => parseRunConfig(role({ scheduler: { policy: 'trtllm', schedule_policy: 'priority' } }), 'run.yaml'));
    expect(order.message).toBe(
      "run.yaml: engine.workers.aggregated.scheduler.schedule_policy: priority is vLLM's (--scheduling-policy priority), but scheduler.policy is trtllm",
    );
  });

  it('accepts each backend with its own options', () => {
    expect(() =>
      parseRunConfig(
        {
          engine: { backend: 'sglang', workers: { aggregated: { scheduler: { schedule_policy: 'lpm', schedule_conservativeness: 1.3 } } } },
        },
        'run.yaml',
      ),
    ).not.toThrow();
    expect(() => parseRunConfig(role({ scheduler: { policy: 'trtllm', capacity_policy: 'max_utilization' } }), 'run.yaml')).not.toThrow();
    expect(() => parseRunConfig(role({ scheduler: { schedule_policy: 'priority', priority_levels: 4 } }), 'run.yaml')).not.toThrow();
  });
});

describe('scheduler defaults follow the chosen scheduler', () => {
  const scheduler = (raw: Raw) => roleOf(parseRunConfig(raw, 'run.yaml').engine, 'aggregated').scheduler;
  it('trtllm: max_batch_size 2048 and chunked context off, unless written', () => {
    expect(scheduler({ engine: { backend: 'trtllm' } })).toMatchObject({
      max_sequences: 2048,
      chunked_prefill: false,
      max_batched_tokens: 8192,
    });
    expect(
      scheduler({ engine: { backend: 'trtllm', workers: { aggregated: { scheduler: { max_sequences: 64, chunked_prefill: true } } } } }),
    ).toMatchObject({
      max_sequences: 64,
      chunked_prefill: true,
    });
  });
  it('sglang: max_running_requests = min(pool tokens / 2, min(max(pool / context x 512, 2048), 4096))', () => {
    const sglang = (blocks: number, context: number) => ({
      engine: {
        backend: 'sglang',
        context_length: context,
        workers: { aggregated: { kv_cache: { block_size: 16, capacity: { type: 'fixed', blocks } } } },
      },
    });
    // 100 x 16 = 1600 tokens: 1600 / 2 = 800 < 2048.
    expect(scheduler(sglang(100, 4096)).max_sequences).toBe(800);
    // 1000 x 16 = 16000 tokens, context 4096: 16000 / 4096 x 512 = 2000 -> 2048; 8000 > 2048.
    expect(scheduler(sglang(1000, 4096)).max_sequences).toBe(2048);
    // 100000 x 16 = 1.6M tokens, context 32768: 25000 -> capped at 4096.
    expect(scheduler(sglang(100000, 32768)).max_sequences).toBe(4096);
  });
  it('vllm keeps 256 and chunked prefill on', () => {
    expect(scheduler({})).toMatchObject({ max_sequences: 256, chunked_prefill: true });
  });
  it("sglang's mem_fraction_static from the GPU's memory and the tensor-parallel size (SGLang >= 0.5.3)", () => {
    const cfg = (tensor: number, hardware = 'h100_sxm', version?: string) =>
      parseRunConfig(
        {
          engine: {
            backend: 'sglang',
            hardware,
            ...(version ? { backend_version: version } : {}),
            workers: { aggregated: { parallelism: { tensor } } },
          },
        },
        'run.yaml',
      );
    const fraction = (c: ReturnType<typeof cfg>) => defaultMemoryFraction(c.engine, roleOf(c.engine, 'aggregated'));
    // H100 reports 81559 MiB. TP < 4: chunk 8192, CUDA graphs to 256; reserved = 512 + 1.5 x 8192
    // + 2 x 256 + 128 x tp MiB (at least 10240 above 60 GiB).
    // tp 1: 512 + 12288 + 512 + 128 = 13440 -> (81559 - 13440) / 81559 = 0.8352 -> 0.835
    // tp 2: 13568 -> 0.8336 -> 0.834; tp 4 (graphs to 512): 512 + 12288 + 1024 + 512 = 14336 -> 0.824
    // tp 8: 14848 -> 0.818
    expect([1, 2, 4, 8].map((tp) => fraction(cfg(tp)))).toEqual([0.835, 0.834, 0.824, 0.818]);
    // Before 0.5.3, below 90 GiB: reserved (9.5 + tp / 2) GiB: tp 1 -> 10240 MiB -> 71319 / 81559 = 0.8744 -> 0.874;
    // tp 8 -> 13824 MiB -> 67735 / 81559 = 0.83050 -> 0.831.
    expect([1, 8].map((tp) => fraction(cfg(tp, 'h100_sxm', '0.5.1')))).toEqual([0.874, 0.831]);
    // vLLM keeps its --gpu-memory-utilization; a GPU outside the catalog gets 0.9.
    const v = parseRunConfig({ engine: { hardware: 'h100_sxm' } }, 'run.yaml');
    expect(defaultMemoryFraction(v.engine, roleOf(v.engine, 'aggregated'))).toBe(0.9);
    const unknown = parseRunConfig({ engine: { backend: 'sglang' } }, 'run.yaml');
    expect(defaultMemoryFraction(unknown.engine, roleOf(unknown.engine, 'aggregated'))).toBe(0.9);
  });
});
