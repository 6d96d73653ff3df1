/**
 * Compiles a validated RunConfig into the run description the replay core runs on
 * (`ResolvedRun`, docs/replay-model.md): unit conversions done once, zero-cost client stages
 * switched off (docs/client-path.md: all-zero costs are exactly the same as leaving the block out), stop
 * limits made integers, the timing provider's coefficients in the loop's units. The core never
 * sees YAML or files: a trace arrives already read, as columns.
 */
import type { FifoStage, ResolvedLoad, ResolvedRun, ResolvedSource, TraceRows } from '../core/run.js';
import type { TimingSpec } from '../core/timing.js';
import { frontendOf, rooflineOf } from './deployment.js';
import { kvBlocksPerRank } from './kv-capacity.js';
import { linearTimingSpec } from './linear-timing.js';
import { stopRequests } from './stop.js';
import type { EngineConfig, RunConfig, TimingConfig, WorkerRoleConfig } from './types.js';

/**
 * The timing provider of a config in the core's units (ms per unit). Roofline timing needs the
 * engine and worker role it times (the catalog's model and GPU, the precision, the parallelism).
 */
export function timingSpec(config: TimingConfig, context?: { engine: EngineConfig; role: WorkerRoleConfig }): TimingSpec {
  switch (config.type) {
    case 'roofline':
      if (context === undefined) throw new Error('roofline timing needs the engine it times');
      return { type: 'roofline', ...rooflineOf(context.engine, context.role) };
    case 'fixed':
      return { type: 'fixed', prefillMs: config.prefill_ms, decodeMs: config.decode_ms };
    case 'polynomial':
      return { type: 'polynomial' };
    case 'linear':
      return linearTimingSpec(config);
  }
}

export function resolveRun(config: RunConfig, trace: TraceRows | null): ResolvedRun {
  const role = config.engine.workers.aggregated;
  // The loader guarantees at least one block for a limited pool; 0 stands for unlimited here.
  const blocks = kvBlocksPerRank(config.engine, role) ?? 0;
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
    overhead && (overhead.base_ms > 0 || overhead.per_output_token_us > 0 || overhead.per_inflight_us > 0)
      ? { baseMs: overhead.base_ms, perOutputTokenMs: overhead.per_output_token_us / 1e3, perInflightMs: overhead.per_inflight_us / 1e3 }
      : null;

  const frontend = frontendOf(config);
  const loadConfig = config.traffic.load;
  let load: ResolvedLoad;
  switch (loadConfig.type) {
    case 'concurrency':
      load = { kind: 'closed', concurrency: loadConfig.concurrency, rampUpMs: loadConfig.ramp_up_ms };
      break;
    case 'poisson':
      load = { kind: 'poisson', ratePerSecond: loadConfig.requests_per_second, seed: loadConfig.seed };
      break;
    case 'constant_rate':
      load = { kind: 'constant', ratePerSecond: loadConfig.requests_per_second };
      break;
    case 'trace_timestamps':
      load = { kind: 'timestamps', speedup: loadConfig.speedup };
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
      source = { kind: 'trace', trace: traceColumns(trace) };
      break;
  }

  const stop = config.traffic.stop;
  let maxRequests = Infinity;
  let capMs = Infinity;
  if ('max_virtual_time_seconds' in stop) capMs = stop.max_virtual_time_seconds * 1000;
  else maxRequests = stopRequests(config.traffic) ?? Infinity;
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
    timing: timingSpec(role.timing, { engine: config.engine, role }),
    router: { type: 'round_robin' },
    frontendBaseMs: frontend.baseMs,
    frontendPerTokenMs: frontend.perInputUs / 1e3,
    frontendPerInflightMs: frontend.perInflightUs / 1e3,
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

/** The columns the core reads, so that a posted run carries nothing else of the trace. */
function traceColumns(trace: TraceRows): TraceRows {
  const { rows, timestampMs, inputLength, outputLength, sessionId, delayMs } = trace;
  return { rows, timestampMs, inputLength, outputLength, sessionId, delayMs };
}
