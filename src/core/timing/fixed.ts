/** The `fixed` timing provider: a constant for a pass with prefill work, another for a pass that emits. */
import type { PassTimeFn } from './timing-model.js';

/** `prefillMs` if the pass has any prefill tokens, plus `decodeMs` if it emits any token. */
export interface FixedTiming {
  type: 'fixed';
  prefillMs: number;
  decodeMs: number;
}

export function createFixedPassTime(spec: FixedTiming): PassTimeFn {
  const prefillMs = spec.prefillMs;
  const decodeMs = spec.decodeMs;
  return (v) => (v.prefillTokens > 0 ? prefillMs : 0) + (v.emittedTokens > 0 ? decodeMs : 0);
}
