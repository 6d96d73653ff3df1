/**
 * End to end: sweep a small grid with the real sweep runner (compiled pool task, so
 * `npm run build` first), score it against measured points (the silicon CSV, real AIPerf
 * runs) and check the report files and the exit codes.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadRunConfig } from '../src/config/load.js';
import { aiperfFolderName, writeAiperfArtifacts } from '../src/io/write-aiperf-artifacts.js';
import { replay } from '../src/replay.js';
import { runScore, ScoreUsageError } from '../src/score/run-score.js';
import type { ScoreResult } from '../src/score/score-result.js';
import { runSweep } from '../src/sweep/run-sweep.js';

const REPO = resolve(import.meta.dirname, '..');
const POOL_TASK_JS = join(REPO, 'dist/src/sweep/pool-task.js');
const SILICON = join(REPO, 'data/silicon/aic-silicon-sample.csv');
const MLX_RUNS = join(REPO, 'test/fixtures/aiperf/mlx-qwen3-0.6b-m1');

/** MiniMax-M2.5 FP8, TP4, vLLM 0.19.0 on B300: one deployment of the silicon sample. */
const DEPLOYMENT = [
  'backend=vllm',
  'backend_version=0.19.0',
  'model_path=MiniMaxAI/MiniMax-M2.5',
  'system=b300_sxm',
  'precision=fp8',
  'mode=agg',
  'tp_size=4',
  'attention_dp_size=1',
  'moe_ep_size=1',
];

function runConfigYaml(model: string, timing: string): string {
  return `engine:
  model: ${model}
  workers:
    aggregated:
      parallelism: {replicas: 1, tensor: 4, attention_data: 1}
      timing: ${timing}
traffic:
  source: {type: synthetic, input_tokens: 1024, output_tokens: 1024}
  load: {type: concurrency, concurrency: 4}
  stop: {requests_per_load_unit: 2}
`;
}

const LINEAR = '{type: linear, base_ms: 7.5, prefill_token_us: 20, prefill_pair_ns: 0, decode_request_us: 100, decode_kv_token_ns: 1}';
const FIXED = '{type: fixed, prefill_ms: 40, decode_ms: 9}';

async function sweep(dir: string, name: string, timing: string, grid: string, model = 'MiniMaxAI/MiniMax-M2.5'): Promise<string> {
  writeFileSync(join(dir, `${name}-run.yaml`), runConfigYaml(model, timing));
  const sweepFile = join(dir, `${name}.yaml`);
  writeFileSync(sweepFile, `name: ${name}\nbase: ${name}-run.yaml\n${grid}`);
  const outDir = join(dir, name);
  const result = await runSweep({ sweepFile, outDir, poolThreads: 1, note: () => {}, chart: false });
  expect(result.failed).toEqual([]);
  return outDir;
}

const SILICON_GRID = `grid:
  traffic.load.concurrency: [4, 8, 16, 32, 64]
zip:
  traffic.source.input_tokens: [1024, 8192]
  traffic.source.output_tokens: [1024, 1024]
`;

let work = '';
let linearSweep = '';
let fixedSweep = '';

beforeAll(async () => {
  if (!existsSync(POOL_TASK_JS)) throw new Error(`${POOL_TASK_JS} is missing: run \`npm run build\` before this test`);
  work = mkdtempSync(join(tmpdir(), 'servesim-score-'));
  linearSweep = await sweep(work, 'linear', LINEAR, SILICON_GRID);
  fixedSweep = await sweep(work, 'fixed', FIXED, SILICON_GRID);
}, 120_000);

function readJson(file: string): ScoreResult {
  return JSON.parse(readFileSync(file, 'utf8')) as ScoreResult;
}

describe('score a sweep against measured points', () => {
  it('scores a sweep against one deployment of the silicon CSV and writes every report file', async () => {
    let printed = '';
    const out = join(work, 'score-silicon');
    const outcome = await runScore({
      sim: linearSweep,
      measured: [SILICON],
      select: DEPLOYMENT,
      metrics: ['time_to_first_token.avg,inter_token_latency.avg', 'output_token_throughput'],
      groupBy: ['isl,osl'],
      out,
      print: (text) => void (printed += text),
    });
    expect(outcome.exitCode).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['report.html', 'report.md', 'scores.csv', 'scores.json']);

    const scores = readJson(join(out, 'scores.json'));
    expect(scores.match.keys).toEqual(['concurrency', 'isl', 'osl']);
    expect(scores.match.load_key).toBe('concurrency');
    const ttft = scores.metrics['time_to_first_token.avg'];
    const itl = scores.metrics['inter_token_latency.avg'];
    expect(ttft.points).toBe(10);
    expect(itl.points).toBe(10);
    // The silicon CSV has no throughput column: matched, reported, not scored.
    expect(scores.metrics.output_token_throughput).toMatchObject({ points: 0, unscored: 10, mape: null });
    // 8 measured concurrencies x 2 lengths; the sweep stops at 64.
    expect(scores.unmatched.sim).toEqual([]);
    expect(scores.unmatched.measured.map((point) => point.key.concurrency).sort((a, b) => Number(a) - Number(b))).toEqual([
      128, 128, 256, 256, 512, 512,
    ]);
    expect(scores.points).toHaveLength(30);
    for (const row of scores.points.filter((point) => point.metric !== 'output_token_throughput')) {
      expect(row.ape).toBeCloseTo((Math.abs((row.sim as number) - (row.measured as number)) / (row.measured as number)) * 100, 9);
      expect(row.error).toBeCloseTo((row.sim as number) - (row.measured as number), 9);
    }
    // MAPE is the mean APE over points; groups come from their own points.
    const ttftApes = scores.points.filter((row) => row.metric === 'time_to_first_token.avg').map((row) => row.ape as number);
    expect(ttft.mape).toBeCloseTo(ttftApes.reduce((a, b) => a + b, 0) / ttftApes.length, 9);
    expect(ttft.groups?.map((group) => [group.key, group.points])).toEqual([
      [{ isl: 1024, osl: 1024 }, 5],
      [{ isl: 8192, osl: 1024 }, 5],
    ]);
    // The measured c4 TTFT of the 1024/1024 curve is the CSV's value.
    const c4 = scores.points.find((row) => row.metric === 'time_to_first_token.avg' && row.key.concurrency === 4 && row.key.isl === 1024);
    expect(c4?.measured).toBeCloseTo(52.01477759692352, 9);
    expect(c4?.anchor).toBe(true);

    const csvRows = parse<Record<string, string>>(readFileSync(join(out, 'scores.csv'), 'utf8'), { columns: true });
    expect(csvRows).toHaveLength(30);
    expect(Object.keys(csvRows[0])).toEqual([
      'concurrency',
      'isl',
      'osl',
      'metric',
      'unit',
      'sim',
      'measured',
      'error',
      'ape',
      'shape_ape',
      'anchor',
      'note',
      'train',
      'sim_source',
      'measured_source',
    ]);
    expect(csvRows.filter((row) => row.note === 'no measured value')).toHaveLength(10);

    const markdown = readFileSync(join(out, 'report.md'), 'utf8');
    expect(markdown).toContain('## MAPE per metric');
    expect(markdown).toContain(`| time_to_first_token.avg | ms | 10 | ${(ttft.mape as number).toFixed(2)} |`);
    expect(markdown).toContain('## By isl, osl');
    expect(markdown).toContain('concurrency=128, isl=1024, osl=1024');

    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    // TTFT, ITL and throughput (simulated only) against load, APE per point.
    expect(html.match(/<svg /g)?.length).toBe(4);
    expect([...html.matchAll(/data-metric="([^"]+)"/g)].map((match) => match[1])).toEqual([
      'time_to_first_token.avg',
      'inter_token_latency.avg',
      'output_token_throughput',
    ]);
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|src=|url\(http/i);
    expect(html.replace(/xmlns(:xlink)?="http:\/\/www\.w3\.org\/[^"]*"/g, '')).not.toMatch(/https?:\/\//);

    expect(printed).toContain('servesim score: linear against 10 measured points, matched on concurrency, isl, osl');
    expect(printed).toMatch(/time_to_first_token\.avg\s+ms\s+10\s+\d+\.\d\d/);
    expect(printed).toContain('unmatched measured points (6)');
    expect(printed).toContain(`report: ${join(out, 'report.html')}`);
  });

  it('exits non-zero naming the metric whose MAPE is above its limit', async () => {
    const base = { sim: linearSweep, measured: [SILICON], select: DEPLOYMENT, metrics: ['ttft'], print: () => {} };
    const first = await runScore({ ...base, out: join(work, 'limits-1') });
    const ttftMape = first.result.metrics['time_to_first_token.avg'].mape as number;
    const tight = await runScore({
      ...base,
      out: join(work, 'limits-2'),
      maxMape: [`time_to_first_token.avg=${(ttftMape / 2).toFixed(2)}`, 'itl=1000'],
    });
    expect(tight.exitCode).toBe(1);
    expect(tight.failures).toEqual([
      `time_to_first_token.avg: MAPE ${ttftMape.toFixed(2)} % is above the limit ${(ttftMape / 2).toFixed(2)} %`,
    ]);
    // The limited metric (itl) was added to the scored metrics.
    expect(Object.keys(tight.result.metrics)).toEqual(['time_to_first_token.avg', 'inter_token_latency.avg']);
    const loose = await runScore({ ...base, out: join(work, 'limits-3'), maxMape: [`ttft=${Math.ceil(ttftMape + 1)}`] });
    expect(loose.exitCode).toBe(0);
  });

  it('puts a baseline sweep beside the sweep in one table', async () => {
    let printed = '';
    const out = join(work, 'score-baseline');
    const outcome = await runScore({
      sim: linearSweep,
      baseline: fixedSweep,
      measured: [SILICON],
      select: DEPLOYMENT,
      metrics: ['ttft', 'itl'],
      out,
      print: (text) => void (printed += text),
    });
    const scores = readJson(join(out, 'scores.json'));
    const ttft = scores.metrics['time_to_first_token.avg'];
    expect(ttft.baseline_points).toBe(10);
    expect(ttft.baseline_mape).not.toBe(ttft.mape);
    expect(scores.points.every((row) => row.baseline_sim !== null && row.baseline_sim !== undefined)).toBe(true);
    // Fixed timing: the baseline's ITL at concurrency 4 is decode_ms exactly.
    const c4 = scores.points.find((row) => row.metric === 'inter_token_latency.avg' && row.key.concurrency === 4 && row.key.isl === 1024);
    expect(c4?.baseline_sim).toBeCloseTo(9, 6);
    expect(printed).toMatch(/MAPE % fixed\s+MAPE % linear\s+change/);
    const csvHeader = readFileSync(join(out, 'scores.csv'), 'utf8').split('\n')[0];
    expect(csvHeader).toContain('baseline_sim,baseline_error,baseline_ape');
    expect(outcome.result.inputs.baseline_label).toBe('fixed');
    // Two metrics against load, and one APE chart with both sides on one y scale.
    expect(readFileSync(join(out, 'report.html'), 'utf8').match(/<svg /g)?.length).toBe(3);
  });

  it('names what is wrong with the arguments', async () => {
    const base = { sim: linearSweep, measured: [SILICON], print: () => {}, out: join(work, 'bad') };
    await expect(runScore({ ...base, select: ['nosuchcolumn=1'] })).rejects.toThrow(
      /--select nosuchcolumn=1: no measured CSV column and no point key/,
    );
    await expect(runScore({ ...base, select: [...DEPLOYMENT.filter((item) => !item.startsWith('backend_version'))] })).rejects.toThrow(
      /the same point \(concurrency=\d+, isl=1024, osl=1024\) as line \d+; select one deployment with --select COLUMN=VALUE \(columns that differ: id, silicon_data_source, backend_version\)/,
    );
    await expect(runScore({ ...base, select: DEPLOYMENT, maxMape: ['ttft'] })).rejects.toBeInstanceOf(ScoreUsageError);
    await expect(runScore({ ...base, select: DEPLOYMENT, groupBy: ['tp'] })).rejects.toThrow(/--group-by tp: not a key/);
  });
});

describe('score simulated AIPerf artifacts against measured AIPerf runs', () => {
  it('reads replays written with writeAiperfArtifacts as the simulated side and real runs as the measured side', async () => {
    const simDir = join(work, 'mlx-sim');
    const configFile = join(work, 'mlx-run.yaml');
    writeFileSync(
      configFile,
      `engine:
  model: Qwen/Qwen3-0.6B
  workers:
    aggregated:
      timing: {type: linear, base_ms: 22, prefill_token_us: 900, prefill_pair_ns: 0, decode_request_us: 4000, decode_kv_token_ns: 0}
traffic:
  source: {type: synthetic, input_tokens: 512, output_tokens: 128}
  load: {type: concurrency, concurrency: 1}
  stop: {requests_per_load_unit: 4}
`,
    );
    for (const concurrency of [1, 2, 4, 8]) {
      const { config } = loadRunConfig(configFile, [`traffic.load.concurrency=${concurrency}`]);
      const { summary, requests } = replay(config, { baseDir: work, perRequest: true });
      writeAiperfArtifacts(join(simDir, aiperfFolderName(config)), summary, requests, config);
    }
    expect(readdirSync(simDir).sort()).toEqual([1, 2, 4, 8].map((c) => `servesim-Qwen_Qwen3-0.6B-concurrency${c}`).sort());
    const out = join(work, 'score-mlx');
    const outcome = await runScore({ sim: simDir, measured: [MLX_RUNS], out, print: () => {} });
    const scores = outcome.result;
    expect(scores.match.keys).toEqual(['concurrency', 'isl', 'osl']);
    for (const metric of [
      'time_to_first_token.avg',
      'time_to_first_token.p50',
      'time_to_first_token.p90',
      'inter_token_latency.avg',
      'output_token_throughput',
    ]) {
      expect(scores.metrics[metric].points, metric).toBe(4);
    }
    expect(scores.unmatched).toEqual({ sim: [], measured: [] });
    expect(scores.inputs.measured_notes[0]).toMatch(
      /concurrency1: AIPerf count-sum layout \(json\); concurrency from input_config, isl from input_config, osl from input_config/,
    );
    const measuredC8 = scores.points.find((row) => row.metric === 'time_to_first_token.avg' && row.key.concurrency === 8);
    expect(measuredC8?.measured).toBeCloseTo(3397.9357941836734, 9);
  });
});
