/**
 * The run description the replay core runs on: plain numbers, strings and typed arrays, no
 * functions and no class instances, so that it can be posted to a pool thread as it is
 * (structured clone). The config layer builds it (`config/resolve.ts`): units converted once,
 * zero-cost client stages switched off, stop limits made integers, a trace already read into
 * columns. The core builds its behaviour from it once per run (timing, KV store, batch policy,
 * router, load generator), each chosen once so that the loop stays monomorphic.
 */
import type { TimingSpec } from './timing/timing-spec.js';

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
  | {
      kind: 'synthetic';
      inputTokens: number;
      outputTokens: number;
      rangeRatio: number;
      /** Normal spreads of the lengths (AIPerf's stddev); 0 = none. */
      inputStddev: number;
      outputStddev: number;
      seed: number;
      /**
       * Distinct prompts the requests repeat (AIPerf's dataset entries), 0 = every request its
       * own; a request's session id is its entry, so the prefix cache's `session` keys share a
       * repeated prompt's blocks.
       */
      entries: number;
      sampling: 'shuffle' | 'sequential' | 'random';
    }
  | { kind: 'session'; turns: number; newInputTokens: number; outputTokens: number; interTurnDelayMs: number }
  | { kind: 'trace'; trace: TraceRows };

/** How a request reaching the scheduler is placed on an attention-DP rank (router.ts). */
export type RouterSpec = { type: 'round_robin' } | { type: 'least_loaded' } | { type: 'kv_aware'; overlapScoreWeight: number };

/**
 * Keys of the KV blocks the prefix cache can share (prefix-cache.ts), or null when nothing is
 * shared (prefix caching off, or a source whose prompts share nothing).
 *
 * `trace`: each trace block (one hash id, `traceBlockTokens` tokens) has a dense group id; equal
 * ids mean an equal hash id at the same position with as many of the row's tokens in it. An
 * engine block's key is derived from the group of the trace block holding its last token and
 * its index among the engine blocks ending in that trace block (arithmetic, no hashing).
 *
 * `session`: a synthetic session's turns are prefixes of one token stream, so engine block j of
 * any turn of session s is the same block: key s x `blocksPerSession` + j.
 */
export type PrefixKeySpec =
  | {
      kind: 'trace';
      traceBlockTokens: number;
      /** Row r's trace blocks are groups[rowOffsets[r] .. rowOffsets[r + 1]). */
      rowOffsets: Int32Array;
      groups: Int32Array;
      groupCount: number;
    }
  | { kind: 'session'; blocksPerSession: number };

/**
 * The scheduler a rank runs (policies/batch-policy.ts), chosen by `engine.backend` or
 * `scheduler.policy`. Numbers only; the policy is built once per run.
 */
export type PolicySpec =
  | { kind: 'vllm'; order: 'fcfs' | 'priority'; priorities: PrioritySpec | null }
  | {
      kind: 'sglang';
      order: 'fcfs' | 'lpm';
      /** new_token_ratio: its start (and value after an idle rank), its floor, and the step it decays by per decode pass. */
      initNewTokenRatio: number;
      minNewTokenRatio: number;
      newTokenRatioDecay: number;
      /** Tokens per remaining request a retraction frees room for (SGLang's retract_decode_steps). */
      retractDecodeSteps: number;
      /** Expected outputs are clipped to this many tokens in the reservation (CLIP_MAX_NEW_TOKENS). */
      clipMaxNewTokens: number;
    }
  | { kind: 'trtllm'; capacity: 'guaranteed_no_evict' | 'max_utilization' };

/**
 * Request priorities of vLLM's priority policy (lower value first): a trace's `priority`
 * column (row index = request id), or `levels` values spread over the requests by a hash of
 * the id and `seed` (the same for a given id whatever the send order).
 */
export type PrioritySpec = { kind: 'values'; values: Int32Array } | { kind: 'hash'; levels: number; seed: number };

/**
 * What a pool's workers may run in one pass, per attention-DP rank (docs/replay-model.md, "Engine").
 */
export interface PoolLimits {
  maxBatchedTokens: number;
  maxSequences: number;
  chunkedPrefill: boolean;
  /**
   * L = min(context_length, KV tokens per rank + 1). A prompt >= L is rejected; a request
   * finishes once prompt + generated reaches L (docs/replay-model.md, "Engine"). Infinity when unlimited.
   */
  lengthLimit: number;
}

/** The KV store of each rank of a pool (kv-store.ts, prefix-cache.ts). */
export interface PoolKv {
  blockSize: number;
  /** KV blocks per attention-DP rank; 0 = unlimited. */
  blocksPerRank: number;
  /** Block keys of the prefix cache; null = no prefix cache. */
  prefixCache: PrefixKeySpec | null;
}

/**
 * The role of a pool's workers. `aggregated`: every worker prefills and decodes the requests it
 * is given, from the scheduler's `waiting` queue to the last token. `prefill`: a worker prefills
 * and emits the first token, then hands the request and its KV over to a `decode` worker
 * (`ResolvedRun.kvTransfer`), which generates the rest; a decode worker also prefills the
 * prompts short enough to stay local (`KvTransfer.maxLocalPrefillTokens`).
 */
export type PoolRole = 'aggregated' | 'prefill' | 'decode';

/**
 * The KV transfer from a prefill worker to a decode worker (docs/replay-model.md,
 * "Disaggregated prefill and decode"): a transfer of n prompt tokens takes
 * latencyMs + n x bytesPerToken / bytesPerMs, first in first out on the link between the two
 * workers.
 */
export interface KvTransfer {
  latencyMs: number;
  /** Bytes of one token's KV a link carries. */
  bytesPerToken: number;
  /** Bandwidth of one link, bytes per ms. */
  bytesPerMs: number;
  /** Prompts of at most this many tokens are prefilled on the decode worker (0: none). */
  maxLocalPrefillTokens: number;
  /**
   * The client's first token is the decode worker's: the prefill worker sends no token, and the
   * decode worker's first pass with the request recomputes the last prompt token and samples it.
   * False: the first token leaves the prefill worker at the end of the prefill.
   */
  firstTokenOnDecode: boolean;
}

/**
 * One pool of engine workers (pool.ts): identical workers of one role, each with
 * `ranksPerWorker` attention-DP ranks running in lockstep, and everything its ranks are built
 * from. Requests reach a pool through its router.
 */
export interface ResolvedPool {
  role: PoolRole;
  /** Engine workers (replicas) in the pool. */
  replicas: number;
  ranksPerWorker: number;
  gpusPerWorker: number;
  limits: PoolLimits;
  kv: PoolKv;
  timing: TimingSpec;
  /** The batch policy of every rank of the pool. */
  policy: PolicySpec;
  router: RouterSpec;
}

export interface ResolvedRun {
  /**
   * The engine's worker pools: one `aggregated` pool, or a `prefill` pool then a `decode` pool.
   * Requests enter the first; the tokenization servers are its workers', and every worker that
   * emits outputs has its detokenization servers.
   */
  pools: ResolvedPool[];
  /** With a prefill and a decode pool: the KV transfer between them; null for aggregated workers. */
  kvTransfer: KvTransfer | null;
  /**
   * Time from a send to the request reaching the server (client, HTTP, API server): ms, ms per
   * prompt token, and ms per other request in flight at the send; 0 = none.
   */
  frontendBaseMs: number;
  frontendPerTokenMs: number;
  frontendPerInflightMs: number;
  tokenization: FifoStage | null;
  detokenization: FifoStage | null;
  /** Response overhead in ms: base, per output token, per other request in flight when the response ends; null = none. */
  responseOverhead: { baseMs: number; perOutputTokenMs: number; perInflightMs: number } | null;
  load: ResolvedLoad;
  source: ResolvedSource;
  /** Requests to send at most (Infinity under a time cap alone). */
  maxRequests: number;
  /** Virtual-time cap in ms (Infinity without one). */
  capMs: number;
  warmupRequests: number;
}

/**
 * Prompt tokens of turn `turn` (1-based) of a synthetic session: every turn resends the whole
 * conversation so far, so turn k carries k new inputs and the k-1 earlier outputs.
 */
export function sessionTurnPromptTokens(newInputTokens: number, outputTokens: number, turn: number): number {
  return turn * newInputTokens + (turn - 1) * outputTokens;
}
