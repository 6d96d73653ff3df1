/**
 * Timing providers (docs/replay-model.md, "Timing providers"): the duration of one pass of one attention-DP rank,
 * from the batch the scheduler composed. One method, one contract: the result is finite and
 * >= 0, or the run stops with an error that names the provider.
 *
 * A provider is described by a `TimingSpec`, plain numbers in the units the loop uses (the
 * config layer converts), and built into a function once per run by `createPassTime`. Adding a
 * provider is a new member of the union and a new case here; the loop never dispatches on type.
 */

import { createProfilePassTime, type ProfileTiming } from './profile-timing.js';
import { createRooflinePassTime, type RooflineCoefficients } from './roofline.js';

export type { ProfileAttention, ProfileTiming } from './profile-timing.js';

/** What a timing provider sees of one rank's pass. One shape for every provider. */
export interface PassView {
  /** New prefill tokens computed in the pass (P); tokens served from the prefix cache are not counted. */
  prefillTokens: number;
  /** Prefill attention pairs: sum over prefilling requests of chunk * (already_computed + chunk / 2) (Q). */
  prefillPairs: number;
  /** Requests that decode in the pass (B). */
  decodeRequests: number;
  /** Sum of the context lengths (prompt + generated) of the decoding requests (K). */
  decodeKvTokens: number;
  /** Output tokens emitted at the pass end. */
  emittedTokens: number;
  /** KV blocks in use after the pass's allocations, and the pool size (0 = unlimited). */
  kvBlocksUsed: number;
  kvBlocksTotal: number;
}

export type PassTimeFn = (view: PassView) => number;

/** `prefillMs` if the pass has any prefill tokens, plus `decodeMs` if it emits any token. */
export interface FixedTiming {
  type: 'fixed';
  prefillMs: number;
  decodeMs: number;
}

/** The spec's fixed polynomial (no knobs). */
export interface PolynomialTiming {
  type: 'polynomial';
}

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

/** Pass time from architecture, datasheet and efficiency factors: coefficients in ms per unit (roofline.ts). */
export type RooflineTiming = { type: 'roofline' } & RooflineCoefficients;

export type TimingSpec = FixedTiming | PolynomialTiming | LinearTiming | RooflineTiming | ProfileTiming;

export class TimingError extends Error {
  constructor(provider: string, value: number) {
    super(`timing provider '${provider}' returned ${value} ms for a pass; a pass time must be finite and >= 0`);
    this.name = 'TimingError';
  }
}

/** Builds the pass-time function once per run; the loop calls it without dispatching on type. */
export function createPassTime(spec: TimingSpec): PassTimeFn {
  switch (spec.type) {
    case 'roofline':
      return createRooflinePassTime(spec);
    case 'profile':
      return createProfilePassTime(spec);
    case 'fixed': {
      const prefillMs = spec.prefillMs;
      const decodeMs = spec.decodeMs;
      return (v) => (v.prefillTokens > 0 ? prefillMs : 0) + (v.emittedTokens > 0 ? decodeMs : 0);
    }
    case 'polynomial':
      return (v) => {
        let ms = 0;
        if (v.prefillTokens > 0) {
          const t = v.prefillTokens;
          ms += 4.209989e-7 * t * t + 1.518344e-2 * t + 16.50142;
        }
        if (v.decodeRequests > 0) {
          const u = v.kvBlocksTotal > 0 ? Math.min(1, v.kvBlocksUsed / v.kvBlocksTotal) : 0;
          ms += Math.max(1, -25.74 * u * u + 54.01 * u + 5.74);
        }
        return ms;
      };
    case 'linear': {
      const { baseMs, prefillTokenMs, prefillPairMs, decodeRequestMs, decodeKvTokenMs } = spec;
      const exponent = spec.decodeRequestExponent;
      const overlap = spec.prefillOverlap;
      if (overlap > 0) {
        // Roofline overlap: the prefill work (compute) and the rest of the pass (weights and
        // KV reads) overlap by `overlap` of the smaller of the two.
        return (v) => {
          const rest =
            baseMs +
            decodeRequestMs * (exponent === 1 ? v.decodeRequests : v.decodeRequests ** exponent) +
            decodeKvTokenMs * v.decodeKvTokens;
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
  }
}
