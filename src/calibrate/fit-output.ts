/**
 * What every direct fit writes (docs/calibration.md): `fit.json` (coefficients with units, n, RMSE,
 * MAE, R^2, held-out error, notes), `snippet.yaml` (the block to paste into a run config),
 * `residuals.csv` (every row: measured, fitted, residual, bucket) and `fit.svg` (measured against
 * fitted, with the y = x line), plus the text printed on the terminal.
 */
import { join } from 'node:path';
import { stringify as stringifyCsv } from 'csv-stringify/sync';
import type { TopLevelSpec } from 'vega-lite';
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

function setOf(row: LinearFit['rows'][number]): string {
  return row.heldOut ? 'held out' : 'fitted on';
}

/**
 * Measured against fitted, one panel per kind of input bucket (prefill passes and decode steps
 * sit orders of magnitude apart, so each kind gets its own log-log panel with its own y = x
 * line), coloured by bucket in numeric order on a sequential scale (no colour repeats, nothing
 * cut short), held-out rows marked by shape.
 */
function measuredAgainstFitted(fit: LinearFit, title: string): TopLevelSpec {
  const values = fit.rows.map((row) => ({ measured: row.measured, fitted: row.fitted, set: setOf(row), ...splitBucket(row.bucket) }));
  const kinds = [...new Set(values.map((v) => v.kind))];
  const unit = fit.y.unit;
  const panels = kinds.map((kind) => {
    const own = values.filter((v) => v.kind === kind);
    const positive = own.every((v) => v.measured > 0 && v.fitted > 0);
    const all = own.flatMap((v) => [v.measured, v.fitted]);
    const [low, high] = [Math.min(...all), Math.max(...all)];
    const scale = positive ? { type: 'log' as const, domain: [low / 1.15, high * 1.15] } : { zero: false };
    const ranges = [...new Map([...own].sort((a, b) => a.low - b.low).map((v) => [v.range, v.range])).keys()];
    return {
      title: `${kind}: ${fit.y.name}, fitted against measured`,
      width: 320,
      height: 320,
      layer: [
        {
          data: { values: [{ v: positive ? low / 1.15 : Math.min(0, low) }, { v: high * 1.15 }] },
          mark: { type: 'line' as const, color: '#999', strokeDash: [4, 4] },
          encoding: {
            x: { field: 'v', type: 'quantitative' as const, scale },
            y: { field: 'v', type: 'quantitative' as const, scale },
          },
        },
        {
          data: { values: own },
          mark: { type: 'point' as const, filled: true, opacity: 0.75, size: 40 },
          encoding: {
            x: { field: 'measured', type: 'quantitative' as const, title: `measured (${unit})`, scale },
            y: { field: 'fitted', type: 'quantitative' as const, title: `fitted (${unit})`, scale },
            color: {
              field: 'range',
              type: 'ordinal' as const,
              title: kind,
              scale: { domain: ranges, scheme: 'viridis' },
              legend: { ...SET_LEGEND, columns: Math.min(ranges.length, 3) },
            },
            shape: { field: 'set', type: 'nominal' as const, title: 'rows', legend: SET_LEGEND },
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
      subtitle: `log-log, one panel per kind of row; the dashed line is fitted = measured`,
      anchor: 'start',
      offset: 12,
    },
    hconcat: panels,
    resolve: { scale: { color: 'independent', shape: 'shared' }, legend: { color: 'independent' } },
    config: { font: 'sans-serif' },
  };
}

/**
 * The measured value against the one feature the model is a line in (detokenizer job time
 * against its outputs, response gap against output tokens), with the fitted line over the
 * feature's range, held-out rows marked; and the distribution of the measured values beside it,
 * with the fitted value, since a narrow spread of the feature (a fixed output length) leaves
 * the line flat and the scatter one column.
 */
function againstFeature(fit: LinearFit, title: string, feature: string, linear: boolean, distribution: boolean): TopLevelSpec {
  const values = fit.rows.map((row) => ({ x: row.x[0], measured: row.measured, fitted: row.fitted, set: setOf(row) }));
  const sets = ['fitted on', 'held out'].filter((set) => values.some((v) => v.set === set));
  const integers = values.every((v) => Number.isInteger(v.x));
  const unit = fit.y.unit;
  const xs = values.map((v) => v.x);
  const [xLow, xHigh] = [Math.min(...xs), Math.max(...xs)];
  // The model is a line in this feature, so the fitted values of the rows at its two ends lie on it.
  const fittedAt = (x: number) => values.find((v) => v.x === x)?.fitted ?? NaN;
  const line = linear
    ? [
        {
          data: {
            values: [
              { x: xLow - (xHigh > xLow ? 0 : 0.5), y: fittedAt(xLow) },
              { x: xHigh + (xHigh > xLow ? 0 : 0.5), y: fittedAt(xHigh) },
            ],
          },
          mark: { type: 'line' as const, color: '#d62728', strokeWidth: 2 },
          encoding: { x: { field: 'x', type: 'quantitative' as const }, y: { field: 'y', type: 'quantitative' as const } },
        },
      ]
    : [
        {
          data: { values },
          mark: { type: 'tick' as const, color: '#d62728', thickness: 2, size: 10 },
          encoding: { x: { field: 'x', type: 'quantitative' as const }, y: { field: 'fitted', type: 'quantitative' as const } },
        },
      ];
  const scatter = {
    title: `${fit.y.name} against ${feature}`,
    width: 360,
    height: 300,
    layer: [
      {
        data: { values },
        mark: { type: 'point' as const, filled: true, opacity: 0.55, size: 30 },
        encoding: {
          x: {
            field: 'x',
            type: 'quantitative' as const,
            title: feature,
            scale: { zero: false, padding: 12 },
            axis: integers ? { tickMinStep: 1, format: 'd' } : {},
          },
          y: { field: 'measured', type: 'quantitative' as const, title: `${fit.y.name} (${unit})`, scale: { zero: false } },
          color: {
            field: 'set',
            type: 'nominal' as const,
            title: 'measured rows',
            scale: { domain: sets, range: sets.map((set) => (set === 'held out' ? '#ff7f0e' : '#1f77b4')) },
            legend: SET_LEGEND,
          },
        },
      },
      ...line,
    ],
  };
  const fittedMean = fit.rows.reduce((sum, row) => sum + row.fitted, 0) / Math.max(1, fit.rows.length);
  const histogram = {
    title: `distribution of ${fit.y.name} (red: mean fitted value)`,
    width: 300,
    height: 300,
    layer: [
      {
        data: { values },
        mark: { type: 'bar' as const, color: '#1f77b4' },
        encoding: {
          x: { field: 'measured', type: 'quantitative' as const, bin: { maxbins: 40 }, title: `${fit.y.name} (${unit})` },
          y: { aggregate: 'count' as const, type: 'quantitative' as const, title: 'rows' },
        },
      },
      {
        data: { values: [{ v: fittedMean }] },
        mark: { type: 'rule' as const, color: '#d62728', strokeWidth: 2 },
        encoding: { x: { field: 'v', type: 'quantitative' as const } },
      },
    ],
  };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: title,
      subtitle: linear ? `points: measured; red line: the fitted ${fit.y.name}` : `points: measured; red ticks: fitted`,
      anchor: 'start',
      offset: 12,
    },
    hconcat: distribution ? [scatter, histogram] : [scatter],
    config: { font: 'sans-serif' },
  };
}

/** The Vega-Lite spec of `fit.svg` for a direct fit: against the fit's one feature when it has one, else measured against fitted. */
export function fitChartSpec(report: FitReport, featureNames: readonly string[]): TopLevelSpec {
  const title = `${report.target} fit (${report.model})`;
  if (report.target === 'pass-time') return measuredAgainstFitted(report.fit, title);
  // The gap of the load generator is a distribution more than a line (its per-token slope is often
  // not identifiable): its histogram goes beside the scatter.
  const distribution = report.target === 'response-overhead';
  return againstFeature(report.fit, title, featureNames[0].replace(/_/g, ' '), featureNames.length === 1, distribution);
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
