/** `sweep --aiperf`: every point's AIPerf artifacts, readable by the AIPerf reader (needs `npm run build`). */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readAiperfRun } from '../src/io/read-aiperf.js';
import { readPoints } from '../src/sweep/results.js';
import { runSweep } from '../src/sweep/run-sweep.js';
import { requireBuild, useTempDirs, writeSweep } from './fixtures/sweep/helpers.js';

beforeAll(requireBuild);
const dir = useTempDirs();

describe('sweep --aiperf', () => {
  it("writes one AIPerf folder per point, named as AIPerf names it, with the point's numbers", async () => {
    const d = dir();
    const sweep = writeSweep(d, 'grid:\n  traffic.load.concurrency: [1, 4]\n');
    const out = join(d, 'out');
    const result = await runSweep({ sweepFile: sweep, outDir: out, poolThreads: 2, aiperf: true, note: () => {} });
    expect(result.ok).toBe(2);
    const points = readPoints(join(out, 'points.jsonl')).records;
    for (const point of points) {
      const concurrency = (point.overrides as Record<string, number>)['traffic.load.concurrency'];
      const folders = readdirSync(join(out, 'aiperf', point.id));
      expect(folders).toHaveLength(1);
      expect(folders[0]).toMatch(new RegExp(`-concurrency${concurrency}$`));
      const dir = join(out, 'aiperf', point.id, folders[0]);
      expect(existsSync(join(dir, 'profile_export.jsonl'))).toBe(true);
      const run = readAiperfRun(dir, { records: true });
      expect(run.load.concurrency).toBe(concurrency);
      expect(run.summary.metrics.time_to_first_token.stats.avg).toBeCloseTo(point.summary!.metrics.time_to_first_token!.avg, 9);
      expect(run.records).toHaveLength(point.summary!.run.request_count);
    }
  });
});
