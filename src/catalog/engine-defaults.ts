/**
 * What a serving engine runs with when it is launched without a flag: its token budget, its
 * sequence limit, whether it chunks prefills, the share of memory its KV cache may take, by
 * backend, version, GPU and tensor-parallel size (`data/engine-defaults.yaml`, each value with the
 * upstream file it was read from). A run config that leaves a scheduler or memory key out gets
 * these (docs/hardware-and-models.md, "Engine defaults"); the effective config shows them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { satisfies, valid } from '@renovatebot/pep440';
import * as z from 'zod/mini';
import english from 'zod/v4/locales/en.js';
import { ConfigError, makeConfigIssue } from '../config/errors.js';
import { MAX_YAML_BYTES } from '../config/limits.js';
import { parseYamlText } from '../config/yaml.js';
import { readTextFile } from '../io/read-text.js';
import { packageRoot } from './load.js';
import type { HardwareEntry } from './schema.js';
import { intactEngineDefaults, shippedValue } from './shipped-data.js';

/** The version an absent `engine.backend_version` stands for: the newest each backend's rows were checked against. */
export const NEWEST_VERSION: Readonly<Record<string, string>> = { vllm: '0.19.0', sglang: '0.5.10', trtllm: '1.3.0' };

function engineDefaultsSchema() {
  const nonEmpty = () => z.string().check(z.minLength(1));
  const positive = () => z.number().check(z.positive());
  const rowSchema = z.strictObject({
    backend: nonEmpty(),
    versions: z.optional(nonEmpty()),
    gpu: z.optional(
      z.strictObject({
        min_memory_gib: z.optional(positive()),
        max_memory_gib: z.optional(positive()),
        name_excludes: z.optional(z.array(nonEmpty())),
      }),
    ),
    tp: z.optional(z.strictObject({ min: z.optional(z.int().check(z.positive())), max: z.optional(z.int().check(z.positive())) })),
    values: z.record(z.string(), z.number().check(z.minimum(0))),
    confidence: z.enum(['verified', 'inferred', 'low']),
    source: z.record(z.string(), z.string()),
  });
  return z.strictObject({ rows: z.array(rowSchema) });
}
/** The file's schema, built when the file is first parsed (the bundled command line reads the build's snapshot of it instead, `shipped-data.ts`). */
const fileSchema = z.lazy(engineDefaultsSchema);
/**
 * zod's own texts (every message here is one): zod/mini sets no locale, and classic zod sets
 * English only once one of its schemas is made, so the parse names it.
 */
const zodTexts = english().localeError;
type Row = z.output<typeof fileSchema>['rows'][number];

let cached: Row[] | undefined;

export function engineDefaultsFile(): string {
  return join(packageRoot(), 'data', 'engine-defaults.yaml');
}

/** The rows of an engine-defaults file's text, validated; a bad file is a `ConfigError` or an `InputError` naming `file`. */
export function parseEngineDefaults(text: string, file: string): Row[] {
  const parsed = fileSchema.safeParse(parseYamlText(text, file, 'catalog file'), { reportInput: true, error: zodTexts });
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => makeConfigIssue(file, issue.path.map(String).join('.'), issue.message)));
  }
  return parsed.data.rows;
}

function rows(): Row[] {
  if (cached !== undefined) return cached;
  const file = engineDefaultsFile();
  const intact = intactEngineDefaults(file) as Row[] | undefined;
  if (intact !== undefined) return (cached = intact);
  if (!existsSync(file)) return (cached = []);
  const text = readTextFile(file, file, MAX_YAML_BYTES, 'catalog file');
  return (cached = (shippedValue('engine-defaults', 'engine-defaults.yaml', text) as Row[] | undefined) ?? parseEngineDefaults(text, file));
}

const RELEASE = /^\d+(?:\.\d+)*$/;
const RELEASE_CLAUSE = /^(>=|<=|==|>|<)(\d+(?:\.\d+)*)$/;

/** PEP 440's order of two release segments: their numbers, the shorter padded with zeros. */
function compareRelease(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Whether a release version (`0.19.0`) satisfies clauses of release versions (`>=0.8.4,<0.9.0`),
 * compared as PEP 440 compares them (without a pre-, post- or dev-release on either side, its
 * order is that of the numbers padded with zeros); undefined for any other version or specifier,
 * which the PEP 440 parser decides. The parser's first use costs a replay's start-up a few
 * milliseconds (its patterns), and every shipped row and the default versions are of this form.
 * test/engine-defaults-versions.test.ts checks it against the parser.
 */
export function releaseSatisfies(version: string, specifier: string): boolean | undefined {
  if (!RELEASE.test(version)) return undefined;
  const v = version.split('.').map(Number);
  let all = true;
  for (const clause of specifier.split(',')) {
    const m = RELEASE_CLAUSE.exec(clause);
    if (m === null) return undefined;
    const c = compareRelease(v, m[2].split('.').map(Number));
    const op = m[1];
    if (!(op === '>=' ? c >= 0 : op === '<=' ? c <= 0 : op === '==' ? c === 0 : op === '>' ? c > 0 : c < 0)) all = false;
  }
  return all;
}

function satisfiesSafe(version: string, specifier: string): boolean {
  const release = releaseSatisfies(version, specifier);
  if (release !== undefined) return release;
  try {
    return satisfies(version, specifier, { prereleases: true });
  } catch {
    return false;
  }
}

/** Whether a backend version (`0.17.0`, `v0.19.0-cu130`) is at least `minimum` (`0.14.0`). */
export function versionAtLeast(version: string, minimum: string): boolean {
  return satisfiesSafe(version.replace(/^v/, ''), `>=${minimum}`);
}

/** Whether a backend version is written as PEP 440 allows (`0.12.0`, `1.1.0rc2.post2`, `v0.19.0`). */
export function isVersion(version: string): boolean {
  return valid(version.replace(/^v/, '')) !== null;
}

/** The GPU's memory as the driver reports it, GiB (the datasheet's GB where the catalog has no reading). */
function memoryGib(hardware: HardwareEntry): number {
  return hardware.memory.reported_mib !== undefined ? hardware.memory.reported_mib / 1024 : (hardware.memory.capacity_gb * 1e9) / 2 ** 30;
}

export interface EngineQuery {
  backend: string;
  /** `engine.backend_version`; absent: NEWEST_VERSION. */
  version?: string;
  hardware: HardwareEntry;
  /** Tensor-parallel GPUs of one rank. */
  tensor: number;
}

/** The value `name` of the first matching row, and where it was read; undefined when no row has it. */
export function engineDefault(query: EngineQuery, name: string): { value: number; source: string } | undefined {
  const version = (query.version ?? NEWEST_VERSION[query.backend] ?? '0').replace(/^v/, '');
  const gib = memoryGib(query.hardware);
  for (const row of rows()) {
    if (row.backend !== query.backend || row.values[name] === undefined) continue;
    if (row.versions !== undefined && !satisfiesSafe(version, row.versions)) continue;
    const gpu = row.gpu;
    if (gpu?.min_memory_gib !== undefined && gib < gpu.min_memory_gib) continue;
    if (gpu?.max_memory_gib !== undefined && gib >= gpu.max_memory_gib) continue;
    if (gpu?.name_excludes?.some((s) => query.hardware.id.toLowerCase().includes(s.toLowerCase()))) continue;
    if (row.tp?.min !== undefined && query.tensor < row.tp.min) continue;
    if (row.tp?.max !== undefined && query.tensor > row.tp.max) continue;
    const s = row.source;
    return { value: row.values[name], source: `${s.repo ?? ''} ${s.path ?? ''}${s.commit ? ` @${s.commit.slice(0, 8)}` : ''}`.trim() };
  }
  return undefined;
}

const need = (query: EngineQuery, name: string): number => {
  const found = engineDefault(query, name);
  if (found === undefined) throw new Error(`data/engine-defaults.yaml has no ${name} for ${query.backend} ${query.version ?? ''}`);
  return found.value;
};

/** How an engine sizes its KV cache when not told. */
export interface EngineMemory {
  /** The share of memory the engine's KV cache and weights may take, or (kvOf `free`) the share of what is left after weights and activations. */
  fraction: number;
  /** `total`: vLLM's --gpu-memory-utilization (weights, activations and KV within it); `static`: SGLang's mem_fraction_static (weights and KV within it, activations outside); `free`: TensorRT-LLM's free_gpu_memory_fraction of the memory left after weights and activations. */
  kvOf: 'total' | 'static' | 'free';
  /** SGLang: memory of per-sequence states to KV cache (mamba_full_memory_ratio); absent: states taken per running request. */
  stateToKvRatio?: number;
}

/** The engine's default KV memory rule for a GPU. */
export function engineMemory(query: EngineQuery): EngineMemory {
  switch (query.backend) {
    case 'sglang': {
      // (memory - reserved) / memory, rounded to 3 decimals, as SGLang does.
      const mib = query.hardware.memory.reported_mib ?? (query.hardware.memory.capacity_gb * 1e9) / 2 ** 20;
      const chunk = need(query, 'chunked_prefill_size');
      let reserved =
        need(query, 'reserved_base_mib') +
        need(query, 'reserved_per_chunk_token') * Math.max(chunk, 2048) +
        need(query, 'reserved_per_graph_batch') * need(query, 'cuda_graph_max_bs') +
        need(query, 'reserved_per_tp_gpu_mib') * query.tensor;
      if (mib > 60 * 1024) reserved = Math.max(reserved, need(query, 'reserved_floor_mib'));
      return {
        fraction: Math.round(((mib - reserved) / mib) * 1000) / 1000,
        kvOf: 'static',
        stateToKvRatio: need(query, 'mamba_full_memory_ratio'),
      };
    }
    case 'trtllm':
      return { fraction: need(query, 'free_gpu_memory_fraction'), kvOf: 'free' };
    default:
      return { fraction: need(query, 'gpu_memory_utilization'), kvOf: 'total' };
  }
}

/** The engine's default scheduler limits (max_sequences null: SGLang's, which follows the KV pool: `sglangMaxRunningRequests`). */
export function engineScheduler(query: EngineQuery): { maxBatchedTokens: number; maxSequences: number | null; chunkedPrefill: boolean } {
  switch (query.backend) {
    case 'sglang':
      return {
        maxBatchedTokens: need(query, 'chunked_prefill_size'),
        maxSequences: null,
        chunkedPrefill: need(query, 'chunked_prefill') > 0,
      };
    case 'trtllm':
      return {
        maxBatchedTokens: need(query, 'max_num_tokens'),
        maxSequences: need(query, 'max_batch_size'),
        chunkedPrefill: need(query, 'chunked_prefill') > 0,
      };
    default:
      return {
        maxBatchedTokens: need(query, 'max_num_batched_tokens'),
        maxSequences: need(query, 'max_num_seqs'),
        chunkedPrefill: need(query, 'chunked_prefill') > 0,
      };
  }
}

/**
 * SGLang's max_running_requests from its KV pool: min(pool tokens / kv_tokens_per_request_slot,
 * request pool), the request pool int(pool tokens / context length x request_pool_per_context)
 * clamped to [request_pool_min, request_pool_max] (request_pool_max for an unlimited pool).
 */
export function sglangMaxRunningRequests(query: EngineQuery, poolTokens: number | null, contextLength: number): number {
  const lo = need(query, 'request_pool_min');
  const hi = need(query, 'request_pool_max');
  if (poolTokens === null) return hi;
  const pool = Math.min(Math.max(Math.floor((poolTokens / contextLength) * need(query, 'request_pool_per_context')), lo), hi);
  return Math.max(1, Math.min(Math.floor(poolTokens / need(query, 'kv_tokens_per_request_slot')), pool));
}

/**
 * The CUDA graphs an engine captures for decode-only passes, as a table: entry b is the graph a
 * pass of b decoding requests replays (0: none, it runs eagerly). vLLM pads a batch up to the
 * next of 1, 2, 4 and the multiples of 8 (from 0.11.1 of 16 above 256) up to
 * min(2 x max_num_seqs, 512) (before 0.10: 512), within the token budget; SGLang pads to 1, 2,
 * 4, 8, 12, multiples of 8 to 256, of 16 to 512, of 32 above, up to cuda_graph_max_bs;
 * TensorRT-LLM captures 1 to 32, 64 and 128 (up to max_batch_size) and does not pad, so other
 * sizes run eagerly (data/engine-defaults.yaml for the sources).
 */
export function captureTable(
  query: EngineQuery,
  maxSequences: number,
  maxBatchedTokens: number,
  written: { maxBatch?: number; padding?: boolean } = {},
): Int32Array {
  const version = (query.version ?? NEWEST_VERSION[query.backend] ?? '0').replace(/^v/, '');
  const sizes: number[] = [];
  let pad = true;
  let max: number;
  switch (query.backend) {
    case 'sglang': {
      max = need(query, 'cuda_graph_max_bs');
      for (const b of [1, 2, 4, 8, 12]) sizes.push(b);
      for (let b = 16; b <= 256; b += 8) sizes.push(b);
      for (let b = 272; b < 512; b += 16) sizes.push(b);
      for (let b = 512; b <= max; b += 32) sizes.push(b);
      break;
    }
    case 'trtllm': {
      max = Math.min(need(query, 'cuda_graph_max_batch'), maxSequences);
      for (let b = 1; b <= 32; b++) sizes.push(b);
      sizes.push(64, 128);
      pad = false;
      break;
    }
    default: {
      const cap = need(query, 'cuda_graph_max_batch');
      max = satisfiesSafe(version, '>=0.10.0') ? Math.min(2 * maxSequences, cap) : cap;
      max = Math.min(max, maxBatchedTokens);
      const wideAbove256 = satisfiesSafe(version, '>=0.11.1');
      sizes.push(1, 2, 4);
      for (let b = 8; b <= max; b += wideAbove256 && b >= 256 ? 16 : 8) sizes.push(b);
    }
  }
  if (written.maxBatch !== undefined) {
    // A written largest size: the engine's list up to it, and the size itself.
    max = written.maxBatch;
    while (sizes.length > 0 && sizes[sizes.length - 1] < max) {
      const last = sizes[sizes.length - 1];
      sizes.push(last < 32 ? last + 1 : last < 256 ? last + 8 : last + 16);
    }
    if (!sizes.includes(max)) sizes.push(max);
    sizes.sort((a, b) => a - b);
  }
  if (written.padding !== undefined) pad = written.padding;
  const captured = sizes.filter((b) => b <= max);
  const top = captured.length > 0 ? captured[captured.length - 1] : 0;
  const table = new Int32Array(top + 1);
  let next = 0;
  for (let b = 1; b <= top; b++) {
    while (captured[next] < b) next++;
    table[b] = pad || captured[next] === b ? captured[next] : 0;
  }
  return table;
}
