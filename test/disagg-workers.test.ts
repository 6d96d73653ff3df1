/**
 * Worker counts of disaggregated export rows from InferenceX's master config: the matching rule
 * on hand-made config versions, the data file's reader, and the sample reader taking the counts.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../src/config/errors.js';
import {
  dbRowFactsOf,
  entriesOfMasterConfig,
  loadDisaggWorkers,
  matchDbEntry,
  matchWorkers,
  WORKER_COLUMNS,
  type ConfigEntry,
  type ConfigVersion,
  type RowFacts,
} from '../src/calibrate/disagg-workers.js';
import { readSiliconDeployments, sourceFields } from '../src/calibrate/silicon-deployments.js';
import { thrownBy } from './helpers/errors.js';

/** An entry of a DeepSeek-R1 FP4 GB200 TensorRT-LLM 1k/1k config: prefill 4 GPUs EP 4, decode TP 8. */
function entry(over: Partial<ConfigEntry> & { pw: number; dw: number; decodeDpAttention?: boolean }): ConfigEntry {
  const { pw, dw, decodeDpAttention = false, ...rest } = over;
  return {
    config: 'dsr1-fp4-gb200-dynamo-trt',
    model: 'DeepSeek-R1',
    gpu: 'gb200',
    backend: 'trtllm',
    precision: 'fp4',
    isl: 1024,
    osl: 1024,
    spec: 'none',
    concurrency: [8, 16, 32],
    prefill: { workers: pw, tp: 4, ep: 4, dpAttention: true },
    decode: { workers: dw, tp: 8, ep: 8, dpAttention: decodeDpAttention },
    ...rest,
  };
}

const facts = (over: Partial<RowFacts> = {}): RowFacts => ({
  model: 'DeepSeek-R1',
  system: 'gb200',
  backend: 'trtllm',
  precision: 'fp4',
  isl: 1024,
  osl: 1024,
  prefillTp: 4,
  prefillEp: 4,
  decodeTp: 8,
  concurrency: 16,
  measured: '2026-02-10T12:00:00Z',
  ...over,
});

const version = (date: string, entries: ConfigEntry[], commit = date.slice(0, 10).replaceAll('-', '')): ConfigVersion => ({
  commit,
  date,
  entries,
});

/** A database-dump row of the sample (its cells): prefill 1 worker of TP 1 x attention DP 4, EP 4; decode 4 workers of TP 8, EP 8. */
const dbCells = (over: Record<string, string> = {}): Record<string, string> => ({
  id: 'dsr1_gb200_trtllm_fp4_disagg_1024x1024_c16_cfg388',
  silicon_data_source:
    'db-dump/2026-04-27; config_id=388; silicon_concurrency=16; measured=2026-02-10T00:00:00.000Z; workflow_run_id=333; image',
  backend: 'trtllm',
  system: 'gb200',
  precision: 'fp4',
  mode: 'disagg',
  isl: '1024',
  osl: '1024',
  prefill_num_workers: '1',
  prefill_tp_size: '1',
  prefill_attention_dp_size: '4',
  prefill_moe_ep_size: '4',
  decode_num_workers: '4',
  decode_tp_size: '8',
  decode_attention_dp_size: '1',
  decode_moe_ep_size: '8',
  ...over,
});
const dbFacts = (over: Record<string, string> = {}) => {
  const cells = dbCells(over);
  return dbRowFactsOf(cells, sourceFields(cells.silicon_data_source));
};

describe('matching a database-dump row to the master config', () => {
  it("reads each pool's GPUs per worker (TP x attention DP), EP and attention DP, and the model from the id", () => {
    expect(dbFacts()).toEqual({
      id: 'dsr1_gb200_trtllm_fp4_disagg_1024x1024_c16_cfg388',
      model: 'DeepSeek-R1',
      system: 'gb200',
      backend: 'trtllm',
      precision: 'fp4',
      isl: 1024,
      osl: 1024,
      concurrency: 16,
      measured: '2026-02-10T00:00:00.000Z',
      prefill: { workers: 1, tp: 4, ep: 4, dpAttention: true },
      decode: { workers: 4, tp: 8, ep: 8, dpAttention: false },
    });
    expect(dbFacts({ id: 'kimik2_5_gb200_trtllm_fp4_disagg_1024x1024_c5_cfg763' })?.model).toBe('Kimi-K2.5');
    // An export row, an aggregated row, or a model prefix no config uses: none.
    expect(
      dbFacts({ silicon_data_source: 'source_file=2026-03-25.csv; model=DeepSeek-R1; silicon_concurrency=16; measured=2026-02-10' }),
    ).toBeNull();
    expect(dbFacts({ mode: 'agg' })).toBeNull();
    expect(dbFacts({ id: 'llama_gb200_trtllm_fp4_disagg_1024x1024_c16_cfg1' })).toBeNull();
  });

  it('takes the one entry of its pools, concurrency and no speculative decoding, around its measurement', () => {
    const row = dbFacts();
    if (row === null) throw new Error('no facts');
    const ours = entry({ pw: 1, dw: 4, settings: ['CONFIG_FILE=recipes/a.yaml'] });
    const mtp = entry({ pw: 1, dw: 4, spec: 'mtp' });
    const other = entry({ pw: 1, dw: 2 });
    const m = matchDbEntry(row, [version('2026-02-01T00:00:00Z', [mtp, other, ours])]);
    expect(m.kind === 'one' && m.entry).toBe(ours);
    // An entry that differs only in attention DP: taken where no entry has the row's, passed over where one does.
    const dp = entry({ pw: 1, dw: 4, decodeDpAttention: true });
    const alone = matchDbEntry(row, [version('2026-02-01T00:00:00Z', [dp])]);
    expect(alone.kind === 'one' && alone.entry).toBe(dp);
    const exact = matchDbEntry(row, [version('2026-02-01T00:00:00Z', [dp, ours])]);
    expect(exact.kind === 'one' && exact.entry).toBe(ours);
    // Other prefill workers, a concurrency not listed: none.
    expect(matchDbEntry(row, [version('2026-02-01T00:00:00Z', [entry({ pw: 2, dw: 4 })])]).kind).toBe('none');
    expect(matchDbEntry(row, [version('2026-02-01T00:00:00Z', [entry({ pw: 1, dw: 4, concurrency: [8] })])]).kind).toBe('none');
    // Two distinct entries of the same pools: several; a version merged after the window: not looked at.
    const twin = entry({ pw: 1, dw: 4, config: 'dsr1-fp4-gb200-dynamo-trt-b' });
    expect(matchDbEntry(row, [version('2026-02-01T00:00:00Z', [ours, twin])]).kind).toBe('several');
    expect(matchDbEntry(row, [version('2026-02-01T00:00:00Z', [ours]), version('2026-02-20T00:00:00Z', [twin])]).kind).toBe('one');
  });
});

describe('matching an export row to the master config', () => {
  it('takes the counts when exactly one entry in force matches, concurrency included', () => {
    const versions = [
      version('2026-02-01T00:00:00Z', [
        entry({ pw: 1, dw: 4 }),
        // Another concurrency list, another engine, another decode TP: none of them match.
        entry({ pw: 2, dw: 1, concurrency: [1024, 2048] }),
        entry({ pw: 3, dw: 3, backend: 'sglang', config: 'dsr1-fp4-gb200-dynamo-sglang' }),
        entry({ pw: 1, dw: 2, decode: { workers: 2, tp: 16, ep: 16, dpAttention: true } }),
      ]),
    ];
    const m = matchWorkers(facts(), versions);
    expect(m.kind).toBe('one');
    if (m.kind !== 'one') return;
    expect([m.entry.prefill.workers, m.entry.decode.workers, m.reading, m.version.commit]).toEqual([1, 4, 'worker', '20260201']);
    // At a concurrency that no entry lists, nothing.
    expect(matchWorkers(facts({ concurrency: 64 }), versions).kind).toBe('none');
  });

  it('takes nothing when two entries match, even if the row cannot tell them apart', () => {
    // Same TP and EP, different DP-attention on the decode pool (which the exports do not keep).
    const versions = [version('2026-02-01T00:00:00Z', [entry({ pw: 1, dw: 4 }), entry({ pw: 1, dw: 2, decodeDpAttention: true })])];
    const m = matchWorkers(facts(), versions);
    expect(m.kind).toBe('several');
    if (m.kind === 'several') expect(m.entries.map((e) => e.decode.workers)).toEqual([4, 2]);
  });

  it('looks at the version in force and those merged within the window after the measurement', () => {
    const before = version('2026-02-01T00:00:00Z', [entry({ pw: 1, dw: 4, concurrency: [8] })]);
    const soon = version('2026-02-13T00:00:00Z', [entry({ pw: 1, dw: 4 })]);
    const late = version('2026-02-20T00:00:00Z', [entry({ pw: 1, dw: 6 })]);
    const older = version('2026-01-20T00:00:00Z', [entry({ pw: 1, dw: 5 })]);
    // In force: `before` (no 16); `soon` is 2.5 days after, `late` 9.5 days; `older` was replaced.
    const m = matchWorkers(facts(), [late, older, soon, before]);
    expect(m.kind === 'one' ? [m.entry.decode.workers, m.version.commit] : m.kind).toEqual([4, '20260213']);
    // Measured before any version: only those of the window after.
    expect(matchWorkers(facts({ measured: '2026-01-01T00:00:00Z' }), [late, soon]).kind).toBe('none');
    expect(matchWorkers(facts({ measured: 'unknown' }), [before]).kind).toBe('none');
  });

  it('reads TP columns that hold the whole deployment GPU count', () => {
    // 1 x 4 + 4 x 8 = 36 GPUs written into both pools' TP columns, EP 1.
    const versions = [version('2026-02-01T00:00:00Z', [entry({ pw: 1, dw: 4 }), entry({ pw: 2, dw: 4 })])];
    const m = matchWorkers(facts({ prefillTp: 36, decodeTp: 36, prefillEp: 1 }), versions);
    expect(m.kind === 'one' ? [m.entry.prefill.workers, m.entry.decode.workers, m.reading] : m.kind).toEqual([1, 4, 'deployment']);
  });

  it('reads the disaggregated entries of a master config version', () => {
    const doc = {
      'dsr1-fp4-gb200-dynamo-trt': {
        'model-prefix': 'dsr1',
        runner: 'gb200',
        precision: 'fp4',
        framework: 'dynamo-trt',
        disagg: true,
        'seq-len-configs': [
          {
            isl: 1024,
            osl: 1024,
            'search-space': [
              {
                'spec-decoding': 'mtp',
                'conc-list': [4, 8],
                prefill: { 'num-worker': 1, tp: 4, ep: 4, 'dp-attn': true, 'additional-settings': ['CONFIG_FILE=recipes/a.yaml'] },
                decode: { 'num-worker': 3, tp: 8, ep: 8, 'dp-attn': false, 'additional-settings': ['DECODE_NODES=3'] },
              },
            ],
          },
        ],
      },
      'dsr1-fp8-b200-sglang': { 'model-prefix': 'dsr1', runner: 'b200', precision: 'fp8', framework: 'sglang', 'seq-len-configs': [] },
    };
    expect(entriesOfMasterConfig(doc, 'm.yaml')).toEqual([
      {
        config: 'dsr1-fp4-gb200-dynamo-trt',
        model: 'DeepSeek-R1',
        gpu: 'gb200',
        backend: 'trtllm',
        precision: 'fp4',
        isl: 1024,
        osl: 1024,
        spec: 'mtp',
        concurrency: [4, 8],
        prefill: { workers: 1, tp: 4, ep: 4, dpAttention: true },
        decode: { workers: 3, tp: 8, ep: 8, dpAttention: false },
        settings: ['CONFIG_FILE=recipes/a.yaml', 'DECODE_NODES=3'],
      },
    ]);
  });
});

const dir = mkdtempSync(join(tmpdir(), 'disagg-workers-'));

/** A data file row for the row `facts` with counts pw / dw; `over` replaces cells. */
function fileRow(f: RowFacts, pw: number, dw: number, over: Record<string, string> = {}): string {
  const cells: Record<string, string> = {
    model: f.model,
    system: f.system,
    backend: f.backend,
    precision: f.precision,
    isl: String(f.isl),
    osl: String(f.osl),
    prefill_tp: String(f.prefillTp),
    prefill_ep: String(f.prefillEp),
    decode_tp: String(f.decodeTp),
    concurrency: String(f.concurrency),
    measured: f.measured,
    prefill_workers: String(pw),
    decode_workers: String(dw),
    config: 'dsr1-fp4-gb200-dynamo-trt',
    spec_decoding: 'none',
    tp_reading: 'worker',
    entry_prefill_tp: '4',
    entry_prefill_ep: '4',
    entry_prefill_dp_attn: 'true',
    entry_decode_tp: '8',
    entry_decode_ep: '8',
    entry_decode_dp_attn: 'false',
    repository: 'SemiAnalysisAI/InferenceX',
    path: '.github/configs/nvidia-master.yaml',
    commit: 'a'.repeat(40),
    commit_date: '2026-02-01T00:00:00Z',
    ...over,
  };
  return WORKER_COLUMNS.map((c) => cells[c]).join(',');
}

function workersFile(name: string, rows: string[]): string {
  const file = join(dir, name);
  writeFileSync(file, `${[WORKER_COLUMNS.join(','), ...rows].join('\n')}\n`);
  return file;
}

describe('the worker counts file', () => {
  it('reads rows by their key', () => {
    const file = workersFile('good.csv', [fileRow(facts(), 1, 4), fileRow(facts({ concurrency: 32 }), 2, 5)]);
    const rows = [...loadDisaggWorkers(file).values()].map((r) => [r.facts.concurrency, r.prefillWorkers, r.decodeWorkers, r.line]);
    expect(rows).toEqual([
      [16, 1, 4, 2],
      [32, 2, 5, 3],
    ]);
  });

  it.each([
    ['prefill_workers', '0', 'a positive integer'],
    ['decode_workers', 'four', 'a positive integer'],
    ['entry_decode_dp_attn', 'yes', 'true or false'],
    ['tp_reading', 'pool', 'worker or deployment'],
    ['commit', 'abc', 'a 40-digit commit hash'],
    ['measured', 'soon', 'a date and time (ISO 8601)'],
    ['config', '', 'given'],
  ])('refuses a bad %s naming the file, the line and the column (exit 2)', (column, value, what) => {
    const file = workersFile(`bad-${column}.csv`, [fileRow(facts(), 1, 4), fileRow(facts({ concurrency: 32 }), 1, 4, { [column]: value })]);
    const error = thrownBy(() => loadDisaggWorkers(file), InputError);
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe(`${file}:3: column "${column}": must be ${what}, got "${value}"`);
  });

  it('refuses a repeated key and a missing column', () => {
    const twice = workersFile('twice.csv', [fileRow(facts(), 1, 4), fileRow(facts(), 2, 4)]);
    expect(thrownBy(() => loadDisaggWorkers(twice), InputError).message).toBe(`${twice}:3: repeats the key of line 2`);
    const short = join(dir, 'short.csv');
    writeFileSync(short, 'model,system\nDeepSeek-R1,gb200\n');
    expect(thrownBy(() => loadDisaggWorkers(short), InputError).message).toMatch(/short\.csv:1: has no column "backend", /);
  });
});

describe('the sample reader with worker counts from the master config', () => {
  const POOL = ['batch_size', 'num_workers', 'tp_size', 'pp_size', 'attention_dp_size', 'moe_tp_size', 'moe_ep_size'];
  const HEADER = [
    'id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode',
    'batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size',
    ...['prefill', 'decode'].map((role) => POOL.map((c) => `${role}_${c}`).join(',')),
    'silicon_ttft_ms,silicon_tpot_ms',
  ].join(',');
  const measured = '2026-02-10T12:00:00Z';
  const exportRow = (c: number, ttft: number, itl: number) =>
    `r${c},"source_file=2026-03-25.csv; model=DeepSeek-R1; silicon_concurrency=${c}; measured=${measured}",trtllm,,deepseek-ai/DeepSeek-R1,gb200,fp4,disagg,1024,1024,nvfp4,nvfp4,,,,,,,,,4,1,1,1,4,,,8,1,1,2,4,${ttft},${itl}`;

  it('splits a series by the counts its rows take, marks them, and leaves the others unknown', () => {
    const sample = join(dir, 'sample.csv');
    writeFileSync(
      sample,
      `${[HEADER, exportRow(8, 300, 10), exportRow(16, 350, 12), exportRow(32, 500, 9), exportRow(64, 900, 20)].join('\n')}\n`,
    );
    const file = workersFile('for-sample.csv', [
      fileRow(facts({ concurrency: 8, measured }), 1, 4),
      fileRow(facts({ concurrency: 16, measured }), 1, 4),
      fileRow(facts({ concurrency: 32, measured }), 2, 5, {
        entry_prefill_dp_attn: 'false',
        entry_decode_dp_attn: 'true',
        spec_decoding: 'mtp',
      }),
    ]);
    const found = readSiliconDeployments(sample, 1, { mode: 'disagg', workersFile: file });
    // The entries' attention DP (TensorRT-LLM): a pool that ran it has one attention rank per GPU
    // of its worker (prefill 4 GPUs: adp4; decode 8: adp8), the other keeps the row's TP.
    expect(found.map((d) => [d.label, d.points.map((p) => p.key.concurrency), d.replicas, d.mixed])).toEqual([
      ['trtllm - DeepSeek-R1 gb200 fp4 1024/1024 P(1)xtp1adp4ep4 D(4)xtp8ep4 2026-03-25.csv', [8, 16], 4, null],
      ['trtllm - DeepSeek-R1 gb200 fp4 1024/1024 P(2)xtp4ep4 D(5)xtp1adp8ep4 2026-03-25.csv', [32], 5, null],
      ['trtllm - DeepSeek-R1 gb200 fp4 1024/1024 P?xtp4ep4 D?xtp8ep4 2026-03-25.csv', [64], 1, null],
    ]);
    expect(found[1].info[0].configWorkers).toEqual({
      prefill: 2,
      decode: 5,
      prefillDpAttention: false,
      decodeDpAttention: true,
      speculative: 'mtp',
    });
    expect(found.map((d) => [d.pools?.prefill.workers, d.pools?.decode.workersFrom, d.pools?.decode.workersGiven])).toEqual([
      [1, 'inferencex-config', false],
      [2, 'inferencex-config', false],
      [1, 'unknown', false],
    ]);
    // Without the counts, one series whose ITL falls from 16 to 32 clients: a mixed series.
    const [whole, ...rest] = readSiliconDeployments(sample, 1, { mode: 'disagg', workersFile: join(dir, 'absent.csv') });
    expect(rest).toEqual([]);
    expect([whole.label, whole.points.length, whole.mixed]).toEqual([
      'trtllm - DeepSeek-R1 gb200 fp4 1024/1024 P?xtp4ep4 D?xtp8ep4 2026-03-25.csv',
      4,
      expect.stringMatching(/^mixed series/) as string,
    ]);
  });
});
