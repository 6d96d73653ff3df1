/**
 * Charts of a score as SVG text (vega-lite compiled to vega, rendered headless with
 * `renderer: 'none'`): simulated and measured values against load, one chart per metric;
 * APE per point. The SVG is inlined into `report.html`, so the page needs no network.
 *
 * The load chart draws the story of a score: the simulated curve over every load it was run at
 * (scored or not), the measured points scored against it, and, when some measured points were
 * the ones a model was fitted on (`--train`), those too, marked apart. The APE chart puts both
 * sides of a `--baseline` score side by side on one y scale.
 */
import type * as vegaLite from 'vega-lite';
import { barScale, isDoubling, readableScale } from '../io/chart-scale.js';
import { renderSvg } from '../io/render-svg.js';
import type { CurvePoint, PointScoreJson, ScoreResult } from './score-result.js';
import { keyValueText, type PointKey } from './points.js';

type Spec = vegaLite.TopLevelSpec;

const SIM_COLOR = '#1f77b4';
const MEASURED_COLOR = '#d62728';
const BASELINE_COLOR = '#7f7f7f';

/** Legends under the chart, every entry and label whole. */
const LEGEND = { orient: 'bottom' as const, direction: 'horizontal' as const, labelLimit: 0, titleLimit: 0, symbolLimit: 0 };

const TRAINING = 'measured, training (not scored)';
const HELD_OUT = 'measured, scored';

/** Keys that tell curves apart: the keys points were matched on and the variant keys, but the load. */
function curveKeys(result: ScoreResult): string[] {
  const load = result.match.load_key;
  return [...result.match.keys, ...result.match.variant_keys].filter((name) => name !== load);
}

/** Keys among `names` whose values differ between the points: the rest say nothing in a label. */
function varyingKeys(keys: readonly PointKey[], names: readonly string[]): string[] {
  return names.filter((name) => new Set(keys.map((key) => (name in key ? keyValueText(key[name]) : ''))).size > 1);
}

function curveLabel(key: PointKey, names: readonly string[]): string {
  const parts = names.filter((name) => name in key).map((name) => `${name}=${keyValueText(key[name])}`);
  return parts.length > 0 ? parts.join(', ') : 'all points';
}

function loadLabel(key: PointKey, loadKey: string | null): string {
  if (loadKey === null || !(loadKey in key)) return '';
  return `${loadKey === 'concurrency' ? 'c' : 'rate '}${keyValueText(key[loadKey])}`;
}

/** `c32`, or `c32 (isl=8192)` when points also differ in other keys. */
function pointLabel(key: PointKey, loadKey: string | null, names: readonly string[]): string {
  const load = loadLabel(key, loadKey);
  const rest = names.filter((name) => name in key).map((name) => `${name}=${keyValueText(key[name])}`);
  if (rest.length === 0) return load || 'point';
  return load ? `${load} (${rest.join(', ')})` : rest.join(', ');
}

interface Drawn {
  load: number | null;
  label: string;
  curve: string;
  series: string;
  value: number;
  order: number;
}

function finite(value: number | null | undefined): value is number {
  return value !== null && value !== undefined && Number.isFinite(value);
}

/** Vega-lite spec of one metric: the simulated curve (and baseline) and the measured points against load. */
export function metricChartSpec(result: ScoreResult, metric: string): Spec | null {
  const loadKey = result.match.load_key;
  const names = curveKeys(result);
  const rows = result.points.filter((row) => row.metric === metric);
  const simLabel = result.inputs.sim_label;
  const baselineLabel = result.inputs.baseline_label ?? 'baseline';
  const loadOf = (key: PointKey) => (loadKey !== null && typeof key[loadKey] === 'number' ? key[loadKey] : null);
  const drawn: Drawn[] = [];
  const add = (key: PointKey, series: string, value: number | null | undefined) => {
    if (!finite(value)) return;
    const load = loadOf(key);
    drawn.push({ load, label: pointLabel(key, loadKey, names), curve: curveLabel(key, names), series, value, order: load ?? drawn.length });
  };
  const fromCurve = (points: readonly CurvePoint[] | undefined, series: string, fallback: (row: PointScoreJson) => number | null) => {
    if (points !== undefined) for (const point of points) add(point.key, series, point.values[metric]);
    else for (const row of rows) add(row.key, series, fallback(row));
  };
  fromCurve(result.curves?.sim, simLabel, (row) => row.sim);
  if (result.inputs.baseline) fromCurve(result.curves?.baseline, baselineLabel, (row) => row.baseline_sim ?? null);
  const training = result.curves?.training ?? [];
  const measuredSeries = training.length > 0 ? HELD_OUT : 'measured';
  const seenMeasured = new Set<string>();
  for (const row of rows) {
    // Several simulated variants may share one measured point: draw it once.
    if (seenMeasured.has(row.measured_source)) continue;
    seenMeasured.add(row.measured_source);
    add(row.key, measuredSeries, row.measured);
  }
  for (const point of training) add(point.key, TRAINING, point.values[metric]);
  if (drawn.length === 0) return null;

  const unit = result.metrics[metric]?.unit ?? '';
  const present = (series: string) => drawn.some((d) => d.series === series);
  const palette: Array<[string, string]> = [
    [simLabel, SIM_COLOR],
    ...(result.inputs.baseline ? ([[baselineLabel, BASELINE_COLOR]] as Array<[string, string]>) : []),
    [measuredSeries, MEASURED_COLOR],
    [TRAINING, '#ff7f0e'],
  ];
  const shown = palette.filter(([series]) => present(series));
  const hasMeasured = present(measuredSeries) || present(TRAINING);
  const curves = [...new Set(drawn.map((d) => d.curve))];
  const hasLoad = drawn.every((d) => d.load !== null);
  const loads = [...new Set(drawn.map((d) => d.load as number))].sort((a, b) => a - b);
  // Concurrency is read on a log2 axis (as sweeps run it: 1, 2, 4, ...), whatever points a score has;
  // a rate too when it doubles.
  const log2 = hasLoad && loads.every((load) => load > 0) && (loadKey === 'concurrency' || isDoubling(loads));
  const x = hasLoad
    ? {
        field: 'load',
        type: 'quantitative' as const,
        title: loadKey ?? 'load',
        scale: readableScale(loads, log2 ? { log: 2 } : {}),
        axis: log2 ? { values: loads } : {},
      }
    : { field: 'label', type: 'ordinal' as const, title: 'point', sort: null };
  const y = {
    field: 'value',
    type: 'quantitative' as const,
    title: unit || metric,
    scale: readableScale(drawn.map((d) => d.value)),
  };
  const color = {
    field: 'series',
    type: 'nominal' as const,
    title: null,
    scale: { domain: shown.map(([series]) => series), range: shown.map(([, c]) => c) },
    legend: LEGEND,
  };
  // One dash per curve, its legend drawn as dashed strokes under the other, one entry a row.
  const strokeDash =
    curves.length > 1
      ? {
          strokeDash: {
            field: 'curve',
            type: 'nominal' as const,
            title: 'curve',
            scale: { domain: curves },
            legend: {
              ...LEGEND,
              direction: 'vertical' as const,
              symbolType: 'stroke',
              symbolSize: 500,
              // vega-lite would leave the strokes without a colour (invisible): draw them in the simulated side's.
              encoding: {
                symbols: {
                  stroke: { value: SIM_COLOR },
                  strokeWidth: { value: 2 },
                  fill: { value: 'transparent' },
                  fillOpacity: { value: 1 },
                  opacity: { value: 1 },
                },
              },
            },
          },
        }
      : {};
  const lines = drawn.filter((d) => d.series !== TRAINING && d.series !== measuredSeries);
  const measured = drawn.filter((d) => d.series === TRAINING || d.series === measuredSeries);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: metric,
      // Short, so that it never makes the chart wider than its plot.
      subtitle: hasMeasured ? `${unit || 'value'} against ${loadKey ?? 'point'}` : 'no measured values: simulated only',
    },
    width: 340,
    height: 240,
    // The measured points under the simulated curves: where the two agree, the curve's point shows on the measured one.
    layer: [
      ...(measured.length > 0
        ? [
            {
              data: { values: measured },
              mark: { type: 'line' as const, strokeWidth: 1, strokeDash: [2, 3], opacity: 0.7 },
              encoding: {
                x,
                y,
                color: { value: MEASURED_COLOR },
                detail: { field: 'curve', type: 'nominal' as const },
                order: { field: 'order', type: 'quantitative' as const },
              },
            },
            {
              data: { values: measured },
              mark: { type: 'point' as const, filled: true, size: 80, opacity: 1 },
              encoding: {
                x,
                y,
                color,
                // The same field and title as the colour: one legend with the colours and the shapes.
                shape: {
                  field: 'series',
                  type: 'nominal' as const,
                  title: null,
                  scale: {
                    domain: shown.map(([series]) => series),
                    range: shown.map(([series]) => (series === TRAINING ? 'square' : 'circle')),
                  },
                  legend: LEGEND,
                },
              },
            },
          ]
        : []),
      {
        data: { values: lines },
        mark: { type: 'line', point: { filled: true, size: 30 }, strokeWidth: 2 },
        encoding: {
          x,
          y,
          color,
          ...strokeDash,
          detail: { field: 'curve', type: 'nominal' },
          order: { field: 'order', type: 'quantitative' },
        },
      },
    ],
    config: { view: { stroke: '#ccc' } },
  };
}

/** Vega-lite spec of APE per point: a bar per metric, grouped by point; both sides of a baseline score side by side on one y scale. */
export function apeChartSpec(result: ScoreResult): Spec | null {
  const loadKey = result.match.load_key;
  const names = varyingKeys(
    result.points.map((row) => row.key),
    curveKeys(result),
  );
  const sides: Array<['sim' | 'baseline', string]> = [['sim', result.inputs.sim_label]];
  if (result.inputs.baseline) sides.push(['baseline', result.inputs.baseline_label ?? 'baseline']);
  const values = sides.flatMap(([which, side]) =>
    result.points
      .map((row) => ({
        side,
        label: pointLabel(row.key, loadKey, names),
        metric: row.metric,
        ape: which === 'sim' ? row.ape : (row.baseline_ape ?? null),
        load: loadKey !== null && typeof row.key[loadKey] === 'number' ? row.key[loadKey] : 0,
      }))
      .filter((value) => value.ape !== null),
  );
  if (values.length === 0) return null;
  const order = [...new Map(values.map((value) => [value.label, value.load])).entries()]
    .sort((a, b) => a[1] - b[1])
    .map(([label]) => label);
  const metrics = Object.keys(result.metrics).filter((metric) => values.some((value) => value.metric === metric));
  const step = Math.max(8, Math.min(24, Math.floor(120 / Math.max(1, metrics.length))));
  const longLabels = order.some((label) => label.length > 6) && order.length * metrics.length * step < order.join('').length * 6;
  // The plots at least as wide as the legend under them (one column of metric names, about 6.5 px
  // a character at 11 px, plus the swatch), else two columns when they fit.
  const entryWidth = Math.max(...metrics.map((m) => m.length)) * 6.5 + 30;
  const ownWidth = order.length * (metrics.length + 1) * step;
  const width = Math.max(ownWidth, Math.ceil(entryWidth / sides.length));
  const columns = sides.length * width >= 2 * entryWidth ? 2 : 1;
  const chart = {
    width,
    height: 220,
    mark: { type: 'bar' as const },
    encoding: {
      x: {
        field: 'label',
        type: 'ordinal' as const,
        title: 'point',
        sort: order,
        axis: { labelAngle: longLabels ? -35 : 0, labelLimit: 0 },
      },
      xOffset: { field: 'metric', type: 'nominal' as const, sort: metrics },
      y: { field: 'ape', type: 'quantitative' as const, title: 'APE (%)', scale: barScale(values.map((value) => value.ape as number)) },
      color: { field: 'metric', type: 'nominal' as const, title: 'metric', sort: metrics, legend: { ...LEGEND, columns } },
    },
  };
  const title = { text: 'APE per point', subtitle: '|sim - measured| / measured, %', anchor: 'start' as const };
  if (sides.length === 1) {
    return {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: { ...title, text: `APE per point (${result.inputs.sim_label})` },
      data: { values },
      ...chart,
      config: { view: { stroke: '#ccc' } },
    };
  }
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    data: { values },
    facet: { column: { field: 'side', type: 'nominal', title: null, sort: sides.map(([, side]) => side) } },
    spec: chart,
    // One y scale for both sides, so that their bars compare at a glance.
    resolve: { scale: { y: 'shared' } },
    config: { view: { stroke: '#ccc' } },
  };
}

export interface ScoreCharts {
  /** One SVG per metric with any value, by metric name. */
  metrics: Record<string, string>;
  /** APE per point, both sides of a baseline score in one chart. */
  ape: string | null;
}

export async function renderScoreCharts(result: ScoreResult): Promise<ScoreCharts> {
  const metrics: Record<string, string> = {};
  for (const metric of Object.keys(result.metrics)) {
    const spec = metricChartSpec(result, metric);
    if (spec) metrics[metric] = await renderSvg(spec);
  }
  const apeSpec = apeChartSpec(result);
  return { metrics, ape: apeSpec ? await renderSvg(apeSpec) : null };
}
