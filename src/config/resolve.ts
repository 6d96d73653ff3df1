/**
 * Compiles a validated RunConfig into the run description the replay core runs on
 * (`ResolvedRun`, docs/replay-model.md): unit conversions done once, zero-cost client stages
 * switched off (docs/client-path.md: all-zero costs are exactly the same as leaving the block out), stop
 * limits made integers, the timing provider's coefficients in the loop's units. The core never
 * sees YAML or files: a trace arrives already read, as columns.
 */
import type {
  FifoStage,
  PolicySpec,
  PrefixKeySpec,
  PrioritySpec,
  ResolvedLoad,
  ResolvedPool,
  ResolvedRun,
  ResolvedSource,
  RouterSpec,
  TraceRows,
} from '../core/run.js';
import type { ProfileTiming, TimingSpec } from '../core/timing/timing-spec.js';
import { frontendOf, kvTransferOf, rooflineOf } from './deployment.js';
import { kvBlocksPerRank } from './kv-capacity.js';
import { linearTimingSpec } from './linear-timing.js';
import { stopRequests } from './stop.js';
import type { EngineConfig, RouterConfig, RunConfig, TimingConfig, WorkerRoleConfig } from './types.js';
import { workerRoles, type WorkerRole } from './roles.js';
import { blocksPerDatasetEntry } from './run-checks.js';

/** A trace as read, with the hash ids the prefix cache keys come from (absent: nothing is shared). */
export interface TraceInput extends TraceRows {
  /** Row r's hash ids are hashIds[hashIdOffsets[r] .. hashIdOffsets[r + 1]). */
  hashIdOffsets?: Int32Array;
  hashIds?: Int32Array;
  /** Row r's priority (vLLM's priority scheduling), or null when the trace has none. */
  priority?: Int32Array | null;
}

/**
 * The timing provider of a config in the core's units (ms per unit). Roofline timing needs the
 * engine and worker role it times (the catalog's model and GPU, the precision, the parallelism);
 * profile timing its tables, read from the file it names (`io/read-profile-timing.ts`).
 */
export function timingSpec(
  config: TimingConfig,
  context?: { engine: EngineConfig; role: WorkerRoleConfig; profile?: ProfileTiming | null },
): TimingSpec {
  switch (config.type) {
    case 'profile':
      if (!context?.profile) throw new Error('profile timing needs its tables, read from the file it names');
      return context.profile;
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

/**
 * SGLang's new_token_ratio constants (sgl-project/sglang `python/sglang/srt/environ.py`:
 * SGLANG_INIT_NEW_TOKEN_RATIO 0.7, SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR 0.14,
 * SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS 600, SGLANG_RETRACT_DECODE_STEPS 20;
 * `schedule_policy.py`: CLIP_MAX_NEW_TOKENS 4096).
 */
export const SGLANG_CONSTANTS = {
  initNewTokenRatio: 0.7,
  minNewTokenRatioFactor: 0.14,
  newTokenRatioDecaySteps: 600,
  retractDecodeSteps: 20,
  clipMaxNewTokens: 4096,
} as const;

/** The batch policy of a worker role: its `scheduler.policy`, else `engine.backend`, with its options. */
export function policySpec(config: RunConfig, role: WorkerRoleConfig, trace: TraceInput | null): PolicySpec {
  const scheduler = role.scheduler;
  const kind = scheduler.policy ?? config.engine.backend;
  switch (kind) {
    case 'vllm': {
      if (scheduler.schedule_policy !== 'priority') return { kind: 'vllm', order: 'fcfs', priorities: null };
      const column = trace !== null && config.traffic.source.type === 'trace' ? (trace.priority ?? null) : null;
      const priorities: PrioritySpec =
        column !== null ? { kind: 'values', values: column } : { kind: 'hash', levels: scheduler.priority_levels ?? 1, seed: 0 };
      return { kind: 'vllm', order: 'priority', priorities };
    }
    case 'sglang': {
      const c = SGLANG_CONSTANTS;
      const init = Math.min(c.initNewTokenRatio * (scheduler.schedule_conservativeness ?? 1), 1);
      const min = Math.min(init * c.minNewTokenRatioFactor, 1);
      return {
        kind: 'sglang',
        order: scheduler.schedule_policy === 'lpm' ? 'lpm' : 'fcfs',
        initNewTokenRatio: init,
        minNewTokenRatio: min,
        newTokenRatioDecay: (init - min) / c.newTokenRatioDecaySteps,
        retractDecodeSteps: c.retractDecodeSteps,
        clipMaxNewTokens: c.clipMaxNewTokens,
      };
    }
    case 'trtllm':
      return { kind: 'trtllm', capacity: scheduler.capacity_policy ?? 'guaranteed_no_evict' };
  }
}

function routerSpec(config: RouterConfig | undefined): RouterSpec {
  if (config === undefined || config.type === 'round_robin') return { type: 'round_robin' };
  if (config.type === 'least_loaded') return { type: 'least_loaded' };
  return { type: 'kv_aware', overlapScoreWeight: config.overlap_score_weight };
}

/**
 * Group ids of a trace's blocks, cached per trace (a sweep resolves one trace for many points).
 * A group is a (hash id, position in the row, tokens of the row in the block) triple: the
 * position and the token count make a hash id that a trace reused elsewhere, or a partial last
 * block, unable to match a block with other tokens.
 */
const traceGroups = new WeakMap<Int32Array, { traceBlockTokens: number; groups: Int32Array; groupCount: number }>();

function groupsOf(trace: TraceInput & { hashIdOffsets: Int32Array; hashIds: Int32Array }, traceBlockTokens: number) {
  const cached = traceGroups.get(trace.hashIds);
  if (cached !== undefined && cached.traceBlockTokens === traceBlockTokens) return cached;
  const { hashIdOffsets, hashIds, inputLength } = trace;
  // A hash id almost always comes with one position and token count: the first group of each id
  // is found by a map lookup on the id alone, and any other variant is chained behind it.
  const firstOf = new Map<number, number>();
  let position = new Int32Array(1024);
  let tokensOf = new Int32Array(1024);
  let nextVariant = new Int32Array(1024);
  let count = 0;
  const groups = new Int32Array(hashIds.length);
  for (let row = 0; row < trace.rows; row++) {
    for (let at = hashIdOffsets[row], k = 0; at < hashIdOffsets[row + 1]; at++, k++) {
      const tokens = Math.min(traceBlockTokens, inputLength[row] - k * traceBlockTokens);
      const first = firstOf.get(hashIds[at]);
      let group = first ?? -1;
      let last = -1;
      while (group >= 0 && (position[group] !== k || tokensOf[group] !== tokens)) {
        last = group;
        group = nextVariant[group];
      }
      if (group < 0) {
        group = count++;
        if (group === position.length) {
          position = grownInt(position);
          tokensOf = grownInt(tokensOf);
          nextVariant = grownInt(nextVariant);
        }
        position[group] = k;
        tokensOf[group] = tokens;
        nextVariant[group] = -1;
        if (last >= 0) nextVariant[last] = group;
        else firstOf.set(hashIds[at], group);
      }
      groups[at] = group;
    }
  }
  const result = { traceBlockTokens, groups, groupCount: count };
  traceGroups.set(hashIds, result);
  return result;
}

function grownInt(a: Int32Array): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

/**
 * Block keys of the prefix cache: from a trace's hash ids, or from the session a synthetic turn
 * belongs to; null when prefix caching is off or the prompts share nothing (synthetic lengths,
 * a trace without hash ids).
 */
function prefixKeys(config: RunConfig, role: WorkerRoleConfig, trace: TraceInput | null): PrefixKeySpec | null {
  const kv = role.kv_cache;
  if (kv.prefix_caching === false) return null;
  const src = config.traffic.source;
  if (src.type === 'synthetic-session') {
    // Engine blocks of one session's stream: its prompts and outputs, every turn.
    const streamTokens = src.turns * (src.new_input_tokens_per_turn + src.output_tokens_per_turn);
    return { kind: 'session', blocksPerSession: Math.ceil(streamTokens / kv.block_size) + 1 };
  }
  if (src.type === 'synthetic' && src.dataset_entries !== undefined) {
    // A dataset entry's prompt is the same tokens each time it is sent: the entry is the session.
    return { kind: 'session', blocksPerSession: blocksPerDatasetEntry(src, kv.block_size) };
  }
  if (src.type === 'trace' && trace !== null && trace.hashIdOffsets !== undefined && trace.hashIds !== undefined) {
    const { groups, groupCount } = groupsOf({ ...trace, hashIdOffsets: trace.hashIdOffsets, hashIds: trace.hashIds }, src.block_size);
    return { kind: 'trace', traceBlockTokens: src.block_size, rowOffsets: trace.hashIdOffsets, groups, groupCount };
  }
  return null;
}

/** The pool of engine workers of one worker role. */
function resolvePool(
  config: RunConfig,
  { name, config: role }: WorkerRole,
  trace: TraceInput | null,
  profile: ProfileTiming | null,
): ResolvedPool {
  // The loader guarantees at least one block for a limited pool; 0 stands for unlimited here.
  const blocks = kvBlocksPerRank(config.engine, role) ?? 0;
  const contextLimit = config.engine.context_length === 'max' ? Infinity : config.engine.context_length;
  const kvLimit = blocks > 0 ? blocks * role.kv_cache.block_size + 1 : Infinity;
  return {
    role: name,
    replicas: role.parallelism.replicas,
    ranksPerWorker: role.parallelism.attention_data,
    gpusPerWorker: role.parallelism.tensor * role.parallelism.attention_data,
    limits: {
      maxBatchedTokens: role.scheduler.max_batched_tokens,
      maxSequences: role.scheduler.max_sequences,
      chunkedPrefill: role.scheduler.chunked_prefill,
      lengthLimit: Math.min(contextLimit, kvLimit),
    },
    // A decode worker's requests bring their KV with them: its store caches no prefixes, and
    // its router places each on the rank with the fewest requests (those in transfer included).
    kv: {
      blockSize: role.kv_cache.block_size,
      blocksPerRank: blocks,
      prefixCache: name === 'decode' ? null : prefixKeys(config, role, trace),
    },
    timing: timingSpec(role.timing, { engine: config.engine, role, profile }),
    policy: policySpec(config, role, trace),
    router: name === 'decode' ? { type: 'least_loaded' } : routerSpec(config.engine.router),
  };
}

export function resolveRun(config: RunConfig, trace: TraceInput | null, profile: ProfileTiming | null = null): ResolvedRun {
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
    overhead && (overhead.base_ms > 0 || overhead.per_output_token_us > 0 || (overhead.per_inflight_us ?? 0) > 0)
      ? {
          baseMs: overhead.base_ms,
          perOutputTokenMs: overhead.per_output_token_us / 1e3,
          perInflightMs: (overhead.per_inflight_us ?? 0) / 1e3,
        }
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
        inputStddev: src.input_tokens_stddev ?? 0,
        outputStddev: src.output_tokens_stddev ?? 0,
        seed: src.seed,
        entries: src.dataset_entries ?? 0,
        sampling: src.dataset_sampling ?? 'shuffle',
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
    pools: workerRoles(config.engine).map((role) => resolvePool(config, role, trace, profile)),
    kvTransfer: kvTransferOf(config.engine).transfer,
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
