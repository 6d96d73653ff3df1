/**
 * How many requests a run sends when it stops on a count (docs/config.md, `traffic.stop`). The one
 * copy of the rule: the resolution into a run description, the config checks, a sweep's cost
 * estimate and JIT primer, and the AIPerf export all count with it.
 */
import type { LoadConfig, TrafficConfig } from './types.js';

/**
 * What `requests_per_load_unit` multiplies: the closed loop's slots, or an open loop's requests per
 * second. Null for trace timestamps, which have no load unit (the config rules refuse the pair).
 */
export function loadUnitOf(load: LoadConfig): number | null {
  switch (load.type) {
    case 'concurrency':
      return load.concurrency;
    case 'poisson':
    case 'constant_rate':
      return load.requests_per_second;
    case 'trace_timestamps':
      return null;
  }
}

/**
 * Requests the run sends when it stops on a count: `requests`, or `requests_per_load_unit` times
 * the load unit rounded to the nearest whole request, at least 1 (concurrency 3 at 1.5 per slot
 * sends 5). Null under a time cap, where only the replay can tell, and where there is no load
 * unit. A trace source sends at most its rows, which this does not know.
 */
export function stopRequests(traffic: Pick<TrafficConfig, 'load' | 'stop'>): number | null {
  const stop = traffic.stop;
  if ('requests' in stop) return stop.requests;
  if ('requests_per_load_unit' in stop) {
    const unit = loadUnitOf(traffic.load);
    return unit === null ? null : Math.max(1, Math.round(stop.requests_per_load_unit * unit));
  }
  return null;
}
