/**
 * The search for one candidate's highest request rate within every SLO (docs/planning.md, "How
 * the rate is searched"). Pure: it proposes rates and is told whether each met the SLOs.
 *
 * 1. Bracket: the first rate is `startRps`. While every rate met the SLOs, the next is twice the
 *    highest; while none did, the next is half the lowest, at most `maxHalvings` times.
 * 2. Bisect: between `lo`, the highest rate that met the SLOs, and `hi`, the lowest that did not,
 *    test their geometric mean, until hi / lo <= 1 + tolerance.
 *
 * Every rate tested at or below `lo` met the SLOs and every rate at or above `hi` did not: the
 * bracket only grows from a rate that met them or shrinks from one that did not, and bisection
 * tests strictly between the two. So the result is the highest tested rate whose own replay and
 * every lower tested replay met the SLOs, also when a metric is not monotone in the rate, and
 * the next tested rate above it did not. The bracket never leaves the rates a run config accepts
 * (config/limits.ts): a candidate that meets the SLOs at none down to the lowest is reported as
 * meeting them at no rate, one that meets them up to the highest has no rate above its max rate.
 */
import { MAX_REQUEST_RATE, MIN_REQUEST_RATE } from '../config/limits.js';

export interface RateSearchOptions {
  startRps: number;
  /** Relative width at which bisection stops: hi / lo <= 1 + tolerance. */
  tolerance: number;
  /** Halvings of the first rate before the search gives up (no rate meets the SLOs). */
  maxHalvings?: number;
  /** Doublings before the search gives up on finding a rate that breaks them. */
  maxDoublings?: number;
  /** Rates a replay can be run at (a run config's limits by default): the bracket stops at them. */
  minRps?: number;
  maxRps?: number;
}

export interface TestedRate {
  rateRps: number;
  meets: boolean;
}

export const DEFAULT_MAX_HALVINGS = 10;
export const DEFAULT_MAX_DOUBLINGS = 24;

/**
 * `x` with as few significant digits (3 or more) as keep it strictly inside (lo, hi) and within a
 * tenth of the bracket's log-width of `x`: rates read as 3.35, not 3.3541019662.
 */
export function roundRate(x: number, lo = 0, hi = Infinity): number {
  const slack = Number.isFinite(hi) && lo > 0 ? 0.1 * Math.log(hi / lo) : 0.01;
  for (let digits = 3; digits <= 15; digits++) {
    const rounded = Number(x.toPrecision(digits));
    if (rounded > lo && rounded < hi && Math.abs(Math.log(rounded / x)) <= slack) return rounded;
  }
  return x;
}

export class RateSearch {
  readonly tested: TestedRate[] = [];
  /** Highest rate that met the SLOs (0: none yet). */
  lo = 0;
  /** Lowest rate that did not (Infinity: none yet). */
  hi = Infinity;
  readonly #start: number;
  readonly #tolerance: number;
  readonly #maxHalvings: number;
  readonly #maxDoublings: number;
  readonly #minRps: number;
  readonly #maxRps: number;

  constructor(options: RateSearchOptions) {
    if (!(options.startRps > 0 && Number.isFinite(options.startRps)))
      throw new RangeError(`startRps must be positive, got ${options.startRps}`);
    if (!(options.tolerance > 0)) throw new RangeError(`tolerance must be positive, got ${options.tolerance}`);
    this.#minRps = options.minRps ?? MIN_REQUEST_RATE;
    this.#maxRps = options.maxRps ?? MAX_REQUEST_RATE;
    this.#start = Math.min(this.#maxRps, Math.max(this.#minRps, roundRate(options.startRps)));
    this.#tolerance = options.tolerance;
    this.#maxHalvings = options.maxHalvings ?? DEFAULT_MAX_HALVINGS;
    this.#maxDoublings = options.maxDoublings ?? DEFAULT_MAX_DOUBLINGS;
  }

  /** The next rate to test, or null when the search is over. */
  next(): number | null {
    if (this.tested.length === 0) return this.#start;
    if (this.lo === 0) {
      const half = this.hi / 2;
      return this.tested.length > this.#maxHalvings || half < this.#minRps ? null : half;
    }
    if (this.hi === Infinity) {
      const twice = this.lo * 2;
      return this.tested.length > this.#maxDoublings || twice > this.#maxRps ? null : twice;
    }
    if (this.hi / this.lo <= 1 + this.#tolerance) return null;
    return roundRate(Math.sqrt(this.lo * this.hi), this.lo, this.hi);
  }

  record(rateRps: number, meets: boolean): void {
    this.tested.push({ rateRps, meets });
    if (meets && rateRps > this.lo && rateRps < this.hi) this.lo = rateRps;
    if (!meets && rateRps < this.hi && rateRps > this.lo) this.hi = rateRps;
  }

  get done(): boolean {
    return this.next() === null;
  }

  /** The highest rate found within every SLO, 0 when none. */
  get maxRps(): number {
    return this.lo;
  }
}
