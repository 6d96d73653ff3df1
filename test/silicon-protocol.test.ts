/**
 * How the silicon sample's rows are replayed: client counts, replicas, the measuring protocol
 * of each source, the warm-up regime by date, aiconfigurator's caps for the gap-analysis rows,
 * duplicates under two names, and the cold-start stall rule. Rows are written here.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withDenseFrontend } from '../bench/accuracy-zero-shot.js';
import {
  coldStallConcurrencies,
  deploymentBaseConfig,
  engineVersionOf,
  measuredCaps,
  measuredOf,
  protocolOf,
  readSiliconDeployments,
  WARMUP_FROM,
} from '../src/calibrate/silicon-deployments.js';
import {
  AIPERF_DATASET_ENTRIES,
  catalogPoints,
  launchKnown,
  measuredPointConfig,
  prefillPeakShare,
  PROMPT_REUSE_PEAK_SHARE,
  userSweepLoad,
  lengthsLoad,
} from '../src/calibrate/catalog-calibration.js';
import { deploymentOf } from '../src/config/deployment.js';
import { resolveSimLoad } from '../src/calibrate/sim-load.js';
import { efficiencyFor } from '../src/catalog/efficiency.js';
import { roleOf } from '../src/config/roles.js';
import { kvBlocksPerRank } from '../src/config/kv-capacity.js';
import { parseRunConfig } from '../src/config/load.js';
import { replay } from '../src/replay.js';

const HEADER =
  'id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms';

function sample(rows: string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'silicon-')), 'sample.csv');
  writeFileSync(file, `${[HEADER, ...rows].join('\n')}\n`);
  return file;
}

/** A row: source text, batch_size, tp, attention DP, TTFT, ITL (other columns fixed). */
const row = (
  id: string,
  source: string,
  batch: number,
  tp: number,
  dp: string,
  ttft: number,
  itl: number,
  model = 'deepseek-ai/DeepSeek-R1',
) => `${id},"${source}",sglang,0.5.9,${model},b200_sxm,fp8,agg,1024,1024,fp8,fp8,${batch},${tp},1,${dp},1,1,${ttft},${itl}`;

describe('the silicon sample as it was measured', () => {
  it('drives silicon_concurrency clients, not batch_size, and spreads them over the attention-DP ranks', () => {
    // Attention DP 4: the sample divides 128 clients into batch_size 32 per rank.
    const dump = (c: number) =>
      `db-dump/2026-04-27; config_id=7; silicon_concurrency=${c}; measured=2026-03-01T00:00:00.000Z; lmsysorg/sglang:v0.5.9-cu130`;
    const file = sample([row('a', dump(64), 16, 1, '4', 300, 20), row('b', dump(128), 32, 1, '4', 400, 25)]);
    const [d] = readSiliconDeployments(file, 2);
    expect(d.attentionDp).toBe(4);
    expect(d.replicas).toBe(1);
    expect(d.points.map((p) => p.key.concurrency)).toEqual([64, 128]);
    expect(d.info.map((i) => i.batchSize)).toEqual([16, 32]);
  });

  it('finds replicas where the sample divided the clients by more than the attention-DP ranks', () => {
    // No attention DP, batch_size = clients / 2 at every point: two replicas.
    const src = (c: number) =>
      `source_file=2026-04-06.csv; model=X; silicon_concurrency=${c}; measured=2026-03-01T00:00:00.000Z; wip=False; image=lmsysorg/sglang:v0.5.9`;
    const [d] = readSiliconDeployments(sample([row('a', src(16), 8, 2, '', 200, 10), row('b', src(32), 16, 2, '', 260, 12)]), 2);
    expect(d.replicas).toBe(2);
    expect(d.label).toContain(' x2 ');
  });

  it("reads each source's load generator", () => {
    expect(protocolOf('db-dump/2026-04-27; config_id=1; silicon_concurrency=4; vllm/vllm-openai:v0.19.0-cu130')).toEqual({
      source: 'inferencex',
      generator: 'bench_serving',
      rangeRatio: 0.8,
      requestsPerClient: 10,
      datasetEntries: null,
      image: 'vllm/vllm-openai:v0.19.0-cu130',
    });
    expect(protocolOf('source_file=2026-03-25.csv; model=M; silicon_concurrency=4; image=lmsysorg/sglang:v0.5.9').source).toBe(
      'inferencex',
    );
    // A file named *-gap-analysis.csv holds InferenceX rows.
    expect(protocolOf('source_file=kimi-k2.5-gap-analysis.csv; silicon_concurrency=4').source).toBe('inferencex');
    const gap = protocolOf('source_file=/Users/x/aic-auto-gap-analysis/data/h100_sxm/vllm/0.12.0/Qwen.csv; silicon_concurrency=8');
    // AIPerf with aiconfigurator's benchmark: fixed lengths; every prompt its own unless asked.
    expect(gap).toMatchObject({ source: 'gap-analysis', generator: 'aiperf', rangeRatio: 1, requestsPerClient: 10, datasetEntries: null });
    expect(protocolOf('something else').source).toBe('unknown');
  });

  it('tells the warm-up regime by the measured date', () => {
    expect(WARMUP_FROM).toBe('2026-01-21');
    expect(measuredOf('x; measured=2026-01-20T23:59:00.000Z')).toEqual({ measured: '2026-01-20', warmedUp: false });
    expect(measuredOf('x; measured=2026-01-21T00:00:00.000Z')).toEqual({ measured: '2026-01-21', warmedUp: true });
    expect(measuredOf('x; measured=2026-02-12T05:04:10Z')).toEqual({ measured: '2026-02-12', warmedUp: true });
    expect(measuredOf('source_file=a.csv; silicon_concurrency=4')).toEqual({ measured: '', warmedUp: null });
  });

  it("gives the gap-analysis rows aiconfigurator's caps: batch + ISL + 1500 tokens, the batch as the sequence limit", () => {
    const gap = { protocol: { source: 'gap-analysis' as const }, isl: 1024 };
    // 8 + 1024 + 1500 = 2532.
    expect(measuredCaps({ ...gap, backend: 'vllm' }, 8)).toEqual({ max_batched_tokens: 2532, max_sequences: 8 });
    // TensorRT-LLM rounds up to 32-token blocks: 2532 -> 80 x 32 = 2560.
    expect(measuredCaps({ ...gap, backend: 'trtllm' }, 8)).toEqual({ max_batched_tokens: 2560, max_sequences: 8 });
    // SGLang rows keep the engine's defaults (the rows do not say whether its rule applied).
    expect(measuredCaps({ ...gap, backend: 'sglang' }, 8)).toEqual({});
    expect(measuredCaps({ protocol: { source: 'inferencex' }, isl: 1024, backend: 'vllm' }, 8)).toEqual({});
  });

  it('replays gap-analysis points with a dataset of repeated prompts when asked, TensorRT-LLM without block reuse', () => {
    const gapSource = (c: number) => `source_file=/x/aic-auto-gap-analysis/data/h200_sxm/b/v/M.csv; silicon_concurrency=${c}`;
    const point = (backend: string, entries?: number) => {
      const line = (id: string, c: number) =>
        `${id},"${gapSource(c)}",${backend},0.12.0,meta-llama/Llama-3.1-8B-Instruct,h200_sxm,fp8,agg,1000,100,fp8,,${c},1,1,,1,1,80,10`;
      const { points } = catalogPoints(sample([line('a', 16), line('b', 32)]), entries === undefined ? {} : { gapEntries: entries });
      return measuredPointConfig(points[1], efficiencyFor('h200_sxm', backend).factors, resolveSimLoad({}));
    };
    expect(point('vllm').traffic.source).not.toHaveProperty('dataset_entries');
    for (const backend of ['vllm', 'sglang', 'trtllm']) {
      const config = point(backend, 100);
      expect(config.traffic.source).toMatchObject({
        type: 'synthetic',
        input_tokens: 1000,
        output_tokens: 100,
        random_range_ratio: 1,
        dataset_entries: 100,
      });
      expect(config.traffic.stop).toEqual({ requests: 320 });
      expect(roleOf(config.engine, 'aggregated').kv_cache.prefix_caching).toBe(backend === 'trtllm' ? false : undefined);
    }
    // InferenceX rows: every prompt its own.
    const dump = `db-dump/2026-04-27; config_id=7; silicon_concurrency=16; measured=2026-03-01T00:00:00.000Z; vllm/vllm-openai:v0.19.0`;
    const ix = `a,"${dump}",vllm,0.19.0,meta-llama/Llama-3.1-8B-Instruct,h200_sxm,fp8,agg,1000,100,fp8,,16,1,1,,1,1,80,10`;
    const { points } = catalogPoints(sample([ix]));
    const config = measuredPointConfig(points[0], efficiencyFor('h200_sxm', 'vllm').factors, resolveSimLoad({}));
    expect(config.traffic.source).not.toHaveProperty('dataset_entries');
  });

  it('replays only the rows measured with AIPerf with the fixed frontend of --aiperf-frontend', () => {
    const dump = `db-dump/2026-04-27; config_id=7; silicon_concurrency=16; measured=2026-03-01T00:00:00.000Z; vllm/vllm-openai:v0.19.0`;
    const ix = `a,"${dump}",vllm,0.19.0,meta-llama/Llama-3.1-8B-Instruct,h200_sxm,fp8,agg,1000,100,fp8,,16,1,1,,1,1,80,10`;
    const gapSource = `source_file=/x/aic-auto-gap-analysis/data/h200_sxm/vllm/0.12.0/M.csv; silicon_concurrency=16`;
    const gap = `b,"${gapSource}",vllm,0.12.0,meta-llama/Llama-3.1-8B-Instruct,h200_sxm,fp8,agg,1000,100,fp8,,16,1,1,,1,1,80,10`;
    const factors = efficiencyFor('h200_sxm', 'vllm').factors;
    const [inferencex] = catalogPoints(sample([ix])).points;
    const [aiperf] = catalogPoints(sample([gap])).points;
    const load = resolveSimLoad({ aiperfFrontendMs: 4 });
    // The AIPerf row: 4 ms and nothing per token or per request in flight.
    expect(measuredPointConfig(aiperf, factors, load).engine.frontend).toEqual({ base_ms: 4, per_input_us: 0, per_inflight_us: 0 });
    // The InferenceX row keeps the factors' frontend, and so does a user's sweep of the AIPerf row.
    expect(measuredPointConfig(inferencex, factors, load).engine.frontend).toEqual(
      measuredPointConfig(inferencex, factors, resolveSimLoad({})).engine.frontend,
    );
    const asUser = resolveSimLoad({ ...userSweepLoad(), aiperfFrontendMs: 4 });
    expect(measuredPointConfig(aiperf, factors, asUser).engine.frontend).toEqual(
      measuredPointConfig(aiperf, factors, userSweepLoad()).engine.frontend,
    );
    // Without the option nothing changes: the frontend stays the factors' (auto).
    expect(measuredPointConfig(aiperf, factors, resolveSimLoad({})).engine.frontend?.base_ms ?? 'auto').toBe('auto');
  });

  it('sets frontend_ms for dense models alone with --dense-frontend', () => {
    const factors = efficiencyFor('h200_sxm', 'vllm').factors;
    // A dense model's frontend_ms becomes the option's; every other factor stays.
    expect(withDenseFrontend(factors, false, 1.5)).toEqual({ ...factors, frontend_ms: 1.5 });
    expect(withDenseFrontend(factors, false, 1.5).frontend_ms).not.toBe(factors.frontend_ms);
    // A mixture-of-experts model keeps its factors, and so does any model without the option.
    expect(withDenseFrontend(factors, true, 1.5)).toBe(factors);
    expect(withDenseFrontend(factors, false, undefined)).toBe(factors);
  });

  it('writes a zero-shot sweep of a measured deployment as a user would: engine defaults, the source default lengths', () => {
    const gapSource = (c: number) => `source_file=/x/aic-auto-gap-analysis/data/h200_sxm/vllm/0.12.0/M.csv; silicon_concurrency=${c}`;
    const line = (id: string, c: number) =>
      `${id},"${gapSource(c)}",vllm,0.12.0,meta-llama/Llama-3.1-8B-Instruct,h200_sxm,fp8,agg,1000,100,fp8,,${c},2,1,,1,1,80,10`;
    const { points } = catalogPoints(sample([line('a', 16), line('b', 32)]));
    const factors = efficiencyFor('h200_sxm', 'vllm').factors;
    // As measured: aiconfigurator's caps, 32 + 1000 + 1500 = 2532 tokens and 32 sequences.
    const measured = measuredPointConfig(points[1], factors, resolveSimLoad({}));
    expect(roleOf(measured.engine, 'aggregated').scheduler).toMatchObject({ max_batched_tokens: 2532, max_sequences: 32 });
    for (const [ratio, expected] of [
      [1, 1],
      [0.8, 0.8],
    ] as const) {
      const config = measuredPointConfig(points[1], factors, userSweepLoad(ratio));
      // No launch flag: vLLM 0.12's defaults on a GPU of 70 GiB or more (data/engine-defaults.yaml).
      expect(roleOf(config.engine, 'aggregated').scheduler).toEqual({
        max_batched_tokens: 8192,
        max_sequences: 1024,
        chunked_prefill: true,
      });
      expect(roleOf(config.engine, 'aggregated').parallelism).toMatchObject({ tensor: 2, attention_data: 1, replicas: 1 });
      expect(config.traffic.source).toMatchObject({
        type: 'synthetic',
        input_tokens: 1000,
        output_tokens: 100,
        random_range_ratio: expected,
      });
      expect(config.traffic.source).not.toHaveProperty('dataset_entries');
      // 10 requests a client.
      expect(config.traffic.stop).toEqual({ requests: 320 });
      expect(config.traffic.load).toMatchObject({ type: 'concurrency', concurrency: 32 });
    }
  });

  it('replays a measured point with other lengths and nothing else changed: its launch, clients and requests', () => {
    const gapSource = (c: number) => `source_file=/x/aic-auto-gap-analysis/data/h200_sxm/vllm/0.12.0/M.csv; silicon_concurrency=${c}`;
    const gap = `a,"${gapSource(32)}",vllm,0.12.0,meta-llama/Llama-3.1-8B-Instruct,h200_sxm,fp8,agg,1000,100,fp8,,32,2,1,,1,1,80,10`;
    const dump = `db-dump/2026-04-27; config_id=7; silicon_concurrency=16; measured=2026-03-01T00:00:00.000Z; vllm/vllm-openai:v0.19.0`;
    const ix = `b,"${dump}",vllm,0.19.0,meta-llama/Llama-3.1-8B-Instruct,h200_sxm,fp8,agg,1000,100,fp8,,16,1,1,,1,1,80,10`;
    const { points } = catalogPoints(sample([gap, ix]));
    const factors = efficiencyFor('h200_sxm', 'vllm').factors;
    // The gap-analysis row was measured with fixed lengths, InferenceX's drawn in [0.8 L, L].
    const [gapPoint, ixPoint] = [points.find((p) => p.concurrency === 32), points.find((p) => p.concurrency === 16)];
    if (gapPoint === undefined || ixPoint === undefined) throw new Error('points not read');
    for (const [point, measuredRatio] of [
      [gapPoint, 1],
      [ixPoint, 0.8],
    ] as const) {
      const asMeasured = measuredPointConfig(point, factors, resolveSimLoad({}));
      expect(asMeasured.traffic.source).toMatchObject({ random_range_ratio: measuredRatio });
      for (const ratio of [1, 0.8]) {
        const config = measuredPointConfig(point, factors, lengthsLoad(ratio));
        // The lengths change, and nothing else: caps, parallelism, clients, requests, prompts.
        expect(config.traffic.source).toEqual({ ...asMeasured.traffic.source, random_range_ratio: ratio });
        expect(config.engine).toEqual(asMeasured.engine);
        expect(config.traffic.load).toEqual(asMeasured.traffic.load);
        expect(config.traffic.stop).toEqual(asMeasured.traffic.stop);
      }
    }
    // The launch is the measured one (aiconfigurator's caps: 32 + 1000 + 1500 = 2532 tokens), not the engine's defaults.
    expect(roleOf(measuredPointConfig(gapPoint, factors, lengthsLoad(1)).engine, 'aggregated').scheduler).toMatchObject({
      max_batched_tokens: 2532,
      max_sequences: 32,
    });
  });

  it("takes a gap-analysis sweep's prompts as repeated where its throughput needs more than the prefills could reach", () => {
    // Llama-3.1-8B on one H200 in FP8: per layer q 4096 x 4096 = 16,777,216, k and v 2 x 4096 x
    // 1,024 = 8,388,608, o 16,777,216, MLP 3 x 4096 x 14,336 = 176,160,768: 218,103,808, x 32
    // layers = 6,979,321,856 parameters a token multiplies; the datasheet's FP8 peak 1,979 TFLOP/s.
    const engine = parseRunConfig(
      { engine: { model: 'meta-llama/Llama-3.1-8B-Instruct', hardware: 'h200_sxm', precision: 'fp8' } },
      'run.yaml',
    ).engine;
    const { deployment } = deploymentOf(engine, roleOf(engine, 'aggregated'));
    if (deployment === null) throw new Error('not in the catalog');
    // 160 clients, TTFT 72 ms, ITL 11.3 ms, 1,000 / 100 tokens: a request every 72 + 99 x 11.3 =
    // 1,190.7 ms per client, 160 / 1,190.7 = 0.134375 requests a millisecond, 134.375 prompt tokens,
    // x 2 x 6,979,321,856 = 1.875689e12 FLOPs a millisecond of 1.979e12: 0.947796.
    const busy = { clients: 160, ttftMs: 72, itlMs: 11.3, isl: 1000, osl: 100, rangeRatio: 1 };
    expect(prefillPeakShare(busy, deployment, 1)).toBeCloseTo(0.947796, 5);
    // Over two replicas the clients' prompts have twice the GPUs.
    expect(prefillPeakShare(busy, deployment, 2)).toBeCloseTo(0.947796 / 2, 5);
    // Lengths drawn in [0.8 L, L]: the mean prompt is 0.9 L.
    expect(prefillPeakShare({ ...busy, rangeRatio: 0.8 }, deployment, 1)).toBeCloseTo(0.947796 * 0.9, 5);
    // 16 clients, 80 ms, 10 ms: 16 / 1,070 x 1,000 x 2 x 6,979,321,856 / 1.979e12 = 0.105471.
    const light = { clients: 16, ttftMs: 80, itlMs: 10, isl: 1000, osl: 100, rangeRatio: 1 };
    expect(prefillPeakShare(light, deployment, 1)).toBeCloseTo(0.105471, 5);
    expect(PROMPT_REUSE_PEAK_SHARE).toBe(0.8);

    const gapSource = (c: number) => `source_file=/x/aic-auto-gap-analysis/data/h200_sxm/b/v/M.csv; silicon_concurrency=${c}`;
    const sweep = (backend: string, source = gapSource) =>
      catalogPoints(
        sample([
          `a,"${source(16)}",${backend},0.12.0,meta-llama/Llama-3.1-8B-Instruct,h200_sxm,fp8,agg,1000,100,fp8,,16,1,1,,1,1,80,10`,
          `b,"${source(160)}",${backend},0.12.0,meta-llama/Llama-3.1-8B-Instruct,h200_sxm,fp8,agg,1000,100,fp8,,160,1,1,,1,1,72,11.3`,
        ]),
      ).points;
    // The busy point cannot have prefilled every prompt: the whole sweep repeated AIPerf's prompts,
    // which vLLM's and SGLang's prefix caches serve.
    for (const backend of ['vllm', 'sglang']) {
      const points = sweep(backend);
      expect(points.map((p) => p.concurrency)).toEqual([16, 160]);
      for (const p of points) {
        expect(p.setup.apart).toBeNull();
        const config = measuredPointConfig(p, efficiencyFor('h200_sxm', backend).factors, resolveSimLoad({}));
        expect(config.traffic.source).toMatchObject({ dataset_entries: AIPERF_DATASET_ENTRIES });
      }
    }
    expect(AIPERF_DATASET_ENTRIES).toBe(100);
    // TensorRT-LLM's launch turned block reuse off: no replay explains the sweep, reported apart.
    for (const p of sweep('trtllm')) expect(p.setup.apart).toMatch(/more than 80 % of the datasheet matmul peak.*block reuse off/);
    // Without the busy point, or from InferenceX (every prompt its own), the prompts stay distinct.
    const lightOnly = catalogPoints(
      sample([`a,"${gapSource(16)}",vllm,0.12.0,meta-llama/Llama-3.1-8B-Instruct,h200_sxm,fp8,agg,1000,100,fp8,,16,1,1,,1,1,80,10`]),
    ).points;
    expect(
      measuredPointConfig(lightOnly[0], efficiencyFor('h200_sxm', 'vllm').factors, resolveSimLoad({})).traffic.source,
    ).not.toHaveProperty('dataset_entries');
    const dump = (c: number) =>
      `db-dump/2026-04-27; config_id=7; silicon_concurrency=${c}; measured=2026-03-01T00:00:00.000Z; vllm/vllm-openai:v0.19.0`;
    for (const p of sweep('vllm', dump)) {
      expect(measuredPointConfig(p, efficiencyFor('h200_sxm', 'vllm').factors, resolveSimLoad({})).traffic.source).not.toHaveProperty(
        'dataset_entries',
      );
    }
  });

  it('replays gap-analysis points with spread output lengths when asked', () => {
    const gap = `"source_file=/x/aic-auto-gap-analysis/data/h200_sxm/b/v/M.csv; silicon_concurrency=16"`;
    const dump = `"db-dump/2026-04-27; config_id=7; silicon_concurrency=16; measured=2026-03-01T00:00:00.000Z; vllm/vllm-openai:v0.19.0"`;
    const row = (id: string, source: string) =>
      `${id},${source},vllm,0.12.0,meta-llama/Llama-3.1-8B-Instruct,h200_sxm,fp8,agg,1000,100,fp8,,16,1,1,,1,1,80,10`;
    const config = (source: string, spread?: number) => {
      const { points } = catalogPoints(sample([row('a', source)]), spread === undefined ? {} : { gapOutputSpread: spread });
      return measuredPointConfig(points[0], efficiencyFor('h200_sxm', 'vllm').factors, resolveSimLoad({}));
    };
    expect(config(gap).traffic.source).not.toHaveProperty('output_tokens_stddev');
    // 0.03 x OSL 100 = 3 tokens of standard deviation, prompts still fixed.
    const spread = config(gap, 0.03);
    expect(spread.traffic.source).toMatchObject({ input_tokens: 1000, output_tokens: 100, random_range_ratio: 1, output_tokens_stddev: 3 });
    const r = replay(spread, { baseDir: '.' }).summary.metrics.output_sequence_length;
    if (r === undefined) throw new Error('no output lengths');
    // 160 requests of normal(100, 3) lengths: the mean within 1 token, the spread between 2 and 4.
    expect(Math.abs(r.avg - 100)).toBeLessThan(1);
    expect(r.std).toBeGreaterThan(2);
    expect(r.std).toBeLessThan(4);
    // InferenceX rows keep their own spread (lengths in [0.8 L, L]).
    expect(config(dump, 0.03).traffic.source).not.toHaveProperty('output_tokens_stddev');
    // A spread in tokens is the same whatever the OSL: 16 tokens on OSL 100.
    const tokens = (source: string) => {
      const { points } = catalogPoints(sample([row('a', source)]), { gapOutputTokens: 16 });
      return measuredPointConfig(points[0], efficiencyFor('h200_sxm', 'vllm').factors, resolveSimLoad({}));
    };
    expect(tokens(gap).traffic.source).toMatchObject({ output_tokens: 100, random_range_ratio: 1, output_tokens_stddev: 16 });
    expect(tokens(dump).traffic.source).not.toHaveProperty('output_tokens_stddev');
  });

  it("reads the engine's version from the sample or its image", () => {
    expect(engineVersionOf({ version: '0.12.0' })).toBe('0.12.0');
    expect(engineVersionOf({ version: '', protocol: { image: 'vllm/vllm-openai:v0.19.0-cu130' } as never })).toBe('0.19.0');
    expect(engineVersionOf({ version: '', protocol: { image: 'nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6.post2' } as never })).toBe(
      '1.2.0rc6.post2',
    );
    expect(
      engineVersionOf({ version: '', protocol: { image: 'nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1' } as never }),
    ).toBeUndefined();
    expect(engineVersionOf({ version: 'nightly-dev', protocol: { image: 'lmsysorg/sglang:nightly-dev-2026' } as never })).toBeUndefined();
  });

  it('keeps one copy of the same measurements listed under two names (equal to two decimals)', () => {
    const a = (c: number, ttft: string, itl: string, model: string, id: string) =>
      row(
        id,
        `source_file=2026-04-06.csv; model=M; silicon_concurrency=${c}; measured=2026-03-01T00:00:00.000Z`,
        c,
        8,
        '',
        Number(ttft),
        Number(itl),
        model,
      );
    const file = sample([
      a(4, '304.65371906757355', '8.334993756285813', 'deepseek-ai/DeepSeek-R1', 'r1a'),
      a(8, '306.1283879520488', '10.069642541943574', 'deepseek-ai/DeepSeek-R1', 'r1b'),
      // The same runs rounded to two decimals under another name.
      a(4, '304.65', '8.33', 'deepseek-ai/DeepSeek-V3', 'v3a'),
      a(8, '306.13', '10.07', 'deepseek-ai/DeepSeek-V3', 'v3b'),
      // A different run (TTFT differs).
      a(4, '310.5', '8.33', 'other/model', 'oa'),
      a(8, '306.13', '10.07', 'other/model', 'ob'),
    ]);
    const models = readSiliconDeployments(file, 2).map((d) => d.model);
    expect(models).toEqual(['DeepSeek-R1', 'model']);
  });

  it('reports cold-start stalls apart: cold TTFT flat over a doubling while ITL rises, at 2 s or more', () => {
    const series = (warmed: boolean, points: [number, number, number][]) => ({
      points: points.map(([c, ttft, itl]) => ({
        source: '',
        key: { concurrency: c },
        metrics: { time_to_first_token: { avg: ttft }, inter_token_latency: { avg: itl } },
      })),
      info: points.map(([c]) => ({ clients: c, batchSize: c, measured: warmed ? '2026-02-01' : '2025-11-10', warmedUp: warmed, line: 0 })),
    });
    const rows: [number, number, number][] = [
      [4, 388, 9.1],
      [8, 663, 12.6],
      [16, 890, 16.3],
      [32, 7101, 18.6],
      [64, 7522, 23.9],
      [128, 7626, 30.4],
    ];
    // 32 -> 64: 7522 <= 1.25 x 7101 and 23.9 >= 1.2 x 18.6; 64 -> 128 likewise; 16 -> 32 is a jump.
    expect(coldStallConcurrencies(series(false, rows))).toEqual([32, 64, 128]);
    // The same values measured after a warm-up: saturation, not a stall; nothing apart.
    expect(coldStallConcurrencies(series(true, rows))).toEqual([]);
    // Flat TTFT below 2 s is light load, not a stall.
    expect(
      coldStallConcurrencies(
        series(false, [
          [4, 117, 4.4],
          [8, 115, 5.6],
          [16, 130, 7.3],
        ]),
      ),
    ).toEqual([]);
  });
});

describe('the engine fit base config', () => {
  // vLLM 0.18 MiniMax-M2.5 FP8 on four H100, TP 4 / EP 4, 8192/1024: measured saturated from 32 clients.
  const d = {
    model: 'MiniMax-M2.5',
    modelPath: 'MiniMaxAI/MiniMax-M2.5',
    backend: 'vllm',
    version: '0.18.0',
    precision: 'fp8',
    expert: 4,
    system: 'h100_sxm',
    tp: 4,
    attentionDp: 1,
    isl: 8192,
    osl: 1024,
  };
  it('keeps unlimited KV unless asked, and sizes it from the catalog with kv auto', () => {
    const unlimited = deploymentBaseConfig(d, { backend: 'vllm' });
    expect(kvBlocksPerRank(unlimited.engine, roleOf(unlimited.engine, 'aggregated'))).toBeNull();
    const auto = deploymentBaseConfig(d, { backend: 'vllm', kv: 'auto' });
    const role = roleOf(auto.engine, 'aggregated');
    expect(role.kv_cache.capacity.type).toBe('auto');
    // The same deployment written by hand as a user would.
    const hand = parseRunConfig(
      {
        engine: {
          model: 'MiniMaxAI/MiniMax-M2.5',
          hardware: 'h100_sxm',
          precision: 'fp8',
          backend: 'vllm',
          backend_version: '0.18.0',
          workers: {
            aggregated: {
              parallelism: { tensor: 4, expert: 4 },
              scheduler: { max_batched_tokens: 8192, chunked_prefill: true },
            },
          },
        },
      },
      'hand.yaml',
    );
    const blocks = kvBlocksPerRank(auto.engine, role);
    expect(blocks).toBe(kvBlocksPerRank(hand.engine, roleOf(hand.engine, 'aggregated')));
    // A closed loop of C clients holds about C x (ISL + OSL / 2) tokens: room for 16 clients
    // (139,264 tokens), not for 64 (557,056), as the measured saturation between 16 and 32 says.
    const tokens = (blocks as number) * role.kv_cache.block_size;
    expect(tokens).toBeGreaterThan(16 * (8192 + 512));
    expect(tokens).toBeLessThan(64 * (8192 + 512));
  });

  it('takes the KV flags the deployment was launched with', () => {
    const bf16 = deploymentBaseConfig(d, { backend: 'vllm', kv: 'auto' });
    const fp8 = deploymentBaseConfig(d, {
      backend: 'vllm',
      kv: 'auto',
      launch: { tp: 4, attentionDp: 1, expert: 4, kvCache: { dtype: 'fp8', gpu_memory_utilization: 0.9 } },
    });
    const role = roleOf(fp8.engine, 'aggregated');
    expect(role.kv_cache.dtype).toBe('fp8');
    // vLLM keeps BF16 KV unless told (dtype auto): one byte an element instead of two, so twice
    // the blocks from the same memory (to the block the division rounds down).
    const half = kvBlocksPerRank(bf16.engine, roleOf(bf16.engine, 'aggregated')) as number;
    const blocks = kvBlocksPerRank(fp8.engine, role) as number;
    expect(blocks).toBeGreaterThanOrEqual(2 * half);
    expect(blocks).toBeLessThanOrEqual(2 * half + 1);
    // Without kv auto the launch is ignored: unlimited KV, the row's own parallelism.
    const unlimited = deploymentBaseConfig(d, { backend: 'vllm', launch: { tp: 8, attentionDp: 1, expert: 1 } });
    expect(roleOf(unlimited.engine, 'aggregated').parallelism.tensor).toBe(4);
    expect(kvBlocksPerRank(unlimited.engine, roleOf(unlimited.engine, 'aggregated'))).toBeNull();
  });
});

describe('whether a deployment was launched as known', () => {
  const shipped = readSiliconDeployments(join(import.meta.dirname, '..', 'data', 'silicon', 'aic-silicon-sample.csv'), 5);
  const find = (pattern: RegExp) => {
    const d = shipped.find((x) => pattern.test(x.label));
    if (d === undefined) throw new Error(`no deployment ${pattern}`);
    return d;
  };
  it('knows an InferenceX recipe and an aiconfigurator-generated launch, not the columns of a row without either', () => {
    // vLLM 0.17 Kimi-K2.5 FP4 on B200: its script is in data/silicon/inferencex-flags.yaml.
    const kimi = find(/^vllm 0\.17\.0 Kimi-K2\.5 b200_sxm fp4 8192\/1024/);
    expect(launchKnown(kimi, kimi.points.length - 1)).toBe(true);
    // aiconfigurator's gap-analysis campaign: launched as aiconfigurator generates deployments.
    const gap = find(/^trtllm 1\.0\.0rc3 Llama-3\.1-8B-Instruct h100_sxm - 1024\/128 tp1/);
    expect(gap.protocol.source).toBe('gap-analysis');
    expect(launchKnown(gap, 0)).toBe(true);
    // SGLang DeepSeek-R1 on GB200 "tp72": an InferenceX row no recipe matches.
    const gb200 = find(/^sglang - DeepSeek-R1 gb200 fp8 1024\/1024 tp72/);
    expect(gb200.protocol.source).toBe('inferencex');
    expect(launchKnown(gb200, gb200.points.length - 1)).toBe(false);
    // A row of no known campaign.
    const [other] = readSiliconDeployments(
      sample([row('a', 'my-run.csv', 8, 2, '', 200, 10), row('b', 'my-run.csv', 16, 2, '', 260, 12)]),
      2,
    );
    expect(other.protocol.source).toBe('unknown');
    expect(launchKnown(other, 1)).toBe(false);
  });
});
