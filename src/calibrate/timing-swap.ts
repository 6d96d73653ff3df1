/**
 * A fit changes only a run's timing: the aggregated pool's pass-time provider and, in some forms,
 * the client path's frontend costs. So a training point is resolved once (its config built by
 * `pointConfig`, validated, its KV cache sized, compiled into the core's run description by
 * `prepareRun`), and each residual evaluation or trajectory recording runs that description with
 * only those fields replaced (`swapTiming`). The numbers are the ones a fresh resolution of the
 * edited config gives (the config layer's own `timingSpec` and `frontendOf` make them, and
 * nothing else in a resolved run depends on the timing block): test/timing-swap.test.ts checks
 * both ways to the byte.
 */
import { frontendOf } from '../config/deployment.js';
import { timingSpec } from '../config/resolve.js';
import { linearTimingSpec } from '../config/linear-timing.js';
import { roleOf, withRoleConfig } from '../config/roles.js';
import type { RunConfig } from '../config/types.js';
import type { EfficiencyFactors } from '../catalog/efficiency.js';
import type { ResolvedRun } from '../core/run.js';
import type { TimingSpec } from '../core/timing/timing-spec.js';
import { prepareRun, type PreparedRun } from '../replay.js';
import type { PointKey } from '../score/points.js';
import { linearTimingOf, pointConfig, type EngineConstants, type SimLoadOptions } from './sim-load.js';

/** What a fit swaps into a resolved run: the aggregated pool's timing, and the frontend's costs (ms, ms per token, ms per request in flight) when the fit moves them. */
export interface TimingSwap {
  timing: TimingSpec;
  frontend?: { baseMs: number; perTokenMs: number; perInflightMs: number };
}

/** A measured point's run, resolved once: its config (as the template's timing made it) and the prepared run. */
export interface ResolvedPoint {
  key: PointKey;
  config: RunConfig;
  prepared: PreparedRun;
}

/** The run with the aggregated pool's timing (and the frontend's costs, when given) replaced; the rest shared, not copied. */
export function swapTiming(run: ResolvedRun, swap: TimingSwap): ResolvedRun {
  const pools = run.pools.map((pool) => (pool.role === 'aggregated' ? { ...pool, timing: swap.timing } : pool));
  if (swap.frontend === undefined) return { ...run, pools };
  return {
    ...run,
    pools,
    frontendBaseMs: swap.frontend.baseMs,
    frontendPerTokenMs: swap.frontend.perTokenMs,
    frontendPerInflightMs: swap.frontend.perInflightMs,
  };
}

/** Resolves one measured point of `base` (`pointConfig` with `constants`, null: the base's own timing). */
export function resolvePoint(
  base: RunConfig,
  baseDir: string,
  key: PointKey,
  constants: EngineConstants | null,
  load: SimLoadOptions,
): ResolvedPoint {
  const config = pointConfig(base, key, constants, load);
  return { key, config, prepared: prepareRun(config, { baseDir }) };
}

/**
 * The swap of linear constants into a point resolved with any linear constants: the `linear`
 * timing in the core's units and, with a client delay, the frontend's fixed cost (its other costs
 * as resolved: `pointConfig` sets only `engine.frontend.base_ms`).
 */
export function linearSwap(constants: EngineConstants, resolved: ResolvedRun): TimingSwap {
  const timing = linearTimingSpec(linearTimingOf(constants));
  if (!(constants.client_delay_ms > 0)) return { timing };
  return {
    timing,
    frontend: { baseMs: constants.client_delay_ms, perTokenMs: resolved.frontendPerTokenMs, perInflightMs: resolved.frontendPerInflightMs },
  };
}

/**
 * The swap of efficiency factors into a point whose config has `roofline` timing and an `auto`
 * frontend (`withFactors`): the roofline coefficients and the frontend costs the config layer
 * works out from the factors, on the point's engine with only the timing block changed.
 */
export function rooflineSwap(config: RunConfig, factors: EfficiencyFactors): TimingSwap {
  const role = { ...roleOf(config.engine, 'aggregated'), timing: { type: 'roofline' as const, efficiency: { ...factors } } };
  const { engine } = withRoleConfig(config, 'aggregated', role);
  const frontend = frontendOf({ engine });
  return {
    timing: timingSpec(role.timing, { engine, role }),
    frontend: { baseMs: frontend.baseMs, perTokenMs: frontend.perInputUs / 1e3, perInflightMs: frontend.perInflightUs / 1e3 },
  };
}
