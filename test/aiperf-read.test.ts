import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  InputError,
  findAiperfRunDirs,
  parseAiperfCsv,
  parseAiperfJson,
  parseAiperfJsonl,
  readAiperfCsv,
  readAiperfJson,
  readAiperfRun,
  summarizeAiperfRecords,
  type AiperfLayout,
  type AiperfMetric,
} from '../src/io/read-aiperf.js';
import { loadFromCliCommand, loadFromFolderName } from '../src/io/read-aiperf-load.js';
import { findDuplicateKey } from '../src/io/read-aiperf-errors.js';
import { tagFromHeaderCell } from '../src/io/read-aiperf-tags.js';
import { thrownBy } from './helpers/errors.js';

const FIXTURES = 'test/fixtures/aiperf';

interface FixtureCase {
  folder: string;
  layout: AiperfLayout;
  concurrency: number;
  isl: number;
  osl: number;
  errors: number;
  hasJsonl: boolean;
}

const CASES: FixtureCase[] = [
  { folder: 'aiperf-example-gpt-oss-20b-c100', layout: 'records', concurrency: 100, isl: 550, osl: 250, errors: 11, hasJsonl: true },
  {
    folder: 'aiperf-mockserver-format-fixture',
    layout: 'flat-versioned',
    concurrency: 100000,
    isl: 128,
    osl: 128,
    errors: 18586,
    hasJsonl: false,
  },
  { folder: 'mlx-qwen3-0.6b-m1/concurrency1', layout: 'count-sum', concurrency: 1, isl: 512, osl: 128, errors: 0, hasJsonl: true },
  { folder: 'mlx-qwen3-0.6b-m1/concurrency2', layout: 'count-sum', concurrency: 2, isl: 512, osl: 128, errors: 0, hasJsonl: true },
  { folder: 'mlx-qwen3-0.6b-m1/concurrency4', layout: 'count-sum', concurrency: 4, isl: 512, osl: 128, errors: 0, hasJsonl: true },
  { folder: 'mlx-qwen3-0.6b-m1/concurrency8', layout: 'count-sum', concurrency: 8, isl: 512, osl: 128, errors: 2, hasJsonl: true },
];

/** CSV cells are `%.2f`: equal to the JSON value rounded to two decimals. */
function expectCsvMatchesJson(csvValue: number, jsonValue: number, where: string): void {
  if (!Number.isFinite(jsonValue) || !Number.isFinite(csvValue)) {
    expect(csvValue, where).toBe(jsonValue);
    return;
  }
  const tolerance = 0.005 + 1e-12 * Math.abs(jsonValue);
  expect(Math.abs(csvValue - jsonValue), where).toBeLessThanOrEqual(tolerance);
}

function expectClose(actual: number | undefined, expected: number | undefined, relative: number, where: string): void {
  expect(actual, where).toBeDefined();
  expect(expected, where).toBeDefined();
  const a = actual as number;
  const e = expected as number;
  if (!Number.isFinite(e)) {
    expect(a, where).toBe(e);
    return;
  }
  expect(Math.abs(a - e), where).toBeLessThanOrEqual(relative * Math.max(1, Math.abs(e)));
}

const errorOf = (action: () => unknown): InputError => thrownBy(action, InputError);

describe('reading every real AIPerf run', () => {
  it.each(CASES)('reads $folder ($layout) with its load parameters', (fixture) => {
    const run = readAiperfRun(join(FIXTURES, fixture.folder), { records: true });
    expect(run.summary.format).toBe('json');
    expect(run.summary.layout).toBe(fixture.layout);
    expect(run.load.concurrency).toBe(fixture.concurrency);
    expect(run.load.isl).toBe(fixture.isl);
    expect(run.load.osl).toBe(fixture.osl);
    expect(run.load.sources.concurrency).toBe('input_config');
    const errors = run.summary.metrics.error_request_count?.stats.avg ?? 0;
    expect(errors).toBe(fixture.errors);
    expect(run.summary.metrics.time_to_first_token.kind).toBe('distribution');
    expect(run.summary.metrics.request_throughput.kind).toBe('single');
    expect(run.records !== undefined).toBe(fixture.hasJsonl);
    const csv = readAiperfCsv(run.files.csv as string);
    expect(csv.layout).toBe(fixture.layout);
  });

  it.each(CASES)('gives the same numbers from the CSV and the JSON of $folder', (fixture) => {
    const run = readAiperfRun(join(FIXTURES, fixture.folder));
    const json = run.summary;
    const csv = readAiperfCsv(run.files.csv as string);
    expect(Object.keys(csv.metrics).sort()).toEqual(Object.keys(json.metrics).sort());
    let compared = 0;
    for (const [tag, csvMetric] of Object.entries(csv.metrics)) {
      const jsonMetric = json.metrics[tag];
      expect(csvMetric.kind, tag).toBe(jsonMetric.kind);
      for (const [stat, csvValue] of Object.entries(csvMetric.stats)) {
        const jsonValue = jsonMetric.stats[stat as keyof AiperfMetric['stats']];
        if (jsonValue === undefined) continue; // e.g. `sum` is in the 0.8 CSV but not its JSON
        expectCsvMatchesJson(csvValue, jsonValue, `${tag}.${stat}`);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(100);
  });

  it.each(CASES.filter((fixture) => fixture.hasJsonl))('recomputes the summary statistics of $folder from its JSONL', (fixture) => {
    const run = readAiperfRun(join(FIXTURES, fixture.folder), { records: true });
    const records = run.records ?? [];
    expect(records.length).toBe(100);
    const recomputed = summarizeAiperfRecords(records);
    const summary = run.summary.metrics;
    let compared = 0;
    for (const [tag, metric] of Object.entries(recomputed)) {
      if (metric.kind !== 'distribution') continue;
      // The metrics AIPerf 0.12 derives from the credit column count failed requests too
      // (docs/aiperf-files.md), so they can only be recomputed for a run without errors.
      const fromColumns = tag === 'effective_latency' || tag === 'credit_to_start_latency';
      if (fixture.errors > 0 && fromColumns) continue;
      // The early layout had no error-adjusted rows.
      if (tag.startsWith('adj_') && fixture.layout !== 'count-sum') continue;
      const expected = summary[tag];
      expect(expected, tag).toBeDefined();
      for (const [stat, value] of Object.entries(expected.stats)) {
        const actual = metric.stats[stat as keyof AiperfMetric['stats']];
        if (fromColumns && stat !== 'count') {
          // Wall-clock columns against AIPerf's monotonic clock: equal to 1 us per request.
          expect(Math.abs((actual as number) - value), `${tag}.${stat}`).toBeLessThan(stat === 'sum' ? 0.05 : 1e-3);
        } else {
          expectClose(actual, value, 1e-9, `${tag}.${stat}`);
        }
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(50);
    expect(recomputed.request_count.stats.avg).toBe(summary.request_count.stats.avg);
    expect(recomputed.total_osl.stats.avg).toBe(summary.total_osl.stats.avg);
    expect(recomputed.total_isl.stats.avg).toBe(summary.total_isl.stats.avg);
    if (fixture.errors > 0) expect(recomputed.error_request_count.stats.avg).toBe(fixture.errors);
    // benchmark_duration = max(start + latency) - min(start): the same to the microsecond.
    expectClose(recomputed.benchmark_duration.stats.avg, summary.benchmark_duration.stats.avg, 1e-6, 'benchmark_duration');
  });

  it('checks the throughputs: over benchmark_duration in the early layout, over the phase wall time in AIPerf 0.12', () => {
    const early = readAiperfRun(join(FIXTURES, 'aiperf-example-gpt-oss-20b-c100'), { records: true });
    const earlyRecomputed = summarizeAiperfRecords(early.records ?? []);
    expectClose(earlyRecomputed.output_token_throughput.stats.avg, early.summary.metrics.output_token_throughput.stats.avg, 1e-6, 'early');
    for (const concurrency of [1, 2, 4, 8]) {
      const file = join(FIXTURES, `mlx-qwen3-0.6b-m1/concurrency${concurrency}/profile_export_aiperf.json`);
      const document = JSON.parse(readFileSync(file, 'utf8')) as { start_time: string; end_time: string };
      const wallS = (Date.parse(`${document.end_time.slice(0, 23)}Z`) - Date.parse(`${document.start_time.slice(0, 23)}Z`)) / 1000;
      const summary = readAiperfJson(file).metrics;
      const expected = (summary.total_osl.stats.avg as number) / wallS;
      expectClose(summary.output_token_throughput.stats.avg, expected, 2e-5, `concurrency ${concurrency}`);
    }
  });

  it('reads the nanosecond timestamps exactly', () => {
    const run = readAiperfRun(join(FIXTURES, 'mlx-qwen3-0.6b-m1/concurrency8'), { records: true });
    const first = (run.records ?? [])[0];
    expect(first.creditIssuedNs).toBe(1789860700966839959n);
    expect(first.requestStartNs).toBe(1789860700969903000n);
    expect(first.requestEndNs).toBe(1789860700970823583n);
    expect(first.error?.type).toBe('ClientConnectorError');
    const early = readAiperfRun(join(FIXTURES, 'aiperf-example-gpt-oss-20b-c100'), { records: true });
    const valid = (early.records ?? []).find((record) => record.error === null);
    expect(valid?.requestStartNs).toBe(1759522419159192408n);
    expect(valid?.requestEndNs).toBe(1759522427096160677n);
    expect(valid?.metrics.time_to_first_token).toBeCloseTo(1680.543782, 9);

    const line = (start: string, end: string): string =>
      `{"metadata":{"conversation_id":"c","turn_index":0,"credit_issued_ns":${start},"request_start_ns":${start},"request_end_ns":${end}},"metrics":{"request_latency":{"value":1.0,"unit":"ms"}}}`;
    const [record] = parseAiperfJsonl(line('1789860700969903001', '1789860700969903003'), 'x.jsonl');
    expect(record.requestStartNs).toBe(1789860700969903001n);
    expect((record.requestEndNs as bigint) - (record.requestStartNs as bigint)).toBe(2n);
  });

  it('finds every run folder under a folder of runs', () => {
    const dirs = findAiperfRunDirs(FIXTURES);
    expect(dirs.map((dir) => dir.replace(`${FIXTURES}/`, ''))).toEqual(CASES.map((fixture) => fixture.folder).sort());
  });
});

describe('broken copies are errors that name the file and the line or key', () => {
  const real = (folder: string, file: string): string => readFileSync(join(FIXTURES, folder, file), 'utf8');

  it('names the line of a truncated JSON summary', () => {
    const text = real('mlx-qwen3-0.6b-m1/concurrency1', 'profile_export_aiperf.json');
    const truncated = text.slice(0, 2000);
    const error = errorOf(() => parseAiperfJson(truncated, 'broken/profile_export_aiperf.json'));
    const lastLine = truncated.split('\n').length;
    expect(error.message).toContain('broken/profile_export_aiperf.json');
    expect(error.line).toBe(lastLine);
    expect(error.message).toMatch(new RegExp(`^broken/profile_export_aiperf\\.json:${lastLine}: column \\d+: the JSON ends early`));
  });

  it('names the key of a metric value that is not a number', () => {
    const document = JSON.parse(real('mlx-qwen3-0.6b-m1/concurrency1', 'profile_export_aiperf.json')) as Record<
      string,
      Record<string, unknown>
    >;
    document.time_to_first_token.p90 = 'fast';
    const error = errorOf(() => parseAiperfJson(JSON.stringify(document), 'bad.json'));
    expect(error.message).toBe('bad.json: time_to_first_token.p90: expected a number, got "fast"');
    const early = JSON.parse(real('aiperf-example-gpt-oss-20b-c100', 'profile_export_aiperf.json')) as {
      records: Record<string, Record<string, unknown>>;
    };
    early.records.ttft.avg = [1];
    expect(errorOf(() => parseAiperfJson(JSON.stringify(early), 'early.json')).message).toContain(
      'early.json: records.ttft.avg: expected a number',
    );
  });

  it('refuses a duplicated key, naming its path and line, where JSON.parse would keep the last silently', () => {
    const text = real('mlx-qwen3-0.6b-m1/concurrency1', 'profile_export_aiperf.json');
    const lines = text.split('\n');
    const at = lines.findIndex((line) => line.includes('"time_to_first_token"'));
    const avg = lines.findIndex((line, i) => i > at && /^\s*"avg":/.test(line));
    // The block's avg given twice, the second one 1000 times the first.
    const doubled = [
      ...lines.slice(0, avg + 1),
      lines[avg].replace(/"avg": ([\d.]+)/, (_m, v: string) => `"avg": ${Number(v) * 1000}`),
      ...lines.slice(avg + 1),
    ];
    const error = errorOf(() => parseAiperfJson(doubled.join('\n'), 'dup/profile_export_aiperf.json'));
    expect(error.message).toMatch(
      new RegExp(
        `^dup/profile_export_aiperf\\.json:${avg + 2}: time_to_first_token\\.avg: the key "avg" appears twice in one object \\(column \\d+\\); remove one of them$`,
      ),
    );
    // Keys that repeat in different objects are fine; an escaped spelling is the same key.
    expect(findDuplicateKey('{"a": {"k": 1}, "b": [{"k": 1}, {"k": 2}], "k": 3}')).toBeNull();
    expect(findDuplicateKey('{"records": {"ttft": {"avg": 1, "a\\u0076g": 2}}}')).toEqual({
      path: 'records.ttft.avg',
      key: 'avg',
      line: 1,
      column: 33,
    });
    expect(findDuplicateKey('{"x": "{\\"y\\": 1, \\"y\\": 2}", "l": [[1], {"q": 1, "q": 2}]}')?.path).toBe('l.1.q');
  });

  it('refuses a negative metric value, and a list where a metric block belongs, naming the key', () => {
    const document = JSON.parse(real('mlx-qwen3-0.6b-m1/concurrency1', 'profile_export_aiperf.json')) as Record<string, unknown>;
    const negative = structuredClone(document) as Record<string, Record<string, unknown>>;
    negative.time_to_first_token.avg = -12.5;
    expect(errorOf(() => parseAiperfJson(JSON.stringify(negative), 'neg.json')).message).toBe(
      'neg.json: time_to_first_token.avg: must be 0 or more (Time to First Token is never negative), got -12.5',
    );
    const list = { ...document, time_to_first_token: [12.5, 13] };
    expect(errorOf(() => parseAiperfJson(JSON.stringify(list), 'list.json')).message).toBe(
      'list.json: time_to_first_token: expected a metric block {unit, avg, ...}, got a list',
    );
    // A signed metric may be negative.
    const signed = { ...document, osl_mismatch_diff_pct: { unit: '%', avg: -2.5, min: -5, max: 0 } };
    expect(parseAiperfJson(JSON.stringify(signed), 'ok.json').metrics.osl_mismatch_diff_pct.stats.avg).toBe(-2.5);
  });

  it('refuses a negative statistic in a summary CSV at its line', () => {
    const text = real('mlx-qwen3-0.6b-m1/concurrency8', 'profile_export_aiperf.csv');
    const lines = text.split('\r\n');
    const row = lines.findIndex((line) => line.startsWith('Time to First Token (ms)'));
    const cells = lines[row].split(',');
    cells[1] = `-${cells[1]}`;
    lines[row] = cells.join(',');
    expect(errorOf(() => parseAiperfCsv(lines.join('\r\n'), 'neg.csv')).message).toMatch(
      new RegExp(
        `^neg\\.csv:${row + 1}: "Time to First Token \\(ms\\)" avg: must be 0 or more \\(Time to First Token is never negative\\), got -`,
      ),
    );
  });

  it('names the line where a CSV lacks its single-value section', () => {
    const text = real('mlx-qwen3-0.6b-m1/concurrency8', 'profile_export_aiperf.csv');
    const lines = text.split('\r\n');
    const blank = lines.indexOf('');
    const withoutSection2 = lines.slice(0, blank).join('\r\n') + '\r\n';
    const error = errorOf(() => parseAiperfCsv(withoutSection2, 'cut.csv'));
    expect(error.message).toContain(`cut.csv:${blank}: `);
    expect(error.line).toBe(blank);
    expect(error.message).toContain('Metric,Value');
    const withoutSection1 = lines.slice(blank + 1).join('\r\n');
    const error1 = errorOf(() => parseAiperfCsv(withoutSection1, 'head.csv'));
    expect(error1.message).toMatch(/^head\.csv:1: expected the statistics section header/);
    const badHeader = [...lines.slice(0, blank + 1), 'Metric,Number', ...lines.slice(blank + 2)].join('\r\n');
    expect(errorOf(() => parseAiperfCsv(badHeader, 'h.csv')).line).toBe(blank + 2);
  });

  it('names the line of a CSV cell that is not a number', () => {
    const text = real('mlx-qwen3-0.6b-m1/concurrency1', 'profile_export_aiperf.csv').replace(
      'Time to First Token (ms),525.36',
      'Time to First Token (ms),fast',
    );
    const line = text.split('\r\n').findIndex((row) => row.startsWith('Time to First Token (ms)')) + 1;
    const error = errorOf(() => parseAiperfCsv(text, 'cell.csv'));
    expect(error.message).toBe(`cell.csv:${line}: "Time to First Token (ms)" avg: expected a number, got "fast"`);
  });

  it('names the line of a JSONL line that is not JSON', () => {
    const lines = real('mlx-qwen3-0.6b-m1/concurrency2', 'profile_export.jsonl').split('\n');
    lines[2] = lines[2].slice(0, 300);
    const error = errorOf(() => parseAiperfJsonl(lines.join('\n'), 'runs/profile_export.jsonl'));
    expect(error.message).toMatch(/^runs\/profile_export\.jsonl:3: column \d+: (not valid JSON|the JSON ends early)/);
    expect(error.line).toBe(3);
    lines[2] = '[1, 2]';
    expect(errorOf(() => parseAiperfJsonl(lines.join('\n'), 'r.jsonl')).message).toBe(
      'r.jsonl:3: expected a JSON object per line, got a list',
    );
    lines[2] = '{"metadata": {"request_start_ns": "soon"}, "metrics": {}}';
    expect(errorOf(() => parseAiperfJsonl(lines.join('\n'), 'r.jsonl')).message).toBe(
      'r.jsonl:3: metadata.request_start_ns: expected a timestamp in nanoseconds, got "soon"',
    );
  });

  it('says when a folder has no AIPerf summary', () => {
    const dir = mkdtempSync(join(tmpdir(), 'aiperf-empty-'));
    expect(errorOf(() => readAiperfRun(dir)).message).toContain('no AIPerf summary here');
  });
});

describe('layouts without a real file among the fixtures', () => {
  it('reads a GenAI-Perf CSV and JSON: quoted thousands, other headers and stat order', () => {
    const dir = mkdtempSync(join(tmpdir(), 'genai-perf-'));
    const run = join(dir, 'my_model-openai-chat-concurrency16');
    mkdirSync(run);
    const csv = [
      'Metric,avg,min,max,p99,p95,p90,p75,p50,p25',
      'Time To First Token (ms),"1,234.50","1,000.00","1,500.25","1,499.00","1,450.00","1,400.00","1,300.00","1,200.00","1,100.00"',
      'Inter Token Latency (ms),12.50,10.00,15.00,14.90,14.50,14.00,13.00,12.50,11.00',
      'Request Latency (ms),"2,500.00","2,000.00","3,000.00","2,990.00","2,950.00","2,900.00","2,750.00","2,500.00","2,250.00"',
      'Output Sequence Length,128.00,120.00,130.00,130.00,130.00,129.00,129.00,128.00,127.00',
      'Input Sequence Length,"1,024.00","1,024.00","1,024.00","1,024.00","1,024.00","1,024.00","1,024.00","1,024.00","1,024.00"',
      'Output Token Throughput Per Request (tokens/sec),51.20,42.67,64.00,63.00,62.00,61.00,56.00,51.00,46.00',
      '',
      'Metric,Value',
      'Output Token Throughput (per sec),1638.4',
      'Request Throughput (per sec),12.8',
      'Request Count (count),160',
      '',
    ].join('\r\n');
    writeFileSync(join(run, 'profile_export_genai_perf.csv'), csv);
    const summary = readAiperfCsv(join(run, 'profile_export_genai_perf.csv'));
    expect(summary.layout).toBe('genai-perf');
    expect(summary.metrics.time_to_first_token.stats).toEqual({
      avg: 1234.5,
      min: 1000,
      max: 1500.25,
      p99: 1499,
      p95: 1450,
      p90: 1400,
      p75: 1300,
      p50: 1200,
      p25: 1100,
    });
    expect(summary.metrics.e2e_output_token_throughput.stats.avg).toBe(51.2);
    expect(summary.metrics.output_token_throughput).toEqual({
      tag: 'output_token_throughput',
      unit: 'tokens/sec',
      kind: 'single',
      stats: { avg: 1638.4 },
    });
    expect(summary.metrics.request_count.stats.avg).toBe(160);
    expect(summary.metrics.input_sequence_length.stats.p50).toBe(1024);

    const json = {
      time_to_first_token: {
        unit: 'ms',
        avg: 1234.5,
        p99: 1499,
        p95: 1450,
        p90: 1400,
        p75: 1300,
        p50: 1200,
        p25: 1100,
        max: 1500.25,
        min: 1000,
        std: 100,
      },
      output_token_throughput: { unit: 'tokens/sec', avg: 1638.4 },
      output_token_throughput_per_request: {
        unit: 'tokens/sec',
        avg: 51.2,
        p99: 63,
        p95: 62,
        p90: 61,
        p75: 56,
        p50: 51,
        p25: 46,
        max: 64,
        min: 42.67,
        std: 5,
      },
      request_throughput: { unit: 'requests/sec', avg: 12.8 },
      input_config: { model: ['my/model'], concurrency: 16, synthetic_input_tokens_mean: 1024, output_tokens_mean: 128, num_prompts: 160 },
    };
    writeFileSync(join(run, 'profile_export_genai_perf.json'), JSON.stringify(json));
    const read = readAiperfRun(run);
    expect(read.summary.layout).toBe('genai-perf');
    expect(read.summary.metrics.e2e_output_token_throughput.stats.p50).toBe(51);
    expect(read.load).toEqual({
      concurrency: 16,
      isl: 1024,
      osl: 128,
      requestCount: 160,
      model: 'my/model',
      sources: {
        concurrency: 'input_config',
        isl: 'input_config',
        osl: 'input_config',
        requestCount: 'input_config',
        model: 'input_config',
      },
    });
  });

  it('reads a flat JSON without schema_version (AIPerf from October 2025)', () => {
    const document = JSON.parse(
      readFileSync(join(FIXTURES, 'aiperf-mockserver-format-fixture/profile_export_aiperf.json'), 'utf8'),
    ) as Record<string, unknown>;
    delete document.schema_version;
    delete document.aiperf_version;
    const summary = parseAiperfJson(JSON.stringify(document), 'flat/profile_export_aiperf.json');
    expect(summary.layout).toBe('flat');
    expect(summary.metrics.time_to_first_token.stats.p10).toBeCloseTo(595.6656786, 6);
  });

  it('reads a GPU telemetry section and treats empty error-adjusted cells as infinite', () => {
    const text = readFileSync(join(FIXTURES, 'mlx-qwen3-0.6b-m1/concurrency8/profile_export_aiperf.csv'), 'utf8');
    const withGpu = `${text}http://localhost:9400/metrics,0,NVIDIA H100 80GB HBM3,GPU-1234,linux,GPU Power Usage (W),650.50,600.00,700.00,,,,,,,,,,,10.00\r\n`;
    const summary = parseAiperfCsv(withGpu, 'gpu.csv');
    expect(summary.telemetry).toEqual([
      {
        endpoint: 'http://localhost:9400/metrics',
        gpuIndex: '0',
        gpuName: 'NVIDIA H100 80GB HBM3',
        gpuUuid: 'GPU-1234',
        metric: 'GPU Power Usage (W)',
        unit: 'W',
        labels: { Platform: 'linux' },
        stats: { avg: 650.5, min: 600, max: 700, std: 10 },
      },
    ]);
    const adjusted = summary.metrics.adj_time_to_first_token;
    expect(adjusted.stats.p95).toBe(3938.49);
    expect(adjusted.stats.p99).toBe(Infinity);
    expect(adjusted.stats.avg).toBe(Infinity);
    const sweep = summary.metrics.effective_concurrency;
    expect(sweep.stats.p1).toBeUndefined();
    expect(sweep.stats.p50).toBe(8);
  });

  it('maps headers with parentheses and without units to tags', () => {
    expect(tagFromHeaderCell('Effective Latency (CO-aware) (ms)')).toMatchObject({ tag: 'effective_latency', unit: 'ms' });
    expect(tagFromHeaderCell('Completed Requests (Success + Error)')).toMatchObject({ tag: 'completed_request_count', unit: undefined });
    expect(tagFromHeaderCell('HTTP Duration (excl. conn) (ms)').tag).toBe('http_req_duration');
    expect(tagFromHeaderCell('HTTP Waiting (TTFB) (ms)').tag).toBe('http_req_waiting');
    expect(tagFromHeaderCell('OSL Mismatch Diff % (%)')).toMatchObject({ tag: 'osl_mismatch_diff_pct', unit: '%' });
    expect(tagFromHeaderCell('Inter Token Latency (error-adjusted) (ms)')).toMatchObject({
      tag: 'adj_inter_token_latency',
      isAdjusted: true,
    });
    expect(tagFromHeaderCell('Effective Concurrency')).toMatchObject({ tag: 'effective_concurrency', isKnown: true });
    expect(tagFromHeaderCell('Brand New Metric (ms)')).toMatchObject({ tag: 'brand_new_metric', unit: 'ms', isKnown: false });
  });

  it('finds load parameters in a command line and in a folder name', () => {
    expect(
      loadFromCliCommand(
        "aiperf profile --model 'Qwen/Qwen3-0.6B' --concurrency 8 --synthetic-input-tokens-mean 512 --output-tokens-mean=128 --request-count 100",
      ),
    ).toEqual({
      model: 'Qwen/Qwen3-0.6B',
      concurrency: 8,
      isl: 512,
      osl: 128,
      requestCount: 100,
    });
    expect(loadFromFolderName('Qwen_Qwen3-0.6B-openai-chat-concurrency8')).toEqual({ concurrency: 8 });
    expect(loadFromFolderName('model-openai-chat-request_rate2.5')).toEqual({ requestRate: 2.5 });
  });
});
