/**
 * Position scales that every chart shares, so that each one reads the same way: points on the
 * edge of the data are drawn whole (a margin at both ends), an axis never magnifies
 * noise (a least span relative to the values: 525.36 and 525.40 ms are drawn as the same value,
 * not a whole axis apart), bars stop short of the plot's top, and a load that doubles (1, 2, 4,
 * ...) is read on a log2 axis with its own values as ticks.
 */

/** The margin at each end of a continuous position scale, as a share of the data's span: a point at the edge is drawn whole. */
export const SCALE_MARGIN = 0.05;

/** The least span of a linear axis, as a share of the largest magnitude it shows. */
export const LEAST_RELATIVE_SPAN = 0.1;

/** The least ratio between the ends of a log axis. */
export const LEAST_LOG_RATIO = 2;

export interface ContinuousScale {
  type?: 'log';
  base?: number;
  domain?: [number, number];
  zero?: false;
  nice?: false;
}

function finiteValues(values: readonly number[], positive: boolean): number[] {
  return values.filter((v) => Number.isFinite(v) && (!positive || v > 0));
}

/**
 * A continuous position scale over `values`, linear or (with `log`) logarithmic in that base: a
 * domain from the lowest to the highest value (and zero, with `zero`), widened to the least span
 * around its middle when narrower (never below zero for values that are not), with a margin at
 * both ends (`margin`, a share of the span; more for marks with a label beside them). Not rounded outwards to nice values, which would leave the data a fraction of the
 * axis (10 ms to 100 s for replays from 80 ms to 40 s).
 */
export function readableScale(
  values: readonly number[],
  options: { log?: number; zero?: boolean; leastSpan?: number; margin?: number } = {},
): ContinuousScale {
  const share = options.margin ?? SCALE_MARGIN;
  const log = options.log;
  const data = finiteValues(values, log !== undefined);
  if (log !== undefined) {
    const logged = { type: 'log' as const, base: log };
    if (data.length === 0) return logged;
    let low = Math.log(Math.min(...data));
    let high = Math.log(Math.max(...data));
    const least = Math.log(LEAST_LOG_RATIO);
    if (high - low < least) {
      const mid = (low + high) / 2;
      [low, high] = [mid - least / 2, mid + least / 2];
    }
    const margin = share * (high - low);
    return { ...logged, domain: [Math.exp(low - margin), Math.exp(high + margin)], nice: false };
  }
  if (data.length === 0) return { zero: false };
  let low = Math.min(...data, ...(options.zero ? [0] : []));
  let high = Math.max(...data, ...(options.zero ? [0] : []));
  const least = (options.leastSpan ?? LEAST_RELATIVE_SPAN) * Math.max(Math.abs(low), Math.abs(high)) || 1;
  if (high - low < least) {
    const nonNegative = low >= 0;
    low = (low + high) / 2 - least / 2;
    if (nonNegative && low < 0) low = 0;
    high = low + least;
  }
  const margin = share * (high - low);
  return { domain: [low - margin, high + margin], zero: false, nice: false };
}

/** The value scale of bars from zero: its top a tenth above the highest bar, then rounded up. */
export function barScale(values: readonly number[]): { domainMin: number; domainMax: number; nice: boolean; zero: boolean } {
  const data = finiteValues(values, false);
  const high = data.length === 0 ? 1 : Math.max(...data);
  return { domainMin: 0, domainMax: high > 0 ? high * 1.1 : 1, nice: true, zero: true };
}

/** True when the distinct positive values double from one to the next at least half the time (1, 2, 4, 8; 32, 64). */
export function isDoubling(values: readonly number[]): boolean {
  const sorted = [...new Set(values)].filter((value) => value > 0).sort((a, b) => a - b);
  if (sorted.length < 2) return false;
  let doublings = 0;
  for (let i = 1; i < sorted.length; i++) if (Math.abs(sorted[i] / sorted[i - 1] - 2) < 1e-9) doublings++;
  return doublings >= (sorted.length - 1) / 2;
}
