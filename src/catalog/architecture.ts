/**
 * Counts derived from a model's architecture: parameters by kind (what a pass reads and
 * multiplies), KV cache bytes per token and per sequence, and attention work per token pair.
 * Pure arithmetic on the catalog entry; docs/hardware-and-models.md writes each formula out.
 * Norms, biases of the MLP and rotary tables are left out (well under 0.1 % of any catalog model).
 */
import type { ModelEntry, Precision } from './schema.js';

/** Bytes per stored element of each precision (fp4 and int4 with their block scales: 1 scale of 1 byte per 16 values). */
export const BYTES_PER_ELEMENT: Record<Precision, number> = { bf16: 2, fp8: 1, fp4: 0.5 + 1 / 16, int4: 0.5 + 1 / 16 };

/** Parameters of one model by where they sit, as counts (not bytes). */
export interface ParameterBreakdown {
  /** Input embedding (looked up, never multiplied). */
  embedding: number;
  /** Output projection (vocab x hidden; 0 when tied to the embedding, then the embedding is read instead). */
  lmHead: number;
  /** Attention projections of every layer (and the sparse-attention indexer, linear-attention blocks). */
  attention: number;
  /** Dense MLPs (every layer of a dense model, the leading dense layers of a MoE). */
  denseMlp: number;
  /** Shared experts and routers of every MoE layer (run for every token). */
  sharedMoe: number;
  /** Routed experts of every MoE layer, all of them. */
  routedExperts: number;
  /** One routed expert of one layer. */
  perExpert: number;
  /** MoE layers. */
  moeLayers: number;
}

function attentionParamsPerLayer(model: ModelEntry): { full: number; linear: number } {
  const { hidden_size: h, attention: a } = model.architecture;
  let full: number;
  if (a.type === 'mla') {
    const qk = (a.qk_nope_head_dim ?? 0) + (a.qk_rope_head_dim ?? 0);
    const v = a.v_head_dim ?? a.head_dim;
    const q = a.q_lora_rank ? h * a.q_lora_rank + a.q_lora_rank * a.heads * qk : h * a.heads * qk;
    const kvA = h * ((a.kv_lora_rank ?? 0) + (a.qk_rope_head_dim ?? 0));
    const kvB = (a.kv_lora_rank ?? 0) * a.heads * ((a.qk_nope_head_dim ?? 0) + v);
    full = q + kvA + kvB + a.heads * v * h;
  } else {
    const q = h * a.heads * a.head_dim * (a.output_gate ? 2 : 1);
    full = q + 2 * h * a.kv_heads * a.head_dim + a.heads * a.head_dim * h;
  }
  if (a.indexer) {
    // Lightning indexer of DeepSeek sparse attention: queries from the low-rank query (or the
    // hidden state), one key per token, per-head weights.
    const qIn = a.q_lora_rank ?? h;
    full += qIn * a.indexer.heads * a.indexer.head_dim + h * a.indexer.head_dim + h * a.indexer.heads;
  }
  let linear = 0;
  if (a.linear_attention) {
    const la = a.linear_attention;
    const keyDim = la.key_heads * la.key_head_dim;
    const valueDim = la.value_heads * la.value_head_dim;
    // q, k, v and the output gate z; the per-head decay inputs b and a; a short causal conv over
    // q, k, v; the output projection.
    linear = h * (2 * keyDim + 2 * valueDim) + h * 2 * la.value_heads + (2 * keyDim + valueDim) * la.conv_kernel + valueDim * h;
  }
  return { full, linear };
}

export function parameterBreakdown(model: ModelEntry): ParameterBreakdown {
  const arch = model.architecture;
  const h = arch.hidden_size;
  const linearLayers = arch.attention.linear_attention_layers ?? 0;
  const perLayer = attentionParamsPerLayer(model);
  const attention = (arch.layers - linearLayers) * perLayer.full + linearLayers * perLayer.linear;
  const moe = arch.moe;
  const denseLayers = moe ? moe.dense_layers : arch.layers;
  const denseMlp = denseLayers * 3 * h * (arch.intermediate_size ?? 0);
  const moeLayers = moe ? arch.layers - moe.dense_layers : 0;
  const perExpert = moe ? 3 * h * moe.expert_intermediate_size : 0;
  const sharedWidth = moe ? (moe.shared_expert_intermediate_size ?? moe.shared_experts * moe.expert_intermediate_size) : 0;
  const sharedMoe = moe ? moeLayers * (3 * h * sharedWidth + h * moe.experts) : 0;
  const routedExperts = moe ? moeLayers * moe.experts * perExpert : 0;
  const embedding = arch.vocab_size * h;
  return {
    embedding,
    lmHead: arch.tie_word_embeddings ? 0 : embedding,
    attention,
    denseMlp,
    sharedMoe,
    routedExperts,
    perExpert,
    moeLayers,
  };
}

/**
 * Total and active parameters from the architecture. `active` counts what one token multiplies:
 * every non-expert weight, `experts_per_token` routed experts per MoE layer, and the output
 * projection (the input embedding is a lookup; `activeWithEmbedding` adds it, as some publishers count).
 */
export function parameterCounts(model: ModelEntry): { total: number; active: number; activeWithEmbedding: number } {
  const p = parameterBreakdown(model);
  const outputProjection = p.lmHead > 0 ? p.lmHead : p.embedding;
  const common = p.attention + p.denseMlp + p.sharedMoe;
  const k = model.architecture.moe?.experts_per_token ?? 0;
  const active = common + p.moeLayers * k * p.perExpert + outputProjection;
  return {
    total: p.embedding + p.lmHead + common + p.routedExperts,
    active,
    activeWithEmbedding: active + (p.lmHead > 0 ? p.embedding : 0),
  };
}

/** Layer counts by attention kind. */
export function layerKinds(model: ModelEntry): { full: number; sliding: number; linear: number } {
  const a = model.architecture.attention;
  const sliding = a.sliding_window_layers ?? 0;
  const linear = a.linear_attention_layers ?? 0;
  return { full: model.architecture.layers - sliding - linear, sliding, linear };
}

/**
 * KV cache bytes one token adds to one layer on one GPU of a `tensor`-way shard. GQA: keys and
 * values of the KV heads the GPU holds (heads are split over the tensor-parallel GPUs; when
 * there are fewer KV heads than GPUs each GPU keeps one, as vLLM replicates them). MLA: the
 * compressed latent and the rope key, kept whole on every GPU. A sparse-attention indexer adds
 * its key.
 */
export function kvBytesPerTokenLayer(model: ModelEntry, kvBytes: number, tensor: number): number {
  const a = model.architecture.attention;
  let bytes: number;
  if (a.type === 'mla') {
    bytes = ((a.kv_lora_rank ?? 0) + (a.qk_rope_head_dim ?? 0)) * kvBytes;
  } else {
    const headsPerGpu = Math.max(1, a.kv_heads / tensor);
    bytes = 2 * headsPerGpu * a.head_dim * kvBytes;
  }
  if (a.indexer) bytes += a.indexer.head_dim * kvBytes;
  return bytes;
}

/**
 * Fixed per-sequence cache of one GPU (bytes): sliding-window layers hold at most the window
 * of every sequence, linear-attention layers a recurrent state (fp32) and a convolution window.
 */
export function perSequenceStateBytes(model: ModelEntry, kvBytes: number, tensor: number): number {
  const a = model.architecture.attention;
  const kinds = layerKinds(model);
  let bytes = kinds.sliding * (a.sliding_window ?? 0) * kvBytesPerTokenLayer(model, kvBytes, tensor);
  if (a.linear_attention && kinds.linear > 0) {
    const la = a.linear_attention;
    const state = (la.value_heads * la.key_head_dim * la.value_head_dim * 4) / tensor;
    const conv = ((2 * la.key_heads * la.key_head_dim + la.value_heads * la.value_head_dim) * (la.conv_kernel - 1) * 2) / tensor;
    bytes += kinds.linear * (state + conv);
  }
  return bytes;
}

/** KV bytes per token on one GPU over the layers whose cache grows with the context (full attention). */
export function kvBytesPerToken(model: ModelEntry, kvBytes: number, tensor: number): number {
  return layerKinds(model).full * kvBytesPerTokenLayer(model, kvBytes, tensor);
}
