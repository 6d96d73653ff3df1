/**
 * A deployment's physics: what one GPU holds (weights, KV cache) and how long one pass of one
 * attention-DP rank takes, from a catalog model, a catalog GPU, the precision, the parallelism
 * and the efficiency factors. Everything here is arithmetic done once per run; the replay core
 * receives only the resulting numbers (`RooflineCoefficients`, KV blocks per rank).
 * docs/hardware-and-models.md writes every formula out with a worked example.
 */
import type { RooflineCoefficients } from '../core/roofline.js';
import {
  BYTES_PER_ELEMENT,
  kvBytesPerToken,
  kvBytesPerTokenLayer,
  layerKinds,
  parameterBreakdown,
  perSequenceStateBytes,
} from './architecture.js';
import type { EfficiencyFactors } from './efficiency.js';
import type { HardwareEntry, ModelEntry, Precision } from './schema.js';

export interface Deployment {
  model: ModelEntry;
  hardware: HardwareEntry;
  backend: string;
  /** Precision of the matmul weights (and of the experts). */
  precision: Precision;
  /** True when `precision` covers only the routed experts (other weights stay BF16). */
  expertsOnly: boolean;
  /** Precision of the KV cache. */
  kvPrecision: Precision;
  /** Tensor-parallel GPUs per attention-DP rank. */
  tensor: number;
  /** Attention-DP ranks per worker. */
  attentionData: number;
  /** Expert-parallel groups the routed experts are split over (the worker's GPUs = tensor x attention_data). */
  expert: number;
  maxBatchedTokens: number;
  maxSequences: number;
  /** CUDA graphs of decode-only passes (`captureTable`); absent or empty: none. */
  captureSize?: Int32Array;
}

const BF16 = BYTES_PER_ELEMENT.bf16;

/** GPUs of one worker. */
export function gpusPerWorker(d: Pick<Deployment, 'tensor' | 'attentionData'>): number {
  return d.tensor * d.attentionData;
}

/** Memory of one GPU in bytes: what the driver reports when the catalog knows it, else the datasheet's GB. */
export function gpuMemoryBytes(hardware: HardwareEntry): number {
  return hardware.memory.reported_mib !== undefined ? hardware.memory.reported_mib * 2 ** 20 : hardware.memory.capacity_gb * 1e9;
}

/** Bytes per weight of the dense (non-expert) matmuls and of the routed experts. */
export function weightBytes(d: Deployment): { dense: number; experts: number } {
  const bytes = BYTES_PER_ELEMENT[d.precision];
  return { dense: d.expertsOnly ? BF16 : bytes, experts: bytes };
}

/**
 * Weights held by one GPU, bytes: the dense matmuls and the output projection split over the
 * rank's tensor-parallel GPUs (each attention-DP rank keeps its own copy), the routed experts
 * split over every GPU of the worker, the embedding table split over the tensor-parallel GPUs
 * (BF16, like the output projection).
 */
export function weightBytesPerGpu(d: Deployment): number {
  const p = parameterBreakdown(d.model);
  const w = weightBytes(d);
  const dense = ((p.attention + p.denseMlp + p.sharedMoe) * w.dense) / d.tensor;
  const experts = (p.routedExperts * w.experts) / gpusPerWorker(d);
  const tables = ((p.embedding + p.lmHead) * BF16) / d.tensor;
  return dense + experts + tables;
}

/**
 * Memory a pass needs besides weights and KV cache, per GPU, bytes: activations of a full
 * token budget (the hidden state, attention and MLP intermediates in BF16), FP32 logits of a
 * full batch of sequences, and a fixed 1 GiB for the CUDA context, communication buffers and
 * CUDA graphs. An estimate: the serving engines measure it with a profiling pass at start-up.
 */
export function activationReserveBytes(d: Deployment): number {
  const arch = d.model.architecture;
  const widest = Math.max(arch.intermediate_size ?? 0, (arch.moe?.expert_intermediate_size ?? 0) * (arch.moe?.experts_per_token ?? 0));
  const perToken = BF16 * (6 * arch.hidden_size + (2 * widest) / d.tensor);
  const logits = (4 * d.maxSequences * arch.vocab_size) / d.tensor;
  return d.maxBatchedTokens * perToken + logits + 2 ** 30;
}

export interface KvCapacity {
  /** Tokens of KV cache per attention-DP rank (0 when the memory does not hold the weights). */
  tokensPerRank: number;
  weightBytesPerGpu: number;
  reserveBytesPerGpu: number;
  /** Fixed per-sequence state (sliding windows, recurrent states) of a full batch, per GPU. */
  sequenceStateBytesPerGpu: number;
  kvBytesPerTokenPerGpu: number;
  /** Memory per GPU the engine may use. */
  usableBytesPerGpu: number;
  /** With a separate pool of per-sequence states (SGLang's hybrid models): the sequences it holds. */
  maxStateSequences?: number;
}

/**
 * KV cache tokens per rank. The share `utilization` of memory is read as the engine reads its own
 * flag (`kvOf`, from the engine's defaults): `total` (vLLM's --gpu-memory-utilization): usable =
 * memory x share, KV = usable - weights - activation reserve - per-sequence state; `static`
 * (SGLang's mem_fraction_static, activations outside it): KV = memory x share - weights - state;
 * `free` (TensorRT-LLM's free_gpu_memory_fraction): KV = share x (memory - weights - reserve) -
 * state. Divided by the KV bytes one token takes on one GPU. `reserveGib` replaces the
 * activation estimate.
 */
export function kvCapacity(
  d: Deployment,
  utilization: number,
  reserveGib?: number,
  kvOf: 'total' | 'static' | 'free' = 'total',
  options: { stateToKvRatio?: number } = {},
): KvCapacity {
  const kvBytes = BYTES_PER_ELEMENT[d.kvPrecision];
  const memory = gpuMemoryBytes(d.hardware);
  const weights = weightBytesPerGpu(d);
  const reserve = reserveGib !== undefined ? reserveGib * 2 ** 30 : kvOf === 'static' ? 0 : activationReserveBytes(d);
  const perSequence = perSequenceStateBytes(d.model, kvBytes, d.tensor);
  const perToken = kvBytesPerToken(d.model, kvBytes, d.tensor);
  const usable = kvOf === 'free' ? memory : memory * utilization;
  const rest = kvOf === 'free' ? utilization * (memory - weights - reserve) : usable - weights - reserve;
  // SGLang's hybrid pools: the states of linear-attention layers get ratio / (1 + ratio) of the
  // memory after weights, a pool whose size caps the running requests; the KV cache the rest.
  const ratio = options.stateToKvRatio;
  if (ratio !== undefined && perSequence > 0) {
    const stateBudget = (rest * ratio) / (1 + ratio);
    const kv = rest - stateBudget;
    return {
      tokensPerRank: perToken > 0 && kv > 0 ? Math.floor(kv / perToken) : 0,
      weightBytesPerGpu: weights,
      reserveBytesPerGpu: reserve,
      sequenceStateBytesPerGpu: Math.max(0, stateBudget),
      kvBytesPerTokenPerGpu: perToken,
      usableBytesPerGpu: usable,
      maxStateSequences: Math.max(0, Math.floor(stateBudget / perSequence)),
    };
  }
  const state = perSequence * d.maxSequences;
  const free = rest - state;
  return {
    tokensPerRank: perToken > 0 && free > 0 ? Math.floor(free / perToken) : 0,
    weightBytesPerGpu: weights,
    reserveBytesPerGpu: reserve,
    sequenceStateBytesPerGpu: state,
    kvBytesPerTokenPerGpu: perToken,
    usableBytesPerGpu: usable,
  };
}

/** Dense tensor throughput of one GPU for matmuls of a weight precision, TFLOPS (weight-only formats run in BF16). */
export function matmulTflops(hardware: HardwareEntry, precision: Precision): number {
  const c = hardware.compute;
  if (precision === 'fp4') return c.fp4 ?? c.bf16;
  if (precision === 'fp8') return c.fp8 ?? c.bf16;
  return c.bf16;
}

/** Bandwidth per direction of the links a worker's collectives use, GB/s. */
export function linkGbPerS(hardware: HardwareEntry, gpus: number): number {
  const ic = hardware.interconnect;
  if (gpus <= ic.scale_up_domain_gpus) return ic.scale_up_gb_per_s / 2;
  return ic.network_gb_per_s ?? ic.pcie_gb_per_s / 2;
}

/** The collectives of one rank's pass: how many, and their bytes per token of the pass. */
export interface CollectiveCosts {
  /** Collectives per pass (each costs `collective_us` whatever its size). */
  collectives: number;
  /** Bytes each GPU sends per token of the pass, over all of them. */
  bytesPerToken: number;
  /** Per pass: `collectives` x `collective_us`, ms. */
  commFixedMs: number;
  /** Per token of the pass: its bytes at the link's share of the catalog bandwidth, ms. */
  commMsPerToken: number;
}

/**
 * Collectives per pass: an all-reduce over the tensor-parallel GPUs after attention and after
 * each dense MLP; after a MoE layer, an all-to-all dispatch and combine when the experts serve
 * several attention-DP ranks, else the same all-reduce. Shared by the roofline and by pass-time
 * models built from layer profiles, which time kernels on one GPU and measure no collectives.
 */
export function collectiveCosts(
  d: Pick<Deployment, 'model' | 'hardware' | 'tensor' | 'attentionData'>,
  f: Pick<EfficiencyFactors, 'link' | 'collective_us'>,
): CollectiveCosts {
  const arch = d.model.architecture;
  const moe = arch.moe;
  const gpus = gpusPerWorker(d);
  const t = d.tensor;
  const linkBytesPerMs = linkGbPerS(d.hardware, gpus) * 1e6 * f.link;
  const activation = BF16 * arch.hidden_size;
  const moeLayers = parameterBreakdown(d.model).moeLayers;
  const denseLayers = arch.layers - moeLayers;
  let collectives = 0;
  let bytesPerToken = 0;
  if (t > 1) {
    const allReduce = (2 * (t - 1) * activation) / t;
    collectives += arch.layers + denseLayers;
    bytesPerToken += (arch.layers + denseLayers) * allReduce;
    if (moe && d.attentionData === 1) {
      collectives += moeLayers;
      bytesPerToken += moeLayers * allReduce;
    }
  }
  if (moe && d.attentionData > 1 && gpus > 1) {
    // Dispatch and combine move a token once to every other GPU that holds one of its experts
    // (DeepEP counts a token once per destination rank: `is_token_in_rank`), not once per
    // expert: with the experts spread evenly, another GPU holds one of a token's k picks with
    // probability 1 - C(E - E/G, k) / C(E, k).
    const hit = 1 - noneOfPicks(moe.experts, moe.experts / gpus, moe.experts_per_token);
    collectives += 2 * moeLayers;
    bytesPerToken += (2 * moeLayers * hit * activation * (gpus - 1)) / t;
  }
  return {
    collectives,
    bytesPerToken,
    commFixedMs: (collectives * f.collective_us) / 1000,
    commMsPerToken: bytesPerToken / linkBytesPerMs,
  };
}

/**
 * The roofline coefficients of one rank's pass. Units: FLOP/ms = TFLOPS x 1e9, bytes/ms = GB/s x 1e6.
 */
export function rooflineCoefficients(d: Deployment, f: EfficiencyFactors): RooflineCoefficients {
  const arch = d.model.architecture;
  const a = arch.attention;
  const p = parameterBreakdown(d.model);
  const kinds = layerKinds(d.model);
  const w = weightBytes(d);
  const gpus = gpusPerWorker(d);
  const t = d.tensor;
  // Low-precision matmuls reach compute x their own factor of their peak (where the GPU has one).
  const lowPrecision =
    d.precision === 'fp4' && d.hardware.compute.fp4 != null
      ? f.fp4_compute
      : d.precision === 'fp8' && d.hardware.compute.fp8 != null
        ? f.fp8_compute
        : 1;
  const matmulShare = Math.min(1, f.compute * lowPrecision);
  const matmulFlopsPerMs = matmulTflops(d.hardware, d.precision) * 1e9 * matmulShare;
  const bf16FlopsPerMs = d.hardware.compute.bf16 * 1e9 * f.compute;
  const attentionFlopsPerMs = d.hardware.compute.bf16 * 1e9 * f.attention;
  const bytesPerMs = d.hardware.memory.bandwidth_gb_per_s * 1e6 * f.memory;
  const kvBytes = BYTES_PER_ELEMENT[d.kvPrecision];
  // Expert kernels reach `moe` times the dense matmuls' efficiency, never more than the peaks.
  const expertFlopsPerMs = matmulTflops(d.hardware, d.precision) * 1e9 * Math.min(1, matmulShare * f.moe);
  const expertBytesPerMs = d.hardware.memory.bandwidth_gb_per_s * 1e6 * Math.min(1, f.memory * f.moe);

  const dense = (p.attention + p.denseMlp + p.sharedMoe) / t;
  const outputProjection = (arch.vocab_size * arch.hidden_size) / t;
  const moe = arch.moe;

  // Attention work per layer and GPU (the rank's heads are split over its tensor-parallel GPUs).
  const heads = a.heads / t;
  let pairFlops: number;
  let decodeFlopsPerKv: number;
  if (a.type === 'mla') {
    const nope = a.qk_nope_head_dim ?? 0;
    const rope = a.qk_rope_head_dim ?? 0;
    const v = a.v_head_dim ?? a.head_dim;
    const latent = a.kv_lora_rank ?? 0;
    // Prefill runs as multi-head attention on decompressed keys and values; decode attends over
    // the compressed latent (queries absorbed into it).
    pairFlops = 2 * heads * (nope + rope) + 2 * heads * v;
    decodeFlopsPerKv = 2 * heads * (latent + rope) + 2 * heads * latent;
  } else {
    pairFlops = 4 * heads * a.head_dim;
    decodeFlopsPerKv = 4 * heads * a.head_dim;
  }
  const kvPerTokenLayer = kvBytesPerTokenLayer(d.model, kvBytes, t);
  const indexer = a.indexer;
  const kvLayerBytesWithoutIndexer = kvPerTokenLayer - (indexer ? indexer.head_dim * kvBytes : 0);

  // Linear-attention layers: a recurrent state of value_heads x key_dim x value_dim per sequence,
  // updated and read for every token (about 4 FLOPs per state element), read and written once
  // per decoding request (FP32).
  let linearMsPerToken = 0;
  let linearStateReadMsPerRequest = 0;
  if (a.linear_attention && kinds.linear > 0) {
    const la = a.linear_attention;
    const stateElements = (la.value_heads * la.key_head_dim * la.value_head_dim) / t;
    linearMsPerToken = (kinds.linear * 4 * stateElements) / bf16FlopsPerMs;
    linearStateReadMsPerRequest = (kinds.linear * 2 * 4 * stateElements) / bytesPerMs;
  }

  const { commMsPerToken, commFixedMs } = collectiveCosts(d, f);
  const moeLayers = p.moeLayers;

  return {
    gemmMsPerToken: (2 * dense) / matmulFlopsPerMs,
    gemmWeightMs: (dense * w.dense) / bytesPerMs,
    lmHeadMsPerToken: (2 * outputProjection) / bf16FlopsPerMs,
    lmHeadWeightMs: (outputProjection * BF16) / bytesPerMs,
    expertMsPerWorkerToken: moe ? (2 * moe.experts_per_token * p.perExpert * moeLayers) / gpus / expertFlopsPerMs : 0,
    expertWeightMs: moe ? ((p.routedExperts / gpus) * w.experts) / expertBytesPerMs : 0,
    // Per (token, expert) pair a GPU serves (k / expert groups per token), BF16 activations: the
    // hidden state read, the gate-and-up output (2 x its slice of the expert's width) written and
    // read, the activation (one slice) written and read, the pair's output written and read by
    // the weighted sum: 3 x hidden + 6 x slice elements (vLLM's fused_experts: intermediate caches
    // 1 to 3 and moe_sum).
    expertActivationMsPerWorkerToken: moe
      ? (moeLayers *
          (moe.experts_per_token / d.expert) *
          (3 * arch.hidden_size + (6 * moe.expert_intermediate_size * d.expert) / gpus) *
          BF16) /
        bytesPerMs
      : 0,
    expertMissLog: moe ? Math.log1p(-moe.experts_per_token / moe.experts) : 0,
    prefillPairMs: (kinds.full * pairFlops) / attentionFlopsPerMs,
    decodeKvComputeMs: (kinds.full * decodeFlopsPerKv) / attentionFlopsPerMs,
    decodeKvReadMs: (kinds.full * kvLayerBytesWithoutIndexer) / bytesPerMs,
    attendTopK: indexer ? indexer.topk : 0,
    indexerComputeMsPerKv: indexer
      ? (kinds.full * 2 * indexer.heads * indexer.head_dim) / matmulTflops(d.hardware, 'fp8') / 1e9 / f.compute
      : 0,
    indexerReadMsPerKv: indexer ? (kinds.full * indexer.head_dim * kvBytes) / bytesPerMs : 0,
    slidingWindow: kinds.sliding > 0 ? (a.sliding_window ?? 0) : 0,
    slidingPrefillPairMs: (kinds.sliding * pairFlops) / attentionFlopsPerMs,
    slidingDecodeComputeMs: (kinds.sliding * decodeFlopsPerKv) / attentionFlopsPerMs,
    slidingDecodeReadMs: (kinds.sliding * kvLayerBytesWithoutIndexer) / bytesPerMs,
    linearMsPerToken,
    linearStateReadMsPerRequest,
    commMsPerToken,
    commFixedMs,
    passOverheadMs: f.pass_overhead_ms,
    perRequestMs: f.per_request_us / 1000,
    eagerMs: (arch.layers * f.per_layer_us) / 1000,
    layerFloorMs: (arch.layers * f.layer_floor_us) / 1000,
    // FP32 logits of the whole vocabulary, written by the output projection and read twice by the sampler.
    samplerMsPerToken: (3 * 4 * arch.vocab_size) / bytesPerMs,
    captureSize: d.captureSize ?? new Int32Array(0),
  };
}

/**
 * The chance that none of k experts picked without replacement from n falls among a given m of
 * them: C(n - m, k) / C(n, k), as a product of k ratios.
 */
export function noneOfPicks(n: number, m: number, k: number): number {
  let p = 1;
  for (let i = 0; i < k; i++) p *= Math.max(0, n - m - i) / (n - i);
  return p;
}
