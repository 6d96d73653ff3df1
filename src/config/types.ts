/**
 * The run config after validation and defaults (docs/config.md), spelled exactly as the
 * YAML spells it. `config/schema.ts` produces it; `config/resolve.ts` compiles it into plain
 * numbers for the replay loop. Nothing here is optional except the blocks the docs mark
 * optional (tokenization, detokenization, response_overhead), which are absent when off.
 */

export interface ParallelismConfig {
  replicas: number;
  tensor: number;
  attention_data: number;
  /** Expert-parallel groups of a mixture-of-experts model (divides tensor x attention_data). */
  expert: number;
}

/** Serving engines whose efficiency factors the catalog keeps. */
export const BACKENDS = ['vllm', 'sglang', 'trtllm'] as const;
export type Backend = (typeof BACKENDS)[number];

export type Precision = 'bf16' | 'fp8' | 'fp4' | 'int4';

export const SCHEDULE_POLICIES = ['fcfs', 'priority', 'lpm'] as const;

export const CAPACITY_POLICIES = ['guaranteed_no_evict', 'max_utilization'] as const;
/** Disaggregated serving: which worker's output is a request's first token (`engine.kv_transfer.first_token`). */
export const FIRST_TOKEN_SOURCES = ['prefill', 'decode'] as const;

export interface SchedulerConfig {
  max_batched_tokens: number;
  max_sequences: number;
  chunked_prefill: boolean;
  /** Whose scheduler the ranks run; absent: engine.backend's. */
  policy?: Backend;
  /** Queue order: fcfs (all), priority (vllm), lpm (sglang); absent: fcfs. */
  schedule_policy?: (typeof SCHEDULE_POLICIES)[number];
  /** TensorRT-LLM's capacity scheduler; absent: guaranteed_no_evict. */
  capacity_policy?: (typeof CAPACITY_POLICIES)[number];
  /** SGLang's --schedule-conservativeness (scales the initial new_token_ratio); absent: 1. */
  schedule_conservativeness?: number;
  /** vLLM priority without a trace priority column: priorities 0 .. levels - 1 spread over the requests; absent: 1 (all equal). */
  priority_levels?: number;
  /** Largest decode batch with a CUDA graph, and whether batches are padded up to a captured size; absent: the engine's defaults. */
  cuda_graph_max_batch?: number;
  cuda_graph_padding?: boolean;
}

export type KvCapacityConfig =
  | { type: 'auto'; gpu_memory_utilization?: number; reserve_gib?: number }
  | { type: 'unlimited' }
  | { type: 'fixed'; blocks: number }
  | {
      type: 'memory';
      gpu_memory_gib: number;
      memory_fraction: number;
      weights_gib: number;
      kv_bytes_per_token: number;
    };

export interface KvCacheConfig {
  block_size: number;
  dtype: 'auto' | Precision;
  capacity: KvCapacityConfig;
  /** Optional: reuse the KV blocks of shared prompt prefixes; on when absent (as vLLM v1). */
  prefix_caching?: boolean;
}

export interface FixedTimingConfig {
  type: 'fixed';
  prefill_ms: number;
  decode_ms: number;
}

/** The polynomial provider has no knobs: its coefficients are fixed (docs/replay-model.md, "Timing providers"). */
export interface PolynomialTimingConfig {
  type: 'polynomial';
}

export interface LinearTimingConfig {
  type: 'linear';
  base_ms: number;
  prefill_token_us: number;
  prefill_pair_ns: number;
  decode_request_us: number;
  decode_kv_token_ns: number;
  /** Exponent p of the decoding-request term (decode_request_us x B^p), in (0, 1]; 1 = linear. */
  decode_request_exponent: number;
  /**
   * Share in [0, 1] of the smaller of the prefill work and the rest of the pass that the two
   * overlap by (roofline): 0 = the plain sum, 1 = the larger of the two.
   */
  prefill_overlap: number;
}

/** Pass time from the catalog's model and GPU; `efficiency` overrides the fitted factors. */
export interface RooflineTimingConfig {
  type: 'roofline';
  efficiency?: {
    compute?: number;
    memory?: number;
    link?: number;
    collective_us?: number;
    pass_overhead_ms?: number;
    per_request_us?: number;
    per_layer_us?: number;
    layer_floor_us?: number;
    moe?: number;
    frontend_ms?: number;
    frontend_us_per_token?: number;
    frontend_us_per_inflight?: number;
  };
}

/**
 * Pass time from per-layer profiles: the pass-time model `servesim calibrate pass-time --profile`
 * writes (docs/replay-model.md, "Timing providers"); `path` is relative to the config file.
 */
export interface ProfileTimingConfig {
  type: 'profile';
  path: string;
}

export type TimingConfig = FixedTimingConfig | PolynomialTimingConfig | LinearTimingConfig | RooflineTimingConfig | ProfileTimingConfig;

export interface WorkerRoleConfig {
  parallelism: ParallelismConfig;
  scheduler: SchedulerConfig;
  kv_cache: KvCacheConfig;
  timing: TimingConfig;
}

export interface TokenizationConfig {
  workers: number;
  base_ms: number;
  per_input_us: number;
}

export interface DetokenizationConfig {
  workers: number;
  base_ms: number;
  per_output_us: number;
  /** Optional: split a server's pass outputs into jobs of at most this many outputs. */
  chunk_outputs?: number;
}

export interface KvTransferConfig {
  latency_ms: number;
  bandwidth_gb_per_s?: number;
  kv_bytes_per_token?: number;
  max_local_prefill_tokens: number;
  first_token: (typeof FIRST_TOKEN_SOURCES)[number];
}

/** How requests are placed on ranks; round_robin when absent. */
export type RouterConfig = { type: 'round_robin' } | { type: 'least_loaded' } | { type: 'kv_aware'; overlap_score_weight: number };

export interface EngineConfig {
  model: string;
  hardware: string;
  backend: Backend;
  /** The backend's version (PEP 440); picks the engine's defaults. Absent: the newest listed. */
  backend_version?: string;
  /** Absent: the catalog model's own precision. */
  precision?: Precision;
  /** Positive integer, or 'max' for no limit. */
  context_length: number | 'max';
  /** Client to server time before tokenization: base_ms + per_input_us x prompt; auto = the catalog's with roofline timing, else 0. */
  frontend: { base_ms: number | 'auto'; per_input_us: number | 'auto'; per_inflight_us?: number | 'auto' };
  /** `aggregated`, or `prefill` and `decode` (the loader refuses any other combination). */
  workers: { aggregated?: WorkerRoleConfig; prefill?: WorkerRoleConfig; decode?: WorkerRoleConfig };
  /** Disaggregated workers only: the KV transfer between a prefill and a decode worker. */
  kv_transfer?: KvTransferConfig;
  router?: RouterConfig;
  tokenization?: TokenizationConfig;
  detokenization?: DetokenizationConfig;
}

export interface SyntheticSourceConfig {
  type: 'synthetic';
  input_tokens: number;
  output_tokens: number;
  random_range_ratio: number;
  /** AIPerf-style normal spread of the prompt and output lengths (absent: 0, fixed). */
  input_tokens_stddev?: number;
  output_tokens_stddev?: number;
  /**
   * Distinct prompts the requests repeat, as AIPerf's --num-dataset-entries (absent: every request
   * its own prompt). Each entry's lengths are drawn once; a repeated prompt finds its blocks in
   * the engine's prefix cache.
   */
  dataset_entries?: number;
  /** How requests take the entries, as AIPerf's --dataset-sampling-strategy (absent: shuffle). */
  dataset_sampling?: DatasetSampling;
  seed: number;
}

/** AIPerf's dataset sampling: a fresh random order every pass over the entries, entry order, or independent draws. */
export type DatasetSampling = 'shuffle' | 'sequential' | 'random';

export interface SyntheticSessionSourceConfig {
  type: 'synthetic-session';
  turns: number;
  new_input_tokens_per_turn: number;
  output_tokens_per_turn: number;
  inter_turn_delay_ms: number;
}

export interface TraceSourceConfig {
  type: 'trace';
  /** As written in the file; relative paths are resolved against the config file's folder. */
  path: string;
  format: 'mooncake' | 'vllm-log';
  block_size: number;
}

export type SourceConfig = SyntheticSourceConfig | SyntheticSessionSourceConfig | TraceSourceConfig;

export interface ResponseOverheadConfig {
  base_ms: number;
  per_output_token_us: number;
  /** Per other request in flight when the response ends, us (absent: 0). */
  per_inflight_us?: number;
}

export type LoadConfig =
  | { type: 'concurrency'; concurrency: number; ramp_up_ms: number; response_overhead?: ResponseOverheadConfig }
  | { type: 'poisson'; requests_per_second: number; seed: number; response_overhead?: ResponseOverheadConfig }
  | { type: 'constant_rate'; requests_per_second: number; response_overhead?: ResponseOverheadConfig }
  | { type: 'trace_timestamps'; speedup: number; response_overhead?: ResponseOverheadConfig };

export type StopConfig = { requests: number } | { requests_per_load_unit: number } | { max_virtual_time_seconds: number };

export interface TrafficConfig {
  source: SourceConfig;
  load: LoadConfig;
  stop: StopConfig;
}

export interface ReportConfig {
  warmup_requests: number;
}

export interface RunConfig {
  engine: EngineConfig;
  traffic: TrafficConfig;
  report: ReportConfig;
}
