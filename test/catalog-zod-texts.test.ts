/**
 * Bad catalog files (a GPU entry, a model entry, the engine-defaults file, the accuracy table):
 * each mistake named by its dotted field, in the schema's own words where it has them and in
 * zod's English otherwise, whichever zod locale the process has.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { loadAccuracyTable } from '../src/catalog/accuracy.js';
import { parseEngineDefaults } from '../src/catalog/engine-defaults.js';
import { parseCatalogEntry } from '../src/catalog/load.js';
import { ConfigError } from '../src/config/errors.js';

function reasonsOf(read: () => unknown): string[] {
  try {
    read();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).exitCode).toBe(2);
    return (err as ConfigError).issues.map((issue) => `${issue.path}: ${issue.reason}`);
  }
  throw new Error('the file was accepted');
}

/** A GPU entry with a zero bandwidth, an all-reduce share above 1, a bad price date, a list item of sources that is a number and an unknown key. */
const BAD_GPU = `id: gpu
name: A GPU
vendor: nvidia
architecture: hopper
memory: { capacity_gb: 80, bandwidth_gb_per_s: 0 }
compute: { bf16: 989.5, fp8: 1979, fp4: null }
interconnect: { scale_up: nvlink, scale_up_gb_per_s: 900, scale_up_domain_gpus: 8, pcie_gb_per_s: 128, all_reduce_share: 1.5 }
tdp_w: 700
price: { per_gpu_hour: 3.99, date: 2026-9-20, source: a list }
sources: { datasheet: a page, other: [7] }
bogus: 1
`;

const BAD_DEFAULTS = `rows:
  - backend: ""
    tp: { min: 0 }
    values: { max_num_seqs: -1 }
    confidence: sure
    source: {}
    extra: 1
`;

const BAD_ACCURACY = `basis: leave-one-model-out
rows:
  - stratum: vLLM dense
    ttft_mape: fast
    itl_mape: 10
    points: 1.5
    deployments: 2
`;

/** A real model file asking for a KV cache type no checkpoint asks for here. */
const BAD_MODEL = `${readFileSync(join(import.meta.dirname, '..', 'data', 'models', 'qwen3-8b.yaml'), 'utf8')}\nkv_cache_dtype: bf16\n`;

const locale = z.config().localeError;
afterEach(() => {
  z.config({ localeError: locale });
});

const cases: [string, () => unknown, string[]][] = [
  [
    'a GPU entry',
    () => parseCatalogEntry('hardware', BAD_GPU, 'gpu.yaml'),
    [
      'memory.bandwidth_gb_per_s: must be a positive finite number, got 0',
      'interconnect.all_reduce_share: must be a number in (0, 1], got 1.5',
      'price.date: must be a date, YYYY-MM-DD, got "2026-9-20"',
      'sources.other.0: must be a string, got 7',
      expect.stringMatching(/^bogus: unknown key \(allowed: id, name, /),
    ] as string[],
  ],
  [
    'a model entry',
    () => parseCatalogEntry('models', BAD_MODEL, 'model.yaml'),
    ['kv_cache_dtype: must be fp8 (the only type checkpoints ask for here), got "bf16"'],
  ],
  [
    'the engine-defaults file',
    () => parseEngineDefaults(BAD_DEFAULTS, 'engine-defaults.yaml'),
    [
      'rows.0.backend: Too small: expected string to have >=1 characters',
      'rows.0.tp.min: Too small: expected number to be >0',
      'rows.0.values.max_num_seqs: Too small: expected number to be >=0',
      'rows.0.confidence: Invalid option: expected one of "verified"|"inferred"|"low"',
      'rows.0: Unrecognized key: "extra"',
    ],
  ],
  [
    'the accuracy table',
    () => {
      const file = join(mkdtempSync(join(tmpdir(), 'servesim-accuracy-')), 'accuracy.yaml');
      writeFileSync(file, BAD_ACCURACY);
      return loadAccuracyTable(file);
    },
    ['rows.0.ttft_mape: Invalid input: expected number, received string', 'rows.0.points: Invalid input: expected int, received number'],
  ],
];

describe('bad catalog files', () => {
  for (const [what, read, expected] of cases) {
    it(`${what}: names each mistake by its field`, () => {
      expect(reasonsOf(read)).toEqual(expected);
    });
    it(`${what}: says the same without a zod locale set`, () => {
      z.config({ localeError: undefined });
      expect(reasonsOf(read)).toEqual(expected);
    });
  }
});
