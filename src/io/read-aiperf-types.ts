/**
 * What the AIPerf readers return (docs/aiperf-files.md): one normalized shape for every
 * export layout, with today's tags and display units. Absent, empty and null stats are
 * left out ("not reported"); statistics of error-adjusted rows that AIPerf leaves empty
 * because they are infinite are `Infinity`.
 */

export const AIPERF_STATS = [
  'avg',
  'min',
  'max',
  'sum',
  'p1',
  'p5',
  'p10',
  'p25',
  'p50',
  'p75',
  'p90',
  'p95',
  'p99',
  'std',
  'count',
] as const;
export type AiperfStat = (typeof AIPERF_STATS)[number];

/** The statistics of a row of AIPerf's summary CSV, in its column order: all but `count`. */
export const CSV_ROW_STATS: readonly AiperfStat[] = AIPERF_STATS.filter((stat) => stat !== 'count');

/**
 * Export layouts, oldest first (docs/aiperf-files.md):
 * - `genai-perf`: GenAI-Perf, `*_genai_perf.*`, quoted numbers with thousands separators;
 * - `records`: early AIPerf, JSON under `records`, tags `ttft`/`ttst`, no p10;
 * - `flat`: flat JSON without `schema_version`, p10 added;
 * - `flat-versioned`: flat JSON with `schema_version` (AIPerf 0.8), CSV `sum` after `avg`;
 * - `count-sum`: the newest (AIPerf 0.12+), `count`/`sum` in JSON, error-adjusted rows,
 *   GPU-telemetry CSV section.
 */
export type AiperfLayout = 'genai-perf' | 'records' | 'flat' | 'flat-versioned' | 'count-sum';

export interface AiperfMetric {
  /** Today's tag (`time_to_first_token`, `adj_request_latency`, ...). */
  tag: string;
  unit: string;
  /** `distribution`: a row with statistics; `single`: one value, kept in `stats.avg`. */
  kind: 'distribution' | 'single';
  stats: Partial<Record<AiperfStat, number>>;
}

export interface AiperfTelemetryRow {
  endpoint: string;
  gpuIndex: string;
  gpuName: string;
  gpuUuid: string;
  metric: string;
  unit: string | undefined;
  /** Extra identifying columns of newer layouts (Platform, Hostname, Namespace, Pod Name). */
  labels: Record<string, string>;
  stats: Partial<Record<AiperfStat, number>>;
}

export interface AiperfSummary {
  file: string;
  format: 'json' | 'csv';
  layout: AiperfLayout;
  schemaVersion: string | undefined;
  aiperfVersion: string | undefined;
  metrics: Record<string, AiperfMetric>;
  /** `input_config` as written (JSON only). */
  inputConfig: unknown;
  /** `run_info.cli_command` or `input_config.cli_command` (JSON only). */
  cliCommand: string | undefined;
  errorSummary: Array<{ type: string | undefined; code: number | undefined; message: string | undefined; count: number }>;
  telemetry: AiperfTelemetryRow[];
  wasCancelled: boolean | undefined;
}

export interface AiperfRequestError {
  code: number | undefined;
  type: string | undefined;
  message: string | undefined;
}

/** One line of `profile_export.jsonl`. Timestamps are exact nanoseconds since the epoch. */
export interface AiperfRequestRecord {
  /** 1-based line in the file. */
  line: number;
  conversationId: string | undefined;
  turnIndex: number | undefined;
  sessionNum: number | undefined;
  workerId: string | undefined;
  /** `benchmark_phase` (or the older `credit_phase`): `profiling` or `warmup`. */
  phase: string | undefined;
  wasCancelled: boolean | undefined;
  creditIssuedNs: bigint | undefined;
  /** `request_start_ns`, or the older `timestamp_ns`. */
  requestStartNs: bigint | undefined;
  requestAckNs: bigint | undefined;
  /** `request_end_ns`, or the older per-record `max_response_timestamp`. */
  requestEndNs: bigint | undefined;
  error: AiperfRequestError | null;
  /** Per-request metric values by today's tag; list metrics (inter-chunk latency) as arrays. */
  metrics: Record<string, number | number[]>;
}

/** Where a load parameter of a measured run came from. */
export type LoadParameterSource = 'input_config' | 'cli_command' | 'folder name' | 'metrics' | 'user';

export interface AiperfLoad {
  concurrency?: number;
  requestRate?: number;
  isl?: number;
  osl?: number;
  requestCount?: number;
  model?: string;
  /** Standard deviations of the prompt and output lengths the run asked for (0: fixed lengths). */
  islStddev?: number;
  oslStddev?: number;
  /** Distinct prompts the run's requests repeated (AIPerf's --num-dataset-entries), when it says. */
  datasetEntries?: number;
  sources: Partial<
    Record<
      'concurrency' | 'requestRate' | 'isl' | 'osl' | 'requestCount' | 'model' | 'islStddev' | 'oslStddev' | 'datasetEntries',
      LoadParameterSource
    >
  >;
}
