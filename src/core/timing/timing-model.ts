/**
 * The timing seam (docs/replay-model.md, "Timing providers"): what a timing model sees of one
 * attention-DP rank's pass, and its one contract, a duration in ms that is finite and >= 0, or
 * the run stops with an error that names the provider. The providers are beside this file, each
 * described by plain numbers in the loop's units (`timing-spec.ts`) and built into a function
 * once per pool by `createPassTime` (`create-pass-time.ts`), so the loop never dispatches on type.
 */

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
  /**
   * The longest and the shortest of those contexts (0 without decodes), for a timing provider
   * whose attention depends on their spread, not only on their mean (layer profiles' skew
   * correction). Absent where the caller describes a pass by its totals only.
   */
  decodeKvMax?: number;
  decodeKvMin?: number;
  /** Output tokens emitted at the pass end. */
  emittedTokens: number;
  /**
   * Tokens of the whole worker in this pass: prefill tokens plus decoding requests summed over its
   * attention-DP ranks (this rank's own with one rank). The ranks run their mixture-of-experts
   * layers on these tokens together.
   */
  workerTokens: number;
  /** KV blocks in use after the pass's allocations, and the pool size (0 = unlimited). */
  kvBlocksUsed: number;
  kvBlocksTotal: number;
}

/** A timing model built for a run: the duration in ms of the pass a view describes. */
export type PassTimeFn = (view: PassView) => number;

export class TimingError extends Error {
  constructor(provider: string, value: number) {
    super(`timing provider '${provider}' returned ${value} ms for a pass; a pass time must be finite and >= 0`);
    this.name = 'TimingError';
  }
}
