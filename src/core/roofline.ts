/**
 * The roofline pass time: one attention-DP rank's pass from the work in it and a handful of
 * coefficients that the config layer works out from the model's architecture, the GPU's
 * datasheet and the fitted efficiency factors (docs/hardware-and-models.md). Every coefficient is
 * already in milliseconds per unit of work, so a pass costs a few multiplications, one `exp` and
 * a handful of `max`es: each group of kernels takes the longer of its compute time and its memory
 * time, and the groups add up.
 */
import type { PassView } from './timing.js';

/** Coefficients of the roofline pass time, in ms per unit (0 where a part is absent). */
export interface RooflineCoefficients {
  /** Dense matmuls (attention projections, dense MLPs, shared experts, routers): ms per token of compute. */
  gemmMsPerToken: number;
  /** The same weights read once per pass, ms. */
  gemmWeightMs: number;
  /** Output projection: ms per emitted token of compute, and its weights read once per pass. */
  lmHeadMsPerToken: number;
  lmHeadWeightMs: number;
  /** Routed experts: ms of compute per token of the whole worker (tokens of all its attention-DP ranks). */
  expertMsPerWorkerToken: number;
  /** Reading every routed expert held by one GPU, ms; a pass reads the share its tokens touch. */
  expertWeightMs: number;
  /**
   * The experts' activations written and read, ms per token of the worker (memory): each
   * (token, expert) pair a GPU serves reads the token's hidden state, writes and reads the
   * gate-and-up output and the activation, and writes the pair's output, which the weighted sum
   * over the token's experts reads back.
   */
  expertActivationMsPerWorkerToken: number;
  /** ln(1 - experts_per_token / experts): a pass of T worker tokens touches 1 - exp(T x this) of the experts. 0 = dense model. */
  expertMissLog: number;
  /** Prefill attention of the full-attention layers, ms per causal token pair. */
  prefillPairMs: number;
  /** Decode attention of the full-attention layers, per context token: compute ms and KV read ms. */
  decodeKvComputeMs: number;
  decodeKvReadMs: number;
  /** Attention reads at most this many context tokens per query (sparse attention); 0 = all. */
  attendTopK: number;
  /** Sparse-attention indexer over every context token: compute ms and read ms per context token. */
  indexerComputeMsPerKv: number;
  indexerReadMsPerKv: number;
  /** Sliding-window layers: the window, prefill ms per pair, decode compute and read ms per context token. */
  slidingWindow: number;
  slidingPrefillPairMs: number;
  slidingDecodeComputeMs: number;
  slidingDecodeReadMs: number;
  /** Linear-attention layers: ms per token (state update), ms per decoding request (state read). */
  linearMsPerToken: number;
  linearStateReadMsPerRequest: number;
  /** Collectives: ms per token of this rank (bandwidth) and ms per pass (latency of every collective). */
  commMsPerToken: number;
  commFixedMs: number;
  /** Host: ms per pass, ms per request in the pass. */
  passOverheadMs: number;
  perRequestMs: number;
  /**
   * Kernel launches of a pass that runs without a CUDA graph (every layer's launch floor), ms; a
   * captured pass replays its graph and pays none of it.
   */
  eagerMs: number;
  /** Every layer's kernels in any pass that has work, graph or not, at their least, ms. */
  layerFloorMs: number;
  /** Logits written and read by the sampler, ms per emitted token (memory). */
  samplerMsPerToken: number;
  /**
   * CUDA graphs of decode-only passes: captureSize[b] is the graph a pass of b decoding requests
   * replays (b padded up to it; the padded rows cost like real ones in the matmuls), 0 where b
   * runs eagerly (no graph of that size, no padding); a pass with prefill work, or with more
   * requests than the table covers, runs eagerly. Empty: no CUDA graphs.
   */
  captureSize: Int32Array;
}

export function createRooflinePassTime(c: RooflineCoefficients): (view: PassView) => number {
  const {
    gemmMsPerToken,
    gemmWeightMs,
    lmHeadMsPerToken,
    lmHeadWeightMs,
    expertMsPerWorkerToken,
    expertWeightMs,
    expertActivationMsPerWorkerToken,
    expertMissLog,
    prefillPairMs,
    decodeKvComputeMs,
    decodeKvReadMs,
    attendTopK,
    indexerComputeMsPerKv,
    indexerReadMsPerKv,
    slidingWindow,
    slidingPrefillPairMs,
    slidingDecodeComputeMs,
    slidingDecodeReadMs,
    linearMsPerToken,
    linearStateReadMsPerRequest,
    commMsPerToken,
    commFixedMs,
    passOverheadMs,
    perRequestMs,
    eagerMs,
    layerFloorMs,
    samplerMsPerToken,
    captureSize,
  } = c;
  const graphs = captureSize.length;
  const hasExperts = expertMissLog < 0;
  const sparse = attendTopK > 0;
  const sliding = slidingWindow > 0;
  return (v) => {
    const b = v.decodeRequests;
    const p = v.prefillTokens;
    if (p + b === 0) return passOverheadMs;
    // A decode-only pass replays the CUDA graph of its padded size, if there is one.
    const graph = p === 0 && b < graphs ? captureSize[b] : 0;
    const rows = graph > 0 ? graph : b;
    const tokens = p + rows;
    const emitted = graph > 0 ? graph : v.emittedTokens;
    const gemmCompute = gemmMsPerToken * tokens;
    let ms = gemmCompute > gemmWeightMs ? gemmCompute : gemmWeightMs;
    const headCompute = lmHeadMsPerToken * emitted;
    ms += (headCompute > lmHeadWeightMs ? headCompute : lmHeadWeightMs) + samplerMsPerToken * emitted;
    if (graph === 0) ms += eagerMs;
    if (hasExperts) {
      // The worker's tokens: every attention-DP rank's, this rank's padded rows among them.
      const workerTokens = v.workerTokens + (rows - b);
      const compute = expertMsPerWorkerToken * workerTokens;
      const read = expertWeightMs * (1 - Math.exp(workerTokens * expertMissLog));
      ms += (compute > read ? compute : read) + expertActivationMsPerWorkerToken * workerTokens;
    }
    // Attention: prefill pairs (compute-bound), decode context (the larger of compute and KV reads).
    let pairs = v.prefillPairs;
    let kv = v.decodeKvTokens;
    if (sparse) {
      const indexerCompute = indexerComputeMsPerKv * (kv + pairs);
      const indexerRead = indexerReadMsPerKv * kv;
      ms += indexerCompute > indexerRead ? indexerCompute : indexerRead;
      const pairCap = p * attendTopK;
      if (pairs > pairCap) pairs = pairCap;
      const kvCap = b * attendTopK;
      if (kv > kvCap) kv = kvCap;
    }
    ms += prefillPairMs * pairs;
    const decodeCompute = decodeKvComputeMs * kv;
    const decodeRead = decodeKvReadMs * kv;
    ms += decodeCompute > decodeRead ? decodeCompute : decodeRead;
    if (sliding) {
      const slidingPairs = v.prefillPairs < p * slidingWindow ? v.prefillPairs : p * slidingWindow;
      const slidingKv = v.decodeKvTokens < b * slidingWindow ? v.decodeKvTokens : b * slidingWindow;
      const compute = slidingDecodeComputeMs * slidingKv;
      const read = slidingDecodeReadMs * slidingKv;
      ms += slidingPrefillPairMs * slidingPairs + (compute > read ? compute : read);
    }
    ms += linearMsPerToken * tokens + linearStateReadMsPerRequest * b;
    return ms + layerFloorMs + commFixedMs + commMsPerToken * tokens + passOverheadMs + perRequestMs * b;
  };
}
