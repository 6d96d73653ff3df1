/**
 * The features of one engine pass that the `linear` timing provider prices (docs/replay-model.md, "Timing providers"):
 * P new prefill tokens, Q prefill attention pairs, B decoding requests, K the decoding requests'
 * context tokens. Helpers build them from what measured tables record.
 */
import { LINEAR_TERMS } from '../config/linear-timing.js';
import type { PassView } from '../core/timing/timing-model.js';

/** What the `linear` provider sees of a pass (the core's `PassView`, less what only other providers read). */
export type PassFeatures = Pick<PassView, (typeof LINEAR_TERMS)[number]['key']>;

/** Q for one prefill chunk: `chunk * (already_computed + chunk / 2)`. */
export function prefillPairsOf(chunk: number, alreadyComputed = 0): number {
  return chunk * (alreadyComputed + chunk / 2);
}

/** A pass that prefills `batch` whole prompts of `prompt` tokens each (no decodes). */
export function prefillPass(batch: number, prompt: number): PassFeatures {
  return { prefillTokens: batch * prompt, prefillPairs: batch * prefillPairsOf(prompt), decodeRequests: 0, decodeKvTokens: 0 };
}

/**
 * The mean decode step of `batch` requests with `prompt`-token prompts generating `output`
 * tokens: step j (1 .. output-1) runs with context prompt + j, so the mean context is
 * prompt + output / 2.
 */
export function meanDecodePass(batch: number, prompt: number, output: number): PassFeatures {
  return { prefillTokens: 0, prefillPairs: 0, decodeRequests: batch, decodeKvTokens: batch * (prompt + output / 2) };
}

/** The features in LINEAR_TERMS order, the regressors of a pass-time fit. */
export function featureVector(pass: PassFeatures): number[] {
  return LINEAR_TERMS.map((term) => pass[term.key]);
}
