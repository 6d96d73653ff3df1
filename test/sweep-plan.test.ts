import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadRunConfigFromObject } from '../src/config/load.js';
import { PlanError, buildPlan, canonicalJson, expandOverrides, pointId, type Plan } from '../src/sweep/plan.js';
import { SweepError, parseSweepFile, readSweepBase, readSweepFile } from '../src/sweep/sweep-file.js';
import { read, TINY_RUN } from './fixtures/sweep/helpers.js';

const validate = (raw: unknown, label: string) => loadRunConfigFromObject(raw, label);
const tinyRaw = () => parseYaml(read(TINY_RUN)) as unknown;

function plan(sweepYaml: string, baseRaw: unknown = tinyRaw()): Plan {
  const sweep = parseSweepFile({ base: 'unused.yaml', ...(parseYaml(sweepYaml) as object) }, 'test-sweep.yaml');
  return buildPlan({ sweep, baseRaw, baseLabel: 'tiny-run.yaml', validate });
}

function sweepError(raw: unknown): SweepError {
  try {
    parseSweepFile(raw, 's.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(SweepError);
    return err as SweepError;
  }
  throw new Error('expected a SweepError');
}

describe('sweep file', () => {
  it('expands a log2 range into the powers of two from min to max', () => {
    const sweep = parseSweepFile(
      { base: 'b.yaml', grid: { 'traffic.load.concurrency': { range: { min: 1, max: 256, scale: 'log2' } } } },
      's.yaml',
    );
    expect(sweep.grid[0].values).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256]);
    expect(sweep.grid[0].scale).toBe('log2');
  });

  it('expands a step range without floating-point drift', () => {
    const sweep = parseSweepFile(
      { base: 'b.yaml', grid: { 'traffic.load.requests_per_second': { range: { min: 0.1, max: 0.5, step: 0.1 } } } },
      's.yaml',
    );
    expect(sweep.grid[0].values).toEqual([0.1, 0.2, 0.3, 0.4, 0.5]);
  });

  it('names the sweep after the file unless name is given', () => {
    expect(parseSweepFile({ base: 'b.yaml' }, 'dir/my-sweep.yaml').name).toBe('my-sweep');
    expect(parseSweepFile({ base: 'b.yaml', name: 'x1' }, 'dir/my-sweep.yaml').name).toBe('x1');
  });

  it.each([
    [{ base: 'b.yaml', grids: {} }, '', /unknown key "grids"/],
    [{ grid: {} }, 'base', /base/],
    [{ base: 'b.yaml', repeats: 0 }, 'repeats', /./],
    [{ base: 'b.yaml', grid: { 'traffic.load.concurrency': [] } }, 'grid.traffic.load.concurrency', /at least one value/],
    [{ base: 'b.yaml', grid: { 'traffic.load.concurrency': 4 } }, 'grid.traffic.load.concurrency', /list of values or a \{range/],
    [{ base: 'b.yaml', grid: { 'a.b': { range: { min: 0, max: 8, scale: 'log2' } } } }, 'grid.a.b.range', /0 < min/],
    [{ base: 'b.yaml', grid: { 'a.b': { range: { min: 1, max: 8, step: 0 } } } }, 'grid.a.b.range', /step must be positive/],
    [{ base: 'b.yaml', grid: { 'a.b': { range: { min: 1, max: 8 } } } }, 'grid.a.b.range', /scale: log2/],
    [{ base: 'b.yaml', zip: { 'a.x': [1, 2], 'a.y': [1, 2, 3] } }, 'zip.a.y', /equal lengths/],
    [{ base: 'b.yaml', set: { 'a.x': 1 }, grid: { 'a.x': [1, 2] } }, 'grid.a.x', /already given in set/],
    [{ base: 'b.yaml', grid: { 'a..x': [1] } }, 'grid.a..x', /dotted paths/],
    [{ base: 'b.yaml', set: { '__proto__.x': 1 } }, 'set.__proto__.x', /dotted paths/],
    [
      { base: 'b.yaml', grid: { 'engine.hardware': ['h100_sxm'], 'traffic.load.concurrency': [1, 2] }, chart: { x: 'ttft' } },
      'chart.x',
      /a swept key \(engine.hardware, traffic.load.concurrency\) or a metric/,
    ],
    [
      {
        base: 'b.yaml',
        grid: { 'engine.hardware': ['h100_sxm'], 'traffic.load.concurrency': [1, 2] },
        chart: { y: ['request_latency.avg', 'itl'] },
      },
      'chart.y.1',
      /must be a metric/,
    ],
    [
      {
        base: 'b.yaml',
        grid: { 'engine.hardware': ['h100_sxm'], 'traffic.load.concurrency': [1, 2] },
        chart: { x: 'inter_token_latency.avg' },
      },
      'chart.along',
      /is needed with a metric on x/,
    ],
    [
      {
        base: 'b.yaml',
        grid: { 'engine.hardware': ['h100_sxm'], 'traffic.load.concurrency': [1, 2] },
        chart: { x: 'inter_token_latency.avg', along: 'traffic.load.rate' },
      },
      'chart.along',
      /must be a swept key/,
    ],
    [
      {
        base: 'b.yaml',
        grid: { 'engine.hardware': ['h100_sxm'], 'traffic.load.concurrency': [1, 2] },
        chart: { x: 'traffic.load.concurrency', along: 'engine.hardware' },
      },
      'chart.along',
      /for a metric on x/,
    ],
    [
      { base: 'b.yaml', grid: { 'engine.hardware': ['h100_sxm'], 'traffic.load.concurrency': [1, 2] }, chart: { colour: 'x' } },
      'chart',
      /unknown key "colour"/,
    ],
  ])('rejects %j at %s', (raw, path, message) => {
    const err = sweepError(raw);
    expect(err.path).toBe(path);
    expect(err.message).toMatch(message);
    expect(err.message.startsWith('s.yaml: ')).toBe(true);
  });

  it('keeps a chart of a metric against a metric, in plan.json for the merge', () => {
    const sweep = readSweepFile(`${process.cwd()}/sweeps/gpu-comparison.yaml`);
    expect(sweep.chart).toEqual({
      x: 'inter_token_latency.avg',
      y: ['output_token_throughput_per_gpu'],
      along: 'traffic.load.concurrency',
    });
    expect(parseSweepFile({ base: 'b.yaml' }, 's.yaml').chart).toBeNull();
  });

  it('resolves base relative to the sweep file', () => {
    const sweep = readSweepFile(`${process.cwd()}/sweeps/concurrency-grid.yaml`);
    const base = readSweepBase(sweep);
    expect(base.baseDir.endsWith('/sweeps/configs')).toBe(true);
    expect((base.raw as { engine: { model: string } }).engine.model).toBe('Qwen/Qwen3-32B');
  });
});

describe('plan', () => {
  it('orders grid points with the first key outermost, then zip, then repeats', () => {
    const overrides = expandOverrides(
      parseSweepFile({ base: 'b', grid: { 'a.g1': [1, 2], 'a.g2': ['x', 'y'] }, zip: { 'a.z1': [10, 20], 'a.z2': [30, 40] } }, 's'),
    );
    expect(overrides.map((o) => [o['a.g1'], o['a.g2'], o['a.z1'], o['a.z2']])).toEqual([
      [1, 'x', 10, 30],
      [1, 'x', 20, 40],
      [1, 'y', 10, 30],
      [1, 'y', 20, 40],
      [2, 'x', 10, 30],
      [2, 'x', 20, 40],
      [2, 'y', 10, 30],
      [2, 'y', 20, 40],
    ]);
  });

  it('builds grid x zip x repeats points with the repeat index in the overrides and bumped seeds', () => {
    const p = plan(`
grid:
  traffic.load.concurrency: [1, 4]
zip:
  traffic.source.input_tokens: [32, 128]
  traffic.source.output_tokens: [4, 16]
repeats: 3
`);
    expect(p.points).toHaveLength(2 * 2 * 3);
    expect(p.axes).toEqual(['traffic.load.concurrency', 'traffic.source.input_tokens', 'traffic.source.output_tokens', 'repeat']);
    expect(p.points.map((pt) => pt.index)).toEqual([...Array(12).keys()]);
    expect(p.points.slice(0, 3).map((pt) => pt.overrides)).toEqual(
      [0, 1, 2].map((repeat) => ({
        'traffic.load.concurrency': 1,
        'traffic.source.input_tokens': 32,
        'traffic.source.output_tokens': 4,
        repeat,
      })),
    );
    expect(p.points.slice(0, 3).map((pt) => (pt.config.traffic.source as { seed: number }).seed)).toEqual([3, 4, 5]);
    expect(new Set(p.points.map((pt) => pt.id)).size).toBe(12);
  });

  it('bumps the poisson seed as well as the source seed', () => {
    const p = plan(`
set:
  traffic.load: {type: poisson, requests_per_second: 5, seed: 40}
repeats: 2
`);
    expect(p.points.map((pt) => (pt.config.traffic.load as { seed: number }).seed)).toEqual([40, 41]);
  });

  it('gives ids that are 12 hex digits of the effective config and ignore key order in the files', () => {
    const a = plan(`
set:
  traffic.stop: {requests: 10}
  engine.model: m
grid:
  traffic.load.concurrency: [1, 2]
  engine.workers.aggregated.scheduler.max_sequences: [8, 16]
`);
    const b = plan(
      `
grid:
  engine.workers.aggregated.scheduler.max_sequences: [8, 16]
  traffic.load.concurrency: [1, 2]
set:
  engine.model: m
  traffic.stop: {requests: 10}
`,
      {
        traffic: {
          stop: { requests: 99 },
          load: { concurrency: 9, type: 'concurrency' },
          source: { seed: 3, output_tokens: 8, input_tokens: 64, random_range_ratio: 0.5, type: 'synthetic' },
        },
        engine: { workers: { aggregated: { timing: { decode_ms: 2, prefill_ms: 10, type: 'fixed' } } }, model: 'x' },
      },
    );
    for (const pt of a.points) expect(pt.id).toMatch(/^[0-9a-f]{12}$/);
    const byOverrides = (p: Plan) => new Map(p.points.map((pt) => [canonicalJson(pt.overrides), pt.id]));
    expect(byOverrides(b)).toEqual(byOverrides(a));
    expect(a.points.map((pt) => pt.id)).not.toEqual(b.points.map((pt) => pt.id)); // different plan order, same ids
  });

  it('gives a point with the same effective config the same id in any sweep', () => {
    const alone = plan('set:\n  traffic.load.concurrency: 4\n');
    const inGrid = plan('grid:\n  traffic.load.concurrency: [1, 2, 4]\n');
    expect(inGrid.points[2].id).toBe(alone.points[0].id);
    expect(alone.points[0].id).toBe(
      pointId(
        validate(
          {
            ...(tinyRaw() as object),
            traffic: { ...(tinyRaw() as { traffic: object }).traffic, load: { type: 'concurrency', concurrency: 4 } },
          },
          'x',
        ),
      ),
    );
  });

  it('validates every point before anything runs and reports each invalid one with its overrides and field', () => {
    let err: PlanError | undefined;
    try {
      plan(`
grid:
  traffic.load.concurrency: [0, 2, -1]
  engine.detokenization.workers: [1, 0]
`);
    } catch (e) {
      err = e as PlanError;
    }
    expect(err).toBeInstanceOf(PlanError);
    // concurrency 0 and -1 are invalid with either worker count, and workers 0 with any concurrency.
    expect(err!.invalid.map((p) => p.index)).toEqual([0, 1, 3, 4, 5]);
    const first = err!.invalid[0];
    expect(first.overrides).toEqual({ 'traffic.load.concurrency': 0, 'engine.detokenization.workers': 1 });
    expect(first.field).toBe('traffic.load.concurrency');
    const workers = err!.invalid.find((p) => p.index === 3)!;
    expect(workers.field).toBe('engine.detokenization.workers');
    expect(err!.message).toMatch(/^test-sweep\.yaml: 5 of 6 points are invalid; nothing was run\./);
    expect(err!.message).toContain(
      'point 3 (traffic.load.concurrency=2, engine.detokenization.workers=0): engine.detokenization.workers: must be a positive integer',
    );
  });

  it('reports an override that cannot be applied (a key inside a number)', () => {
    expect(() => plan('grid:\n  traffic.load.concurrency.x: [1]\n')).toThrow(/point 0 .*traffic\.load\.concurrency: is 2, not a mapping/);
  });

  it('refuses points that come out identical, naming both', () => {
    expect(() => plan('grid:\n  traffic.load.concurrency: [2, 2]\n')).toThrow(/point 1 .*same effective config as point 0/);
    const base = tinyRaw() as { traffic: { source: Record<string, unknown> } };
    base.traffic.source = { type: 'synthetic-session', turns: 2, new_input_tokens_per_turn: 8, output_tokens_per_turn: 2 };
    expect(() => plan('repeats: 2\n', base)).toThrow(/repeats need a seeded source/);
  });

  it('marks log2 ranges and doubling lists as log2 axes', () => {
    const p = plan(`
grid:
  traffic.load.concurrency: [1, 2, 4, 8]
  engine.workers.aggregated.scheduler.max_sequences: [8, 24]
`);
    expect(p.log2Axes).toEqual(['traffic.load.concurrency']);
  });
});
