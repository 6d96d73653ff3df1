/**
 * The model and GPU catalog: every entry validates and matches the parameter count its
 * publisher states; KV capacity and roofline pass times against arithmetic written out here.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parameterCounts } from '../src/catalog/architecture.js';
import { kvCapacity, rooflineCoefficients, type Deployment } from '../src/catalog/deployment.js';
import type { EfficiencyFactors } from '../src/catalog/efficiency.js';
import { catalogFolders, findHardware, findModel, loadCatalog } from '../src/catalog/load.js';
import { hardwareEntrySchema, modelEntrySchema, type HardwareEntry, type ModelEntry } from '../src/catalog/schema.js';
import { ConfigError } from '../src/config/errors.js';
import { createRooflinePassTime } from '../src/core/roofline.js';
import type { PassView } from '../src/core/timing.js';

const catalog = loadCatalog();

describe('the bundled catalog', () => {
  it('has every model of the silicon sample and the listed extras, by the names users type', () => {
    const names = [
      'deepseek-ai/DeepSeek-R1',
      'deepseek-ai/DeepSeek-V3',
      'nvidia/DeepSeek-R1-NVFP4',
      'nvidia/DeepSeek-V3.1-NVFP4',
      'MiniMaxAI/MiniMax-M2.5',
      'openai/gpt-oss-120b',
      'openai/gpt-oss-20b',
      'meta-llama/Llama-3.1-70B',
      'meta-llama/Llama-3.1-8B-Instruct',
      'meta-llama/Llama-3.1-405B',
      'nvidia/Llama-3.1-8B-Instruct-FP8',
      'Qwen/Qwen3.5-397B-A17B',
      'moonshotai/Kimi-K2.5',
      'Qwen/Qwen3-235B-A22B-FP8',
      'zhipuai/GLM-5',
      'nvidia/Qwen3-32B-NVFP4',
      'Qwen/Qwen3-32B',
      'Qwen/Qwen3-0.6B',
      'Qwen/Qwen3-8B',
      'Qwen/Qwen3-30B-A3B',
    ];
    for (const name of names) expect(findModel(name), name).toBeDefined();
    expect(findModel('QWEN/qwen3-32b')?.id).toBe('qwen3-32b');
  });

  it('has every GPU of the silicon sample and the listed extras, by the sample ids', () => {
    for (const id of [
      'h100_sxm',
      'h200_sxm',
      'b200_sxm',
      'b300_sxm',
      'gb200',
      'gb300',
      'a100_sxm',
      'l40s',
      'rtx_4090',
      'rtx_pro_6000',
      'mi300x',
    ]) {
      expect(findHardware(id), id).toBeDefined();
    }
  });

  it('cites a source for every entry', () => {
    for (const m of catalog.models) expect(Object.keys(m.sources), m.id).toEqual(expect.arrayContaining(['config', 'parameters']));
    for (const h of catalog.hardware) expect(h.sources.datasheet.length, h.id).toBeGreaterThan(10);
  });

  // The publishers round their figures and count embeddings differently (gpt-oss counts the
  // output projection but not the input embedding; Qwen and Llama count both): the active count
  // must match under one of the two conventions.
  it.each(catalog.models.map((m) => [m.id, m] as const))('%s matches the parameter counts it states', (_id, model) => {
    const counts = parameterCounts(model);
    expect(Math.abs(counts.total / model.parameters.total - 1)).toBeLessThan(0.03);
    const active = Math.min(
      Math.abs(counts.active / model.parameters.active - 1),
      Math.abs(counts.activeWithEmbedding / model.parameters.active - 1),
    );
    expect(active).toBeLessThan(0.05);
  });

  it('counts Llama-3.1-8B parameters exactly as written out', () => {
    const model = findModel('meta-llama/Llama-3.1-8B') as ModelEntry;
    // Per layer: q 4096x4096, k and v 4096x(8x128) each, o 4096x4096, MLP 3x4096x14336.
    const perLayer = 4096 * 4096 + 2 * 4096 * 1024 + 4096 * 4096 + 3 * 4096 * 14336;
    const embeddings = 2 * 128256 * 4096;
    expect(parameterCounts(model).total).toBe(32 * perLayer + embeddings);
  });
});

describe('catalog files with mistakes', () => {
  function folderWith(kind: 'models' | 'hardware', name: string, text: string): string {
    const root = mkdtempSync(join(tmpdir(), 'servesim-catalog-'));
    mkdirSync(join(root, kind));
    writeFileSync(join(root, kind, name), text);
    return root;
  }
  const llama = () => structuredClone(findModel('llama-3.1-8b') as ModelEntry);
  const yaml = (value: unknown) => JSON.stringify(value);

  it('names the file and the dotted field of a wrong value', () => {
    const bad = { ...llama(), id: 'my-model', aliases: ['my-model'] } as Record<string, unknown>;
    (bad.architecture as Record<string, unknown>).layers = 0;
    const folder = folderWith('models', 'my-model.yaml', yaml(bad));
    expect(() => loadCatalog([...catalogFolders(), folder])).toThrow(
      /my-model\.yaml: architecture\.layers: must be a positive integer, got 0/,
    );
  });

  it('names an unknown key', () => {
    const bad = { ...llama(), id: 'my-model', aliases: ['my-model'], layerz: 3 };
    const folder = folderWith('models', 'my-model.yaml', yaml(bad));
    expect(() => loadCatalog([...catalogFolders(), folder])).toThrow(/my-model\.yaml: layerz: unknown key/);
  });

  it('refuses an id that is not the file name, and a name two entries claim', () => {
    const folder = folderWith('models', 'other.yaml', yaml({ ...llama(), id: 'my-model', aliases: ['x'] }));
    expect(() => loadCatalog([...catalogFolders(), folder])).toThrow(/other\.yaml: id: must equal the file name/);
    const clash = folderWith('models', 'clash.yaml', yaml({ ...llama(), id: 'clash', name: 'clash', aliases: ['Qwen/Qwen3-8B'] }));
    expect(() => loadCatalog([...catalogFolders(), clash])).toThrow(/clash\.yaml: aliases: the name "qwen\/qwen3-8b" also names qwen3-8b/);
  });

  it('refuses an MLA model without its latent fields, and a GPU without bandwidth', () => {
    const mla = llama() as unknown as { architecture: { attention: Record<string, unknown> } };
    mla.architecture.attention.type = 'mla';
    const folder = folderWith('models', 'my-mla.yaml', yaml({ ...mla, id: 'my-mla', name: 'my-mla', aliases: [] }));
    expect(() => loadCatalog([...catalogFolders(), folder])).toThrow(
      /my-mla\.yaml: architecture\.attention\.kv_lora_rank: is required with type mla/,
    );
    const gpu = structuredClone(findHardware('h100_sxm') as HardwareEntry) as unknown as { memory: Record<string, unknown> };
    delete gpu.memory.bandwidth_gb_per_s;
    const hw = folderWith('hardware', 'my-gpu.yaml', yaml({ ...gpu, id: 'my-gpu', aliases: [] }));
    expect(() => loadCatalog([...catalogFolders(), hw])).toThrow(/my-gpu\.yaml: memory\.bandwidth_gb_per_s: is required/);
  });

  it('refuses more KV heads than heads, and GQA heads the KV heads do not divide', () => {
    const more = llama() as unknown as { architecture: { attention: Record<string, unknown> } };
    more.architecture.attention.kv_heads = 64;
    const folder = folderWith('models', 'kv.yaml', yaml({ ...more, id: 'kv', name: 'kv', aliases: [] }));
    expect(() => loadCatalog([...catalogFolders(), folder])).toThrow(
      /kv\.yaml: architecture\.attention\.kv_heads: must be at most heads \(32\), got 64/,
    );
    more.architecture.attention.kv_heads = 6;
    const uneven = folderWith('models', 'kv.yaml', yaml({ ...more, id: 'kv', name: 'kv', aliases: [] }));
    expect(() => loadCatalog([...catalogFolders(), uneven])).toThrow(
      /kv\.yaml: architecture\.attention\.kv_heads: must divide heads \(32\), got 6/,
    );
  });

  it('refuses stated parameter counts more than 3 % (total) or 5 % (active) from the architecture', () => {
    // Llama-3.1-8B's architecture gives 8,030,261,248 parameters; its card says 8.0B.
    const computed = 32 * (4096 * 4096 * 2 + 2 * 4096 * 1024 + 3 * 4096 * 14336) + 2 * 128256 * 4096;
    const withCounts = (total: number, active: number) => {
      const entry = { ...llama(), id: 'counted', name: 'counted', aliases: [], parameters: { total, active } };
      return folderWith('models', 'counted.yaml', yaml(entry));
    };
    expect(() => loadCatalog([...catalogFolders(), withCounts(computed * 1.029, computed * 1.029)])).not.toThrow();
    expect(() => loadCatalog([...catalogFolders(), withCounts(70e9, 70e9)])).toThrow(
      "counted.yaml: parameters.total: is 70.00 B, but the architecture gives 8.030 B (-88.5 %, more than the 3 % the counts may differ): check it and the architecture fields against the checkpoint's config.json",
    );
    // Active: 7,504,924,672 without the input embedding (the closer convention here), 8,030,261,248 with it.
    expect(() => loadCatalog([...catalogFolders(), withCounts(computed, 7.505e9 * 0.956)])).not.toThrow();
    expect(() => loadCatalog([...catalogFolders(), withCounts(computed, 6.8e9)])).toThrow(
      /counted\.yaml: parameters\.active: is 6\.800 B, but the architecture gives 7\.505 B \(10\.4 %, more than the 5 %/,
    );
    // A layer count off by half changes the computed count, not the stated one.
    const halved = llama() as unknown as { architecture: Record<string, unknown> };
    halved.architecture.layers = 16;
    const folder = folderWith('models', 'halved.yaml', yaml({ ...halved, id: 'halved', name: 'halved', aliases: [] }));
    expect(() => loadCatalog([...catalogFolders(), folder])).toThrow(
      /halved\.yaml: parameters\.total: is 8\.000 B, but the architecture gives 4\.540 B \(-43\.2 %/,
    );
  });

  it('names the file of a model found by name outside the whole catalog', () => {
    const bad = { ...llama(), id: 'one-model', name: 'one-model', aliases: [], parameters: { total: 70e9, active: 70e9 } };
    const folder = folderWith('models', 'one-model.yaml', yaml(bad));
    const saved = process.env.SERVESIM_CATALOG;
    process.env.SERVESIM_CATALOG = folder;
    try {
      expect(() => findModel('one-model')).toThrow(/^models\/one-model\.yaml: parameters\.total: |one-model\.yaml: parameters\.total: /);
    } finally {
      if (saved === undefined) delete process.env.SERVESIM_CATALOG;
      else process.env.SERVESIM_CATALOG = saved;
    }
  });

  it('lets an extra folder replace a bundled entry of the same id', () => {
    const mine = { ...llama(), max_context: 4096 };
    const folder = folderWith('models', 'llama-3.1-8b.yaml', yaml(mine));
    const replaced = loadCatalog([...catalogFolders(), folder]);
    expect(findModel('llama-3.1-8b', replaced)?.max_context).toBe(4096);
  });

  it('throws ConfigError (exit 2) for every such mistake', () => {
    const folder = folderWith('hardware', 'bad.yaml', 'id: bad\n');
    let caught: unknown;
    try {
      loadCatalog([...catalogFolders(), folder]);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).exitCode).toBe(2);
  });
});

function deployment(model: string, hardware: string, over: Partial<Deployment> = {}): Deployment {
  return {
    model: findModel(model) as ModelEntry,
    hardware: findHardware(hardware) as HardwareEntry,
    backend: 'vllm',
    precision: (findModel(model) as ModelEntry).precision,
    expertsOnly: false,
    kvPrecision: 'bf16',
    tensor: 1,
    attentionData: 1,
    expert: 1,
    maxBatchedTokens: 8192,
    maxSequences: 256,
    ...over,
  };
}

describe('KV capacity from memory', () => {
  it('Llama-3.1-70B BF16 on 4 x H100 at 0.9: written out', () => {
    const capacity = kvCapacity(deployment('llama-3.1-70b', 'h100_sxm', { tensor: 4 }), 0.9);
    // H100 reports 81559 MiB; 0.9 of it is usable.
    const usable = 81559 * 2 ** 20 * 0.9;
    // Weights: 80 layers x (q 8192x8192 + k,v 8192x1024 each + o 8192x8192 + MLP 3x8192x28672) in
    // BF16 over 4 GPUs, plus the embedding and output tables (2 x 128256 x 8192) in BF16 over 4.
    const perLayer = 8192 * 8192 * 2 + 2 * 8192 * 1024 + 3 * 8192 * 28672;
    const weights = (80 * perLayer * 2) / 4 + (2 * 128256 * 8192 * 2) / 4;
    // Activations of 8192 tokens: 2 bytes x (6 x 8192 + 2 x 28672 / 4); logits 4 x 256 x 128256 / 4; 1 GiB.
    const reserve = 8192 * 2 * (6 * 8192 + (2 * 28672) / 4) + (4 * 256 * 128256) / 4 + 2 ** 30;
    // KV per token on one GPU: 80 layers x K and V x 2 of the 8 KV heads x 128 x 2 bytes.
    const perToken = 80 * 2 * 2 * 128 * 2;
    expect(capacity.weightBytesPerGpu).toBe(weights);
    expect(capacity.reserveBytesPerGpu).toBe(reserve);
    expect(capacity.kvBytesPerTokenPerGpu).toBe(perToken);
    expect(capacity.tokensPerRank).toBe(Math.floor((usable - weights - reserve) / perToken));
    expect(capacity.tokensPerRank).toBe(482736);
  });

  it('DeepSeek-R1 FP8 on 8 x H200: the MLA latent is kept whole on every GPU', () => {
    const capacity = kvCapacity(deployment('deepseek-r1', 'h200_sxm', { tensor: 8, expert: 8 }), 0.9);
    // 61 layers x (512 latent + 64 rope) x 2 bytes, not divided by the 8 GPUs.
    expect(capacity.kvBytesPerTokenPerGpu).toBe(61 * 576 * 2);
    expect(capacity.tokensPerRank).toBeGreaterThan(0);
  });

  it('gpt-oss-120b: sliding-window layers hold a window per sequence, not per token', () => {
    const capacity = kvCapacity(deployment('gpt-oss-120b', 'h100_sxm', { expertsOnly: true }), 0.9);
    // 18 full-attention layers x 2 x 8 KV heads x 64 x 2 bytes per token.
    expect(capacity.kvBytesPerTokenPerGpu).toBe(18 * 2 * 8 * 64 * 2);
    // 18 sliding layers x 128 tokens x 2048 bytes x 256 sequences.
    expect(capacity.sequenceStateBytesPerGpu).toBe(18 * 128 * 2048 * 256);
  });

  it('is 0 when the weights do not fit', () => {
    expect(kvCapacity(deployment('llama-3.1-405b', 'h100_sxm'), 0.9).tokensPerRank).toBe(0);
  });
});

/** A made-up dense model and GPU whose numbers make the roofline arithmetic easy to follow. */
const toyModel: ModelEntry = modelEntrySchema.parse({
  id: 'toy',
  name: 'toy',
  model_type: 'toy',
  precision: 'bf16',
  parameters: { total: 35602432, active: 35602432 },
  architecture: {
    layers: 2,
    hidden_size: 1024,
    vocab_size: 1000,
    intermediate_size: 4096,
    attention: { type: 'gqa', heads: 8, kv_heads: 8, head_dim: 128 },
  },
  max_context: 4096,
  sources: { config: 'made up', parameters: 'made up' },
});
/** The toy model with every layer a mixture of 64 experts of which each token picks 2. */
const toyMoeModel = modelEntrySchema.parse({
  ...toyModel,
  id: 'toy-moe',
  architecture: {
    ...toyModel.architecture,
    intermediate_size: undefined,
    moe: { experts: 64, experts_per_token: 2, expert_intermediate_size: 512 },
  },
});
const toyGpu: HardwareEntry = hardwareEntrySchema.parse({
  id: 'toy_gpu',
  name: 'toy',
  vendor: 'none',
  architecture: 'none',
  memory: { capacity_gb: 100, bandwidth_gb_per_s: 1000 },
  compute: { bf16: 100, fp8: 200, fp4: null },
  interconnect: { scale_up: 'nvlink', scale_up_gb_per_s: 200, scale_up_domain_gpus: 8, pcie_gb_per_s: 64 },
  tdp_w: 100,
  sources: { datasheet: 'made up for the test' },
});
const ideal: EfficiencyFactors = {
  compute: 1,
  memory: 1,
  attention: 1,
  fp8_compute: 1,
  fp4_compute: 1,
  link: 1,
  collective_us: 0,
  pass_overhead_ms: 0,
  per_request_us: 0,
  per_layer_us: 0,
  layer_floor_us: 0,
  moe: 1,
  frontend_ms: 0,
  frontend_us_per_token: 0,
  frontend_us_per_inflight: 0,
};
const toy = (over: Partial<Deployment> = {}): Deployment => ({
  model: toyModel,
  hardware: toyGpu,
  backend: 'vllm',
  precision: 'bf16',
  expertsOnly: false,
  kvPrecision: 'bf16',
  tensor: 1,
  attentionData: 1,
  expert: 1,
  maxBatchedTokens: 8192,
  maxSequences: 256,
  ...over,
});
const view = (v: Partial<PassView>): PassView => ({
  prefillTokens: 0,
  prefillPairs: 0,
  decodeRequests: 0,
  decodeKvTokens: 0,
  emittedTokens: 0,
  kvBlocksUsed: 0,
  kvBlocksTotal: 0,
  ...v,
  // One rank's worker: its own tokens, unless the test gives the worker's.
  workerTokens: v.workerTokens ?? (v.prefillTokens ?? 0) + (v.decodeRequests ?? 0),
});

describe('roofline pass time', () => {
  // Toy model: per layer q, k, v, o 1024 x 1024 each (8 heads x 128) and MLP 3 x 1024 x 4096:
  // 16,777,216 weights; 2 layers: 33,554,432 dense weights. Output projection 1000 x 1024.
  // GPU: 100 TFLOPS = 1e11 FLOP/ms, 1000 GB/s = 1e9 B/ms.
  it('a compute-bound prefill pass', () => {
    const passTime = createRooflinePassTime(rooflineCoefficients(toy(), ideal));
    // 1000 prompt tokens, causal pairs 1000 x 500, the last one emits.
    const ms = passTime(view({ prefillTokens: 1000, prefillPairs: 500_000, emittedTokens: 1 }));
    const matmuls = Math.max((2 * 33_554_432 * 1000) / 1e11, (33_554_432 * 2) / 1e9); // compute 0.671 > read 0.067
    const head = Math.max((2 * 1_024_000 * 1) / 1e11, (1_024_000 * 2) / 1e9); // read 0.002
    const sampler = (3 * 4 * 1000) / 1e9; // FP32 logits of the 1000-token vocabulary, written and read twice
    const attention = (2 * 4 * 8 * 128 * 500_000) / 1e11; // 2 layers x 4 x heads x head_dim per pair
    expect(ms).toBeCloseTo(matmuls + head + sampler + attention, 12);
    expect(ms).toBeCloseTo(0.71410864, 12);
  });

  it('a memory-bound decode pass', () => {
    const passTime = createRooflinePassTime(rooflineCoefficients(toy(), ideal));
    // 8 requests with 2000 tokens of context each.
    const ms = passTime(view({ decodeRequests: 8, decodeKvTokens: 16_000, emittedTokens: 8 }));
    const matmuls = Math.max((2 * 33_554_432 * 8) / 1e11, (33_554_432 * 2) / 1e9); // the read wins
    const head = Math.max((2 * 1_024_000 * 8) / 1e11, (1_024_000 * 2) / 1e9);
    const sampler = (8 * 3 * 4 * 1000) / 1e9;
    // KV read: 2 layers x K and V x 8 heads x 128 x 2 bytes per context token.
    const attention = Math.max((2 * 4 * 8 * 128 * 16_000) / 1e11, (2 * 2 * 8 * 128 * 2 * 16_000) / 1e9);
    expect(ms).toBeCloseTo(matmuls + head + sampler + attention, 12);
    expect(ms).toBeCloseTo(0.200324864, 12);
  });

  it('a MoE decode pass reads only the experts its tokens touch', () => {
    const passTime = createRooflinePassTime(rooflineCoefficients(toy({ model: toyMoeModel }), ideal));
    // 4 decoding requests, 4000 context tokens. Attention weights 2 x 4,194,304; routers 2 x 1024 x 64.
    const ms = passTime(view({ decodeRequests: 4, decodeKvTokens: 4000, emittedTokens: 4 }));
    const dense = 2 * 4_194_304 + 2 * 1024 * 64;
    const matmuls = Math.max((2 * dense * 4) / 1e11, (dense * 2) / 1e9);
    const head = (1_024_000 * 2) / 1e9 + (4 * 3 * 4 * 1000) / 1e9;
    // Each expert is 3 x 1024 x 512 weights; 4 tokens pick 2 of 64 each: 1 - (62/64)^4 of the experts are touched.
    const perExpert = 3 * 1024 * 512;
    const touched = 1 - (62 / 64) ** 4;
    const experts = Math.max((2 * 2 * perExpert * 2 * 4) / 1e11, (2 * 64 * perExpert * 2 * touched) / 1e9);
    const attention = (2 * 2 * 8 * 128 * 2 * 4000) / 1e9;
    // Activations: 2 layers x 2 pairs a token x (3 x 1024 + 6 x 512) BF16 values, for 4 tokens.
    const activations = (4 * 2 * 2 * (3 * 1024 + 6 * 512) * 2) / 1e9;
    expect(ms).toBeCloseTo(matmuls + head + experts + attention + activations, 12);
    // Far less than reading every expert.
    expect(ms).toBeLessThan(matmuls + head + activations + (2 * 64 * perExpert * 2) / 1e9);
  });

  it("a MoE pass's experts take the tokens of every attention-DP rank of the worker", () => {
    // Attention DP 4, expert parallel 4: each GPU holds 16 of the 64 experts.
    const passTime = createRooflinePassTime(rooflineCoefficients(toy({ model: toyMoeModel, attentionData: 4, expert: 4 }), ideal));
    const perExpert = 3 * 1024 * 512;
    // A 4096-token prompt on one rank: the experts compute 4096 tokens x 2 picks over 4 GPUs
    // (compute-bound: every expert is touched). With the other three ranks idle, the worker's
    // tokens are the rank's own; with each rank prefilling as much, four times as many.
    const experts = (workerTokens: number) => Math.max((2 * 2 * perExpert * 2 * workerTokens) / 4 / 1e11, (2 * 16 * perExpert * 2) / 1e9);
    const alone = passTime(view({ prefillTokens: 4096, prefillPairs: 4096 * 2048, emittedTokens: 1 }));
    const alike = passTime(view({ prefillTokens: 4096, prefillPairs: 4096 * 2048, emittedTokens: 1, workerTokens: 4 * 4096 }));
    // Each GPU serves a quarter of the 2 pairs of every worker token: 2 layers x 0.5 pairs x
    // (3 x 1024 + 6 x 512) BF16 activation values per worker token.
    const activations = (workerTokens: number) => (workerTokens * 2 * 0.5 * (3 * 1024 + 6 * 512) * 2) / 1e9;
    expect(alike - alone).toBeCloseTo(experts(4 * 4096) - experts(4096) + activations(4 * 4096) - activations(4096), 12);
    expect(experts(4 * 4096) - experts(4096)).toBeGreaterThan(0.01);
  });

  it("a MoE pass writes and reads its experts' activations, split by expert parallelism, sliced by tensor parallelism", () => {
    // Tensor 2, experts not split: each GPU serves both pairs of every token with half of each
    // expert's 512 columns: 2 layers x 2 pairs x (3 x 1024 + 6 x 256) BF16 values.
    const sliced = rooflineCoefficients(toy({ model: toyMoeModel, tensor: 2 }), ideal);
    expect(sliced.expertActivationMsPerWorkerToken).toBeCloseTo((2 * 2 * (3 * 1024 + 6 * 256) * 2) / 1e9, 15);
    // Attention DP 2, expert parallel 2: each GPU serves one of a token's 2 pairs, whole experts.
    const split = rooflineCoefficients(toy({ model: toyMoeModel, attentionData: 2, expert: 2 }), ideal);
    expect(split.expertActivationMsPerWorkerToken).toBeCloseTo((2 * 1 * (3 * 1024 + 6 * 512) * 2) / 1e9, 15);
    // A dense model has none; a 1000-token prefill pays the term on every token.
    expect(rooflineCoefficients(toy(), ideal).expertActivationMsPerWorkerToken).toBe(0);
    const pass = view({ prefillTokens: 1000, prefillPairs: 500_000, emittedTokens: 1 });
    const without = createRooflinePassTime({ ...sliced, expertActivationMsPerWorkerToken: 0 })(pass);
    expect(createRooflinePassTime(sliced)(pass) - without).toBeCloseTo(1000 * sliced.expertActivationMsPerWorkerToken, 12);
  });

  it("an attention-DP worker's MoE layers move a token once per other GPU holding one of its experts", () => {
    const c = rooflineCoefficients(toy({ model: toyMoeModel, attentionData: 4, expert: 4 }), ideal);
    // 4 GPUs of 16 experts each; another GPU holds one of a token's 2 picks unless both fall
    // among the other 48: 1 - (48 x 47) / (64 x 63). Dispatch and combine, 2 layers, to each of
    // 3 GPUs, a 1024-wide BF16 hidden state, over 200 / 2 GB/s.
    const hit = 1 - (48 * 47) / (64 * 63);
    expect(c.commMsPerToken).toBeCloseTo((2 * 2 * 3 * hit * 1024 * 2) / 1e8, 15);
    // One copy per expert would move 2 x 3/4 hidden states a layer and direction, not 3 x 0.44.
    expect(c.commMsPerToken).toBeLessThan((2 * 2 * 2 * 0.75 * 1024 * 2) / 1e8);
  });

  it('tensor parallelism splits the work and adds two all-reduces per layer', () => {
    const factors = { ...ideal, collective_us: 10 };
    const one = createRooflinePassTime(rooflineCoefficients(toy(), factors));
    const two = createRooflinePassTime(rooflineCoefficients(toy({ tensor: 2 }), factors));
    const pass = view({ prefillTokens: 1000, prefillPairs: 500_000, emittedTokens: 1 });
    // TP 2 halves matmuls, the head and attention; 2 layers x 2 all-reduces of 10 us, and per token
    // 4 all-reduces x 2 x (2 - 1) / 2 x 1024 x 2 bytes over 100 GB/s per direction (1e8 B/ms).
    // The sampler reads the whole vocabulary's logits on every GPU: 1.2e-5 ms, not halved.
    const sampler = (3 * 4 * 1000) / 1e9;
    const halved = (0.71409664 - 0) / 2;
    const comm = 4 * 0.01 + (1000 * 4 * 2048) / 1e8;
    expect(two(pass)).toBeCloseTo(halved + sampler + comm, 12);
    expect(one(pass)).toBeCloseTo(0.71409664 + sampler, 12);
  });

  it('times attention at its own share of the BF16 peak, FP8 matmuls at their factor of the FP8 peak', () => {
    const base = createRooflinePassTime(rooflineCoefficients(toy(), ideal));
    const slowAttention = createRooflinePassTime(rooflineCoefficients(toy(), { ...ideal, attention: 0.25 }));
    const pass = view({ prefillTokens: 1000, prefillPairs: 500_000, emittedTokens: 1 });
    // Attention 2 layers x 4 x 8 heads x 128 x 500,000 pairs = 4.096e9 FLOP: 0.04096 ms at the peak;
    // at a quarter of it, 4 x that.
    expect(slowAttention(pass) - base(pass)).toBeCloseTo(3 * 0.04096, 12);
    // FP8 weights: matmuls at 200 TFLOPS x compute 1 x fp8_compute 0.5 = 1e11 FLOP/ms, the same
    // as BF16 at its peak; their weights read at one byte: 33,554,432 / 1e9 ms.
    const fp8 = createRooflinePassTime(rooflineCoefficients(toy({ precision: 'fp8' }), { ...ideal, fp8_compute: 0.5 }));
    const fp8Full = createRooflinePassTime(rooflineCoefficients(toy({ precision: 'fp8' }), ideal));
    expect(fp8(pass) - fp8Full(pass)).toBeCloseTo((2 * 33_554_432 * 1000) / 1e11 - (2 * 33_554_432 * 1000) / 2e11, 12);
  });

  it('a pass without a CUDA graph pays every layer launch; a captured one pads its batch', () => {
    // Graphs for 1, 2, 4 and 8 requests (padded up), none above 8.
    const captureSize = Int32Array.from([0, 1, 2, 4, 4, 8, 8, 8, 8]);
    const factors = { ...ideal, per_layer_us: 50, per_request_us: 0 };
    const graphs = createRooflinePassTime(rooflineCoefficients(toy({ captureSize }), factors));
    const eager = createRooflinePassTime(rooflineCoefficients(toy(), factors));
    // 3 decoding requests replay the graph of 4: no launches; matmuls still read-bound (4 rows).
    const decode = view({ decodeRequests: 3, decodeKvTokens: 300, emittedTokens: 3 });
    const sampler = (3 * 4 * 1000) / 1e9;
    expect(eager(decode) - graphs(decode)).toBeCloseTo(2 * 0.05 - sampler, 12); // 2 layers x 50 us, one padded row less sampled
    // 9 requests: no graph of that size, eager like the other.
    const nine = view({ decodeRequests: 9, decodeKvTokens: 900, emittedTokens: 9 });
    expect(graphs(nine)).toBeCloseTo(eager(nine), 12);
    // A pass with prefill work always runs eagerly.
    const mixed = view({ prefillTokens: 10, prefillPairs: 50, decodeRequests: 2, decodeKvTokens: 200, emittedTokens: 3 });
    expect(graphs(mixed)).toBeCloseTo(eager(mixed), 12);
  });

  it('every pass with work pays each layer its floor, graph or not, on top of the launches', () => {
    const captureSize = Int32Array.from([0, 1, 2, 4, 4]);
    const floored = createRooflinePassTime(rooflineCoefficients(toy({ captureSize }), { ...ideal, layer_floor_us: 7, per_layer_us: 50 }));
    const bare = createRooflinePassTime(rooflineCoefficients(toy({ captureSize }), { ...ideal, per_layer_us: 50 }));
    // The toy model has 2 layers: 2 x 7 us = 0.014 ms, in a captured decode pass and in an eager
    // mixed one (whose 2 x 50 us of launches both sides pay).
    const decode = view({ decodeRequests: 3, decodeKvTokens: 300, emittedTokens: 3 });
    expect(floored(decode) - bare(decode)).toBeCloseTo(0.014, 12);
    const mixed = view({ prefillTokens: 10, prefillPairs: 50, decodeRequests: 2, decodeKvTokens: 200, emittedTokens: 3 });
    expect(floored(mixed) - bare(mixed)).toBeCloseTo(0.014, 12);
    // An empty pass runs no layer.
    expect(floored(view({}))).toBe(bare(view({})));
  });

  it('adds the host costs: per pass and per decoding request', () => {
    const passTime = createRooflinePassTime(rooflineCoefficients(toy(), { ...ideal, pass_overhead_ms: 1.5, per_request_us: 20 }));
    const base = createRooflinePassTime(rooflineCoefficients(toy(), ideal));
    const pass = view({ decodeRequests: 8, decodeKvTokens: 16_000, emittedTokens: 8 });
    expect(passTime(pass) - base(pass)).toBeCloseTo(1.5 + 8 * 0.02, 12);
  });
});
