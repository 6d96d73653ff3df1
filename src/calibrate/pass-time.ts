/**
 * Pass-time fit (docs/calibration.md): the `linear` timing coefficients (docs/replay-model.md, "Timing providers") from
 * measured per-pass rows. Two layouts:
 * - `passes`: one row per engine pass with its duration and features (forward-pass metrics):
 *   roles `duration_ms, prefill_tokens, prefill_pairs, decode_requests, decode_kv_tokens`;
 *   a role whose column is absent is left out of the model (fixed at 0, said in the notes).
 * - `prefill-decode`: per-experiment tables such as Splitwise's `perf_model.csv`: a prefill
 *   time for a batch of prompts and a mean decode-step time, against prompt size, batch size and
 *   output length; each row gives one prefill pass and one mean decode pass (`features.ts`).
 * Column names are roles unless `--map role=COLUMN` says otherwise.
 */
import { InputError } from '../config/errors.js';
import { LINEAR_TERMS, featureVector, meanDecodePass, prefillPass, type PassFeatures } from './features.js';
import { fitLinearModel, log2Bucket, type FitOptions, type FitRow, type LinearFit, type LinearModelSpec } from './fit-linear.js';
import { numberCell, requireColumn, type Table } from './read-table.js';

export type PassLayout = 'passes' | 'prefill-decode';

export interface MeasuredPass {
  source: string;
  durationMs: number;
  features: PassFeatures;
  kind: 'prefill' | 'decode' | 'mixed';
}

const PASS_ROLES = {
  duration_ms: 'duration_ms',
  prefill_tokens: 'prefillTokens',
  prefill_pairs: 'prefillPairs',
  decode_requests: 'decodeRequests',
  decode_kv_tokens: 'decodeKvTokens',
} as const;

/** Splitwise `perf_model.csv` column names are the defaults of the prefill-decode layout. */
export const PREFILL_DECODE_DEFAULTS: Readonly<Record<string, string>> = {
  prompt_tokens: 'prompt_size',
  batch_size: 'batch_size',
  output_tokens: 'token_size',
  prefill_ms: 'prompt_time',
  decode_ms: 'token_time',
};

function kindOf(f: PassFeatures): MeasuredPass['kind'] {
  if (f.prefillTokens > 0 && f.decodeRequests > 0) return 'mixed';
  return f.prefillTokens > 0 ? 'prefill' : 'decode';
}

/**
 * The columns a layout reads: every role's column (`all`), and for each linear term the column its
 * feature comes from (`features`, in LINEAR_TERMS order; for prefill-decode tables the features
 * are derived from several columns, named together).
 */
export function passRoleColumns(
  table: Table,
  layout: PassLayout,
  mapping: Record<string, string> = {},
): { all: string[]; features: string[] } {
  if (layout === 'passes') {
    const column = (role: keyof typeof PASS_ROLES) => mapping[role] ?? role;
    const features = (['prefill_tokens', 'prefill_pairs', 'decode_requests', 'decode_kv_tokens'] as const).map(column);
    return { all: [column('duration_ms'), ...features].filter((name) => table.columns.includes(name)), features };
  }
  const column = (role: string) => mapping[role] ?? PREFILL_DECODE_DEFAULTS[role];
  const [prompt, batch, output] = [column('prompt_tokens'), column('batch_size'), column('output_tokens')];
  return {
    all: Object.keys(PREFILL_DECODE_DEFAULTS).map(column),
    features: [`${batch} x ${prompt}`, `${batch} x ${prompt}^2 / 2`, batch, `${batch} x (${prompt} + ${output} / 2)`],
  };
}

export function readPasses(table: Table, layout: PassLayout, mapping: Record<string, string> = {}): MeasuredPass[] {
  if (layout === 'passes') {
    const columns: Partial<Record<keyof typeof PASS_ROLES, string>> = {};
    for (const role of Object.keys(PASS_ROLES) as Array<keyof typeof PASS_ROLES>) {
      const name = mapping[role] ?? role;
      if (table.columns.includes(name)) columns[role] = name;
      else if (mapping[role] !== undefined || role === 'duration_ms') requireColumn(table, name, role);
    }
    return table.rows.map((row) => {
      const value = (role: keyof typeof PASS_ROLES) => (columns[role] ? numberCell(table, row, columns[role]) : 0);
      const features: PassFeatures = {
        prefillTokens: value('prefill_tokens'),
        prefillPairs: value('prefill_pairs'),
        decodeRequests: value('decode_requests'),
        decodeKvTokens: value('decode_kv_tokens'),
      };
      return { source: `${table.file}:${row.line}`, durationMs: value('duration_ms'), features, kind: kindOf(features) };
    });
  }
  const col = (role: string) => requireColumn(table, mapping[role] ?? PREFILL_DECODE_DEFAULTS[role], role);
  const prompt = col('prompt_tokens');
  const batch = col('batch_size');
  const output = col('output_tokens');
  const prefillMs = col('prefill_ms');
  const decodeMs = col('decode_ms');
  const passes: MeasuredPass[] = [];
  for (const row of table.rows) {
    const source = `${table.file}:${row.line}`;
    const p = numberCell(table, row, prompt);
    const b = numberCell(table, row, batch);
    const o = numberCell(table, row, output);
    if (b < 1) throw new InputError(table.file, row.line, `${batch}: expected a batch of at least 1, got ${b}`);
    passes.push({ source, durationMs: numberCell(table, row, prefillMs), features: prefillPass(b, p), kind: 'prefill' });
    if (o > 1) passes.push({ source, durationMs: numberCell(table, row, decodeMs), features: meanDecodePass(b, p, o), kind: 'decode' });
  }
  return passes;
}

export const PASS_TIME_SPEC: LinearModelSpec = {
  base: { name: 'base_ms', unit: 'ms' },
  terms: LINEAR_TERMS.map(({ name, unit, toUnit, feature }) => ({ name, unit, toUnit, feature })),
  yName: 'pass_ms',
  yUnit: 'ms',
};

function bucketOf(pass: MeasuredPass): string {
  if (pass.kind === 'decode') return log2Bucket('decode batch', pass.features.decodeRequests);
  if (pass.kind === 'prefill') return log2Bucket('prefill tokens', pass.features.prefillTokens);
  return log2Bucket('mixed, prefill tokens', pass.features.prefillTokens);
}

export function fitPassTime(passes: readonly MeasuredPass[], options: FitOptions = {}): LinearFit {
  const rows: FitRow[] = passes.map((pass) => ({
    x: featureVector(pass.features),
    y: pass.durationMs,
    bucket: bucketOf(pass),
    source: pass.source,
  }));
  // Prefill rows have no decode features and decode rows no prefill ones, so every feature
  // varies between rows; only a feature that is 0 everywhere is left out.
  return fitLinearModel({ ...PASS_TIME_SPEC, minRelativeSpread: 0 }, rows, options);
}
