/**
 * Engine flags of the silicon sample's disaggregated InferenceX export rows, per pool, from the
 * launch recipes their config entries name (`CONFIG_FILE=recipes/...` in the entry's
 * `additional-settings`; the recipes are srt-slurm's, see data/silicon/README.md), from a
 * TensorRT-LLM recipe's name where its state is not known, or from the sizes an entry without a
 * recipe gives its script:
 * `data/silicon/disagg-flags.csv` lists them under the keys of data/silicon/disagg-workers.csv,
 * `recipeFlags` reads one recipe's prefill and decode engine settings, and `flagsFromRecipe` looks
 * a row up. A row the file does not list keeps the engines' defaults.
 */
import { join } from 'node:path';
import { packageRoot } from '../catalog/load.js';
import { InputError } from '../config/errors.js';
import { factsKey, loadKeyedRows, loadRowsBy, rowFactsOf } from './disagg-workers.js';

/**
 * One pool's launch flags, per attention-DP rank as the replay's scheduler reads them; absent =
 * the engine's default. SGLang divides --max-running-requests and --chunked-prefill-size by the
 * DP size under DP attention (its server args and model runner); TensorRT-LLM's max_batch_size
 * and max_num_tokens are per rank already.
 */
export interface PoolFlags {
  /** SGLang --max-running-requests / DP, TensorRT-LLM max_batch_size. */
  maxSequences?: number;
  /** SGLang min(--chunked-prefill-size / DP, --max-prefill-tokens), TensorRT-LLM max_num_tokens. */
  maxBatchedTokens?: number;
  /** SGLang --mem-fraction-static, TensorRT-LLM kv_cache_config.free_gpu_memory_fraction. */
  memoryFraction?: number;
  /** SGLang --kv-cache-dtype (fp8_e4m3 is fp8), TensorRT-LLM kv_cache_config.dtype. */
  kvCacheDtype?: 'fp8' | 'bf16';
  /** SGLang --cuda-graph-max-bs, TensorRT-LLM cuda_graph_config.max_batch_size. */
  cudaGraphMaxBatch?: number;
  /** TensorRT-LLM cuda_graph_config.enable_padding. */
  cudaGraphPadding?: boolean;
  /** SGLang: --chunked-prefill-size given (true, -1: false); TensorRT-LLM enable_chunked_prefill. */
  chunkedPrefill?: boolean;
  /** false: SGLang --disable-radix-cache, TensorRT-LLM kv_cache_config.enable_block_reuse false. */
  prefixCaching?: boolean;
}

/** A recipe's two pools. */
export interface RecipeFlags {
  prefill: PoolFlags;
  decode: PoolFlags;
}

const record = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const positiveInt = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);
const fraction = (v: unknown): number | undefined => (typeof v === 'number' && v > 0 && v <= 1 ? v : undefined);

function kvDtype(v: unknown): 'fp8' | 'bf16' | undefined {
  if (typeof v !== 'string') return undefined;
  if (/^fp8/.test(v)) return 'fp8';
  if (v === 'bf16' || v === 'bfloat16') return 'bf16';
  return undefined;
}

/** Drops the absent fields, so that two equal pools compare equal as JSON. */
function defined(flags: PoolFlags): PoolFlags {
  return Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined));
}

function trtllmPool(p: Record<string, unknown>): PoolFlags {
  const kv = record(p.kv_cache_config) ?? {};
  const graph = record(p.cuda_graph_config);
  const graphSizes = Array.isArray(graph?.batch_sizes) ? graph.batch_sizes.map(positiveInt) : [];
  return defined({
    maxSequences: positiveInt(p.max_batch_size),
    maxBatchedTokens: positiveInt(p.max_num_tokens),
    memoryFraction: fraction(kv.free_gpu_memory_fraction),
    kvCacheDtype: kvDtype(kv.dtype),
    cudaGraphMaxBatch:
      positiveInt(graph?.max_batch_size) ??
      (graphSizes.length > 0 && graphSizes.every((s) => s !== undefined) ? Math.max(...graphSizes) : undefined),
    cudaGraphPadding: typeof graph?.enable_padding === 'boolean' ? graph.enable_padding : undefined,
    chunkedPrefill: typeof p.enable_chunked_prefill === 'boolean' ? p.enable_chunked_prefill : undefined,
    prefixCaching: kv.enable_block_reuse === false ? false : undefined,
  });
}

function sglangPool(p: Record<string, unknown>): PoolFlags {
  const dpAttention = p['enable-dp-attention'] === true;
  const dp = dpAttention ? (positiveInt(p['data-parallel-size']) ?? positiveInt(p['dp-size']) ?? positiveInt(p.dp) ?? 1) : 1;
  const running = positiveInt(p['max-running-requests']);
  const chunk = p['chunked-prefill-size'];
  const chunkPerRank = positiveInt(chunk) !== undefined ? Math.floor((chunk as number) / dp) : undefined;
  const prefillTokens = positiveInt(p['max-prefill-tokens']);
  const budget = chunkPerRank ?? prefillTokens;
  return defined({
    maxSequences: running !== undefined ? Math.max(1, Math.floor(running / dp)) : undefined,
    maxBatchedTokens: budget !== undefined ? Math.max(1, Math.min(budget, prefillTokens ?? Infinity)) : undefined,
    memoryFraction: fraction(p['mem-fraction-static']),
    kvCacheDtype: kvDtype(p['kv-cache-dtype']),
    cudaGraphMaxBatch: p['disable-cuda-graph'] === true ? undefined : positiveInt(p['cuda-graph-max-bs']),
    chunkedPrefill: chunkPerRank !== undefined ? true : chunk === -1 ? false : undefined,
    prefixCaching: p['disable-radix-cache'] === true ? false : undefined,
  });
}

/**
 * A vLLM pool's flags: each data-parallel rank is an engine of its own, so `--max-num-seqs` and
 * `--max-num-batched-tokens` are per rank already.
 */
function vllmPool(p: Record<string, unknown>): PoolFlags {
  return defined({
    maxSequences: positiveInt(p['max-num-seqs']),
    maxBatchedTokens: positiveInt(p['max-num-batched-tokens']),
    memoryFraction: fraction(p['gpu-memory-utilization']),
    kvCacheDtype: kvDtype(p['kv-cache-dtype']),
    cudaGraphMaxBatch: p['enforce-eager'] === true ? undefined : positiveInt(p['max-cudagraph-capture-size']),
    chunkedPrefill: p['no-enable-chunked-prefill'] === true ? false : p['enable-chunked-prefill'] === true ? true : undefined,
    prefixCaching: p['no-enable-prefix-caching'] === true ? false : undefined,
  });
}

/**
 * The prefill and decode engines' flags of one srt-slurm recipe (its parsed YAML):
 * `backend.trtllm_config`, `backend.sglang_config` or `backend.vllm_config`, each with a
 * `prefill` and a `decode` block. Null for a recipe of another shape (another engine, or one that
 * derives from a base recipe or sweeps its settings), whose flags are not read.
 */
export function recipeFlags(doc: unknown): RecipeFlags | null {
  const top = record(doc);
  if (top === undefined || 'base' in top || 'override' in top || Object.keys(top).some((k) => k.startsWith('zip_override'))) return null;
  const backend = record(top.backend);
  const trt = record(backend?.trtllm_config);
  const sgl = record(backend?.sglang_config);
  const vllm = record(backend?.vllm_config);
  const config = trt ?? sgl ?? vllm;
  const prefill = record(config?.prefill);
  const decode = record(config?.decode);
  if (prefill === undefined || decode === undefined) return null;
  const pool = trt !== undefined ? trtllmPool : sgl !== undefined ? sglangPool : vllmPool;
  return { prefill: pool(prefill), decode: pool(decode) };
}

/**
 * The flags a TensorRT-LLM recipe's file name states: srt-slurm's TensorRT-LLM recipes are named
 * `ctx<P>_gen<D>_<tep|dep><TP>_batch<B>_eplb<N>_mtp<M>` (some with a `c<C>_` in front, Kimi-K2.5's
 * `ctx<P>dep<TP>_gen<D>tep<TP>_batch<B>_...`), the name Dynamo's TensorRT-LLM sweep gave a run from
 * its settings (`components/backends/trtllm/performance_sweeps/benchmark_disagg.slurm`), B the
 * decode workers' `max_batch_size`. Names of plain-TP decode workers (`..._gen3_tp8_batch1024_..._32`)
 * are not read: their limit does not follow the name (that recipe holds 12). Null for another name.
 */
export function recipeNameFlags(path: string): RecipeFlags | null {
  const match = /(?:^|\/)(?:c\d+_)?ctx\d+(?:_|[td]ep\d+_)gen\d+_?[td]ep\d+_batch([1-9][0-9]*)_[^/]*\.ya?ml$/.exec(path);
  return match === null ? null : { prefill: {}, decode: { maxSequences: Number(match[1]) } };
}

/**
 * The flags of a TensorRT-LLM config entry that names no recipe but sizes its launch in its
 * `additional-settings` (InferenceX's `dynamo-trt` entries of December 2025 and January 2026):
 * its script passes them to Dynamo's TensorRT-LLM sweep (`benchmark_disagg.slurm`), whose
 * `scripts/gen_yaml.py` (ai-dynamo/dynamo 357f7dfc) writes the prefill engine's `max_batch_size`
 * and `max_num_tokens` from PREFILL_MAX_BATCH_SIZE and PREFILL_MAX_NUM_TOKENS, the decode engine's
 * from DECODE_MAX_BATCH_SIZE and DECODE_MAX_NUM_TOKENS, its `free_gpu_memory_fraction` from
 * DECODE_GPU_MEM_FRACTION (0.85 for the prefill engine, `CTX_GPU_FRAC`), an FP8 KV cache and block
 * reuse off for both, and padded CUDA graphs for the decode engine. Null when a size is missing.
 */
export function configSettingsFlags(settings: readonly string[]): RecipeFlags | null {
  const value = (name: string): number | undefined => {
    const found = settings.find((s) => s.startsWith(`${name}=`));
    if (found === undefined) return undefined;
    const n = Number(found.slice(name.length + 1));
    return Number.isFinite(n) && n > 0 ? n : undefined;
  };
  const prefillBatch = value('PREFILL_MAX_BATCH_SIZE');
  const prefillTokens = value('PREFILL_MAX_NUM_TOKENS');
  const decodeBatch = value('DECODE_MAX_BATCH_SIZE');
  const decodeTokens = value('DECODE_MAX_NUM_TOKENS');
  const decodeFraction = value('DECODE_GPU_MEM_FRACTION');
  if ([prefillBatch, prefillTokens, decodeBatch, decodeTokens].some((v) => v === undefined || !Number.isInteger(v))) return null;
  if (decodeFraction === undefined || decodeFraction > 1) return null;
  return {
    prefill: {
      maxSequences: prefillBatch,
      maxBatchedTokens: prefillTokens,
      memoryFraction: 0.85,
      kvCacheDtype: 'fp8',
      prefixCaching: false,
    },
    decode: {
      maxSequences: decodeBatch,
      maxBatchedTokens: decodeTokens,
      memoryFraction: decodeFraction,
      kvCacheDtype: 'fp8',
      cudaGraphPadding: true,
      prefixCaching: false,
    },
  };
}

/**
 * When InferenceX's runners moved from srt-slurm's `sa-submission-q1-2026` branch to NVIDIA/srt-slurm's
 * `sa-submission-q2-2026` (the `git checkout` of `runners/launch_*.sh`, SemiAnalysisAI/InferenceX):
 * GB200 runs of dynamo-vllm in 235b232d, GB200 runs of Kimi-K2.5 under dynamo-trt in e8924a6a,
 * every run on the B200, B300, GB300, H100 and H200 runners in 2e9cecf9; other GB200 runs stayed on
 * q1 (through the sample's last measurement).
 */
export const Q2_BRANCH_SWITCHES: readonly { gpus: readonly string[]; backend?: string; model?: string; since: string }[] = [
  { gpus: ['gb200'], backend: 'vllm', since: '2026-04-07T15:33:03-04:00' },
  { gpus: ['gb200'], backend: 'trtllm', model: 'Kimi-K2.5', since: '2026-04-18T14:07:09-04:00' },
  { gpus: ['b200', 'b300', 'gb300', 'h100', 'h200'], since: '2026-04-19T12:41:27-07:00' },
];

/**
 * Whether a run on `gpu` (the runner's first word) of `backend` and `model` (InferenceX's names)
 * that ended at `atMs` cloned the q2 branch: its runner had moved by then.
 */
export function runsOnQ2Branch(row: { gpu: string; backend: string; model: string }, atMs: number): boolean {
  return Q2_BRANCH_SWITCHES.some(
    (s) =>
      s.gpus.includes(row.gpu) &&
      (s.backend ?? row.backend) === row.backend &&
      (s.model ?? row.model) === row.model &&
      atMs >= Date.parse(s.since),
  );
}

/** The data file's flag columns of one pool (prefix `prefill_` or `decode_`), in order. */
const FLAG_FIELDS = [
  ['max_sequences', 'maxSequences', 'int'],
  ['max_batched_tokens', 'maxBatchedTokens', 'int'],
  ['memory_fraction', 'memoryFraction', 'fraction'],
  ['kv_cache_dtype', 'kvCacheDtype', 'dtype'],
  ['cuda_graph_max_batch', 'cudaGraphMaxBatch', 'int'],
  ['cuda_graph_padding', 'cudaGraphPadding', 'bool'],
  ['chunked_prefill', 'chunkedPrefill', 'bool'],
  ['prefix_caching', 'prefixCaching', 'bool'],
] as const satisfies readonly (readonly [string, keyof PoolFlags, string])[];

/** The row's key (as data/silicon/disagg-workers.csv's), each pool's flags (empty: not set), and the recipe. */
export const FLAG_COLUMNS = [
  'model',
  'system',
  'backend',
  'precision',
  'isl',
  'osl',
  'prefill_tp',
  'prefill_ep',
  'decode_tp',
  'concurrency',
  'measured',
  ...(['prefill', 'decode'] as const).flatMap((role) => FLAG_FIELDS.map(([column]) => `${role}_${column}`)),
  'read_from',
  'recipe_repository',
  'recipe_path',
  'recipe_commit',
  'recipe_date',
] as const;

/**
 * Where a row's flags were read: `recipe`, the recipe's settings as it stood at the measurement;
 * `recipe name`, the decode pool's batch limit that a TensorRT-LLM recipe's file name states
 * (`..._batch32_...`), where the recipe's state at the measurement is not known; `config settings`,
 * the sizes a config entry that names no recipe gives its launch script (`DECODE_MAX_BATCH_SIZE=...`).
 */
export const READ_FROM = ['recipe', 'recipe name', 'config settings'] as const;
export type ReadFrom = (typeof READ_FROM)[number];

/** A pool's flags as the data file's cells (`prefix` `prefill_` or `decode_`). */
export function flagCells(flags: PoolFlags, prefix: string): Record<string, string> {
  return Object.fromEntries(
    FLAG_FIELDS.map(([column, field]) => [`${prefix}${column}`, flags[field] === undefined ? '' : String(flags[field])]),
  );
}

/** One row of the data file: the flags of a sample row's pools and where they were read. */
export interface FlagFileRow {
  flags: RecipeFlags;
  readFrom: ReadFrom;
  recipe: { repository: string; path: string; commit: string; date: string };
  line: number;
}

export function disaggFlagsFile(): string {
  return join(packageRoot(), 'data', 'silicon', 'disagg-flags.csv');
}

/** The checks and reading of one row's flag and source cells, common to both data files. */
function flagRowOf(file: string, cells: Record<string, string>, line: number): () => FlagFileRow {
  const pool = (role: 'prefill' | 'decode'): PoolFlags => {
    const flags: PoolFlags = {};
    for (const [column, field, kind] of FLAG_FIELDS) {
      const name = `${role}_${column}`;
      const value = cells[name];
      if (value === '') continue;
      const bad = (what: string) => new InputError(file, line, `column "${name}": must be ${what} or empty, got "${value}"`);
      if (kind === 'int') {
        if (!/^[1-9][0-9]*$/.test(value)) throw bad('a positive integer');
        (flags as Record<string, unknown>)[field] = Number(value);
      } else if (kind === 'fraction') {
        const n = Number(value);
        if (!(n > 0 && n <= 1)) throw bad('a fraction in (0, 1]');
        flags.memoryFraction = n;
      } else if (kind === 'dtype') {
        if (value !== 'fp8' && value !== 'bf16') throw bad('fp8 or bf16');
        flags.kvCacheDtype = value;
      } else {
        if (value !== 'true' && value !== 'false') throw bad('true or false');
        (flags as Record<string, unknown>)[field] = value === 'true';
      }
    }
    return flags;
  };
  for (const column of ['recipe_repository', 'recipe_path'] as const) {
    if (cells[column] === '') throw new InputError(file, line, `column "${column}": must be given`);
  }
  const readFrom = READ_FROM.find((r) => r === cells.read_from);
  if (readFrom === undefined) {
    throw new InputError(file, line, `column "read_from": must be one of ${READ_FROM.join(', ')}, got "${cells.read_from}"`);
  }
  if (!/^[0-9a-f]{40}$/.test(cells.recipe_commit)) {
    throw new InputError(file, line, `column "recipe_commit": must be a 40-digit commit hash, got "${cells.recipe_commit}"`);
  }
  if (!Number.isFinite(Date.parse(cells.recipe_date))) {
    throw new InputError(file, line, `column "recipe_date": must be a date and time (ISO 8601), got "${cells.recipe_date}"`);
  }
  // The flags are read after the key is found new, as the key's cells are checked first.
  return () => ({
    flags: { prefill: pool('prefill'), decode: pool('decode') },
    readFrom,
    recipe: { repository: cells.recipe_repository, path: cells.recipe_path, commit: cells.recipe_commit, date: cells.recipe_date },
    line,
  });
}

const cache = new Map<string, Map<string, FlagFileRow>>();

/**
 * The data file's rows by key (`factsKey`); a missing file has none. A missing column, a bad
 * cell, or two rows of one key is an `InputError` naming the file, the line and the column (exit 2).
 */
export function loadDisaggFlags(file = disaggFlagsFile()): Map<string, FlagFileRow> {
  return loadKeyedRows(file, FLAG_COLUMNS, cache, (cells, line) => {
    for (const column of ['model', 'system', 'backend', 'precision'] as const) {
      if (cells[column] === '') throw new InputError(file, line, `column "${column}": must be given`);
    }
    for (const column of ['isl', 'osl', 'prefill_tp', 'prefill_ep', 'decode_tp', 'concurrency'] as const) {
      if (!/^[1-9][0-9]*$/.test(cells[column])) {
        throw new InputError(file, line, `column "${column}": must be a positive integer, got "${cells[column]}"`);
      }
    }
    if (!Number.isFinite(Date.parse(cells.measured))) {
      throw new InputError(file, line, `column "measured": must be a date and time (ISO 8601), got "${cells.measured}"`);
    }
    return flagRowOf(file, cells, line);
  });
}

/**
 * The columns of data/silicon/disagg-db-flags.csv: a database-dump row's id in the sample, the
 * config entry it was matched to (`matchDbEntry`: its name and the version's commit), each pool's
 * flags, and where they were read (as in disagg-flags.csv).
 */
export const DB_FLAG_COLUMNS = ['id', 'config', 'config_commit', ...FLAG_COLUMNS.slice(11)] as const;

export function disaggDbFlagsFile(): string {
  return join(packageRoot(), 'data', 'silicon', 'disagg-db-flags.csv');
}

const dbCache = new Map<string, Map<string, FlagFileRow>>();

/** The database-dump rows' flags by the sample's row id; a missing file has none; errors as `loadDisaggFlags`'s. */
export function loadDisaggDbFlags(file = disaggDbFlagsFile()): Map<string, FlagFileRow> {
  return loadRowsBy(file, DB_FLAG_COLUMNS, dbCache, 'id', (cells, line) => {
    for (const column of ['id', 'config'] as const) {
      if (cells[column] === '') throw new InputError(file, line, `column "${column}": must be given`);
    }
    if (!/^[0-9a-f]{40}$/.test(cells.config_commit)) {
      throw new InputError(file, line, `column "config_commit": must be a 40-digit commit hash, got "${cells.config_commit}"`);
    }
    return { key: cells.id, build: flagRowOf(file, cells, line) };
  });
}

/** The flags the data file gives an export row (its cells and source fields), or undefined (the engines' defaults). */
export function flagsFromRecipe(
  cells: Record<string, string>,
  fields: Map<string, string>,
  rows: Map<string, FlagFileRow> = loadDisaggFlags(),
): FlagFileRow | undefined {
  const facts = rowFactsOf(cells, fields);
  return facts === null ? undefined : rows.get(factsKey(facts));
}
