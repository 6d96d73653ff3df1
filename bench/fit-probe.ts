import { join } from 'node:path';
import { packageRoot } from '../src/catalog/load.js';
import { catalogPoints, efficiencyTableOf, fitCatalogFactors, TrajectoryPool } from '../src/calibrate/catalog-calibration.js';
import { resolveSimLoad } from '../src/calibrate/sim-load.js';
import { stringify } from 'yaml';
const arg = (n: string, d: number) => (process.argv.includes(n) ? Number(process.argv[process.argv.indexOf(n) + 1]) : d);
const { points, skipped } = catalogPoints(join(packageRoot(), 'data/silicon/aic-silicon-sample.csv'), { maxOsl: arg('--max-osl', 1e9) });
console.log(points.length, 'points', skipped.length, 'skipped deployments');
for (const s of skipped.slice(0, 5)) console.log('  skipped', s.label, s.reason.slice(0, 200));
const pool = new TrajectoryPool();
const load = resolveSimLoad({ requestsPerSlot: arg('--rps', 10) });
const { fit, recorded } = await fitCatalogFactors(pool, points, load, { rounds: arg('--rounds', 2), log: (l) => console.log(l) });
await pool.destroy();
console.log(stringify(efficiencyTableOf(fit, recorded)));
import { writeFileSync } from 'node:fs';
import { factorsFor } from '../src/calibrate/catalog-calibration.js';
import { predictPoint } from '../src/calibrate/catalog-fit.js';
writeFileSync(
  '/tmp/fitpoints.json',
  JSON.stringify(
    recorded.map((p) => {
      const q = predictPoint(p, factorsFor(fit, p.hardware, p.backend));
      return {
        c: p.concurrency,
        label: p.label,
        model: p.model,
        hw: p.hardware,
        be: p.backend,
        moe: p.deployment.model.architecture.moe !== undefined,
        mt: p.measured.ttftMs,
        mi: p.measured.itlMs,
        rt: p.trajectory.ttftMs,
        ri: p.trajectory.itlMs,
        pt: q.ttftMs,
        pi: q.itlMs,
      };
    }),
  ),
);
