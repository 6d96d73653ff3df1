/**
 * The pass view under the path the roofline provider (core/roofline.ts) imports it from. The
 * timing seam itself is in `core/timing/`: `timing-model.ts` (the interface), the providers
 * beside it, and `create-pass-time.ts` (the factory). Nothing else belongs here: a re-export of
 * the factory would close an import circle through the roofline provider.
 */
export type { PassTimeFn, PassView } from './timing/timing-model.js';
