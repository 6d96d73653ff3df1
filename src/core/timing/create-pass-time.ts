/** The timing seam's factory: a `TimingSpec` built into its pass-time function, once per pool. */
import { createRooflinePassTime } from '../roofline.js';
import { createFixedPassTime } from './fixed.js';
import { createLinearPassTime } from './linear.js';
import { createPolynomialPassTime } from './polynomial.js';
import { createProfilePassTime } from './profile.js';
import type { PassTimeFn } from './timing-model.js';
import type { TimingSpec } from './timing-spec.js';

/** Builds the pass-time function once per pool; the loop calls it without dispatching on type. */
export function createPassTime(spec: TimingSpec): PassTimeFn {
  switch (spec.type) {
    case 'roofline':
      return createRooflinePassTime(spec);
    case 'fixed':
      return createFixedPassTime(spec);
    case 'polynomial':
      return createPolynomialPassTime();
    case 'linear':
      return createLinearPassTime(spec);
    case 'profile':
      return createProfilePassTime(spec);
  }
}
