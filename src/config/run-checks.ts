/**
 * Checks a config must pass before servesim runs it for a user (the CLI's replay, every sweep
 * point, a calibration's base config), on top of the schema and the cross-field rules:
 *
 * - Engine start-up checks: configs a real vLLM would refuse to start with, or would start with
 *   only to reject every request. Each mirrors a check of vLLM's, named in its message and in
 *   docs/config.md ("Checks servesim shares with vLLM").
 * - Resource checks: a run whose request count has no bound a person would wait for (a time cap
 *   far beyond what the load can fill), or whose memory would not fit this machine, is refused
 *   before anything is allocated, with the figure and the knob to change.
 *
 * The replay core itself (`parseRunConfig`, the core tests) does not apply them: it can simulate a
 * config vLLM would refuse (a pool that rejects every request is a defined outcome of the model).
 */
import { createRequire } from 'node:module';
import type * as Os from 'node:os';
import type * as V8 from 'node:v8';
import { frontendOf, rooflineOf } from './deployment.js';
import { kvBlocksPerRank, sessionTurnPromptTokens } from './kv-capacity.js';
import { linearTimingSpec } from './linear-timing.js';
import { MAX_REQUESTS, formatBytes, formatCount } from './limits.js';
import type { RuleViolation } from './rules.js';
import { stopRequests } from './stop.js';
import { NORMAL_LENGTH_SPAN } from '../core/traffic.js';
import type { RunConfig, SourceConfig, SyntheticSourceConfig } from './types.js';
import { entryRole, workerRoles, type WorkerRole, type WorkerRoleName } from './roles.js';

/** Prompt and output lengths a synthetic source draws from: [min, max] of each. */
interface Lengths {
  promptMin: number;
  promptMax: number;
  outputMin: number;
  outputMax: number;
  /** Mean output tokens of a request. */
  outputMean: number;
}

/**
 * Prefix-cache keys of one dataset entry: blocks of the longest prompt and output an entry can
 * draw, and one more, so that no two entries share a key.
 */
export function blocksPerDatasetEntry(source: SyntheticSourceConfig, blockSize: number): number {
  const lengths = syntheticLengths(source) as Lengths;
  return Math.ceil((lengths.promptMax + lengths.outputMax) / blockSize) + 1;
}

function syntheticLengths(source: SourceConfig): Lengths | null {
  if (source.type === 'synthetic') {
    const r = source.random_range_ratio;
    // Normal spreads (AIPerf's stddev): within [1, floor(mean + 4 sd)] (core/traffic.ts).
    const normal = (mean: number, sd: number) => ({
      min: Math.max(1, Math.floor(mean - NORMAL_LENGTH_SPAN * sd)),
      max: Math.floor(mean + NORMAL_LENGTH_SPAN * sd),
    });
    const inSd = source.input_tokens_stddev ?? 0;
    const outSd = source.output_tokens_stddev ?? 0;
    const prompt =
      inSd > 0
        ? normal(source.input_tokens, inSd)
        : { min: r >= 1 ? source.input_tokens : Math.max(1, Math.floor(source.input_tokens * r)), max: source.input_tokens };
    const output =
      outSd > 0
        ? normal(source.output_tokens, outSd)
        : { min: r >= 1 ? source.output_tokens : Math.floor(source.output_tokens * r), max: source.output_tokens };
    return {
      promptMin: prompt.min,
      promptMax: prompt.max,
      outputMin: output.min,
      outputMax: output.max,
      outputMean: outSd > 0 ? source.output_tokens : (output.min + source.output_tokens) / 2,
    };
  }
  if (source.type === 'synthetic-session') {
    return {
      promptMin: sessionTurnPromptTokens(source, 1),
      promptMax: sessionTurnPromptTokens(source, source.turns),
      outputMin: source.output_tokens_per_turn,
      outputMax: source.output_tokens_per_turn,
      outputMean: source.output_tokens_per_turn,
    };
  }
  return null;
}

/** KV tokens per attention-DP rank of a role (the smallest over the roles when none is named), or null for unlimited pools. */
function kvTokensPerRank(config: RunConfig, name?: WorkerRoleName): number | null {
  let least: number | null = null;
  for (const role of workerRoles(config.engine)) {
    if (name !== undefined && role.name !== name) continue;
    const blocks = kvBlocksPerRank(config.engine, role.config);
    if (blocks !== null) least = Math.min(least ?? Infinity, blocks * role.config.kv_cache.block_size);
  }
  return least;
}

/**
 * The longest prompt that is not rejected: a prompt of `lengthLimit` tokens or more is rejected
 * (docs/replay-model.md), with L = min(context_length, KV tokens per rank + 1).
 */
export function lengthLimitOf(config: RunConfig): number {
  const kv = kvTokensPerRank(config);
  const context = config.engine.context_length === 'max' ? Infinity : config.engine.context_length;
  return Math.min(context, kv === null ? Infinity : kv + 1);
}

/**
 * Configs vLLM would not start with, or would start with only to reject every request
 * (vllm/config/scheduler.py `SchedulerConfig.verify_max_model_len`, vllm/v1/core/kv_cache_utils.py
 * `check_enough_kv_cache_memory`, vllm/v1/engine/processor.py `Processor._validate_model_input`).
 */
export function checkEngineStartup(config: RunConfig): RuleViolation[] {
  const violations: RuleViolation[] = [];
  const context = config.engine.context_length;
  const lengths = syntheticLengths(config.traffic.source);
  for (const role of workerRoles(config.engine)) violations.push(...roleStartup(config, role));

  // Every request rejected: vLLM refuses each prompt longer than max_model_len as it arrives.
  if (lengths !== null && context !== 'max' && lengths.promptMin >= context) {
    const what = config.traffic.source.type === 'synthetic-session' ? "every session's first turn" : 'every prompt';
    violations.push({
      path: 'engine.context_length',
      reason:
        `is ${formatCount(context)}, but ${what} has at least ${formatCount(lengths.promptMin)} tokens: every request would be rejected` +
        ' (vLLM rejects a prompt that does not fit max_model_len). Raise engine.context_length or shorten the prompts',
    });
  }
  return violations;
}

/** The start-up refusals of one worker role's engine. */
function roleStartup(config: RunConfig, { name, path: ROLE, config: role }: WorkerRole): RuleViolation[] {
  const violations: RuleViolation[] = [];
  const { max_batched_tokens: budget, max_sequences: sequences, chunked_prefill: chunked } = role.scheduler;
  const context = config.engine.context_length;
  // The two start-up refusals below are vLLM's.
  const vllm = (role.scheduler.policy ?? config.engine.backend) === 'vllm';

  if (vllm && budget < sequences) {
    violations.push({
      path: `${ROLE}.scheduler.max_batched_tokens`,
      reason:
        `is ${budget}, below max_sequences (${sequences}); vLLM refuses to start when max_num_batched_tokens is below max_num_seqs.` +
        ` Raise it to at least ${sequences} or lower max_sequences`,
    });
  }
  if (vllm && !chunked && context !== 'max' && budget < context) {
    violations.push({
      path: `${ROLE}.scheduler.max_batched_tokens`,
      reason:
        `is ${budget}, below context_length (${context}) with chunked_prefill: false; vLLM refuses to start when` +
        ` max_num_batched_tokens is below max_model_len without chunked prefill. Raise it, lower context_length or turn chunked_prefill on`,
    });
  }

  const kv = kvTokensPerRank(config, name);
  const lengths = syntheticLengths(config.traffic.source);
  if (kv !== null && kv >= 1) {
    const pool = `holds ${formatCount(kv)} tokens per rank (${formatCount(kv / role.kv_cache.block_size)} blocks of ${role.kv_cache.block_size})`;
    if (context !== 'max' && kv < context) {
      violations.push({
        path: `${ROLE}.kv_cache.capacity`,
        reason:
          `${pool}, fewer than context_length (${formatCount(context)}); vLLM refuses to start when the KV cache cannot hold` +
          ` one request of max_model_len. Give the pool more blocks or lower engine.context_length`,
      });
    } else if (context === 'max' && lengths !== null && kv < lengths.promptMax + lengths.outputMax) {
      violations.push({
        path: `${ROLE}.kv_cache.capacity`,
        reason:
          `${pool}, fewer than one request of the source (${formatCount(lengths.promptMax)} prompt + ${formatCount(lengths.outputMax)} output tokens);` +
          ' vLLM refuses to start when the KV cache cannot hold one request of max_model_len. Give the pool more blocks,' +
          ' or set engine.context_length to what it can hold',
      });
    }
  }
  return violations;
}

/** The trace's rows as the checks need them (src/core/run.ts `TraceRows`). */
export interface TraceLengths {
  rows: number;
  inputLength: Int32Array;
  outputLength: Int32Array;
  /** Row r's hash ids are the offsets' [r, r + 1) range (the prefix cache's keys); absent: none. */
  hashIdOffsets?: Int32Array;
}

/**
 * A trace every row of which would be rejected (its prompt reaches the length limit), as one
 * reason naming `engine.context_length` or the KV pool; null when some row can be served.
 */
export function everyTraceRowRejected(config: RunConfig, trace: TraceLengths, limit = trace.rows): string | null {
  const lengthLimit = lengthLimitOf(config);
  if (!Number.isFinite(lengthLimit)) return null;
  const n = Math.min(limit, trace.rows);
  let shortest = Infinity;
  for (let row = 0; row < n; row++) if (trace.inputLength[row] < shortest) shortest = trace.inputLength[row];
  if (shortest < lengthLimit) return null;
  const byContext = config.engine.context_length !== 'max' && config.engine.context_length === lengthLimit;
  return byContext
    ? `every row's input_length is at least engine.context_length (${formatCount(lengthLimit)}; the shortest is ${formatCount(shortest)}): every request would be rejected. Raise engine.context_length`
    : `every row's input_length (the shortest is ${formatCount(shortest)}) fills the KV pool of ${formatCount(lengthLimit - 1)} tokens per rank: every request would be rejected. Give ${entryRole(config.engine).path}.kv_cache.capacity more blocks`;
}

// ---- resources --------------------------------------------------------------------------

/**
 * Bytes the replay keeps per request in typed-array columns (src/core/request-table.ts): nine
 * Float64 stamps, fourteen Int32 columns, two Uint8.
 */
export const TABLE_BYTES_PER_REQUEST = 9 * 8 + 14 * 4 + 2;
/**
 * JS heap per request with per-request records (`--per-request`, `--aiperf`): the record object
 * and its two token-time arrays (measured: test/run-checks.test.ts).
 */
export const RECORD_BYTES_PER_REQUEST = 700;
/** ... and per output token: two doubles, in arrays grown by pushing. */
export const RECORD_BYTES_PER_TOKEN = 2 * 8 * 1.5;
/** With `--aiperf`: the JSONL line of a request, per output token (its inter-chunk latency as text). */
export const AIPERF_LINE_BYTES_PER_TOKEN = 24;
/** Token gaps kept for the inter-token statistics before they are folded into a sketch (src/core/token-gaps.ts). */
const GAPS_KEPT = 16_000_000;

/** What a run would send and keep. */
export interface RunEstimate {
  /** Requests sent at most (an expected figure for a Poisson load under a time cap). */
  requests: number;
  /** How the request count was found, for messages. */
  requestsFrom: string;
  /** Mean output tokens per request. */
  outputTokensPerRequest: number;
  /** Typed-array memory of the replay (outside the JS heap). */
  tableBytes: number;
  /** JS-heap memory of per-request records, 0 without them. */
  recordBytes: number;
  /** Memory of the prefix cache and the kv_aware router's books (mostly typed arrays), 0 without a prefix cache. */
  prefixCacheBytes: number;
}

/** Per request, in every run with a prefix cache: its keyed runs (4 bytes and an 8-byte reference), and the kv_aware router's count (8). */
export const PREFIX_BYTES_PER_REQUEST = 20;

/**
 * The prefix cache's memory (core/prefix-cache.ts, core/router.ts), an upper bound: each rank
 * indexes the key groups it has seen (4 bytes per group) and keeps a slab of one int per key
 * for each group it caches (no more groups than its pool has blocks); kv_aware routing counts
 * each group's active requests per rank. Groups are a trace's hash ids (the rows replayed), or
 * a session's stream of blocks. 0 when nothing is shared (prefix caching off, synthetic lengths,
 * a trace without hash ids).
 */
function prefixCacheBytes(config: RunConfig, trace: TraceLengths | null, requests: number): number {
  const role = entryRole(config.engine).config;
  const kv = role.kv_cache;
  const source = config.traffic.source;
  if (kv.prefix_caching === false || !Number.isFinite(requests)) return 0;
  const ranks = role.parallelism.replicas * role.parallelism.attention_data;
  const blocks = kvBlocksPerRank(config.engine, role);
  let groups: number;
  let keysPerGroup: number;
  /** Ranks one group's keys can be cached on, with an unlimited pool. */
  let ranksPerGroup: number;
  if (source.type === 'trace') {
    if (trace === null || trace.hashIdOffsets === undefined) return 0;
    groups = trace.hashIdOffsets[Math.min(trace.rows, requests)];
    keysPerGroup = Math.ceil(source.block_size / kv.block_size);
    ranksPerGroup = ranks;
  } else if (source.type === 'synthetic-session') {
    // A session is a group; a closed loop's slots run whole sessions one after the other.
    const load = config.traffic.load;
    groups = load.type === 'concurrency' ? Math.min(requests, Math.ceil(requests / source.turns) + load.concurrency) : requests;
    keysPerGroup = Math.ceil((source.turns * (source.new_input_tokens_per_turn + source.output_tokens_per_turn)) / kv.block_size) + 1;
    ranksPerGroup = Math.min(ranks, source.turns);
  } else if (source.type === 'synthetic' && source.dataset_entries !== undefined) {
    // A dataset entry is a group, on any rank its requests were placed on.
    groups = Math.min(source.dataset_entries, requests);
    keysPerGroup = blocksPerDatasetEntry(source, kv.block_size);
    ranksPerGroup = ranks;
  } else {
    return 0;
  }
  const slabs = blocks === null ? ranksPerGroup * groups : ranks * Math.min(groups, blocks);
  // Fixed: a trace's group index and the router's counts. Grown by doubling as requests come
  // (the per-request books, the slabs, a session's group index): up to twice what is used, and
  // the old and the new arrays live together once.
  const fixed = source.type === 'trace' ? ranks * groups * 4 * (config.engine.router?.type === 'kv_aware' ? 2 : 1) : 0;
  const grown = requests * PREFIX_BYTES_PER_REQUEST + slabs * keysPerGroup * 4 + (source.type === 'trace' ? 0 : ranks * groups * 4);
  return fixed + 3 * grown;
}

/** A lower bound of one pass's duration and of the engine time of one request, ms. */
function engineMinMs(config: RunConfig, prompt: number, output: number): number {
  const role = entryRole(config.engine).config;
  const timing = role.timing;
  const passes = Math.max(1, output);
  switch (timing.type) {
    case 'fixed':
      // One pass carries its prefill; each output token needs a pass that emits it.
      return timing.prefill_ms + output * timing.decode_ms;
    case 'polynomial':
      // The fixed part of a prefill pass, and at least 1 ms for every decoding pass.
      return 16.50142 + Math.max(0, output - 1);
    case 'linear': {
      // A pass takes at least max(R, F) (its overlap is at most 1): summed over the request's
      // passes, at least the larger of the sums. Its prefill chunks add up to `prompt` tokens
      // and prompt^2 / 2 pairs; each of its decoding passes has >= 1 request and >= prompt + 1
      // context tokens.
      const decodes = Math.max(0, output - 1);
      const ms = linearTimingSpec(timing);
      const rest = passes * ms.baseMs + decodes * (ms.decodeRequestMs + ms.decodeKvTokenMs * (prompt + 1));
      const prefill = prompt * ms.prefillTokenMs + ((prompt * prompt) / 2) * ms.prefillPairMs;
      return Math.max(rest, prefill);
    }
    case 'roofline': {
      // Every pass with work reads the dense and output-projection weights once and pays the
      // collectives' latency and the host's pass cost (core/roofline.ts), whatever else it does.
      const c = rooflineOf(config.engine, role);
      return passes * (c.gemmWeightMs + c.lmHeadWeightMs + c.commFixedMs + c.passOverheadMs);
    }
    case 'profile':
      // The tables are read with the run, after these checks: no bound before (a closed loop under
      // a time cap alone is then refused as unbounded; give a request count).
      return 0;
  }
}

/**
 * A lower bound of the time from one send on a closed-loop slot to the next, ms: the frontend,
 * tokenization, the engine, the last detokenization job and the client's response overhead, for the shortest
 * request the source draws.
 */
function minCycleMs(config: RunConfig, prompt: number, output: number): number {
  const frontend = frontendOf(config);
  let ms = engineMinMs(config, prompt, output) + frontend.baseMs + (frontend.perInputUs * prompt) / 1e3;
  const tok = config.engine.tokenization;
  if (tok) ms += tok.base_ms + (tok.per_input_us * prompt) / 1e3;
  const detok = config.engine.detokenization;
  if (detok && output > 0) ms += detok.base_ms + detok.per_output_us / 1e3;
  const overhead = config.traffic.load.response_overhead;
  if (overhead) ms += overhead.base_ms + (overhead.per_output_token_us * output) / 1e3;
  return ms;
}

/**
 * How many requests a run sends at most: the stop's count, or under a time cap an upper bound
 * from the load (open loop: the rate x the cap, with six standard deviations for Poisson; closed
 * loop: slots x cap / the shortest possible cycle of a slot). Trace rows bound a trace source.
 */
function requestsBound(config: RunConfig, traceRows: number | null): { requests: number; from: string } {
  const { load, stop } = config.traffic;
  let requests: number;
  let from: string;
  const counted = stopRequests(config.traffic);
  if (counted !== null) {
    requests = counted;
    from = 'requests' in stop ? 'traffic.stop.requests' : 'traffic.stop.requests_per_load_unit';
  } else if (!('max_virtual_time_seconds' in stop)) {
    throw new Error('traffic.stop: requests_per_load_unit needs a load with a load unit (the config rules refuse trace_timestamps)');
  } else {
    const capMs = stop.max_virtual_time_seconds * 1000;
    from = 'traffic.stop.max_virtual_time_seconds';
    if (load.type === 'poisson') {
      const mean = load.requests_per_second * stop.max_virtual_time_seconds;
      requests = Math.ceil(mean + 6 * Math.sqrt(mean)) + 1;
    } else if (load.type === 'constant_rate') {
      // Arrivals at 0, 1/rate, ... up to the cap (the ceiling: their times are sums that can round down).
      requests = Math.ceil(load.requests_per_second * stop.max_virtual_time_seconds) + 1;
    } else if (load.type === 'concurrency' && traceRows === null) {
      const lengths = syntheticLengths(config.traffic.source) as Lengths;
      const limit = lengthLimitOf(config);
      // Prompts at or above the length limit are rejected at once and take no engine time: the
      // slot draws again, so each served request costs 1 / (1 - p) sends on average.
      const served = Math.min(lengths.promptMax, limit - 1);
      const rejectedShare = served >= lengths.promptMin ? (lengths.promptMax - served) / (lengths.promptMax - lengths.promptMin + 1) : 1;
      const cycle = minCycleMs(config, lengths.promptMin, lengths.outputMin);
      requests = rejectedShare >= 1 || cycle <= 0 ? Infinity : (load.concurrency * (capMs / cycle + 1)) / (1 - rejectedShare);
    } else {
      requests = Infinity;
    }
  }
  if (traceRows !== null) requests = Math.min(requests, traceRows);
  return { requests, from };
}

/** The run's request count, tokens and memory; `perRequest` with per-request records kept (and `aiperf` with their JSONL). */
export function estimateRun(
  config: RunConfig,
  options: { trace?: TraceLengths | null; perRequest?: boolean; aiperf?: boolean } = {},
): RunEstimate {
  const trace = options.trace ?? null;
  const { requests, from } = requestsBound(config, trace === null ? null : trace.rows);
  let outputMean: number;
  if (trace !== null) {
    let sum = 0;
    const n = Math.min(trace.rows, Number.isFinite(requests) ? requests : trace.rows);
    for (let row = 0; row < n; row++) sum += trace.outputLength[row];
    outputMean = n > 0 ? sum / n : 0;
  } else {
    outputMean = (syntheticLengths(config.traffic.source) as Lengths).outputMean;
  }
  const role = entryRole(config.engine).config;
  const ranks = role.parallelism.replicas * role.parallelism.attention_data;
  const detokServers = config.engine.detokenization?.workers ?? 0;
  const tokServers = config.engine.tokenization?.workers ?? 0;
  const capped = 'max_virtual_time_seconds' in config.traffic.stop;
  const tokens = requests * outputMean;
  // A capped run's table grows by doubling: the old and the new columns live together once.
  const tableBytes =
    requests * TABLE_BYTES_PER_REQUEST * (capped ? 3 : 1) +
    Math.min(tokens, GAPS_KEPT) * (capped ? 12 : 8) * 2 +
    ranks * role.scheduler.max_sequences * 4 * 2 +
    role.parallelism.replicas * role.scheduler.max_sequences * role.parallelism.attention_data * 4 * (1 + detokServers) +
    role.parallelism.replicas * tokServers * 8;
  const perRequest = options.perRequest === true || options.aiperf === true;
  const recordBytes = perRequest
    ? requests * RECORD_BYTES_PER_REQUEST +
      tokens * RECORD_BYTES_PER_TOKEN +
      (options.aiperf === true ? tokens * AIPERF_LINE_BYTES_PER_TOKEN + requests * 600 : 0)
    : 0;
  return {
    requests,
    requestsFrom: from,
    outputTokensPerRequest: outputMean,
    tableBytes,
    recordBytes,
    prefixCacheBytes: prefixCacheBytes(config, trace, requests),
  };
}

/** Memory this process may use: outside the JS heap (the machine, or its container), and the JS heap's limit. */
export interface MemoryBudget {
  offHeapBytes: number;
  heapBytes: number;
}

let budgetCache: { budget: MemoryBudget; at: number } | null = null;

/** Read at most once a second: a sweep checks every point, and reading the machine's memory costs a file read. */
export function memoryBudget(): MemoryBudget {
  const now = Date.now();
  if (budgetCache !== null && now - budgetCache.at < 1000) return budgetCache.budget;
  // Loaded here, not with this module: they cost a replay's start-up several milliseconds, and a small run never asks (budgetFloor).
  const load = createRequire(import.meta.url);
  const { freemem, totalmem } = load('node:os') as typeof Os;
  const { getHeapStatistics } = load('node:v8') as typeof V8;
  const constrained = process.constrainedMemory?.() ?? 0;
  const machine = constrained > 0 && constrained < totalmem() ? constrained : totalmem();
  // Room for what else runs: 80 % of the machine, and no more than is free plus what caches hold.
  const offHeapBytes = Math.min(0.8 * machine, Math.max(freemem(), 0.5 * machine));
  budgetCache = { budget: { offHeapBytes, heapBytes: 0.8 * getHeapStatistics().heap_size_limit }, at: now };
  return budgetCache.budget;
}

/**
 * A budget no larger than `memoryBudget()`'s, known without asking the machine: this process
 * already holds its resident memory (so the machine, or its container, has at least that, and
 * `offHeapBytes` is at least half the machine's) and its JS heap (within the heap's limit). A run
 * that fits in it fits in the real one, so the real one is read only for a larger run.
 */
export function budgetFloor(): MemoryBudget {
  const { rss, heapTotal } = process.memoryUsage();
  return { offHeapBytes: 0.5 * rss, heapBytes: 0.8 * heapTotal };
}

export interface ResourceCheckOptions {
  trace?: TraceLengths | null;
  /** The option that keeps per-request records (`--per-request`, `--aiperf`), when one does. */
  perRequestFlag?: string;
  aiperf?: boolean;
  budget?: MemoryBudget;
}

/** A run whose request count has no bound, or whose memory would not fit, as violations naming the knob. */
export function checkRunResources(config: RunConfig, options: ResourceCheckOptions = {}): RuleViolation[] {
  // A trace source is bounded by its rows: checked once they are read.
  if (config.traffic.source.type === 'trace' && options.trace == null) return [];
  const estimate = estimateRun(config, {
    trace: options.trace,
    perRequest: options.perRequestFlag !== undefined,
    aiperf: options.aiperf,
  });
  const { requests, requestsFrom } = estimate;
  if (requests > MAX_REQUESTS) {
    const how = Number.isFinite(requests)
      ? `up to ${formatCount(Math.round(requests))} requests`
      : 'an unbounded number of requests (every request could end at the instant it is sent)';
    return [
      {
        path: requestsFrom,
        reason:
          `lets the load send ${how} before the run stops, more than the limit of ${formatCount(MAX_REQUESTS)};` +
          ' lower it, or stop by traffic.stop.requests',
      },
    ];
  }
  const needs = (budget: MemoryBudget): boolean =>
    estimate.tableBytes + estimate.prefixCacheBytes > budget.offHeapBytes ||
    (options.perRequestFlag !== undefined && estimate.recordBytes > budget.heapBytes);
  const floor = budgetFloor();
  const budget = options.budget ?? (needs(floor) ? memoryBudget() : floor);
  const shown = () =>
    `${formatCount(Math.round(requests))} requests of ${formatCount(Math.round(estimate.outputTokensPerRequest))} output tokens`;
  if (estimate.tableBytes > budget.offHeapBytes) {
    return [
      {
        path: requestsFrom,
        reason:
          `${shown()} need about ${formatBytes(estimate.tableBytes)} of memory, more than the ${formatBytes(budget.offHeapBytes)} this machine can give;` +
          ' lower it (a sweep over smaller runs gives the same curves)',
      },
    ];
  }
  if (estimate.tableBytes + estimate.prefixCacheBytes > budget.offHeapBytes) {
    const role = entryRole(config.engine).config;
    const ranks = role.parallelism.replicas * role.parallelism.attention_data;
    return [
      {
        path: `${entryRole(config.engine).path}.kv_cache.prefix_caching`,
        reason:
          `the prefix cache of ${formatCount(ranks)} rank${ranks === 1 ? '' : 's'} over ${shown()} needs about ${formatBytes(estimate.prefixCacheBytes)} of memory` +
          ` on top of the replay's ${formatBytes(estimate.tableBytes)}, more than the ${formatBytes(budget.offHeapBytes)} this machine can give;` +
          ' turn it off (prefix_caching: false), or replay fewer requests or ranks',
      },
    ];
  }
  if (options.perRequestFlag !== undefined && estimate.recordBytes > budget.heapBytes) {
    return [
      {
        path: requestsFrom,
        reason:
          `${shown()} with ${options.perRequestFlag} keep every token's times in memory: about ${formatBytes(estimate.recordBytes)},` +
          ` more than the ${formatBytes(budget.heapBytes)} of JS heap this process may use; lower it, drop ${options.perRequestFlag},` +
          ' or raise the heap (NODE_OPTIONS=--max-old-space-size=MB)',
      },
    ];
  }
  return [];
}
