/**
 * Writes a simulated run in AIPerf's newest export layout (docs/aiperf-files.md, "Writing simulated runs"),
 * so that anything that reads AIPerf output reads servesim's too:
 * `profile_export_aiperf.json`, `profile_export_aiperf.csv` and `profile_export.jsonl`.
 *
 * Per-request values come from the request records with AIPerf's definitions (docs/aiperf-files.md);
 * warmup and incomplete requests are left out, as AIPerf leaves out warmup and unfinished
 * requests; a rejected request is a failed record (`error`, `error_isl`, error-adjusted
 * rows). Virtual time is ms from 0; timestamps are `AIPERF_EPOCH_NS + round(ms * 1e6)`
 * nanoseconds, so the same run writes the same bytes.
 */
import { join } from 'node:path';
import { stopRequests } from '../config/stop.js';
import type { RunConfig } from '../config/types.js';
import { fnv1a32 } from '../core/fnv.js';
import type { ReplaySummary, RequestRecord } from '../core/report-types.js';
import { aggregateAiperfRequests } from './read-aiperf-stats.js';
import { getMetricInfo, headerCellOf } from './read-aiperf-tags.js';
import { CSV_ROW_STATS, type AiperfMetric, type AiperfStat } from './read-aiperf-types.js';
import { checkOutputDir, writeOutputFiles, type OutputContent } from './write-output.js';

/** Virtual time 0 (the first request sent) as a wall-clock timestamp: 2023-11-14T22:13:20Z. */
export const AIPERF_EPOCH_NS = 1_700_000_000_000_000_000n;
/** The AIPerf layout written: 0.12's schema, with `count`/`sum` and error-adjusted rows. */
export const AIPERF_SCHEMA_VERSION = '1.4';
export const AIPERF_FILES = {
  json: 'profile_export_aiperf.json',
  csv: 'profile_export_aiperf.csv',
  jsonl: 'profile_export.jsonl',
} as const;
/** What a simulated run puts in `aiperf_version`, so no tool takes it for a measured run. */
export const SIMULATED_AIPERF_VERSION = 'servesim-0.1.0';

/** The error a rejected request gets: what vLLM answers a prompt it cannot hold. */
export const REJECTION_ERROR = {
  code: 400,
  type: 'BadRequestError',
  message: 'rejected by the engine: the prompt does not fit the context length or the KV cache',
} as const;

const JSON_STATS: readonly AiperfStat[] = [
  'avg',
  'p1',
  'p5',
  'p10',
  'p25',
  'p50',
  'p75',
  'p90',
  'p95',
  'p99',
  'min',
  'max',
  'std',
  'count',
  'sum',
];

/** Record metrics in the order AIPerf 0.12 registers them (the JSON's key order). */
const JSON_ORDER = [
  'request_throughput',
  'request_latency',
  'request_count',
  'time_to_first_token',
  'time_to_second_token',
  'inter_token_latency',
  'output_token_throughput',
  'output_token_throughput_per_user',
  'output_sequence_length',
  'input_sequence_length',
  'inter_chunk_latency',
  'benchmark_duration',
  'total_isl',
  'total_osl',
  'error_request_count',
  'error_isl',
  'total_error_isl',
  'prefill_throughput_per_user',
  'decode_duration',
  'e2e_output_token_throughput',
  'completed_request_count',
  'request_error_rate',
  'total_token_throughput',
  'input_token_throughput',
  'adj_time_to_first_token',
  'adj_request_latency',
  'adj_decode_duration',
  'adj_inter_token_latency',
];

/** One exported metric: statistics (`single` keeps its value in `avg`), as the reader returns them. */
export type ExportedMetric = AiperfMetric;

export interface AiperfExport {
  metrics: Record<string, ExportedMetric>;
  jsonText: string;
  csvText: string;
  /**
   * The JSONL's lines (each ending in a newline), written one after another: a long run's JSONL
   * is larger than one string can hold. Undefined when the run was replayed without per-request
   * records.
   */
  jsonlLines: string[] | undefined;
}

/** The stimulus part of AIPerf's artifact folder name for this load (docs/aiperf-files.md). */
export function aiperfStimulus(config: RunConfig): string {
  const load = config.traffic.load;
  switch (load.type) {
    case 'concurrency':
      return `concurrency${load.concurrency}`;
    case 'poisson':
    case 'constant_rate':
      return `request_rate${load.requests_per_second}`;
    case 'trace_timestamps':
      return 'fixed_schedule';
  }
}

/** `servesim-<model, "/" -> "_">-concurrency8`, as AIPerf names its artifact folders. */
export function aiperfFolderName(config: RunConfig): string {
  const model = config.engine.model.replace(/[/\\]/g, '_').replace(/\s+/g, '_');
  return `servesim-${model}-${aiperfStimulus(config)}`;
}

/**
 * Python's `'%.2f' % x`: the exact binary value rounded to two decimals, ties (x = k/8 with
 * k odd) to even. `toFixed` rounds those ties up, so they are corrected here.
 */
export function formatFixed2(value: number): string {
  if (!Number.isFinite(value)) return '';
  const magnitude = Math.abs(value);
  let text = magnitude.toFixed(2);
  const eighths = magnitude * 8;
  if (Number.isInteger(eighths) && eighths % 2 === 1 && magnitude < 1e15) {
    const hundredths = Math.round(magnitude * 100);
    const even = hundredths % 2 === 0 ? hundredths : hundredths - 1;
    text = (even / 100).toFixed(2);
  }
  return value < 0 && Number(text) !== 0 ? `-${text}` : text;
}

interface ExportedRequest {
  record: RequestRecord;
  isValid: boolean;
  /** Per-request metric values by tag; lists for inter_chunk_latency. */
  metrics: Record<string, number | number[]>;
  startMs: number;
  endMs: number;
}

/** AIPerf's per-request metrics of one simulated request (docs/aiperf-files.md). */
function exportRequest(record: RequestRecord): ExportedRequest | null {
  if (record.warmup || record.status === 'incomplete') return null;
  const startMs = record.sent_ms;
  if (record.status === 'rejected') {
    return {
      record,
      isValid: false,
      metrics: { error_isl: record.input_tokens },
      startMs,
      endMs: record.response_received_ms ?? startMs,
    };
  }
  const ttft = record.time_to_first_token;
  const latency = record.request_latency;
  if (record.output_tokens === 0 || ttft === null || latency === null) return null;
  const metrics: Record<string, number | number[]> = {};
  metrics.input_sequence_length = record.input_tokens;
  metrics.time_to_first_token = ttft;
  if (record.time_to_second_token !== null) metrics.time_to_second_token = record.time_to_second_token;
  metrics.request_latency = latency;
  metrics.output_sequence_length = record.output_tokens;
  if (record.output_tokens >= 2 && record.token_ms.length === record.output_tokens) {
    const gaps: number[] = [];
    for (let k = 1; k < record.token_ms.length; k++) gaps.push(record.token_ms[k] - record.token_ms[k - 1]);
    metrics.inter_chunk_latency = gaps;
  }
  if (record.inter_token_latency !== null) metrics.inter_token_latency = record.inter_token_latency;
  metrics.decode_duration = latency - ttft;
  if (record.output_token_throughput_per_user !== null) metrics.output_token_throughput_per_user = record.output_token_throughput_per_user;
  if (record.e2e_output_token_throughput !== null) metrics.e2e_output_token_throughput = record.e2e_output_token_throughput;
  if (ttft > 0) metrics.prefill_throughput_per_user = record.input_tokens / (ttft / 1000);
  return { record, isValid: true, metrics, startMs, endMs: startMs + latency };
}

function unitOf(tag: string): string {
  return getMetricInfo(tag)?.unit ?? '';
}

function single(metrics: Record<string, ExportedMetric>, tag: string, value: number): void {
  metrics[tag] = { tag, unit: unitOf(tag), kind: 'single', stats: { avg: value } };
}

/**
 * Metrics of the run from its requests, with AIPerf's aggregation (the reader's, docs/aiperf-files.md);
 * `benchmark_duration` from the virtual times: the last success's end less the first success's start.
 */
function metricsFromRequests(requests: ExportedRequest[]): Record<string, ExportedMetric> {
  let firstStartMs = Infinity;
  let lastEndMs = -Infinity;
  for (const request of requests) {
    if (!request.isValid) continue;
    if (request.startMs < firstStartMs) firstStartMs = request.startMs;
    if (request.endMs > lastEndMs) lastEndMs = request.endMs;
  }
  const durationS = lastEndMs > firstStartMs ? (lastEndMs - firstStartMs) / 1000 : undefined;
  return aggregateAiperfRequests(
    requests.map((request) => ({ failed: !request.isValid, metrics: request.metrics })),
    durationS,
  );
}

/** Metrics from the summary alone, for a run replayed without per-request records. */
function metricsFromSummary(summary: ReplaySummary): Record<string, ExportedMetric> {
  const metrics: Record<string, ExportedMetric> = {};
  for (const [coreTag, stats] of Object.entries(summary.metrics)) {
    if (!stats || stats.count === 0) continue;
    const tag = coreTag === 'token_gap' ? 'inter_chunk_latency' : coreTag;
    const { unit: _unit, approximate: _approximate, ...rest } = stats;
    metrics[tag] = { tag, unit: unitOf(tag) || stats.unit, kind: 'distribution', stats: { ...rest, sum: stats.avg * stats.count } };
  }
  const run = summary.run;
  single(metrics, 'request_count', run.request_count);
  if (run.error_request_count > 0) {
    single(metrics, 'error_request_count', run.error_request_count);
    single(metrics, 'completed_request_count', run.request_count + run.error_request_count);
    single(metrics, 'request_error_rate', (100 * run.error_request_count) / (run.request_count + run.error_request_count));
  }
  const isl = summary.metrics.input_sequence_length;
  const osl = summary.metrics.output_sequence_length;
  if (isl) single(metrics, 'total_isl', isl.avg * isl.count);
  if (osl) single(metrics, 'total_osl', osl.avg * osl.count);
  if (run.benchmark_duration_s > 0) {
    single(metrics, 'benchmark_duration', run.benchmark_duration_s);
    single(metrics, 'request_throughput', run.request_throughput);
    single(metrics, 'output_token_throughput', run.output_token_throughput);
    single(metrics, 'input_token_throughput', run.input_token_throughput);
    single(metrics, 'total_token_throughput', run.total_token_throughput);
  }
  return metrics;
}

function isoWithoutZone(ns: bigint): string {
  const ms = ns / 1_000_000n;
  const micros = (ns / 1_000n) % 1_000_000n;
  const base = new Date(Number(ms)).toISOString().slice(0, 19);
  return `${base}.${micros.toString().padStart(6, '0')}`;
}

/** Virtual ms to a wall-clock ns timestamp from AIPERF_EPOCH_NS. */
export function virtualMsToNs(ms: number): bigint {
  return AIPERF_EPOCH_NS + BigInt(Math.round(ms * 1e6));
}

/**
 * The lengths as AIPerf states them: a mean and a standard deviation. A normal spread (the
 * stddev keys) is AIPerf's own; a uniform range keeps its top as the length (the key a sweep's
 * points are found by) and stddev 0, as AIPerf has no uniform draw.
 */
function sourceLengths(config: RunConfig): { isl?: number; osl?: number; islSd?: number; oslSd?: number; datasetType: string } {
  const source = config.traffic.source;
  switch (source.type) {
    case 'synthetic': {
      return {
        isl: source.input_tokens,
        osl: source.output_tokens,
        islSd: source.input_tokens_stddev ?? 0,
        oslSd: source.output_tokens_stddev ?? 0,
        datasetType: 'synthetic',
      };
    }
    case 'synthetic-session':
      return { isl: source.new_input_tokens_per_turn, osl: source.output_tokens_per_turn, islSd: 0, oslSd: 0, datasetType: 'synthetic' };
    case 'trace':
      return { datasetType: 'mooncake_trace' };
  }
}

/** `input_config` in AIPerf 0.12's shape, describing the simulated load. */
function inputConfigOf(config: RunConfig): Record<string, unknown> {
  const load = config.traffic.load;
  const lengths = sourceLengths(config);
  const phase: Record<string, unknown> = { name: 'profiling', kind: 'profiling' };
  if (load.type === 'concurrency') Object.assign(phase, { type: 'concurrency', concurrency: load.concurrency });
  else if (load.type === 'trace_timestamps') Object.assign(phase, { type: 'fixed_schedule' });
  else
    Object.assign(phase, {
      type: 'request_rate',
      request_rate: load.requests_per_second,
      arrival: load.type === 'poisson' ? 'poisson' : 'constant',
    });
  const requests = stopRequests(config.traffic);
  if (requests !== null) phase.requests = requests;
  const dataset: Record<string, unknown> = { name: 'main', type: lengths.datasetType };
  const source = config.traffic.source;
  if (source.type === 'synthetic' && source.dataset_entries !== undefined) {
    dataset.entries = source.dataset_entries;
    dataset.sampling = source.dataset_sampling ?? 'shuffle';
  }
  if (lengths.isl !== undefined && lengths.osl !== undefined) {
    dataset.prompts = { isl: { mean: lengths.isl, stddev: lengths.islSd ?? 0 }, osl: { mean: lengths.osl, stddev: lengths.oslSd ?? 0 } };
  }
  const phases: Array<Record<string, unknown>> = [];
  if (config.report.warmup_requests > 0) phases.push({ name: 'warmup', kind: 'warmup', requests: config.report.warmup_requests });
  phases.push(phase);
  return {
    models: { items: [{ name: config.engine.model }] },
    endpoint: { type: 'chat', streaming: true, urls: ['servesim://replay'] },
    datasets: [dataset],
    phases,
  };
}

/** The `aiperf profile` command that would measure this load on a real server. */
export function equivalentAiperfCommand(config: RunConfig): string {
  const words = ['aiperf', 'profile', '--model', `'${config.engine.model}'`, '--endpoint-type', 'chat', '--streaming'];
  const load = config.traffic.load;
  if (load.type === 'concurrency') words.push('--concurrency', String(load.concurrency));
  else if (load.type === 'poisson' || load.type === 'constant_rate') {
    words.push('--request-rate', String(load.requests_per_second), '--request-rate-mode', load.type === 'poisson' ? 'poisson' : 'constant');
  } else words.push('--fixed-schedule');
  const lengths = sourceLengths(config);
  if (lengths.isl !== undefined && lengths.osl !== undefined) {
    words.push('--synthetic-input-tokens-mean', String(lengths.isl), '--synthetic-input-tokens-stddev', String(lengths.islSd ?? 0));
    words.push('--output-tokens-mean', String(lengths.osl), '--output-tokens-stddev', String(lengths.oslSd ?? 0));
  }
  const requests = stopRequests(config.traffic);
  if (requests !== null) words.push('--request-count', String(requests));
  if (config.report.warmup_requests > 0) words.push('--warmup-request-count', String(config.report.warmup_requests));
  // AIPerf repeats 100 prompts unless told otherwise: a replay whose every prompt is its own asks
  // for as many entries as it sends requests (warm-up included).
  const source = config.traffic.source;
  if (source.type === 'synthetic' && source.dataset_entries !== undefined) {
    words.push(
      '--num-dataset-entries',
      String(source.dataset_entries),
      '--dataset-sampling-strategy',
      source.dataset_sampling ?? 'shuffle',
    );
  } else if (source.type === 'synthetic' && requests !== null) {
    words.push('--num-dataset-entries', String(requests + config.report.warmup_requests));
  }
  return words.join(' ');
}

function benchmarkIdOf(config: RunConfig): string {
  const text = JSON.stringify(config);
  return (fnv1a32(text).toString(16).padStart(8, '0') + fnv1a32(`${text}#`).toString(16).padStart(8, '0')).slice(0, 12);
}

function metricJsonBlock(metric: ExportedMetric): Record<string, unknown> {
  const block: Record<string, unknown> = { unit: metric.unit };
  if (metric.kind === 'single') {
    block.avg = metric.stats.avg;
    return block;
  }
  for (const stat of JSON_STATS) {
    const value = metric.stats[stat];
    // Non-finite statistics (error-adjusted rows) are left out, as AIPerf leaves them out.
    if (value !== undefined && Number.isFinite(value)) block[stat] = value;
  }
  return block;
}

function orderedTags(metrics: Record<string, ExportedMetric>): string[] {
  const known = JSON_ORDER.filter((tag) => tag in metrics);
  const rest = Object.keys(metrics)
    .filter((tag) => !JSON_ORDER.includes(tag))
    .sort();
  return [...known, ...rest];
}

function buildJsonText(metrics: Record<string, ExportedMetric>, config: RunConfig, failed: number, endNs: bigint): string {
  const benchmarkId = benchmarkIdOf(config);
  const document: Record<string, unknown> = {
    schema_version: AIPERF_SCHEMA_VERSION,
    aiperf_version: SIMULATED_AIPERF_VERSION,
    benchmark_id: benchmarkId,
  };
  for (const tag of orderedTags(metrics)) document[tag] = metricJsonBlock(metrics[tag]);
  document.input_config = inputConfigOf(config);
  document.run_info = { benchmark_id: benchmarkId, trial: 0, cli_command: equivalentAiperfCommand(config) };
  document.was_cancelled = false;
  document.error_summary = failed > 0 ? [{ error_details: { ...REJECTION_ERROR }, count: failed }] : [];
  document.start_time = isoWithoutZone(AIPERF_EPOCH_NS);
  document.end_time = isoWithoutZone(endNs);
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** The summary CSV: CRLF, rows sorted by tag, `%.2f`, unit left out for requests/count (docs/aiperf-files.md). */
export function buildCsvText(metrics: Record<string, ExportedMetric>): string {
  const rows: string[] = [`Metric,${CSV_ROW_STATS.join(',')}`];
  const tags = Object.keys(metrics).sort();
  for (const tag of tags) {
    const metric = metrics[tag];
    if (metric.kind !== 'distribution') continue;
    const cells = CSV_ROW_STATS.map((stat) => {
      const value = metric.stats[stat];
      return value === undefined ? '' : formatFixed2(value);
    });
    rows.push([csvCell(headerCellOf(tag, metric.unit)), ...cells].join(','));
  }
  rows.push('');
  rows.push('Metric,Value');
  for (const tag of tags) {
    const metric = metrics[tag];
    if (metric.kind !== 'single') continue;
    rows.push(`${csvCell(headerCellOf(tag, metric.unit))},${formatFixed2(metric.stats.avg as number)}`);
  }
  return `${rows.join('\r\n')}\r\n`;
}

function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * Closed-loop slots (concurrency loads): each request takes, among the slots free at its
 * send time, the one freed last (the response that released it), so a slot's requests
 * follow each other as AIPerf's credits do. Ties go to the lower slot.
 */
function assignSlots(records: readonly RequestRecord[]): Map<number, number> {
  const order = [...records].sort((a, b) => a.sent_ms - b.sent_ms || a.request_id - b.request_id);
  const freeAtMs: number[] = [];
  const slots = new Map<number, number>();
  for (const record of order) {
    let chosen = -1;
    for (let slot = 0; slot < freeAtMs.length; slot++) {
      if (freeAtMs[slot] <= record.sent_ms && (chosen < 0 || freeAtMs[slot] > freeAtMs[chosen])) chosen = slot;
    }
    if (chosen < 0) {
      chosen = freeAtMs.length;
      freeAtMs.push(0);
    }
    slots.set(record.request_id, chosen);
    freeAtMs[chosen] = record.response_acted_ms ?? record.response_received_ms ?? Infinity;
  }
  return slots;
}

function jsonlLine(request: ExportedRequest, slot: number | undefined): string {
  const record = request.record;
  const startNs = virtualMsToNs(request.startMs);
  const endNs = virtualMsToNs(record.response_received_ms ?? request.endMs);
  const id = `request-${record.request_id}`;
  const metadata = [
    `"session_num":${record.request_id}`,
    `"x_request_id":${JSON.stringify(id)}`,
    `"x_correlation_id":${JSON.stringify(id)}`,
    `"conversation_id":${JSON.stringify(`session-${record.session_id}`)}`,
    `"turn_index":${record.turn_index}`,
    `"credit_issued_ns":${startNs}`,
    `"request_start_ns":${startNs}`,
    `"request_end_ns":${endNs}`,
    `"worker_id":${JSON.stringify(slot === undefined ? 'worker_0' : `slot_${slot}`)}`,
    `"record_processor_id":"servesim"`,
    `"benchmark_phase":"profiling"`,
    `"was_cancelled":false`,
  ].join(',');
  const metrics: Record<string, { value: number | number[]; unit: string }> = {};
  for (const [tag, value] of Object.entries(request.metrics)) metrics[tag] = { value, unit: unitOf(tag) };
  const error = request.isValid ? '' : `,"error":${JSON.stringify(REJECTION_ERROR)}`;
  return `{"metadata":{${metadata}},"metrics":${JSON.stringify(metrics)}${error}}`;
}

/**
 * The three AIPerf files of a simulated run, as text. With `records` (a replay run with
 * per-request output) every value is computed from the requests; without, the JSON and CSV
 * are built from the summary and there is no JSONL.
 */
export function buildAiperfExport(summary: ReplaySummary, records: readonly RequestRecord[] | undefined, config: RunConfig): AiperfExport {
  let metrics: Record<string, ExportedMetric>;
  let jsonlLines: string[] | undefined;
  let failed = summary.run.error_request_count;
  let lastMs = summary.run.benchmark_duration_s * 1000;
  if (records) {
    // Id order, so that sums do not depend on the order the records came in.
    const byId = [...records].sort((a, b) => a.request_id - b.request_id);
    const requests = byId.map(exportRequest).filter((request): request is ExportedRequest => request !== null);
    metrics = metricsFromRequests(requests);
    failed = requests.filter((request) => !request.isValid).length;
    lastMs = requests.reduce((last, request) => Math.max(last, request.record.response_received_ms ?? request.endMs), 0);
    const slots = config.traffic.load.type === 'concurrency' ? assignSlots(records) : undefined;
    const ordered = [...requests].sort(
      (a, b) =>
        (a.record.response_received_ms ?? a.endMs) - (b.record.response_received_ms ?? b.endMs) ||
        a.record.request_id - b.record.request_id,
    );
    jsonlLines = ordered.map((request) => `${jsonlLine(request, slots?.get(request.record.request_id))}\n`);
  } else {
    metrics = metricsFromSummary(summary);
  }
  return {
    metrics,
    jsonText: buildJsonText(metrics, config, failed, virtualMsToNs(lastMs)),
    csvText: buildCsvText(metrics),
    jsonlLines,
  };
}

export interface WrittenAiperfArtifacts {
  dir: string;
  files: string[];
}

/**
 * The files of `writeAiperfArtifacts` with their content, for a caller that writes them together
 * with others (`writeOutputFiles`).
 */
export function aiperfArtifactFiles(
  dir: string,
  summary: ReplaySummary,
  records: readonly RequestRecord[] | undefined,
  config: RunConfig,
): Array<[string, OutputContent]> {
  const exported = buildAiperfExport(summary, records, config);
  const files: Array<[string, OutputContent]> = [
    [join(dir, AIPERF_FILES.json), exported.jsonText],
    [join(dir, AIPERF_FILES.csv), exported.csvText],
  ];
  if (exported.jsonlLines !== undefined) files.push([join(dir, AIPERF_FILES.jsonl), exported.jsonlLines]);
  return files;
}

/**
 * Writes `profile_export_aiperf.json`, `profile_export_aiperf.csv` and (with records)
 * `profile_export.jsonl` into `dir`, creating it; together or not at all. Callers name the
 * folder with `aiperfFolderName(config)`.
 */
export function writeAiperfArtifacts(
  dir: string,
  summary: ReplaySummary,
  records: readonly RequestRecord[] | undefined,
  config: RunConfig,
): WrittenAiperfArtifacts {
  checkOutputDir(dir, 'AIPerf folder');
  const files = aiperfArtifactFiles(dir, summary, records, config);
  writeOutputFiles(files);
  return { dir, files: files.map(([file]) => file) };
}
