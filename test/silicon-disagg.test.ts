/**
 * The silicon sample's disaggregated rows (`mode: disagg`): read into deployments with a prefill
 * and a decode pool, the client count from `silicon_concurrency=`, mixed series kept and marked,
 * and a run config with both pools. Rows are written here.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalogBaseConfig, readSiliconDeployments, type LeftOutSeries } from '../src/calibrate/silicon-deployments.js';

const POOL = ['batch_size', 'num_workers', 'tp_size', 'pp_size', 'attention_dp_size', 'moe_tp_size', 'moe_ep_size'];
const HEADER = [
  'id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode',
  'batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size',
  ...['prefill', 'decode'].map((role) => POOL.map((c) => `${role}_${c}`).join(',')),
  'silicon_ttft_ms,silicon_tpot_ms',
].join(',');

/** No worker counts from InferenceX's master config: the rows as written (a file that does not exist has none). */
const NO_WORKERS_FILE = join(tmpdir(), 'servesim-no-disagg-workers.csv');

function sample(rows: string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'silicon-disagg-')), 'sample.csv');
  writeFileSync(file, `${[HEADER, ...rows].join('\n')}\n`);
  return file;
}

/** A pool's columns: batch, workers ('' = not given), tp, attention DP, moe tp, moe ep. */
type Pool = [number | '', number | '', number, number, number, number];
const pool = ([batch, workers, tp, dp, moeTp, ep]: Pool) => [batch, workers, tp, 1, dp, moeTp, ep].join(',');

/** A disaggregated row: source text, prefill and decode pools, TTFT, ITL. */
const row = (id: string, source: string, prefill: Pool, decode: Pool, ttft: number, itl: number, mode = 'disagg') =>
  `${id},"${source}",trtllm,1.1.0,deepseek-ai/DeepSeek-R1,gb200,fp4,${mode},1024,1024,nvfp4,nvfp4,,,,,,,${pool(prefill)},${pool(decode)},${ttft},${itl}`;

const dump = (c: number, cfg = 7) => `db-dump/2026-04-27; config_id=${cfg}; silicon_concurrency=${c}; measured=2026-04-18T00:00:00.000Z`;

describe('disaggregated rows of the silicon sample', () => {
  it('reads the pools from their columns and the clients from silicon_concurrency', () => {
    // One prefill worker of 4 GPUs (attention DP 4, EP 4), four decode workers of TP 8 (EP 8).
    const file = sample([
      row('a', dump(4), [1, 1, 1, 4, 1, 4], [1, 4, 8, 1, 1, 8], 195, 5.3),
      row('b', dump(360), [1, 1, 1, 4, 1, 4], [90, 4, 8, 1, 1, 8], 900, 9.1),
      row('agg', dump(8), [1, 1, 1, 4, 1, 4], [1, 4, 8, 1, 1, 8], 100, 4, 'agg'),
    ]);
    expect(readSiliconDeployments(file, 1)).toEqual([]);
    const [d, ...rest] = readSiliconDeployments(file, 1, { mode: 'disagg', workersFile: NO_WORKERS_FILE });
    expect(rest).toEqual([]);
    expect(d.pools).toEqual({
      prefill: { workers: 1, workersGiven: true, workersFrom: 'row', tp: 1, attentionDp: 4, expert: 4 },
      decode: { workers: 4, workersGiven: true, workersFrom: 'row', tp: 8, attentionDp: 1, expert: 8 },
    });
    expect(d.mixed).toBeNull();
    expect(d.points.map((p) => p.key.concurrency)).toEqual([4, 360]);
    expect(d.info.map((i) => i.batchSize)).toEqual([1, 90]);
    expect(d.label).toBe('trtllm 1.1.0 DeepSeek-R1 gb200 fp4 1024/1024 P1xtp1adp4ep4 D4xtp8ep8 cfg7');
  });

  it('without silicon_concurrency, counts decode batch x decode workers x decode attention DP', () => {
    const source = 'source_file=x-gap-analysis.csv';
    const [d] = readSiliconDeployments(sample([row('a', source, [1, 2, 4, 1, 4, 1], [16, 3, 1, 8, 1, 8], 300, 12)]), 1, {
      mode: 'disagg',
      workersFile: NO_WORKERS_FILE,
    });
    expect(d.points[0].key.concurrency).toBe(16 * 3 * 8);
  });

  it('keeps a series that mixes runs, with every row, and marks it', () => {
    // Workers not given: two runs of different sizes share one set of columns.
    const src = (c: number) => `source_file=2026-03-25.csv; model=DeepSeek-R1; silicon_concurrency=${c}; measured=2026-03-23T13:00:07Z`;
    const p: Pool = ['', '', 4, 1, 1, 4];
    const q: Pool = ['', '', 8, 1, 2, 4];
    const rows = [row('a', src(8), p, q, 300, 10), row('b', src(8), p, q, 350, 14), row('c', src(64), p, q, 700, 20)];
    const leftOut: LeftOutSeries[] = [];
    const [d] = readSiliconDeployments(sample(rows), 1, { mode: 'disagg', workersFile: NO_WORKERS_FILE, leftOut });
    expect(d.points.map((x) => [x.key.concurrency, x.metrics.time_to_first_token.avg])).toEqual([
      [8, 300],
      [8, 350],
      [64, 700],
    ]);
    expect(d.mixed).toMatch(/two different values at one concurrency/);
    expect(d.pools?.decode).toEqual({ workers: 1, workersGiven: false, workersFrom: 'unknown', tp: 8, attentionDp: 1, expert: 4 });
    expect(leftOut).toEqual([]);
    // An aggregated series of the same shape is left out, and said to be.
    const agg = rows.map((r) => r.replace(',disagg,', ',agg,').replace(/,,,,,,,/, ',8,4,1,1,1,4,'));
    const aggLeft: LeftOutSeries[] = [];
    expect(readSiliconDeployments(sample(agg), 1, { leftOut: aggLeft })).toEqual([]);
    expect(aggLeft.map((l) => [l.lines.length, l.reason])).toEqual([
      [3, 'two different values at one concurrency (two runs, not one curve)'],
    ]);
  });

  it('reports a series repeating another one as left out, not silently', () => {
    const p: Pool = [1, 1, 1, 4, 1, 4];
    const q: Pool = [1, 4, 8, 1, 1, 8];
    const leftOut: LeftOutSeries[] = [];
    const rows = [row('a', dump(4, 1), p, q, 195, 5.3), row('b', dump(8, 1), p, q, 220, 5.6)];
    const twins = [row('c', dump(4, 2), p, q, 195.001, 5.3), row('d', dump(8, 2), p, q, 220, 5.6)];
    const kept = readSiliconDeployments(sample([...rows, ...twins]), 1, { mode: 'disagg', workersFile: NO_WORKERS_FILE, leftOut });
    expect(kept.map((d) => d.series)).toEqual(['cfg1']);
    expect(leftOut).toEqual([
      { label: expect.stringContaining('cfg2') as string, lines: [4, 5], reason: expect.stringContaining('cfg1') as string },
    ]);
  });

  it('leaves out a point without worker counts that repeats one with them, and says so', () => {
    // The export repeats the dump's 8-client point (to two decimals) under another model name.
    const exported = (c: number) => `source_file=2026-03-25.csv; model=DeepSeek-R1; silicon_concurrency=${c}`;
    const leftOut: LeftOutSeries[] = [];
    const rows = [
      row('a', dump(8), [1, 1, 1, 4, 1, 4], [1, 4, 8, 1, 1, 8], 220, 5.6),
      row('b', exported(8), ['', '', 4, 1, 1, 4], ['', '', 8, 1, 1, 8], 220.004, 5.6),
      row('c', exported(16), ['', '', 4, 1, 1, 4], ['', '', 8, 1, 1, 8], 260, 6.1),
    ];
    const found = readSiliconDeployments(sample(rows), 1, { mode: 'disagg', workersFile: NO_WORKERS_FILE, leftOut });
    expect(found.map((d) => [d.series, d.points.map((p) => p.key.concurrency)])).toEqual([
      ['cfg7', [8]],
      ['2026-03-25.csv', [16]],
    ]);
    expect(leftOut).toEqual([
      { label: expect.stringContaining('P?x') as string, lines: [3], reason: expect.stringContaining('cfg7') as string },
    ]);
  });

  it('builds a run config with a prefill and a decode pool', () => {
    const [d] = readSiliconDeployments(sample([row('a', dump(4), [1, 2, 1, 4, 1, 4], [1, 3, 8, 1, 1, 8], 195, 5.3)]), 1, {
      mode: 'disagg',
      workersFile: NO_WORKERS_FILE,
    });
    const config = catalogBaseConfig(d);
    expect(config.engine.workers.aggregated).toBeUndefined();
    const { prefill, decode } = config.engine.workers;
    expect(prefill?.parallelism).toEqual({ replicas: 2, tensor: 1, attention_data: 4, expert: 4 });
    expect(decode?.parallelism).toEqual({ replicas: 3, tensor: 8, attention_data: 1, expert: 8 });
    expect(prefill?.timing.type).toBe('roofline');
    expect(decode?.kv_cache.capacity.type).toBe('auto');
    // Served behind a frontend that streams from the decode worker: the first token comes from there.
    expect(config.engine.kv_transfer?.first_token).toBe('decode');
  });
});
