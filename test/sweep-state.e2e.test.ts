/**
 * What a sweep does with the state it finds and the threads it is given (src/sweep/run-sweep.ts,
 * merge.ts): temporary files of a killed write are removed on resume, records of points outside
 * the sweep are dropped from the log, --workers is capped at the
 * cores, a merge accepts identical results, its own input as --out, and an --out holding an
 * earlier merge of the same sweep. Needs `npm run build`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { mergeSweeps } from '../src/sweep/merge.js';
import { runSweep } from '../src/sweep/run-sweep.js';
import { read, requireBuild, useTempDirs, writeSweep } from './fixtures/sweep/helpers.js';

beforeAll(requireBuild);
const dir = useTempDirs();

describe('sweep state', () => {
  it('removes the temporary files a killed write left, and says so', async () => {
    const d = dir();
    const out = join(d, 'out');
    const sweep = writeSweep(d, 'grid:\n  traffic.load.concurrency: [1, 2]\n');
    await runSweep({ sweepFile: sweep, outDir: out, poolThreads: 1, note: () => {} });
    writeFileSync(join(out, 'points.jsonl.2718281828'), 'half a line');
    writeFileSync(join(out, 'summary.csv.4242.tmp'), 'x');
    const notes: string[] = [];
    const result = await runSweep({ sweepFile: sweep, outDir: out, poolThreads: 1, note: (line) => notes.push(line) });
    expect(result.ok).toBe(2);
    expect(existsSync(join(out, 'points.jsonl.2718281828'))).toBe(false);
    expect(existsSync(join(out, 'summary.csv.4242.tmp'))).toBe(false);
    expect(notes.some((n) => /removed 2 temporary file\(s\) an interrupted write left/.test(n))).toBe(true);
  });

  it('resumed, keeps no record of a point outside the sweep: the log ends as a fresh run writes it', async () => {
    const d = dir();
    const sweep = writeSweep(d, 'grid:\n  traffic.load.concurrency: [1, 2]\n');
    const fresh = join(d, 'fresh');
    await runSweep({ sweepFile: sweep, outDir: fresh, poolThreads: 1, note: () => {} });
    const out = join(d, 'out');
    await runSweep({ sweepFile: sweep, outDir: out, poolThreads: 1, note: () => {} });
    // An ok record of an id the sweep does not have (a line from elsewhere), at concurrency 99.
    const [first] = read(join(out, 'points.jsonl')).trim().split('\n');
    const foreign = { ...(JSON.parse(first) as object), id: 'feedfacefeed', overrides: { 'traffic.load.concurrency': 99 } };
    writeFileSync(join(out, 'points.jsonl'), `${read(join(out, 'points.jsonl'))}${JSON.stringify(foreign)}\n`);
    const notes: string[] = [];
    const result = await runSweep({ sweepFile: sweep, outDir: out, poolThreads: 1, note: (line) => notes.push(line) });
    expect(result.ok).toBe(2);
    expect(result.ran).toBe(0);
    expect(notes).toContain(
      `${join(out, 'points.jsonl')}: dropped 1 record(s) of points not in this sweep (feedfacefeed): not results of it`,
    );
    for (const name of ['points.jsonl', 'summary.csv', 'plan.json']) expect(read(join(out, name)), name).toBe(read(join(fresh, name)));
    expect(read(join(out, 'points.jsonl'))).not.toContain('feedfacefeed');
  });

  it('caps --workers at the cores, with a note', async () => {
    const d = dir();
    const notes: string[] = [];
    const cores = availableParallelism();
    const sweep = writeSweep(d, 'grid:\n  traffic.load.concurrency: [1, 2, 3]\n');
    const result = await runSweep({ sweepFile: sweep, outDir: join(d, 'out'), poolThreads: 1000, note: (line) => notes.push(line) });
    expect(result.ok).toBe(3);
    expect(notes).toContain(`--workers 1000: capped at ${cores}, the cores of this machine`);
  });

  it('merges identical ok results of one point, and into one of its own inputs', async () => {
    const d = dir();
    const sweep = writeSweep(d, 'grid:\n  traffic.load.concurrency: [1, 2]\n');
    await runSweep({ sweepFile: sweep, outDir: join(d, 'a'), poolThreads: 1, note: () => {} });
    await runSweep({ sweepFile: sweep, outDir: join(d, 'b'), poolThreads: 1, note: () => {} });
    const before = read(join(d, 'a', 'points.jsonl'));
    const merged = await mergeSweeps({ dirs: [join(d, 'a'), join(d, 'b')], outDir: join(d, 'a'), note: () => {}, chart: false });
    expect(merged.ok).toBe(2);
    expect(readFileSync(join(d, 'a', 'points.jsonl'), 'utf8')).toBe(before);
  });

  it("merges again into an --out holding an earlier merge of the same sweep, keeping that merge's points", async () => {
    const d = dir();
    const sweep = writeSweep(d, 'grid:\n  traffic.load.concurrency: [1, 2, 3, 4]\n');
    for (const index of [0, 1]) {
      await runSweep({ sweepFile: sweep, outDir: join(d, `shard-${index}`), shard: { index, count: 2 }, poolThreads: 1, note: () => {} });
    }
    await runSweep({ sweepFile: sweep, outDir: join(d, 'whole'), poolThreads: 1, note: () => {} });
    const all = join(d, 'all');
    // The first shard alone, then the second into the same --out: the first shard's points stay.
    expect((await mergeSweeps({ dirs: [join(d, 'shard-0')], outDir: all, note: () => {}, chart: false })).ok).toBe(2);
    const notes: string[] = [];
    const again = await mergeSweeps({ dirs: [join(d, 'shard-1')], outDir: all, note: (line) => notes.push(line), chart: false });
    expect(again.ok).toBe(4);
    expect(again.missing).toEqual([]);
    expect(notes).toContain(`--out ${all}: holds results of this sweep; they are merged in too`);
    expect(read(join(all, 'points.jsonl'))).toBe(read(join(d, 'whole', 'points.jsonl')));
  });
});
