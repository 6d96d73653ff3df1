/**
 * The part of a sweep record a pool thread builds: a replay summary split into its deterministic
 * part and its wall-time fields. Kept apart from results.ts, whose record checks load zod: a pool
 * thread loads the replay core and this, nothing of the config layer.
 */
import type { ReplaySummary } from '../core/report-types.js';

/** A replay summary without the simulator's wall-time fields (they differ run to run). */
export type PointSummary = Omit<ReplaySummary, 'simulator'> & { simulator: Record<string, unknown> };

/** Simulator fields that depend on the host and the moment, kept out of `points.jsonl`. */
export const WALL_TIME_FIELDS = ['wall_time_ms', 'us_per_output_token'] as const;

/** Splits a replay summary into its deterministic part and its wall-time fields. */
export function splitWallTime(summary: ReplaySummary): { summary: PointSummary; wall: Record<string, number> } {
  const simulator: Record<string, unknown> = {};
  const wall: Record<string, number> = {};
  for (const [key, value] of Object.entries(summary.simulator ?? {})) {
    if ((WALL_TIME_FIELDS as readonly string[]).includes(key)) wall[key] = value as number;
    else simulator[key] = value;
  }
  return { summary: { ...summary, simulator }, wall };
}
