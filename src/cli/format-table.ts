/**
 * AIPerf-style console table of a replay summary: one row per metric (avg, min, max, p99,
 * p90, p50, std), then the run-level values, the TTFT stage breakdown, the prefix cache (when the
 * run has one) and the simulator's speed.
 */
import { METRIC_TAGS, type MetricTag, type ReplaySummary } from '../core/report-types.js';

const METRIC_NAMES: Record<MetricTag, string> = {
  time_to_first_token: 'Time to First Token (ms)',
  time_to_second_token: 'Time to Second Token (ms)',
  request_latency: 'Request Latency (ms)',
  inter_token_latency: 'Inter Token Latency (ms)',
  output_token_throughput_per_user: 'Output Token Throughput Per User (tokens/sec/user)',
  e2e_output_token_throughput: 'E2E Output Token Throughput (tokens/sec)',
  token_gap: 'Token Gap (ms)',
  input_sequence_length: 'Input Sequence Length (tokens)',
  output_sequence_length: 'Output Sequence Length (tokens)',
};

const COLUMNS = ['avg', 'min', 'max', 'p99', 'p90', 'p50', 'std'] as const;

function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  return x.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

function grid(rows: string[][], rightAlignFrom: number): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r) => r.map((cell, i) => (i >= rightAlignFrom ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join('  '))
    .join('\n');
}

export function formatSummaryTable(summary: ReplaySummary): string {
  const metricRows: string[][] = [['Metric', ...COLUMNS]];
  for (const tag of METRIC_TAGS) {
    const stats = summary.metrics[tag];
    if (!stats) continue;
    const name = stats.approximate ? `${METRIC_NAMES[tag]} [sketch, 0.1%]` : METRIC_NAMES[tag];
    metricRows.push([name, ...COLUMNS.map((c) => fmt(stats[c]))]);
  }
  const run = summary.run;
  const s = summary.ttft_stages;
  const valueRows: string[][] = [
    ['Output Token Throughput (tokens/sec)', fmt(run.output_token_throughput)],
    ['Request Throughput (requests/sec)', fmt(run.request_throughput)],
    ['Request Count (requests)', String(run.request_count)],
    ['Error Request Count (requests)', String(run.error_request_count)],
    ['Incomplete Request Count (requests)', String(run.incomplete_request_count)],
    ['Benchmark Duration (sec)', fmt(run.benchmark_duration_s)],
    ['Worker Time (sec)', fmt(run.worker_seconds)],
    ['GPU Hours', run.gpu_hours.toPrecision(4)],
    [
      'TTFT stages (ms): tokenization / queue / prefill / detokenization',
      [s.mean_tokenization_ms, s.mean_queue_ms, s.mean_prefill_ms, s.mean_detokenization_ms].map(fmt).join(' / '),
    ],
  ];
  const cache = summary.prefix_cache;
  if (cache !== undefined) {
    valueRows.push(
      ['Prefix Cache Hit Rate (% of prompt tokens)', fmt(cache.hit_rate * 100)],
      ['Prefix Cache Evictions (blocks)', cache.evictions.toLocaleString('en-US')],
    );
  }
  const sim = summary.simulator;
  const speed = `simulated ${sim.output_tokens.toLocaleString('en-US')} output tokens in ${fmt(sim.wall_time_ms)} ms (${sim.us_per_output_token.toFixed(3)} us per token), ${sim.passes.toLocaleString('en-US')} passes, ${sim.preemptions.toLocaleString('en-US')} preemptions`;
  return [grid(metricRows, 1), '', grid(valueRows, 1), '', speed].join('\n');
}
