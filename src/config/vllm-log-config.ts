/**
 * The run config of a vLLM request log (docs/request-logs.md, "What is read from meta.json"): the
 * engine as the log's `meta.json` describes it, the log as a trace at its own arrival times, every
 * request of it replayed, and no client path (the log's times are the engine's own: no HTTP, no
 * detokenization). The result is a raw config object, validated by the loader like a file.
 *
 * meta.json keys, each checked where it is read (a bad value is a `ConfigError` naming meta.json
 * and the key); a key that is absent or null leaves the config's default:
 *
 *   model (or engine_kwargs.model)                   engine.model
 *   hardware.device_name (else config.json, below)   engine.hardware
 *   vllm_version                                     engine.backend_version (backend vllm)
 *   engine_kwargs.max_model_len                      engine.context_length
 *   engine_kwargs.tensor_parallel_size               parallelism.tensor
 *   engine_kwargs.data_parallel_size                 parallelism.attention_data
 *   engine_kwargs.enable_expert_parallel             parallelism.expert = tensor x data parallel
 *   engine_kwargs.max_num_seqs                       scheduler.max_sequences
 *   engine_kwargs.max_num_batched_tokens             scheduler.max_batched_tokens
 *   resolved_config.scheduler_config.enable_chunked_prefill   scheduler.chunked_prefill
 *   resolved_config.scheduler_config.policy          scheduler.schedule_policy (fcfs, priority)
 *   resolved_config.compilation_config.max_cudagraph_capture_size   scheduler.cuda_graph_max_batch
 *   kv_cache.block_size                              kv_cache.block_size
 *   kv_cache.enable_prefix_caching                   kv_cache.prefix_caching
 *   kv_cache.num_gpu_blocks                          kv_cache.capacity {type: fixed, blocks}
 *   kv_cache.gpu_memory_utilization                  kv_cache.capacity.gpu_memory_utilization (auto, without a block count)
 *   engine_kwargs.kv_cache_dtype                     kv_cache.dtype (auto, fp8*)
 */
import { readFileSync } from 'node:fs';
import { ConfigError, formatValue } from './errors.js';
import { isVersion } from '../catalog/engine-defaults.js';
import { findHardware, findModel } from '../catalog/load.js';
import { findVllmLog, readVllmLog, readVllmLogMetaJson, type VllmLog } from '../io/read-vllm-log.js';
import { loadRunConfigFromObject, type LoadedRunConfig } from './load.js';

/** meta.json keys of the engine's behaviour that the replay does not model (docs/request-logs.md). */
export const UNMAPPED_META_KEYS = [
  'engine_kwargs.dtype',
  'engine_kwargs.seed',
  'resolved_config.scheduler_config.async_scheduling',
  'resolved_config.scheduler_config.long_prefill_token_threshold',
  'resolved_config.scheduler_config.max_num_partial_prefills',
  'resolved_config.scheduler_config.scheduler_reserve_full_isl',
  'resolved_config.compilation_config.cudagraph_capture_sizes',
  'resolved_config.model_config.enforce_eager',
] as const;

export interface LogEngine {
  /** The engine block of the run config (raw, as in a YAML file). */
  engine: Record<string, unknown>;
  /** The meta.json keys read, as dotted paths. */
  read: string[];
}

type Doc = Record<string, unknown>;

function at(doc: Doc, path: string): unknown {
  let node: unknown = doc;
  for (const part of path.split('.')) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = (node as Doc)[part];
  }
  return node;
}

/** The engine config a log's meta.json describes. */
export function logEngineOf(meta: Doc, label: string): LogEngine {
  const read: string[] = [];
  const get = (path: string): unknown => {
    const value = at(meta, path);
    if (value !== undefined && value !== null) read.push(path);
    return value ?? undefined;
  };
  const bad = (path: string, rule: string, value: unknown): never => {
    throw new ConfigError(label, path, `${rule}, got ${formatValue(value)}`);
  };
  const text = (path: string): string | undefined => {
    const value = get(path);
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value === '') bad(path, 'must be a non-empty string', value);
    return value as string;
  };
  const count = (path: string): number | undefined => {
    const value = get(path);
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 2 ** 31 - 1)
      bad(path, 'must be a positive integer', value);
    return value as number;
  };
  const flag = (path: string): boolean | undefined => {
    const value = get(path);
    if (value === undefined) return undefined;
    if (typeof value !== 'boolean') bad(path, 'must be true or false', value);
    return value as boolean;
  };

  const engine: Doc = { backend: 'vllm' };
  // The log's times are the engine's: nothing before the queue, nothing after the last token.
  engine.frontend = { base_ms: 0, per_input_us: 0, per_inflight_us: 0 };
  const model = text('model') ?? text('engine_kwargs.model');
  if (model !== undefined) engine.model = findModel(model)?.name ?? model;
  const device = text('hardware.device_name');
  if (device !== undefined) engine.hardware = findHardware(device)?.id ?? device;
  const version = text('vllm_version');
  if (version !== undefined) {
    if (!isVersion(version)) bad('vllm_version', 'must be a version such as 0.19.0', version);
    engine.backend_version = version;
  }
  const maxModelLen = count('engine_kwargs.max_model_len');
  if (maxModelLen !== undefined) engine.context_length = maxModelLen;

  const parallelism: Doc = {};
  const tensor = count('engine_kwargs.tensor_parallel_size');
  const data = count('engine_kwargs.data_parallel_size');
  if (tensor !== undefined) parallelism.tensor = tensor;
  if (data !== undefined) parallelism.attention_data = data;
  if (flag('engine_kwargs.enable_expert_parallel') === true) parallelism.expert = (tensor ?? 1) * (data ?? 1);

  const scheduler: Doc = {};
  const maxSeqs = count('engine_kwargs.max_num_seqs');
  if (maxSeqs !== undefined) scheduler.max_sequences = maxSeqs;
  const maxTokens = count('engine_kwargs.max_num_batched_tokens');
  if (maxTokens !== undefined) scheduler.max_batched_tokens = maxTokens;
  const chunked = flag('resolved_config.scheduler_config.enable_chunked_prefill');
  if (chunked !== undefined) scheduler.chunked_prefill = chunked;
  const policy = text('resolved_config.scheduler_config.policy');
  if (policy !== undefined) {
    if (policy !== 'fcfs' && policy !== 'priority') bad('resolved_config.scheduler_config.policy', 'must be fcfs or priority', policy);
    scheduler.schedule_policy = policy;
  }
  const graphs = count('resolved_config.compilation_config.max_cudagraph_capture_size');
  if (graphs !== undefined) scheduler.cuda_graph_max_batch = graphs;

  const kv: Doc = {};
  const blockSize = count('kv_cache.block_size');
  if (blockSize !== undefined) kv.block_size = blockSize;
  const prefix = flag('kv_cache.enable_prefix_caching');
  if (prefix !== undefined) kv.prefix_caching = prefix;
  const dtype = text('engine_kwargs.kv_cache_dtype');
  if (dtype !== undefined) {
    if (dtype === 'auto') kv.dtype = 'auto';
    else if (dtype.startsWith('fp8')) kv.dtype = 'fp8';
    else bad('engine_kwargs.kv_cache_dtype', 'must be auto or an fp8 type', dtype);
  }
  const blocks = count('kv_cache.num_gpu_blocks');
  const fraction = get('kv_cache.gpu_memory_utilization');
  if (fraction !== undefined && !(typeof fraction === 'number' && fraction > 0 && fraction <= 1))
    bad('kv_cache.gpu_memory_utilization', 'must be a number in (0, 1]', fraction);
  if (blocks !== undefined) kv.capacity = { type: 'fixed', blocks };
  else if (fraction !== undefined && model !== undefined && device !== undefined && findModel(model) && findHardware(device))
    kv.capacity = { type: 'auto', gpu_memory_utilization: fraction };

  const role: Doc = {};
  if (Object.keys(parallelism).length > 0) role.parallelism = parallelism;
  if (Object.keys(scheduler).length > 0) role.scheduler = scheduler;
  if (Object.keys(kv).length > 0) role.kv_cache = kv;
  engine.workers = { aggregated: role };
  return { engine, read };
}

/**
 * The whole raw run config of a log: its engine (from meta.json, or the defaults without one) and
 * its requests as a trace at their own arrival times, every one of the `rows` replayed.
 */
export function logRunConfig(engine: Record<string, unknown> | null, tracePath: string, rows: number): Record<string, unknown> {
  return {
    engine: engine ?? { backend: 'vllm', frontend: { base_ms: 0, per_input_us: 0, per_inflight_us: 0 } },
    traffic: {
      source: { type: 'trace', format: 'vllm-log', path: tracePath },
      load: { type: 'trace_timestamps' },
      stop: { requests: rows },
    },
  };
}

/**
 * The run config of a log named on the command line (its folder or its requests.jsonl): read the
 * log and its meta.json, apply `--set` assignments, validate. Relative paths (the log's, a
 * profile timing's) are relative to the working folder. Errors in a value read from meta.json name
 * meta.json and its key; others name the log.
 */
/** The raw run config of a log (engine from its meta.json, its requests as a trace), before validation. */
export function vllmLogRawConfig(path: string): Record<string, unknown> {
  const found = findVllmLog(path);
  const log = readVllmLog(path, { label: found.requests });
  return logRunConfig(engineOfLog(found), path, log.rows);
}

/**
 * The engine block of a log: its meta.json's, and where that names no GPU, the GPU of the
 * simulator config the run's folder carries (`config.json`, every instance of its nodes naming
 * one `hardware`), when the catalog knows that name. Anything else in config.json is not read, and
 * a config.json of another shape is left alone.
 */
function engineOfLog(found: { meta: string | null; cluster: string | null }): Record<string, unknown> | null {
  if (found.meta === null) return null;
  const engine = logEngineOf(readVllmLogMetaJson(found.meta), found.meta).engine;
  if (engine.hardware === undefined && found.cluster !== null) {
    const gpu = clusterGpu(found.cluster);
    if (gpu !== undefined) engine.hardware = gpu;
  }
  return engine;
}

/** The catalog GPU every instance of a simulator config (`nodes[].instances[].hardware`) names, or undefined. */
function clusterGpu(file: string): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  const nodes = (doc as Doc | null)?.nodes;
  if (!Array.isArray(nodes)) return undefined;
  const names = new Set<string>();
  for (const node of nodes) {
    const instances = (node as Doc | null)?.instances;
    if (!Array.isArray(instances)) return undefined;
    for (const instance of instances) {
      const name = (instance as Doc | null)?.hardware;
      if (typeof name !== 'string') return undefined;
      names.add(name);
    }
  }
  if (names.size !== 1) return undefined;
  return findHardware([...names][0])?.id;
}

export function loadVllmLogRunConfig(
  path: string,
  sets: readonly string[] = [],
  options: { skipInvalid?: boolean; timing?: Record<string, unknown> } = {},
): LoadedRunConfig & { log: VllmLog } {
  const found = findVllmLog(path);
  const log = readVllmLog(path, { skipInvalid: options.skipInvalid, label: found.requests });
  const raw = logRunConfig(engineOfLog(found), path, log.rows);
  if (options.timing !== undefined) {
    const workers = ((raw.engine as Doc).workers ??= { aggregated: {} }) as Doc;
    ((workers.aggregated ??= {}) as Doc).timing = options.timing;
  }
  return {
    config: loadRunConfigFromObject(raw, found.meta ?? found.requests, sets),
    file: found.meta ?? found.requests,
    baseDir: process.cwd(),
    log,
  };
}
