/**
 * What every direct fit writes (docs/calibration.md): `fit.json` (coefficients with units, n, RMSE,
 * MAE, R^2, held-out error, notes), `snippet.yaml` (the block to paste into a run config),
 * `residuals.csv` (every row: measured, fitted, residual, bucket) and `fit.svg` (measured against
 * fitted, with the y = x line), plus the text printed on the terminal.
 */
import { join } from 'node:path';
import { stringify as stringifyCsv } from 'csv-stringify/sync';
import type { TopLevelSpec } from 'vega-lite';
import { barScale, readableScale } from '../io/chart-scale.js';
import { renderSvg } from '../io/render-svg.js';
import { writeOutputFiles } from '../io/write-output.js';
import { stringify as stringifyYaml } from 'yaml';
import type { LinearFit } from './fit-linear.js';

export interface FitReport {
  /** `detokenization`, `response-overhead`, `pass-time`. */
  target: string;
  model: string;
  inputs: string[];
  fit: LinearFit;
  /** The run-config block, as an object keyed by its dotted place (`engine.detokenization`). */
  snippet: Record<string, unknown>;
  /** Extra facts for fit.json (skipped records, layout). */
  extra?: Record<string, unknown>;
}

/** Rounds for display and files: 6 significant digits keeps what a measurement can tell. */
export function round6(value: number): number {
  return Number.isFinite(value) ? Number(value.toPrecision(6)) : value;
}

export function fitJson(report: FitReport): Record<string, unknown> {
  const { fit } = report;
  return {
    target: report.target,
    model: report.model,
    inputs: report.inputs,
    coefficients: Object.fromEntries(
      Object.entries(fit.coefficients).map(([name, c]) => [name, { value: round6(c.value), unit: c.unit, status: c.status }]),
    ),
    y: fit.y,
    n: fit.n,
    rmse: round6(fit.rmse),
    mae: round6(fit.mae),
    r2: fit.r2 === null ? null : round6(fit.r2),
    holdout: fit.holdout
      ? {
          fraction: fit.holdout.fraction,
          n: fit.holdout.n,
          rmse: round6(fit.holdout.rmse),
          mae: round6(fit.holdout.mae),
          mape: fit.holdout.mape === null ? null : round6(fit.holdout.mape),
        }
      : null,
    residuals_by_bucket: fit.residuals_by_bucket.map((b) => ({
      ...b,
      mean_residual: round6(b.mean_residual),
      rmse: round6(b.rmse),
      mae: round6(b.mae),
    })),
    notes: fit.notes,
    ...(report.extra ?? {}),
  };
}

/** `engine.detokenization` + {base_ms: 1} -> {engine: {detokenization: {base_ms: 1}}} as YAML. */
export function snippetYaml(snippet: Record<string, unknown>, header: string): string {
  const root: Record<string, unknown> = {};
  for (const [path, value] of Object.entries(snippet)) {
    const parts = path.split('.');
    let node = root;
    for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
    node[parts[parts.length - 1]] = value;
  }
  return `${header
    .split('\n')
    .map((line) => `# ${line}`)
    .join('\n')}\n${stringifyYaml(root)}`;
}

export function residualsCsv(fit: LinearFit, featureNames: readonly string[]): string {
  const header = ['source', 'bucket', ...featureNames, `measured_${fit.y.name}`, `fitted_${fit.y.name}`, 'residual', 'held_out'];
  const rows = fit.rows.map((row) => [
    row.source,
    row.bucket,
    ...row.x,
    round6(row.measured),
    round6(row.fitted),
    round6(row.fitted - row.measured),
    row.heldOut,
  ]);
  return stringifyCsv([header, ...rows]);
}

/** `decode batch 16-31` -> {kind: `decode batch`, range: `16-31`, low: 16}; a label without a count is its own kind. */
export function splitBucket(label: string): { kind: string; range: string; low: number } {
  const match = /^(.*?)\s*(\d+)(-\d+)?$/.exec(label);
  if (!match) return { kind: label, range: label, low: Infinity };
  return { kind: match[1] === '' ? 'rows' : match[1], range: `${match[2]}${match[3] ?? ''}`, low: Number(match[2]) };
}

const SET_LEGEND = { orient: 'bottom' as const, direction: 'horizontal' as const, labelLimit: 0, titleLimit: 0, symbolLimit: 0 };

const FITTED_ON = 'fitted on';
const HELD_OUT = 'held out';

function setOf(row: LinearFit['rows'][number]): string {
  return row.heldOut ? HELD_OUT : FITTED_ON;
}

/**
 * The legend of the rows' sets, drawn with its own swatches: a small filled circle for the rows
 * fitted on, a large diamond with a dark outline for the held-out rows, as the marks are.
 */
function setLegend(sets: readonly string[]) {
  return {
    ...SET_LEGEND,
    encoding: {
      symbols: {
        fill: { value: '#888' },
        stroke: { condition: { test: `datum.value === '${HELD_OUT}'`, value: '#111' }, value: 'transparent' },
        strokeWidth: { value: 1.5 },
        opacity: { value: 1 },
      },
    },
    values: sets,
  };
}

/** Shape, size and outline of a row by its set (one legend of the three). */
function setEncoding(sets: readonly string[]) {
  const legend = setLegend(sets);
  const channel = <T extends 'nominal' | 'ordinal'>(type: T, range: Array<string | number>) => ({
    field: 'set',
    type,
    title: 'rows',
    // An ordinal scale: a point scale (nominal size's default) makes one value's size NaN.
    scale: { type: 'ordinal' as const, domain: [...sets], range },
    legend,
  });
  return {
    shape: channel(
      'nominal',
      sets.map((set) => (set === HELD_OUT ? 'diamond' : 'circle')),
    ),
    size: channel(
      'ordinal',
      sets.map((set) => (set === HELD_OUT ? 90 : 30)),
    ),
    stroke: { condition: { test: `datum.set === '${HELD_OUT}'`, value: '#111' }, value: null },
    strokeWidth: { value: 1.2 },
  };
}

/** True when every value is positive and they span a factor of 10 or more: a log axis reads them. */
function spansDecade(values: readonly number[]): boolean {
  const positive = values.filter((v) => v > 0);
  return positive.length === values.length && positive.length > 0 && Math.max(...positive) / Math.min(...positive) >= 10;
}

/**
 * Measured against fitted, one panel per kind of input bucket (prefill passes and decode steps
 * sit orders of magnitude apart, so each kind gets its own panel with its own y = x line, log-log
 * where its values span a decade or more), coloured by bucket in numeric order on a sequential
 * scale (no colour repeats, nothing cut short), held-out rows as large outlined diamonds.
 */
function measuredAgainstFitted(fit: LinearFit, title: string): TopLevelSpec {
  const values = fit.rows.map((row) => ({ measured: row.measured, fitted: row.fitted, set: setOf(row), ...splitBucket(row.bucket) }));
  const kinds = [...new Set(values.map((v) => v.kind))];
  const sets = [FITTED_ON, HELD_OUT].filter((set) => values.some((v) => v.set === set));
  const unit = fit.y.unit;
  const panels = kinds.map((kind) => {
    const own = values.filter((v) => v.kind === kind);
    const all = own.flatMap((v) => [v.measured, v.fitted]);
    const scale = readableScale(all, spansDecade(all) ? { log: 10 } : {});
    const [low, high] = scale.domain ?? [Math.min(...all), Math.max(...all)];
    const ranges = [...new Map([...own].sort((a, b) => a.low - b.low).map((v) => [v.range, v.range])).keys()];
    return {
      title: `${kind}: ${fit.y.name}, fitted against measured`,
      width: 320,
      height: 320,
      layer: [
        {
          data: { values: [{ v: low }, { v: high }] },
          mark: { type: 'line' as const, color: '#999', strokeDash: [4, 4] },
          encoding: {
            x: { field: 'v', type: 'quantitative' as const, scale },
            y: { field: 'v', type: 'quantitative' as const, scale },
          },
        },
        {
          data: { values: own },
          mark: { type: 'point' as const, filled: true, opacity: 0.8 },
          encoding: {
            x: { field: 'measured', type: 'quantitative' as const, title: `measured (${unit})`, scale },
            y: { field: 'fitted', type: 'quantitative' as const, title: `fitted (${unit})`, scale },
            color: {
              field: 'range',
              type: 'ordinal' as const,
              title: kind,
              scale: { domain: ranges, scheme: 'viridis' },
              legend: { ...SET_LEGEND, symbolType: 'circle', columns: Math.min(ranges.length, 3) },
            },
            ...setEncoding(sets),
            // The small points of the rows fitted on drawn over the large held-out diamonds: both show where they meet.
            order: { field: 'set', type: 'nominal' as const, sort: 'descending' as const },
          },
        },
      ],
      resolve: { scale: { color: 'independent' as const } },
    };
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: title,
      subtitle: `one panel per kind of row (log-log where it spans a decade); the dashed line is fitted = measured`,
      anchor: 'start',
      offset: 12,
    },
    hconcat: panels,
    resolve: { scale: { color: 'independent', shape: 'shared', size: 'shared' }, legend: { color: 'independent' } },
  };
}

/**
 * Equal bins over the values, about 30 of them, of a width of 1, 2 or 5 times a power of ten,
 * starting at a multiple of the width; empty bins are left out.
 */
export function histogramBins(values: readonly number[]): Array<{ start: number; end: number; count: number }> {
  if (values.length === 0) return [];
  const low = Math.min(...values);
  const high = Math.max(...values);
  const raw = (high - low) / 30 || Math.abs(low) / 10 || 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  const width = [1, 2, 5, 10].map((m) => m * power).find((w) => w >= raw) as number;
  const first = Math.floor(low / width);
  const counts = new Map<number, number>();
  for (const value of values) {
    const bin = Math.min(Math.floor(value / width), Math.floor(high / width)) - first;
    counts.set(bin, (counts.get(bin) ?? 0) + 1);
  }
  // Edges as i x width, rounded to the width's digits (not 0.30000000000000004).
  const digits = Math.max(0, -Math.floor(Math.log10(width))) + 1;
  const edge = (i: number) => Number(((first + i) * width).toFixed(digits));
  return [...counts.entries()].sort(([a], [b]) => a - b).map(([i, count]) => ({ start: edge(i), end: edge(i + 1), count }));
}

/** A small, deterministic spread of a point around its integer x (golden-ratio steps), so that rows at one x do not hide each other. */
function jitter(index: number): number {
  return (((index * 0.6180339887498949) % 1) - 0.5) * 0.5;
}

/** Axis titles of the features the fits name by their column. */
const FEATURE_TITLES: Record<string, string> = { inflight: 'other requests in flight', output_tokens: 'output tokens' };

/**
 * The measured value against the feature of the first term the fit could identify (detokenizer
 * job time against its outputs; the response gap against the other requests in flight), with the
 * fitted line when the model is a line in that feature (its other terms fixed at 0) and fitted
 * ticks otherwise, held-out rows marked. For the response gap, the distribution of the measured
 * values beside it, with the fitted mean. Integer features with several rows a value are spread a
 * little around their value, with their mean marked. With no identifiable term, only the
 * distribution is drawn.
 */
function againstFeature(report: FitReport, title: string, featureNames: readonly string[], distribution: boolean): TopLevelSpec {
  const { fit } = report;
  const terms = Object.values(fit.coefficients).slice(1);
  const k = terms.findIndex((term) => term.status === 'fitted');
  const unit = fit.y.unit;
  const fittedMean = fit.rows.reduce((sum, row) => sum + row.fitted, 0) / Math.max(1, fit.rows.length);
  const bins = histogramBins(fit.rows.map((row) => row.measured));
  const histogram = {
    title: `distribution of ${fit.y.name} (red: mean fitted value)`,
    width: 300,
    height: 300,
    layer: [
      {
        data: { values: bins },
        mark: { type: 'bar' as const, color: '#1f77b4', binSpacing: 1 },
        encoding: {
          x: { field: 'start', type: 'quantitative' as const, title: `${fit.y.name} (${unit})`, scale: { zero: false, nice: false } },
          x2: { field: 'end' },
          y: {
            field: 'count',
            type: 'quantitative' as const,
            title: 'rows',
            scale: barScale(bins.map((bin) => bin.count)),
          },
          // From zero: with x2, a bar would otherwise be drawn across, at its count.
          y2: { datum: 0 },
        },
      },
      {
        data: { values: [{ v: fittedMean }] },
        mark: { type: 'rule' as const, color: '#d62728', strokeWidth: 2 },
        encoding: { x: { field: 'v', type: 'quantitative' as const } },
      },
    ],
  };
  const top = (subtitle: string, panels: unknown[]): TopLevelSpec =>
    ({
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: { text: title, subtitle, anchor: 'start', offset: 12 },
      hconcat: panels,
    }) as TopLevelSpec;
  if (k < 0) {
    return top(`no term but ${Object.keys(fit.coefficients)[0]} could be identified: the distribution of ${fit.y.name}`, [histogram]);
  }
  const feature = FEATURE_TITLES[featureNames[k]] ?? featureNames[k].replace(/_/g, ' ');
  const linear = terms.every((term, j) => j === k || term.value === 0);
  const xs = fit.rows.map((row) => row.x[k]);
  const integers = xs.every((x) => Number.isInteger(x));
  const crowded = integers && new Set(xs).size * 3 < xs.length;
  const values = fit.rows.map((row, i) => ({
    x: row.x[k],
    drawnX: crowded ? row.x[k] + jitter(i) : row.x[k],
    measured: row.measured,
    fitted: row.fitted,
    set: setOf(row),
  }));
  const sets = [FITTED_ON, HELD_OUT].filter((set) => values.some((v) => v.set === set));
  const [xLow, xHigh] = [Math.min(...xs), Math.max(...xs)];
  const xScale = readableScale(
    values.map((v) => v.drawnX),
    { leastSpan: 0 },
  );
  const xAxis = {
    field: 'drawnX',
    type: 'quantitative' as const,
    title: feature,
    scale: xScale,
    axis: integers ? { tickMinStep: 1, format: 'd' } : {},
  };
  const yScale = readableScale(values.flatMap((v) => [v.measured, v.fitted]));
  // The model is a line in this feature, so the fitted values of the rows at its two ends lie on it.
  const fittedAt = (x: number) => values.find((v) => v.x === x)?.fitted ?? NaN;
  const model = linear
    ? {
        data: {
          values: [
            { drawnX: xLow, y: fittedAt(xLow) },
            { drawnX: xHigh, y: fittedAt(xHigh) },
          ],
        },
        mark: { type: 'line' as const, color: '#d62728', strokeWidth: 2 },
        encoding: { x: xAxis, y: { field: 'y', type: 'quantitative' as const, scale: yScale } },
      }
    : {
        data: { values },
        mark: { type: 'tick' as const, color: '#d62728', thickness: 2, size: 10 },
        encoding: { x: xAxis, y: { field: 'fitted', type: 'quantitative' as const, scale: yScale } },
      };
  const means = crowded
    ? [
        {
          data: { values },
          transform: [{ aggregate: [{ op: 'mean' as const, field: 'measured', as: 'mean' }], groupby: ['x'] }],
          mark: { type: 'point' as const, shape: 'diamond', filled: true, color: '#111', size: 60 },
          encoding: { x: { ...xAxis, field: 'x' }, y: { field: 'mean', type: 'quantitative' as const, scale: yScale } },
        },
      ]
    : [];
  const scatter = {
    title: `${fit.y.name} against ${feature}`,
    width: 360,
    height: 300,
    layer: [
      {
        data: { values },
        mark: { type: 'point' as const, filled: true, opacity: 0.55 },
        encoding: {
          x: xAxis,
          y: { field: 'measured', type: 'quantitative' as const, title: `${fit.y.name} (${unit})`, scale: yScale },
          color: { value: '#1f77b4' },
          ...setEncoding(sets),
        },
      },
      ...means,
      model,
    ],
  };
  const parts = [
    'points: the rows',
    ...(crowded ? ['spread around their value', 'black: their mean'] : []),
    linear ? `red line: the fitted ${fit.y.name}` : 'red ticks: fitted',
  ];
  return top(parts.join('; '), distribution ? [scatter, histogram] : [scatter]);
}

/** The Vega-Lite spec of `fit.svg` for a direct fit: against the fit's identifiable feature when it has one, else measured against fitted. */
export function fitChartSpec(report: FitReport, featureNames: readonly string[]): TopLevelSpec {
  const title = `${report.target} fit (${report.model})`;
  if (report.target === 'pass-time') return measuredAgainstFitted(report.fit, title);
  // The gap of the load generator is a distribution more than a line (its per-token slope is often
  // not identifiable): its histogram goes beside the scatter.
  return againstFeature(report, title, featureNames, report.target === 'response-overhead');
}

export async function fitChartSvg(report: FitReport, featureNames: readonly string[]): Promise<string> {
  return renderSvg(fitChartSpec(report, featureNames));
}

function fmt(value: number | null, digits = 4): string {
  if (value === null || !Number.isFinite(value)) return '-';
  return Number(value.toPrecision(digits)).toString();
}

export function formatFitText(report: FitReport, outDir: string | null): string {
  const { fit } = report;
  const lines: string[] = [];
  lines.push(`${report.target}, ${report.model} model, fitted on ${fit.n} rows of ${report.inputs.join(', ')}`);
  lines.push('');
  const width = Math.max(...Object.keys(fit.coefficients).map((name) => name.length));
  for (const [name, c] of Object.entries(fit.coefficients)) {
    lines.push(
      `  ${name.padEnd(width)}  ${fmt(c.value, 5).padStart(10)} ${c.unit.padEnd(3)}${c.status === 'fitted' ? '' : `  (${c.status})`}`,
    );
  }
  lines.push('');
  lines.push(`  n ${fit.n}   RMSE ${fmt(fit.rmse)} ${fit.y.unit}   MAE ${fmt(fit.mae)} ${fit.y.unit}   R^2 ${fmt(fit.r2)}`);
  if (fit.holdout) {
    lines.push(
      `  held out ${fit.holdout.n} rows (${Math.round(fit.holdout.fraction * 100)} %): RMSE ${fmt(fit.holdout.rmse)} ${fit.y.unit}   MAE ${fmt(fit.holdout.mae)} ${fit.y.unit}   MAPE ${fmt(fit.holdout.mape, 3)} %`,
    );
  }
  if (fit.residuals_by_bucket.length > 1) {
    lines.push('');
    lines.push('  residuals by input bucket (fitted - measured):');
    const bw = Math.max(...fit.residuals_by_bucket.map((b) => b.bucket.length));
    for (const b of fit.residuals_by_bucket) {
      lines.push(
        `    ${b.bucket.padEnd(bw)}  n ${String(b.n).padStart(5)}  mean ${fmt(b.mean_residual).padStart(9)}  RMSE ${fmt(b.rmse).padStart(9)} ${fit.y.unit}`,
      );
    }
  }
  for (const note of fit.notes) lines.push(`  note: ${note}`);
  lines.push('');
  lines.push(snippetYaml(report.snippet, `${report.target} fit (${report.model}); paste into a run config`).trimEnd());
  if (outDir !== null) lines.push('', `wrote ${join(outDir, 'fit.json')}, snippet.yaml, residuals.csv, fit.svg`);
  return `${lines.join('\n')}\n`;
}

export async function writeFitReport(outDir: string, report: FitReport, featureNames: readonly string[]): Promise<string[]> {
  const files = {
    'fit.json': `${JSON.stringify(fitJson(report), null, 2)}\n`,
    'snippet.yaml': snippetYaml(
      report.snippet,
      `${report.target} fit (${report.model}) from ${report.inputs.join(', ')}; paste into a run config`,
    ),
    'residuals.csv': residualsCsv(report.fit, featureNames),
    'fit.svg': await fitChartSvg(report, featureNames),
  };
  writeOutputFiles(Object.entries(files).map(([name, text]) => [join(outDir, name), text] as const));
  return Object.keys(files).map((name) => join(outDir, name));
}
