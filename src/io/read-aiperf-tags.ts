/**
 * The AIPerf metric catalogue shared by the readers and the writer (docs/aiperf-files.md):
 * tag, printed header, display unit and kind of every metric AIPerf has exported, plus the
 * aliases of older layouts (`ttft`, GenAI-Perf headers). Readers map CSV headers to tags
 * with `tagFromHeaderCell`, never by column position.
 */

/** `record`: one value per request, exported with statistics; `single`: one value per run;
 * `sweep`: time-weighted step-function statistics (reduced stat set). */
export type AiperfMetricKind = 'record' | 'single' | 'sweep';

export interface AiperfMetricInfo {
  tag: string;
  header: string;
  unit: string;
  kind: AiperfMetricKind;
}

const CATALOGUE: ReadonlyArray<readonly [string, string, string, AiperfMetricKind]> = [
  // Per-request (record) metrics.
  ['time_to_first_token', 'Time to First Token', 'ms', 'record'],
  ['time_to_second_token', 'Time to Second Token', 'ms', 'record'],
  ['time_to_first_output_token', 'Time to First Output Token', 'ms', 'record'],
  ['request_latency', 'Request Latency', 'ms', 'record'],
  ['inter_token_latency', 'Inter Token Latency', 'ms', 'record'],
  ['inter_chunk_latency', 'Inter Chunk Latency', 'ms', 'record'],
  ['decode_duration', 'Decode Duration', 'ms', 'record'],
  ['output_token_throughput_per_user', 'Output Token Throughput Per User', 'tokens/sec/user', 'record'],
  ['e2e_output_token_throughput', 'E2E Output Token Throughput', 'tokens/sec/user', 'record'],
  ['prefill_throughput_per_user', 'Prefill Throughput Per User', 'tokens/sec/user', 'record'],
  ['output_token_count', 'Output Token Count', 'tokens', 'record'],
  ['reasoning_token_count', 'Reasoning Token Count', 'tokens', 'record'],
  ['output_sequence_length', 'Output Sequence Length', 'tokens', 'record'],
  ['input_sequence_length', 'Input Sequence Length', 'tokens', 'record'],
  ['osl_mismatch_diff_pct', 'OSL Mismatch Diff %', '%', 'record'],
  ['credit_to_start_latency', 'Credit-to-Start Latency', 'ms', 'record'],
  ['effective_latency', 'Effective Latency (CO-aware)', 'ms', 'record'],
  ['error_isl', 'Error Input Sequence Length', 'tokens', 'record'],
  ['http_req_blocked', 'HTTP Blocked', 'ms', 'record'],
  ['http_req_dns_lookup', 'HTTP DNS Lookup', 'ms', 'record'],
  ['http_req_connecting', 'HTTP Connecting', 'ms', 'record'],
  ['http_req_sending', 'HTTP Sending', 'ms', 'record'],
  ['http_req_waiting', 'HTTP Waiting (TTFB)', 'ms', 'record'],
  ['http_req_receiving', 'HTTP Receiving', 'ms', 'record'],
  ['http_req_duration', 'HTTP Duration (excl. conn)', 'ms', 'record'],
  ['http_req_total', 'HTTP Total Time', 'ms', 'record'],
  ['http_req_connection_overhead', 'HTTP Connection Overhead', 'ms', 'record'],
  ['http_req_data_sent', 'HTTP Data Sent', 'KB', 'record'],
  ['http_req_data_received', 'HTTP Data Received', 'KB', 'record'],
  ['http_req_chunks_sent', 'HTTP Chunks Sent', 'count', 'record'],
  ['http_req_chunks_received', 'HTTP Chunks Received', 'count', 'record'],
  ['http_req_connection_reused', 'HTTP Connection Reused', 'ratio', 'record'],
  // Time-weighted (sweep-line) metrics.
  ['effective_concurrency', 'Effective Concurrency', 'requests', 'sweep'],
  ['effective_prefill_concurrency', 'Effective Prefill Concurrency', 'requests', 'sweep'],
  ['effective_decode_concurrency', 'Effective Decode Concurrency', 'requests', 'sweep'],
  ['effective_decode_throughput', 'Effective Decode Throughput', 'tokens/sec', 'sweep'],
  ['effective_prefill_throughput', 'Effective Prefill Throughput', 'tokens/sec', 'sweep'],
  ['effective_total_throughput', 'Effective Total Throughput', 'tokens/sec', 'sweep'],
  ['effective_decode_throughput_per_user', 'Effective Decode Throughput Per User', 'tokens/sec/user', 'sweep'],
  ['effective_prefill_throughput_per_user', 'Effective Prefill Throughput Per User', 'tokens/sec/user', 'sweep'],
  ['active_decode_throughput', 'Active Decode Throughput', 'tokens/sec', 'sweep'],
  ['active_prefill_throughput', 'Active Prefill Throughput', 'tokens/sec', 'sweep'],
  ['active_total_throughput', 'Active Total Throughput', 'tokens/sec', 'sweep'],
  ['active_decode_throughput_per_user', 'Active Decode Throughput Per User', 'tokens/sec/user', 'sweep'],
  ['active_prefill_throughput_per_user', 'Active Prefill Throughput Per User', 'tokens/sec/user', 'sweep'],
  ['tokens_in_flight', 'Tokens In Flight', 'tokens', 'sweep'],
  // Single values (aggregates and derived).
  ['request_count', 'Request Count', 'requests', 'single'],
  ['error_request_count', 'Error Request Count', 'requests', 'single'],
  ['completed_request_count', 'Completed Requests (Success + Error)', 'requests', 'single'],
  ['request_error_rate', 'Request Error Rate', '%', 'single'],
  ['context_overflow_count', 'Context Overflow Count', 'requests', 'single'],
  ['osl_mismatch_count', 'OSL Mismatch Count', 'requests', 'single'],
  ['good_request_count', 'Good Request Count', 'requests', 'single'],
  ['goodput', 'Goodput', 'requests/sec', 'single'],
  ['benchmark_duration', 'Benchmark Duration', 'sec', 'single'],
  ['request_throughput', 'Request Throughput', 'requests/sec', 'single'],
  ['output_token_throughput', 'Output Token Throughput', 'tokens/sec', 'single'],
  ['input_token_throughput', 'Input Token Throughput', 'tokens/sec', 'single'],
  ['total_token_throughput', 'Total Token Throughput', 'tokens/sec', 'single'],
  ['total_isl', 'Total Input Sequence Length', 'tokens', 'single'],
  ['total_osl', 'Total Output Sequence Length', 'tokens', 'single'],
  ['total_output_tokens', 'Total Output Tokens', 'tokens', 'single'],
  ['total_reasoning_tokens', 'Total Reasoning Tokens', 'tokens', 'single'],
  ['total_error_isl', 'Total Error Input Sequence Length', 'tokens', 'single'],
  ['min_request_timestamp', 'Minimum Request Timestamp', 'ns', 'single'],
  ['max_response_timestamp', 'Maximum Response Timestamp', 'ns', 'single'],
];

/** Older tags and GenAI-Perf tags, mapped to today's tag. GenAI-Perf's per-request output
 * throughput is OSL / latency, i.e. AIPerf's `e2e_output_token_throughput` (not 1 / ITL). */
export const TAG_ALIASES: Readonly<Record<string, string>> = {
  ttft: 'time_to_first_token',
  ttst: 'time_to_second_token',
  prefill_throughput: 'prefill_throughput_per_user',
  output_token_throughput_per_request: 'e2e_output_token_throughput',
};

/** Headers printed by older layouts (GenAI-Perf), lower-cased, mapped to tags. */
const HEADER_ALIASES: Readonly<Record<string, string>> = {
  'time to first token': 'time_to_first_token',
  'time to second token': 'time_to_second_token',
  'output token throughput per request': 'e2e_output_token_throughput',
  'prefill throughput': 'prefill_throughput_per_user',
};

/** Units AIPerf leaves out of a printed header (docs/aiperf-files.md). */
const UNITS_NOT_PRINTED = new Set(['requests', 'count']);

const BY_TAG = new Map<string, AiperfMetricInfo>();
const BY_HEADER = new Map<string, AiperfMetricInfo>();
for (const [tag, header, unit, kind] of CATALOGUE) {
  const info: AiperfMetricInfo = { tag, header, unit, kind };
  BY_TAG.set(tag, info);
  BY_HEADER.set(header.toLowerCase(), info);
}

/** Today's tag for a tag of any layout (`ttft` -> `time_to_first_token`). */
export function canonicalTag(tag: string): string {
  if (tag.startsWith('adj_')) return `adj_${canonicalTag(tag.slice(4))}`;
  return TAG_ALIASES[tag] ?? tag;
}

/** Catalogue entry of a tag (an `adj_` tag gets its base metric's entry); undefined if unknown. */
export function getMetricInfo(tag: string): AiperfMetricInfo | undefined {
  const canonical = canonicalTag(tag);
  return BY_TAG.get(canonical.startsWith('adj_') ? canonical.slice(4) : canonical);
}

/** Catalogued metrics that may be negative: a signed difference. */
const SIGNED_TAGS = new Set(['osl_mismatch_diff_pct']);

/**
 * Why `value` cannot be a statistic of the metric `tag` (a time, a count, a rate or a share, which
 * is never below 0), or null when it can. Metrics outside the catalogue are not checked.
 */
export function metricValueProblem(tag: string, value: number): string | null {
  const info = getMetricInfo(tag);
  if (info === undefined || SIGNED_TAGS.has(info.tag) || !(value < 0)) return null;
  return `must be 0 or more (${info.header} is never negative), got ${value}`;
}

/** The header AIPerf prints for a tag and unit: `Header (unit)`, `Header (error-adjusted) (unit)`,
 * the unit left out for `requests` and `count`. */
export function headerCellOf(tag: string, unit: string): string {
  const isAdjusted = tag.startsWith('adj_');
  const info = getMetricInfo(tag);
  const base = info ? info.header : tag;
  const adjusted = isAdjusted ? ' (error-adjusted)' : '';
  const unitPart = unit === '' || UNITS_NOT_PRINTED.has(unit) ? '' : ` (${unit})`;
  return `${base}${adjusted}${unitPart}`;
}

export interface ParsedHeaderCell {
  tag: string;
  /** Unit as printed, or undefined when the header has none. */
  unit: string | undefined;
  isAdjusted: boolean;
  /** False when the header is not in the catalogue and the tag was derived from its words. */
  isKnown: boolean;
}

function snakeCase(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

function lookupHeader(base: string): string | undefined {
  const key = base.trim().toLowerCase();
  return BY_HEADER.get(key)?.tag ?? HEADER_ALIASES[key];
}

/**
 * The tag of a CSV first cell such as `Time to First Token (ms)`,
 * `Request Latency (error-adjusted) (ms)`, `Effective Latency (CO-aware) (ms)`,
 * `Completed Requests (Success + Error)` or GenAI-Perf's `Request Throughput (per sec)`.
 * Known headers are looked up whole first, so parentheses inside a header are not taken
 * for a unit.
 */
export function tagFromHeaderCell(cell: string): ParsedHeaderCell {
  const text = cell.trim();
  const whole = lookupHeader(text);
  if (whole !== undefined) return { tag: whole, unit: undefined, isAdjusted: false, isKnown: true };
  let base = text;
  let unit: string | undefined;
  const unitMatch = /^(.*\S)\s*\(([^()]*)\)$/.exec(base);
  if (unitMatch) {
    base = unitMatch[1];
    unit = unitMatch[2];
  }
  let isAdjusted = false;
  const adjustedMatch = /^(.*\S)\s*\(error-adjusted\)$/i.exec(base);
  if (adjustedMatch) {
    isAdjusted = true;
    base = adjustedMatch[1];
  } else if (unit !== undefined && unit.toLowerCase() === 'error-adjusted') {
    isAdjusted = true;
    unit = undefined;
  }
  const known = lookupHeader(base);
  const tag = known ?? snakeCase(base);
  return { tag: isAdjusted ? `adj_${tag}` : tag, unit, isAdjusted, isKnown: known !== undefined };
}
