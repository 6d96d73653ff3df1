/**
 * Compiles a validated RunConfig into the plain numbers the replay loop runs on
 * (docs/replay-model.md): unit conversions done once, zero-cost client stages switched off (docs/client-path.md:
 * all-zero costs are exactly the same as leaving the block out), stop limits made integers.
 * The core never sees YAML or files: a trace arrives already read, as columns. Derived
 * quantities shared with the loader (KV blocks per rank) come from config/kv-capacity.ts.
 */
import { kvBlocksPerRank } from '../config/kv-capacity.js';
import type { RunConfig } from '../config/types.js';
import { createPassTime, type PassTimeFn } from './timing.js';

/** A trace as columns, one entry per row in file order (what the Mooncake reader returns). */
export interface TraceRows {
  rows: number;
  timestampMs: Float64Array;
  inputLength: Int32Array;
  outputLength: Int32Array;
  /** Session id per row ('' = none), or null when no row has one. */
  sessionId: string[] | null;
  delayMs: Float64Array;
}

export interface FifoStage {
  /** Servers per engine worker. */
  serversPerWorker: number;
  baseMs: number;
  /** ms per token (input tokens for tokenization, outputs for detokenization). */
  perTokenMs: number;
  /** Detokenization only: at most this many outputs per job (0 = no limit). */
  chunkOutputs: number;
}

export type ResolvedLoad =
  | { kind: 'closed'; concurrency: number; rampUpMs: number }
  | { kind: 'poisson'; ratePerSecond: number; seed: number }
  | { kind: 'constant'; ratePerSecond: number }
  | { kind: 'timestamps'; speedup: number };

export type ResolvedSource =
  | { kind: 'synthetic'; inputTokens: number; outputTokens: number; rangeRatio: number; seed: number }
  | { kind: 'session'; turns: number; newInputTokens: number; outputTokens: number; interTurnDelayMs: number }
  | { kind: 'trace'; trace: TraceRows; label: string };

export interface ResolvedRun {
  replicas: number;
  ranksPerWorker: number;
  gpusPerWorker: number;
  maxBatchedTokens: number;
  maxSequences: number;
  chunkedPrefill: boolean;
  blockSize: number;
  /** KV blocks per attention-DP rank; 0 = unlimited. */
  kvBlocksPerRank: number;
  /**
   * L = min(context_length, KV tokens per rank + 1). A prompt >= L is rejected; a request
   * finishes once prompt + generated reaches L (docs/replay-model.md, "Engine", steps 4 and 6). Infinity when unlimited.
   */
  lengthLimit: number;
  passTime: PassTimeFn;
  /** The timing provider's type, to name it in errors. */
  timingType: string;
  tokenization: FifoStage | null;
  detokenization: FifoStage | null;
  /** Response overhead in ms: base and per output token; null = none. */
  responseOverhead: { baseMs: number; perOutputTokenMs: number } | null;
  load: ResolvedLoad;
  source: ResolvedSource;
  /** Requests to send at most (Infinity under a time cap alone). */
  maxRequests: number;
  /** Virtual-time cap in ms (Infinity without one). */
  capMs: number;
  warmupRequests: number;
}

export function resolveRun(config: RunConfig, trace: TraceRows | null, traceLabel = 'trace'): ResolvedRun {
  const role = config.engine.workers.aggregated;
  // The loader guarantees at least one block for a limited pool; 0 stands for unlimited here.
  const blocks = kvBlocksPerRank(role) ?? 0;
  const contextLimit = config.engine.context_length === 'max' ? Infinity : config.engine.context_length;
  const kvLimit = blocks > 0 ? blocks * role.kv_cache.block_size + 1 : Infinity;

  const tok = config.engine.tokenization;
  const tokenization: FifoStage | null =
    tok && (tok.base_ms > 0 || tok.per_input_us > 0)
      ? { serversPerWorker: tok.workers, baseMs: tok.base_ms, perTokenMs: tok.per_input_us / 1e3, chunkOutputs: 0 }
      : null;
  const detok = config.engine.detokenization;
  const detokenization: FifoStage | null =
    detok && (detok.base_ms > 0 || detok.per_output_us > 0)
      ? {
          serversPerWorker: detok.workers,
          baseMs: detok.base_ms,
          perTokenMs: detok.per_output_us / 1e3,
          chunkOutputs: detok.chunk_outputs ?? 0,
        }
      : null;
  const overhead = config.traffic.load.response_overhead;
  const responseOverhead =
    overhead && (overhead.base_ms > 0 || overhead.per_output_token_us > 0)
      ? { baseMs: overhead.base_ms, perOutputTokenMs: overhead.per_output_token_us / 1e3 }
      : null;

  const loadConfig = config.traffic.load;
  let load: ResolvedLoad;
  let loadUnit: number;
  switch (loadConfig.type) {
    case 'concurrency':
      load = { kind: 'closed', concurrency: loadConfig.concurrency, rampUpMs: loadConfig.ramp_up_ms };
      loadUnit = loadConfig.concurrency;
      break;
    case 'poisson':
      load = { kind: 'poisson', ratePerSecond: loadConfig.requests_per_second, seed: loadConfig.seed };
      loadUnit = loadConfig.requests_per_second;
      break;
    case 'constant_rate':
      load = { kind: 'constant', ratePerSecond: loadConfig.requests_per_second };
      loadUnit = loadConfig.requests_per_second;
      break;
    case 'trace_timestamps':
      load = { kind: 'timestamps', speedup: loadConfig.speedup };
      loadUnit = NaN;
      break;
  }

  const src = config.traffic.source;
  let source: ResolvedSource;
  switch (src.type) {
    case 'synthetic':
      source = {
        kind: 'synthetic',
        inputTokens: src.input_tokens,
        outputTokens: src.output_tokens,
        rangeRatio: src.random_range_ratio,
        seed: src.seed,
      };
      break;
    case 'synthetic-session':
      source = {
        kind: 'session',
        turns: src.turns,
        newInputTokens: src.new_input_tokens_per_turn,
        outputTokens: src.output_tokens_per_turn,
        interTurnDelayMs: src.inter_turn_delay_ms,
      };
      break;
    case 'trace':
      if (trace === null) throw new Error('traffic.source: a trace source needs the trace rows');
      source = { kind: 'trace', trace, label: traceLabel };
      break;
  }

  const stop = config.traffic.stop;
  let maxRequests = Infinity;
  let capMs = Infinity;
  if ('requests' in stop) maxRequests = stop.requests;
  else if ('requests_per_load_unit' in stop) maxRequests = Math.max(1, Math.round(stop.requests_per_load_unit * loadUnit));
  else capMs = stop.max_virtual_time_seconds * 1000;
  if (source.kind === 'trace') maxRequests = Math.min(maxRequests, source.trace.rows);

  return {
    replicas: role.parallelism.replicas,
    ranksPerWorker: role.parallelism.attention_data,
    gpusPerWorker: role.parallelism.tensor * role.parallelism.attention_data,
    maxBatchedTokens: role.scheduler.max_batched_tokens,
    maxSequences: role.scheduler.max_sequences,
    chunkedPrefill: role.scheduler.chunked_prefill,
    blockSize: role.kv_cache.block_size,
    kvBlocksPerRank: blocks,
    lengthLimit: Math.min(contextLimit, kvLimit),
    passTime: createPassTime(role.timing),
    timingType: role.timing.type,
    tokenization,
    detokenization,
    responseOverhead,
    load,
    source,
    maxRequests,
    capMs,
    warmupRequests: config.report.warmup_requests,
  };
}
