/**
 * The profile pass time (docs/replay-model.md, "Timing providers"): a pass priced by tables of
 * per-layer kernel times measured on the engine (a layer-wise profiler), interpolated at the pass's
 * shape and summed over the model's layers. The tables arrive already summed over layers and in
 * ms (`calibrate/pass-profile.ts` builds them from the profiler's CSVs), so a pass costs two 1-D
 * lookups and one 4-D lookup, with no allocation.
 *
 * Interpolation is linear on every axis between the two profiled values around the query; below
 * the smallest profiled value the first sample is used as it is; above the largest, the line
 * through the two largest is extended. These are the rules of the profiler's own simulator
 * (LLMServingSim's trace generator), so the same tables price a pass the same way in both.
 */
import type { PassView } from './timing-model.js';

/**
 * Attention of every layer of a pass on the profiler's 4-D grid: prefill chunk, prefill history
 * (`kv_prefill`), decoding requests, their mean context (`kv_decode`). The grid is ragged: each
 * (chunk, decodes) cell holds rows of `kv_prefill`, each row samples of `kv_decode`.
 */
export interface ProfileAttention {
  /** Profiled prefill chunks and decode counts, ascending. */
  chunks: Float64Array;
  decodes: Float64Array;
  /**
   * The slice of cell (i, j) at `[i * decodes.length + j]`: its own when profiled, else the profiled
   * cell nearest to it (squared distance in tokens and requests; the first in (chunk, decodes) order on a tie).
   */
  cellSlice: Int32Array;
  /** Slice s has the rows `sliceRows[s] .. sliceRows[s + 1]`, by ascending `rowKvPrefill`. */
  sliceRows: Int32Array;
  rowKvPrefill: Float64Array;
  /** Row r has the samples `rowSamples[r] .. rowSamples[r + 1]`, by ascending `sampleKvDecode`. */
  rowSamples: Int32Array;
  sampleKvDecode: Float64Array;
  /** Attention time of all the model's layers at the sample, ms. */
  sampleMs: Float64Array;
}

/**
 * The profile's skew correction of decodes with mixed contexts: attention at the decodes' mean
 * context, plus alpha x (attention with every decode at the longest context - that), alpha from
 * the bucket of (prefill chunk, decodes, skew rate, longest context, prefill history) the
 * profiler fitted (`alphaDefault` where no bucket holds the pass). A value falls in the first bin
 * i with value <= bins[i + 1]; the skew rate is (mean - shortest) / (longest - shortest).
 */
export interface ProfileSkew {
  alphaDefault: number;
  nBins: Float64Array;
  rateBins: Float64Array;
  kvBigBins: Float64Array;
  kpBins: Float64Array;
  /** The prefill chunks the fit has buckets for (a pass's chunk must be one of them exactly). */
  chunks: Float64Array;
  /** Alpha by `skewBucket(chunk index, n bin, rate bin, kv_big bin, kp bin)`. */
  alpha: Map<number, number>;
}

/** The key of a skew bucket: its chunk's index and its four bin indices (each under 64). */
export function skewBucket(chunk: number, n: number, rate: number, kvBig: number, kp: number): number {
  return (((chunk * 64 + n) * 64 + rate) * 64 + kvBig) * 64 + kp;
}

/** The bin of `value`: the first i with value <= bins[i + 1]; -1 above the last bin. */
export function skewBin(bins: Float64Array, value: number): number {
  for (let i = 0; i + 1 < bins.length; i++) if (value <= bins[i + 1]) return i;
  return -1;
}

/** Pass time from per-layer profiles, every table summed over the layers that use it, in ms. */
export interface ProfileTiming {
  type: 'profile';
  /** Layers that run on every token of the pass (projections, MLP or experts, norms, embedding), at T tokens. */
  tokenKeys: Float64Array;
  tokenMs: Float64Array;
  /**
   * With experts spread over the worker's GPUs: the MoE blocks of every layer at W tokens of the
   * worker (all its attention-DP ranks, which run them together), in place of their share of `tokenMs`.
   */
  moeKeys?: Float64Array;
  moeMs?: Float64Array;
  /** The skew correction, when the profile has one. */
  skew?: ProfileSkew;
  /** Layers that run once per request of the pass (LM head, sampler), at S requests. */
  sequenceKeys: Float64Array;
  sequenceMs: Float64Array;
  attention: ProfileAttention;
}

/**
 * The position of `query` on an ascending axis `keys[from .. to)`: the index of the lower of the two
 * samples to blend, written to `bracket.lo`, and the weight of the upper one to `bracket.t`
 * (0: the lower alone). At or below the first sample: the first, weight 0; above the last: the last
 * two, weight > 1 (extrapolation).
 */
interface Bracket {
  lo: number;
  t: number;
}

function locate(keys: Float64Array, from: number, to: number, query: number, bracket: Bracket): void {
  const n = to - from;
  if (n <= 1 || query <= keys[from]) {
    bracket.lo = from;
    bracket.t = 0;
    return;
  }
  // The first index whose key is above the query (bisect right).
  let a = from;
  let b = to;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (keys[mid] <= query) a = mid + 1;
    else b = mid;
  }
  const lo = a >= to ? to - 2 : a - 1;
  const x0 = keys[lo];
  const x1 = keys[lo + 1];
  bracket.lo = lo;
  bracket.t = x1 === x0 ? 0 : (query - x0) / (x1 - x0);
}

/** A 1-D table at `query` (the rules of `locate`). */
function lookup1d(keys: Float64Array, values: Float64Array, query: number, bracket: Bracket): number {
  locate(keys, 0, keys.length, query, bracket);
  const lo = bracket.lo;
  if (bracket.t === 0) return values[lo];
  return values[lo] + bracket.t * (values[lo + 1] - values[lo]);
}

/**
 * A 1-D profile table at `query`: linear between the samples around it, the first sample at or below
 * the first, the line through the last two above the last (the rules every table here follows).
 */
export function interpolate(keys: Float64Array, values: Float64Array, query: number): number {
  return lookup1d(keys, values, query, { lo: 0, t: 0 });
}

/** Builds the pass-time function of a profile; the loop calls it once per pass. */
export function createProfilePassTime(spec: ProfileTiming): (view: PassView) => number {
  const { tokenKeys, tokenMs, sequenceKeys, sequenceMs } = spec;
  const moeKeys = spec.moeKeys ?? null;
  const moeMs = spec.moeMs ?? null;
  const skew = spec.skew ?? null;
  /** Alpha of a pass's bucket (the default where the fit has none). */
  const skewAlpha = (s: ProfileSkew, chunk: number, decoding: number, rate: number, longest: number, history: number): number => {
    let c = -1;
    for (let i = 0; i < s.chunks.length; i++)
      if (s.chunks[i] === chunk) {
        c = i;
        break;
      }
    const n = skewBin(s.nBins, decoding);
    const r = skewBin(s.rateBins, rate);
    const k = skewBin(s.kvBigBins, longest);
    const p = skewBin(s.kpBins, history);
    if (c < 0 || n < 0 || r < 0 || k < 0 || p < 0) return s.alphaDefault;
    return s.alpha.get(skewBucket(c, n, r, k, p)) ?? s.alphaDefault;
  };
  const { chunks, decodes, cellSlice, sliceRows, rowKvPrefill, rowSamples, sampleKvDecode, sampleMs } = spec.attention;
  const decodeCount = decodes.length;
  const at: Bracket = { lo: 0, t: 0 };

  /** One kv_prefill row at kv_decode `kd`. */
  const rowMs = (row: number, kd: number): number => {
    locate(sampleKvDecode, rowSamples[row], rowSamples[row + 1], kd, at);
    const lo = at.lo;
    return at.t === 0 ? sampleMs[lo] : sampleMs[lo] + at.t * (sampleMs[lo + 1] - sampleMs[lo]);
  };
  /** One (chunk, decodes) slice at (kv_prefill, kv_decode): linear in each. */
  const sliceMs = (slice: number, kp: number, kd: number): number => {
    locate(rowKvPrefill, sliceRows[slice], sliceRows[slice + 1], kp, at);
    const row = at.lo;
    const t = at.t;
    const low = rowMs(row, kd);
    return t === 0 ? low : low + t * (rowMs(row + 1, kd) - low);
  };
  const attentionMs = (pc: number, kp: number, nd: number, kd: number): number => {
    locate(chunks, 0, chunks.length, pc, at);
    const i = at.lo;
    const tc = at.t;
    locate(decodes, 0, decodeCount, nd, at);
    const j = at.lo;
    const td = at.t;
    const i1 = tc === 0 ? i : i + 1;
    const j1 = td === 0 ? j : j + 1;
    const c00 = sliceMs(cellSlice[i * decodeCount + j], kp, kd);
    const c01 = j1 === j ? c00 : sliceMs(cellSlice[i * decodeCount + j1], kp, kd);
    const v0 = c00 + td * (c01 - c00);
    if (i1 === i) return v0;
    const c10 = sliceMs(cellSlice[i1 * decodeCount + j], kp, kd);
    const c11 = j1 === j ? c10 : sliceMs(cellSlice[i1 * decodeCount + j1], kp, kd);
    const v1 = c10 + td * (c11 - c10);
    return v0 + tc * (v1 - v0);
  };

  return (v) => {
    const prefill = v.prefillTokens;
    const decoding = v.decodeRequests;
    const tokens = prefill + decoding;
    if (tokens === 0) return 0;
    // Requests in the pass: the decodes, and the prefills, of which there is at least one when
    // any prefill token is computed and at least as many as finish their prompt (they emit).
    const finishing = v.emittedTokens - decoding;
    const sequences = decoding + (finishing > 1 ? finishing : prefill > 0 ? 1 : 0);
    // The prefill history: the one that gives a single prefill of P tokens the pass's attention
    // pairs Q = P (h + P / 2); exact when one request prefills.
    const history = prefill > 0 ? Math.max(0, Math.round(v.prefillPairs / prefill - prefill / 2)) : 0;
    // The decodes' mean context before this step's token (the token being decoded attends to the
    // ones already in the cache), rounded down as the profiler's simulator does.
    const context = decoding > 0 ? Math.floor((v.decodeKvTokens - decoding) / decoding) : 0;
    let attention = attentionMs(prefill, history, decoding, context);
    if (skew !== null && decoding > 1) {
      // Contexts before this step's token, as `context` is.
      const longest = (v.decodeKvMax ?? 0) - 1;
      if (longest > context) {
        const shortest = (v.decodeKvMin ?? longest + 1) - 1;
        const spread = longest - shortest;
        const rate = spread > 0 ? Math.min(1, Math.max(0, (context - shortest) / spread)) : 0;
        const alpha = skewAlpha(skew, prefill, decoding, rate, longest, history);
        if (alpha !== 0) {
          const top = attentionMs(prefill, history, decoding, longest);
          if (top > attention) attention += alpha * (top - attention);
        }
      }
    }
    const ms =
      lookup1d(tokenKeys, tokenMs, tokens, at) +
      lookup1d(sequenceKeys, sequenceMs, sequences, at) +
      attention +
      (moeKeys === null ? 0 : lookup1d(moeKeys, moeMs as Float64Array, v.workerTokens, at));
    return ms > 0 ? ms : 0;
  };
}
