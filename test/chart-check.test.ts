/**
 * Every chart the project draws, built from small inputs, held to what it must show (on its spec
 * and on the scene vega lays out), then opened together in headless Chromium by the report
 * check (scripts/check-report-html.mjs), which measures the layout Chromium drew. The browser
 * part is skipped, with a message, where there is no Chromium.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TopLevelSpec } from 'vega-lite';
import { describe, expect, it } from 'vitest';
import { runDetokenizationFit, runPassTimeFit, runResponseOverheadFit } from '../src/calibrate/direct-fits.js';
import { fitChartSpec } from '../src/calibrate/fit-output.js';
import { chartView, renderSvg } from '../src/io/render-svg.js';
import { BEYOND_LIMIT, BREAKS, costPoints, costSpec, frontierSpec, MEETS, type FrontierPoint } from '../src/plan/plan-report.js';
import type { Slo } from '../src/plan/plan-file.js';
import type { CandidateRow } from '../src/plan/plan-result.js';
import { apeChartSpec, metricChartSpec } from '../src/score/charts.js';
import { parseMetricList } from '../src/score/metric-names.js';
import { pairPoints } from '../src/score/pair.js';
import type { PointKey, ScorePoint } from '../src/score/points.js';
import { buildScore } from '../src/score/score-result.js';
import { chartSpec } from '../src/sweep/chart.js';
import type { PlanOutline } from '../src/sweep/plan.js';
import type { PointRecord } from '../src/sweep/results.js';

const CHROMIUM = '/usr/bin/chromium';

/** Every chart checked in Chromium at the end, by name. */
const charts: Array<{ name: string; spec: TopLevelSpec }> = [];

/** A rendered scene: every item of a mark (or a legend's symbols) by its role, with its datum and bounds. */
interface SceneItem {
  role: string;
  datum?: Record<string, unknown>;
  fill?: string;
  stroke?: string;
  size?: number;
  shape?: string;
  text?: string;
  bounds: { x1: number; x2: number; y1: number; y2: number };
}

async function sceneOf(spec: TopLevelSpec): Promise<{ items: SceneItem[]; domain: (scale: string) => number[]; warnings: string[] }> {
  const { view, warnings } = await chartView(spec);
  const items: SceneItem[] = [];
  const walk = (node: { marktype?: string; role?: string; items?: unknown[] }, role: string) => {
    for (const item of (node.items ?? []) as Array<Record<string, unknown>>) {
      const itemRole = node.role ?? role;
      if (node.marktype !== undefined && node.marktype !== 'group') {
        items.push({ role: `${node.marktype}:${itemRole}`, ...(item as object), bounds: item.bounds as SceneItem['bounds'] });
      }
      for (const child of (item.items ?? []) as Array<{ marktype?: string; role?: string; items?: unknown[] }>) walk(child, itemRole);
    }
  };
  walk((view.scenegraph() as unknown as { root: { items: unknown[] } }).root, 'root');
  const domain = (scale: string) => (view.scale(scale) as { domain: () => number[] }).domain();
  return { items, domain, warnings };
}

// ---------------------------------------------------------------------------------------------
// Plan report

const TTFT: Slo = { metric: 'time_to_first_token', stat: 'p90', limit: 500, bound: 'max', unit: 'ms' };

/** Two GPU types; each replay at rate r: TTFT 80 ms x 1.6^(step), meets every SLO under 400 ms; the last ones at 40 and 100 s. */
function frontierInput(): FrontierPoint[] {
  const points: FrontierPoint[] = [];
  for (const [hardware, scale] of [
    ['l40s', 1],
    ['h100_sxm', 4],
  ] as const) {
    const latencies = [80, 110, 160, 250, 390, 620, 1300, 40_000, 100_000];
    latencies.forEach((latency, i) =>
      points.push({
        hardware,
        series: hardware,
        candidate: `${hardware}-c${i}`,
        rate: (i + 1) * scale,
        latency,
        tokensPerGpu: 300 * (i + 1) * scale,
        meets: latency < 400 ? MEETS : BREAKS,
      }),
    );
  }
  return points;
}

function row(id: string, hardware: string, cost: number, rate: number | null, dominatedBy: string | null = null): CandidateRow {
  return { id, hardware, cost_per_hour: cost, max_rate_rps: rate, dominated_by: dominatedBy } as unknown as CandidateRow;
}

/** 13 candidates on 5 points, as in a plan whose batch limits made no difference. */
function costInput(): CandidateRow[] {
  return [
    ...[1, 2, 3, 4].map((i) => row(`l40s-a${i}`, 'l40s', 0.9, 4.29)),
    ...[1, 2, 3, 4].map((i) => row(`l40s-b${i}`, 'l40s', 1.8, 6.69)),
    row('h100-best', 'h100_sxm', 2, 23.3),
    row('h100-twin', 'h100_sxm', 2, 23.3),
    row('h100-dominated', 'h100_sxm', 2, 21.3, 'h100-best'),
    row('h100-tp2-a', 'h100_sxm', 4, 37.1),
    row('h100-tp2-b', 'h100_sxm', 4, 37.1),
    row('pruned', 'h100_sxm', 4, null, 'h100-tp2-a'),
  ];
}

describe('plan report charts', () => {
  it("frontier: the SLO's label stays inside the plot when the limit is the axis's highest value", async () => {
    // Every replay below the limit: the axis ends a margin past the rule, too close for the label
    // on its right.
    const points = frontierInput().filter((p) => p.latency < TTFT.limit);
    const spec = frontierSpec(points, TTFT) as TopLevelSpec;
    charts.push({ name: 'plan frontier, limit at the right edge', spec });
    const scene = await sceneOf(spec);
    const [label] = scene.items.filter((i) => i.role === 'text:mark' && i.text === 'SLO <= 500');
    const [rule] = scene.items.filter((i) => i.role === 'rule:mark');
    expect(label.bounds.x1).toBeGreaterThanOrEqual(0);
    expect(label.bounds.x2).toBeLessThanOrEqual(420);
    // Left of its rule.
    expect(label.bounds.x2).toBeLessThanOrEqual(rule.bounds.x1);
  });

  it('frontier: the step line goes through replays that met every SLO only, on an x axis from the data to 4x the limit', async () => {
    const points = frontierInput();
    const spec = frontierSpec(points, TTFT) as TopLevelSpec;
    charts.push({ name: 'plan frontier', spec });
    const layers = (
      spec as unknown as { layer: Array<{ mark: { type: string; interpolate?: string }; data: { values: FrontierPoint[] } }> }
    ).layer;
    const line = layers.find((l) => l.mark?.type === 'line');
    expect(line?.mark.interpolate).toBe('step-after');
    expect(line?.data.values.length).toBeGreaterThan(0);
    for (const p of line?.data.values ?? []) expect(p.meets).toBe(MEETS);
    // The 40 s and 100 s replays are left out and counted.
    const drawn = layers.find((l) => l.mark?.type === 'point')?.data.values ?? [];
    expect(Math.max(...drawn.map((p) => p.latency))).toBeLessThanOrEqual(TTFT.limit * BEYOND_LIMIT);
    expect(JSON.stringify((spec as { title: unknown }).title)).toContain('4 replays with time_to_first_token.p90 above 2000 ms not drawn');

    const scene = await sceneOf(spec);
    expect(scene.warnings).toEqual([]);
    // The x axis starts just below the lowest replay (80 ms), not at 10 ms, and ends past the limit.
    const [xLow, xHigh] = scene.domain('x');
    expect(xLow).toBeGreaterThan(60);
    expect(xLow).toBeLessThan(80);
    expect(xHigh).toBeGreaterThan(1300);
    expect(xHigh).toBeLessThan(2000);
    // Legend swatches: filled circles for the GPU types (the marks that met the SLOs are filled),
    // a filled circle and a hollow triangle for the replays.
    const symbols = scene.items.filter((i) => i.role === 'symbol:legend-symbol');
    const byLabel = (label: string) => symbols.find((s) => s.datum?.label === label || s.datum?.value === label);
    for (const gpu of ['l40s', 'h100_sxm']) expect(byLabel(gpu)?.fill).toMatch(/^#|^rgb/);
    expect(byLabel(MEETS)?.fill).toBe('#777');
    expect(byLabel(BREAKS)?.fill).toBe('transparent');
    expect(byLabel(BREAKS)?.shape).toBe('triangle-up');
  });

  it('cost: identical candidates are one mark with their count, the target rate is a rule, the legend lists the kinds drawn', async () => {
    const values = costPoints(costInput(), 'h100-best');
    // 13 candidates with a max rate on 5 points (the pruned one has none).
    expect(values.reduce((sum, v) => sum + v.count, 0)).toBe(13);
    expect(values.map((v) => [v.hardware, v.cost, v.rate, v.kind, v.count, v.label])).toEqual([
      ['l40s', 0.9, 4.29, 'on the frontier', 4, '\u00d74'],
      ['l40s', 1.8, 6.69, 'on the frontier', 4, '\u00d74'],
      ['h100_sxm', 2, 23.3, 'best', 2, '\u00d72'],
      ['h100_sxm', 2, 21.3, 'dominated', 1, ''],
      ['h100_sxm', 4, 37.1, 'on the frontier', 2, '\u00d72'],
    ]);
    expect(values.find((v) => v.kind === 'best')).toMatchObject({ count: 2, rate: 23.3, candidates: 'h100-best, h100-twin' });

    const spec = costSpec(costInput(), 'h100-best', 6) as TopLevelSpec;
    charts.push({ name: 'plan cost', spec });
    const scene = await sceneOf(spec);
    expect(scene.warnings).toEqual([]);
    const marks = scene.items.filter((i) => i.role === 'symbol:mark');
    // No two marks on one spot.
    const spots = marks.map((m) => `${Math.round((m.bounds.x1 + m.bounds.x2) / 2)},${Math.round((m.bounds.y1 + m.bounds.y2) / 2)}`);
    expect(new Set(spots).size).toBe(marks.length);
    const labels = scene.items.filter((i) => i.role === 'text:mark').map((t) => t.text);
    expect(labels.filter((t) => t?.startsWith('target'))).toEqual(['target 6 rps']);
    expect(labels.filter((t) => !t?.startsWith('target')).sort()).toEqual(['\u00d72', '\u00d72', '\u00d74', '\u00d74']);
    // The best mark is at least three times the area of the others.
    const best = marks.find((m) => m.datum?.kind === 'best');
    const other = marks.find((m) => m.datum?.kind !== 'best');
    expect(best?.size).toBeGreaterThanOrEqual(3 * (other?.size ?? Infinity));
    // The target rate: a horizontal rule at 6 rps.
    const rules = scene.items.filter((i) => i.role === 'rule:mark');
    expect(rules.map((r) => r.datum?.target)).toEqual([6]);
    // The legend lists the kinds present: here all three; with no dominated candidate, two.
    const kindsIn = (s: Awaited<ReturnType<typeof sceneOf>>) =>
      s.items
        .filter((i) => i.role === 'symbol:legend-symbol')
        .map((i) => i.datum?.value)
        .filter((v) => ['best', 'on the frontier', 'dominated'].includes(v as string));
    expect(kindsIn(scene)).toEqual(['best', 'on the frontier', 'dominated']);
    const noDominated = await sceneOf(
      costSpec(
        costInput().filter((r) => r.dominated_by === null),
        'h100-best',
        null,
      ) as TopLevelSpec,
    );
    expect(kindsIn(noDominated)).toEqual(['best', 'on the frontier']);
    // The right-most point lies inside the x domain, with room to spare.
    const [xLow, xHigh] = scene.domain('x');
    expect(xLow).toBeLessThan(0);
    expect(xHigh).toBeGreaterThan(4.1);
  });
});

// ---------------------------------------------------------------------------------------------
// Sweep chart

type Summary = NonNullable<PointRecord['summary']>;

function gpuSweep(): { plan: PlanOutline; byId: Map<string, PointRecord> } {
  const gpus = ['h100_sxm', 'h200_sxm', 'b200_sxm'];
  const loads = [1, 2, 4, 8, 16, 32, 64, 128, 256];
  const plan: PlanOutline = {
    name: 'gpus',
    axes: ['engine.hardware', 'traffic.load.concurrency'],
    log2Axes: ['traffic.load.concurrency'],
    points: gpus.flatMap((gpu, g) =>
      loads.map((c, i) => ({
        index: g * loads.length + i,
        id: `${gpu}-${c}`,
        overrides: { 'engine.hardware': gpu, 'traffic.load.concurrency': c },
      })),
    ),
    chart: { x: 'inter_token_latency.avg', y: ['output_token_throughput_per_gpu'], along: 'traffic.load.concurrency' },
  };
  const byId = new Map<string, PointRecord>();
  for (const p of plan.points) {
    const g = gpus.indexOf(p.overrides['engine.hardware'] as string);
    const c = p.overrides['traffic.load.concurrency'] as number;
    const itl = (18 - 3 * g) * (1 + c / 200);
    const summary = {
      metrics: { inter_token_latency: { avg: itl } },
      run: { output_token_throughput: (4 * 1000 * c) / itl / 1.1 },
      deployment: { gpus: 4 },
    } as unknown as Summary;
    byId.set(p.id, { id: p.id, overrides: p.overrides, status: 'ok', error: null, summary });
  }
  return { plan, byId };
}

describe('sweep chart', () => {
  it('GPU comparison: throughput per GPU against latency, one line per GPU in order of concurrency, each point labelled', async () => {
    const { plan, byId } = gpuSweep();
    const spec = chartSpec(plan, plan.points, byId) as TopLevelSpec;
    charts.push({ name: 'sweep: GPU comparison', spec });
    const scene = await sceneOf(spec);
    expect(scene.warnings).toEqual([]);
    const lines = scene.items.filter((i) => i.role === 'line:mark');
    // One line item per point, grouped by GPU (vega draws a line as its items): 3 x 9, each GPU's in concurrency order.
    const byGpu = new Map<string, Array<{ label: string; x: number; y: number }>>();
    for (const item of lines) {
      const d = item.datum as { series: string; label: string; xValue: number; value: number };
      byGpu.set(d.series, [...(byGpu.get(d.series) ?? []), { label: d.label, x: d.xValue, y: d.value }]);
    }
    expect([...byGpu.keys()]).toEqual(['h100_sxm', 'h200_sxm', 'b200_sxm']);
    for (const points of byGpu.values()) expect(points.map((p) => p.label)).toEqual(['1', '2', '4', '8', '16', '32', '64', '128', '256']);
    // Throughput per GPU is the run's throughput over the 4 GPUs.
    const first = byGpu.get('h100_sxm')?.[0];
    expect(first?.y).toBeCloseTo(4000 / 18.09 / 1.1 / 4, 6);
    // Every point carries its concurrency as a text label.
    expect(scene.items.filter((i) => i.role === 'text:mark').map((t) => t.text)).toHaveLength(27);
    // Throughput spans 1 to 256 requests in flight: a log y axis, so that the low concurrencies stand apart.
    const panel = (spec as unknown as { concat: Array<{ layer: Array<{ encoding: { y: { scale: { type?: string } } } }> }> }).concat[0];
    expect(panel.layer[0].encoding.y.scale.type).toBe('log');
  });

  it('a category on x (GPU names) is never joined by a line; repeats are capped bars', async () => {
    const { plan, byId } = gpuSweep();
    const categories: PlanOutline = { ...plan, chart: undefined, axes: ['engine.hardware', 'traffic.load.concurrency', 'repeat'] };
    const spec = chartSpec(categories, categories.points, byId) as TopLevelSpec;
    charts.push({ name: 'sweep: GPUs on x', spec });
    const scene = await sceneOf(spec);
    expect(scene.warnings).toEqual([]);
    expect(scene.items.filter((i) => i.role === 'line:mark')).toHaveLength(0);
    const types = (spec as unknown as { concat: Array<{ layer: Array<{ mark: { type: string } }> }> }).concat[0].layer.map(
      (l) => l.mark.type,
    );
    expect(types).toEqual(['rule', 'tick', 'tick', 'point']);
  });
});

// ---------------------------------------------------------------------------------------------
// Score report

function scorePoint(source: string, key: PointKey, ttft: number, itl: number): ScorePoint {
  return { source, key, metrics: { time_to_first_token: { avg: ttft }, inter_token_latency: { avg: itl } } };
}

function scoreOf(
  loads: number[],
  curves: number[],
  simTtft: (c: number, isl: number) => number,
  measuredTtft: (c: number, isl: number) => number,
) {
  const keyOf = (c: number, isl: number): PointKey => (curves.length > 1 ? { concurrency: c, isl } : { concurrency: c });
  const sim = curves.flatMap((isl) => loads.map((c) => scorePoint(`s${isl}-${c}`, keyOf(c, isl), simTtft(c, isl), 23.4)));
  const measured = curves.flatMap((isl) => loads.map((c) => scorePoint(`m${isl}-${c}`, keyOf(c, isl), measuredTtft(c, isl), 23.374)));
  return buildScore({
    paired: pairPoints(sim, measured),
    metrics: parseMetricList(['ttft,itl']),
    groupBy: curves.length > 1 ? ['isl'] : [],
    skippedSim: [],
    inputs: { sim: 'sim', sim_label: 'sim', measured: ['m'], measured_notes: [] },
  });
}

describe('score report charts', () => {
  it('one point: a log2 concurrency axis labelled 1, a y axis of a readable span, the point whole', async () => {
    const result = scoreOf(
      [1],
      [0],
      () => 525.4,
      () => 525.355,
    );
    const spec = metricChartSpec(result, 'time_to_first_token.avg') as TopLevelSpec;
    charts.push({ name: 'score: one point', spec });
    const scene = await sceneOf(spec);
    expect(scene.warnings).toEqual([]);
    const [yLow, yHigh] = scene.domain('y');
    // At least a tenth of the value: 525.36 and 525.40 ms are one value, not a whole axis apart.
    expect(yHigh - yLow).toBeGreaterThanOrEqual(0.1 * 525);
    expect(yLow).toBeLessThan(525.355);
    expect(yHigh).toBeGreaterThan(525.4);
    const [xLow, xHigh] = scene.domain('x');
    expect(xLow).toBeLessThan(1);
    expect(xHigh).toBeGreaterThan(1);
    const x = (spec as unknown as { layer: Array<{ encoding: { x: { scale: { type: string; base: number } } } }> }).layer[0].encoding.x;
    expect(x.scale).toMatchObject({ type: 'log', base: 2 });
    // The APE bars stop short of the top.
    const ape = apeChartSpec(result) as TopLevelSpec;
    charts.push({ name: 'score: one point, APE', spec: ape });
    const apeScene = await sceneOf(ape);
    const bars = apeScene.items.filter((i) => i.role === 'rect:mark');
    expect(Math.min(...bars.map((b) => b.bounds.y1))).toBeGreaterThan(5);
  });

  it('two points: concurrency 32 and 64 on a log2 axis like the sister report, markers whole at both ends', async () => {
    const result = scoreOf(
      [32, 64],
      [0],
      (c) => 100 + c,
      (c) => 98 + c * 1.1,
    );
    const spec = metricChartSpec(result, 'time_to_first_token.avg') as TopLevelSpec;
    charts.push({ name: 'score: two points', spec });
    const scene = await sceneOf(spec);
    const x = (spec as unknown as { layer: Array<{ encoding: { x: { scale: { type: string }; axis: { values: number[] } } } }> }).layer[0]
      .encoding.x;
    expect(x.scale.type).toBe('log');
    expect(x.axis.values).toEqual([32, 64]);
    const [xLow, xHigh] = scene.domain('x');
    expect(xLow).toBeLessThan(32);
    expect(xHigh).toBeGreaterThan(64);
    // Every symbol lies whole inside the plot (340 x 240).
    for (const s of scene.items.filter((i) => i.role === 'symbol:mark')) {
      expect(s.bounds.x1).toBeGreaterThanOrEqual(0);
      expect(s.bounds.x2).toBeLessThanOrEqual(340);
      expect(s.bounds.y1).toBeGreaterThanOrEqual(0);
      expect(s.bounds.y2).toBeLessThanOrEqual(240);
    }
  });

  it('--group-by: one dash per curve, its legend drawn with dashed strokes one can see', async () => {
    const result = scoreOf(
      [4, 8, 16, 32, 64],
      [1024, 8192],
      (c, isl) => c + isl / 50,
      (c, isl) => 1.2 * c + isl / 50,
    );
    const spec = metricChartSpec(result, 'time_to_first_token.avg') as TopLevelSpec;
    charts.push({ name: 'score: --group-by', spec });
    const scene = await sceneOf(spec);
    expect(scene.warnings).toEqual([]);
    const dashes = scene.items.filter((i) => i.role === 'symbol:legend-symbol' && String(i.datum?.value).startsWith('isl='));
    expect(dashes.map((d) => d.datum?.value)).toEqual(['isl=1024', 'isl=8192']);
    for (const d of dashes) {
      expect(d.stroke).toBe('#1f77b4');
      expect(d.shape).toBe('stroke');
    }
    expect(new Set(dashes.map((d) => JSON.stringify((d as unknown as { strokeDash: unknown }).strokeDash))).size).toBe(2);
  });
});

// ---------------------------------------------------------------------------------------------
// Fit charts

describe('fit charts', () => {
  it('response overhead, pass time and detokenization charts lay out without warnings', async () => {
    const load = await runResponseOverheadFit({ aiperf: [1, 2, 4, 8].map((c) => `calibration/aiperf-mlx-qwen3-0.6b-c${c}`) });
    const pass = await runPassTimeFit({
      input: 'calibration/splitwise-perf-model.csv',
      layout: 'prefill-decode',
      select: [
        { column: 'model', value: 'llama2-70b' },
        { column: 'hardware', value: 'h100-80gb' },
        { column: 'tensor_parallel', value: '4' },
      ],
      holdout: 0.2,
    });
    const detok = await runDetokenizationFit({ input: 'calibration/detokenization-jobs.csv', model: 'two-term' });
    for (const [name, spec] of [
      ['fit: response overhead', fitChartSpec(load.report, ['output_tokens', 'inflight'])],
      ['fit: pass time', fitChartSpec(pass.report, ['prefill_tokens', 'prefill_pairs', 'decode_requests', 'decode_kv_tokens'])],
      ['fit: detokenization', fitChartSpec(detok.report, ['outputs'])],
    ] as const) {
      charts.push({ name, spec });
      expect((await sceneOf(spec)).warnings).toEqual([]);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// All of them in Chromium

describe('report check', () => {
  it('lays out every chart whole in headless Chromium', async (context) => {
    expect(charts.length).toBeGreaterThanOrEqual(11);
    if (!existsSync(CHROMIUM)) {
      console.log(`skipped the headless-browser check of ${charts.length} charts: no ${CHROMIUM} (Debian: apt-get install -y chromium)`);
      context.skip();
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'servesim-charts-'));
    const svgs = await Promise.all(charts.map(async ({ name, spec }) => `<h2>${name}</h2><div>${await renderSvg(spec)}</div>`));
    const page = join(dir, 'charts.html');
    writeFileSync(
      page,
      `<!doctype html><html><head><meta charset="utf-8"><title>charts</title></head><body><h1>charts</h1>${svgs.join('\n')}</body></html>`,
    );
    const run = spawnSync(process.execPath, ['scripts/check-report-html.mjs', page], { encoding: 'utf8', timeout: 120_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(`ok, ${charts.length} charts rendered without network and laid out whole`);
    expect(run.status).toBe(0);
  });

  it('fails a chart with the old defects, naming each', async (context) => {
    if (!existsSync(CHROMIUM)) {
      console.log(`skipped: no ${CHROMIUM}`);
      context.skip();
      return;
    }
    // A point on the edge of a nice domain, labels with trailing zeros, a 0.05-wide axis, a dash
    // legend without strokes, wider than its 200 px plot.
    const bad: TopLevelSpec = {
      width: 200,
      height: 150,
      data: {
        values: [
          { x: 1, y: 525.355, c: 'a' },
          { x: 4, y: 525.4, c: 'b, a label much longer than the plot is wide' },
        ],
      },
      mark: { type: 'line', point: { size: 80, filled: true } },
      encoding: {
        x: { field: 'x', type: 'quantitative', axis: { format: '.1f' } },
        y: { field: 'y', type: 'quantitative', scale: { zero: false } },
        // As the old score report drew its curve legend: a filled line, no stroke (nothing shows).
        strokeDash: {
          field: 'c',
          type: 'nominal',
          legend: { symbolType: 'stroke', symbolStrokeColor: 'transparent', symbolFillColor: 'black', labelLimit: 0 },
        },
      },
    };
    const dir = mkdtempSync(join(tmpdir(), 'servesim-charts-'));
    const file = join(dir, 'bad.svg');
    writeFileSync(file, await renderSvg(bad));
    const run = spawnSync(process.execPath, ['scripts/check-report-html.mjs', file], { encoding: 'utf8', timeout: 120_000 });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('not whole inside its plot');
    expect(run.stderr).toContain('has trailing zeros');
    expect(run.stderr).toContain('under 2 % of its values');
    expect(run.stderr).toContain('legend entry "a" has no visible swatch');
    expect(run.stderr).toContain('px past the plots');
  });
});
