/**
 * Turns a finished simulation into the report of docs/replay-model.md, "Report", with AIPerf's metric
 * definitions: per valid request (completed, at least one output token, not warmup) from the
 * client receive times; statistics after the run, in a fixed order.
 */
import {
  METRIC_UNITS,
  type MetricStats,
  type MetricTag,
  type PrefixCacheStats,
  type RequestRecord,
  type ReplaySummary,
} from './report-types.js';
import { Status, type RequestTable } from './request-table.js';
import type { ResolvedRun } from './run.js';
import type { SimulationResult } from './simulation.js';
import { summarizeValues, type Stats } from './stats.js';

export type CoreSummary = Omit<ReplaySummary, 'simulator' | 'config' | 'deployment'> & {
  engine: { passes: number; preemptions: number; virtual_end_ms: number };
};

function withUnit(tag: MetricTag, stats: Stats & { approximate?: boolean }): MetricStats {
  const { approximate, ...rest } = stats;
  const out: MetricStats = { unit: METRIC_UNITS[tag], ...rest };
  if (approximate) out.approximate = true;
  return out;
}

/** One metric's values, at most one per request, collected straight into a Float64Array. */
class Values {
  readonly data: Float64Array;
  length = 0;

  constructor(capacity: number) {
    this.data = new Float64Array(capacity);
  }

  push(x: number): void {
    this.data[this.length++] = x;
  }
}

/** What the per-request pass of `buildSummary` collects. */
class RequestMetrics {
  readonly ttft: Values;
  readonly ttst: Values;
  readonly latency: Values;
  readonly itl: Values;
  readonly perUser: Values;
  readonly e2e: Values;
  readonly isl: Values;
  readonly osl: Values;
  errors = 0;
  incomplete = 0;
  firstSentMs = Infinity;
  lastReceivedMs = -Infinity;
  inputTokens = 0;
  outputTokens = 0;
  frontendSum = 0;
  tokenizationSum = 0;
  queueSum = 0;
  prefillSum = 0;
  detokSum = 0;
  kvTransferSum = 0;
  decodeSum = 0;
  transfers = 0;
  linkWaitSum = 0;
  transferSum = 0;

  constructor(n: number) {
    this.ttft = new Values(n);
    this.ttst = new Values(n);
    this.latency = new Values(n);
    this.itl = new Values(n);
    this.perUser = new Values(n);
    this.e2e = new Values(n);
    this.isl = new Values(n);
    this.osl = new Values(n);
  }
}

/**
 * The per-request pass over the request table: the one loop of the summary, in a function of its
 * own with the same argument shapes on every run, so a thread optimizes it once. (Inside the
 * summary's object-building code, whose object shapes vary with the run's metrics, its
 * optimized code was thrown away and rebuilt point after point of a sweep.)
 */
function collectRequestMetrics(t: SimulationResult['table'], n: number): RequestMetrics {
  const m = new RequestMetrics(n);
  const { ttft, ttst, latency, itl, perUser, e2e, isl, osl } = m;
  for (let id = 0; id < n; id++) {
    const sent = t.sentMs[id];
    if (sent !== sent || t.isWarmup[id] === 1) continue;
    const status = t.status[id];
    if (status === Status.Rejected) {
      m.errors++;
      continue;
    }
    if (status !== Status.Completed) {
      m.incomplete++;
      continue;
    }
    const count = t.received[id];
    if (count === 0) continue;
    const first = t.firstReceivedMs[id] - sent;
    const total = t.lastReceivedMs[id] - sent;
    ttft.push(first);
    latency.push(total);
    if (total > 0) e2e.push(count / (total / 1000));
    if (count >= 2) {
      ttst.push(t.secondReceivedMs[id] - t.firstReceivedMs[id]);
      const gap = (total - first) / (count - 1);
      itl.push(gap);
      if (gap > 0) perUser.push(1000 / gap);
    }
    isl.push(t.prompt[id]);
    osl.push(count);
    m.inputTokens += t.prompt[id];
    m.outputTokens += count;
    if (sent < m.firstSentMs) m.firstSentMs = sent;
    if (t.lastReceivedMs[id] > m.lastReceivedMs) m.lastReceivedMs = t.lastReceivedMs[id];
    m.frontendSum += t.serverMs[id] - sent;
    m.tokenizationSum += t.tokenizedMs[id] - t.serverMs[id];
    m.queueSum += t.firstScheduledMs[id] - t.tokenizedMs[id];
    m.detokSum += t.firstReceivedMs[id] - t.firstEmittedMs[id];
    const handedOff = t.handedOffMs[id];
    if (handedOff === handedOff) {
      const transferEnd = t.transferEndMs[id];
      m.transfers++;
      m.linkWaitSum += t.transferStartMs[id] - handedOff;
      m.transferSum += transferEnd - t.transferStartMs[id];
      if (t.firstEmittedMs[id] > handedOff) {
        // The first token is the decode worker's: the transfer and the decode worker's wait and
        // first pass are stages of TTFT.
        m.prefillSum += handedOff - t.firstScheduledMs[id];
        m.kvTransferSum += transferEnd - handedOff;
        m.decodeSum += t.firstEmittedMs[id] - transferEnd;
        continue;
      }
    }
    m.prefillSum += t.firstEmittedMs[id] - t.firstScheduledMs[id];
  }
  // Nothing but the return after the loop: a thread's optimized code for this function is
  // compiled mid-loop, and a statement after the loop that had not run yet would throw it away.
  return m;
}

export function buildSummary(run: ResolvedRun, result: SimulationResult): CoreSummary {
  const m = collectRequestMetrics(result.table, result.requestCount);
  const {
    ttft,
    ttst,
    latency,
    itl,
    perUser,
    e2e,
    isl,
    osl,
    errors,
    incomplete,
    firstSentMs,
    lastReceivedMs,
    inputTokens,
    outputTokens,
    frontendSum,
    tokenizationSum,
    queueSum,
    prefillSum,
    detokSum,
  } = m;
  const valid = ttft.length;
  const metrics: CoreSummary['metrics'] = {};
  const add = (tag: MetricTag, values: Values) => {
    if (values.length > 0) metrics[tag] = withUnit(tag, summarizeValues(values.data.subarray(0, values.length)));
  };
  add('time_to_first_token', ttft);
  add('time_to_second_token', ttst);
  add('request_latency', latency);
  add('inter_token_latency', itl);
  add('output_token_throughput_per_user', perUser);
  add('e2e_output_token_throughput', e2e);
  const gapStats = result.gaps.stats();
  if (gapStats.count > 0) metrics.token_gap = withUnit('token_gap', gapStats);
  add('input_sequence_length', isl);
  add('output_sequence_length', osl);

  const durationS = valid > 0 ? (lastReceivedMs - firstSentMs) / 1000 : 0;
  const per = (x: number) => (durationS > 0 ? x / durationS : 0);
  // Every worker of every pool is held for the run, from the start to the last response.
  let workerSeconds = 0;
  let gpuSeconds = 0;
  for (const pool of run.pools) {
    const seconds = (pool.replicas * result.lastResponseMs) / 1000;
    workerSeconds += seconds;
    gpuSeconds += seconds * pool.gpusPerWorker;
  }
  return {
    metrics,
    run: {
      request_count: valid,
      error_request_count: errors,
      incomplete_request_count: incomplete,
      benchmark_duration_s: durationS,
      request_throughput: per(valid),
      output_token_throughput: per(outputTokens),
      input_token_throughput: per(inputTokens),
      total_token_throughput: per(inputTokens + outputTokens),
      worker_seconds: workerSeconds,
      gpu_hours: gpuSeconds / 3600,
    },
    ttft_stages: {
      mean_frontend_ms: valid > 0 ? frontendSum / valid : 0,
      mean_tokenization_ms: valid > 0 ? tokenizationSum / valid : 0,
      mean_queue_ms: valid > 0 ? queueSum / valid : 0,
      mean_prefill_ms: valid > 0 ? prefillSum / valid : 0,
      mean_detokenization_ms: valid > 0 ? detokSum / valid : 0,
      ...(run.kvTransfer === null
        ? {}
        : { mean_kv_transfer_ms: valid > 0 ? m.kvTransferSum / valid : 0, mean_decode_ms: valid > 0 ? m.decodeSum / valid : 0 }),
    },
    ...(result.prefixCache === null ? {} : { prefix_cache: prefixCacheStats(result.prefixCache) }),
    ...(run.kvTransfer === null ? {} : disaggregationStats(run, result, m)),
    engine: { passes: result.passCount, preemptions: result.preemptionCount, virtual_end_ms: result.endMs },
  };
}

/** The per-pool and KV-transfer blocks of a disaggregated run's summary. */
function disaggregationStats(run: ResolvedRun, result: SimulationResult, m: RequestMetrics): Pick<CoreSummary, 'pools' | 'kv_transfer'> {
  const pools = run.pools.map((pool, p) => {
    const { passes, busyMs } = result.poolPasses[p];
    const held = pool.replicas * result.lastResponseMs;
    return {
      role: pool.role,
      workers: pool.replicas,
      gpus: pool.replicas * pool.gpusPerWorker,
      passes,
      busy_share: held > 0 ? Math.min(1, busyMs / held) : 0,
    };
  });
  const n = m.transfers;
  return {
    pools,
    kv_transfer: { transfers: n, mean_link_wait_ms: n > 0 ? m.linkWaitSum / n : 0, mean_transfer_ms: n > 0 ? m.transferSum / n : 0 },
  };
}

function prefixCacheStats(totals: NonNullable<SimulationResult['prefixCache']>): PrefixCacheStats {
  const { queriedTokens, hitTokens, evictions } = totals;
  return { hit_rate: queriedTokens > 0 ? hitTokens / queriedTokens : 0, queries: queriedTokens, hits: hitTokens, evictions };
}

const orNull = (x: number) => (x === x ? x : null);

/** One record per request that was sent, in id order (requests.jsonl). */
export function buildRequestRecords(result: SimulationResult): RequestRecord[] {
  const t = result.table;
  const records: RequestRecord[] = [];
  const withCache = result.prefixCache !== null;
  for (let id = 0; id < result.requestCount; id++) {
    if (t.sentMs[id] !== t.sentMs[id]) continue;
    const tokenMs = result.tokenReceivedMs ? (result.tokenReceivedMs[id] ?? []) : [];
    const emittedMs = result.tokenEmittedMs ? (result.tokenEmittedMs[id] ?? []) : [];
    records.push(requestRecordOf(t, id, tokenMs, emittedMs, withCache));
  }
  return records;
}

/** One sent request's line of `requests.jsonl` (also written by a live engine's `--record`). */
export function requestRecordOf(t: RequestTable, id: number, tokenMs: number[], emittedMs: number[], withCache: boolean): RequestRecord {
  const sent = t.sentMs[id];
  const status = t.status[id] === Status.Completed ? 'completed' : t.status[id] === Status.Rejected ? 'rejected' : 'incomplete';
  const count = t.received[id];
  const valid = status === 'completed' && count > 0;
  const ttft = valid ? t.firstReceivedMs[id] - sent : null;
  const latency = valid ? t.lastReceivedMs[id] - sent : null;
  const itl = valid && count >= 2 ? ((latency as number) - (ttft as number)) / (count - 1) : null;
  return {
    request_id: id,
    session_id: t.sessionId[id],
    turn_index: t.turnIndex[id],
    status,
    warmup: t.isWarmup[id] === 1,
    sent_ms: sent,
    tokenized_ms: orNull(t.tokenizedMs[id]),
    queued_ms: orNull(t.tokenizedMs[id]),
    first_scheduled_ms: orNull(t.firstScheduledMs[id]),
    first_token_emitted_ms: orNull(t.firstEmittedMs[id]),
    token_ms: tokenMs,
    token_emitted_ms: emittedMs,
    response_received_ms: orNull(t.responseReceivedMs[id]),
    response_acted_ms: orNull(t.actedMs[id]),
    input_tokens: t.prompt[id],
    ...(withCache ? { cached_tokens: t.cachedTokens[id] } : {}),
    output_tokens: count,
    time_to_first_token: ttft,
    time_to_second_token: valid && count >= 2 ? t.secondReceivedMs[id] - t.firstReceivedMs[id] : null,
    request_latency: latency,
    inter_token_latency: itl,
    output_token_throughput_per_user: itl !== null && itl > 0 ? 1000 / itl : null,
    e2e_output_token_throughput: latency !== null && latency > 0 ? count / (latency / 1000) : null,
  };
}
