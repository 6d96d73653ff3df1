import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../src/config/errors.js';
import { parseTabularPoints, readTabularPoints } from '../src/io/read-tabular.js';
import { displayPath } from '../src/io/paths.js';
import { readMeasuredPoints, readSimPoints } from '../src/score/score-inputs.js';
import { thrownBy } from './helpers/errors.js';

const SILICON = 'data/silicon/aic-silicon-sample.csv';
const DYNOSIM = 'data/silicon/dynosim-b200-minimax-m25-tp4-isl1k-osl1k.csv';

const errorOf = (action: () => unknown): InputError => thrownBy(action, InputError);

describe('measured points from a table', () => {
  it('maps the silicon columns and selects one deployment', () => {
    const table = readTabularPoints(SILICON, {
      select: [
        { column: 'model_path', value: 'MiniMaxAI/MiniMax-M2.5' },
        { column: 'system', value: 'b300_sxm' },
        { column: 'backend_version', value: '0.19.0' },
        { column: 'precision', value: 'fp8' },
        { column: 'tp_size', value: '4' },
        { column: 'attention_dp_size', value: '1' },
        { column: 'isl', value: '1024' },
      ],
    });
    expect(table.mapping).toEqual({
      batch_size: 'concurrency',
      isl: 'isl',
      osl: 'osl',
      silicon_ttft_ms: 'time_to_first_token.avg',
      silicon_tpot_ms: 'inter_token_latency.avg',
    });
    expect(table.points.map((point) => point.key.concurrency as number).sort((a, b) => a - b)).toEqual([4, 8, 16, 32, 64, 128, 256, 512]);
    const c4 = table.points.find((point) => point.key.concurrency === 4);
    expect(c4).toMatchObject({
      key: { concurrency: 4, isl: 1024, osl: 1024 },
      metrics: { 'time_to_first_token.avg': 52.01477759692352, 'inter_token_latency.avg': 7.887534757407803 },
    });
    expect(c4?.line).toBe(14);
    expect(table.skippedRows).toBe(4841 - 8);
  });

  it('reads the hardware rows of the digital-twin table, with an extra mapped metric', () => {
    const table = readTabularPoints(DYNOSIM, {
      select: [{ column: 'source', value: 'hardware' }],
      mapping: { tps_user: 'output_token_throughput_per_user.avg' },
    });
    expect(table.points.map((point) => point.key)).toEqual([4, 8, 16, 32, 64].map((concurrency) => ({ concurrency })));
    expect(table.points[0].metrics).toEqual({
      'time_to_first_token.avg': 121.5117,
      'inter_token_latency.avg': 9.5795,
      'output_token_throughput_per_user.avg': 104.3898,
    });
  });

  it('lets an explicit mapping replace a default column for the same target', () => {
    const table = parseTabularPoints('n,ttft_ms,p90_ms\n1,10,20\n2,11,30\n', 't.csv', {
      mapping: { n: 'concurrency', p90_ms: 'time_to_first_token.avg' },
    });
    expect(table.mapping).toEqual({ n: 'concurrency', p90_ms: 'time_to_first_token.avg' });
    expect(table.points[1].metrics).toEqual({ 'time_to_first_token.avg': 30 });
  });

  it('names the file and line of a bad cell, a missing column and a duplicate point', () => {
    const text = 'concurrency,ttft_ms\n1,10\n2,fast\n';
    expect(errorOf(() => parseTabularPoints(text, 'm.csv')).message).toBe('m.csv:3: ttft_ms: expected a number, got "fast"');
    expect(errorOf(() => parseTabularPoints('concurrency,ttft_ms\n1,10\n2\n', 'short.csv')).message).toBe(
      'short.csv:3: the row has 1 cells; the header has 2',
    );
    expect(errorOf(() => parseTabularPoints(text, 'm.csv', { mapping: { nope: 'isl' } })).message).toMatch(
      /^m\.csv:1: no column "nope" to map to isl \(columns: concurrency, ttft_ms\)$/,
    );
    expect(errorOf(() => parseTabularPoints('concurrency,ttft_ms\n1,10\n1,12\n', 'dup.csv')).message).toBe(
      'dup.csv:3: the same point (concurrency=1) as line 2; select one deployment with --select COLUMN=VALUE',
    );
    expect(errorOf(() => parseTabularPoints('a,b\n1,2\n', 'nokey.csv')).message).toMatch(/^nokey\.csv:1: no column maps to a load key/);
    expect(errorOf(() => readTabularPoints(SILICON, { select: [{ column: 'gpu', value: 'h100' }] })).message).toMatch(
      /:1: no column "gpu" to select on/,
    );
  });

  it('names a table with a header and no rows, also beside other measured files', () => {
    expect(errorOf(() => parseTabularPoints('concurrency,ttft_ms\n', 'empty.csv')).message).toBe(
      'empty.csv:1: has a header and no rows: no measured point in it',
    );
    const dir = mkdtempSync(join(tmpdir(), 'servesim-measured-'));
    try {
      writeFileSync(join(dir, 'full.csv'), 'concurrency,ttft_ms\n1,12\n');
      writeFileSync(join(dir, 'empty.csv'), 'concurrency,ttft_ms\n');
      expect(errorOf(() => readMeasuredPoints([join(dir, 'full.csv'), join(dir, 'empty.csv')])).message).toBe(
        `${join(dir, 'empty.csv')}:1: has a header and no rows: no measured point in it`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a load key that cannot be one, and a negative metric, at the line', () => {
    const bad = (cell: string, column = 'concurrency') =>
      errorOf(() => parseTabularPoints(`${column},ttft_ms\n1,12\n${cell},12\n`, 'm.csv')).message;
    expect(bad('-2')).toBe('m.csv:3: concurrency: the key concurrency must be a positive whole number, got "-2"');
    expect(bad('0')).toBe('m.csv:3: concurrency: the key concurrency must be a positive whole number, got "0"');
    expect(bad('2.5')).toBe('m.csv:3: concurrency: the key concurrency must be a positive whole number, got "2.5"');
    expect(bad('high')).toBe('m.csv:3: concurrency: the key concurrency must be a positive whole number, got "high"');
    expect(bad('-1', 'request_rate')).toBe(
      'm.csv:3: request_rate: the key request_rate must be a positive number (requests per second), got "-1"',
    );
    expect(bad('-1', 'isl')).toBe('m.csv:3: isl: the key isl must be a number of tokens, 0 or more, got "-1"');
    expect(errorOf(() => parseTabularPoints('concurrency,ttft_ms\n1,12\n2,-3\n', 'm.csv')).message).toBe(
      'm.csv:3: ttft_ms: time_to_first_token.avg must be 0 or more (Time to First Token is never negative), got -3',
    );
  });

  it('keeps an empty metric cell as a missing measured value', () => {
    const table = parseTabularPoints('concurrency,ttft_ms,tpot_ms\n1,,5\n', 'e.csv');
    expect(table.points[0].metrics).toEqual({ 'time_to_first_token.avg': null, 'inter_token_latency.avg': 5 });
  });

  it('reads AIPerf folders and tables side by side, saying how each was read', () => {
    const measured = readMeasuredPoints(
      ['test/fixtures/aiperf/mlx-qwen3-0.6b-m1', 'test/fixtures/aiperf/aiperf-example-gpt-oss-20b-c100', DYNOSIM],
      {
        select: [{ column: 'source', value: 'hardware' }],
      },
    );
    expect(measured.points).toHaveLength(4 + 1 + 5);
    expect(measured.notes[4]).toMatch(
      /aiperf-example-gpt-oss-20b-c100: AIPerf records layout \(json\); concurrency from input_config, isl from metrics, osl from input_config/,
    );
    expect(measured.notes[5]).toMatch(
      /5 rows selected by source=hardware \(10 left out\); columns concurrency -> concurrency, ttft_ms -> time_to_first_token.avg, tpot_ms -> inter_token_latency.avg/,
    );
    expect(measured.points[0].metrics.time_to_first_token.p90).toBeCloseTo(524.9488331, 6);
  });
});

describe('simulated points', () => {
  function sweepDir(lines: string[], plan?: object): string {
    const dir = mkdtempSync(join(tmpdir(), 'servesim-sim-'));
    writeFileSync(join(dir, 'points.jsonl'), `${lines.join('\n')}\n`);
    if (plan) writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan));
    return dir;
  }
  const summary = (concurrency: number, ttft: number) => ({
    metrics: { time_to_first_token: { unit: 'ms', avg: ttft, p50: ttft, count: 4 }, token_gap: { unit: 'ms', avg: 2, count: 10 } },
    run: {
      request_count: 4,
      error_request_count: 0,
      benchmark_duration_s: 1,
      request_throughput: 4,
      output_token_throughput: 40,
      input_token_throughput: 400,
      total_token_throughput: 440,
    },
    config: {
      traffic: { source: { type: 'synthetic', input_tokens: 100, output_tokens: 10 }, load: { type: 'concurrency', concurrency } },
    },
  });

  it('takes keys from the effective config and the swept axes, and lists failed points', () => {
    const dir = sweepDir(
      [
        JSON.stringify({
          id: 'a',
          overrides: { 'traffic.load.concurrency': 1, 'engine.detokenization.workers': 2 },
          status: 'ok',
          summary: summary(1, 10),
          error: null,
        }),
        JSON.stringify({
          id: 'b',
          overrides: { 'traffic.load.concurrency': 2, 'engine.detokenization.workers': 2 },
          status: 'failed',
          summary: null,
          error: 'worker crashed',
        }),
      ],
      { axes: ['traffic.load.concurrency', 'engine.detokenization.workers'] },
    );
    const side = readSimPoints(dir);
    expect(side.kind).toBe('sweep');
    expect(side.points).toHaveLength(1);
    expect(side.points[0].key).toEqual({ concurrency: 1, isl: 100, osl: 10, 'engine.detokenization.workers': 2 });
    expect(side.points[0].metrics.inter_chunk_latency.avg).toBe(2);
    expect(side.points[0].metrics.output_token_throughput).toEqual({ avg: 40 });
    expect(side.points[0].metrics.time_to_first_token.sum).toBe(40);
    expect(side.skipped).toEqual([{ source: `${displayPath(join(dir, 'points.jsonl'))}:2 (b)`, reason: 'status failed: worker crashed' }]);
  });

  it('skips records of ids that plan.json does not list (an earlier version of the sweep)', () => {
    const dir = sweepDir(
      [
        JSON.stringify({ id: 'old', overrides: { 'traffic.load.concurrency': 1 }, status: 'ok', summary: summary(1, 99), error: null }),
        JSON.stringify({ id: 'a', overrides: { 'traffic.load.concurrency': 1 }, status: 'ok', summary: summary(1, 10), error: null }),
      ],
      { axes: ['traffic.load.concurrency'], points: [{ index: 0, id: 'a', overrides: { 'traffic.load.concurrency': 1 } }] },
    );
    const side = readSimPoints(dir);
    expect(side.points).toHaveLength(1);
    expect(side.points[0].metrics.time_to_first_token.avg).toBe(10);
    expect(side.skipped).toEqual([
      {
        source: `${displayPath(join(dir, 'points.jsonl'))}:1 (old)`,
        reason: `not in ${displayPath(join(dir, 'plan.json'))} (a point of an earlier version of the sweep file)`,
      },
    ]);
  });

  it('names the line of a damaged points.jsonl', () => {
    const dir = sweepDir([JSON.stringify({ id: 'a', overrides: {}, status: 'ok', summary: summary(1, 10) }), '{"id": "b", "overr']);
    expect(errorOf(() => readSimPoints(dir)).message).toMatch(/points\.jsonl:2: column \d+: the JSON ends early/);
    const bad = sweepDir([JSON.stringify({ id: 'a', overrides: {}, status: 'ok', summary: { metrics: {} } })]);
    expect(errorOf(() => readSimPoints(bad)).message).toMatch(
      /points\.jsonl:1: summary\.run: expected a mapping, got nothing; the record is damaged$/,
    );
  });

  it('reads a folder of replay results (summary.json files)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'servesim-replays-'));
    for (const concurrency of [1, 2]) {
      mkdirSync(join(dir, `c${concurrency}`));
      writeFileSync(join(dir, `c${concurrency}`, 'summary.json'), JSON.stringify(summary(concurrency, 10 * concurrency)));
    }
    const side = readSimPoints(dir);
    expect(side.kind).toBe('replay results');
    expect(side.points.map((point) => [point.key.concurrency, point.metrics.time_to_first_token.avg])).toEqual([
      [1, 10],
      [2, 20],
    ]);
  });
});
