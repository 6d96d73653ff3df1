/**
 * Timing providers (docs/replay-model.md, "Timing providers"): the duration of one pass of one attention-DP rank,
 * from the batch the scheduler composed. One method, one contract: the result is finite and
 * >= 0, or the provider throws an error that names itself.
 */
import type { TimingConfig } from '../config/types.js';

/** What a timing provider sees of one rank's pass. One shape for every provider. */
export interface PassView {
  /** New prefill tokens computed in the pass (P). */
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

export class TimingError extends Error {
  constructor(provider: string, value: number) {
    super(`timing provider '${provider}' returned ${value} ms for a pass; a pass time must be finite and >= 0`);
    this.name = 'TimingError';
  }
}

/** Builds the pass-time function once per run; the loop calls it without dispatching on type. */
export function createPassTime(config: TimingConfig): PassTimeFn {
  switch (config.type) {
    case 'fixed': {
      const prefillMs = config.prefill_ms;
      const decodeMs = config.decode_ms;
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
      // Coefficients converted once to ms per unit (no unit conversion in the loop).
      const baseMs = config.base_ms;
      const prefillTokenMs = config.prefill_token_us / 1e3;
      const prefillPairMs = config.prefill_pair_ns / 1e6;
      const decodeRequestMs = config.decode_request_us / 1e3;
      const decodeKvTokenMs = config.decode_kv_token_ns / 1e6;
      const exponent = config.decode_request_exponent;
      const overlap = config.prefill_overlap;
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
