/**
 * Engine flags of disaggregated export rows from their launch recipes: a recipe's two pools read
 * (SGLang's per-worker limits divided over its DP-attention ranks), the data file's reader, and a
 * row's flags reaching the right pool of its replayed config (a row without a recipe keeps the
 * engines' defaults).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { InputError } from '../src/config/errors.js';
import {
  configSettingsFlags,
  DB_FLAG_COLUMNS,
  FLAG_COLUMNS,
  loadDisaggDbFlags,
  loadDisaggFlags,
  recipeFlags,
  recipeNameFlags,
  runsOnQ2Branch,
} from '../src/calibrate/disagg-flags.js';
import { WORKER_COLUMNS } from '../src/calibrate/disagg-workers.js';
import { catalogBaseConfig, readSiliconDeployments, recipeLaunch } from '../src/calibrate/silicon-deployments.js';
import { roleOf } from '../src/config/roles.js';
import { thrownBy } from './helpers/errors.js';

const TRTLLM_RECIPE = `
name: ctx1_gen5_dep8_batch48
backend:
  type: trtllm
  trtllm_config:
    prefill:
      cuda_graph_config: null
      enable_attention_dp: true
      kv_cache_config: { dtype: fp8, enable_block_reuse: false, free_gpu_memory_fraction: 0.4 }
      max_batch_size: 16
      max_num_tokens: 16384
    decode:
      cuda_graph_config: { enable_padding: true, max_batch_size: 48 }
      kv_cache_config: { dtype: fp8, enable_block_reuse: false, free_gpu_memory_fraction: 0.8 }
      max_batch_size: 48
      max_num_tokens: 4096
`;

const SGLANG_RECIPE = `
backend:
  sglang_config:
    prefill:
      mem-fraction-static: 0.85
      max-prefill-tokens: 32768
      chunked-prefill-size: 32768
      max-running-requests: 512
      disable-cuda-graph: true
      tensor-parallel-size: 4
      data-parallel-size: 4
      enable-dp-attention: true
      kv-cache-dtype: fp8_e4m3
      disable-radix-cache: true
    decode:
      mem-fraction-static: 0.85
      max-prefill-tokens: 32768
      chunked-prefill-size: 32768
      max-running-requests: 512
      cuda-graph-max-bs: 512
      tensor-parallel-size: 8
      data-parallel-size: 1
      kv-cache-dtype: fp8_e4m3
      disable-radix-cache: true
`;

describe('a recipe read', () => {
  it("takes TensorRT-LLM's per-rank limits, memory share, KV dtype, CUDA graphs and block reuse per pool", () => {
    expect(recipeFlags(parse(TRTLLM_RECIPE))).toEqual({
      prefill: { maxSequences: 16, maxBatchedTokens: 16384, memoryFraction: 0.4, kvCacheDtype: 'fp8', prefixCaching: false },
      decode: {
        maxSequences: 48,
        maxBatchedTokens: 4096,
        memoryFraction: 0.8,
        kvCacheDtype: 'fp8',
        cudaGraphMaxBatch: 48,
        cudaGraphPadding: true,
        prefixCaching: false,
      },
    });
  });

  it("divides SGLang's running requests and chunk size over the DP-attention ranks (512 / 4, 32768 / 4)", () => {
    expect(recipeFlags(parse(SGLANG_RECIPE))).toEqual({
      prefill: {
        maxSequences: 128,
        maxBatchedTokens: 8192,
        memoryFraction: 0.85,
        kvCacheDtype: 'fp8',
        chunkedPrefill: true,
        prefixCaching: false,
      },
      decode: {
        maxSequences: 512,
        maxBatchedTokens: 32768,
        memoryFraction: 0.85,
        kvCacheDtype: 'fp8',
        cudaGraphMaxBatch: 512,
        chunkedPrefill: true,
        prefixCaching: false,
      },
    });
  });

  it("takes vLLM's per-engine limits (each DP rank an engine), memory share, KV dtype, chunking and prefix caching", () => {
    const recipe = `
backend:
  type: vllm
  vllm_config:
    prefill:
      kv-cache-dtype: fp8
      data-parallel-size: 4
      max-num-seqs: 64
      max-num-batched-tokens: 16384
      no-enable-prefix-caching: true
      no-enable-chunked-prefill: true
      gpu-memory-utilization: 0.9
    decode:
      tensor-parallel-size: 4
      max-num-seqs: 16
      max-num-batched-tokens: 10240
      enable-chunked-prefill: true
      max-cudagraph-capture-size: 16
`;
    expect(recipeFlags(parse(recipe))).toEqual({
      prefill: {
        maxSequences: 64,
        maxBatchedTokens: 16384,
        memoryFraction: 0.9,
        kvCacheDtype: 'fp8',
        chunkedPrefill: false,
        prefixCaching: false,
      },
      decode: { maxSequences: 16, maxBatchedTokens: 10240, cudaGraphMaxBatch: 16, chunkedPrefill: true },
    });
  });

  it('reads nothing from a recipe of another shape', () => {
    expect(recipeFlags(parse('base: other.yaml\nbackend: { sglang_config: { prefill: {}, decode: {} } }'))).toBeNull();
    expect(recipeFlags(parse('backend: { other_config: { prefill: {}, decode: {} } }'))).toBeNull();
    expect(recipeFlags(parse('backend: { vllm_config: { prefill: {} } }'))).toBeNull();
  });
});

const dir = mkdtempSync(join(tmpdir(), 'disagg-flags-'));
const measured = '2026-02-10T12:00:00Z';
const KEY = { model: 'DeepSeek-R1', system: 'gb200', backend: 'trtllm', precision: 'fp4', isl: '1024', osl: '1024' };
const keyCells = (c: number) => ({ ...KEY, prefill_tp: '4', prefill_ep: '4', decode_tp: '8', concurrency: String(c), measured });

/** A flags file row for concurrency `c`: prefill 16 sequences at 0.4 of memory, decode 48 at 0.8; `over` replaces cells. */
function flagRow(c: number, over: Record<string, string> = {}): string {
  const cells: Record<string, string> = {
    ...Object.fromEntries(FLAG_COLUMNS.map((k) => [k, ''])),
    ...keyCells(c),
    prefill_max_sequences: '16',
    prefill_max_batched_tokens: '16384',
    prefill_memory_fraction: '0.4',
    prefill_kv_cache_dtype: 'fp8',
    prefill_prefix_caching: 'false',
    decode_max_sequences: '48',
    decode_max_batched_tokens: '4096',
    decode_memory_fraction: '0.8',
    decode_kv_cache_dtype: 'fp8',
    decode_cuda_graph_max_batch: '48',
    decode_cuda_graph_padding: 'true',
    read_from: 'recipe',
    recipe_repository: 'csahithi/srt-slurm',
    recipe_path: 'recipes/trtllm/gb200-fp4/1k1k/stp/ctx1_gen4_tep8_batch48.yaml',
    recipe_commit: 'b'.repeat(40),
    recipe_date: '2026-02-09T00:00:00Z',
    ...over,
  };
  return FLAG_COLUMNS.map((k) => cells[k]).join(',');
}

function flagsFile(name: string, rows: string[]): string {
  const file = join(dir, name);
  writeFileSync(file, `${[FLAG_COLUMNS.join(','), ...rows].join('\n')}\n`);
  return file;
}

describe('the flags file', () => {
  it.each([
    ['decode_max_sequences', '0', 'a positive integer or empty'],
    ['prefill_memory_fraction', '1.5', 'a fraction in (0, 1] or empty'],
    ['decode_kv_cache_dtype', 'fp16', 'fp8 or bf16 or empty'],
    ['prefill_prefix_caching', 'no', 'true or false or empty'],
  ])('refuses a bad %s naming the file, the line and the column (exit 2)', (column, value, what) => {
    const file = flagsFile(`bad-${column}.csv`, [flagRow(8), flagRow(16, { [column]: value })]);
    const error = thrownBy(() => loadDisaggFlags(file), InputError);
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe(`${file}:3: column "${column}": must be ${what}, got "${value}"`);
  });

  it('refuses a read_from it does not know', () => {
    const file = flagsFile('read-from.csv', [flagRow(8, { read_from: 'guess' })]);
    expect(thrownBy(() => loadDisaggFlags(file), InputError).message).toBe(
      `${file}:2: column "read_from": must be one of recipe, recipe name, config settings, got "guess"`,
    );
    expect(
      loadDisaggFlags(flagsFile('by-name.csv', [flagRow(8, { read_from: 'recipe name' })]))
        .values()
        .next().value?.readFrom,
    ).toBe('recipe name');
  });

  it('refuses a bad commit, a repeated key and a missing column', () => {
    const commit = flagsFile('commit.csv', [flagRow(8, { recipe_commit: 'abc' })]);
    expect(thrownBy(() => loadDisaggFlags(commit), InputError).message).toBe(
      `${commit}:2: column "recipe_commit": must be a 40-digit commit hash, got "abc"`,
    );
    const twice = flagsFile('twice.csv', [flagRow(8), flagRow(8)]);
    expect(thrownBy(() => loadDisaggFlags(twice), InputError).message).toBe(`${twice}:3: repeats the key of line 2`);
    const short = join(dir, 'short.csv');
    writeFileSync(short, 'model,system\nDeepSeek-R1,gb200\n');
    expect(thrownBy(() => loadDisaggFlags(short), InputError).message).toMatch(/short\.csv:1: has no column "backend", /);
  });
});

describe("the srt-slurm branch a run's runner cloned", () => {
  const at = (iso: string) => Date.parse(iso);
  it('moves GB200 vLLM runs on 2026-04-07, GB200 Kimi-K2.5 TensorRT-LLM runs on 04-18, the other runners on 04-19', () => {
    const vllm = { gpu: 'gb200', backend: 'vllm', model: 'Kimi-K2.5' };
    // 235b232d: 2026-04-07T15:33:03-04:00 is 19:33:03 UTC.
    expect(runsOnQ2Branch(vllm, at('2026-04-07T19:33:02Z'))).toBe(false);
    expect(runsOnQ2Branch(vllm, at('2026-04-07T19:33:03Z'))).toBe(true);
    const kimi = { gpu: 'gb200', backend: 'trtllm', model: 'Kimi-K2.5' };
    expect(runsOnQ2Branch(kimi, at('2026-04-18T23:59:59Z'))).toBe(true);
    expect(runsOnQ2Branch(kimi, at('2026-04-18T12:00:00Z'))).toBe(false);
    // DeepSeek-R1 under TensorRT-LLM on GB200 stayed on q1.
    expect(runsOnQ2Branch({ gpu: 'gb200', backend: 'trtllm', model: 'DeepSeek-R1' }, at('2026-04-27T00:00:00Z'))).toBe(false);
    // 2e9cecf9: 2026-04-19T12:41:27-07:00 is 19:41:27 UTC, for every engine on those runners.
    const h200 = { gpu: 'h200', backend: 'sglang', model: 'DeepSeek-R1' };
    expect(runsOnQ2Branch(h200, at('2026-04-19T19:41:26Z'))).toBe(false);
    expect(runsOnQ2Branch(h200, at('2026-04-19T19:41:27Z'))).toBe(true);
    expect(runsOnQ2Branch({ gpu: 'gb300', backend: 'trtllm', model: 'DeepSeek-R1' }, at('2026-04-20T00:00:00Z'))).toBe(true);
  });
});

describe('flags where the recipe is not read', () => {
  it("reads a TensorRT-LLM recipe's decode batch limit from its name, and nothing from another name", () => {
    expect(recipeNameFlags('recipes/trtllm/gb200-fp4/1k1k/stp/ctx1_gen4_tep8_batch32_eplb0_mtp0.yaml')).toEqual({
      prefill: {},
      decode: { maxSequences: 32 },
    });
    expect(recipeNameFlags('recipes/trtllm/gb200-fp8/8k1k/stp/ctx4_gen1_dep32_batch16_eplb0_mtp0_666.yaml')?.decode).toEqual({
      maxSequences: 16,
    });
    expect(
      recipeNameFlags('recipes/kimi2.5/trtllm_dynamo/disagg/gb200Nvfp4/ISL8K_OSL1K/STP/ctx1dep4_gen5tep4_batch16_eplb0_mtp0.yaml')?.decode,
    ).toEqual({ maxSequences: 16 });
    expect(recipeNameFlags('recipes/trtllm/h200/8k1k/stp/c128_ctx1_gen1_dep8_batch256_eplb0_mtp0.yaml')?.decode).toEqual({
      maxSequences: 256,
    });
    expect(recipeNameFlags('recipes/gb200-fp4/1k1k/low-latency.yaml')).toBeNull();
    // Plain-TP decode workers' names do not follow their limit: not read.
    expect(recipeNameFlags('recipes/trtllm/b200-fp8/1k1k/stp/ctx1_gen3_tp8_batch1024_eplb0_mtp0_32.yaml')).toBeNull();
    expect(recipeNameFlags('recipes/trtllm/x/ctx1_gen4_tep8_batch0_eplb0_mtp0.yaml')).toBeNull();
  });

  it("reads the sizes an entry without a recipe gives Dynamo's TensorRT-LLM sweep", () => {
    const settings = [
      'PREFILL_MAX_NUM_TOKENS=4608',
      'PREFILL_MAX_BATCH_SIZE=4',
      'DECODE_MAX_NUM_TOKENS=128',
      'DECODE_MAX_BATCH_SIZE=32',
      'DECODE_GPU_MEM_FRACTION=0.9',
    ];
    expect(configSettingsFlags(settings)).toEqual({
      prefill: { maxSequences: 4, maxBatchedTokens: 4608, memoryFraction: 0.85, kvCacheDtype: 'fp8', prefixCaching: false },
      decode: {
        maxSequences: 32,
        maxBatchedTokens: 128,
        memoryFraction: 0.9,
        kvCacheDtype: 'fp8',
        cudaGraphPadding: true,
        prefixCaching: false,
      },
    });
    // A size missing, or a fraction above 1: not read.
    expect(configSettingsFlags(settings.slice(1))).toBeNull();
    expect(configSettingsFlags([...settings.slice(0, 4), 'DECODE_GPU_MEM_FRACTION=90'])).toBeNull();
    expect(configSettingsFlags(['CONFIG_FILE=recipes/trtllm/x.yaml'])).toBeNull();
  });
});

describe('a row replayed with its recipe', () => {
  const POOL = ['batch_size', 'num_workers', 'tp_size', 'pp_size', 'attention_dp_size', 'moe_tp_size', 'moe_ep_size'];
  const HEADER = [
    'id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode',
    'batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size',
    ...['prefill', 'decode'].map((role) => POOL.map((c) => `${role}_${c}`).join(',')),
    'silicon_ttft_ms,silicon_tpot_ms',
  ].join(',');
  const exportRow = (c: number, ttft: number, itl: number) =>
    `r${c},"source_file=2026-03-25.csv; model=DeepSeek-R1; silicon_concurrency=${c}; measured=${measured}",trtllm,,deepseek-ai/DeepSeek-R1,gb200,fp4,disagg,1024,1024,nvfp4,nvfp4,,,,,,,,,4,1,1,1,4,,,8,1,1,2,4,${ttft},${itl}`;
  const workerRow = (c: number) => {
    const cells: Record<string, string> = {
      ...keyCells(c),
      prefill_workers: '1',
      decode_workers: '2',
      config: 'dsr1-fp4-gb200-dynamo-trt',
      spec_decoding: 'none',
      tp_reading: 'worker',
      entry_prefill_tp: '4',
      entry_prefill_ep: '4',
      entry_prefill_dp_attn: 'false',
      entry_decode_tp: '8',
      entry_decode_ep: '8',
      entry_decode_dp_attn: 'false',
      repository: 'SemiAnalysisAI/InferenceX',
      path: '.github/configs/nvidia-master.yaml',
      commit: 'a'.repeat(40),
      commit_date: '2026-02-01T00:00:00Z',
    };
    return WORKER_COLUMNS.map((k) => cells[k]).join(',');
  };

  it("gives each pool its own recipe flags, and a row without a recipe the engines' defaults", () => {
    const sample = join(dir, 'sample.csv');
    writeFileSync(sample, `${[HEADER, exportRow(8, 300, 10), exportRow(16, 350, 12)].join('\n')}\n`);
    const workersFile = join(dir, 'workers.csv');
    writeFileSync(workersFile, `${[WORKER_COLUMNS.join(','), workerRow(8), workerRow(16)].join('\n')}\n`);
    // Flags for the point of 8 clients only.
    const flags = flagsFile('for-sample.csv', [flagRow(8)]);
    const [d] = readSiliconDeployments(sample, 1, { mode: 'disagg', workersFile, flagsFile: flags });
    expect(d.info.map((i) => [i.clients, i.recipe?.recipe.path])).toEqual([
      [8, 'recipes/trtllm/gb200-fp4/1k1k/stp/ctx1_gen4_tep8_batch48.yaml'],
      [16, undefined],
    ]);
    // Each pool's limits, memory share, KV dtype, CUDA graph size and prefix caching as resolved.
    const pools = (i: number) => {
      const config = catalogBaseConfig(d, undefined, recipeLaunch(d.info[i].recipe));
      return (['prefill', 'decode'] as const).map((role) => {
        const pool = roleOf(config.engine, role);
        const capacity = pool.kv_cache.capacity as { gpu_memory_utilization?: number };
        return [
          pool.scheduler.max_sequences,
          pool.scheduler.max_batched_tokens,
          capacity.gpu_memory_utilization,
          pool.kv_cache.dtype,
          pool.scheduler.cuda_graph_max_batch,
          pool.kv_cache.prefix_caching,
        ];
      });
    };
    expect(pools(0)).toEqual([
      [16, 16384, 0.4, 'fp8', undefined, false],
      [48, 4096, 0.8, 'fp8', 48, undefined],
    ]);
    // TensorRT-LLM's defaults (max_batch_size 2048, max_num_tokens 8192: data/engine-defaults.yaml).
    expect(pools(1)).toEqual([
      [2048, 8192, undefined, 'auto', undefined, undefined],
      [2048, 8192, undefined, 'auto', undefined, undefined],
    ]);
  });

  it('passes a recipe to the database-dump point an export point repeats, when the counts agree', () => {
    const pool = (workers: string, tp: string, ep: string) => ['', workers, tp, '1', '1', ep === '4' && tp === '8' ? '2' : '1', ep];
    const dumpRow = (c: number, decodeWorkers: string) =>
      [
        `d${c}`,
        `"db-dump/x; config_id=7; silicon_concurrency=${c}"`,
        'trtllm,,deepseek-ai/DeepSeek-R1,gb200,fp4,disagg,1024,1024,nvfp4,nvfp4',
        ',,,,,',
        ...pool('1', '4', '4'),
        ...pool(decodeWorkers, '8', '4'),
        '300,10',
      ].join(',');
    const workersFile = join(dir, 'workers-dump.csv');
    writeFileSync(workersFile, `${[WORKER_COLUMNS.join(','), workerRow(8), workerRow(16)].join('\n')}\n`);
    const flags = flagsFile('for-dump.csv', [flagRow(8)]);
    const read = (decodeWorkers: string) => {
      const sample = join(dir, `dump-${decodeWorkers}.csv`);
      writeFileSync(sample, `${[HEADER, exportRow(8, 300, 10), exportRow(16, 350, 12), dumpRow(8, decodeWorkers)].join('\n')}\n`);
      return readSiliconDeployments(sample, 1, { mode: 'disagg', workersFile, flagsFile: flags }).map((d) => [
        d.pools?.decode.workersFrom,
        d.info.map((i) => [i.clients, i.recipe?.recipe.path]),
      ]);
    };
    // The export point of 8 clients repeats the dump's and is left out; the dump's point (2 decode
    // workers, as the export's entry) runs its recipe.
    expect(read('2')).toEqual([
      ['inferencex-config', [[16, undefined]]],
      ['row', [[8, 'recipes/trtllm/gb200-fp4/1k1k/stp/ctx1_gen4_tep8_batch48.yaml']]],
    ]);
    // Counts that differ (3 decode workers): another deployment, no recipe passed.
    expect(read('3').find(([from]) => from === 'row')).toEqual(['row', [[8, undefined]]]);
  });

  it("gives a database-dump point the flags its own row id has in the database rows' file", () => {
    const dumpRow = (c: number) =>
      [
        `dsr1_gb200_trtllm_fp4_disagg_1024x1024_c${c}_cfg7`,
        `"db-dump/x; config_id=7; silicon_concurrency=${c}; measured=2026-03-23T00:00:00.000Z"`,
        'trtllm,,deepseek-ai/DeepSeek-R1,gb200,fp4,disagg,1024,1024,nvfp4,nvfp4',
        ',,,,,',
        ...['', '1', '4', '1', '1', '1', '4'],
        ...['', '4', '8', '1', '1', '1', '8'],
        '300,10',
      ].join(',');
    const sample = join(dir, 'dump-own.csv');
    writeFileSync(sample, `${[HEADER, dumpRow(96), dumpRow(192)].join('\n')}\n`);
    const dbRow = (c: number, over: Record<string, string> = {}) => {
      const cells: Record<string, string> = {
        ...Object.fromEntries(DB_FLAG_COLUMNS.map((k) => [k, ''])),
        id: `dsr1_gb200_trtllm_fp4_disagg_1024x1024_c${c}_cfg7`,
        config: 'dsr1-fp4-gb200-dynamo-trt',
        config_commit: 'c'.repeat(40),
        decode_max_sequences: '32',
        read_from: 'recipe name',
        recipe_repository: 'SemiAnalysisAI/InferenceX',
        recipe_path: 'recipes/trtllm/gb200-fp4/1k1k/stp/ctx1_gen4_tep8_batch32_eplb0_mtp0.yaml',
        recipe_commit: 'c'.repeat(40),
        recipe_date: '2026-03-29T01:33:41-04:00',
        ...over,
      };
      return DB_FLAG_COLUMNS.map((k) => cells[k]).join(',');
    };
    const dbFlagsFile = join(dir, 'db-flags.csv');
    writeFileSync(dbFlagsFile, `${[DB_FLAG_COLUMNS.join(','), dbRow(192)].join('\n')}\n`);
    const [d] = readSiliconDeployments(sample, 1, { mode: 'disagg', flagsFile: join(dir, 'none.csv'), dbFlagsFile });
    expect(d.info.map((i) => [i.clients, i.recipe?.readFrom, i.recipe?.flags.decode.maxSequences])).toEqual([
      [96, undefined, undefined],
      [192, 'recipe name', 32],
    ]);
    const config = catalogBaseConfig(d, undefined, recipeLaunch(d.info[1].recipe));
    expect(roleOf(config.engine, 'decode').scheduler.max_sequences).toBe(32);
    // A repeated id or a bad commit: refused, naming the file and the line.
    const twice = join(dir, 'db-twice.csv');
    writeFileSync(twice, `${[DB_FLAG_COLUMNS.join(','), dbRow(192), dbRow(192)].join('\n')}\n`);
    expect(thrownBy(() => loadDisaggDbFlags(twice), InputError).message).toBe(`${twice}:3: repeats the id of line 2`);
    const bad = join(dir, 'db-bad.csv');
    writeFileSync(bad, `${[DB_FLAG_COLUMNS.join(','), dbRow(192, { config_commit: 'x' })].join('\n')}\n`);
    expect(thrownBy(() => loadDisaggDbFlags(bad), InputError).message).toBe(
      `${bad}:2: column "config_commit": must be a 40-digit commit hash, got "x"`,
    );
  });

  it('keeps a decode token budget below the prompt, chunking only what the decode pool would recompute', () => {
    const row = loadDisaggFlags(flagsFile('small-decode.csv', [flagRow(8, { decode_max_batched_tokens: '32' })]))
      .values()
      .next().value;
    const launch = recipeLaunch(row, 1024);
    expect([launch.pools?.prefill.scheduler, launch.pools?.decode.scheduler]).toEqual([
      { max_batched_tokens: 16384, max_sequences: 16 },
      { max_batched_tokens: 32, max_sequences: 48, chunked_prefill: true, cuda_graph_max_batch: 48, cuda_graph_padding: true },
    ]);
    // A budget the prompt fits in is left as it is; below the prompt, chunked prefill is on even
    // where the recipe turns it off (a pool that could never prefill the prompt is refused).
    expect(recipeLaunch(row, 32).pools?.decode.scheduler?.chunked_prefill).toBeUndefined();
    const told = loadDisaggFlags(flagsFile('told.csv', [flagRow(8, { decode_max_batched_tokens: '32', decode_chunked_prefill: 'false' })]))
      .values()
      .next().value;
    expect(recipeLaunch(told, 1024).pools?.decode.scheduler?.chunked_prefill).toBe(true);
    expect(recipeLaunch(told, 32).pools?.decode.scheduler?.chunked_prefill).toBe(false);
  });
});
