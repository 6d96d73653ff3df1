/**
 * The `linear` timing provider: a base plus a term per prefill token, prefill attention pair,
 * decoding request (optionally to a power) and decoded KV token, with an optional overlap of the
 * prefill terms and the rest of the pass. One closure per shape, so the common one does no pow.
 */
import type { PassTimeFn } from './timing-model.js';

/** The linear model, coefficients in ms per unit. */
export interface LinearTiming {
  type: 'linear';
  baseMs: number;
  prefillTokenMs: number;
  prefillPairMs: number;
  decodeRequestMs: number;
  decodeKvTokenMs: number;
  /** Exponent p of the decoding-request term, decodeRequestMs x B^p. */
  decodeRequestExponent: number;
  /** Overlap h in [0, 1] of the prefill terms and the rest of the pass. */
  prefillOverlap: number;
}

export function createLinearPassTime(spec: LinearTiming): PassTimeFn {
  const { baseMs, prefillTokenMs, prefillPairMs, decodeRequestMs, decodeKvTokenMs } = spec;
  const exponent = spec.decodeRequestExponent;
  const overlap = spec.prefillOverlap;
  if (overlap > 0) {
    // Roofline overlap: the prefill work (compute) and the rest of the pass (weights and
    // KV reads) overlap by `overlap` of the smaller of the two.
    return (v) => {
      const rest =
        baseMs + decodeRequestMs * (exponent === 1 ? v.decodeRequests : v.decodeRequests ** exponent) + decodeKvTokenMs * v.decodeKvTokens;
      const prefill = prefillTokenMs * v.prefillTokens + prefillPairMs * v.prefillPairs;
      return rest + prefill - overlap * (rest < prefill ? rest : prefill);
    };
  }
  if (exponent === 1) {
    return (v) =>
      baseMs +
      prefillTokenMs * v.prefillTokens +
      prefillPairMs * v.prefillPairs +
      decodeRequestMs * v.decodeRequests +
      decodeKvTokenMs * v.decodeKvTokens;
  }
  return (v) =>
    baseMs +
    prefillTokenMs * v.prefillTokens +
    prefillPairMs * v.prefillPairs +
    decodeRequestMs * v.decodeRequests ** exponent +
    decodeKvTokenMs * v.decodeKvTokens;
}
