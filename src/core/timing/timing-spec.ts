/**
 * A timing provider as the run description carries it: plain numbers in the loop's units (the
 * config layer converts). Adding a provider is a new member of the union, a file beside this one
 * and a case in `create-pass-time.ts`.
 */
import type { RooflineCoefficients } from '../roofline.js';
import type { FixedTiming } from './fixed.js';
import type { LinearTiming } from './linear.js';
import type { PolynomialTiming } from './polynomial.js';
import type { ProfileTiming } from './profile.js';

export type { FixedTiming } from './fixed.js';
export type { LinearTiming } from './linear.js';
export type { PolynomialTiming } from './polynomial.js';
export type { ProfileAttention, ProfileTiming } from './profile.js';

/** Pass time from architecture, datasheet and efficiency factors: coefficients in ms per unit (core/roofline.ts). */
export type RooflineTiming = { type: 'roofline' } & RooflineCoefficients;

export type TimingSpec = FixedTiming | PolynomialTiming | LinearTiming | RooflineTiming | ProfileTiming;
