/**
 * AIPerf-style console table of a replay summary: one row per metric (avg, min, max, p99,
 * p90, p50, std), then the run-level values, the TTFT stage breakdown, the prefix cache (when the
 * run has one), the deployment and the simulator's speed. Metric names and units are AIPerf's (the
 * catalogue its files are written with), so the table and the written files say the same; every
 * number has one format; a run with rejected requests says why they were rejected.
 */
import type { RunConfig } from '../config/types.js';
import { kvBlocksPerRank } from '../config/kv-capacity.js';
import { METRIC_TAGS, type MetricTag, type ReplaySummary } from '../core/report-types.js';
import { formatInteger, formatNumber } from '../io/format-number.js';
import { getMetricInfo } from '../io/read-aiperf-tags.js';
import { workerRoles } from '../config/roles.js';
import { PLACEHOLDER_HINT } from '../config/load.js';

/** `Inter Token Latency (ms)`: AIPerf's header and unit, or the simulator's own name for a tag AIPerf lacks. */
export function metricTitle(tag: MetricTag): string {
  const info = getMetricInfo(tag);
  if (info !== undefined) return `${info.header} (${info.unit})`;
  return tag === 'token_gap' ? 'Token Gap (ms)' : tag;
}

const COLUMNS = ['avg', 'min', 'max', 'p99', 'p90', 'p50', 'std'] as const;

const fmt = formatNumber;

/**
 * Why the engine rejected requests: a request is rejected when its prompt has at least
 * `min(context_length, blocks per rank x block_size + 1)` tokens (the replay model's rule), so
 * one limit explains every rejection of a run.
 */
export function rejectionReason(config: RunConfig): string {
  // The role whose KV pool holds the least (a disaggregated deployment has two pools).
  let role = workerRoles(config.engine)[0].config;
  let blocks = kvBlocksPerRank(config.engine, role);
  let poolLimit = blocks === null ? Infinity : blocks * role.kv_cache.block_size + 1;
  for (const other of workerRoles(config.engine).slice(1)) {
    const otherBlocks = kvBlocksPerRank(config.engine, other.config);
    const limit = otherBlocks === null ? Infinity : otherBlocks * other.config.kv_cache.block_size + 1;
    if (limit < poolLimit) [role, blocks, poolLimit] = [other.config, otherBlocks, limit];
  }
  const contextLimit = config.engine.context_length === 'max' ? Infinity : config.engine.context_length;
  if (contextLimit <= poolLimit) return `prompt of context_length ${formatInteger(contextLimit)} tokens or more`;
  return (
    `prompt of ${formatInteger(poolLimit)} tokens or more, more than the KV pool of a rank holds ` +
    `(${formatInteger(blocks as number)} blocks of ${role.kv_cache.block_size} tokens)`
  );
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
    const name = stats.approximate ? `${metricTitle(tag)} [sketch, 0.1%]` : metricTitle(tag);
    metricRows.push([name, ...COLUMNS.map((c) => fmt(stats[c]))]);
  }
  const run = summary.run;
  const s = summary.ttft_stages;
  const valueRows: string[][] = [
    ['Output Token Throughput (tokens/sec)', fmt(run.output_token_throughput)],
    ['Request Throughput (requests/sec)', fmt(run.request_throughput)],
    ['Request Count (requests)', formatInteger(run.request_count)],
    [
      'Error Request Count (requests)',
      run.error_request_count > 0
        ? `${formatInteger(run.error_request_count)} rejected: ${rejectionReason(summary.config as RunConfig)}`
        : '0',
    ],
    ['Incomplete Request Count (requests)', formatInteger(run.incomplete_request_count)],
    ['Benchmark Duration (sec)', fmt(run.benchmark_duration_s)],
    ['Worker Time (sec)', fmt(run.worker_seconds)],
    ['GPU Hours', fmt(run.gpu_hours)],
    s.mean_decode_ms === undefined
      ? [
          'TTFT stages (ms): frontend / tokenization / queue / prefill / detokenization',
          [s.mean_frontend_ms, s.mean_tokenization_ms, s.mean_queue_ms, s.mean_prefill_ms, s.mean_detokenization_ms].map(fmt).join(' / '),
        ]
      : [
          'TTFT stages (ms): frontend / tokenization / queue / prefill / KV transfer / decode / detokenization',
          [
            s.mean_frontend_ms,
            s.mean_tokenization_ms,
            s.mean_queue_ms,
            s.mean_prefill_ms,
            s.mean_kv_transfer_ms ?? 0,
            s.mean_decode_ms,
            s.mean_detokenization_ms,
          ]
            .map(fmt)
            .join(' / '),
        ],
  ];
  const cache = summary.prefix_cache;
  if (cache !== undefined) {
    valueRows.push(
      ['Prefix Cache Hit Rate (% of prompt tokens)', fmt(cache.hit_rate * 100)],
      ['Prefix Cache Evictions (blocks)', formatInteger(cache.evictions)],
    );
  }
  for (const pool of summary.pools ?? []) {
    valueRows.push([
      `Pool ${pool.role}: workers / GPUs / passes / busy (%)`,
      [formatInteger(pool.workers), formatInteger(pool.gpus), formatInteger(pool.passes), fmt(pool.busy_share * 100)].join(' / '),
    ]);
  }
  const transfer = summary.kv_transfer;
  if (transfer !== undefined) {
    valueRows.push([
      `KV transfers (${(summary.config as RunConfig).engine.kv_transfer?.first_token === 'decode' ? 'before the first token' : 'after the first token'}): count / link wait (ms) / transfer (ms)`,
      [formatInteger(transfer.transfers), fmt(transfer.mean_link_wait_ms), fmt(transfer.mean_transfer_ms)].join(' / '),
    ]);
  }
  const d = summary.deployment;
  valueRows.push([
    'Deployment: GPUs / weights per GPU (GiB) / KV cache per rank (tokens)',
    [
      String(d.gpus),
      d.weights_gib_per_gpu === null ? '-' : fmt(d.weights_gib_per_gpu),
      d.kv_cache_tokens_per_rank === null ? 'unlimited' : formatInteger(d.kv_cache_tokens_per_rank),
    ].join(' / '),
  ]);
  const accuracy = summary.accuracy;
  if (accuracy !== undefined && accuracy.basis !== 'placeholder') {
    valueRows.push([
      `Prediction error (zero-shot, ${accuracy.stratum})`,
      accuracy.ttft_mape === null || accuracy.itl_mape === null
        ? 'unknown: no measured evidence'
        : `typical TTFT ${fmt(accuracy.ttft_mape)} % / ITL ${fmt(accuracy.itl_mape)} % (${accuracy.points.toLocaleString('en-US')} points)`,
    ]);
  }
  const cost = summary.cost;
  const perMillion = cost?.cost_per_million_output_tokens;
  valueRows.push([
    'Cost per hour / per million output tokens',
    cost === undefined
      ? 'no price known (--price-per-gpu-hour)'
      : `${fmt(cost.cost_per_hour)} / ${perMillion === null ? '-' : fmt(perMillion as number)}`,
  ]);
  if (cost !== undefined) valueRows.push([`Price per GPU-hour (${cost.price_source})`, fmt(cost.price_per_gpu_hour)]);
  const sim = summary.simulator;
  const speed = `simulated ${formatInteger(sim.output_tokens)} output tokens in ${fmt(sim.wall_time_ms)} ms (${fmt(sim.us_per_output_token)} us per token), ${formatInteger(sim.passes)} passes, ${formatInteger(sim.preemptions)} preemptions`;
  const lines = [grid(metricRows, 1), '', grid(valueRows, 1), '', speed];
  if (accuracy?.basis === 'placeholder') {
    lines.push(`not a prediction: ${accuracy.stratum}; ${PLACEHOLDER_HINT}`);
  }
  return lines.join('\n');
}
