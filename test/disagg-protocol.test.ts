/**
 * The accuracy bench's disaggregated protocol (bench/accuracy-zero-shot.ts): which rows of the
 * shipped silicon sample are scored and which are reported apart, and how a scored row is replayed.
 */
import { describe, expect, it } from 'vitest';
import { disaggPoints, UNKNOWN_WORKERS_RULE } from '../bench/accuracy-zero-shot.js';
import { measuredPointConfig } from '../src/calibrate/catalog-calibration.js';
import { resolveSimLoad } from '../src/calibrate/sim-load.js';
import { efficiencyFor } from '../src/catalog/efficiency.js';

describe('disaggregated rows of the silicon sample', () => {
  const { points, apart } = disaggPoints(false, 512);

  it('scores no row whose worker counts are unknown, and reports every such row apart under its rule', () => {
    expect(points.length).toBeGreaterThan(100);
    expect(points.filter((p) => p.deployment.pools?.decode.workersFrom === 'unknown')).toEqual([]);
    const unknown = apart.filter((a) => a.why === UNKNOWN_WORKERS_RULE);
    expect(unknown.length).toBeGreaterThan(100);
    expect(unknown.every((a) => a.point.deployment.pools?.decode.workersFrom === 'unknown')).toBe(true);
  });

  it('replays a scored row with the first token from the decode worker', () => {
    const p = points[0];
    const config = measuredPointConfig(p, efficiencyFor(p.hardware, p.backend).factors, resolveSimLoad({}));
    expect(config.engine.workers.prefill).toBeDefined();
    expect(config.engine.kv_transfer?.first_token).toBe('decode');
  });
});
