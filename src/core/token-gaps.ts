/**
 * Pooled token gaps (docs/replay-model.md, "Report" `token_gap`): every `r_{k+1} - r_k` of every valid
 * request. Exact (all values kept and sorted) up to EXACT_LIMIT gaps; beyond that, gaps of
 * finished requests are folded into a DDSketch with 0.1 % relative accuracy and the report
 * marks the percentiles approximate. avg, min, max, std and count stay exact in both modes.
 *
 * Gaps are pushed with their request id as they are received; a request's gaps only count
 * once the request is known to be valid (completed), because a time cap can leave it
 * incomplete. Warmup requests never push.
 */
import { DDSketch } from '@datadog/sketches-js';
import { giveFloat64, takeFloat64 } from './scratch.js';
import { summarizeValues, type Stats } from './stats.js';

export const EXACT_LIMIT = 10_000_000;
/** Buffer entries kept before folding finished gaps into the sketch (a little above the exact limit). */
export const FOLD_AT = 16_000_000;

export class TokenGapPool {
  private gaps: Float64Array;
  private owners: Int32Array;
  private length = 0;
  private sketch: DDSketch | null = null;
  // Exact moments of the gaps folded into the sketch.
  private foldedCount = 0;
  private foldedSum = 0;
  private foldedMin = Infinity;
  private foldedMax = -Infinity;

  /** False when every pushed gap counts (no time cap): then no owner is kept per gap. */
  private readonly tracksOwners: boolean;
  private readonly isValid: (id: number) => boolean;

  /**
   * @param isValid whether a request ended valid, or null when every pushed gap will count
   *   (a run without a time cap: every request that receives tokens completes).
   */
  constructor(
    isValid: ((id: number) => boolean) | null,
    initialCapacity = 1 << 16,
    /** Buffered gaps before folding into the sketch (a parameter for tests only). */
    private readonly foldAt = FOLD_AT,
  ) {
    this.tracksOwners = isValid !== null;
    this.isValid = isValid ?? (() => true);
    this.gaps = takeFloat64(initialCapacity);
    this.owners = new Int32Array(this.tracksOwners ? initialCapacity : 0);
  }

  push(gapMs: number, requestId: number): void {
    if (this.length === this.gaps.length) this.makeRoom();
    this.gaps[this.length] = gapMs;
    if (this.tracksOwners) this.owners[this.length] = requestId;
    this.length++;
  }

  /** Statistics over the gaps of the requests that ended valid. Call once, at the end of the run. */
  stats(): Stats & { approximate: boolean } {
    const isValid = this.isValid;
    if (this.sketch === null) {
      if (!this.tracksOwners) return { ...summarizeValues(this.gaps.subarray(0, this.length)), approximate: false };
      const kept = new Float64Array(this.length);
      let n = 0;
      for (let i = 0; i < this.length; i++) if (isValid(this.owners[i])) kept[n++] = this.gaps[i];
      return { ...summarizeValues(kept.subarray(0, n)), approximate: false };
    }
    this.fold(true);
    return this.sketchStats();
  }

  /**
   * Hands the gap buffer back for the next run on this thread (core/scratch.ts). Call after
   * `stats`, once nothing reads the gaps any more; the pool is empty afterwards.
   */
  release(): void {
    giveFloat64(this.gaps);
    this.gaps = new Float64Array(0);
    this.length = 0;
  }

  private makeRoom(): void {
    if (this.length >= this.foldAt) {
      this.fold(false);
      if (this.length < this.gaps.length * 0.75) return;
    }
    const n = this.gaps.length * 2;
    const gaps = new Float64Array(n);
    gaps.set(this.gaps.subarray(0, this.length));
    this.gaps = gaps;
    if (this.tracksOwners) {
      const owners = new Int32Array(n);
      owners.set(this.owners.subarray(0, this.length));
      this.owners = owners;
    }
  }

  /**
   * Moves the gaps of valid requests into the sketch; keeps the rest (requests still in
   * flight) unless `final`, when everything not valid is dropped.
   */
  private fold(final: boolean): void {
    const isValid = this.isValid;
    if (this.sketch === null) this.sketch = new DDSketch({ relativeAccuracy: 0.001 });
    const sketch = this.sketch;
    let kept = 0;
    const tracksOwners = this.tracksOwners;
    for (let i = 0; i < this.length; i++) {
      const owner = tracksOwners ? this.owners[i] : 0;
      const gap = this.gaps[i];
      if (!tracksOwners || isValid(owner)) {
        sketch.accept(gap);
        this.foldedCount++;
        this.foldedSum += gap;
        if (gap < this.foldedMin) this.foldedMin = gap;
        if (gap > this.foldedMax) this.foldedMax = gap;
        this.accumulateSquares(gap);
      } else if (!final) {
        this.gaps[kept] = gap;
        this.owners[kept] = owner;
        kept++;
      }
    }
    this.length = kept;
  }

  // Welford's update, applied in push order (deterministic).
  private welfordMean = 0;
  private welfordM2 = 0;
  private accumulateSquares(gap: number): void {
    const n = this.foldedCount;
    const delta = gap - this.welfordMean;
    this.welfordMean += delta / n;
    this.welfordM2 += delta * (gap - this.welfordMean);
  }

  private sketchStats(): Stats & { approximate: boolean } {
    const sketch = this.sketch as DDSketch;
    const n = this.foldedCount;
    const q = (p: number) => (n === 0 ? NaN : sketch.getValueAtQuantile(p / 100));
    return {
      avg: n === 0 ? NaN : this.foldedSum / n,
      min: n === 0 ? NaN : this.foldedMin,
      max: n === 0 ? NaN : this.foldedMax,
      p1: q(1),
      p5: q(5),
      p10: q(10),
      p25: q(25),
      p50: q(50),
      p75: q(75),
      p90: q(90),
      p95: q(95),
      p99: q(99),
      std: n === 0 ? NaN : Math.sqrt(this.welfordM2 / n),
      count: n,
      approximate: true,
    };
  }
}
