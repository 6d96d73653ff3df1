/**
 * What a sweep point is expected to cost, for the progress bar's ETA: the replay core's host time
 * grows with the tokens it moves, so a point costs about its requests times its output tokens per
 * request. Points of one sweep can differ a thousandfold (concurrency 1 against 1024 at ten
 * requests a slot), which an ETA that counts points gets wrong by as much.
 */
import { stopRequests } from '../config/stop.js';
import type { RunConfig } from '../config/types.js';

/** Requests the point sends, or null when only the replay can tell (a time cap on a closed loop). */
function expectedRequests(config: RunConfig): number | null {
  const { stop, load } = config.traffic;
  if (!('max_virtual_time_seconds' in stop)) return stopRequests(config.traffic);
  return load.type === 'poisson' || load.type === 'constant_rate' ? load.requests_per_second * stop.max_virtual_time_seconds : null;
}

/** Mean output tokens of a request, or null for a trace (unknown until it is read). */
function expectedOutputTokens(config: RunConfig): number | null {
  const source = config.traffic.source;
  switch (source.type) {
    case 'synthetic':
      // Lengths are uniform in [ratio x L, L], or normal of mean L.
      return (source.output_tokens_stddev ?? 0) > 0 ? source.output_tokens : (source.output_tokens * (1 + source.random_range_ratio)) / 2;
    case 'synthetic-session':
      return source.output_tokens_per_turn;
    default:
      return null;
  }
}

/** Requests x output tokens per request (at least 1 each), or null when it cannot be told before the replay. */
export function expectedCost(config: RunConfig): number | null {
  const requests = expectedRequests(config);
  const tokens = expectedOutputTokens(config);
  if (requests === null || tokens === null) return null;
  return Math.max(1, requests) * Math.max(1, tokens);
}

/** Costs of the points, with each unknown one taken as the mean of the known ones (1 each when none is known). */
export function expectedCosts(configs: readonly RunConfig[]): number[] {
  const costs = configs.map(expectedCost);
  const known = costs.filter((c): c is number => c !== null);
  const fallback = known.length > 0 ? known.reduce((sum, c) => sum + c, 0) / known.length : 1;
  return costs.map((c) => c ?? fallback);
}
