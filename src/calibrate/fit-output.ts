/**
 * What every direct fit writes (toolkit.md §3): `fit.json` (coefficients with units, n, RMSE,
 * MAE, R^2, held-out error, notes), `snippet.yaml` (the block to paste into a run config),
 * `residuals.csv` (every row: measured, fitted, residual, bucket) and `fit.svg` (measured against
 * fitted, with the y = x line), plus the text printed on the terminal.
 */
import { join } from 'node:path';
import { stringify as stringifyCsv } from 'csv-stringify/sync';
import type { TopLevelSpec } from 'vega-lite';
import { renderSvg } from '../io/render-svg.js';
import { makeOutputDir, writeOutputFile } from '../io/write-output.js';
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

export async function fitChartSvg(fit: LinearFit, title: string): Promise<string> {
  const values = fit.rows.map((row) => ({
    measured: row.measured,
    fitted: row.fitted,
    set: row.heldOut ? 'held out' : 'fitted on',
    bucket: row.bucket,
  }));
  const max = Math.max(...values.map((v) => Math.max(v.measured, v.fitted)), 0);
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 420,
    height: 420,
    layer: [
      {
        data: { values: [{ v: 0 }, { v: max }] },
        mark: { type: 'line', color: '#999', strokeDash: [4, 4] },
        encoding: { x: { field: 'v', type: 'quantitative' }, y: { field: 'v', type: 'quantitative' } },
      },
      {
        data: { values },
        mark: { type: 'point', filled: true, opacity: 0.6 },
        encoding: {
          x: { field: 'measured', type: 'quantitative', title: `measured ${fit.y.name} (${fit.y.unit})` },
          y: { field: 'fitted', type: 'quantitative', title: `fitted ${fit.y.name} (${fit.y.unit})` },
          color: { field: 'bucket', type: 'nominal', title: 'input bucket' },
          shape: { field: 'set', type: 'nominal', title: 'rows' },
        },
      },
    ],
  };
  return renderSvg(spec);
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
    'fit.svg': await fitChartSvg(report.fit, `${report.target}: measured against fitted`),
  };
  makeOutputDir(outDir);
  for (const [name, text] of Object.entries(files)) writeOutputFile(join(outDir, name), text);
  return Object.keys(files).map((name) => join(outDir, name));
}
