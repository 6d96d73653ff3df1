/** The `polynomial` timing provider: the spec's fixed polynomial in prefill tokens and KV use (no knobs). */
import type { PassTimeFn } from './timing-model.js';

export interface PolynomialTiming {
  type: 'polynomial';
}

export function createPolynomialPassTime(): PassTimeFn {
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
}
