import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../src/config/load.js';
import type { ReplaySummary, RequestRecord } from '../src/core/report-types.js';
import { readAiperfCsv, readAiperfRun, summarizeAiperfRecords } from '../src/io/read-aiperf.js';
import { replay } from '../src/replay.js';
import {
  AIPERF_EPOCH_NS,
  aiperfFolderName,
  buildAiperfExport,
  equivalentAiperfCommand,
  formatFixed2,
  writeAiperfArtifacts,
} from '../src/io/write-aiperf-artifacts.js';

/** The worked example of docs/aiperf-files.md: closed loop at concurrency 2, ISL 100, four requests. */
function workedExampleConfig() {
  return parseRunConfig(
    {
      engine: { model: 'my/model', workers: { aggregated: { timing: { type: 'fixed', prefill_ms: 10, decode_ms: 2 } } } },
      traffic: {
        source: { type: 'synthetic', input_tokens: 100, output_tokens: 5 },
        load: { type: 'concurrency', concurrency: 2 },
        stop: { requests: 4 },
      },
    },
    'worked-example.yaml',
  );
}

function request(
  id: number,
  sentMs: number,
  tokenMs: number[],
  status: RequestRecord['status'] = 'completed',
  endMs: number | null = null,
): RequestRecord {
  const count = status === 'completed' ? tokenMs.length : 0;
  const ttft = count > 0 ? tokenMs[0] - sentMs : null;
  const latency = count > 0 ? tokenMs[count - 1] - sentMs : null;
  const itl = count >= 2 ? ((latency as number) - (ttft as number)) / (count - 1) : null;
  const received = endMs ?? (count > 0 ? tokenMs[count - 1] : null);
  return {
    request_id: id,
    session_id: id,
    turn_index: 0,
    status,
    warmup: false,
    sent_ms: sentMs,
    tokenized_ms: sentMs,
    queued_ms: sentMs,
    first_scheduled_ms: sentMs,
    first_token_emitted_ms: count > 0 ? tokenMs[0] : null,
    token_ms: tokenMs,
    token_emitted_ms: tokenMs,
    response_received_ms: received,
    response_acted_ms: received === null ? null : received + 0.8,
    input_tokens: 100,
    output_tokens: count,
    time_to_first_token: ttft,
    time_to_second_token: count >= 2 ? tokenMs[1] - tokenMs[0] : null,
    request_latency: latency,
    inter_token_latency: itl,
    output_token_throughput_per_user: itl !== null && itl > 0 ? 1000 / itl : null,
    e2e_output_token_throughput: latency !== null && latency > 0 ? count / (latency / 1000) : null,
  };
}

/** A: 5 tokens, B: 4 tokens, C: one token on A's slot, D: fails (HTTP 500 in the notes) on B's slot. */
const WORKED_RECORDS: RequestRecord[] = [
  request(0, 0, [50, 70, 90, 110, 130]),
  { ...request(1, 0, [60, 85, 120, 150]), response_acted_ms: 150.6 },
  request(2, 130.8, [170.8]),
  request(3, 150.6, [], 'rejected', 160),
];

/** The summary is only a fallback when there are no records; the writer uses the records. */
function placeholderSummary(config: unknown): ReplaySummary {
  return {
    metrics: {},
    run: {
      request_count: 3,
      error_request_count: 1,
      incomplete_request_count: 0,
      benchmark_duration_s: 0.1708,
      request_throughput: 0,
      output_token_throughput: 0,
      input_token_throughput: 0,
      total_token_throughput: 0,
      worker_seconds: 0,
      gpu_hours: 0,
    },
    ttft_stages: { mean_frontend_ms: 0, mean_tokenization_ms: 0, mean_queue_ms: 0, mean_prefill_ms: 0, mean_detokenization_ms: 0 },
    simulator: { wall_time_ms: 0, us_per_output_token: 0, output_tokens: 10, passes: 0, preemptions: 0, virtual_end_ms: 170.8 },
    deployment: { gpus: 1, weights_gib_per_gpu: null, kv_cache_tokens_per_rank: null },
    config,
  };
}

/** AIPerf's CSV of the worked example, row for row. */
const NOTES_CSV_ROWS = `Request Latency (error-adjusted) (ms),,40.00,,,40.00,40.00,40.00,130.00,150.00,150.00,,,,
Time to First Token (error-adjusted) (ms),,40.00,,,40.00,40.00,40.00,50.00,60.00,60.00,,,,
E2E Output Token Throughput (tokens/sec/user),30.04,25.00,38.46,90.13,25.03,25.17,25.33,25.83,26.67,32.56,36.10,37.28,38.23,5.99
Error Input Sequence Length (tokens),100.00,100.00,100.00,100.00,100.00,100.00,100.00,100.00,100.00,100.00,100.00,100.00,100.00,0.00
Input Sequence Length (tokens),100.00,100.00,100.00,300.00,100.00,100.00,100.00,100.00,100.00,100.00,100.00,100.00,100.00,0.00
Inter Chunk Latency (ms),24.29,20.00,35.00,170.00,20.00,20.00,20.00,20.00,20.00,27.50,32.00,33.50,34.70,5.62
Inter Token Latency (ms),25.00,20.00,30.00,50.00,20.10,20.50,21.00,22.50,25.00,27.50,29.00,29.50,29.90,5.00
Output Sequence Length (tokens),3.33,1.00,5.00,10.00,1.06,1.30,1.60,2.50,4.00,4.50,4.80,4.90,4.98,1.70
Output Token Throughput Per User (tokens/sec/user),41.67,33.33,50.00,83.33,33.50,34.17,35.00,37.50,41.67,45.83,48.33,49.17,49.83,8.33
Prefill Throughput Per User (tokens/sec/user),2055.56,1666.67,2500.00,6166.67,1673.33,1700.00,1733.33,1833.33,2000.00,2250.00,2400.00,2450.00,2490.00,342.47
Request Latency (ms),106.67,40.00,150.00,320.00,41.80,49.00,58.00,85.00,130.00,140.00,146.00,148.00,149.60,47.84
Time to First Token (ms),50.00,40.00,60.00,150.00,40.20,41.00,42.00,45.00,50.00,55.00,58.00,59.00,59.80,8.16
Time to Second Token (ms),22.50,20.00,25.00,45.00,20.05,20.25,20.50,21.25,22.50,23.75,24.50,24.75,24.95,2.50
Benchmark Duration (sec),0.17
Completed Requests (Success + Error),4.00
Error Request Count,1.00
Input Token Throughput (tokens/sec),1756.44
Output Token Throughput (tokens/sec),58.55
Request Count,3.00
Request Error Rate (%),25.00
Request Throughput (requests/sec),17.56
Total Error Input Sequence Length (tokens),100.00
Total Input Sequence Length (tokens),300.00
Total Output Sequence Length (tokens),10.00
Total Token Throughput (tokens/sec),1814.99`.split('\n');

describe('writing a simulated run in the AIPerf layout', () => {
  it('names the folder as AIPerf names its artifact folders', () => {
    const config = workedExampleConfig();
    expect(aiperfFolderName(config)).toBe('servesim-my_model-concurrency2');
    const rate = parseRunConfig(
      {
        engine: { model: 'Qwen/Qwen3-32B', workers: { aggregated: { timing: { type: 'fixed', prefill_ms: 10, decode_ms: 2 } } } },
        traffic: {
          source: { type: 'synthetic', input_tokens: 10, output_tokens: 5 },
          load: { type: 'poisson', requests_per_second: 2.5 },
          stop: { requests: 4 },
        },
      },
      'rate.yaml',
    );
    expect(aiperfFolderName(rate)).toBe('servesim-Qwen_Qwen3-32B-request_rate2.5');
  });

  it('formats numbers as Python %.2f does, ties to even', () => {
    expect(formatFixed2(0.125)).toBe('0.12');
    expect(formatFixed2(0.375)).toBe('0.38');
    expect(formatFixed2(2.675)).toBe('2.67');
    expect(formatFixed2(1814.985)).toBe('1814.98');
    expect(formatFixed2(310 / 0.1708)).toBe('1814.99');
    expect(formatFixed2(-21.09375)).toBe('-21.09');
    expect(formatFixed2(100)).toBe('100.00');
    expect(formatFixed2(Infinity)).toBe('');
  });

  it('writes the worked example of the notes (section 3.5) and reads the same numbers back', () => {
    const config = workedExampleConfig();
    const dir = join(mkdtempSync(join(tmpdir(), 'aiperf-write-')), aiperfFolderName(config));
    const written = writeAiperfArtifacts(dir, placeholderSummary(config), WORKED_RECORDS, config);
    expect(written.files.map((file) => file.slice(dir.length + 1))).toEqual([
      'profile_export_aiperf.json',
      'profile_export_aiperf.csv',
      'profile_export.jsonl',
    ]);

    // The CSV has every row of the notes' CSV, to the cent, CRLF line ends.
    const csvText = readFileSync(join(dir, 'profile_export_aiperf.csv'), 'utf8');
    expect(csvText.endsWith('\r\n')).toBe(true);
    expect(csvText.replace(/\r\n/g, '').includes('\n')).toBe(false);
    const csvRows = csvText.split('\r\n');
    for (const row of NOTES_CSV_ROWS) expect(csvRows, row).toContain(row);
    expect(csvRows[0]).toBe('Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std');

    const run = readAiperfRun(dir, { records: true });
    const metrics = run.summary.metrics;
    expect(run.summary.layout).toBe('count-sum');
    expect(run.load).toMatchObject({ concurrency: 2, isl: 100, osl: 5, requestCount: 4, model: 'my/model' });
    expect(run.load.sources.concurrency).toBe('input_config');
    const ttft = metrics.time_to_first_token.stats;
    expect(ttft.avg).toBe(50);
    expect(ttft.p25).toBe(45);
    expect(ttft.p99).toBeCloseTo(59.8, 12);
    expect(ttft.std).toBeCloseTo(8.16496580927726, 12);
    expect(ttft.count).toBe(3);
    expect(metrics.inter_token_latency.stats).toMatchObject({ avg: 25, count: 2, sum: 50 });
    expect(metrics.time_to_second_token.stats.count).toBe(2);
    expect(metrics.inter_chunk_latency.stats.count).toBe(7);
    expect(metrics.benchmark_duration.stats.avg).toBeCloseTo(0.1708, 12);
    expect(metrics.request_throughput.stats.avg).toBeCloseTo(3 / 0.1708, 9);
    expect(metrics.output_token_throughput.stats.avg).toBeCloseTo(10 / 0.1708, 9);
    expect(metrics.input_token_throughput.stats.avg).toBeCloseTo(300 / 0.1708, 9);
    expect(metrics.total_token_throughput.stats.avg).toBeCloseTo(310 / 0.1708, 9);
    expect(metrics.request_error_rate.stats.avg).toBe(25);
    expect(metrics.error_request_count.stats.avg).toBe(1);
    expect(metrics.e2e_output_token_throughput.stats.max).toBeCloseTo(5 / 0.13, 9);
    expect(metrics.prefill_throughput_per_user.stats.min).toBeCloseTo(100 / 0.06, 9);
    const adjusted = metrics.adj_time_to_first_token.stats;
    expect([adjusted.p25, adjusted.p50, adjusted.p75, adjusted.p90, adjusted.p99]).toEqual([50, 60, 60, Infinity, Infinity]);
    expect(adjusted.count).toBe(4);

    // The CSV read back gives the JSON's numbers.
    const csv = readAiperfCsv(join(dir, 'profile_export_aiperf.csv'));
    expect(Object.keys(csv.metrics).sort()).toEqual(Object.keys(metrics).sort());
    for (const [tag, metric] of Object.entries(csv.metrics)) {
      for (const [stat, value] of Object.entries(metric.stats)) {
        const jsonValue = metrics[tag].stats[stat as keyof typeof metric.stats] as number;
        if (!Number.isFinite(jsonValue)) expect(value, `${tag}.${stat}`).toBe(jsonValue);
        else expect(Math.abs(value - jsonValue), `${tag}.${stat}`).toBeLessThanOrEqual(0.005);
      }
    }

    // The JSONL read back gives the summary again, with exact nanosecond timestamps.
    const records = run.records ?? [];
    expect(records).toHaveLength(4);
    const c = records.find((record) => record.metrics.time_to_first_token === 40);
    expect(c?.requestStartNs).toBe(AIPERF_EPOCH_NS + 130_800_000n);
    expect(c?.requestEndNs).toBe(AIPERF_EPOCH_NS + 170_800_000n);
    expect(c?.metrics.inter_token_latency).toBeUndefined();
    expect(c?.metrics.inter_chunk_latency).toBeUndefined();
    expect(c?.workerId).toBe('slot_0');
    const d = records.find((record) => record.error !== null);
    expect(d?.error).toEqual({ code: 400, type: 'BadRequestError', message: expect.any(String) });
    expect(d?.metrics).toEqual({ error_isl: 100 });
    expect(d?.workerId).toBe('slot_1');
    const recomputed = summarizeAiperfRecords(records);
    for (const [tag, metric] of Object.entries(metrics)) {
      const again = recomputed[tag];
      expect(again, tag).toBeDefined();
      for (const [stat, value] of Object.entries(metric.stats)) {
        const recomputedValue = again.stats[stat as keyof typeof metric.stats] as number;
        if (!Number.isFinite(value)) expect(recomputedValue, `${tag}.${stat}`).toBe(value);
        else expect(recomputedValue, `${tag}.${stat}`).toBeCloseTo(value, 9);
      }
    }
  });

  it('writes the same bytes for the same run', () => {
    const config = workedExampleConfig();
    const first = buildAiperfExport(placeholderSummary(config), WORKED_RECORDS, config);
    const second = buildAiperfExport(placeholderSummary(config), [...WORKED_RECORDS].reverse(), config);
    expect(second.jsonText).toBe(first.jsonText);
    expect(second.csvText).toBe(first.csvText);
    expect((second.jsonlLines ?? []).join('')).toBe((first.jsonlLines ?? []).join(''));
    const document = JSON.parse(first.jsonText) as Record<string, unknown>;
    expect(document.start_time).toBe('2023-11-14T22:13:20.000000');
    expect(document.end_time).toBe('2023-11-14T22:13:20.170800');
    expect(document.aiperf_version).toBe('servesim-0.1.0');
    expect((document.run_info as { cli_command: string }).cli_command).toBe(
      "aiperf profile --model 'my/model' --endpoint-type chat --streaming --concurrency 2 --synthetic-input-tokens-mean 100 --synthetic-input-tokens-stddev 0 --output-tokens-mean 5 --output-tokens-stddev 0 --request-count 4 --num-dataset-entries 4",
    );
    // A dataset of entries is asked for as such; without one, as many entries as requests (AIPerf repeats 100 by default).
    const entries = {
      ...config,
      traffic: { ...config.traffic, source: { ...config.traffic.source, dataset_entries: 3 } },
    } as typeof config;
    expect(equivalentAiperfCommand(entries)).toMatch(/ --request-count 4 --num-dataset-entries 3 --dataset-sampling-strategy shuffle$/);
    const document3 = JSON.parse(buildAiperfExport(placeholderSummary(entries), WORKED_RECORDS, entries).jsonText) as {
      input_config: { datasets: Record<string, unknown>[] };
    };
    expect(document3.input_config.datasets[0]).toMatchObject({ entries: 3, sampling: 'shuffle' });
  });

  it('leaves warmup and incomplete requests out', () => {
    const config = workedExampleConfig();
    const warm = { ...request(4, 200, [210, 220]), warmup: true };
    const unfinished = { ...request(5, 300, [310]), status: 'incomplete' as const };
    const exported = buildAiperfExport(placeholderSummary(config), [...WORKED_RECORDS, warm, unfinished], config);
    const plain = buildAiperfExport(placeholderSummary(config), WORKED_RECORDS, config);
    expect(exported.csvText).toBe(plain.csvText);
    expect(exported.jsonlLines ?? []).toHaveLength(4);
  });

  it('writes a real replay whose AIPerf files agree with its summary', () => {
    const config = parseRunConfig(
      {
        engine: {
          model: 'Qwen/Qwen3-32B',
          context_length: 900,
          workers: {
            aggregated: {
              timing: {
                type: 'linear',
                base_ms: 5,
                prefill_token_us: 30,
                prefill_pair_ns: 0,
                decode_request_us: 40,
                decode_kv_token_ns: 2,
              },
            },
          },
          detokenization: { workers: 1, base_ms: 0.2, per_output_us: 5 },
        },
        traffic: {
          source: { type: 'synthetic', input_tokens: 1000, output_tokens: 64, random_range_ratio: 0.5, seed: 3 },
          load: { type: 'concurrency', concurrency: 6, response_overhead: { base_ms: 1.4, per_output_token_us: 3.65 } },
          stop: { requests: 60 },
        },
        report: { warmup_requests: 6 },
      },
      'replay.yaml',
    );
    const { summary, requests } = replay(config, { baseDir: '.', perRequest: true });
    const dir = join(mkdtempSync(join(tmpdir(), 'aiperf-replay-')), aiperfFolderName(config));
    writeAiperfArtifacts(dir, summary, requests, config);
    const run = readAiperfRun(dir, { records: true });
    const metrics = run.summary.metrics;
    for (const tag of [
      'time_to_first_token',
      'time_to_second_token',
      'request_latency',
      'inter_token_latency',
      'output_sequence_length',
      'input_sequence_length',
    ] as const) {
      const expected = summary.metrics[tag];
      expect(expected, tag).toBeDefined();
      for (const stat of ['avg', 'min', 'max', 'p1', 'p50', 'p90', 'p99', 'std', 'count'] as const) {
        expect(metrics[tag].stats[stat], `${tag}.${stat}`).toBeCloseTo((expected as NonNullable<typeof expected>)[stat], 9);
      }
    }
    expect(metrics.inter_chunk_latency.stats.count).toBe(summary.metrics.token_gap?.count);
    expect(metrics.inter_chunk_latency.stats.p99).toBeCloseTo(summary.metrics.token_gap?.p99 as number, 9);
    expect(metrics.request_count.stats.avg).toBe(summary.run.request_count);
    // Prompts of 900 tokens and more are rejected (context_length 900): failed records.
    expect(summary.run.error_request_count).toBeGreaterThan(0);
    expect(metrics.error_request_count.stats.avg).toBe(summary.run.error_request_count);
    expect(run.records?.filter((record) => record.error !== null)).toHaveLength(summary.run.error_request_count);
    expect(metrics.adj_time_to_first_token.stats.count).toBe(summary.run.request_count + summary.run.error_request_count);
    expect(metrics.benchmark_duration.stats.avg).toBeCloseTo(summary.run.benchmark_duration_s, 12);
    expect(metrics.output_token_throughput.stats.avg).toBeCloseTo(summary.run.output_token_throughput, 9);
    // Warmup requests are not exported; every other request is, and the slots chain up.
    expect(run.records).toHaveLength(60 - 6 - summary.run.incomplete_request_count);
    expect(new Set(run.records?.map((record) => record.workerId))).toEqual(new Set([0, 1, 2, 3, 4, 5].map((slot) => `slot_${slot}`)));
    expect(run.load).toMatchObject({ concurrency: 6, isl: 1000, osl: 64, requestCount: 60 });
  });
});
