/**
 * Shapes of what a replay reports (docs/replay-model.md, "Report"): the summary written as `summary.json`
 * and one record per request written as `requests.jsonl`. Names are AIPerf's tags.
 */
import type { Stats } from './stats.js';

/** Tags of the per-request metrics, in report order. */
export const METRIC_TAGS = [
  'time_to_first_token',
  'time_to_second_token',
  'request_latency',
  'inter_token_latency',
  'output_token_throughput_per_user',
  'e2e_output_token_throughput',
  'token_gap',
  'input_sequence_length',
  'output_sequence_length',
] as const;

export type MetricTag = (typeof METRIC_TAGS)[number];

export const METRIC_UNITS: Record<MetricTag, string> = {
  time_to_first_token: 'ms',
  time_to_second_token: 'ms',
  request_latency: 'ms',
  inter_token_latency: 'ms',
  output_token_throughput_per_user: 'tokens/sec/user',
  e2e_output_token_throughput: 'tokens/sec',
  token_gap: 'ms',
  input_sequence_length: 'tokens',
  output_sequence_length: 'tokens',
};

export const STAT_NAMES = ['avg', 'min', 'max', 'p1', 'p5', 'p10', 'p25', 'p50', 'p75', 'p90', 'p95', 'p99', 'std'] as const;

/** Statistics of one metric as reported: the unit first, then the statistics of core/stats.ts. */
export interface MetricStats extends Stats {
  unit: string;
  /** Present and true only when percentiles came from the 0.1 % relative-error sketch. */
  approximate?: boolean;
}

export interface RunStats {
  request_count: number;
  error_request_count: number;
  incomplete_request_count: number;
  benchmark_duration_s: number;
  request_throughput: number;
  output_token_throughput: number;
  input_token_throughput: number;
  total_token_throughput: number;
  worker_seconds: number;
  gpu_hours: number;
}

export interface TtftStages {
  /** Client to server (engine.frontend). */
  mean_frontend_ms: number;
  mean_tokenization_ms: number;
  mean_queue_ms: number;
  mean_prefill_ms: number;
  mean_detokenization_ms: number;
  /**
   * Disaggregated runs whose first token is the decode worker's (`engine.kv_transfer.first_token`):
   * from the prefill's end to the KV's arrival on the decode worker (link wait and transfer), and
   * from there to the first token (the wait for a decode slot and blocks, and the first pass).
   * 0 when the first token leaves the prefill worker; absent on aggregated runs.
   */
  mean_kv_transfer_ms?: number;
  mean_decode_ms?: number;
}

/**
 * The prefix cache over the whole run (every admission of every rank, warmup included): prompt
 * tokens looked up (a recompute after preemption looks up its generated tokens too), those
 * served from the cache, and cached blocks evicted to make room.
 */
export interface PrefixCacheStats {
  /** hits / queries (0 when nothing was looked up). */
  hit_rate: number;
  queries: number;
  hits: number;
  evictions: number;
}

export interface PoolStats {
  role: string;
  workers: number;
  gpus: number;
  passes: number;
  /** Share of the run (to the last response) its workers spent in passes, over its workers. */
  busy_share: number;
}

/** Over the valid requests whose KV moved from a prefill to a decode worker. */
export interface KvTransferStats {
  transfers: number;
  /** From the first token (the prefill's end) to the transfer's start: waiting for the link. */
  mean_link_wait_ms: number;
  /** The transfer itself: latency + bytes / bandwidth. */
  mean_transfer_ms: number;
}

export interface SimulatorStats {
  /** Host time of the simulation and its statistics: the only field that differs run to run. */
  wall_time_ms: number;
  us_per_output_token: number;
  /** Output tokens received by the client over the whole run (warmup included). */
  output_tokens: number;
  /** Engine passes run, preemptions, and the virtual time of the last event processed. */
  passes: number;
  preemptions: number;
  virtual_end_ms: number;
}

export interface ReplaySummary {
  metrics: Partial<Record<MetricTag, MetricStats>>;
  run: RunStats;
  ttft_stages: TtftStages;
  /** Present when the run has a prefix cache (prefix caching on, and prompts that can share blocks). */
  prefix_cache?: PrefixCacheStats;
  /** Disaggregated runs: each pool's workers, GPUs, passes and busy share, in pool order. */
  pools?: PoolStats[];
  /** Disaggregated runs: the KV transfers (in TTFT or between the first and second tokens, as `engine.kv_transfer.first_token` says). */
  kv_transfer?: KvTransferStats;
  simulator: SimulatorStats;
  /** GPUs, weights and KV cache of the deployment (from the catalog where the model and GPU are in it). */
  deployment: { gpus: number; weights_gib_per_gpu: number | null; kv_cache_tokens_per_rank: number | null };
  /**
   * With roofline timing: how far predictions of this kind were from measurements
   * (docs/hardware-and-models.md): the stratum's MAPE of TTFT avg and ITL avg in percent over
   * `points` measured points, obtained as `basis` says; null MAPEs where the stratum has no evidence.
   */
  accuracy?: { basis: string; stratum: string; ttft_mape: number | null; itl_mape: number | null; points: number };
  /** What the deployment costs, when a price per GPU-hour is known (config/cost.ts); absent otherwise. */
  cost?: CostSummary;
  /** The effective config (defaults filled, overrides applied). */
  config: unknown;
  /** With a trace source: the trace, its usable rows and the rows skipped (`--skip-invalid-rows`). */
  input?: { trace: string; trace_rows: number; skipped_trace_rows: number };
}

export type RequestStatus = 'completed' | 'rejected' | 'incomplete';

/** One line of `requests.jsonl`. Times are ms of virtual time; null where the stage was not reached. */
export interface RequestRecord {
  request_id: number;
  session_id: number;
  turn_index: number;
  status: RequestStatus;
  warmup: boolean;
  sent_ms: number;
  tokenized_ms: number | null;
  queued_ms: number | null;
  first_scheduled_ms: number | null;
  first_token_emitted_ms: number | null;
  /** Client receive time of each output token. */
  token_ms: number[];
  /** Engine emit time of each output token (pass end). */
  token_emitted_ms: number[];
  /** Receive time of the response end (last token, or the rejection). */
  response_received_ms: number | null;
  /** When the client acted on the response (receipt + response overhead). */
  response_acted_ms: number | null;
  input_tokens: number;
  /** Prompt tokens served by the prefix cache at the request's first admission (runs with a prefix cache only). */
  cached_tokens?: number;
  output_tokens: number;
  time_to_first_token: number | null;
  time_to_second_token: number | null;
  request_latency: number | null;
  inter_token_latency: number | null;
  output_token_throughput_per_user: number | null;
  e2e_output_token_throughput: number | null;
}

/** A replay's cost: its GPUs at a price, per hour and per million of the output tokens it emitted. */
export interface CostSummary {
  price_per_gpu_hour: number;
  /** `--price-per-gpu-hour`, or the catalog GPU's list price with its source and date. */
  price_source: string;
  gpus: number;
  cost_per_hour: number;
  /** The run's output token throughput (tokens per second over the benchmark duration). */
  output_tokens_per_s: number;
  cost_per_million_output_tokens: number | null;
}
