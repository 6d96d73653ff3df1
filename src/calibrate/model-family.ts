/**
 * Model families the engine fit needs to know: whether a model is a mixture of experts (its
 * decode cost grows sublinearly with the batch, since the experts a step reads saturate) and the
 * default `decode_request_exponent` that follows from it.
 *
 * The defaults were chosen in two steps (docs/calibration.md, "Decode exponent"). Outside the
 * simulator, on the silicon sample's 308 usable deployments (5+ concurrency points, OSL <= 1024),
 * ITL = a + b x C^p fitted on the 3 lowest concurrencies and scored on the rest is best at
 * p = 0.65 for mixtures of experts and 0.9 for dense models (same on the deployments of even and
 * of odd label rank). Inside the simulator, whose `linear` passes also charge the prefill chunks
 * that ride along with decodes (a term linear in the concurrency), the engine fit on 35
 * deployments outside the accuracy benchmark was best at p = 0.5 (MoE; 0.4: about equal,
 * 0.65 and 0.8 worse) and 0.8 (dense; 0.7, 0.9 and 1 worse): those are the defaults.
 */

/** Known mixture-of-experts models (name patterns, case-insensitive), with experts per token / experts. */
export const MOE_MODELS: ReadonlyArray<{ pattern: RegExp; active: number; experts: number }> = [
  { pattern: /deepseek-(r1|v3|v2)/i, active: 8, experts: 256 },
  { pattern: /kimi-k2/i, active: 8, experts: 384 },
  { pattern: /minimax-m2/i, active: 8, experts: 256 },
  { pattern: /qwen3\.5-397b-a17b/i, active: 10, experts: 512 },
  { pattern: /qwen3-(235b-a22b|30b-a3b)/i, active: 8, experts: 128 },
  { pattern: /gpt-oss-120b/i, active: 4, experts: 128 },
  { pattern: /gpt-oss-20b/i, active: 4, experts: 32 },
  { pattern: /glm-(4\.5|4\.6|4\.7|5)/i, active: 8, experts: 160 },
  { pattern: /mixtral-8x/i, active: 2, experts: 8 },
  { pattern: /llama-4/i, active: 1, experts: 16 },
];

/** Generic name hints of a mixture of experts (`-A22B` active-parameter suffixes, `moe`). */
const MOE_HINT = /(^|[-_/])a\d+(\.\d+)?b([-_]|$)|moe/i;

export function isMixtureOfExperts(model: string): boolean {
  return MOE_MODELS.some((m) => m.pattern.test(model)) || MOE_HINT.test(model);
}

/** Default exponent of the decoding-request term: chosen per family on the silicon sample (see above). */
export const DECODE_EXPONENT = { moe: 0.5, dense: 0.8 } as const;

export function defaultDecodeExponent(model: string): number {
  return isMixtureOfExperts(model) ? DECODE_EXPONENT.moe : DECODE_EXPONENT.dense;
}
