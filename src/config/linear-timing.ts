/**
 * The `linear` timing provider's terms (docs/replay-model.md, "Timing providers"), once: each
 * per-unit coefficient's config field, its unit and what one ms is in it, the pass feature it
 * prices (a `PassView` field) and the core's coefficient in ms per unit. The resolution into a
 * run description, the config checks and the calibration's regressions and fit output all read
 * them from here.
 */
import type { LinearTiming } from '../core/timing/linear.js';
import type { PassView } from '../core/timing/timing-model.js';
import type { LinearTimingConfig } from './types.js';

interface LinearTerm {
  name: keyof LinearTimingConfig;
  unit: string;
  /** Units of the config field in one ms (1e3 for us, 1e6 for ns). */
  toUnit: number;
  feature: string;
  key: keyof PassView;
  coefficient: keyof LinearTiming;
}

/** The per-unit terms, in the order the config and the fit outputs list them (`base_ms` is the constant term). */
export const LINEAR_TERMS = [
  { name: 'prefill_token_us', unit: 'us', toUnit: 1e3, feature: 'new prefill tokens', key: 'prefillTokens', coefficient: 'prefillTokenMs' },
  {
    name: 'prefill_pair_ns',
    unit: 'ns',
    toUnit: 1e6,
    feature: 'prefill attention pairs',
    key: 'prefillPairs',
    coefficient: 'prefillPairMs',
  },
  {
    name: 'decode_request_us',
    unit: 'us',
    toUnit: 1e3,
    feature: 'decoding requests',
    key: 'decodeRequests',
    coefficient: 'decodeRequestMs',
  },
  {
    name: 'decode_kv_token_ns',
    unit: 'ns',
    toUnit: 1e6,
    feature: 'decode context tokens',
    key: 'decodeKvTokens',
    coefficient: 'decodeKvTokenMs',
  },
] as const satisfies readonly LinearTerm[];

/** The config's `linear` block in the core's units (ms per unit). */
export function linearTimingSpec(config: LinearTimingConfig): LinearTiming {
  const spec: LinearTiming = {
    type: 'linear',
    baseMs: config.base_ms,
    prefillTokenMs: 0,
    prefillPairMs: 0,
    decodeRequestMs: 0,
    decodeKvTokenMs: 0,
    decodeRequestExponent: config.decode_request_exponent,
    prefillOverlap: config.prefill_overlap,
  };
  for (const term of LINEAR_TERMS) spec[term.coefficient] = config[term.name] / term.toUnit;
  return spec;
}
