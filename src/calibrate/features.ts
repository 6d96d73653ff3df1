/**
 * The features of one engine pass that the `linear` timing provider prices (docs/replay-model.md, "Timing providers"):
 * P new prefill tokens, Q prefill attention pairs, B decoding requests, K the decoding requests'
 * context tokens. Helpers build them from what measured tables record.
 */

export interface PassFeatures {
  prefillTokens: number;
  prefillPairs: number;
  decodeRequests: number;
  decodeKvTokens: number;
}

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

/** Pass-time terms of the `linear` provider, in `PassFeatures` order, with their units. */
export const LINEAR_TERMS = [
  { name: 'prefill_token_us', unit: 'us', toUnit: 1e3, feature: 'new prefill tokens', key: 'prefillTokens' },
  { name: 'prefill_pair_ns', unit: 'ns', toUnit: 1e6, feature: 'prefill attention pairs', key: 'prefillPairs' },
  { name: 'decode_request_us', unit: 'us', toUnit: 1e3, feature: 'decoding requests', key: 'decodeRequests' },
  { name: 'decode_kv_token_ns', unit: 'ns', toUnit: 1e6, feature: 'decode context tokens', key: 'decodeKvTokens' },
] as const;

export function featureVector(pass: PassFeatures): number[] {
  return LINEAR_TERMS.map((term) => pass[term.key]);
}
