/**
 * Turns a finished simulation into the report of spec replay.md §7, with AIPerf's metric
 * definitions: per valid request (completed, at least one output token, not warmup) from the
 * client receive times; statistics after the run, in a fixed order.
 */
import { METRIC_UNITS, type MetricStats, type MetricTag, type RequestRecord, type ReplaySummary } from './report-types.js';
import { Status } from './request-table.js';
import type { ResolvedRun } from './resolve.js';
import type { SimulationResult } from './simulation.js';
import { summarize, type Stats } from './stats.js';

export type CoreSummary = Omit<ReplaySummary, 'simulator' | 'config'> & {
  engine: { passes: number; preemptions: number; virtual_end_ms: number };
};

function withUnit(tag: MetricTag, stats: Stats & { approximate?: boolean }): MetricStats {
  const { approximate, ...rest } = stats;
  const out: MetricStats = { unit: METRIC_UNITS[tag], ...rest };
  if (approximate) out.approximate = true;
  return out;
}

export function buildSummary(run: ResolvedRun, result: SimulationResult): CoreSummary {
  const t = result.table;
  const n = result.requestCount;
  const ttft: number[] = [];
  const ttst: number[] = [];
  const latency: number[] = [];
  const itl: number[] = [];
  const perUser: number[] = [];
  const e2e: number[] = [];
  const isl: number[] = [];
  const osl: number[] = [];
  let errors = 0;
  let incomplete = 0;
  let firstSentMs = Infinity;
  let lastReceivedMs = -Infinity;
  let inputTokens = 0;
  let outputTokens = 0;
  let tokenizationSum = 0;
  let queueSum = 0;
  let prefillSum = 0;
  let detokSum = 0;
  for (let id = 0; id < n; id++) {
    const sent = t.sentMs[id];
    if (sent !== sent || t.isWarmup[id] === 1) continue;
    const status = t.status[id];
    if (status === Status.Rejected) {
      errors++;
      continue;
    }
    if (status !== Status.Completed) {
      incomplete++;
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
    inputTokens += t.prompt[id];
    outputTokens += count;
    if (sent < firstSentMs) firstSentMs = sent;
    if (t.lastReceivedMs[id] > lastReceivedMs) lastReceivedMs = t.lastReceivedMs[id];
    tokenizationSum += t.tokenizedMs[id] - sent;
    queueSum += t.firstScheduledMs[id] - t.tokenizedMs[id];
    prefillSum += t.firstEmittedMs[id] - t.firstScheduledMs[id];
    detokSum += t.firstReceivedMs[id] - t.firstEmittedMs[id];
  }
  const valid = ttft.length;
  const metrics: CoreSummary['metrics'] = {};
  const add = (tag: MetricTag, values: number[]) => {
    if (values.length > 0) metrics[tag] = withUnit(tag, summarize(values));
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
  const workerSeconds = (run.replicas * result.lastResponseMs) / 1000;
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
      gpu_hours: (workerSeconds * run.gpusPerWorker) / 3600,
    },
    ttft_stages: {
      mean_tokenization_ms: valid > 0 ? tokenizationSum / valid : 0,
      mean_queue_ms: valid > 0 ? queueSum / valid : 0,
      mean_prefill_ms: valid > 0 ? prefillSum / valid : 0,
      mean_detokenization_ms: valid > 0 ? detokSum / valid : 0,
    },
    engine: { passes: result.passCount, preemptions: result.preemptionCount, virtual_end_ms: result.endMs },
  };
}

const orNull = (x: number) => (x === x ? x : null);

/** One record per request that was sent, in id order (requests.jsonl). */
export function buildRequestRecords(result: SimulationResult): RequestRecord[] {
  const t = result.table;
  const records: RequestRecord[] = [];
  for (let id = 0; id < result.requestCount; id++) {
    const sent = t.sentMs[id];
    if (sent !== sent) continue;
    const status = t.status[id] === Status.Completed ? 'completed' : t.status[id] === Status.Rejected ? 'rejected' : 'incomplete';
    const count = t.received[id];
    const valid = status === 'completed' && count > 0;
    const ttft = valid ? t.firstReceivedMs[id] - sent : null;
    const latency = valid ? t.lastReceivedMs[id] - sent : null;
    const itl = valid && count >= 2 ? ((latency as number) - (ttft as number)) / (count - 1) : null;
    records.push({
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
      token_ms: result.tokenReceivedMs ? (result.tokenReceivedMs[id] ?? []) : [],
      token_emitted_ms: result.tokenEmittedMs ? (result.tokenEmittedMs[id] ?? []) : [],
      response_received_ms: orNull(t.responseReceivedMs[id]),
      response_acted_ms: orNull(t.actedMs[id]),
      input_tokens: t.prompt[id],
      output_tokens: count,
      time_to_first_token: ttft,
      time_to_second_token: valid && count >= 2 ? t.secondReceivedMs[id] - t.firstReceivedMs[id] : null,
      request_latency: latency,
      inter_token_latency: itl,
      output_token_throughput_per_user: itl !== null && itl > 0 ? 1000 / itl : null,
      e2e_output_token_throughput: latency !== null && latency > 0 ? count / (latency / 1000) : null,
    });
  }
  return records;
}
